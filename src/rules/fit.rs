//! FIT001: a pod that fits on no node of the cluster. With measurements that list the nodes
//! (the snapshot's `nodes`, from kube-state-metrics), each pod set's per-pod requests (CPU,
//! memory, GPU resources) are compared with the allocatable resources of every node its
//! `nodeSelector` and required node affinity allow.
//!
//! A selector key that no measured node carries is not judged (kube-state-metrics exports only
//! the labels its allowlist names): it narrows nothing. A node without a GPU resource has none
//! of it; a node without `cpu` or `memory` allocatable is not judged on it.

use super::{container_anchor, Context, Hit, Rule};
use crate::k8s::gpu::GpuName;
use crate::k8s::kueue::Requirement;
use crate::k8s::podsets::{pod_demand, pod_sets, PodCount};
use crate::k8s::workload::Workload;
use crate::metrics::mig;
use crate::metrics::nodes::NodeInfo;
use crate::quantity::Quantity;
use crate::source::yaml::Node;

use super::kueue::show;

/// Whether the pod may run on `node`: its nodeSelector and required node affinity, with keys
/// no measured node carries left out.
pub(crate) fn allowed(pod: &Node, node: &NodeInfo, known_key: &dyn Fn(&str) -> bool) -> bool {
    let selector_ok = pod
        .get("nodeSelector")
        .and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e.key.text()?, e.value.text()?)))
        .filter(|(k, _)| known_key(k))
        .all(|(k, v)| node.label(k) == Some(v));
    let terms = pod
        .get_path(&[
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ])
        .and_then(Node::as_seq)
        .unwrap_or_default();
    let term_ok = |term: &Node| {
        term.get("matchExpressions")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Requirement::read)
            .filter(|r| known_key(&r.key))
            .all(|r| {
                r.matches(|k| Some(node.label(k).map(str::to_string)))
                    .unwrap_or(true)
            })
    };
    selector_ok && (terms.is_empty() || terms.iter().any(term_ok))
}

/// The selector, for people: `nvidia.com/gpu.product=NVIDIA-L4`.
fn describe(pod: &Node) -> String {
    let pairs: Vec<String> = pod
        .get("nodeSelector")
        .and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some(format!("{}={}", e.key.text()?, e.value.text()?)))
        .collect();
    let affinity = pod
        .get_path(&[
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
        ])
        .is_some();
    match (pairs.is_empty(), affinity) {
        (true, false) => "any node".into(),
        (true, true) => "its required node affinity".into(),
        (false, false) => pairs.join(", "),
        (false, true) => format!("{} and its required node affinity", pairs.join(", ")),
    }
}

