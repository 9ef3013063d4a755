//! A workload's pod sets: each pod template (or container-like block) with the number of pods
//! the controller runs from it, and what one such pod asks for, counted as the scheduler and
//! Kueue count it. One model for the inventory's GPU totals and for admission checks.
//!
//! Counts follow each controller's documented fields and defaults: `replicas` (default 1),
//! Job `parallelism` (default 1, at most `completions`), JobSet `replicatedJobs[].replicas` ×
//! the job's parallelism, Kubeflow `replicaSpecs` replicas, TrainJob `numNodes`, Ray head (1) +
//! worker groups (`replicas`, else `minReplicas`, × `numOfHosts`), LeaderWorkerSet
//! `replicas` × `size`. A count that is absent without a default, templated (`{{ .Values.n }}`,
//! `${N}`) or not a number is [`PodCount::Unknown`] with the reason: never guessed, never 0.
//! Kinds that only describe pods for others to run (TrainingRuntime, ServingRuntime,
//! WorkflowTemplate, PodTemplate) are [`PodCount::Template`].

use std::collections::{BTreeMap, BTreeSet};

use super::dra::{pod_claims, DraFacts};
use super::gpu::is_placeholder;
use super::workload::{Container, Workload};
use crate::quantity::Quantity;
use crate::source::yaml::{push_index, push_name, Node};

/// How many pods a pod set runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodCount {
    Known(u64),
    /// Not knowable from the manifest; the reason, for people.
    Unknown(String),
    /// A template other objects instantiate: it runs no pods itself.
    Template,
}

impl PodCount {
    pub fn known(&self) -> Option<u64> {
        match self {
            PodCount::Known(n) => Some(*n),
            _ => None,
        }
    }

    fn times(self, other: PodCount) -> PodCount {
        match (self, other) {
            (PodCount::Template, _) | (_, PodCount::Template) => PodCount::Template,
            (PodCount::Unknown(r), _) | (_, PodCount::Unknown(r)) => PodCount::Unknown(r),
            (PodCount::Known(a), PodCount::Known(b)) => PodCount::Known(a.saturating_mul(b)),
        }
    }
}

/// Pods made from one template: its containers (indices into the workload's containers).
#[derive(Clone, Debug)]
pub struct PodSet {
    /// The role, for people: `worker`, `head`, a replicated job's or group's name.
    pub name: String,
    /// Normalized path of the pod spec (or container-like block) inside the document.
    pub path: String,
    pub count: PodCount,
    pub containers: Vec<usize>,
}

/// A pod set as the controller's fields describe it, before containers are assigned.
struct Spec {
    name: String,
    path: String,
    count: PodCount,
}

/// A node with its normalized path.
#[derive(Clone)]
struct At<'a> {
    node: &'a Node,
    path: String,
}

impl<'a> At<'a> {
    fn get(&self, key: &str) -> Option<At<'a>> {
        let node = self.node.get(key)?;
        let mut path = self.path.clone();
        push_name(&mut path, key);
        Some(At { node, path })
    }

    fn walk(&self, keys: &[&str]) -> Option<At<'a>> {
        keys.iter().try_fold(self.clone(), |at, k| at.get(k))
    }

    fn items(&self, key: &str) -> Vec<At<'a>> {
        let Some(list) = self.get(key) else {
            return Vec::new();
        };
        list.node
            .as_seq()
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let mut path = list.path.clone();
                push_index(&mut path, i);
                At { node, path }
            })
            .collect()
    }

    fn entries(&self, key: &str) -> Vec<(&'a str, At<'a>)> {
        let Some(map) = self.get(key) else {
            return Vec::new();
        };
        map.node
            .as_map()
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                let name = e.key.text()?;
                let mut path = map.path.clone();
                push_name(&mut path, name);
                Some((
                    name,
                    At {
                        node: &e.value,
                        path,
                    },
                ))
            })
            .collect()
    }

    /// A count field: its value, else `default` (`None`: no default, unknown).
    fn count(&self, field: &str, default: Option<u64>) -> PodCount {
        let missing = || match default {
            Some(n) => PodCount::Known(n),
            None => PodCount::Unknown(format!("`{field}` is not set")),
        };
        let Some(node) = self.node.get(field) else {
            return missing();
        };
        if node.is_null() {
            return missing();
        }
        let text = node.text().unwrap_or_default().trim();
        match text.parse::<u64>() {
            Ok(n) => PodCount::Known(n),
            Err(_) if is_placeholder(text) => {
                PodCount::Unknown(format!("`{field}` is `{text}`, not rendered"))
            }
            Err(_) => PodCount::Unknown(format!("`{field}` is `{text}`, not a count")),
        }
    }
}

