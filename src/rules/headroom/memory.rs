//! MEM001 (memory limit below the measured need), MEM002 (memory request far above it) and
//! QOS001 with a measurement (a GPU container without a memory limit, now fixable).

use super::{set_both, Recommended};
use crate::edit::Fix;
use crate::k8s::workload::Container;
use crate::metrics::recommend::{self, MemoryBasis, MemoryRecommendation};
use crate::rules::{container_anchor, container_label, Context, Hit, Rule};

/// The memory verdicts of a container with a memory recommendation (`limit` and `request` in
/// bytes). None lowers memory after an OOM kill in the window (`oom_kills`).
#[allow(clippy::too_many_arguments)]
pub(super) fn check(
    cx: &Context,
    c: &Container,
    rec: &MemoryRecommendation,
    limit: Option<i128>,
    request: Option<i128>,
    oom_kills: u64,
    gpu: bool,
    recommended: &Recommended,
    hits: &mut Vec<Hit>,
) {
    let who = container_label(c);
    let policy = cx.policy;
    // Verdicts compare with the computed need; readable rounding only decides what a fix
    // writes (a 250Mi limit is enough for a need of 197Mi, although 256Mi would be written).
    match (limit, c.resources.limits.get("memory")) {
        (Some(l), Some(q)) if l < rec.computed_bytes && oom_kills == 0 => hits.push(
            Hit::new(
                Rule::MemoryLimitBelowUsage,
                q.value.span,
                format!(
                    "memory limit {} of {who} {}; set requests = limits to {}",
                    q.value.text().unwrap_or_default(),
                    below(l, rec),
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

/// What a limit below the recommendation is below: the measured use (it will be OOMKilled),
/// or only the headroom the recommendation adds to it.
fn below(limit: i128, rec: &MemoryRecommendation) -> String {
    let used = rec.max_bytes.or(rec.p99_bytes);
    if used.is_none_or(|u| (limit as f64) < u) {
        return format!(
            "is below what it uses ({}): it will be OOMKilled",
            describe_memory(rec)
        );
    }
    let rule = match rec.basis {
        MemoryBasis::MaxWithMargin => format!("max × {:.2}", 1.0 + rec.margin),
        MemoryBasis::ObservedMax => "the measured max".to_string(),
        MemoryBasis::P99WithMargin | MemoryBasis::OomBump => {
            format!("P99 × {:.2}", 1.0 + rec.margin)
        }
    };
    format!(
        "is above what it used ({}) but below the recommendation ({rule} = {}): too little headroom, a peak above the window's may be OOMKilled",
        describe_memory(rec),
        gib(rec.computed_bytes as f64)
    )
}

pub(super) fn memory_fix(cx: &Context, c: &Container, rec: &MemoryRecommendation) -> Option<Fix> {
    set_both(cx, c, "memory", &rec.quantity, true)
}

pub(super) fn describe_memory(rec: &MemoryRecommendation) -> String {
    let p99 = rec.p99_bytes.map_or("n/a".to_string(), gib);
    let max = rec.max_bytes.map_or("n/a".to_string(), gib);
    format!("measured P99 {p99}, max {max}")
}

fn gib(bytes: f64) -> String {
    format!("{:.1}Gi", bytes / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::recommend::Policy;
    use crate::metrics::usage::{Stats, Usage};

    const GIB: f64 = (1u64 << 30) as f64;

    fn rec(p99: f64, max: f64) -> MemoryRecommendation {
        let u = Usage {
            samples: Some(10_000),
            history_seconds: Some(7.0 * 86_400.0),
            memory_bytes: Some(Stats {
                p50: Some(p99 * 0.8),
                p99: Some(p99),
                max: Some(max),
            }),
            ..Usage::default()
        };
        recommend::memory(&u, &Policy::default()).expect("a recommendation")
    }

    #[test]
    fn only_a_limit_below_the_measured_max_will_be_oom_killed() {
        // P99 48Gi, max 49Gi: the recommendation is 48 × 1.15 = 55.2Gi.
        let r = rec(48.0 * GIB, 49.0 * GIB);
        let tight = below((54.0 * GIB) as i128, &r);
        assert_eq!(tight, "is above what it used (measured P99 48.0Gi, max 49.0Gi) but below the recommendation (P99 × 1.15 = 55.2Gi): too little headroom, a peak above the window's may be OOMKilled");
        let short = below((40.0 * GIB) as i128, &r);
        assert_eq!(
            short,
            "is below what it uses (measured P99 48.0Gi, max 49.0Gi): it will be OOMKilled"
        );
    }
}
