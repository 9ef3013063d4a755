//! GPU010 (GPUs under-used) and GPU011 (GPU memory or KV-cache pressure).

use crate::k8s::podsets::pod_sets;
use crate::k8s::workload::{Container, Workload};
use crate::metrics::usage::Usage;
use crate::metrics::{mig, recommend};
use crate::rules::{container_anchor, container_label, Context, Hit, Rule};

/// GPU010's advice. Fewer GPUs, a MIG slice or a shared GPU need the same GPU memory in less:
/// when the measured framebuffer rules them out (the P99 with the margin holds in no smaller
/// shape), the lever left is the replicas, or an autoscaler that follows the load. An engine
/// that preallocates without KV-cache measurements is not judged by its framebuffer.
fn underused_help(w: &Workload, c: &Container, usage: &Usage, cx: &Context) -> String {
    let generic = "request fewer GPUs, a MIG profile (nvidia.com/mig-1g.10gb …) or a time-sliced nvidia.com/gpu.shared".to_string();
    let preallocating = crate::k8s::engine::detect(c).is_some_and(|e| e.preallocates.is_some());
    let kv = usage.kv_cache_usage.and_then(|k| k.p99);
    let memory = usage.gpu_memory_bytes.unwrap_or_default();
    let (Some(p99), Some(capacity), Some(gpus)) = (
        memory.p99,
        memory.capacity,
        crate::rules::gpu_sizing::gpu_count(cx, c),
    ) else {
        return generic;
    };
    if (preallocating && kv.is_none()) || gpus == 0 {
        return generic;
    }
    let margin = cx.policy.memory_margin;
    let need = p99 * (1.0 + margin);
    // The same memory on one GPU less (the fullest GPU's figure on each).
    let fewer = gpus > 1 && need * gpus as f64 <= capacity * (gpus - 1) as f64;
    // A MIG profile of the model that holds it; an unknown model may have one.
    let slice = gpus == 1
        && usage.gpu_model.as_deref().is_none_or(|m| {
            mig::model_of(m).is_some_and(|model| {
                model
                    .profiles
                    .iter()
                    .any(|p| f64::from(p.memory_gb) * 1e9 >= need)
            })
        });
    // Time-slicing shares one framebuffer: a second copy must fit.
    let shared = gpus == 1 && 2.0 * need <= capacity;
    if fewer || slice || shared {
        return generic;
    }
    let pods = pod_sets(w)
        .into_iter()
        .find(|s| {
            s.containers
                .iter()
                .any(|&i| w.containers.get(i).is_some_and(|x| x.path == c.path))
        })
        .and_then(|s| s.count.known());
    let rules_out = if gpus > 1 {
        "fewer GPUs"
    } else {
        "a MIG slice or a shared GPU"
    };
    let lever = match pods {
        Some(1) => "the lever is time: an autoscaler that scales it to zero while idle (KEDA), or a node pool that scales down".to_string(),
        Some(n) => format!("the lever is replicas: run fewer than its {n}, or let an autoscaler (HPA, KEDA) scale them with the load"),
        None => "the lever is replicas: run fewer, or let an autoscaler (HPA, KEDA) scale them with the load".to_string(),
    };
    format!(
        "its GPU memory rules out {rules_out} (P99 {:.1} GB of {:.1} GB per GPU, {:.1} GB with the {:.0}% margin): {lever}",
        p99 / 1e9,
        capacity / 1e9,
        need / 1e9,
        margin * 100.0
    )
}

pub(super) fn check(w: &Workload, c: &Container, usage: &Usage, cx: &Context, hits: &mut Vec<Hit>) {
    if let Ok(Some((avg, measure))) = recommend::gpu_underuse(usage, cx.policy) {
        hits.push(
            Hit::new(
                Rule::GpuUnderused,
                container_anchor(c),
                format!(
                    "GPU {} averages {:.0}% {measure} (below {:.0}%): the GPUs sit idle",
                    container_label(c),
                    avg * 100.0,
                    cx.policy.gpu_underuse_threshold * 100.0
                ),
                "GPU under-used".into(),
            )
            .help(underused_help(w, c, usage, cx))
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