/// The pods a Job spec runs at once: `parallelism` (default 1), at most `completions`.
fn job_pods(job_spec: Option<&At>) -> PodCount {
    let Some(spec) = job_spec else {
        return PodCount::Known(1);
    };
    let parallelism = spec.count("parallelism", Some(1));
    match (parallelism, spec.count("completions", None)) {
        (PodCount::Known(p), PodCount::Known(c)) => PodCount::Known(p.min(c)),
        (p, _) => p,
    }
}

fn template_spec(template: Option<At>) -> Option<At> {
    template?.get("spec")
}

fn push(out: &mut Vec<Spec>, name: &str, at: Option<At>, count: PodCount) {
    if let Some(at) = at {
        out.push(Spec {
            name: name.to_string(),
            path: at.path,
            count,
        });
    }
}

/// A Ray cluster spec: the head pod and each worker group.
fn ray(out: &mut Vec<Spec>, cluster: Option<At>) {
    let Some(cluster) = cluster else { return };
    let head = template_spec(cluster.walk(&["headGroupSpec", "template"]));
    push(out, "head", head, PodCount::Known(1));
    for group in cluster.items("workerGroupSpecs") {
        let name = group.node.get_str("groupName").unwrap_or("workers");
        let suspended = group.node.get_str("suspend") == Some("true");
        // KubeRay defaults `replicas` to `minReplicas`, and that to 0.
        let replicas = if group.node.get("replicas").is_some_and(|n| !n.is_null()) {
            group.count("replicas", Some(0))
        } else {
            group.count("minReplicas", Some(0))
        };
        let count = if suspended {
            PodCount::Known(0)
        } else {
            replicas.times(group.count("numOfHosts", Some(1)))
        };
        push(out, name, template_spec(group.get("template")), count);
    }
}

/// Kubeflow training-operator kinds and their replica-spec maps.
const REPLICA_SPECS: &[(&str, &str)] = &[
    ("PyTorchJob", "pytorchReplicaSpecs"),
    ("TFJob", "tfReplicaSpecs"),
    ("MPIJob", "mpiReplicaSpecs"),
    ("PaddleJob", "paddleReplicaSpecs"),
    ("XGBoostJob", "xgbReplicaSpecs"),
    ("JAXJob", "jaxReplicaSpecs"),
    ("MXJob", "mxReplicaSpecs"),
];

