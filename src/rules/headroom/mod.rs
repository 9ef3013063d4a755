//! MEM001–MEM005, CPU001, GPU010–GPU011, MET001: requests and limits judged against measured
//! usage (a snapshot file or a live Prometheus). Fixes set requests = limits to the measured
//! recommendation (Guaranteed QoS by default), in the file that owns the value.
//!
//! This file holds the data verdicts (MET001: no data, MEM004: too little) and what the
//! families share; each family has its file: `memory.rs` (MEM001, MEM002, QOS001 with a
//! measurement), `oom.rs` (MEM003, MEM005), `cpu.rs` (CPU001), `gpu.rs` (GPU010, GPU011).

mod cpu;
mod gpu;
mod memory;
mod oom;

use super::gpu::{judge, scalar_style, Judged};
use super::{container_anchor, container_label, is_gpu_container, Context, Hit, Rule};
use crate::edit::resources::{set_quantity, Side};
use crate::edit::{Applicability, Fix};
use crate::k8s::workload::{Container, Workload};
use crate::metrics::recommend::{self, NoRecommendation};
use crate::metrics::usage::{ContainerKey, Usage};
use crate::quantity::Quantity;
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

/// A valid quantity of `resource` on one side of a container's resources.
pub(super) fn quantity_of(c: &Container, side: Side, resource: &str) -> Option<Quantity> {
    match judge(c.resources.list(side).get(resource)?.value) {
        Judged::Valid(q) => Some(q),
        _ => None,
    }
}

pub(super) fn bytes_of(c: &Container, side: Side) -> Option<i128> {
    quantity_of(c, side, "memory")?.ceil_bytes()
}

pub(super) fn millis_of(c: &Container, side: Side) -> Option<i128> {
    quantity_of(c, side, "cpu")?.millis_ceil()
}

