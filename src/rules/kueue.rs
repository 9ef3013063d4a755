//! KUE001–KUE008: will Kueue (or KAI) ever admit the workload? KUE001 asks for a queue where
//! the repo uses Kueue; KUE002–KUE007 follow the queue label to its LocalQueue, ClusterQueue
//! and flavors and check what Kueue checks at admission; KUE008 checks KAI queue labels.
//! The objects are gathered across the whole run first (`RepoFacts::kueue`).

use std::collections::BTreeMap;

use super::{container_anchor, is_gpu_container, Context, Hit, Rule};
use crate::k8s::gpu::GpuName;
use crate::k8s::kueue::{ClusterQueue, LocalQueue, Requirement, Selector, QUEUE_LABEL};
use crate::k8s::podsets::{pod_demand, pod_sets, PodCount};
use crate::k8s::workload::Workload;
use crate::quantity::{format_bytes_binary, format_millicores, Quantity};
use crate::source::yaml::{Node, Span};

/// The label KAI scheduler reads a workload's queue from.
pub const KAI_QUEUE_LABEL: &str = "kai.scheduler/queue";
/// Schedulers other than the default one: their pods are not Kueue workloads.
const OTHER_SCHEDULERS: &[&str] = &["kai-scheduler", "volcano"];

/// Long-running kinds Kueue also admits through its integrations (besides batch kinds).
const KUEUE_SERVING_KINDS: &[&str] = &["RayCluster", "LeaderWorkerSet"];

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    if is_local_queue(w) {
        check_local_queue(cx, w, hits);
        return;
    }
    check_kai_queue(cx, w, hits);
    if other_scheduler(w) {
        return;
    }
    check_queue_name_missing(cx, w, hits);
    check_admission(cx, w, hits);
}

/// Pods that KAI scheduler or Volcano place: Kueue does not queue them.
fn other_scheduler(w: &Workload) -> bool {
    let scheduler = w.pods.iter().any(|p| {
        p.spec
            .get_str("schedulerName")
            .is_some_and(|s| OTHER_SCHEDULERS.contains(&s))
    });
    let kai_label = kai_queue_label(w).is_some();
    scheduler || kai_label || w.object.id.api_version.starts_with("batch.volcano.sh/")
}

fn label_node<'a>(metadata: Option<&'a Node>, key: &str) -> Option<&'a Node> {
    metadata?.get("labels")?.get(key)
}

/// The `kai.scheduler/queue` label: on the object or a pod template.
fn kai_queue_label<'a>(w: &Workload<'a>) -> Option<&'a Node> {
    label_node(w.object.metadata(), KAI_QUEUE_LABEL).or_else(|| {
        w.pods
            .iter()
            .find_map(|p| label_node(p.template_metadata, KAI_QUEUE_LABEL))
    })
}

/// The queue-name label Kueue reads: on the object, or on a CronJob's Job template.
fn queue_label<'a>(w: &Workload<'a>) -> Option<&'a Node> {
    label_node(w.object.metadata(), QUEUE_LABEL).or_else(|| {
        label_node(
            w.object.node.get_path(&["spec", "jobTemplate", "metadata"]),
            QUEUE_LABEL,
        )
    })
}

fn check_queue_name_missing(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let queued = w.batch || KUEUE_SERVING_KINDS.contains(&w.object.id.kind.as_str());
    if !queued || !w.containers.iter().any(|c| is_gpu_container(cx, c)) {
        return;
    }
    let namespace = w.object.id.namespace.as_deref().unwrap_or("default");
    let queues = cx.facts.local_queues.get(namespace);
    if queues.is_none() && !cx.kueue_required {
        return;
    }
    // Kueue (LocalQueueDefaulting, on by default since v0.12) puts unlabelled workloads into a
    // LocalQueue named `default` when the namespace has one.
    if queues.is_some_and(|q| q.contains("default")) {
        return;
    }
    // CronJobs carry the label on the Job template; Kueue reads it from the Job.
    let labelled = w.object.label(QUEUE_LABEL).is_some()
        || w.object
            .node
            .get_path(&["spec", "jobTemplate", "metadata", "labels"])
            .and_then(|l| l.get_str(QUEUE_LABEL))
            .is_some();
    if labelled {
        return;
    }
    let span = w
        .object
        .node
        .entry("metadata")
        .map(|e| e.key.span)
        .or_else(|| w.object.node.entry("kind").map(|e| e.value.span))
        .unwrap_or(w.object.node.span.at_start());
    let why = match queues {
        Some(q) => format!(
            "the repo defines LocalQueue {} in namespace `{namespace}`",
            q.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "the config requires Kueue (`kueue: {required: true}`)".to_string(),
    };
    hits.push(
        Hit::new(
            Rule::KueueQueueNameMissing,
            span,
            format!(
                "GPU {} `{}` has no `{QUEUE_LABEL}` label but {why}: it bypasses quota and fair sharing",
                w.object.id.kind,
                w.object.id.name.as_deref().unwrap_or("<unnamed>")
            ),
            "no queue-name label".into(),
        )
        .help(format!("add `metadata.labels.{QUEUE_LABEL}: <queue>`")),
    );
}

fn is_local_queue(w: &Workload) -> bool {
    w.object.id.kind == "LocalQueue" && w.object.id.api_version.starts_with("kueue.x-k8s.io/")
}

fn name_of<'a>(w: &'a Workload) -> &'a str {
    w.object.id.name.as_deref().unwrap_or("<unnamed>")
}