/// Kinds that describe pods for other objects to run.
const TEMPLATES: &[(&str, &str)] = &[
    ("", "PodTemplate"),
    ("trainer.kubeflow.org", "TrainingRuntime"),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
    ("serving.kserve.io", "ServingRuntime"),
    ("serving.kserve.io", "ClusterServingRuntime"),
    ("serving.kserve.io", "LLMInferenceServiceConfig"),
    ("argoproj.io", "WorkflowTemplate"),
    ("argoproj.io", "ClusterWorkflowTemplate"),
];

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// The pod sets the kind's fields describe; `None` for a kind whose counts gpulint does not know.
fn specs(object: &At, api_version: &str, kind: &str, depth: usize) -> Option<Vec<Spec>> {
    let group = group_of(api_version);
    let mut out = Vec::new();
    let spec = object.get("spec");
    let spec = spec.as_ref();
    let get = |keys: &[&str]| spec.and_then(|s| s.walk(keys));
    if TEMPLATES.contains(&(group, kind)) {
        // Every pod of a template is a template: one catch-all set at the object.
        push(
            &mut out,
            "template",
            Some(object.clone()),
            PodCount::Template,
        );
        return Some(out);
    }
    match (group, kind) {
        ("", "Pod") => push(&mut out, "pod", spec.cloned(), PodCount::Known(1)),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "StatefulSet" | "ReplicaSet")
        | ("argoproj.io", "Rollout") => {
            let count = spec.map_or(PodCount::Known(1), |s| s.count("replicas", Some(1)));
            push(
                &mut out,
                "replicas",
                template_spec(get(&["template"])),
                count,
            );
        }
        ("kubeflow.org", "Notebook") => {
            push(
                &mut out,
                "notebook",
                template_spec(get(&["template"])),
                PodCount::Known(1),
            );
        }
        ("apps", "DaemonSet") => push(
            &mut out,
            "daemon",
            template_spec(get(&["template"])),
            PodCount::Unknown("one pod per matching node".into()),
        ),
        ("batch", "Job") => {
            push(
                &mut out,
                "job",
                template_spec(get(&["template"])),
                job_pods(spec),
            );
        }
        ("batch", "CronJob") => {
            let job = get(&["jobTemplate", "spec"]);
            let count = job_pods(job.as_ref());
            push(
                &mut out,
                "job",
                template_spec(get(&["jobTemplate", "spec", "template"])),
                count,
            );
        }
        ("kubeflow.org", _) if REPLICA_SPECS.iter().any(|(k, _)| *k == kind) => {
            let key = REPLICA_SPECS
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, v)| *v)?;
            for (role, replica) in spec.map(|s| s.entries(key)).unwrap_or_default() {
                let count = replica.count("replicas", Some(1));
                push(
                    &mut out,
                    role,
                    template_spec(replica.get("template")),
                    count,
                );
            }
        }
        ("trainer.kubeflow.org", "TrainJob") => {
            let count = match spec {
                Some(s)
                    if s.node
                        .get("trainer")
                        .is_some_and(|t| t.get("numNodes").is_some()) =>
                {
                    s.get("trainer")
                        .map_or(PodCount::Known(1), |t| t.count("numNodes", None))
                }
                _ => PodCount::Unknown("`trainer.numNodes` is not set: the runtime decides".into()),
            };
            push(&mut out, "node", get(&["trainer"]), count);
        }
        ("ray.io", "RayCluster") => ray(&mut out, spec.cloned()),
        ("ray.io", "RayJob") => {
            ray(&mut out, get(&["rayClusterSpec"]));
            push(
                &mut out,
                "submitter",
                template_spec(get(&["submitterPodTemplate"])),
                PodCount::Known(1),
            );
        }
        ("ray.io", "RayService") => ray(&mut out, get(&["rayClusterConfig"])),
        ("jobset.x-k8s.io", "JobSet") => {
            for job in spec.map(|s| s.items("replicatedJobs")).unwrap_or_default() {
                let name = job.node.get_str("name").unwrap_or("job");
                let job_spec = job.walk(&["template", "spec"]);
                let count = job
                    .count("replicas", Some(1))
                    .times(job_pods(job_spec.as_ref()));
                push(
                    &mut out,
                    name,
                    template_spec(job.walk(&["template", "spec", "template"])),
                    count,
                );
            }
        }
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => {
            let replicas = spec.map_or(PodCount::Known(1), |s| s.count("replicas", Some(1)));
            let lwt = get(&["leaderWorkerTemplate"]);
            let size = lwt
                .as_ref()
                .map_or(PodCount::Known(1), |t| t.count("size", Some(1)));
            let leader = template_spec(get(&["leaderWorkerTemplate", "leaderTemplate"]));
            let worker = template_spec(get(&["leaderWorkerTemplate", "workerTemplate"]));
            if leader.is_some() {
                push(&mut out, "leader", leader, replicas.clone());
                let workers = match size {
                    PodCount::Known(n) => PodCount::Known(n.saturating_sub(1)),
                    other => other,
                };
                push(&mut out, "worker", worker, replicas.times(workers));
            } else {
                push(&mut out, "group", worker, replicas.times(size));
            }
        }
        ("serving.kserve.io", "InferenceService") => {
            for component in ["predictor", "transformer", "explainer"] {
                let at = get(&[component]);
                let count = at
                    .as_ref()
                    .map_or(PodCount::Known(1), |c| c.count("minReplicas", Some(1)));
                push(&mut out, component, at, count);
            }
            push(
                &mut out,
                "predictor workers",
                get(&["predictor", "workerSpec"]),
                PodCount::Unknown("multi-node workers: sized by the serving runtime".into()),
            );
        }
        ("serving.kserve.io", "InferenceGraph") => {
            let count = spec.map_or(PodCount::Known(1), |s| s.count("minReplicas", Some(1)));
            push(&mut out, "router", spec.cloned(), count);
        }
        ("batch.volcano.sh", "Job") => {
            for task in spec.map(|s| s.items("tasks")).unwrap_or_default() {
                let name = task.node.get_str("name").unwrap_or("task");
                let count = task.count("replicas", None);
                push(&mut out, name, template_spec(task.get("template")), count);
            }
        }
        ("workload.codeflare.dev", "AppWrapper") if depth < 4 => {
            // Each component is a whole object: its own kind's pod sets.
            for component in spec.map(|s| s.items("components")).unwrap_or_default() {
                let Some(inner) = component.get("template") else {
                    continue;
                };
                let inner_api = inner.node.get_str("apiVersion").unwrap_or_default();
                let inner_kind = inner.node.get_str("kind").unwrap_or_default();
                out.extend(specs(&inner, inner_api, inner_kind, depth + 1).unwrap_or_default());
            }
        }
        ("sparkoperator.k8s.io", "SparkApplication" | "ScheduledSparkApplication") => {
            let app = if kind == "SparkApplication" {
                spec.cloned()
            } else {
                get(&["template"])
            };
            let app = app.as_ref();
            push(
                &mut out,
                "driver",
                app.and_then(|a| a.get("driver")),
                PodCount::Known(1),
            );
            let executor = app.and_then(|a| a.get("executor"));
            let count = executor
                .as_ref()
                .map_or(PodCount::Known(1), |e| e.count("instances", None));
            push(&mut out, "executor", executor, count);
        }
        ("apps.nvidia.com", "NIMService") => {
            let count = spec.map_or(PodCount::Known(1), |s| s.count("replicas", Some(1)));
            push(&mut out, "replicas", spec.cloned(), count);
        }
        ("apps.nvidia.com", "NIMPipeline") => {
            for service in spec.map(|s| s.items("services")).unwrap_or_default() {
                let name = service.node.get_str("name").unwrap_or("service");
                let inner = service.get("spec");
                let count = inner
                    .as_ref()
                    .map_or(PodCount::Known(1), |s| s.count("replicas", Some(1)));
                push(&mut out, name, inner, count);
            }
        }
        _ => return None,
    }
    Some(out)
}

