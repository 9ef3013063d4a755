#!/usr/bin/env bash
# Benchmark: `gpulint --fix --unsafe-fixes` on N corpus manifests against a lint of the same
# tree, side by side in one run (interleaved: lint, then fix on a fresh copy, RUNS times).
#
#   bench/fix.sh [--all] [N=5000]
#
# --all (issue 28): the tree is made only of the corpus files --fix changes, so every one of the
# N files is fixed (without it, about 900 of 5,000 are); the script checks that it was.
#
# Checks first that the fix run's report of what is left equals a lint of the fixed tree, and
# that every run fixed the tree to the same bytes. Target (issue 15): the fix at most 3x the lint.
# BENCH_RUNS (default 5) runs each, the median is reported. BENCH_STRICT=1 exits 3 on a miss.
# The fix runs' copies are all made before the first timed run: a copy deleted just before a run
# slows the file creations of the run on some file systems (ext4 without a journal skips the
# inodes freed in the last minutes), which would time the harness, not gpulint.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
ALL=0
if [[ "${1:-}" == --all ]]; then ALL=1; shift; fi
N="${1:-5000}" RUNS="${BENCH_RUNS:-5}"
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
if [[ $ALL == 1 ]]; then
    # Only the corpus files --fix changes: fix a copy of the corpus, leave out every file it
    # did not change.
    cp -r "$CORPUS" "$WORK/corpus-fixed"
    (cd "$WORK/corpus-fixed" && "$GPULINT" . --fix --unsafe-fixes --format json >/dev/null 2>&1) || true
    (cd "$CORPUS" && find . -type f \( -name '*.yaml' -o -name '*.yml' \) | sort) | while read -r f; do
        cmp -s "$CORPUS/$f" "$WORK/corpus-fixed/$f" && echo "$CORPUS/${f#./}"
    done >>"$WORK/exclude.txt"
    rm -rf "$WORK/corpus-fixed"
fi
python3 "$BENCH_DIR/gen_manifests.py" --corpus "$CORPUS" --out "$WORK/tree" --count "$N" \
    --exclude "$WORK/exclude.txt" >/dev/null

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
if [[ $ALL == 1 && "$SUMMARY" != *" in $N file(s)" ]]; then
    echo "bench/fix.sh --all: not every file was fixed: $SUMMARY" >&2
    exit 1
fi

rm -rf "$WORK/check"
for i in $(seq "$RUNS"); do cp -r "$WORK/tree" "$WORK/run$i"; done
sync
lint_times=() fix_times=()
for i in $(seq "$RUNS"); do
    lint_times+=("$(cd "$WORK/tree" && ms "$GPULINT" . --format json)")
    fix_times+=("$(cd "$WORK/run$i" && ms "$GPULINT" . --fix --unsafe-fixes --format json)")
    [[ "$(digest "$WORK/run$i")" == "$WANT" ]] \
        || { echo "bench/fix.sh: two --fix runs wrote different trees" >&2; exit 1; }
done
LINT=$(printf '%s\n' "${lint_times[@]}" | median)
FIX=$(printf '%s\n' "${fix_times[@]}" | median)
status=0
python3 - "$N" "$SUMMARY" "$LINT" "$FIX" "$ALL" <<'PY' || status=$?
import sys
n, summary, lint, fix, every = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
print(f"--fix --unsafe-fixes on {n} corpus manifests{' (every file fixed)' if every else ''}: {summary}")
print(f"lint                 {lint:6d} ms")
print(f"--fix --unsafe-fixes {fix:6d} ms  {fix / lint:.2f}x the lint (target <= 3)")
ok = fix <= 3 * lint
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 4)
PY
RATIO=$(python3 -c "print(f'{$FIX / $LINT:.2f}x')")
if [[ $ALL == 1 ]]; then
    CASE="\`--fix --unsafe-fixes\` on $N corpus files, every one fixed ($SUMMARY)" SCRIPT="bench/fix.sh --all $N"
else
    CASE="\`--fix --unsafe-fixes\` on $N corpus files ($SUMMARY)" SCRIPT="bench/fix.sh $N"
fi
bench_row "$CASE" "$SCRIPT" \
    "$FIX ms" "lint $LINT ms" "$RATIO" "<= 3x" "$([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
[[ $status -ne 0 && "${BENCH_STRICT:-0}" == 1 ]] && exit 3
exit 0
