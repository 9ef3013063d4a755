//! A typed view over the YAML tree: Kubernetes objects, the workloads among them, their pod specs
//! and containers with their resources. Views borrow the tree, so every field keeps its span.

use std::collections::HashSet;

use jsonpath_rust::query::js_path_process;

use super::catalog::{Catalog, CompiledPath, KindEntry, Shape};
use crate::source::yaml::{push_index, push_name, Document, Node};

/// What identifies an object in findings and metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl ObjectRef {
    pub fn display_name(&self) -> String {
        let name = self.name.as_deref().unwrap_or("<unnamed>");
        match &self.namespace {
            Some(ns) => format!("{}/{ns}/{name}", self.kind),
            None => format!("{}/{name}", self.kind),
        }
    }
}

/// Kinds without a namespace besides the `Cluster*` ones (ClusterRole, ClusterQueue,
/// ClusterTrainingRuntime, ClusterServingRuntime, ClusterWorkflowTemplate, ClusterPolicy…).
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "CustomResourceDefinition",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
    "PriorityClass",
    "RuntimeClass",
    "IngressClass",
    "APIService",
    "CertificateSigningRequest",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "FlowSchema",
    "PriorityLevelConfiguration",
    "DeviceClass",
    "ResourceSlice",
    "ResourceFlavor",
    "Cohort",
    "Topology",
    "AdmissionCheck",
    "WorkloadPriorityClass",
    "NVIDIADriver",
];

impl ObjectRef {
    /// Whether the kind has no namespace (so none applies to it).
    pub fn is_cluster_scoped(&self) -> bool {
        let volcano_or_kai_queue = self.kind == "Queue"
            && (self.api_version.starts_with("scheduling.volcano.sh/")
                || self.api_version.starts_with("scheduling.run.ai/"));
        // `Cluster` alone is CloudNativePG's namespaced kind.
        (self.kind.starts_with("Cluster") && self.kind != "Cluster")
            || CLUSTER_SCOPED.contains(&self.kind.as_str())
            || volcano_or_kai_queue
    }

    /// The namespace the object lands in: its own, else `default` (the release's, the
    /// config's, or Kubernetes' `default`); `None` for a cluster-scoped kind.
    pub fn effective_namespace(&self, default: &str) -> Option<String> {
        if self.is_cluster_scoped() {
            return None;
        }
        Some(
            self.namespace
                .clone()
                .unwrap_or_else(|| default.to_string()),
        )
    }
}

/// One Kubernetes object: a document root, or an item of a `kind: List`.
#[derive(Clone, Debug)]
pub struct Object<'a> {
    pub node: &'a Node,
    pub id: ObjectRef,
    /// Normalized path of the object inside its document (`$` or `$['items'][3]`).
    pub path: String,
}

impl<'a> Object<'a> {
    fn from_node(node: &'a Node, path: String) -> Option<Object<'a>> {
        let kind = node.get_str("kind")?.to_string();
        let api_version = node.get_str("apiVersion").unwrap_or_default().to_string();
        let metadata = node.get("metadata");
        let id = ObjectRef {
            api_version,
            kind,
            namespace: metadata
                .and_then(|m| m.get_str("namespace"))
                .map(str::to_string),
            name: metadata.and_then(|m| m.get_str("name")).map(str::to_string),
        };
        Some(Object { node, id, path })
    }

    pub fn metadata(&self) -> Option<&'a Node> {
        self.node.get("metadata")
    }

    pub fn label(&self, key: &str) -> Option<&'a str> {
        self.metadata()?.get("labels")?.get_str(key)
    }

    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.metadata()?.get("annotations")?.get_str(key)
    }
}

/// The objects of a document, expanding `kind: List` (and `*List` kinds with `items`).
pub fn objects(doc: &Document) -> Vec<Object<'_>> {
    objects_in(&doc.root)
}