/// Whether `prefix` is `path` or a path above it (`$['a']` is above `$['a']['b']`, not above
/// `$['ab']`).
fn is_under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('['))
}

/// The pod sets of a workload, every container in exactly one. Containers the kind's fields
/// do not place (an unknown kind, a pod spec found by the generic search) get a set of unknown
/// size per pod spec.
pub fn pod_sets(w: &Workload) -> Vec<PodSet> {
    let object = At {
        node: w.object.node,
        path: w.object.path.clone(),
    };
    let known = specs(&object, &w.object.id.api_version, &w.object.id.kind, 0);
    let unknown_reason = || {
        if known.is_some() {
            format!("a pod spec the {} fields do not count", w.object.id.kind)
        } else {
            format!(
                "gpulint does not know how many pods a {} runs",
                w.object.id.kind
            )
        }
    };
    let mut sets: Vec<PodSet> = known
        .iter()
        .flatten()
        .map(|s| PodSet {
            name: s.name.clone(),
            path: s.path.clone(),
            count: s.count.clone(),
            containers: Vec::new(),
        })
        .collect();
    let fixed = sets.len();
    for (index, c) in w.containers.iter().enumerate() {
        let home = c
            .pod
            .and_then(|p| w.pods.get(p))
            .map_or(c.path.as_str(), |p| p.path.as_str());
        let best = sets[..fixed]
            .iter()
            .enumerate()
            .filter(|(_, s)| is_under(home, &s.path))
            .max_by_key(|(_, s)| s.path.len())
            .map(|(i, _)| i);
        let slot = match best {
            Some(i) => i,
            None => match sets[fixed..].iter().position(|s| s.path == home) {
                Some(i) => fixed + i,
                None => {
                    sets.push(PodSet {
                        name: "pods".into(),
                        path: home.to_string(),
                        count: PodCount::Unknown(unknown_reason()),
                        containers: Vec::new(),
                    });
                    sets.len() - 1
                }
            },
        };
        sets[slot].containers.push(index);
    }
    sets.retain(|s| !s.containers.is_empty());
    sets
}