pub(crate) use crate::source::decode::did_you_mean;

/// How a finding names the right object: `; did you mean `x`? ` before the consequence, or the
/// list of candidates in parentheses and a colon.
fn hint(name: &str, candidates: &[&str], what: &str) -> String {
    match did_you_mean(name, candidates.iter().copied()) {
        Some(m) => format!("; did you mean `{m}`?"),
        None => format!(" ({what}: {}):", backticked(candidates.iter().copied())),
    }
}

fn backticked<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// A quantity as people write it for this resource.
pub(crate) fn show(resource: &str, q: Quantity) -> String {
    let bytes = resource == "memory" || resource.ends_with("storage");
    match (bytes, resource == "cpu", q.as_whole_i128()) {
        (true, _, _) => q.ceil_bytes().map_or("?".into(), format_bytes_binary),
        (_, true, _) | (_, _, None) => q.millis_ceil().map_or("?".into(), format_millicores),
        (_, _, Some(n)) => n.to_string(),
    }
}

/// KUE003, KUE004: a LocalQueue whose ClusterQueue the repo does not define, or whose
/// namespace the ClusterQueue's `namespaceSelector` excludes.
fn check_local_queue(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let facts = &cx.facts.kueue;
    let Some(target) = w.object.node.get_path(&["spec", "clusterQueue"]) else {
        return;
    };
    let Some(cq_name) = target.text() else { return };
    let namespace = w
        .object
        .id
        .namespace
        .as_deref()
        .unwrap_or(cx.default_namespace);
    let Some(cq) = facts.cluster_queues.get(cq_name) else {
        // Only when the repo declares ClusterQueues: else they live elsewhere.
        if facts.cluster_queues.is_empty() {
            return;
        }
        let names: Vec<&str> = facts.cluster_queues.keys().map(String::as_str).collect();
        let hint = hint(cq_name, &names, "ClusterQueues in the repo");
        hits.push(Hit::new(
            Rule::KueueClusterQueueUnknown,
            target.span,
            format!(
                "LocalQueue `{namespace}/{}` points to ClusterQueue `{cq_name}`, which the repo does not define{hint} its workloads are never admitted",
                name_of(w)
            ),
            "no such ClusterQueue".into(),
        ));
        return;
    };
    let Some(selector) = &cq.namespace_selector else {
        return;
    };
    if selector.matches(|k| facts.namespace_label(namespace, k)) == Some(false) {
        hits.push(
            Hit::new(
                Rule::KueueNamespaceNotSelected,
                target.span,
                format!(
                    "ClusterQueue `{cq_name}` does not admit namespace `{namespace}`: its namespaceSelector {} does not match the namespace's labels {}; LocalQueue `{}` never gets a workload admitted",
                    describe_selector(selector),
                    describe_labels(facts.namespaces.get(namespace)),
                    name_of(w)
                ),
                "namespace not selected".into(),
            )
            .help(format!(
                "label namespace `{namespace}` to match, or point the LocalQueue at a ClusterQueue that selects it"
            )),
        );
    }
}

fn describe_selector(s: &Selector) -> String {
    let mut parts: Vec<String> = s
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    parts.extend(
        s.expressions
            .iter()
            .map(|r: &Requirement| format!("{} {} [{}]", r.key, r.operator, r.values.join(", "))),
    );
    format!("({})", parts.join(", "))
}

fn describe_labels(labels: Option<&BTreeMap<String, String>>) -> String {
    match labels {
        Some(l) if !l.is_empty() => format!(
            "({})",
            l.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(_) => "(none)".into(),
        None => "(not declared in the repo)".into(),
    }
}

/// KUE008: a `kai.scheduler/queue` label naming no KAI Queue, when the repo defines some.
fn check_kai_queue(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let queues = &cx.facts.kueue.kai_queues;
    let Some(label) = kai_queue_label(w) else {
        return;
    };
    let Some(name) = label.text() else { return };
    if queues.is_empty() || queues.contains(name) {
        return;
    }
    let names: Vec<&str> = queues.iter().map(String::as_str).collect();
    let hint = hint(name, &names, "KAI Queues in the repo");
    hits.push(Hit::new(
        Rule::KaiQueueUnknown,
        label.span,
        format!(
            "no KAI Queue `{name}` in the repo{hint} KAI scheduler leaves {} `{}` pending",
            w.object.id.kind,
            name_of(w)
        ),
        "no such KAI queue".into(),
    ));
}

/// What the workload asks Kueue for, per resource, and per pod set. Kueue admits a whole Job,
/// JobSet, Kubeflow job, Ray cluster or StatefulSet at once; a Deployment pod by pod; a
/// LeaderWorkerSet group by group.
struct Ask<'w> {
    /// Per resource: the total, or `None` when a count or quantity is unknown.
    total: BTreeMap<String, Option<Quantity>>,
    sets: Vec<SetAsk<'w>>,
}

