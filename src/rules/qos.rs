//! QOS001–QOS003: Guaranteed QoS for GPU pods, judged as the kubelet does: over every container
//! of the pod, init containers and sidecars included, requests = limits for CPU and memory.
//! RES001: a request above its limit, which the API server rejects, on any container.

use super::gpu::{judge, scalar_style, Judged};
use super::headroom::{guaranteed_size, recommended_for, set_guaranteed, GuaranteedSize};
use super::{container_anchor, container_label, is_gpu_container, Context, Hit, Rule};
use crate::edit::resources::{set_quantity, Side};
use crate::edit::Applicability;
use crate::k8s::workload::{Container, ResourceEntry, Workload};
use crate::quantity::Quantity;

/// The resources the kubelet's QoS class looks at (`isSupportedQoSComputeResource`).
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    // A KServe model with no image runs its serving runtime's container: its resources are the
    // runtime's with the model's over them (`runtime_view`).
    let views: Vec<_> = w
        .containers
        .iter()
        .map(|c| super::runtime_view::of(cx, w, c))
        .collect();
    let containers: Vec<Container> = w
        .containers
        .iter()
        .zip(&views)
        .map(|(c, v)| v.as_ref().map_or_else(|| c.clone(), |v| v.container(c)))
        .collect();
    let before = hits.len();
    check_containers(cx, w, &containers, hits);
    // A finding on a quantity the runtime gives is shown at the model's runtime.
    if let Some(view) = views.iter().flatten().next() {
        for h in hits.iter_mut().skip(before) {
            view.place(h);
        }
    }
}

fn check_containers(cx: &Context, w: &Workload, containers: &[Container], hits: &mut Vec<Hit>) {
    // Ephemeral containers cannot set resources and do not count for QoS.
    let counted: Vec<&Container> = containers
        .iter()
        .filter(|c| c.spark.is_none() && !c.path.contains("['ephemeralContainers']"))
        .collect();
    for c in &counted {
        check_request_above_limit(cx, w, c, hits);
    }
    for c in counted.iter().filter(|c| is_gpu_container(cx, c)) {
        check_gpu_container(cx, w, c, hits);
    }
    for pod in pods(&counted) {
        if !pod.iter().any(|c| is_gpu_container(cx, c)) {
            continue;
        }
        // With pod-level resources (`spec.resources`) the pod's own block decides the QoS class:
        // only the GPU containers' own settings are judged then.
        let pod_level = pod
            .first()
            .and_then(|c| c.pod)
            .and_then(|i| w.pods.get(i))
            .and_then(|p| p.spec.get("resources"))
            .is_some_and(|r| {
                ["requests", "limits"].iter().any(|side| {
                    QOS_RESOURCES
                        .iter()
                        .any(|name| r.get(side).and_then(|l| l.get(name)).is_some())
                })
            });
        for c in pod {
            let gpu = is_gpu_container(cx, c);
            if gpu || !pod_level {
                check_guaranteed(cx, w, c, gpu, hits);
            }
        }
    }
}

/// The containers grouped by the pod they run in; a container-like block outside any pod spec
/// is a pod of its own.
fn pods<'c, 'a>(containers: &[&'c Container<'a>]) -> Vec<Vec<&'c Container<'a>>> {
    let mut pods: Vec<Vec<&Container>> = Vec::new();
    for c in containers {
        match pods
            .iter_mut()
            .find(|p| c.pod.is_some() && p.first().is_some_and(|f| f.pod == c.pod))
        {
            Some(pod) => pod.push(c),
            None => pods.push(vec![c]),
        }
    }
    pods
}

/// How the container is named in messages: a native sidecar (an init container with
/// `restartPolicy: Always`) is called a sidecar.
fn who(c: &Container) -> String {
    match c.name {
        Some(name) if c.init && c.node.get_str("restartPolicy") == Some("Always") => {
            format!("sidecar container `{name}`")
        }
        _ => container_label(c),
    }
}

/// A quantity that counts for QoS: valid and above zero (the kubelet skips zero values).
fn positive(q: Option<&ResourceEntry>) -> Option<Quantity> {
    match judge(q?.value) {
        Judged::Valid(v) if v > Quantity::from(0) => Some(v),
        _ => None,
    }
}