/// One group of a LeaderWorkerSet: `leaderWorkerTemplate.size` pods, the leader and size − 1
/// workers (or `size` pods of the worker template when there is no leader template). Each of
/// its pod sets with how many of its pods one group holds, and the size; `None` for another
/// kind, or a size that is not a number.
pub fn lws_group(w: &Workload) -> Option<(u64, Vec<(PodSet, u64)>)> {
    let id = &w.object.id;
    if id.kind != "LeaderWorkerSet" || group_of(&id.api_version) != "leaderworkerset.x-k8s.io" {
        return None;
    }
    let template = At {
        node: w.object.node.get_path(&["spec", "leaderWorkerTemplate"])?,
        path: String::new(),
    };
    let size = template.count("size", Some(1)).known()?;
    let sets = pod_sets(w)
        .into_iter()
        .filter_map(|s| {
            let per_group = match s.name.as_str() {
                "leader" => 1,
                "worker" => size.saturating_sub(1),
                "group" => size,
                _ => return None,
            };
            Some((s, per_group))
        })
        .collect();
    Some((size, sets))
}

/// What one pod asks for, per resource. Resources whose quantity is templated or invalid in
/// some container are in `unknown` (and left out of `resources`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    pub resources: BTreeMap<String, Quantity>,
    pub unknown: BTreeSet<String>,
}

impl Demand {
    fn add(&mut self, other: &Demand) {
        for (name, q) in &other.resources {
            let sum = match self.resources.get(name) {
                Some(have) => have.checked_add(*q),
                None => Some(*q),
            };
            match sum {
                Some(sum) => {
                    self.resources.insert(name.clone(), sum);
                }
                None => {
                    self.unknown.insert(name.clone());
                }
            }
        }
        self.unknown.extend(other.unknown.iter().cloned());
    }

    fn max(&mut self, other: &Demand) {
        for (name, q) in &other.resources {
            let slot = self.resources.entry(name.clone()).or_insert(*q);
            *slot = (*slot).max(*q);
        }
        self.unknown.extend(other.unknown.iter().cloned());
    }
}

/// One container's requests: a request, else its limit (Kubernetes defaults a missing request
/// to the limit).
pub fn container_demand(c: &Container) -> Demand {
    let mut d = Demand::default();
    let mut take = |name: &str, node: Option<&Node>| {
        if d.resources.contains_key(name) || d.unknown.contains(name) {
            return;
        }
        match node.and_then(Node::text).map(str::parse::<Quantity>) {
            Some(Ok(q)) => {
                d.resources.insert(name.to_string(), q);
            }
            _ => {
                d.unknown.insert(name.to_string());
            }
        }
    };
    for q in &c.resources.requests.entries {
        take(q.name, Some(q.value));
    }
    for q in &c.resources.limits.entries {
        take(q.name, Some(q.value));
    }
    if let Some(spark) = &c.spark {
        if let Some(name) = spark.gpu_name.and_then(Node::text) {
            take(name, spark.gpu_quantity);
        }
    }
    d
}

/// What one pod of the set asks for, as Kubernetes and Kueue count it: the regular containers
/// plus the native sidecars (init containers with `restartPolicy: Always`), or, when larger, an
/// init container plus the sidecars started before it.
pub fn pod_demand(w: &Workload, set: &PodSet) -> Demand {
    let mut sidecars = Demand::default();
    let mut init_peak = Demand::default();
    let mut regular = Demand::default();
    for c in set.containers.iter().filter_map(|&i| w.containers.get(i)) {
        // Ephemeral (debug) containers are never given resources.
        if c.path.contains("['ephemeralContainers']") {
            continue;
        }
        let d = container_demand(c);
        if !c.init {
            regular.add(&d);
        } else if c.node.get_str("restartPolicy") == Some("Always") {
            sidecars.add(&d);
            init_peak.max(&sidecars);
        } else {
            let mut with_sidecars = d;
            with_sidecars.add(&sidecars);
            init_peak.max(&with_sidecars);
        }
    }
    regular.add(&sidecars);
    regular.max(&init_peak);
    regular
}