struct SetAsk<'w> {
    name: String,
    /// Per resource: per pod × the pods Kueue admits together; `None` when unknown.
    resources: BTreeMap<String, Option<Quantity>>,
    /// The pod spec, for node selectors.
    pod: Option<&'w Node>,
    /// The pods Kueue admits together from this set; `None` when unknown.
    pods: Option<u64>,
    /// The first container asking for each resource, for anchors.
    anchors: BTreeMap<String, Span>,
}

fn ask<'w>(w: &Workload<'w>) -> Option<Ask<'w>> {
    let kind = w.object.id.kind.as_str();
    let per_pod = matches!(kind, "Deployment" | "ReplicaSet");
    // A LeaderWorkerSet's sets count every group: one group is the count over `replicas`.
    let groups = if kind == "LeaderWorkerSet" {
        w.object
            .node
            .get_path(&["spec", "replicas"])
            .and_then(Node::text)
            .map_or(Some(1), |t| t.trim().parse::<u64>().ok())
            .filter(|n| *n > 0)
    } else {
        Some(1)
    };
    let mut out = Ask {
        total: BTreeMap::new(),
        sets: Vec::new(),
    };
    for set in pod_sets(w) {
        let pods = match (&set.count, per_pod, groups) {
            (PodCount::Template, _, _) => return None,
            (_, true, _) => Some(1),
            (PodCount::Known(n), _, Some(g)) => Some(n / g),
            _ => None,
        };
        let demand = pod_demand(w, &set);
        let mut resources = BTreeMap::new();
        for name in &demand.unknown {
            resources.insert(name.clone(), None);
        }
        for (name, q) in &demand.resources {
            if q.is_zero() {
                continue;
            }
            let times = pods.and_then(|n| q.checked_mul_count(n));
            resources.entry(name.clone()).or_insert(times);
        }
        let mut anchors = BTreeMap::new();
        for &i in &set.containers {
            let Some(c) = w.containers.get(i) else {
                continue;
            };
            for name in c.resources.names() {
                anchors
                    .entry(name.to_string())
                    .or_insert_with(|| container_anchor(c));
            }
        }
        for (name, q) in &resources {
            let slot = out
                .total
                .entry(name.clone())
                .or_insert(Some(Quantity::ZERO));
            *slot = match (*slot, q) {
                (Some(a), Some(b)) => a.checked_add(*b),
                _ => None,
            };
        }
        let pod = set
            .containers
            .first()
            .and_then(|&i| w.containers.get(i))
            .and_then(|c| c.pod)
            .and_then(|p| w.pods.get(p))
            .map(|p| p.spec);
        out.sets.push(SetAsk {
            name: set.name,
            resources,
            pod,
            pods,
            anchors,
        });
    }
    Some(out)
}

/// KUE002, KUE005–KUE007: the queue label, followed to its ClusterQueue.
fn check_admission(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    let facts = &cx.facts.kueue;
    let Some(label) = queue_label(w) else { return };
    let Some(queue) = label.text() else { return };
    if facts.local_queues.is_empty() && !cx.kueue_required {
        return;
    }
    let namespace = w
        .object
        .id
        .namespace
        .as_deref()
        .unwrap_or(cx.default_namespace);
    let key = (namespace.to_string(), queue.to_string());
    let Some(local) = facts.local_queues.get(&key) else {
        let here: Vec<&str> = facts
            .queues_in(namespace)
            .map(|q| q.name.as_str())
            .collect();
        // The same name in another namespace: the workload's namespace is the likely mistake.
        let elsewhere: Vec<&str> = facts
            .local_queues
            .keys()
            .filter(|(ns, name)| name == queue && ns != namespace)
            .map(|(ns, _)| ns.as_str())
            .collect();
        let hint = if here.is_empty() && !elsewhere.is_empty() {
            format!(
                " (LocalQueue `{queue}` is in namespace {}):",
                backticked(elsewhere.iter().copied())
            )
        } else {
            hint(queue, &here, "LocalQueues there")
        };
        hits.push(
            Hit::new(
                Rule::KueueLocalQueueUnknown,
                label.span,
                format!(
                    "no LocalQueue `{queue}` in namespace `{namespace}`{hint} Kueue keeps {} `{}` suspended",
                    w.object.id.kind,
                    name_of(w)
                ),
                "no such LocalQueue".into(),
            )
            .help("name a LocalQueue of the workload's namespace"),
        );
        return;
    };
    let Some(cq) = local
        .cluster_queue
        .as_deref()
        .and_then(|c| facts.cluster_queues.get(c))
    else {
        return;
    };
    let Some(mut ask) = ask(w) else { return };
    // Resources Kueue's configuration excludes or transforms are not judged.
    let config = &facts.config;
    ask.total.retain(|r, _| config.counts(r));
    for set in &mut ask.sets {
        set.resources.retain(|r, _| config.counts(r));
    }
    // Kueue counts `pods` (one per pod) only when the ClusterQueue covers it.
    if cq.node.group_of("pods").is_some() {
        let mut total = Some(Quantity::ZERO);
        for set in &mut ask.sets {
            let n = set.pods.map(|n| Quantity::from(i128::from(n)));
            set.resources.insert("pods".into(), n);
            total = total.zip(n).and_then(|(a, b)| a.checked_add(b));
        }
        ask.total.insert("pods".into(), total);
    }
    if config.blocks_undeclared() {
        check_covered(w, local, cq, &ask, hits);
    }
    check_quota(cx, w, label.span, local, cq, &ask, hits);
    check_flavor_labels(cx, w, cq, &ask, hits);
}

