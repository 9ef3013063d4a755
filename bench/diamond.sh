#!/usr/bin/env bash
# Benchmark: a Kustomize diamond (each of LEVELS levels includes the next twice, under two name
# prefixes: 2^LEVELS Deployments out of 3*LEVELS+2 small files) against the same objects
# written as plain files (`kubectl kustomize` output), side by side: one object a file, and
# (issue 28) packed 128 objects a file, the dense shape that is harder on the render: the plain
# side then pays fewer file opens and walks, so the ratio against it is the one the target is
# about.
#
#   bench/diamond.sh [LEVELS=12]     (past 13 levels the render is over the default 10,000-object
#                                    cap: the script raises it with --max-render-objects)
#
# Reports CPU time (task-clock, robust on a busy machine), the mean of RUNS (default 5) runs.
# Target (issues 15, 28): the render at most 2x the plain files packed 128 a file. BENCH_STRICT=1 exits 3 on a miss.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
LEVELS="${1:-12}" RUNS="${BENCH_RUNS:-5}"
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
bench_build
command -v perf >/dev/null || { echo "bench/diamond.sh needs perf (apt-get install linux-perf)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap '[[ -n "${BENCH_KEEP:-}" ]] || rm -rf "$WORK"' EXIT
python3 - "$WORK/diamond" "$LEVELS" <<'PY'
import os, sys
out, levels = sys.argv[1], int(sys.argv[2])
def w(p, t):
    p = os.path.join(out, p); os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "w").write(t)
for i in range(levels):
    w(f"l{i}/kustomization.yaml", "resources:\n- a\n- b\n")
    for side in "ab":
        w(f"l{i}/{side}/kustomization.yaml", f"namePrefix: {side}-\nresources:\n- ../../l{i+1}\n")
w(f"l{levels}/kustomization.yaml", "resources:\n- d.yaml\n")
w(f"l{levels}/d.yaml", """apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {nvidia.com/gpu: 1, memory: 1Gi}
""")
PY
# The plain side: kubectl kustomize's output up to 13 levels (the oracle); past that kustomize
# itself rebuilds every base on every path (15 levels ran over 18 CPU-minutes), so gpulint's own
# render (`gpulint render`) writes it.
if [[ "$LEVELS" -le 13 ]]; then
    kubectl kustomize "$WORK/diamond/l0" > "$WORK/plain.yaml"
else
    (cd "$WORK" && "$GPULINT" render diamond/l0 --max-render-objects $((2 ** (LEVELS + 1)))) > "$WORK/plain.yaml"
fi
mkdir "$WORK/plain"
(cd "$WORK/plain" && csplit -s -z -f obj -b '%05d.yaml' "$WORK/plain.yaml" '/^---$/' '{*}')
OBJECTS=$(ls "$WORK/plain" | wc -l)
# The same objects packed 128 a file (in csplit's order, each document starting with `---`).
mkdir "$WORK/packed"
python3 - "$WORK/plain" "$WORK/packed" <<'PY'
import os, sys
src, out = sys.argv[1], sys.argv[2]
files = sorted(os.listdir(src))
for k in range(0, len(files), 128):
    with open(os.path.join(out, f"p{k // 128:05d}.yaml"), "w") as f:
        for name in files[k:k + 128]:
            text = open(os.path.join(src, name)).read()
            f.write(text if text.startswith("---") else "---\n" + text)
PY
# cpu_ms PATH: the mean task-clock (ms) of RUNS runs of gpulint on PATH.
cpu_ms() {
    # Through sh: gpulint exits 1 (findings), which would stop `perf stat -r`.
    perf stat -r "$RUNS" -x, -e task-clock \
        sh -c '"$0" "$1" --format json --max-render-objects "$2" >/dev/null 2>&1; true' \
        "$GPULINT" "$1" "$CAP" 2>&1 >/dev/null \
        | awk -F, '/task-clock/ {printf "%d", $1}'
}
# From the work folder: it is the repository of both trees (a base above the linted folder is
# read only inside the repository).
cd "$WORK"
CAP=$((OBJECTS * 2))
# A render error (exit 2) would time the error, not the render: check once first.
rc=0; "$GPULINT" diamond/l0 --format json --max-render-objects "$CAP" >/dev/null 2>"$WORK/check.err" || rc=$?
[[ $rc -le 1 ]] || { echo "gpulint failed on the diamond (exit $rc):" >&2; cat "$WORK/check.err" >&2; exit 1; }
# Each findings count must be one a Deployment: all three runs linted every object.
for tree in diamond/l0 plain packed; do
    found=$("$GPULINT" "$tree" --format json --max-render-objects "$CAP" 2>/dev/null \
        | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["findings"]))') || true
    [[ "$found" == "$OBJECTS" ]] \
        || { echo "bench/diamond.sh: $tree gave $found findings, not $OBJECTS" >&2; exit 1; }
done
RENDER=$(cpu_ms diamond/l0)
PLAIN=$(cpu_ms plain)
PACKED=$(cpu_ms packed)
status=0
python3 - "$LEVELS" "$OBJECTS" "$RENDER" "$PLAIN" "$PACKED" <<'PY' || status=$?
import sys
levels, objects, render, plain, packed = map(int, sys.argv[1:])
print(f"diamond: {levels} levels, {objects} objects")
print(f"rendered from the diamond          {render:6d} ms CPU")
print(f"the same objects, one a file       {plain:6d} ms CPU  ratio {render / plain:.2f}")
print(f"the same objects, 128 a file       {packed:6d} ms CPU  ratio {render / packed:.2f} (target <= 2)")
sys.exit(0 if render <= 2 * packed else 4)
PY
bench_row "Kustomize diamond, $LEVELS levels: $OBJECTS objects from $((3 * LEVELS + 2)) small files" \
    "bench/diamond.sh $LEVELS" "$RENDER ms CPU" \
    "the objects as plain files 128 a file $PACKED ms CPU (one a file: $PLAIN ms CPU)" \
    "$(python3 -c "print(f'{$RENDER / $PACKED:.2f}x ({$RENDER / $PLAIN:.2f}x one a file)')")" "<= 2x" \
    "$([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
[[ $status -ne 0 && "${BENCH_STRICT:-0}" == 1 ]] && exit 3
exit 0