/// QOS001 and QOS003: what a GPU container itself lacks.
fn check_gpu_container(cx: &Context, w: &Workload, c: &Container, hits: &mut Vec<Hit>) {
    let r = &c.resources;
    let who = who(c);
    // With a measurement, the headroom family reports QOS001 with the measured fix instead.
    if r.limits.get("memory").is_none() && !super::headroom::has_memory_recommendation(cx, w, c) {
        hits.push(
            Hit::new(
                Rule::GpuMemoryLimitMissing,
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
    if r.requests.get("cpu").is_none() && r.limits.get("cpu").is_none() {
        hits.push(
            Hit::new(
                Rule::GpuCpuRequestMissing,
                container_anchor(c),
                format!(
                    "GPU {who} has no CPU request: the scheduler places it as if it needed no CPU, \
                     and data loading starves the GPU"
                ),
                "no CPU request".into(),
            )
            .help("set CPU requests = limits (whole cores, for the static CPU manager); gpulint does not guess the CPU a data pipeline needs")
            .container(c),
        );
    }
}

/// QOS002: one container of a GPU pod keeps the pod from Guaranteed QoS.
fn check_guaranteed(cx: &Context, w: &Workload, c: &Container, gpu: bool, hits: &mut Vec<Hit>) {
    let r = &c.resources;
    let subject = if gpu {
        format!("GPU {}", who(c))
    } else {
        format!("{} of a GPU pod", who(c))
    };
    let mut missing = Vec::new();
    for resource in QOS_RESOURCES {
        let (req, lim) = (r.requests.get(resource), r.limits.get(resource));
        match (req, lim) {
            (Some(req), Some(lim)) => {
                let (rv, lv) = (
                    req.value.text().unwrap_or_default(),
                    lim.value.text().unwrap_or_default(),
                );
                let (a, b) = (judge(req.value), judge(lim.value));
                let differs = match (&a, &b) {
                    (Judged::Valid(a), Judged::Valid(b)) => a < b,
                    (Judged::Valid(_), _) | (_, Judged::Valid(_)) => false,
                    // Two unrendered values: only the same text is known to be equal.
                    _ => rv != lv,
                };
                if !differs {
                    // Equal, or a request above the limit: RES001's, not a QoS matter.
                    continue;
                }
                let hit = Hit::new(
                    Rule::GpuBurstableQos,
                    req.value.span,
                    format!(
                        "{subject} requests {resource} {rv} but is limited to {lv}: Burstable \
                         QoS pods are evicted before Guaranteed ones and excluded from the \
                         static CPU manager and topology alignment"
                    ),
                    format!("request {rv} != limit {lv}"),
                )
                .container(c);
                // With a measurement, both sides take the measured size, as the headroom
                // rules would write it; without, the request takes the limit.
                hits.push(match guaranteed_size(cx, w, c, resource, gpu) {
                    Some(size) => measured(hit, cx, c, resource, &size),
                    None => hit
                        .help(format!("set the {resource} request to the limit ({lv})"))
                        .with_fix(set_quantity(
                            &cx.target,
                            c,
                            Side::Requests,
                            resource,
                            lv,
                            scalar_style(req.value),
                            Applicability::Safe,
                        )),
                });
            }
            (Some(req), None) => {
                let rv = req.value.text().unwrap_or_default();
                let size = guaranteed_size(cx, w, c, resource, gpu);
                // QOS001 sets this GPU container's measured memory already.
                if gpu && resource == "memory" && size.is_some() {
                    continue;
                }
                let hit = Hit::new(
                    Rule::GpuBurstableQos,
                    req.key.span,
                    format!(
                        "{subject} requests {resource} ({rv}) without a limit: Burstable QoS, \
                         evicted before Guaranteed pods and excluded from the static CPU manager"
                    ),
                    "request without a limit".into(),
                )
                .container(c);
                if let Some(size) = size {
                    hits.push(measured(hit, cx, c, resource, &size));
                    continue;
                }
                // Only a value known to be a real request is copied into a limit.
                let fix = positive(Some(req)).and_then(|_| {
                    set_quantity(
                        &cx.target,
                        c,
                        Side::Limits,
                        resource,
                        rv,
                        scalar_style(req.value),
                        Applicability::Unsafe,
                    )
                });
                hits.push(
                    hit.help(format!(
                        "add a {resource} limit equal to the request ({rv}); an unsafe fix \
                         (--unsafe-fixes): the container can then no longer use more than it requests"
                    ))
                    .with_fix(fix),
                );
            }
            (None, Some(_)) => {} // The request defaults to the limit.
            // A GPU container's missing CPU or memory is QOS003's or QOS001's finding.
            (None, None) if !gpu => missing.push(resource),
            (None, None) => {}
        }
    }
    if missing.is_empty() {
        return;
    }
    let what = missing.join(" or ");
    // Measured: the missing limits can take the measured sizes (all of them, or none).
    let sizes: Option<Vec<(&str, GuaranteedSize)>> = missing
        .iter()
        .map(|r| guaranteed_size(cx, w, c, r, gpu).map(|s| (*r, s)))
        .collect();
    if let Some(sizes) = sizes {
        let mut recommended = super::headroom::Recommended::default();
        let mut fixes = Vec::new();
        let mut said = Vec::new();
        for (resource, size) in &sizes {
            let r = recommended_for(resource, &size.quantity);
            recommended.memory = recommended.memory.or(r.memory);
            recommended.cpu = recommended.cpu.or(r.cpu);
            fixes.push(set_guaranteed(cx, c, resource, &size.quantity));
            said.push(format!("{resource} {} ({})", size.quantity, size.measured));
        }
        hits.push(
            Hit::new(
                Rule::GpuBurstableQos,
                container_anchor(c),
                format!(
                    "{subject} has no {what} limit: QoS is decided for the whole pod, init \
                     containers and sidecars included, so the pod is not Guaranteed; set requests \
                     = limits to the measured {}",
                    said.join(", ")
                ),
                format!("no {what} limit"),
            )
            .container(c)
            .with_fix(super::headroom::merge_fixes(fixes))
            .recommended(recommended),
        );
        return;
    }
    hits.push(
        Hit::new(
            Rule::GpuBurstableQos,
            container_anchor(c),
            format!(
                "{subject} has no {what} limit: QoS is decided for the whole pod, init containers \
                 and sidecars included, so the pod is not Guaranteed; it is evicted before \
                 Guaranteed pods and its GPU container gets no exclusive CPUs. Not fixed \
                 automatically: there is no value to copy, and gpulint does not guess a size"
            ),
            format!("no {what} limit"),
        )
        .help(format!(
            "set {what} limits on {} (requests default to them), sized for what it uses",
            who(c)
        ))
        .container(c),
    );
}

/// QOS002 with a measurement: requests = limits at the measured size, said in the message and
/// carried in `recommended`, so the message, the JSON and the fix give one value.
fn measured(hit: Hit, cx: &Context, c: &Container, resource: &str, size: &GuaranteedSize) -> Hit {
    let message = format!(
        "{}; {}: set {resource} requests = limits to {}",
        hit.message, size.measured, size.quantity
    );
    Hit { message, ..hit }
        .with_fix(set_guaranteed(cx, c, resource, &size.quantity))
        .recommended(recommended_for(resource, &size.quantity))
}

/// RES001: a request above its limit. Extended resources (names with a `/`) must have requests
/// equal to limits, which GPU002 checks for GPUs.
fn check_request_above_limit(cx: &Context, w: &Workload, c: &Container, hits: &mut Vec<Hit>) {
    let r = &c.resources;
    for req in r.requests.entries.iter().filter(|q| !q.name.contains('/')) {
        let Some(lim) = r.limits.get(req.name) else {
            continue;
        };
        let (Judged::Valid(a), Judged::Valid(b)) = (judge(req.value), judge(lim.value)) else {
            continue;
        };
        if a <= b {
            continue;
        }
        let (name, rv, lv) = (
            req.name,
            req.value.text().unwrap_or_default(),
            lim.value.text().unwrap_or_default(),
        );
        let measured = super::headroom::measured_quantity(cx, w, c, req.name);
        let raised = raised_limit(req, a, measured.as_ref());
        let from_measurement = measured.as_ref().is_some_and(|(_, m)| *m > a);
        let hit = Hit::new(
            Rule::RequestAboveLimit,
            req.value.span,
            format!(
                "{} requests {name} {rv}, above its limit {lv}: the API server rejects the pod \
                     (a request must be less than or equal to its limit)",
                who(c)
            ),
            format!("request above limit {lv}"),
        )
        .help(if from_measurement {
            format!("raise the {name} limit to {raised}, the measured recommendation")
        } else {
            format!(
                "raise the {name} limit to {raised}: the request is what the container was \
                     sized for, so it is never lowered"
            )
        })
        .container(c)
        .with_fix(set_quantity(
            &cx.target,
            c,
            Side::Limits,
            name,
            &raised,
            scalar_style(lim.value),
            Applicability::Safe,
        ));
        hits.push(if from_measurement {
            hit.recommended(recommended_for(name, &raised))
        } else {
            hit
        });
    }
}

/// The limit RES001's fix writes: the measured recommendation when there is one above the
/// request, else the request itself, so the fix never lowers the request.
fn raised_limit(
    request: &ResourceEntry,
    value: Quantity,
    measured: Option<&(String, Quantity)>,
) -> String {
    match measured {
        Some((text, m)) if *m > value => text.clone(),
        _ => request.value.text().unwrap_or_default().to_string(),
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

    /// A GPU pod: the GPU container is Guaranteed; `others` are the pod's other containers.
    fn gpu_pod(others: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n{others}      containers:\n      - name: vllm\n        resources:\n          limits: {{nvidia.com/gpu: 1, cpu: 8, memory: 64Gi}}\n"
        )
    }

    #[test]
    fn a_sidecar_without_resources_makes_the_gpu_pod_burstable() {
        let text = gpu_pod("")
            + "      - name: routing-proxy\n        image: envoy\n        resources: {}\n";
        assert_eq!(rules_hit(&text), ["QOS002 resources"]);
        let text = gpu_pod("") + "      - name: routing-proxy\n        image: envoy\n";
        assert_eq!(
            rules_hit(&text),
            ["QOS002 routing-proxy"],
            "no resources at all"
        );
    }

    #[test]
    fn init_containers_and_native_sidecars_count() {
        let only_storage = "      initContainers:\n      - name: fetch-model\n        resources:\n          limits: {ephemeral-storage: 20Gi}\n";
        assert_eq!(rules_hit(&gpu_pod(only_storage)), ["QOS002 resources"]);
        let sidecar = "      initContainers:\n      - name: log-shipper\n        restartPolicy: Always\n        resources:\n          requests: {cpu: 100m, memory: 64Mi}\n          limits: {cpu: 500m, memory: 64Mi}\n";
        assert_eq!(rules_hit(&gpu_pod(sidecar)), ["QOS002 100m"]);
        let guaranteed = "      initContainers:\n      - name: fetch-model\n        resources:\n          limits: {cpu: 1, memory: 1Gi}\n";
        assert_eq!(rules_hit(&gpu_pod(guaranteed)), Vec::<String>::new());
    }

    #[test]
    fn sidecar_messages_say_why_there_is_no_fix() {
        use crate::rules::test_support::run;
        let text = gpu_pod("")
            + "      - name: routing-proxy\n        resources:\n          limits: {cpu: 1}\n";
        let hits = run(&text, &Default::default(), false);
        assert_eq!(hits.len(), 1, "{hits:?}");
        let message = &hits[0].2;
        assert!(
            message.contains("container `routing-proxy` of a GPU pod has no memory limit"),
            "{message}"
        );
        assert!(message.contains("does not guess a size"), "{message}");
        let sidecar = "      initContainers:\n      - name: log-shipper\n        restartPolicy: Always\n        resources: {}\n";
        let hits = run(&gpu_pod(sidecar), &Default::default(), false);
        assert!(
            hits[0].2.starts_with(
                "sidecar container `log-shipper` of a GPU pod has no cpu or memory limit"
            ),
            "{hits:?}"
        );
    }

    #[test]
    fn pods_without_gpus_and_ephemeral_containers_are_not_judged() {
        let cpu_pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n  - name: proxy\n    resources: {}\n";
        assert_eq!(rules_hit(cpu_pod), Vec::<String>::new());
        let text = gpu_pod("") + "      ephemeralContainers:\n      - name: debug\n";
        assert_eq!(rules_hit(&text), Vec::<String>::new());
    }

    #[test]
    fn pod_level_resources_decide_for_the_other_containers() {
        let pod_level = "      resources:\n        limits: {cpu: 10, memory: 80Gi}\n";
        let text = gpu_pod(pod_level) + "      - name: routing-proxy\n";
        assert_eq!(rules_hit(&text), Vec::<String>::new());
    }

    #[test]
    fn a_request_above_its_limit_is_res001_not_qos002() {
        let hits = rules_hit(&deployment(
            "          requests: {cpu: 8, memory: 16Gi}\n          limits: {nvidia.com/gpu: 1, cpu: 8, memory: 8Gi}\n",
        ));
        assert_eq!(hits, ["RES001 16Gi"]);
        // Any container: the API server rejects every pod with one.
        let cpu_only = deployment("          requests: {cpu: 2}\n          limits: {cpu: 1}\n");
        assert_eq!(rules_hit(&cpu_only), ["RES001 2"]);
        let equal =
            deployment("          requests: {memory: 1Gi}\n          limits: {memory: 1024Mi}\n");
        assert_eq!(rules_hit(&equal), Vec::<String>::new());
    }
}