/// The flavors Kueue may admit `resource` of the workload to: those of the group that covers
/// it in the ClusterQueue its queue-name label reaches. `None` when the repository does not
/// say (no label, LocalQueue or ClusterQueue here, or no group covering it).
pub(crate) fn admitting_flavors<'a>(
    cx: &'a Context,
    w: &Workload,
    resource: &str,
) -> Option<Vec<&'a str>> {
    let facts = &cx.facts.kueue;
    let queue = queue_label(w)?.text()?;
    let namespace = w
        .object
        .id
        .namespace
        .as_deref()
        .unwrap_or(cx.default_namespace);
    let local = facts
        .local_queues
        .get(&(namespace.to_string(), queue.to_string()))?;
    let cq = facts.cluster_queues.get(local.cluster_queue.as_deref()?)?;
    let group = cq.node.group_of(resource)?;
    Some(group.flavors.iter().map(|f| f.flavor.as_str()).collect())
}

/// KUE006: a requested resource no resource group of the ClusterQueue covers.
fn check_covered(
    w: &Workload,
    local: &LocalQueue,
    cq: &ClusterQueue,
    ask: &Ask,
    hits: &mut Vec<Hit>,
) {
    let covered: Vec<&str> = cq
        .node
        .groups
        .iter()
        .flat_map(|g| g.covered.iter().map(String::as_str))
        .collect();
    for resource in ask.total.keys() {
        // A misspelt name (`memroy`) is FLD001's: the pod is rejected before Kueue sees it.
        if cq.node.group_of(resource).is_some() || super::fields::invalid_resource_name(resource) {
            continue;
        }
        let Some((set, span)) = ask
            .sets
            .iter()
            .find_map(|s| Some((s, *s.anchors.get(resource)?)))
        else {
            continue;
        };
        hits.push(
            Hit::new(
                Rule::KueueResourceNotCovered,
                span,
                format!(
                    "{} `{}` (pod set `{}`) requests `{resource}`, which ClusterQueue `{}` (LocalQueue `{}/{}`) does not cover (it covers {}): Kueue never admits it",
                    w.object.id.kind,
                    name_of(w),
                    set.name,
                    cq.node.name,
                    local.namespace,
                    local.name,
                    backticked(covered.iter().copied())
                ),
                format!("`{resource}` not covered"),
            )
            .help(format!(
                "add `{resource}` to a resource group's coveredResources, or drop the request"
            )),
        );
    }
}