/// The objects of a document root (a rendered object is a root of its own).
pub fn objects_in(root: &Node) -> Vec<Object<'_>> {
    let is_list = root
        .get_str("kind")
        .is_some_and(|k| k == "List" || k.ends_with("List"))
        && root.get("items").and_then(Node::as_seq).is_some();
    if is_list {
        let items = root.get("items").and_then(Node::as_seq).unwrap_or_default();
        return items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let mut path = String::from("$");
                push_name(&mut path, "items");
                push_index(&mut path, i);
                Object::from_node(item, path)
            })
            .collect();
    }
    Object::from_node(root, "$".to_string())
        .into_iter()
        .collect()
}

/// One `name: quantity` entry of `requests` or `limits`.
#[derive(Clone, Debug)]
pub struct ResourceEntry<'a> {
    pub name: &'a str,
    pub key: &'a Node,
    pub value: &'a Node,
}

/// One side (`requests` or `limits`) of a resources block.
#[derive(Clone, Debug, Default)]
pub struct ResourceList<'a> {
    /// The `requests:`/`limits:` mapping node itself, when present.
    pub node: Option<&'a Node>,
    pub key: Option<&'a Node>,
    pub entries: Vec<ResourceEntry<'a>>,
}

impl<'a> ResourceList<'a> {
    fn from_parent(parent: &'a Node, key: &str) -> ResourceList<'a> {
        let Some(entry) = parent.entry(key) else {
            return ResourceList::default();
        };
        let entries = entry
            .value
            .as_map()
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                Some(ResourceEntry {
                    name: e.key.text()?,
                    key: &e.key,
                    value: &e.value,
                })
            })
            .collect();
        ResourceList {
            node: Some(&entry.value),
            key: Some(&entry.key),
            entries,
        }
    }

    pub fn get(&self, name: &str) -> Option<&ResourceEntry<'a>> {
        self.entries.iter().find(|q| q.name == name)
    }
}

/// Which side of a resources block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Requests,
    Limits,
}

impl Side {
    pub fn key(self) -> &'static str {
        match self {
            Side::Requests => "requests",
            Side::Limits => "limits",
        }
    }

    pub fn other(self) -> Side {
        match self {
            Side::Requests => Side::Limits,
            Side::Limits => Side::Requests,
        }
    }
}

/// The resources of a container (or a container-like mapping).
#[derive(Clone, Debug, Default)]
pub struct Resources<'a> {
    /// The `resources:` key and value, when present.
    pub key: Option<&'a Node>,
    pub node: Option<&'a Node>,
    pub requests: ResourceList<'a>,
    pub limits: ResourceList<'a>,
    /// `resources.claims` (DRA): devices come from claims, not counts.
    pub has_claims: bool,
}

impl<'a> Resources<'a> {
    pub(crate) fn of(container: &'a Node) -> Resources<'a> {
        Resources::under(container, "resources")
    }

    fn under(container: &'a Node, key: &str) -> Resources<'a> {
        let Some(entry) = container.entry(key) else {
            return Resources::default();
        };
        let node = &entry.value;
        Resources {
            key: Some(&entry.key),
            node: Some(node),
            requests: ResourceList::from_parent(node, "requests"),
            limits: ResourceList::from_parent(node, "limits"),
            has_claims: node
                .get("claims")
                .and_then(Node::as_seq)
                .is_some_and(|c| !c.is_empty()),
        }
    }

    pub fn list(&self, side: Side) -> &ResourceList<'a> {
        match side {
            Side::Requests => &self.requests,
            Side::Limits => &self.limits,
        }
    }

    /// Every resource name that appears in requests or limits, in order of first appearance.
    pub fn names(&self) -> Vec<&'a str> {
        let mut seen = Vec::new();
        for q in self.requests.entries.iter().chain(&self.limits.entries) {
            if !seen.contains(&q.name) {
                seen.push(q.name);
            }
        }
        seen
    }
}

