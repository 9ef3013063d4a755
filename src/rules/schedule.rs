//! SCH001–SCH002: placement checks that depend on how a cluster is set up; off by default.

use super::kueue::admitting_flavors;
use super::{is_gpu_container, Context, Hit, Rule};
use crate::k8s::gpu::GpuName;
use crate::k8s::workload::Workload;
use crate::source::yaml::Node;

/// Node labels that name the GPU model (NVIDIA GPU feature discovery, GKE, AKS/EKS conventions).
const GPU_PRODUCT_LABELS: &[&str] = &[
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.family",
    "nvidia.com/gpu.machine",
    "cloud.google.com/gke-accelerator",
    "accelerator",
    "node.kubernetes.io/instance-type",
    "amd.com/gpu.product-name",
    "gpu.intel.com/device-id.0300-56c0.present",
];

/// Whether a toleration tolerates a GPU node taint: a GPU key, or every key (`Exists`).
fn is_gpu_toleration(key: Option<&str>, operator: Option<&str>) -> bool {
    match key {
        None => operator == Some("Exists"),
        Some(key) => key.contains("gpu") || key.contains("accelerator"),
    }
}

fn tolerates_gpu_taint(spec: &Node) -> bool {
    spec.get("tolerations")
        .and_then(Node::as_seq)
        .is_some_and(|list| {
            list.iter()
                .any(|t| is_gpu_toleration(t.get_str("key"), t.get_str("operator")))
        })
}

/// The Kueue flavors every GPU of the pod is admitted to, when each of them (declared in the
/// repository) adds a GPU toleration to the pods it admits: Kueue injects a flavor's
/// `tolerations` at admission.
fn flavors_tolerating<'a>(cx: &'a Context, w: &Workload, pod: usize) -> Option<Vec<&'a str>> {
    let facts = &cx.facts.kueue;
    flavors_all(cx, w, pod, |flavor| {
        facts.flavor_tolerations.get(flavor).is_some_and(|list| {
            list.iter()
                .any(|t| is_gpu_toleration(t.key.as_deref(), t.operator.as_deref()))
        })
    })
}

/// The Kueue flavors every GPU of the pod is admitted to, when each of them selects a GPU
/// product with its `nodeLabels`: Kueue adds them to the pod's node selector at admission.
fn flavors_selecting<'a>(cx: &'a Context, w: &Workload, pod: usize) -> Option<Vec<&'a str>> {
    let facts = &cx.facts.kueue;
    flavors_all(cx, w, pod, |flavor| {
        facts.flavors.get(flavor).is_some_and(|labels| {
            labels
                .keys()
                .any(|k| GPU_PRODUCT_LABELS.contains(&k.as_str()))
        })
    })
}

/// The flavors every GPU resource of the pod is admitted to, when each passes `test`.
fn flavors_all<'a>(
    cx: &'a Context,
    w: &Workload,
    pod: usize,
    test: impl Fn(&str) -> bool,
) -> Option<Vec<&'a str>> {
    let mut all = Vec::new();
    let resources = w
        .containers
        .iter()
        .filter(|c| c.pod == Some(pod))
        .flat_map(|c| {
            c.resources
                .limits
                .entries
                .iter()
                .chain(&c.resources.requests.entries)
        })
        .filter(|q| cx.gpu_names.classify(q.name) == GpuName::Known);
    for q in resources {
        for flavor in admitting_flavors(cx, w, q.name)? {
            if !test(flavor) {
                return None;
            }
            if !all.contains(&flavor) {
                all.push(flavor);
            }
        }
    }
    (!all.is_empty()).then_some(all)
}

fn selects_gpu_product(spec: &Node) -> bool {
    let in_selector = spec
        .get("nodeSelector")
        .and_then(Node::as_map)
        .is_some_and(|m| {
            m.iter().any(|e| {
                e.key
                    .text()
                    .is_some_and(|k| GPU_PRODUCT_LABELS.contains(&k))
            })
        });
    let in_affinity = spec
        .get_path(&["affinity", "nodeAffinity"])
        .is_some_and(|a| mentions_label(a, 0));
    in_selector || in_affinity
}

fn mentions_label(node: &Node, depth: usize) -> bool {
    if depth > 16 {
        return false;
    }
    if node
        .get_str("key")
        .is_some_and(|k| GPU_PRODUCT_LABELS.contains(&k))
    {
        return true;
    }
    match (node.as_map(), node.as_seq()) {
        (Some(m), _) => m.iter().any(|e| mentions_label(&e.value, depth + 1)),
        (_, Some(s)) => s.iter().any(|n| mentions_label(n, depth + 1)),
        _ => false,
    }
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    for (index, pod) in w.pods.iter().enumerate() {
        if !w
            .containers
            .iter()
            .any(|c| c.pod == Some(index) && is_gpu_container(cx, c))
        {
            continue;
        }
        let span = pod
            .spec
            .as_map()
            .and_then(|m| m.first())
            .map(|e| e.key.span)
            .unwrap_or(pod.spec.span.at_start());
        if !tolerates_gpu_taint(pod.spec) && flavors_tolerating(cx, w, index).is_none() {
            hits.push(
                Hit::new(
                    Rule::GpuTolerationMissing,
                    span,
                    "GPU pod has no toleration for a GPU node taint (e.g. `nvidia.com/gpu:NoSchedule`): it cannot be scheduled on tainted GPU nodes".into(),
                    "no GPU toleration".into(),
                )
                .help("add `tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]`"),
            );
        }
        if !selects_gpu_product(pod.spec) && flavors_selecting(cx, w, index).is_none() {
            hits.push(
                Hit::new(
                    Rule::GpuNodeSelectorMissing,
                    span,
                    "GPU pod does not select a GPU product (nodeSelector or nodeAffinity on e.g. `nvidia.com/gpu.product`): it may land on any GPU model".into(),
                    "no GPU product selector".into(),
                )
                .help("add `nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}` or the cloud's accelerator label"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::rules_hit_all as rules_hit;

    #[test]
    fn placement_rules_fire_only_when_missing() {
        let bare = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}\n";
        assert_eq!(rules_hit(bare), ["SCH001 containers", "SCH002 containers"]);
        let placed = bare.replace(
            "spec:\n",
            "spec:\n  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n",
        );
        assert_eq!(rules_hit(&placed), Vec::<String>::new());
    }
}