/// KUE005: more than the ClusterQueue can ever reach, with everything it may borrow.
fn check_quota(
    cx: &Context,
    w: &Workload,
    at: Span,
    local: &LocalQueue,
    cq: &ClusterQueue,
    ask: &Ask,
    hits: &mut Vec<Hit>,
) {
    let facts_reach =
        |flavor: &str, resource: &str| cx.facts.kueue.reachable(&cq.node.name, flavor, resource);
    for (resource, total) in &ask.total {
        let Some(group) = cq.node.group_of(resource) else {
            continue;
        };
        let per_flavor: Vec<(&str, Quantity)> = group
            .flavors
            .iter()
            .map(|f| (f.flavor.as_str(), facts_reach(&f.flavor, resource)))
            .collect();
        let Some(all) = per_flavor
            .iter()
            .try_fold(Quantity::ZERO, |a, (_, q)| a.checked_add(*q))
        else {
            continue;
        };
        let flavors = per_flavor
            .iter()
            .map(|(f, q)| format!("{f}: {}", show(resource, *q)))
            .collect::<Vec<_>>()
            .join(", ");
        let origin = format!("LocalQueue `{}/{}`", local.namespace, local.name);
        if let Some(total) = total.filter(|t| *t > all) {
            hits.push(
                Hit::new(
                    Rule::KueueQuotaNeverAdmits,
                    at,
                    format!(
                        "can never be admitted: {} `{}` asks {} {resource}, ClusterQueue `{}` ({origin}) can reach at most {} with all it may borrow ({flavors})",
                        w.object.id.kind,
                        name_of(w),
                        show(resource, total),
                        cq.node.name,
                        show(resource, all)
                    ),
                    format!("never fits the quota of `{}`", cq.node.name),
                )
                .help("ask for less, or raise the ClusterQueue's nominalQuota/borrowingLimit"),
            );
            continue;
        }
        // Kueue puts each pod set in one flavor: the set must fit the largest flavor.
        let Some((best_flavor, best)) = per_flavor.iter().max_by_key(|(_, q)| *q).copied() else {
            continue;
        };
        for set in &ask.sets {
            let Some(Some(need)) = set.resources.get(resource) else {
                continue;
            };
            if *need > best {
                hits.push(Hit::new(
                    Rule::KueueQuotaNeverAdmits,
                    at,
                    format!(
                        "can never be admitted: pod set `{}` of {} `{}` asks {} {resource} and Kueue puts a pod set in one flavor; the most ClusterQueue `{}` ({origin}) can reach in one is {} (`{best_flavor}`; {flavors})",
                        set.name,
                        w.object.id.kind,
                        name_of(w),
                        show(resource, *need),
                        cq.node.name,
                        show(resource, best)
                    ),
                    format!("never fits one flavor of `{}`", cq.node.name),
                )
                .help("ask for less per pod set, or raise one flavor's quota"));
                break;
            }
        }
    }
}

/// Why a flavor's node labels rule the pod out: the contradicting field, or `None`.
fn contradiction(pod: &Node, labels: &BTreeMap<String, String>) -> Option<(Span, String)> {
    if let Some(selector) = pod.get("nodeSelector").and_then(Node::as_map) {
        for e in selector {
            let (Some(k), Some(v)) = (e.key.text(), e.value.text()) else {
                continue;
            };
            if let Some(want) = labels.get(k).filter(|want| *want != v) {
                return Some((
                    e.key.span,
                    format!("nodeSelector `{k}: {v}` (flavor has `{k}: {want}`)"),
                ));
            }
        }
    }
    let terms_key = pod
        .get_path(&["affinity", "nodeAffinity"])
        .and_then(|a| a.entry("requiredDuringSchedulingIgnoredDuringExecution"));
    let terms = terms_key
        .and_then(|e| e.value.get("nodeSelectorTerms"))
        .and_then(Node::as_seq)
        .unwrap_or_default();
    // Terms are ORed: every term must be ruled out.
    let label = |k: &str| labels.get(k).map(|v| Some(v.clone()));
    let ruled_out = |term: &Node| {
        term.get("matchExpressions")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(Requirement::read)
            .any(|r| r.matches(label) == Some(false))
    };
    if !terms.is_empty() && terms.iter().all(ruled_out) {
        let span = terms_key.map_or(pod.span.at_start(), |e| e.key.span);
        return Some((span, "required node affinity".into()));
    }
    None
}

/// KUE007: the pod's node selector or required affinity contradicts the `nodeLabels` of every
/// flavor that covers its GPU resource.
fn check_flavor_labels(
    cx: &Context,
    w: &Workload,
    cq: &ClusterQueue,
    ask: &Ask,
    hits: &mut Vec<Hit>,
) {
    let facts = &cx.facts.kueue;
    'sets: for set in &ask.sets {
        let Some(pod) = set.pod else { continue };
        let gpu = set
            .resources
            .keys()
            .find(|r| cx.gpu_names.classify(r) == GpuName::Known);
        let Some(gpu) = gpu else { continue };
        let Some(group) = cq.node.group_of(gpu) else {
            continue;
        };
        let mut why = Vec::new();
        let mut anchor = None;
        for flavor in &group.flavors {
            // An undeclared flavor's labels are unknown: it may fit.
            let Some(labels) = facts.flavors.get(&flavor.flavor) else {
                continue 'sets;
            };
            let Some((span, reason)) = contradiction(pod, labels) else {
                continue 'sets;
            };
            anchor.get_or_insert(span);
            why.push(format!("`{}`: {reason}", flavor.flavor));
        }
        let Some(span) = anchor else { continue };
        hits.push(
            Hit::new(
                Rule::KueueFlavorNodeLabelsConflict,
                span,
                format!(
                    "pod set `{}` of {} `{}` can run on no flavor of ClusterQueue `{}` that covers {gpu}: {}; Kueue never admits it",
                    set.name,
                    w.object.id.kind,
                    name_of(w),
                    cq.node.name,
                    why.join("; ")
                ),
                "contradicts every flavor".into(),
            )
            .help("select the node labels of a flavor the ClusterQueue has, or add that flavor"),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_support::run;
    use crate::rules::RepoFacts;

    const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: ml\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}\n";

    fn facts(ns: &str) -> RepoFacts {
        let mut f = RepoFacts::default();
        f.local_queues
            .entry(ns.into())
            .or_default()
            .insert("team-a".into());
        f
    }

    #[test]
    fn unlabelled_gpu_job_in_a_kueue_namespace() {
        let hits = run(JOB, &facts("ml"), false);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, "KUE001");
        assert!(hits[0].2.contains("`team-a`"), "{}", hits[0].2);
    }

    #[test]
    fn other_namespaces_and_labelled_jobs_are_fine() {
        assert!(run(JOB, &facts("other"), false).is_empty());
        let labelled = JOB.replace(
            "  namespace: ml\n",
            "  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: team-a}\n",
        );
        assert!(run(&labelled, &facts("ml"), false).is_empty());
    }

    #[test]
    fn a_default_local_queue_takes_unlabelled_workloads() {
        let mut f = facts("ml");
        f.local_queues
            .entry("ml".into())
            .or_default()
            .insert("default".into());
        assert!(run(JOB, &f, false).is_empty());
    }

    #[test]
    fn config_can_require_kueue_everywhere() {
        assert_eq!(run(JOB, &RepoFacts::default(), true).len(), 1);
    }
}