/// A SparkApplication driver/executor: resources in Spark's own fields.
#[derive(Clone, Debug, Default)]
pub struct SparkResources<'a> {
    pub cores: Option<&'a Node>,
    pub core_limit: Option<&'a Node>,
    pub memory: Option<&'a Node>,
    /// `gpu: {name, quantity}`.
    pub gpu_name: Option<&'a Node>,
    pub gpu_quantity: Option<&'a Node>,
}

#[derive(Clone, Debug)]
pub struct Container<'a> {
    pub node: &'a Node,
    pub name: Option<&'a str>,
    pub init: bool,
    /// Normalized path inside the object.
    pub path: String,
    /// Index into the workload's pods, when the container belongs to a pod spec.
    pub pod: Option<usize>,
    pub resources: Resources<'a>,
    pub spark: Option<SparkResources<'a>>,
}

#[derive(Clone, Debug)]
pub struct Pod<'a> {
    pub spec: &'a Node,
    pub path: String,
    /// The pod template's metadata (annotations and labels), for templates.
    pub template_metadata: Option<&'a Node>,
    /// A core PodSpec and nothing else (a pod template's `spec`, a Pod's): every key is a field
    /// of Kubernetes' PodSpec. Not a CRD's PodSpec with fields of its own (KServe's predictor).
    pub exact: bool,
}

impl<'a> Pod<'a> {
    pub fn template_annotation(&self, key: &str) -> Option<&'a str> {
        self.template_metadata?.get("annotations")?.get_str(key)
    }
}

/// An object that runs pods, with every pod spec and container found in it.
#[derive(Clone, Debug)]
pub struct Workload<'a> {
    pub object: Object<'a>,
    pub pods: Vec<Pod<'a>>,
    pub containers: Vec<Container<'a>>,
    /// From the catalogue: a batch kind (Job-like), for the Kueue rule.
    pub batch: bool,
    /// Found by the generic search, not through the catalogue.
    pub generic: bool,
}

/// Kinds that describe schemas or policies, never running pods: the generic search skips them.
const NOT_WORKLOADS: &[&str] = &[
    "CustomResourceDefinition",
    "ValidatingAdmissionPolicy",
    "MutatingAdmissionPolicy",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "ConfigMap",
    "Secret",
    // GitOps declarations: their Helm values (`valuesObject`, `spec.values`) hold resources
    // blocks of the chart, which are linted where they land, in the release's render.
    "Application",
    "ApplicationSet",
    "HelmRelease",
];

fn query<'a>(root: &'a Node, path: &CompiledPath) -> Vec<(&'a Node, String)> {
    match js_path_process(&path.query, root) {
        Ok(found) => found.into_iter().map(|r| (r.val, r.path)).collect(),
        Err(_) => Vec::new(),
    }
}

/// Joins an object path (`$` or `$['items'][2]`) with a path relative to the object.
fn join(object_path: &str, relative: &str) -> String {
    format!(
        "{object_path}{}",
        relative.strip_prefix('$').unwrap_or(relative)
    )
}

/// What a node is claimed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    Pod,
    Container,
}

struct Finder<'a> {
    pods: Vec<Pod<'a>>,
    containers: Vec<Container<'a>>,
    /// Nodes already claimed as pod specs or as containers (dedupes overlapping paths), by
    /// address: not by span, which nodes a renderer made up share (the Kustomize fallback gives
    /// every node it cannot trace the kustomization's span, so a pod spec and its container
    /// looked like one node and the container was lost). With the role: one node may be both
    /// (a NIMServiceSpec is its pod's spec and its container).
    seen: HashSet<(usize, Role)>,
}

impl<'a> Finder<'a> {
    fn new() -> Self {
        Finder {
            pods: Vec::new(),
            containers: Vec::new(),
            seen: HashSet::new(),
        }
    }

    fn claim(&mut self, node: &Node, role: Role) -> bool {
        self.seen.insert((std::ptr::from_ref(node) as usize, role))
    }