/// Joins several fixes on one container into one (all or nothing).
pub(crate) fn merge_fixes(fixes: Vec<Option<Fix>>) -> Option<Fix> {
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
pub(super) fn set_both(
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
    merge_fixes(fixes)
}

/// The metrics identity of a container: (namespace, kind, name, container); a manifest without
/// a namespace is in `default_namespace` (`default`, or what the config says for its path).
pub fn usage_key(
    w: &Workload,
    c: &Container,
    default_namespace: &str,
    cluster: Option<&str>,
) -> Option<ContainerKey> {
    Some(ContainerKey {
        cluster: cluster.map(str::to_string),
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
pub(crate) fn usage_of(cx: &Context, w: &Workload, c: &Container) -> Option<Usage> {
    cx.usage
        .zip(usage_key(w, c, cx.default_namespace, cx.cluster))
        .and_then(|(set, key)| set.get(&key))
}

/// Whether measurements give a memory recommendation for this container.
pub(crate) fn has_memory_recommendation(cx: &Context, w: &Workload, c: &Container) -> bool {
    usage_of(cx, w, c).is_some_and(|u| recommend::memory(&u, cx.policy).is_ok())
}

/// The measured recommendation for `resource` (`memory` or `cpu`) of a container, as the
/// text a fix writes and its value; `None` without measurements or for other resources.
pub(crate) fn measured_quantity(
    cx: &Context,
    w: &Workload,
    c: &Container,
    resource: &str,
) -> Option<(String, Quantity)> {
    let usage = &usage_of(cx, w, c)?;
    let text = match resource {
        "memory" => recommend::memory(usage, cx.policy).ok()?.quantity,
        "cpu" => recommend::cpu(usage, cx.policy).ok()?.quantity,
        _ => return None,
    };
    let q = text.parse().ok()?;
    Some((text, q))
}

/// A container's measured size for `resource` when requests = limits (Guaranteed QoS): the
/// memory recommendation, or the CPU one, rounded up to whole cores for a GPU container (the
/// static CPU manager pins only those). What QoS fixes write when there is a measurement, so
/// their value is the one the headroom rules would give.
pub(crate) struct GuaranteedSize {
    /// The quantity the fix writes on both sides.
    pub quantity: String,
    /// How it was measured, for the message.
    pub measured: String,
}

pub(crate) fn guaranteed_size(
    cx: &Context,
    w: &Workload,
    c: &Container,
    resource: &str,
    gpu: bool,
) -> Option<GuaranteedSize> {
    let usage = &usage_of(cx, w, c)?;
    match resource {
        "memory" => {
            let rec = recommend::memory(usage, cx.policy).ok()?;
            Some(GuaranteedSize {
                measured: memory::describe_memory(&rec),
                quantity: rec.quantity,
            })
        }
        "cpu" => {
            let rec = recommend::cpu(usage, cx.policy).ok()?;
            Some(GuaranteedSize {
                measured: format!("measured CPU P99 {:.2} cores", rec.p99_cores),
                quantity: if gpu {
                    cpu::whole_cores(&rec.quantity)
                } else {
                    rec.quantity
                },
            })
        }
        _ => None,
    }
}

/// The fix that sets requests = limits of `resource` to `quantity`.
pub(crate) fn set_guaranteed(
    cx: &Context,
    c: &Container,
    resource: &str,
    quantity: &str,
) -> Option<Fix> {
    set_both(cx, c, resource, quantity, true)
}

/// The measured values behind a fix of `resource`, as findings carry them.
pub(crate) fn recommended_for(resource: &str, quantity: &str) -> Recommended {
    let value = Some(quantity.to_string());
    match resource {
        "memory" => Recommended {
            memory: value,
            cpu: None,
        },
        _ => Recommended {
            memory: None,
            cpu: value,
        },
    }
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let Some(usage_set) = cx.usage else { return };
    for c in w.containers.iter().filter(|c| c.spark.is_none() && !c.init) {
        let Some(key) = usage_key(w, c, cx.default_namespace, cx.cluster) else {
            continue;
        };
        let gpu = is_gpu_container(cx, c);
        match usage_set.get(&key) {
            Some(usage) => check_container(cx, w, c, &usage, gpu, hits),
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

fn check_container(
    cx: &Context,
    w: &Workload,
    c: &Container,
    usage: &Usage,
    gpu: bool,
    hits: &mut Vec<Hit>,
) {
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
        cpu: None,
    };
    // Each finding recommends what its fix writes: the memory verdicts memory, CPU001 CPU.
    let memory_only = recommended;
    if oom_kills > 0 {
        hits.push(
            oom::hit(cx, c, oom_kills, limit, mem.as_ref().ok()).recommended(memory_only.clone()),
        );
    }
    if let Ok(rec) = &mem {
        memory::check(
            cx,
            c,
            rec,
            limit,
            request,
            oom_kills,
            gpu,
            &memory_only,
            hits,
        );
    }
    if let Ok(rec) = &cpu {
        cpu::check(cx, c, rec, gpu, hits);
    }
    if gpu {
        gpu::check(w, c, usage, cx, hits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::recommend::Policy;
    use crate::metrics::usage::{GpuUtilization, Stats};
    use crate::rules::test_support::{deployment, run_measured};

    const GIB: f64 = (1u64 << 30) as f64;

    /// A week of samples: enough for a recommendation.
    fn measured(memory_gib: f64, cpu_cores: f64) -> Usage {
        Usage {
            samples: Some(10_000),
            history_seconds: Some(7.0 * 86_400.0),
            memory_bytes: Some(Stats {
                p50: Some(memory_gib * GIB * 0.8),
                p99: Some(memory_gib * GIB),
                max: Some(memory_gib * GIB),
            }),
            cpu_cores: Some(Stats {
                p50: Some(cpu_cores * 0.8),
                p99: Some(cpu_cores),
                max: Some(cpu_cores),
            }),
            ..Usage::default()
        }
    }

    /// (rule, text at span, message) of the default-enabled rules, `usage` measured for `vllm`.
    fn hits(resources: &str, usage: Usage) -> Vec<(String, String, String)> {
        let policy = Policy::default();
        run_measured(
            &deployment(resources),
            &[("Deployment", "llm", "vllm", usage)],
            &policy,
        )
        .into_iter()
        .map(|(rule, at, message, _)| (rule, at, message))
        .collect()
    }

    fn memory_rec(u: &Usage) -> String {
        recommend::memory(u, &Policy::default())
            .expect("recommendation")
            .quantity
    }

    fn cpu_rec(u: &Usage) -> String {
        recommend::cpu(u, &Policy::default())
            .expect("recommendation")
            .quantity
    }

    #[test]
    fn a_memory_limit_below_use_is_mem001_with_the_recommendation() {
        let u = measured(6.0, 1.0);
        let rec = memory_rec(&u);
        let h = hits(
            "          requests: {memory: 2Gi, cpu: \"1\"}\n          limits: {memory: 2Gi, cpu: \"1\"}\n",
            u,
        );
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].0.as_str(), h[0].1.as_str()), ("MEM001", "2Gi"));
        assert!(
            h[0].2.ends_with(&format!("set requests = limits to {rec}")),
            "{}",
            h[0].2
        );
    }

    #[test]
    fn memory_far_above_use_is_mem002_and_cpu_far_from_use_is_cpu001() {
        let u = measured(1.0, 0.25);
        let (mem, cpu) = (memory_rec(&u), cpu_rec(&u));
        let h = hits(
            "          requests: {memory: 32Gi, cpu: \"8\"}\n          limits: {memory: 32Gi, cpu: \"8\"}\n",
            u,
        );
        let rules: Vec<(&str, &str)> = h
            .iter()
            .map(|(r, at, _)| (r.as_str(), at.as_str()))
            .collect();
        assert_eq!(rules, [("MEM002", "32Gi"), ("CPU001", "\"8\"")]);
        assert!(
            h[0].2.ends_with(&format!("set requests = limits to {mem}")),
            "{}",
            h[0].2
        );
        assert!(h[1].2.ends_with(&format!("to {cpu}")), "{}", h[1].2);
    }

    #[test]
    fn an_oom_kill_is_mem003_below_the_need_and_mem005_once_the_limit_covers_it() {
        let resources = |limit: &str| {
            format!("          requests: {{memory: {limit}, cpu: \"1\"}}\n          limits: {{memory: {limit}, cpu: \"1\"}}\n")
        };
        let killed = Usage {
            oom_kills: Some(2),
            ..measured(3.0, 1.0)
        };
        let low = hits(&resources("2Gi"), killed.clone());
        assert_eq!(low.len(), 1, "{low:?}");
        assert_eq!(low[0].0, "MEM003");
        assert!(
            low[0]
                .2
                .starts_with("container `vllm` was OOMKilled 2 time(s)"),
            "{}",
            low[0].2
        );
        let high = hits(&resources("64Gi"), killed.clone());
        // A kill in the window never advises lowering memory (no MEM002).
        assert_eq!(high.len(), 1, "{high:?}");
        assert_eq!((high[0].0.as_str(), high[0].1.as_str()), ("MEM005", "64Gi"));
        // Without the limit at the kill, 64Gi may be the limit that was hit.
        assert!(
            high[0]
                .2
                .ends_with("but the kill may have happened at this same limit: the data cannot tell whether it is addressed"),
            "{}",
            high[0].2
        );
        // Killed at 2Gi, now 64Gi: addressed.
        let measured_limit = Usage {
            memory_limit_bytes: Some(2.0 * GIB),
            ..killed
        };
        let high = hits(&resources("64Gi"), measured_limit);
        assert_eq!((high[0].0.as_str(), high[0].1.as_str()), ("MEM005", "64Gi"));
        assert!(
            high[0].2.contains(
                "at a memory limit of 2Gi; the limit is now 64Gi, at or above the recommendation ("
            ),
            "{}",
            high[0].2
        );
    }

    #[test]
    fn too_few_samples_is_mem004_and_a_gpu_container_without_data_is_met001() {
        let few = Usage {
            samples: Some(3),
            ..measured(1.0, 1.0)
        };
        let h = hits("          limits: {memory: 1Gi, cpu: \"1\"}\n", few);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].0.as_str(), h[0].1.as_str()), ("MEM004", "resources"));
        let gpu = "          requests: {nvidia.com/gpu: 1, memory: 1Gi, cpu: \"1\"}\n          limits: {nvidia.com/gpu: 1, memory: 1Gi, cpu: \"1\"}\n";
        let policy = Policy::default();
        let other = run_measured(
            &deployment(gpu),
            &[("Deployment", "other", "vllm", measured(1.0, 1.0))],
            &policy,
        );
        let rules: Vec<&str> = other.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(rules, ["MET001"]);
    }

    #[test]
    fn an_idle_gpu_is_gpu010() {
        let idle = Usage {
            gpu_utilization: Some(GpuUtilization {
                avg: Some(0.05),
                p99: Some(0.2),
            }),
            ..measured(0.8, 1.0)
        };
        let gpu = "          requests: {nvidia.com/gpu: 1, memory: 1Gi, cpu: \"1\"}\n          limits: {nvidia.com/gpu: 1, memory: 1Gi, cpu: \"1\"}\n";
        let h = hits(gpu, idle);
        let rules: Vec<&str> = h.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(rules, ["GPU010"], "{h:?}");
        assert!(
            h[0].2.contains("averages 5% GPU utilisation (below 30%)"),
            "{}",
            h[0].2
        );
    }

    #[test]
    fn a_guaranteed_gpu_container_gets_whole_cores_in_the_message_and_the_fix() {
        // 16 cores asked, P99 3.2: the raw recommendation is fractional.
        let u = measured(1.0, 3.2);
        let raw = cpu_rec(&u);
        assert!(raw.ends_with('m'), "{raw}");
        let gpu = "          requests: {nvidia.com/gpu: 1, memory: 32Gi, cpu: \"16\"}\n          limits: {nvidia.com/gpu: 1, memory: 32Gi, cpu: \"16\"}\n";
        let policy = Policy::default();
        let found = run_measured(
            &deployment(gpu),
            &[("Deployment", "llm", "vllm", u)],
            &policy,
        );
        let cpu = found.iter().find(|h| h.0 == "CPU001").expect("CPU001");
        assert!(
            cpu.2.ends_with("set the CPU request and limit to 4"),
            "{}",
            cpu.2
        );
        let fix = cpu.3.as_deref().unwrap_or_default();
        assert!(
            fix.contains("-> 4") && !fix.contains("m,") && !fix.ends_with('m'),
            "{fix}"
        );
    }
}