/// KUE002–KUE008 on Kueue's own sample queues (`site/static/examples/tas/sample-gpu-queues.yaml`:
/// flavor `tas-flavor` with nodeLabels `cloud.provider.com/node-group: tas-group`, ClusterQueue
/// `tas-cluster-queue` with 100 CPUs, 100Gi and 16 GPUs, LocalQueue `default/tas-user-queue`).
#[cfg(test)]
mod admission_tests {
    use crate::rules::test_support::run;
    use crate::rules::RepoFacts;

    const QUEUES: &str = "kind: ResourceFlavor\napiVersion: kueue.x-k8s.io/v1beta2\nmetadata:\n  name: \"tas-flavor\"\nspec:\n  nodeLabels:\n    cloud.provider.com/node-group: \"tas-group\"\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: \"tas-cluster-queue\"\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [\"cpu\", \"memory\", \"nvidia.com/gpu\"]\n    flavors:\n    - name: \"tas-flavor\"\n      resources:\n      - name: \"cpu\"\n        nominalQuota: 100\n      - name: \"memory\"\n        nominalQuota: 100Gi\n      - name: \"nvidia.com/gpu\"\n        nominalQuota: 16\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  namespace: \"default\"\n  name: \"tas-user-queue\"\nspec:\n  clusterQueue: \"tas-cluster-queue\"\n---\n";

    /// A Job of `pods` pods with `gpus` GPUs each, in the queue `queue`; `extra` goes in the
    /// pod spec.
    fn job(queue: &str, pods: u32, gpus: u32, extra: &str) -> String {
        format!("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  labels:\n    kueue.x-k8s.io/queue-name: {queue}\nspec:\n  parallelism: {pods}\n  template:\n    spec:\n{extra}      containers:\n      - name: t\n        resources:\n          limits: {{nvidia.com/gpu: {gpus}, cpu: 4, memory: 8Gi}}\n")
    }

    /// The rules hit on the queues plus `text`, with the facts of both.
    fn hits(text: &str) -> Vec<(String, String, String)> {
        let all = format!("{QUEUES}{text}");
        run(&all, &RepoFacts::of_text(&all), false)
            .into_iter()
            .filter(|(r, _, _)| r.starts_with("KUE"))
            .collect()
    }

    fn rules(text: &str) -> Vec<String> {
        hits(text).into_iter().map(|(r, _, _)| r).collect()
    }

