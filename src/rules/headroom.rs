//! MEM001–MEM005, CPU001, GPU010–GPU011, MET001: requests and limits judged against measured
//! usage (a snapshot file or a live Prometheus). Fixes set requests = limits to the measured
//! recommendation (Guaranteed QoS by default), in the file that owns the value.

use super::gpu::{judge, scalar_style, Judged};
use super::{container_anchor, container_label, is_gpu_container, Context, Hit, Rule};
use crate::fix::edit::{Applicability, Fix};
use crate::fix::resources::{set_quantity, Side};
use crate::k8s::quantity::Quantity;
use crate::k8s::workload::{Container, Workload};
use crate::metrics::recommend::{
    self, CpuRecommendation, MemoryRecommendation, NoRecommendation, OomReference,
};
use crate::metrics::usage::{ContainerKey, Usage};
use crate::source::yaml::ScalarStyle;

/// The rules judged against measured usage: they need `--metrics`, `--prometheus` or a
/// configured snapshot.
pub const MEASURED_RULES: &[&str] = &[
    Rule::MemoryLimitBelowUsage.id(),
    Rule::MemoryOverprovisioned.id(),
    Rule::OomKilled.id(),
    Rule::UsageDataInsufficient.id(),
    Rule::OomKillAddressed.id(),
    Rule::CpuRequestFarFromUsage.id(),
    Rule::GpuUnderused.id(),
    Rule::GpuMemoryPressure.id(),
    Rule::GpuMigCandidate.id(),
    Rule::GpuCountOverprovisioned.id(),
    Rule::GpuMemoryPreallocated.id(),
    Rule::UsageDataMissing.id(),
];

/// The measured values a finding recommends; shown in messages and in the JSON output.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Recommended {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
}

fn gib(bytes: f64) -> String {
    format!("{:.1}Gi", bytes / (1u64 << 30) as f64)
}

/// A valid quantity of `resource` on one side of a container's resources.
fn quantity_of(c: &Container, side: Side, resource: &str) -> Option<Quantity> {
    match judge(c.resources.list(side).get(resource)?.value) {
        Judged::Valid(q) => Some(q),
        _ => None,
    }
}

fn bytes_of(c: &Container, side: Side) -> Option<i128> {
    quantity_of(c, side, "memory")?.ceil_bytes()
}

fn millis_of(c: &Container, side: Side) -> Option<i128> {
    quantity_of(c, side, "cpu")?.millis_ceil()
}

/// Joins several fixes on one container into one (all or nothing).
fn merge(fixes: Vec<Option<Fix>>) -> Option<Fix> {
    let mut fixes = fixes.into_iter();
    let mut first = fixes.next()??;
    for f in fixes {
        let f = f?;
        first.edits.extend(f.edits);
        first.changes.extend(f.changes);
        first.notes.extend(f.notes);
        first.description = format!("{}, {}", first.description, f.description);
    }
    Some(first)
}

fn style(c: &Container, resource: &str) -> ScalarStyle {
    [&c.resources.limits, &c.resources.requests]
        .iter()
        .find_map(|l| l.get(resource).map(|q| scalar_style(q.value)))
        .unwrap_or(ScalarStyle::Plain)
}

/// Requests = limits = `value` for `resource` (only the sides that differ are edited).
fn set_both(
    cx: &Context,
    c: &Container,
    resource: &str,
    value: &str,
    limit_too: bool,
) -> Option<Fix> {
    let target: Quantity = value.parse().ok()?;
    let differs = |side: Side| quantity_of(c, side, resource) != Some(target);
    // Limits first: when both sides are inserted at one place (a missing `requests:` block
    // after `limits:`), the limit entry must land inside `limits:`, before the new block.
    let mut sides = vec![Side::Requests];
    if limit_too {
        sides.insert(0, Side::Limits);
    }
    let fixes: Vec<Option<Fix>> = sides
        .into_iter()
        .filter(|s| differs(*s))
        .map(|s| {
            set_quantity(
                &cx.target,
                c,
                s,
                resource,
                value,
                style(c, resource),
                Applicability::Safe,
            )
        })
        .collect();
    if fixes.is_empty() {
        return None;
    }
    merge(fixes)
}

