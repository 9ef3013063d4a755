//! QOS001–QOS003: Guaranteed QoS for GPU containers (requests = limits for CPU and memory).

use super::gpu::scalar_style;
use super::{container_anchor, container_label, is_gpu_container, Context, Hit};
use crate::fix::edit::Applicability;
use crate::fix::resources::{set_quantity, Side};
use crate::k8s::workload::{Container, Workload};

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    for c in w.containers.iter().filter(|c| c.spark.is_none()) {
        if is_gpu_container(cx, c) {
            check_container(cx, w, c, hits);
        }
    }
}

fn check_container(cx: &Context, w: &Workload, c: &Container, hits: &mut Vec<Hit>) {
    let r = &c.resources;
    let who = container_label(c);
    // With a measurement, the headroom family reports QOS001 with the measured fix instead.
    if r.limits.get("memory").is_none() && !super::headroom::has_memory_recommendation(cx, w, c) {
        hits.push(
            Hit::new(
                "QOS001",
                container_anchor(c),
                format!(
                    "GPU {who} has no memory limit: it is not Guaranteed QoS, is evicted first under \
                     node memory pressure, and can take the node's memory"
                ),
                "no memory limit".into(),
            )
            .help("set memory requests = limits to the measured peak (run with --metrics or --prometheus to get the value)")
            .container(c),
        );
    }
    for resource in ["cpu", "memory"] {
        let (Some(req), limit) = (r.requests.get(resource), r.limits.get(resource)) else {
            continue;
        };
        match limit {
            Some(lim) => {
                let (rv, lv) = (req.value.text().unwrap_or_default(), lim.value.text().unwrap_or_default());
                let equal = match (super::gpu::judge(req.value), super::gpu::judge(lim.value)) {
                    (super::gpu::Judged::Valid(a), super::gpu::Judged::Valid(b)) => a == b,
                    _ => rv == lv,
                };
                if !equal {
                    hits.push(
                        Hit::new(
                            "QOS002",
                            req.value.span,
                            format!(
                                "GPU {who} requests {resource} {rv} but is limited to {lv}: Burstable \
                                 QoS pods are evicted before Guaranteed ones and excluded from the \
                                 static CPU manager and topology alignment"
                            ),
                            format!("request {rv} != limit {lv}"),
                        )
                        .help(format!("set the {resource} request to the limit ({lv})"))
                        .container(c)
                        .with_fix(set_quantity(
                            &cx.target,
                            c,
                            Side::Requests,
                            resource,
                            lv,
                            scalar_style(req.value),
                            Applicability::Safe,
                        )),
                    );
                }
            }
            None => hits.push(
                Hit::new(
                    "QOS002",
                    req.key.span,
                    format!(
                        "GPU {who} requests {resource} ({}) without a limit: Burstable QoS, evicted \
                         before Guaranteed pods and excluded from the static CPU manager",
                        req.value.text().unwrap_or_default()
                    ),
                    "request without a limit".into(),
                )
                .help(format!("add a {resource} limit equal to the request"))
                .container(c),
            ),
        }
    }
    if r.requests.get("cpu").is_none() && r.limits.get("cpu").is_none() {
        hits.push(
            Hit::new(
                "QOS003",
                container_anchor(c),
                format!(
                    "GPU {who} has no CPU request: the scheduler places it as if it needed no CPU, \
                     and data loading starves the GPU"
                ),
                "no CPU request".into(),
            )
            .help("set CPU requests = limits (whole cores, for the static CPU manager)")
            .container(c),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::{deployment, rules_hit};

    #[test]
    fn missing_memory_limit_and_cpu_request() {
        let hits = rules_hit(&deployment("          limits: {nvidia.com/gpu: 1}\n"));
        assert_eq!(hits, ["QOS001 resources", "QOS003 resources"]);
    }

    #[test]
    fn burstable_requests_are_qos002() {
        let hits = rules_hit(&deployment(
            "          requests: {cpu: 2, memory: 8Gi}\n          limits: {nvidia.com/gpu: 1, cpu: 4, memory: 8192Mi}\n",
        ));
        assert_eq!(hits, ["QOS002 2"], "8Gi == 8192Mi");
    }

    #[test]
    fn a_request_without_a_limit_is_burstable() {
        let hits = rules_hit(&deployment(
            "          requests: {cpu: 2, memory: 8Gi}\n          limits: {nvidia.com/gpu: 1, memory: 8Gi}\n",
        ));
        assert_eq!(hits, ["QOS002 cpu"]);
    }

    #[test]
    fn limits_only_is_guaranteed() {
        let hits = rules_hit(&deployment(
            "          limits: {nvidia.com/gpu: 1, cpu: 2, memory: 8Gi}\n",
        ));
        assert_eq!(hits, Vec::<String>::new());
    }

    #[test]
    fn cpu_only_containers_are_not_checked() {
        let hits = rules_hit(&deployment("          requests: {cpu: 1}\n"));
        assert_eq!(hits, Vec::<String>::new());
    }
}