    fn add_pod(
        &mut self,
        spec: &'a Node,
        path: String,
        template_metadata: Option<&'a Node>,
        exact: bool,
    ) {
        if spec.as_map().is_none() || !self.claim(spec, Role::Pod) {
            return;
        }
        let index = self.pods.len();
        for (field, init) in [
            ("initContainers", true),
            ("containers", false),
            ("ephemeralContainers", false),
        ] {
            let Some(list) = spec.get(field).and_then(Node::as_seq) else {
                continue;
            };
            for (i, c) in list.iter().enumerate() {
                if c.as_map().is_none() || !self.claim(c, Role::Container) {
                    continue;
                }
                let mut cpath = path.clone();
                push_name(&mut cpath, field);
                push_index(&mut cpath, i);
                self.containers.push(Container {
                    node: c,
                    name: c.get_str("name"),
                    init,
                    path: cpath,
                    pod: Some(index),
                    resources: Resources::of(c),
                    spark: None,
                });
            }
        }
        self.pods.push(Pod {
            spec,
            path,
            template_metadata,
            exact,
        });
    }

    fn add_container(&mut self, node: &'a Node, path: String, shape: Shape, key: Option<&str>) {
        if node.as_map().is_none() || !self.claim(node, Role::Container) {
            return;
        }
        let spark = (shape == Shape::Spark).then(|| SparkResources {
            cores: node.get("cores"),
            core_limit: node.get("coreLimit"),
            memory: node.get("memory"),
            gpu_name: node.get_path(&["gpu", "name"]),
            gpu_quantity: node.get_path(&["gpu", "quantity"]),
        });
        // A container-like block inside a pod spec (KServe `predictor.model` in `predictor`)
        // belongs to that pod: its volumes and tolerations apply to it.
        let pod = self
            .pods
            .iter()
            .enumerate()
            .filter(|(_, p)| path.starts_with(&p.path))
            .max_by_key(|(_, p)| p.path.len())
            .map(|(i, _)| i);
        self.containers.push(Container {
            node,
            name: node.get_str("name"),
            init: false,
            path,
            pod,
            resources: match shape {
                // VLLMRuntime's flat `resources` is not a ResourceRequirements block.
                Shape::VllmRuntime => Resources::default(),
                _ => Resources::under(node, key.unwrap_or("resources")),
            },
            spark,
        });
    }

    fn add_from_catalog(
        &mut self,
        catalog: &Catalog,
        object: &Object<'a>,
        entry: &KindEntry,
        depth: usize,
    ) {
        for p in &entry.pod_templates {
            for (template, rel) in query(object.node, p) {
                if let Some(spec) = template.get("spec") {
                    let mut path = join(&object.path, &rel);
                    push_name(&mut path, "spec");
                    self.add_pod(spec, path, template.get("metadata"), true);
                }
            }
        }
        // Only the core Pod's `spec` is a PodSpec alone; other kinds' pod_specs inline theirs
        // beside fields of their own.
        let core = entry.group.as_deref() == Some("");
        for p in &entry.pod_specs {
            for (spec, rel) in query(object.node, p) {
                self.add_pod(spec, join(&object.path, &rel), None, core);
            }
        }
        for p in &entry.containers {
            for (node, rel) in query(object.node, p) {
                let path = join(&object.path, &rel);
                self.add_container(node, path, entry.shape, entry.resources_key.as_deref());
            }
        }
        // Wrapped objects (AppWrapper components) are read with their own kind's entry.
        for p in entry.embedded_objects.iter().filter(|_| depth < 4) {
            for (node, rel) in query(object.node, p) {
                let Some(inner) = Object::from_node(node, join(&object.path, &rel)) else {
                    continue;
                };
                if let Some(inner_entry) = catalog.lookup(&inner.id.api_version, &inner.id.kind) {
                    self.add_from_catalog(catalog, &inner, inner_entry, depth + 1);
                }
            }
        }
    }

