//! CPU001: a CPU request far from the measured P99.

use super::{millis_of, set_both, Recommended};
use crate::edit::resources::Side;
use crate::k8s::workload::Container;
use crate::metrics::recommend::{self, CpuRecommendation};
use crate::rules::{container_label, Context, Hit, Rule};

pub(super) fn check(
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