fn memory_fix(cx: &Context, c: &Container, rec: &MemoryRecommendation) -> Option<Fix> {
    set_both(cx, c, "memory", &rec.quantity, true)
}

fn describe_memory(rec: &MemoryRecommendation) -> String {
    let p99 = rec.p99_bytes.map_or("n/a".to_string(), gib);
    let max = rec.max_bytes.map_or("n/a".to_string(), gib);
    format!("measured P99 {p99}, max {max}")
}

/// The metrics identity of a container: (namespace, kind, name, container); a manifest without
/// a namespace is in `default_namespace` (`default`, or what the config says for its path).
pub fn usage_key(w: &Workload, c: &Container, default_namespace: &str) -> Option<ContainerKey> {
    Some(ContainerKey {
        namespace: w
            .object
            .id
            .namespace
            .clone()
            .unwrap_or_else(|| default_namespace.to_string()),
        kind: w.object.id.kind.clone(),
        name: w.object.id.name.clone()?,
        container: c.name?.to_string(),
    })
}

/// The measured usage of a container, if any.
pub(crate) fn usage_of<'u>(cx: &Context<'u>, w: &Workload, c: &Container) -> Option<&'u Usage> {
    cx.usage
        .zip(usage_key(w, c, cx.default_namespace))
        .and_then(|(set, key)| set.get(&key))
}

/// Whether measurements give a memory recommendation for this container.
pub(crate) fn has_memory_recommendation(cx: &Context, w: &Workload, c: &Container) -> bool {
    usage_of(cx, w, c).is_some_and(|u| recommend::memory(u, cx.policy).is_ok())
}

/// The measured recommendation for `resource` (`memory` or `cpu`) of a container, as the
/// text a fix writes and its value; `None` without measurements or for other resources.
pub(crate) fn measured_quantity(
    cx: &Context,
    w: &Workload,
    c: &Container,
    resource: &str,
) -> Option<(String, Quantity)> {
    let usage = usage_of(cx, w, c)?;
    let text = match resource {
        "memory" => recommend::memory(usage, cx.policy).ok()?.quantity,
        "cpu" => recommend::cpu(usage, cx.policy).ok()?.quantity,
        _ => return None,
    };
    let q = text.parse().ok()?;
    Some((text, q))
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let Some(usage_set) = cx.usage else { return };
    for c in w.containers.iter().filter(|c| c.spark.is_none() && !c.init) {
        let Some(key) = usage_key(w, c, cx.default_namespace) else {
            continue;
        };
        let gpu = is_gpu_container(cx, c);
        match usage_set.get(&key) {
            Some(usage) => check_container(cx, c, usage, gpu, hits),
            None if gpu => hits.push(
                Hit::new(
                    Rule::UsageDataMissing,
                    container_anchor(c),
                    format!(
                        "no usage data for GPU {} of {}/{} in namespace `{}` ({}): it was not judged against measurements",
                        container_label(c),
                        key.kind,
                        key.name,
                        key.namespace,
                        usage_set.source
                    ),
                    "no measurements".into(),
                )
                .help("check the namespace and name the workload runs under, or collect a snapshot that covers it")
                .container(c),
            ),
            None => {}
        }
    }
}

