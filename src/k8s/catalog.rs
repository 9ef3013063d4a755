//! The workload catalogue: which kinds run pods, and JSONPaths to their pod templates, pod specs
//! and container-like mappings. The built-in catalogue is `rules/workloads.yaml`; the config can
//! add entries in the same format.

use jsonpath_rust::parser::model::JpQuery;
use jsonpath_rust::parser::parse_json_path;

use crate::source::decode::{DecodeError, Fields};
use crate::source::yaml::{Node, Stream};

const BUILTIN: &str = include_str!("../../rules/workloads.yaml");

/// How a container-like mapping expresses its resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A `resources: {requests, limits}` block (core containers, KServe model specs, NIMService).
    Standard,
    /// SparkApplication's driver/executor: `cores`, `coreLimit`, `memory`, `gpu: {name, quantity}`.
    Spark,
    /// vLLM production-stack VLLMRuntime: flat `resources: {cpu, memory, gpu, gpuType}`; listed
    /// in the inventory, not checked by the count rules (the operator builds the pod spec).
    VllmRuntime,
}

#[derive(Clone, Debug)]
pub struct CompiledPath {
    pub text: String,
    pub query: JpQuery,
}

#[derive(Clone, Debug)]
pub struct KindEntry {
    pub kind: String,
    /// apiVersion group; `None` matches any group, `Some("")` the core group.
    pub group: Option<String>,
    pub pod_templates: Vec<CompiledPath>,
    pub pod_specs: Vec<CompiledPath>,
    pub containers: Vec<CompiledPath>,
    pub batch: bool,
    pub shape: Shape,
    /// The key holding ResourceRequirements in `containers` matches (`resourcesPerNode`).
    pub resources_key: Option<String>,
    /// Complete objects wrapped in this one (AppWrapper components), looked up by their own kind.
    pub embedded_objects: Vec<CompiledPath>,
    /// Strings holding an object's YAML (Argo `resource.manifest`). Accepted in the format;
    /// not parsed yet, since their positions are relative to the string, not the file.
    pub embedded_manifests: Vec<CompiledPath>,
}

#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub kinds: Vec<KindEntry>,
}

fn compile_paths(fields: &mut Fields, key: &'static str) -> Result<Vec<CompiledPath>, DecodeError> {
    let Some(list) = fields.seq(key)? else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|node| {
            let text = crate::source::decode::string(node)?;
            let query = parse_json_path(&text).map_err(|e| DecodeError {
                offset: node.span.start(),
                message: format!("invalid JSONPath {text:?}: {e}"),
            })?;
            Ok(CompiledPath { text, query })
        })
        .collect()
}

impl Catalog {
    pub fn builtin() -> Catalog {
        let stream = Stream::parse(BUILTIN);
        let root = stream.documents.first().map(|d| &d.root);
        // The built-in catalogue is part of the binary; a test keeps it valid.
        root.and_then(|r| Catalog::from_node(r).ok())
            .unwrap_or_default()
    }

