//! GPU010 (GPUs under-used) and GPU011 (GPU memory or KV-cache pressure).

use crate::k8s::workload::Container;
use crate::metrics::recommend;
use crate::metrics::usage::Usage;
use crate::rules::{container_anchor, container_label, Context, Hit, Rule};

pub(super) fn check(c: &Container, usage: &Usage, cx: &Context, hits: &mut Vec<Hit>) {
    if let Ok(Some(avg)) = recommend::gpu_underused(usage, cx.policy) {
        hits.push(
            Hit::new(
                Rule::GpuUnderused,
                container_anchor(c),
                format!(
                    "GPU {} averages {:.0}% GPU utilisation (below {:.0}%): the GPUs sit idle",
                    container_label(c),
                    avg * 100.0,
                    cx.policy.gpu_underuse_threshold * 100.0
                ),
                "GPU under-used".into(),
            )
            .help("request fewer GPUs, a MIG profile (nvidia.com/mig-1g.10gb …) or a time-sliced nvidia.com/gpu.shared")
            .container(c),
        );
    }
    // An engine that reserves GPU memory up front fills the framebuffer by design: its memory
    // is judged by its KV cache (GPU015 says when that was not measured). A container with
    // KV-cache measurements is such an engine, whatever its image (Ray Serve's vLLM workers
    // run `rayproject/ray-llm`, the fraction set in `serveConfigV2`).
    let engine = crate::k8s::engine::detect(c).filter(|e| e.preallocates.is_some());
    let kv = usage.kv_cache_usage.and_then(|k| k.p99);
    if engine.is_some() || kv.is_some() {
        let (name, knob) = match engine {
            Some(e) => (
                e.name.clone(),
                e.preallocates
                    .clone()
                    .unwrap_or_else(|| "the memory fraction".into()),
            ),
            None => (
                "The serving engine (KV-cache usage measured)".to_string(),
                "its GPU memory fraction (vLLM `gpu_memory_utilization`, SGLang `mem_fraction_static`)".to_string(),
            ),
        };
        if let Some(p99) = kv.filter(|p| *p >= cx.policy.kv_cache_pressure) {
            hits.push(
                Hit::new(
                    Rule::GpuMemoryPressure,
                    container_anchor(c),
                    format!(
                        "{name} in GPU {} uses {:.0}% of its KV cache at P99 (at or above {:.0}%): requests queue or are preempted",
                        container_label(c),
                        p99 * 100.0,
                        cx.policy.kv_cache_pressure * 100.0
                    ),
                    "KV cache pressure".into(),
                )
                .help(format!(
                    "raise {knob}, add GPUs (tensor parallelism), or shorten --max-model-len"
                ))
                .container(c),
            );
        }
        return;
    }
    if let Ok(Some(ratio)) = recommend::gpu_memory_pressure(usage, cx.policy) {
        hits.push(
            Hit::new(
                Rule::GpuMemoryPressure,
                container_anchor(c),
                format!(
                    "GPU {} uses {:.0}% of GPU memory at P99: CUDA out-of-memory risk, which Kubernetes limits cannot prevent",
                    container_label(c),
                    ratio * 100.0
                ),
                "GPU memory pressure".into(),
            )
            .help("use a GPU with more memory, shard the model across more GPUs, or lower batch size / KV-cache size")
            .container(c),
        );
    }
}