fn check_container(cx: &Context, c: &Container, usage: &Usage, gpu: bool, hits: &mut Vec<Hit>) {
    let who = container_label(c);
    let policy = cx.policy;
    let limit = bytes_of(c, Side::Limits);
    let request = bytes_of(c, Side::Requests);
    let mem = recommend::memory(usage, policy);
    let cpu = recommend::cpu(usage, policy);
    if let Err(why) = &mem {
        if !matches!(why, NoRecommendation::NoSeries { .. }) {
            hits.push(
                Hit::new(
                    Rule::UsageDataInsufficient,
                    container_anchor(c),
                    format!("not judged: {why} for {who}"),
                    "too little data".into(),
                )
                .container(c),
            );
        }
    }
    let oom_kills = usage.oom_kills.unwrap_or(0);
    // After an OOM kill a limit that covers the need stays: it is the recommendation.
    let kept_limit = mem
        .as_ref()
        .ok()
        .filter(|r| oom_kills > 0 && limit.is_some_and(|l| l >= r.computed_bytes))
        .and_then(|_| c.resources.limits.get("memory"))
        .and_then(|q| q.value.text());
    let recommended = Recommended {
        memory: kept_limit
            .map(str::to_string)
            .or_else(|| mem.as_ref().ok().map(|r| r.quantity.clone())),
        cpu: cpu.as_ref().ok().map(|r| r.quantity.clone()),
    };
    if oom_kills > 0 {
        hits.push(
            oom_hit(cx, c, oom_kills, limit, mem.as_ref().ok()).recommended(recommended.clone()),
        );
    }
    if let Ok(rec) = &mem {
        // Verdicts compare with the computed need; readable rounding only decides what a fix
        // writes (a 250Mi limit is enough for a need of 197Mi, although 256Mi would be written).
        match (limit, c.resources.limits.get("memory")) {
            (Some(l), Some(q)) if l < rec.computed_bytes && oom_kills == 0 => hits.push(
                Hit::new(
                    Rule::MemoryLimitBelowUsage,
                    q.value.span,
                    format!(
                        "memory limit {} of {who} is below what it uses ({}): it will be OOMKilled; set requests = limits to {}",
                        q.value.text().unwrap_or_default(),
                        describe_memory(rec),
                        rec.quantity
                    ),
                    format!("limit below recommended {}", rec.quantity),
                )
                .container(c)
                .with_fix(memory_fix(cx, c, rec))
                .recommended(recommended.clone()),
            ),
            (None, _) if gpu => {
                // QOS001 already says the limit is missing; with a measurement it can be fixed.
                if let Some(fix) = memory_fix(cx, c, rec) {
                    hits.push(
                        Hit::new(
                            Rule::GpuMemoryLimitMissing,
                            container_anchor(c),
                            format!(
                                "GPU {who} has no memory limit; {}: set memory requests = limits to {}",
                                describe_memory(rec),
                                rec.quantity
                            ),
                            "no memory limit".into(),
                        )
                        .container(c)
                        .with_fix(Some(fix))
                        .recommended(recommended.clone()),
                    );
                }
            }
            _ => {}
        }
        // Never advise lowering memory after an OOM kill in the window.
        if let (Some(req), Some(q), 0) = (
            request.or(limit),
            c.resources
                .requests
                .get("memory")
                .or(c.resources.limits.get("memory")),
            oom_kills,
        ) {
            if recommend::memory_overprovisioned(req, rec, policy) {
                hits.push(
                    Hit::new(
                        Rule::MemoryOverprovisioned,
                        q.value.span,
                        format!(
                            "{who} requests {} of memory but uses far less ({}): set requests = limits to {}",
                            q.value.text().unwrap_or_default(),
                            describe_memory(rec),
                            rec.quantity
                        ),
                        format!("recommended {}", rec.quantity),
                    )
                    .container(c)
                    .with_fix(memory_fix(cx, c, rec))
                    .recommended(recommended.clone()),
                );
            }
        }
    }
    if let Ok(rec) = &cpu {
        check_cpu(cx, c, rec, &recommended, hits);
    }
    if gpu {
        check_gpu(c, usage, cx, hits);
    }
}

