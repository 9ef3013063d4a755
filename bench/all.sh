#!/usr/bin/env bash
# Every "where a user waits" benchmark (issue 15) in one sitting, and one table of their rows:
# each row's two sides were measured side by side in the same run of its script.
#
#   bench/all.sh            (about 10 minutes on the 2-core machine, after the build)
#
# The cases: the one staged file of a Kustomize monorepo (monorepo.sh), the 15-level Kustomize
# diamond against its objects as plain files, one and 128 a file (diamond.sh), a 200 MB metrics
# snapshot, of big containers and of many small ones (snapshot.sh), --fix on 5,000 files, of
# which about 900 are fixed, and on 5,000 files every one of which is fixed (fix.sh),
# Helm values origins with twenty findings in one release (helm.sh), and gpulint end to end on
# 3,000 corpus manifests against a single-threaded event parse (run.sh, without checkov).
# Prints the table (markdown) and writes it to bench/results/issue15.md. Exits 3 when a target
# is missed (each script reports its own verdict).
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export BENCH_ROWS="$WORK/rows.tsv"
: > "$BENCH_ROWS"
unset BENCH_STRICT

"$BENCH_DIR/monorepo.sh"
"$BENCH_DIR/diamond.sh" 15
"$BENCH_DIR/snapshot.sh" 200
"$BENCH_DIR/snapshot.sh" --small 200
"$BENCH_DIR/fix.sh" 5000
"$BENCH_DIR/fix.sh" --all 5000
"$BENCH_DIR/helm.sh" 20
BENCH_NO_CHECKOV=1 BENCH_TOOLS=gpulint,bare-parse-tree,bare-parse-events-1t BENCH_RESULTS="$WORK/results" \
    "$BENCH_DIR/run.sh" 3000
python3 - "$WORK/results/n3000-summary.json" >> "$BENCH_ROWS" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
by_tool = {r["tool"]: r for r in summary["results"]}
g, floor = by_tool["gpulint"], by_tool["bare-parse-events-1t"]
ratio = g["mean_s"] / floor["mean_s"]
print("\t".join([
    "end to end on 3,000 corpus manifests, against a single-threaded event parse of the same files",
    "BENCH_NO_CHECKOV=1 bench/run.sh 3000",
    f"{g['mean_s'] * 1000:.0f} ms, {g['peak_rss_mib']:.0f} MiB",
    f"bare-parse-events-1t {floor['mean_s'] * 1000:.0f} ms",
    f"{ratio:.2f}x",
    "<= 1.5x",
    "PASS" if ratio <= 1.5 else "FAIL",
]))
PY

REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
mkdir -p "$BENCH_DIR/results"
python3 - "$BENCH_ROWS" "$REV" "$(nproc)" > "$BENCH_DIR/results/issue15.md" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
print(f"Where a user waits: `bench/all.sh` at {sys.argv[2]}, {sys.argv[3]} cores, one sitting.\n")
print("| case | script | gpulint | baseline | ratio | target | verdict |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
PY
cat "$BENCH_DIR/results/issue15.md"
if grep -q '| FAIL |$' "$BENCH_DIR/results/issue15.md"; then exit 3; fi