/// [`pod_demand`] plus the GPUs of the pod's DRA claims (`spec.resourceClaims`), per device
/// class (`gpu.nvidia.com`: 2), resolved in `namespace` against the repository's
/// ResourceClaimTemplates and ResourceClaims. A GPU request whose count is unknown
/// (`allocationMode: All`) puts its class in `unknown`; a claim the input does not define is
/// not counted. Kueue's quota arithmetic uses [`pod_demand`] alone (Kueue counts DRA devices
/// only through its own device-class mappings).
pub fn pod_demand_with_dra(
    w: &Workload,
    set: &PodSet,
    dra: &DraFacts,
    is_gpu_class: &dyn Fn(&str) -> bool,
    namespace: &str,
) -> Demand {
    let mut demand = pod_demand(w, set);
    let pod = set
        .containers
        .iter()
        .filter_map(|&i| w.containers.get(i)?.pod)
        .next()
        .and_then(|p| w.pods.get(p));
    let Some(pod) = pod else { return demand };
    let mut claims = Demand::default();
    for entry in pod_claims(pod) {
        let Some(claim) = dra.resolve(namespace, &entry) else {
            continue;
        };
        let (known, unknown) = claim.gpus(is_gpu_class);
        let d = Demand {
            resources: known
                .into_iter()
                .map(|(class, n)| (class, Quantity::from(i128::from(n))))
                .collect(),
            unknown,
        };
        claims.add(&d);
    }
    for name in &claims.unknown {
        claims.resources.remove(name);
    }
    demand.add(&claims);
    demand
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::catalog::Catalog;
    use crate::k8s::workload::objects;
    use crate::source::yaml::Stream;

    /// (set name, count, per-pod nvidia.com/gpu) of every pod set of the first object.
    fn sets(text: &str) -> Vec<(String, PodCount, Option<i128>)> {
        let stream = Stream::parse(text);
        assert!(stream.error.is_none(), "{:?}", stream.error);
        let catalog = Catalog::builtin();
        let object = objects(&stream.documents[0]).remove(0);
        let w = Workload::of(object, &catalog).expect("a workload");
        pod_sets(&w)
            .iter()
            .map(|s| {
                let gpus = pod_demand(&w, s)
                    .resources
                    .get("nvidia.com/gpu")
                    .and_then(|q| q.as_whole_i128());
                (s.name.clone(), s.count.clone(), gpus)
            })
            .collect()
    }

    fn known(name: &str, n: u64, gpus: i128) -> (String, PodCount, Option<i128>) {
        (name.to_string(), PodCount::Known(n), Some(gpus))
    }

    const GPU_POD: &str = "spec:\n        containers:\n        - name: c\n          resources: {limits: {nvidia.com/gpu: 2}}\n";

    #[test]
    fn deployments_count_replicas_default_one() {
        let d = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  replicas: 3\n  template:\n    {GPU_POD}");
        assert_eq!(sets(&d), [known("replicas", 3, 2)]);
        let d = d.replace("  replicas: 3\n", "");
        assert_eq!(sets(&d), [known("replicas", 1, 2)]);
        let d = format!("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: d}}\nspec:\n  replicas: \"{{{{ .Values.n }}}}\"\n  template:\n    {GPU_POD}");
        let got = sets(&d);
        assert!(
            matches!(&got[0].1, PodCount::Unknown(r) if r.contains("not rendered")),
            "{got:?}"
        );
    }

    #[test]
    fn jobs_count_parallelism_at_most_completions() {
        let job = |extra: &str| {
            format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec:\n{extra}  template:\n    {GPU_POD}")
        };
        assert_eq!(sets(&job("")), [known("job", 1, 2)]);
        assert_eq!(sets(&job("  parallelism: 4\n")), [known("job", 4, 2)]);
        assert_eq!(
            sets(&job("  parallelism: 4\n  completions: 2\n")),
            [known("job", 2, 2)]
        );
    }

    #[test]
    fn jobsets_multiply_replicas_by_parallelism() {
        let text = format!("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js}}\nspec:\n  replicatedJobs:\n  - name: workers\n    replicas: 2\n    template:\n      spec:\n        parallelism: 4\n        template:\n          {}", GPU_POD.replace("\n    ", "\n          "));
        assert_eq!(sets(&text), [known("workers", 8, 2)]);
    }

    #[test]
    fn kubeflow_replica_specs_each_count() {
        let text = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      template:\n        spec:\n          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]\n    Worker:\n      replicas: 3\n      template:\n        spec:\n          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]\n";
        assert_eq!(sets(text), [known("Master", 1, 8), known("Worker", 3, 8)]);
    }

    #[test]
    fn trainjobs_count_num_nodes_or_say_the_runtime_decides() {
        let text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n  trainer:\n    numNodes: 4\n    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}\n";
        assert_eq!(sets(text), [known("node", 4, 8)]);
        let got = sets(&text.replace("    numNodes: 4\n", ""));
        assert!(
            matches!(&got[0].1, PodCount::Unknown(r) if r.contains("numNodes")),
            "{got:?}"
        );
    }

    #[test]
    fn ray_counts_the_head_and_worker_groups() {
        let text = "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers: [{name: head, resources: {limits: {cpu: 2}}}]\n  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 2\n    numOfHosts: 2\n    template:\n      spec:\n        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]\n  - groupName: small\n    minReplicas: 3\n    template:\n      spec:\n        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
        let got = sets(text);
        assert_eq!(got[0], ("head".to_string(), PodCount::Known(1), None));
        assert_eq!(got[1..], [known("gpu", 4, 1), known("small", 3, 1)]);
    }

    #[test]
    fn leader_worker_sets_count_size_times_replicas() {
        let text = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4\n    leaderTemplate:\n      spec:\n        containers: [{name: leader, resources: {limits: {nvidia.com/gpu: 8}}}]\n    workerTemplate:\n      spec:\n        containers: [{name: worker, resources: {limits: {nvidia.com/gpu: 8}}}]\n";
        assert_eq!(sets(text), [known("leader", 2, 8), known("worker", 6, 8)]);
        let no_leader = text.replace(
            "    leaderTemplate:\n      spec:\n        containers: [{name: leader, resources: {limits: {nvidia.com/gpu: 8}}}]\n",
            "",
        );
        assert_eq!(sets(&no_leader), [known("group", 8, 8)]);
        let group = |text: &str| {
            let stream = Stream::parse(text);
            let object = objects(&stream.documents[0]).remove(0);
            let w = Workload::of(object, &Catalog::builtin()).expect("a workload");
            let (size, sets) = lws_group(&w).expect("a group");
            let per_group: Vec<(String, u64)> =
                sets.into_iter().map(|(s, n)| (s.name, n)).collect();
            (size, per_group)
        };
        assert_eq!(
            group(text),
            (
                4,
                vec![("leader".to_string(), 1), ("worker".to_string(), 3)]
            )
        );
        assert_eq!(group(&no_leader), (4, vec![("group".to_string(), 4)]));
    }

    #[test]
    fn templates_run_no_pods_and_unknown_kinds_are_unknown() {
        let text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: torch}\nspec:\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          spec:\n            template:\n              spec:\n                containers: [{name: node, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
        assert_eq!(sets(text)[0].1, PodCount::Template);
        let text = "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {name: t}\nspec:\n  pool:\n    containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
        let got = sets(text);
        assert!(
            matches!(&got[0].1, PodCount::Unknown(r) if r.contains("Trainer")),
            "{got:?}"
        );
        assert_eq!(got[0].2, Some(1));
    }

    #[test]
    fn a_pod_asks_for_the_larger_of_its_containers_and_its_init_containers() {
        let pod = |init: &str| {
            format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  initContainers:\n{init}  containers:\n  - {{name: a, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}\n  - {{name: b, resources: {{requests: {{nvidia.com/gpu: 2}}}}}}\n")
        };
        // Regular containers add up: 1 + 2.
        assert_eq!(sets(&pod(""))[0].2, Some(3));
        // A larger init container wins; it does not add.
        let big_init = "  - {name: warm, resources: {limits: {nvidia.com/gpu: 4}}}\n";
        assert_eq!(sets(&pod(big_init))[0].2, Some(4));
        // A native sidecar runs next to the containers: it adds.
        let sidecar =
            "  - {name: proxy, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}\n";
        assert_eq!(sets(&pod(sidecar))[0].2, Some(4));
        // An init container after a sidecar runs with it: 4 + 1.
        let both = format!("{sidecar}{big_init}");
        assert_eq!(sets(&pod(&both))[0].2, Some(5));
    }

    #[test]
    fn templated_quantities_are_unknown_not_zero() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, resources: {limits: {nvidia.com/gpu: \"${GPUS}\"}}}\n";
        let stream = Stream::parse(text);
        let w = Workload::of(objects(&stream.documents[0]).remove(0), &Catalog::builtin()).unwrap();
        let set = &pod_sets(&w)[0];
        let d = pod_demand(&w, set);
        assert!(d.unknown.contains("nvidia.com/gpu"));
        assert!(!d.resources.contains_key("nvidia.com/gpu"));
    }
}
