//! MEM003 (OOMKilled in the window) and MEM005 (OOMKilled, but the limit now covers the need).

use super::memory::{describe_memory, memory_fix};
use crate::k8s::workload::Container;
use crate::metrics::recommend::{MemoryRecommendation, OomReference};
use crate::rules::{container_anchor, container_label, Context, Hit, Rule};

/// MEM003 (an error, fixed by raising memory to the recommendation) or, when the current limit
/// already covers what the measurement needs, MEM005 (info: the kill is addressed).
pub(super) fn hit(
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
    let current = c.resources.limits.get("memory");
    let at = match (rec.oom_reference, current) {
        (Some(OomReference::MeasuredLimit(l)), _) => {
            format!(" at a memory limit of {}", quantity_text(l))
        }
        // The snapshot does not say which limit was hit: the bump starts from the observed
        // max, which sampling may have left below it.
        (_, Some(_)) => {
            " at a memory limit the data does not give (so the advice starts from the measured max)"
                .to_string()
        }
        (_, None) => {
            " with no memory limit in the manifest or the data (so the advice starts from the measured max)"
                .to_string()
        }
    };
    let killed_at = match rec.oom_reference {
        Some(OomReference::MeasuredLimit(l)) => Some(l),
        _ => None,
    };
    match (limit, current) {
        // Without the limit at the kill, today's limit may be the one that was hit: covering
        // a recommendation that starts from the sampled max does not show the kill addressed.
        (Some(l), Some(q)) if l >= rec.computed_bytes && killed_at.is_none() => Hit::new(
            Rule::OomKillAddressed,
            q.value.span,
            format!(
                "{who} was OOMKilled {kills} time(s) in the window at a memory limit the data does not give; the limit is now {}, at or above the recommendation from the measured max ({} needed: {}), but the kill may have happened at this same limit: the data cannot tell whether it is addressed",
                q.value.text().unwrap_or_default(),
                quantity_text(rec.computed_bytes),
                describe_memory(rec)
            ),
            "OOMKilled, limit at the kill unknown".into(),
        )
        .help("the snapshot needs `memory_limit_bytes`, the limit the container ran with (`gpulint snapshot` reads kube-state-metrics' `kube_pod_container_resource_limits`); or compare the kill's time with the limit's history in git")
        .container(c),
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
            // At the limit its fix raises, where that is written (an overlay's patch, say).
            current.map_or_else(|| container_anchor(c), |q| q.value.span),
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
        // A suppression comment at the container's `resources:` (where MEM003 was shown
        // before it pointed at the limit) still counts.
        .comment_anchor(container_anchor(c))
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
