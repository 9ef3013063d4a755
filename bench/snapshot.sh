#!/usr/bin/env bash
# Benchmark: reading a big metrics snapshot (`gpulint --metrics FILE`) against Python's
# `json.load` of the same file, side by side in one run.
#
#   bench/snapshot.sh [--small] [SIZE_MB]     (default 200)
#
# --small (issue 28): many small containers (gen_snapshot.py --small: compact JSON, the four
# names and one memory series, about 150 bytes each), the shape where what is kept for each
# container weighs most against the file's size.
#
# Prints the median wall time of RUNS runs (default 3) and the peak RSS of each, and the ratios
# the targets are stated in: gpulint time / json.load time (target <= 5) and gpulint peak RSS /
# file size (target <= 2). BENCH_STRICT=1 exits 3 when a target is missed.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
SMALL=()
if [[ "${1:-}" == --small ]]; then SMALL=(--small); shift; fi
SIZE="${1:-200}"
RUNS="${BENCH_RUNS:-3}"
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
[[ -x /usr/bin/time ]] || { echo "bench/snapshot.sh needs GNU time (apt-get install time)" >&2; exit 1; }
bench_build
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 "$BENCH_DIR/gen_snapshot.py" "$WORK/snapshot.json" "$SIZE" "${SMALL[@]}"
CONTAINERS=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["containers"]))' "$WORK/snapshot.json")
mkdir "$WORK/repo"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' > "$WORK/repo/a.yaml"
BYTES=$(stat -c %s "$WORK/snapshot.json")

# measure NAME CMD...: median seconds and max peak RSS (KiB) over RUNS runs.
measure() {
    local name="$1"; shift
    local times=() rss=0
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f '%e %M' -o "$WORK/t" "$@" >/dev/null 2>&1 || true
        read -r t m < "$WORK/t"
        times+=("$t"); (( m > rss )) && rss=$m
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "$name $median $rss"
}
read -r _ G_T G_RSS < <(measure gpulint "$GPULINT" "$WORK/repo" --metrics "$WORK/snapshot.json" --metrics-max-size 4096)
read -r _ P_T P_RSS < <(measure json.load python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/snapshot.json")
status=0
python3 - "$BYTES" "$G_T" "$G_RSS" "$P_T" "$P_RSS" "$CONTAINERS" <<'PY' || status=$?
import sys
size, gt, grss, pt, prss, containers = int(sys.argv[1]), *map(float, sys.argv[2:])
t_ratio, m_ratio = gt / pt, grss * 1024 / size
print(f"snapshot: {size/1e6:.0f} MB, {containers:.0f} containers ({size / containers:.0f} bytes each)")
print(f"gpulint --metrics   {gt:6.2f} s  peak {grss/1024:7.0f} MiB")
print(f"python json.load    {pt:6.2f} s  peak {prss/1024:7.0f} MiB")
print(f"time ratio gpulint/json.load: {t_ratio:.2f} (target <= 5)")
print(f"memory ratio gpulint peak/file size: {m_ratio:.2f} (target <= 2)")
ok = t_ratio <= 5 and m_ratio <= 2
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 4)
PY
if [[ ${#SMALL[@]} -gt 0 ]]; then
    CASE="a $SIZE MB metrics snapshot of many small containers ($CONTAINERS, compact JSON)"
else
    CASE="a $SIZE MB metrics snapshot ($CONTAINERS containers)"
fi
bench_row "$CASE" "bench/snapshot.sh ${SMALL[*]}${SMALL:+ }$SIZE" \
    "$G_T s, $((G_RSS / 1024)) MiB" "json.load $P_T s" \
    "$(python3 -c "print(f'{$G_T / $P_T:.2f}x time, {$G_RSS * 1024 / $BYTES:.2f}x the file in memory')")" \
    "<= 5x, <= 2x" "$([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
[[ $status -ne 0 && "${BENCH_STRICT:-0}" == 1 ]] && exit 3
exit 0
