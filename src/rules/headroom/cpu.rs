//! CPU001: a CPU request far from the measured P99. A Guaranteed GPU container (requests =
//! limits) gets whole cores: the static CPU manager pins only those (QOS003's help says so too),
//! and the message, `recommended` and the fix all carry the rounded value.

use super::{millis_of, set_both, Recommended};
use crate::edit::resources::Side;
use crate::k8s::workload::Container;
use crate::metrics::recommend::{self, CpuRecommendation};
use crate::quantity::Quantity;
use crate::rules::{container_label, Context, Hit, Rule};

pub(super) fn check(
    cx: &Context,
    c: &Container,
    rec: &CpuRecommendation,
    gpu: bool,
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
    let quantity = if gpu && limit_too {
        whole_cores(&rec.quantity)
    } else {
        rec.quantity.clone()
    };
    if quantity != rec.quantity && millis(&quantity) == Some(current) {
        return; // rounded up to what it already asks
    }
    let recommended = Recommended {
        memory: None,
        cpu: Some(quantity.clone()),
    };
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
                quantity
            ),
            format!("recommended {quantity}"),
        )
        .container(c)
        .with_fix(set_both(cx, c, "cpu", &quantity, limit_too))
        .recommended(recommended),
    );
}

fn millis(quantity: &str) -> Option<i128> {
    quantity.parse::<Quantity>().ok()?.millis_ceil()
}

/// `quantity` rounded up to whole cores (`3700m` -> `4`); as it is when it does not parse.
pub(super) fn whole_cores(quantity: &str) -> String {
    match millis(quantity) {
        Some(m) => format!("{}", ((m + 999) / 1000).max(1)),
        None => quantity.to_string(),
    }
}