    /// Finds anything that looks like a pod spec (a `containers` list of named mappings) or
    /// owns a ResourceRequirements block, so kinds missing from the catalogue are not skipped.
    fn generic(&mut self, node: &'a Node, path: &mut String, depth: usize) {
        if depth > 64 {
            return;
        }
        if let Some(entries) = node.as_map() {
            if looks_like_pod_spec(node) {
                self.add_pod(node, path.clone(), None, false);
            } else if looks_like_resources(node.get("resources"))
                && node.get("accessModes").is_none()
            {
                self.add_container(node, path.clone(), Shape::Standard, None);
            }
            for e in entries {
                let Some(key) = e.key.text() else { continue };
                // PersistentVolumeClaim templates have `resources.requests.storage`: not pods.
                if matches!(key, "volumeClaimTemplates" | "volumeClaimTemplate") {
                    continue;
                }
                let len = path.len();
                push_name(path, key);
                self.generic(&e.value, path, depth + 1);
                path.truncate(len);
            }
        } else if let Some(items) = node.as_seq() {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                self.generic(item, path, depth + 1);
                path.truncate(len);
            }
        }
    }
}

fn looks_like_pod_spec(node: &Node) -> bool {
    node.get("containers")
        .and_then(Node::as_seq)
        .is_some_and(|list| {
            !list.is_empty()
                && list
                    .iter()
                    .all(|c| c.as_map().is_some() && c.get("name").is_some())
        })
}

fn looks_like_resources(node: Option<&Node>) -> bool {
    node.is_some_and(|r| {
        ["requests", "limits"]
            .iter()
            .any(|k| r.get(k).is_some_and(|v| v.as_map().is_some()))
    })
}

impl<'a> Workload<'a> {
    /// The workload view of an object, if it runs pods (catalogue first, then generic search).
    pub fn of(object: Object<'a>, catalog: &Catalog) -> Option<Workload<'a>> {
        let entry = catalog.lookup(&object.id.api_version, &object.id.kind);
        if entry.is_none() && NOT_WORKLOADS.contains(&object.id.kind.as_str()) {
            return None;
        }
        let mut finder = Finder::new();
        if let Some(entry) = entry {
            finder.add_from_catalog(catalog, &object, entry, 0);
        }
        // Even catalogued kinds get the generic pass: it finds resources blocks the catalogue's
        // paths do not reach (e.g. a new KServe model field). Claimed nodes are not found twice.
        let catalogued = finder.containers.len();
        let mut path = object.path.clone();
        finder.generic(object.node, &mut path, 0);
        if finder.containers.is_empty() && finder.pods.is_empty() {
            return None;
        }
        Some(Workload {
            batch: entry.is_some_and(|e| e.batch),
            generic: entry.is_none() || finder.containers.len() > catalogued,
            pods: finder.pods,
            containers: finder.containers,
            object,
        })
    }

    /// An object checked on its own (it runs no pods): no pods, no containers.
    pub fn bare(object: Object<'a>) -> Workload<'a> {
        Workload {
            object,
            pods: Vec::new(),
            containers: Vec::new(),
            batch: false,
            generic: false,
        }
    }

    /// The pod template annotation or object annotation `key` (pod template first).
    pub fn annotations(&self, key: &str) -> Vec<&'a str> {
        let mut found: Vec<&'a str> = self.object.annotation(key).into_iter().collect();
        found.extend(self.pods.iter().filter_map(|p| p.template_annotation(key)));
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::yaml::Stream;

    fn workloads(text: &str) -> (Stream, Catalog) {
        (Stream::parse(text), Catalog::builtin())
    }

    #[test]
    fn a_deployment_has_its_template_containers() {
        let (s, catalog) = workloads(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ml}\nspec:\n  template:\n    metadata: {annotations: {a: b}}\n    spec:\n      initContainers: [{name: init}]\n      containers:\n      - name: app\n        resources: {limits: {nvidia.com/gpu: 1}}\n",
        );
        let obj = objects(&s.documents[0]).remove(0);
        let w = Workload::of(obj, &catalog).unwrap();
        assert_eq!(w.pods.len(), 1);
        assert_eq!(w.pods[0].path, "$['spec']['template']['spec']");
        assert_eq!(w.containers.len(), 2);
        assert!(w.containers[0].init);
        assert_eq!(
            w.containers[1].path,
            "$['spec']['template']['spec']['containers'][0]"
        );
        assert_eq!(
            w.containers[1].resources.limits.entries[0].name,
            "nvidia.com/gpu"
        );
        assert!(!w.generic);
        assert_eq!(w.annotations("a"), ["b"]);
    }

    #[test]
    fn unknown_kinds_are_searched_generically() {
        let (s, catalog) = workloads(
            "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {name: t}\nspec:\n  runner:\n    resources:\n      limits: {nvidia.com/gpu: 2}\n  pool:\n    containers: [{name: c}]\n",
        );
        let obj = objects(&s.documents[0]).remove(0);
        let w = Workload::of(obj, &catalog).unwrap();
        assert!(w.generic);
        let paths: Vec<_> = w.containers.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            ["$['spec']['runner']", "$['spec']['pool']['containers'][0]"]
        );
    }