    /// Decodes `{kinds: [...]}`.
    pub fn from_node(root: &Node) -> Result<Catalog, DecodeError> {
        let mut fields = Fields::new(root, "workload catalogue")?;
        let kinds = match fields.seq("kinds")? {
            Some(list) => list
                .iter()
                .map(KindEntry::from_node)
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        fields.finish()?;
        Ok(Catalog { kinds })
    }

    /// Entries from `extra` take precedence over built-in ones for the same kind and group.
    pub fn extend(&mut self, extra: Vec<KindEntry>) {
        let mut kinds = extra;
        kinds.append(&mut self.kinds);
        self.kinds = kinds;
    }

    pub fn lookup(&self, api_version: &str, kind: &str) -> Option<&KindEntry> {
        let group = api_group(api_version);
        self.kinds
            .iter()
            .find(|k| k.kind == kind && k.group.as_deref().is_none_or(|g| g == group))
    }
}

/// The keys of a workload kind (`rules/workloads.yaml`, the config's `workloads:` entries).
pub const KIND_KEYS: &[&str] = &[
    "kind",
    "group",
    "pod_templates",
    "pod_specs",
    "containers",
    "batch",
    "shape",
    "resources_key",
    "embedded_objects",
    "embedded_manifests",
];

impl KindEntry {
    pub fn from_node(node: &Node) -> Result<KindEntry, DecodeError> {
        let mut fields = Fields::with_keys(node, "workload kind", KIND_KEYS)?;
        let kind = fields.required_string("kind")?;
        let group = fields.string("group")?;
        let pod_templates = compile_paths(&mut fields, "pod_templates")?;
        let pod_specs = compile_paths(&mut fields, "pod_specs")?;
        let containers = compile_paths(&mut fields, "containers")?;
        let batch = fields.bool("batch")?.unwrap_or(false);
        let shape = match fields.string_at("shape")? {
            None => Shape::Standard,
            Some((s, _)) if s == "k8s" => Shape::Standard,
            Some((s, _)) if s == "spark" => Shape::Spark,
            Some((s, _)) if s == "vllm-runtime" => Shape::VllmRuntime,
            Some((s, offset)) => {
                return Err(DecodeError {
                    offset,
                    message: format!(
                        "unknown shape {s:?}: expected \"k8s\", \"spark\" or \"vllm-runtime\""
                    ),
                })
            }
        };
        let resources_key = fields.string("resources_key")?;
        let embedded_objects = compile_paths(&mut fields, "embedded_objects")?;
        let embedded_manifests = compile_paths(&mut fields, "embedded_manifests")?;
        fields.finish()?;
        Ok(KindEntry {
            kind,
            group,
            pod_templates,
            pod_specs,
            containers,
            batch,
            shape,
            resources_key,
            embedded_objects,
            embedded_manifests,
        })
    }
}

/// The group of an apiVersion: `apps/v1` -> `apps`, `v1` -> `` (core).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalogue_is_valid_and_covers_the_required_kinds() {
        let stream = Stream::parse(BUILTIN);
        assert_eq!(stream.error, None);
        let catalog = Catalog::from_node(&stream.documents[0].root).expect("valid catalogue");
        for (api, kind) in [
            ("v1", "Pod"),
            ("apps/v1", "Deployment"),
            ("apps/v1", "StatefulSet"),
            ("apps/v1", "DaemonSet"),
            ("apps/v1", "ReplicaSet"),
            ("batch/v1", "Job"),
            ("batch/v1", "CronJob"),
            ("kubeflow.org/v1", "PyTorchJob"),
            ("kubeflow.org/v1", "TFJob"),
            ("kubeflow.org/v2beta1", "MPIJob"),
            ("kubeflow.org/v1", "PaddleJob"),
            ("kubeflow.org/v1", "XGBoostJob"),
            ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
            ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
            ("ray.io/v1", "RayCluster"),
            ("ray.io/v1", "RayJob"),
            ("ray.io/v1", "RayService"),
            ("jobset.x-k8s.io/v1alpha2", "JobSet"),
            ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
            ("serving.kserve.io/v1beta1", "InferenceService"),
            ("serving.kserve.io/v1alpha1", "ServingRuntime"),
            ("batch.volcano.sh/v1alpha1", "Job"),
            ("argoproj.io/v1alpha1", "Workflow"),
            ("argoproj.io/v1alpha1", "WorkflowTemplate"),
            ("workload.codeflare.dev/v1beta2", "AppWrapper"),
            ("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
            ("apps.nvidia.com/v1alpha1", "NIMService"),
        ] {
            assert!(catalog.lookup(api, kind).is_some(), "{api} {kind} missing");
        }
        assert!(catalog.lookup("example.com/v1", "Deployment").is_none());
    }

    #[test]
    fn groups_come_from_the_api_version() {
        assert_eq!(api_group("apps/v1"), "apps");
        assert_eq!(api_group("v1"), "");
    }
}