/// Why no node offers MIG resource `resource` at all, from the MIG table: the GPU models that
/// have the profile, the models of the nodes the pod may run on (their
/// `nvidia.com/gpu.product`) and the MIG resources those nodes offer, and the profile of the
/// same compute size on the nodes' model. `None` for a resource that is not a MIG profile, or
/// one some node offers.
fn mig_cause(resource: &str, nodes: &[&NodeInfo]) -> Option<String> {
    let profile = resource.strip_prefix("nvidia.com/mig-")?;
    let offered = |n: &NodeInfo, r: &str| n.allocatable(r).is_some_and(|q| !q.is_zero());
    if nodes.iter().any(|n| offered(n, resource)) {
        return None;
    }
    let owners: Vec<&str> = mig::models_offering(profile)
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    let mut models: Vec<&mig::Model> = Vec::new();
    for m in nodes
        .iter()
        .filter_map(|n| n.label("nvidia.com/gpu.product"))
        .filter_map(mig::model_of)
    {
        if !models.iter().any(|x| x.name == m.name) {
            models.push(m);
        }
    }
    let mut on_nodes: Vec<&str> = nodes
        .iter()
        .flat_map(|n| n.allocatable.keys())
        .map(String::as_str)
        .filter(|r| r.starts_with("nvidia.com/mig-"))
        .filter(|r| nodes.iter().any(|n| offered(n, r)))
        .collect();
    on_nodes.sort_unstable();
    on_nodes.dedup();
    let whose = match owners.as_slice() {
        [] => format!("`{profile}` is in no GPU model's MIG table"),
        _ => format!("`{profile}` is a MIG profile of the {}", owners.join(", ")),
    };
    let nodes_are = if models.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
        format!(
            "; the nodes it may run on that name their GPU (`nvidia.com/gpu.product`) have {}",
            names.join(", ")
        )
    };
    let they_offer = if on_nodes.is_empty() {
        "; they offer no MIG resource (not partitioned, or the `single` strategy)".to_string()
    } else {
        format!(
            "; they offer {}",
            on_nodes
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // The profile with the same compute slices on the nodes' model, when they have one.
    let compute = profile.split_once("g.").map(|(g, _)| g);
    let same_compute: Vec<String> = models
        .iter()
        .filter(|m| !owners.contains(&m.name.as_str()))
        .flat_map(|m| &m.profiles)
        .filter(|p| compute.is_some_and(|g| p.name.split_once("g.").map(|(x, _)| x) == Some(g)))
        .map(|p| format!("`nvidia.com/mig-{}`", p.name))
        .collect();
    let partitioned = models.iter().any(|m| owners.contains(&m.name.as_str()));
    let instead = match same_compute.as_slice() {
        _ if partitioned => {
            ": their GPUs have the profile but are not partitioned with it (the MIG manager's `nvidia.com/mig.config`)".to_string()
        }
        [] => String::new(),
        some => format!(": request {} instead", some.join(" or ")),
    };
    Some(format!("{whose}{nodes_are}{they_offer}{instead}"))
}

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    // The pod's own cluster's nodes: another cluster's pool says nothing about where it lands.
    let Some(nodes) = cx
        .usage
        .map(|u| u.nodes_of(cx.cluster))
        .filter(|n| !n.is_empty())
    else {
        return;
    };
    let known_key = |k: &str| nodes.iter().any(|n| n.has_label_key(k));
    for set in pod_sets(w) {
        if set.count == PodCount::Template || set.count == PodCount::Known(0) {
            continue;
        }
        let demand = pod_demand(w, &set);
        let asks: Vec<(&String, Quantity)> = demand
            .resources
            .iter()
            .filter(|(r, q)| {
                let judged = r.as_str() == "cpu"
                    || r.as_str() == "memory"
                    || cx.gpu_names.classify(r) == GpuName::Known;
                judged && !q.is_zero() && !demand.unknown.contains(*r)
            })
            .map(|(r, q)| (r, *q))
            .collect();
        if asks.is_empty() {
            continue;
        }
        let containers: Vec<_> = set
            .containers
            .iter()
            .filter_map(|&i| w.containers.get(i))
            .collect();
        let Some(pod) = containers
            .iter()
            .find_map(|c| c.pod)
            .and_then(|p| w.pods.get(p))
            .map(|p| p.spec)
        else {
            continue;
        };
        let Some(first) = containers.first() else {
            continue;
        };
        let candidates: Vec<&NodeInfo> = nodes
            .iter()
            .copied()
            .filter(|n| allowed(pod, n, &known_key))
            .collect();
        let what = format!(
            "pod set `{}` of {} `{}`",
            set.name,
            w.object.id.kind,
            w.object.id.name.as_deref().unwrap_or("<unnamed>")
        );
        if candidates.is_empty() {
            hits.push(
                Hit::new(
                    Rule::NoNodeFits,
                    pod.entry("nodeSelector")
                        .map_or_else(|| container_anchor(first), |e| e.key.span),
                    format!(
                        "no node fits {what}: none of the {} measured nodes matches {}",
                        nodes.len(),
                        describe(pod)
                    ),
                    "no node matches".into(),
                )
                .help("select labels that nodes of the cluster carry"),
            );
            continue;
        }
        // Per resource: the largest allocatable among the allowed nodes.
        let alloc = |n: &NodeInfo, r: &str| -> Option<Quantity> {
            match n.allocatable(r) {
                Some(q) => Some(q),
                // No GPU resource on the node: none of it. No cpu/memory figure: not judged.
                None if cx.gpu_names.classify(r) == GpuName::Known => Some(Quantity::ZERO),
                None => None,
            }
        };
        let mut reported = false;
        for (resource, need) in &asks {
            let best = candidates
                .iter()
                .map(|n| (n, alloc(n, resource)))
                .try_fold(None::<(&NodeInfo, Quantity)>, |best, (n, q)| {
                    let q = q?;
                    Some(match best {
                        Some((_, b)) if b >= q => best,
                        _ => Some((*n, q)),
                    })
                })
                .flatten();
            let Some((node, most)) = best else { continue };
            if *need <= most {
                continue;
            }
            let anchor = containers
                .iter()
                .find(|c| c.resources.names().contains(&resource.as_str()))
                .map_or_else(|| container_anchor(first), |c| container_anchor(c));
            hits.push(
                Hit::new(
                    Rule::NoNodeFits,
                    anchor,
                    format!(
                        "no node fits {what}: asks {} {resource} per pod; the largest node it may run on ({}) has {} (`{}`)",
                        show(resource, *need),
                        describe(pod),
                        show(resource, most),
                        node.name
                    ),
                    format!("no node has {} {resource}", show(resource, *need)),
                )
                .help(
                    mig_cause(resource, &candidates).unwrap_or_else(|| {
                        "ask for less per pod (more pods, smaller shards), or select a larger node pool".into()
                    }),
                ),
            );
            reported = true;
            break;
        }
        if reported {
            continue;
        }
        let fits_one = candidates.iter().any(|n| {
            asks.iter()
                .all(|(r, need)| alloc(n, r).is_none_or(|have| *need <= have))
        });
        if !fits_one {
            let asked: Vec<String> = asks
                .iter()
                .map(|(r, q)| format!("{} {r}", show(r, *q)))
                .collect();
            hits.push(Hit::new(
                Rule::NoNodeFits,
                container_anchor(first),
                format!(
                    "no node fits {what}: asks {} per pod, and no node it may run on ({}) has all of them at once",
                    asked.join(", "),
                    describe(pod)
                ),
                "no node has all of it".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::catalog::Catalog;
    use crate::k8s::gpu::GpuNames;
    use crate::k8s::workload::objects;
    use crate::metrics::recommend::Policy;
    use crate::metrics::usage::UsageSet;
    use crate::rules::RepoFacts;
    use crate::source::yaml::Stream;

    fn node(name: &str, product: &str, gpus: &str, cpu: &str, memory: &str) -> NodeInfo {
        NodeInfo {
            cluster: None,
            name: name.into(),
            // As kube-state-metrics exports it (sanitized key).
            labels: [("nvidia_com_gpu_product".to_string(), product.to_string())].into(),
            allocatable: [
                ("nvidia.com/gpu".to_string(), gpus.to_string()),
                ("cpu".to_string(), cpu.to_string()),
                ("memory".to_string(), memory.to_string()),
            ]
            .into(),
        }
    }

    fn hits(text: &str) -> Vec<(String, String)> {
        hits_on(
            vec![
                node("h100-1", "NVIDIA-H100-80GB-HBM3", "4", "95500m", "900Gi"),
                node("a100-1", "NVIDIA-A100-SXM4-80GB", "8", "95500m", "1200Gi"),
            ],
            text,
        )
    }

    fn hits_on(nodes: Vec<NodeInfo>, text: &str) -> Vec<(String, String)> {
        let usage = UsageSet {
            nodes,
            ..UsageSet::default()
        };
        let stream = Stream::parse(text);
        let names = GpuNames::default();
        let facts = RepoFacts::default();
        let policy = Policy::default();
        let models = crate::k8s::model::Catalogue::default();
        let cx = Context {
            models: &models,
            cluster: None,
            gpu_names: &names,
            facts: &facts,
            kueue_required: false,
            target: crate::edit::resources::Target::local(text, 0),
            usage: Some(&usage),
            policy: &policy,
            default_namespace: "default",
        };
        let mut out = Vec::new();
        for o in objects(&stream.documents[0]) {
            let w = Workload::of(o, &Catalog::builtin()).expect("a workload");
            let mut h = Vec::new();
            check(&cx, &w, &mut h);
            out.extend(
                h.into_iter()
                    .map(|h| (text[h.span.range()].to_string(), h.message)),
            );
        }
        out
    }

    fn job(selector: &str, gpus: u32, memory: &str) -> String {
        format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train}}\nspec:\n  template:\n    spec:\n      nodeSelector: {{{selector}}}\n      containers:\n      - name: t\n        resources:\n          limits: {{nvidia.com/gpu: {gpus}, cpu: 8, memory: {memory}}}\n")
    }

    #[test]
    fn more_gpus_than_the_largest_allowed_node() {
        let h = hits(&job(
            "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3",
            8,
            "64Gi",
        ));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "resources");
        assert!(
            h[0].1.contains("asks 8 nvidia.com/gpu per pod; the largest node it may run on (nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3) has 4 (`h100-1`)"),
            "{}",
            h[0].1
        );
        // Without the selector, the A100 node has 8.
        assert!(hits(&job("", 8, "64Gi")).is_empty());
        assert!(hits(&job(
            "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3",
            4,
            "64Gi"
        ))
        .is_empty());
    }

    #[test]
    fn memory_and_unmatched_selectors() {
        let h = hits(&job("", 1, "1500Gi"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(
            h[0].1.contains("asks 1500Gi memory per pod")
                && h[0].1.contains("has 1200Gi (`a100-1`)"),
            "{}",
            h[0].1
        );
        let h = hits(&job("nvidia.com/gpu.product: NVIDIA-L4", 1, "8Gi"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "nodeSelector");
        assert!(
            h[0].1
                .contains("none of the 2 measured nodes matches nvidia.com/gpu.product=NVIDIA-L4"),
            "{}",
            h[0].1
        );
        // A label no node carries (not exported): not judged.
        assert!(hits(&job("team: research", 1, "8Gi")).is_empty());
    }

    #[test]
    fn required_affinity_narrows_the_nodes() {
        // Any node: the A100 node has 8 GPUs and 1000Gi.
        assert!(hits(&job("", 8, "1000Gi")).is_empty());
        // Required affinity to the H100 node, which has 900Gi.
        let both = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: t\n    resources:\n      limits: {nvidia.com/gpu: 4, cpu: 8, memory: 1000Gi}\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}\n";
        let h = hits(both);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h[0].1.contains("asks 1000Gi memory per pod"), "{}", h[0].1);
    }

    #[test]
    fn each_resource_fits_somewhere_but_no_node_has_all() {
        let nodes = vec![
            node("gpu-rich", "NVIDIA-A100-SXM4-80GB", "8", "95500m", "100Gi"),
            node("mem-rich", "NVIDIA-A100-SXM4-80GB", "1", "95500m", "1000Gi"),
        ];
        let h = hits_on(nodes.clone(), &job("", 8, "500Gi"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(
            h[0].1.contains("asks 8 cpu, 500Gi memory, 8 nvidia.com/gpu per pod, and no node it may run on (any node) has all of them at once"),
            "{}",
            h[0].1
        );
        assert!(hits_on(nodes, &job("", 8, "100Gi")).is_empty());
    }
}
