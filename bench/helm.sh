#!/usr/bin/env bash
# Benchmark: Helm values origins. One release of the vllm-stack chart (testdata/corpus) with
# MODELS models (default 20), each measured well under its memory: MODELS values-driven findings
# (each on its requestMemory and limitMemory leaves) and 2*MODELS values edits. Counts the renders
# (`helm template` calls) through a counting wrapper around the real engine (GPULINT_HELM, else the Helm SDK
# scripts/lib.sh installs), for the lint and for `--fix --diff`, and times both.
#
#   bench/helm.sh [MODELS=20]
#
# Targets (issue 15): findings in one release share their renders: the release's own render
# plus at most 2 per round whatever the number of findings (the lint: one round; --fix --diff:
# one round, then a verification render of the edited values), within 10 for --fix --diff.
# BENCH_STRICT=1 exits 3 on a miss.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
MODELS="${1:-20}"
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
if [[ -z "${GPULINT_HELM:-}" ]]; then
    # shellcheck source=scripts/lib.sh
    . "$ROOT/scripts/lib.sh"
    gpulint_ensure_helm_sdk >/dev/null
fi
bench_build
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/repo/charts"
cp -r "$ROOT/testdata/corpus/helm/vllm-project__production-stack/vllm-stack" "$WORK/repo/charts/"
python3 - "$WORK/repo" "$MODELS" <<'PY'
import json, os, sys
repo, models = sys.argv[1], int(sys.argv[2])
spec = "".join(
    f'  - name: "m{i}"\n    repository: "vllm/vllm-openai"\n    tag: "v0.{i}"\n'
    f'    modelURL: "org/m{i}"\n    replicaCount: 1\n    requestCPU: {2 + i % 6}\n'
    f'    limitCPU: {2 + i % 6}\n    requestMemory: "{10 + i}Gi"\n    limitMemory: "{10 + i}Gi"\n'
    f'    requestGPU: 1\n'
    for i in range(models))
open(os.path.join(repo, "values-prod.yaml"), "w").write(
    f'servingEngineSpec:\n  runtimeClassName: ""\n  modelSpec:\n{spec}')
containers = [{"namespace": "llm", "kind": "Deployment", "name": f"vllm-m{i}-deployment-vllm",
               "container": "vllm", "samples": 20160,
               "memory_bytes": {"p50": 1.0e9, "p99": 2.0e9, "max": 2.1e9}} for i in range(models)]
json.dump({"version": 1, "window": "14d", "source": "bench", "containers": containers},
          open(os.path.join(repo, "metrics.json"), "w"))
open(os.path.join(repo, ".gpulint.yaml"), "w").write(
    "charts:\n- path: charts/vllm-stack\n  release: vllm\n  namespace: llm\n  values: [values-prod.yaml]\n")
