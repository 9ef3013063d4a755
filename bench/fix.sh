#!/usr/bin/env bash
# Benchmark: `gpulint --fix --unsafe-fixes` on N corpus manifests against a lint of the same
# tree, side by side in one run (interleaved: lint, then fix on a fresh copy, RUNS times).
#
#   bench/fix.sh [N=5000]
#   bench/fix.sh --all-fixed [N=600]    every file of the tree gets a fix (the worst case for
#                                       the writes: a copy of N corpus files that have one)
#
# Checks first that the fix run's report of what is left equals a lint of the fixed tree, and
# that every run fixed the tree to the same bytes. Target (issue 15): the fix at most 3x the lint.
# BENCH_RUNS (default 5) runs each, the median is reported. BENCH_STRICT=1 exits 3 on a miss.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
ALL_FIXED=0
if [[ "${1:-}" == "--all-fixed" ]]; then ALL_FIXED=1; shift; fi
N="${1:-$([[ $ALL_FIXED == 1 ]] && echo 600 || echo 5000)}" RUNS="${BENCH_RUNS:-5}"
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
bench_build
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
CORPUS="$ROOT/testdata/corpus/raw"
# Like run.sh: only the corpus files gpulint parses, so the tree has no input errors.
"$GPULINT" "$CORPUS" --format json >"$WORK/corpus.json" 2>/dev/null || true
python3 -c '
import json, sys
for e in json.load(open(sys.argv[1]))["errors"]:
    if e["file"]:
        print(e["file"])
' "$WORK/corpus.json" >"$WORK/exclude.txt"
if [[ $ALL_FIXED == 1 ]]; then
    # A tree eight times the size, then only its files with a fixable finding, N of them.
    python3 "$BENCH_DIR/gen_manifests.py" --corpus "$CORPUS" --out "$WORK/tree" --count "$((N * 8))" \
        --exclude "$WORK/exclude.txt" >/dev/null
    (cd "$WORK/tree" && "$GPULINT" . --unsafe-fixes --format json >"$WORK/all.json" 2>/dev/null) || true
    python3 - "$WORK/tree" "$WORK/all.json" "$N" <<'PY'
import json, os, sys
tree, report, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
fixable = sorted({f["file"] for f in json.load(open(report))["findings"] if f.get("fixable")})
keep = set(fixable[:n])
if len(keep) < n:
    sys.exit(f"bench/fix.sh: only {len(keep)} files with a fixable finding, want {n}")
for d, _, files in os.walk(tree):
    for name in files:
        rel = os.path.relpath(os.path.join(d, name), tree)
        if rel not in keep:
            os.remove(os.path.join(d, name))
PY
else
    python3 "$BENCH_DIR/gen_manifests.py" --corpus "$CORPUS" --out "$WORK/tree" --count "$N" \
        --exclude "$WORK/exclude.txt" >/dev/null
fi

# ms CMD...: wall time of one run in milliseconds (the exit code is 1 when findings remain).
ms() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}
digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }

# The check run: what --fix reports as left is what a lint of the fixed tree finds.
cp -r "$WORK/tree" "$WORK/check"
(cd "$WORK/check" && "$GPULINT" . --fix --unsafe-fixes --format json >"$WORK/left.json" 2>"$WORK/fix.err") || true
(cd "$WORK/check" && "$GPULINT" . --format json >"$WORK/again.json" 2>/dev/null) || true
cmp -s "$WORK/left.json" "$WORK/again.json" \
    || { echo "bench/fix.sh: --fix reported other findings than a lint of the fixed tree" >&2; exit 1; }
SUMMARY=$(grep '^fixed [0-9]* finding' "$WORK/fix.err" || true)
WANT=$(digest "$WORK/check")

lint_times=() fix_times=()
for _ in $(seq "$RUNS"); do
    rm -rf "$WORK/run" && cp -r "$WORK/tree" "$WORK/run"
    lint_times+=("$(cd "$WORK/tree" && ms "$GPULINT" . --format json)")
    fix_times+=("$(cd "$WORK/run" && ms "$GPULINT" . --fix --unsafe-fixes --format json)")
    [[ "$(digest "$WORK/run")" == "$WANT" ]] \
        || { echo "bench/fix.sh: two --fix runs wrote different trees" >&2; exit 1; }
done
LINT=$(printf '%s\n' "${lint_times[@]}" | median)
FIX=$(printf '%s\n' "${fix_times[@]}" | median)
status=0
python3 - "$N" "$SUMMARY" "$LINT" "$FIX" $([[ $ALL_FIXED == 1 ]] && echo all) <<'PY' || status=$?
import sys
n, summary, lint, fix = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
print(f"--fix --unsafe-fixes on {n} corpus manifests{' (every one fixed)' if len(sys.argv) > 5 else ''}: {summary}")
print(f"lint                 {lint:6d} ms")
print(f"--fix --unsafe-fixes {fix:6d} ms  {fix / lint:.2f}x the lint (target <= 3)")
ok = fix <= 3 * lint
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 4)
PY
RATIO=$(python3 -c "print(f'{$FIX / $LINT:.2f}x')")
bench_row "\`--fix --unsafe-fixes\` on $N corpus files$([[ $ALL_FIXED == 1 ]] && echo ', every one fixed') ($SUMMARY)" "bench/fix.sh $([[ $ALL_FIXED == 1 ]] && echo '--all-fixed ')$N" \
    "$FIX ms" "lint $LINT ms" "$RATIO" "<= 3x" "$([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
[[ $status -ne 0 && "${BENCH_STRICT:-0}" == 1 ]] && exit 3
exit 0
