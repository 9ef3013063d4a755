#!/usr/bin/env bash
# Benchmark: pre-commit in a Kustomize monorepo. Times, side by side in one run, gpulint on the
# whole repo and on the one staged file pre-commit would pass (an overlay's patch), and on a
# base file every overlay over that base reads.
#
#   bench/monorepo.sh [APPS=1000] [BASES=500]
#
# Targets (issue 15): the one named file in at most 10% of the whole-repo time, and under 50 ms.
# BENCH_RUNS (default 10) runs each, interleaved; the medians are reported. BENCH_STRICT=1 exits 3 on a miss.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
APPS="${1:-1000}" BASES="${2:-500}" RUNS="${BENCH_RUNS:-10}"
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
bench_build
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 "$BENCH_DIR/gen_monorepo.py" "$WORK/repo" "$APPS" "$BASES"
# Committed, as a repository pre-commit runs in is: the kustomizations are listed by git's index.
git -C "$WORK/repo" init -q
git -C "$WORK/repo" add -A
git -C "$WORK/repo" -c user.name=bench -c user.email=bench@gpulint.invalid -c commit.gpgsign=false \
    commit -qm monorepo
FILES=$(find "$WORK/repo" -type f -not -path '*/.git/*' | wc -l)

# ms CMD...: the wall time of one run in the repo, in milliseconds.
ms() {
    local t0 t1
    t0=$(date +%s%N)
    (cd "$WORK/repo" && "$@" >/dev/null 2>&1) || true
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
}
# Interleaved (whole, one, base, whole, …): a shared machine's drift falls on all three alike.
whole=() one=() base=()
for _ in $(seq "$RUNS"); do
    whole+=("$(ms "$GPULINT" . --format json)")
    one+=("$(ms "$GPULINT" apps/app7/overlays/prod/patch.yaml --format json)")
    base+=("$(ms "$GPULINT" bases/base7/deployment.yaml --format json)")
done
WHOLE=$(printf '%s\n' "${whole[@]}" | median)
ONE=$(printf '%s\n' "${one[@]}" | median)
BASE=$(printf '%s\n' "${base[@]}" | median)
status=0
python3 - "$FILES" "$WHOLE" "$ONE" "$BASE" "$APPS" "$BASES" <<'PY' || status=$?
import sys
files, whole, one, base, apps, bases = map(int, sys.argv[1:])
print(f"monorepo: {apps} overlays over {bases} bases, {files} files")
print(f"whole repo                          {whole:6d} ms")
print(f"one overlay patch (1 root)          {one:6d} ms  {one / whole:5.1%} of the whole repo")
print(f"one base file ({apps // bases} overlays read it)     {base:6d} ms  {base / whole:5.1%}")
ok = one <= whole * 0.10 and one < 50
print("verdict:", "PASS" if ok else "FAIL", "(targets: one file <= 10% of the whole repo, < 50 ms)")
sys.exit(0 if ok else 4)
PY
bench_row "pre-commit: one overlay's patch named, in a monorepo of $APPS overlays over $BASES bases ($FILES files)" \
    "bench/monorepo.sh $APPS $BASES" "$ONE ms" "whole repo $WHOLE ms" \
    "$(python3 -c "print(f'{$ONE / $WHOLE:.1%}')")" "<= 10%, < 50 ms" "$([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
[[ $status -ne 0 && "${BENCH_STRICT:-0}" == 1 ]] && exit 3
exit 0