PY
# Each call logs its subcommand: `template` calls are the renders (`version` is asked once).
printf '#!/bin/sh\necho "$1" >> "%s"\nexec "%s" "$@"\n' "$WORK/calls" "$GPULINT_HELM" > "$WORK/helm"
chmod +x "$WORK/helm"
calls() { if [[ -f "$WORK/calls" ]]; then grep -c '^template$' "$WORK/calls" || true; else echo 0; fi; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

cd "$WORK/repo"
t0=$(date +%s%N)
"$GPULINT" --helm "$WORK/helm" --metrics metrics.json --format json . > "$WORK/lint.json" 2>"$WORK/lint.err" || true
LINT_MS=$(ms_since "$t0")
LINT_CALLS=$(calls)
ON_VALUES=$(python3 -c '
import json, sys
print(sum(1 for f in json.load(open(sys.argv[1]))["findings"] if f["file"] == "values-prod.yaml"))
' "$WORK/lint.json")
t0=$(date +%s%N)
"$GPULINT" --helm "$WORK/helm" --metrics metrics.json --fix --diff . > "$WORK/fix.diff" 2>"$WORK/fix.err" || true
FIX_MS=$(ms_since "$t0")
FIX_CALLS=$(( $(calls) - LINT_CALLS ))
EDITS=$(grep -cE '^\+    (request|limit)Memory: "' "$WORK/fix.diff" || true)
status=0
python3 - "$MODELS" "$ON_VALUES" "$LINT_CALLS" "$LINT_MS" "$EDITS" "$FIX_CALLS" "$FIX_MS" <<'PY' || status=$?
import sys
models, on_values, lint_calls, lint_ms, edits, fix_calls, fix_ms = map(int, sys.argv[1:])
print(f"one release, {models} models measured under their memory")
print(f"lint:          {on_values:3d} findings on values leaves, {lint_calls:2d} renders, {lint_ms:6d} ms")
print(f"--fix --diff:  {edits:3d} values leaves edited,      {fix_calls:2d} renders, {fix_ms:6d} ms")
ok = on_values >= models and edits == 2 * models and lint_calls <= 3 and fix_calls <= 10
print("targets: every model's finding on the values and both its leaves edited;",
      "lint <= 1 + 2 renders; --fix --diff <= 10 renders")
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 4)
PY
bench_row "Helm values origins: one release, $MODELS values-driven findings ($EDITS leaves edited)" \
    "bench/helm.sh $MODELS" "$LINT_CALLS renders to lint ($LINT_MS ms), $FIX_CALLS for --fix --diff ($FIX_MS ms)" \
    "one call per candidate leaf before (79 and 159 for six findings on a real chart)" "" \
    "lint <= 1 + 2, --fix --diff <= 10" "$([[ $status -eq 0 ]] && echo PASS || echo FAIL)"

# The same chart with its own Ray tutorial values (upstream, unchanged): a leaf written into a
# script, `replicaCount + 1`, one leaf in two templates, several leaves of the same value; both
# groups measured far under their CPU and memory (a CPU001 fix each, eight findings on values).
rm -rf "$WORK/ray" "$WORK/calls"
mkdir -p "$WORK/ray/charts"
cp -r "$ROOT/testdata/corpus/helm/vllm-project__production-stack/vllm-stack" "$WORK/ray/charts/"
cp "$ROOT/testdata/corpus/helm/vllm-project__production-stack/_values/tutorials/assets/values-15-a-minimal-pipeline-parallel-example-raycluster.yaml" \
    "$WORK/ray/values-prod.yaml"
cp "$WORK/repo/.gpulint.yaml" "$WORK/ray/"
python3 - "$WORK/ray/metrics.json" <<'PY'
import json, sys
containers = [{"namespace": "llm", "kind": "RayCluster", "name": "vllm-distilgpt2-raycluster-raycluster",
               "container": c, "samples": 20160, "memory_bytes": {"p50": 1.0e9, "p99": 2.0e9, "max": 2.1e9},
               "cpu_cores": {"p50": 0.1, "p99": 0.3, "max": 0.4}} for c in ("vllm-ray-head", "vllm-ray-worker")]
json.dump({"version": 1, "window": "14d", "source": "bench", "containers": containers}, open(sys.argv[1], "w"))
PY
cd "$WORK/ray"
t0=$(date +%s%N)
"$GPULINT" --helm "$WORK/helm" --metrics metrics.json --format json . > "$WORK/ray-lint.json" 2>"$WORK/ray-lint.err" || true
RAY_LINT_MS=$(ms_since "$t0")
RAY_LINT_CALLS=$(calls)
RAY_ON_VALUES=$(python3 -c '
import json, sys
print(sum(1 for f in json.load(open(sys.argv[1]))["findings"] if f["file"] == "values-prod.yaml"))
' "$WORK/ray-lint.json")
t0=$(date +%s%N)
"$GPULINT" --helm "$WORK/helm" --metrics metrics.json --fix --unsafe-fixes --diff . > "$WORK/ray-fix.diff" 2>"$WORK/ray-fix.err" || true
RAY_FIX_MS=$(ms_since "$t0")
RAY_FIX_CALLS=$(( $(calls) - RAY_LINT_CALLS ))
RAY_EDITS=$(grep -cE '^\+ +requestCPU: 350m' "$WORK/ray-fix.diff" || true)
ray_status=0
python3 - "$RAY_ON_VALUES" "$RAY_LINT_CALLS" "$RAY_LINT_MS" "$RAY_EDITS" "$RAY_FIX_CALLS" "$RAY_FIX_MS" <<'PY' || ray_status=$?
import sys
on_values, lint_calls, lint_ms, edits, fix_calls, fix_ms = map(int, sys.argv[1:])
print("the chart's Ray tutorial values (upstream), both groups measured under their CPU and memory")
print(f"lint:          {on_values:3d} findings on values leaves, {lint_calls:2d} renders, {lint_ms:6d} ms")
print(f"--fix --unsafe-fixes --diff: {edits:3d} leaves edited, {fix_calls:2d} renders, {fix_ms:6d} ms")
ok = on_values >= 8 and edits == 2 and lint_calls <= 4 and fix_calls <= 10
print("targets: eight findings on the values (CPU001 and QOS002 on requestCPU, MEM002 and QOS001 on requestMemory, both groups), both requestCPU leaves edited;",
      "lint <= 1 + 3 renders (the permuted render a shown field of several same-valued leaves needs);",
      "--fix --diff <= 10 renders")
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 4)
PY
bench_row "Helm values origins on the chart's own Ray tutorial values ($RAY_ON_VALUES findings on values, $RAY_EDITS leaves edited)" \
    "bench/helm.sh $MODELS" "$RAY_LINT_CALLS renders to lint ($RAY_LINT_MS ms), $RAY_FIX_CALLS for --fix --diff ($RAY_FIX_MS ms)" \
    "9 and 9 before (a control render and a render per question)" "" \
    "lint <= 1 + 3, --fix --diff <= 10" "$([[ $ray_status -eq 0 ]] && echo PASS || echo FAIL)"
[[ ($status -ne 0 || $ray_status -ne 0) && "${BENCH_STRICT:-0}" == 1 ]] && exit 3
exit 0