/// MEM003 (an error, fixed by raising memory to the recommendation) or, when the current limit
/// already covers what the measurement needs, MEM005 (info: the kill is addressed).
fn oom_hit(
    cx: &Context,
    c: &Container,
    kills: u64,
    limit: Option<i128>,
    rec: Option<&MemoryRecommendation>,
) -> Hit {
    let who = container_label(c);
    let Some(rec) = rec else {
        return Hit::new(
            Rule::OomKilled,
            container_anchor(c),
            format!("{who} was OOMKilled {kills} time(s) in the window"),
            "OOMKilled".into(),
        )
        .container(c);
    };
    let at = match rec.oom_reference {
        Some(OomReference::MeasuredLimit(l)) => {
            format!(" at a memory limit of {}", quantity_text(l))
        }
        // The snapshot does not say which limit was hit: the bump starts from the observed
        // max, which sampling may have left below it.
        _ => " (no limit measured: bumped from the observed max)".to_string(),
    };
    let current = c.resources.limits.get("memory");
    match (limit, current) {
        (Some(l), Some(q)) if l >= rec.computed_bytes => Hit::new(
            Rule::OomKillAddressed,
            q.value.span,
            format!(
                "{who} was OOMKilled {kills} time(s) in the window{at}; the limit is now {}, at or above the recommendation ({} needed: {})",
                q.value.text().unwrap_or_default(),
                quantity_text(rec.computed_bytes),
                describe_memory(rec)
            ),
            "OOMKilled, limit since raised".into(),
        )
        .container(c),
        _ => Hit::new(
            Rule::OomKilled,
            container_anchor(c),
            format!(
                "{who} was OOMKilled {kills} time(s) in the window{at}; {}, limit {}: set memory requests = limits to {}",
                describe_memory(rec),
                current
                    .and_then(|q| q.value.text())
                    .unwrap_or("none"),
                rec.quantity
            ),
            "OOMKilled".into(),
        )
        .container(c)
        // The recommendation is above the limit here (need > limit), so this never lowers it.
        .with_fix(memory_fix(cx, c, rec)),
    }
}

/// Bytes as a short binary quantity for messages (`16Gi`, `31.2Gi`).
fn quantity_text(bytes: i128) -> String {
    if bytes >= 1 << 30 {
        let g = bytes as f64 / (1u64 << 30) as f64;
        if g.fract() == 0.0 {
            format!("{g:.0}Gi")
        } else {
            format!("{g:.1}Gi")
        }
    } else {
        format!("{}Mi", (bytes + (1 << 20) - 1) >> 20)
    }
}

fn check_cpu(
    cx: &Context,
    c: &Container,
    rec: &CpuRecommendation,
    recommended: &Recommended,
    hits: &mut Vec<Hit>,
) {
    let current = millis_of(c, Side::Requests).or_else(|| millis_of(c, Side::Limits));
    let (Some(current), Some(q)) = (
        current,
        c.resources
            .requests
            .get("cpu")
            .or(c.resources.limits.get("cpu")),
    ) else {
        return;
    };
    if !recommend::cpu_far_from(current, rec, cx.policy) {
        return;
    }
    let limit_too = cx.policy.guaranteed && c.resources.limits.get("cpu").is_some();
    hits.push(
        Hit::new(
            Rule::CpuRequestFarFromUsage,
            q.value.span,
            format!(
                "{} requests {} CPU but its P99 is {:.2} cores: set the CPU request{} to {}",
                container_label(c),
                q.value.text().unwrap_or_default(),
                rec.p99_cores,
                if limit_too { " and limit" } else { "" },
                rec.quantity
            ),
            format!("recommended {}", rec.quantity),
        )
        .container(c)
        .with_fix(set_both(cx, c, "cpu", &rec.quantity, limit_too))
        .recommended(recommended.clone()),
    );
}

fn check_gpu(c: &Container, usage: &Usage, cx: &Context, hits: &mut Vec<Hit>) {
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
    // is judged by its KV cache (GPU015 says when that was not measured).
    if let Some(e) = crate::k8s::engine::detect(c).filter(|e| e.preallocates.is_some()) {
        let kv = usage.kv_cache_usage.and_then(|k| k.p99);
        if let Some(p99) = kv.filter(|p| *p >= cx.policy.kv_cache_pressure) {
            hits.push(
                Hit::new(
                    Rule::GpuMemoryPressure,
                    container_anchor(c),
                    format!(
                        "{} in GPU {} uses {:.0}% of its KV cache at P99 (at or above {:.0}%): requests queue or are preempted",
                        e.name,
                        container_label(c),
                        p99 * 100.0,
                        cx.policy.kv_cache_pressure * 100.0
                    ),
                    "KV cache pressure".into(),
                )
                .help(format!(
                    "raise {}, add GPUs (tensor parallelism), or shorten --max-model-len",
                    e.preallocates.as_deref().unwrap_or("the memory fraction")
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