    #[test]
    fn volume_claim_templates_are_not_containers() {
        let (s, catalog) = workloads(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      containers: [{name: c}]\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources: {requests: {storage: 10Gi}}\n",
        );
        let w = Workload::of(objects(&s.documents[0]).remove(0), &catalog).unwrap();
        assert_eq!(w.containers.len(), 1);
        assert!(!w.generic);
    }

    #[test]
    fn kserve_model_blocks_belong_to_the_predictor_pod() {
        let (s, catalog) = workloads(
            "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\nspec:\n  predictor:\n    volumes: [{name: shm, emptyDir: {medium: Memory}}]\n    model:\n      modelFormat: {name: vllm}\n      resources: {limits: {nvidia.com/gpu: 1}}\n",
        );
        let w = Workload::of(objects(&s.documents[0]).remove(0), &catalog).unwrap();
        let model = w
            .containers
            .iter()
            .find(|c| c.path.ends_with("['model']"))
            .unwrap();
        assert_eq!(
            model.pod.map(|i| w.pods[i].path.as_str()),
            Some("$['spec']['predictor']")
        );
    }

    #[test]
    fn list_items_are_objects() {
        let s = Stream::parse(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: x}]}}\n",
        );
        let objs = objects(&s.documents[0]);
        assert_eq!(objs.len(), 1);
        assert_eq!(objs[0].path, "$['items'][0]");
        let w = Workload::of(objs[0].clone(), &Catalog::builtin()).unwrap();
        assert_eq!(
            w.containers[0].path,
            "$['items'][0]['spec']['containers'][0]"
        );
    }

    #[test]
    fn gitops_declarations_are_not_workloads() {
        for (api, kind, values) in [
            (
                "argoproj.io/v1alpha1",
                "Application",
                "source: {helm: {valuesObject:",
            ),
            (
                "helm.toolkit.fluxcd.io/v2",
                "HelmRelease",
                "values: {x: {y:",
            ),
        ] {
            let s = Stream::parse(&format!(
                "apiVersion: {api}\nkind: {kind}\nmetadata: {{name: a}}\nspec:\n  {values} {{worker: {{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}}}}}}}\n"
            ));
            assert_eq!(s.documents.len(), 1, "{kind}");
            let obj = objects(&s.documents[0]).remove(0);
            assert!(Workload::of(obj, &Catalog::builtin()).is_none(), "{kind}");
        }
    }

    #[test]
    fn configmaps_are_not_workloads() {
        let s = Stream::parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  x: {containers: [{name: a}]}\n",
        );
        let obj = objects(&s.documents[0]).remove(0);
        assert!(Workload::of(obj, &Catalog::builtin()).is_none());
    }
}