    #[test]
    fn kue002_names_the_closest_local_queue() {
        let h = hits(&job("tas-user-queu", 1, 1, ""));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(
            (h[0].0.as_str(), h[0].1.as_str()),
            ("KUE002", "tas-user-queu")
        );
        assert!(
            h[0].2.contains("no LocalQueue `tas-user-queu` in namespace `default`; did you mean `tas-user-queue`?"),
            "{}",
            h[0].2
        );
        assert!(rules(&job("tas-user-queue", 1, 1, "")).is_empty());
        // The queue exists, in another namespace: say where.
        let other_ns = job("tas-user-queue", 1, 1, "")
            .replace("  name: train\n", "  name: train\n  namespace: ml\n");
        let h = hits(&other_ns);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h[0].2.contains("no LocalQueue `tas-user-queue` in namespace `ml` (LocalQueue `tas-user-queue` is in namespace `default`)"), "{}", h[0].2);
        // Without LocalQueues in the repo, queues live elsewhere: quiet.
        let alone = job("anything", 1, 1, "");
        assert!(run(&alone, &RepoFacts::of_text(&alone), false).is_empty());
    }

    #[test]
    fn kue003_local_queue_to_a_missing_cluster_queue() {
        let lq = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {namespace: ml, name: q}\nspec:\n  clusterQueue: tas-cluster-queu\n";
        let h = hits(lq);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(
            (h[0].0.as_str(), h[0].1.as_str()),
            ("KUE003", "tas-cluster-queu")
        );
        assert!(
            h[0].2.contains("did you mean `tas-cluster-queue`?"),
            "{}",
            h[0].2
        );
        assert!(rules(&lq.replace("queu\n", "queue\n")).is_empty());
    }

    #[test]
    fn kue004_namespace_selector_that_excludes_the_namespace() {
        let cq = QUEUES.replace(
            "namespaceSelector: {}",
            "namespaceSelector: {matchLabels: {team: research}}",
        );
        let ns = |team: &str| {
            format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n  labels: {{team: {team}}}\n---\n")
        };
        let text = format!("{cq}{}", ns("infra"));
        let h = run(&text, &RepoFacts::of_text(&text), false);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "KUE004");
        assert!(h[0].2.contains("(team=infra)"), "{}", h[0].2);
        let text = format!("{cq}{}", ns("research"));
        assert!(run(&text, &RepoFacts::of_text(&text), false).is_empty());
        // A namespace the repo does not declare: its labels are unknown, not judged.
        assert!(run(&cq, &RepoFacts::of_text(&cq), false).is_empty());
    }

    #[test]
    fn kue005_more_gpus_than_the_queue_can_ever_reach() {
        let h = hits(&job("tas-user-queue", 3, 8, ""));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "KUE005");
        assert!(
            h[0].2.contains("asks 24 nvidia.com/gpu, ClusterQueue `tas-cluster-queue` (LocalQueue `default/tas-user-queue`) can reach at most 16"),
            "{}",
            h[0].2
        );
        assert!(rules(&job("tas-user-queue", 2, 8, "")).is_empty());
    }

    #[test]
    fn kue005_counts_what_a_cohort_lends() {
        let lender = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: lender}\nspec:\n  cohortName: pool\n  resourceGroups:\n  - coveredResources: [\"nvidia.com/gpu\"]\n    flavors:\n    - name: tas-flavor\n      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n---\n";
        let text = QUEUES.replace(
            "  namespaceSelector: {}\n",
            "  namespaceSelector: {}\n  cohortName: pool\n",
        );
        let all = format!("{text}{lender}{}", job("tas-user-queue", 3, 8, ""));
        assert!(
            run(&all, &RepoFacts::of_text(&all), false).is_empty(),
            "16 + 8 lent = 24"
        );
        let all = format!("{text}{lender}{}", job("tas-user-queue", 4, 8, ""));
        let h = run(&all, &RepoFacts::of_text(&all), false);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(
            h[0].2.contains("asks 32 nvidia.com/gpu") && h[0].2.contains("at most 24"),
            "{}",
            h[0].2
        );
    }

    #[test]
    fn kue006_honours_kueues_configuration() {
        // Kueue's HAMi sample (site/static/examples/serving-workloads/sample-hami.yaml): the
        // ClusterQueue covers the transformed totals, the pods ask for per-vGPU resources.
        let hami = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: hami-queue\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu, nvidia.com/total-gpucores, nvidia.com/total-gpumem]\n    flavors:\n    - name: hami-flavor\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: 20}\n      - {name: nvidia.com/total-gpucores, nominalQuota: 600}\n      - {name: nvidia.com/total-gpumem, nominalQuota: 20480}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: user-queue, namespace: kueue-test}\nspec: {clusterQueue: hami-queue}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gpu-burn\n  namespace: kueue-test\n  labels: {kueue.x-k8s.io/queue-name: user-queue}\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        resources:\n          limits: {nvidia.com/gpu: \"2\", nvidia.com/gpucores: \"30\", nvidia.com/gpumem: \"1024\"}\n";
        let kue = |text: &str| -> Vec<String> {
            run(text, &RepoFacts::of_text(text), false)
                .into_iter()
                .filter(|(r, _, _)| r.starts_with("KUE"))
                .map(|(r, at, _)| format!("{r} {at}"))
                .collect()
        };
        assert_eq!(kue(hami), ["KUE006 resources", "KUE006 resources"]);
        // The Configuration of Kueue's "Using HAMi" page transforms both inputs.
        let config = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\ndata:\n  controller_manager_config.yaml: |\n    apiVersion: config.kueue.x-k8s.io/v1beta2\n    kind: Configuration\n    resources:\n      transformations:\n      - input: nvidia.com/gpucores\n        strategy: Replace\n        multiplyBy: nvidia.com/gpu\n        outputs:\n          nvidia.com/total-gpucores: \"1\"\n      - input: nvidia.com/gpumem\n        strategy: Replace\n        multiplyBy: nvidia.com/gpu\n        outputs:\n          nvidia.com/total-gpumem: \"1\"\n";
        assert!(kue(&format!("{hami}{config}")).is_empty());
        let excluded = "---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  excludeResourcePrefixes: [nvidia.com/gpuc, nvidia.com/gpum]\n";
        assert!(kue(&format!("{hami}{excluded}")).is_empty());
    }

    #[test]
    fn kue005_counts_pods_where_the_queue_covers_them() {
        // Kueue's first ClusterQueue sample (cluster_queue.md): cpu 9, memory 36Gi, pods 5,
        // admits a workload "if and only if ... the total number of pods is less than or
        // equal to 5".
        let cq = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: \"cluster-queue\"\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [\"cpu\", \"memory\", \"pods\"]\n    flavors:\n    - name: \"default-flavor\"\n      resources:\n      - name: \"cpu\"\n        nominalQuota: 9\n      - name: \"memory\"\n        nominalQuota: 36Gi\n      - name: \"pods\"\n        nominalQuota: 5\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {namespace: default, name: user-queue}\nspec: {clusterQueue: cluster-queue}\n---\n";
        let job = |pods: u32| {
            format!("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: sample-job\n  labels: {{kueue.x-k8s.io/queue-name: user-queue}}\nspec:\n  parallelism: {pods}\n  template:\n    spec:\n      containers:\n      - name: dummy-job\n        resources: {{requests: {{cpu: 1, memory: 200Mi}}}}\n")
        };
        let text = format!("{cq}{}", job(6));
        let h = run(&text, &RepoFacts::of_text(&text), false);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(
            h[0].2.contains("asks 6 pods, ClusterQueue `cluster-queue`")
                && h[0].2.contains("at most 5"),
            "{}",
            h[0].2
        );
        let text = format!("{cq}{}", job(5));
        assert!(run(&text, &RepoFacts::of_text(&text), false).is_empty());
    }

    #[test]
    fn kue006_a_resource_no_group_covers() {
        let text = job("tas-user-queue", 1, 1, "")
            .replace("memory: 8Gi", "memory: 8Gi, ephemeral-storage: 10Gi");
        let h = hits(&text);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].0.as_str(), h[0].1.as_str()), ("KUE006", "resources"));
        assert!(
            h[0].2.contains("requests `ephemeral-storage`"),
            "{}",
            h[0].2
        );
        // A misspelt name is FLD001's alone: the API server rejects the pod first.
        let text = job("tas-user-queue", 1, 1, "")
            .replace("memory: 8Gi", "memory: 8Gi, ephemeral-storag: 10Gi");
        let h = hits(&text);
        assert!(h.is_empty(), "{h:?}");
    }

    #[test]
    fn kue007_node_selector_against_every_gpu_flavor() {
        let selector = "      nodeSelector:\n        cloud.provider.com/node-group: a100\n";
        let h = hits(&job("tas-user-queue", 1, 1, selector));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(
            (h[0].0.as_str(), h[0].1.as_str()),
            ("KUE007", "cloud.provider.com/node-group")
        );
        let fits = selector.replace("a100", "tas-group");
        assert!(rules(&job("tas-user-queue", 1, 1, &fits)).is_empty());
        let affinity = "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n              - {key: cloud.provider.com/node-group, operator: In, values: [a100, h100]}\n";
        assert_eq!(rules(&job("tas-user-queue", 1, 1, affinity)), ["KUE007"]);
        let either = affinity.replace("[a100, h100]", "[a100, tas-group]");
        assert!(rules(&job("tas-user-queue", 1, 1, &either)).is_empty());
    }

    #[test]
    fn kue007_judges_each_pod_set() {
        // The Master fits the flavor, the Workers do not: the Workers are reported.
        let set = |role: &str, group: &str| {
            format!("    {role}:\n      template:\n        spec:\n          nodeSelector: {{cloud.provider.com/node-group: {group}}}\n          containers: [{{name: pytorch, resources: {{limits: {{nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}}}}}]\n")
        };
        let job = format!(
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: p\n  labels: {{kueue.x-k8s.io/queue-name: tas-user-queue}}\nspec:\n  pytorchReplicaSpecs:\n{}{}",
            set("Master", "tas-group"),
            set("Worker", "a100")
        );
        let h = hits(&job);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].0, "KUE007");
        assert!(h[0].2.contains("pod set `Worker`"), "{}", h[0].2);
    }

    #[test]
    fn kue008_and_kai_workloads_are_not_kueue_workloads() {
        let kai = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\nspec: {}\n---\n";
        let pod = |queue: &str| {
            format!("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: kai\n  labels: {{kai.scheduler/queue: {queue}}}\nspec:\n  template:\n    spec:\n      schedulerName: kai-scheduler\n      containers:\n      - name: t\n        resources: {{limits: {{nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}}}\n")
        };
        // KUE001 stays quiet although the namespace has a LocalQueue: KAI places these pods.
        let h = hits(&format!("{kai}{}", pod("team-b")));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!((h[0].0.as_str(), h[0].1.as_str()), ("KUE008", "team-b"));
        assert!(hits(&format!("{kai}{}", pod("team-a"))).is_empty());
        // Without KAI queues in the repo, nothing to compare with.
        assert!(hits(&pod("team-b")).is_empty());
    }
}
