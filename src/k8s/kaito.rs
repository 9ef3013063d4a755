//! Kaito (`kaito.sh`) `Workspace`s: an inference service with no pod template of its own. Kaito's
//! controller makes the pods from `resource` (the instance type it provisions, or the nodes its
//! `labelSelector` matches, or a GPU partition of them) and `inference.preset` (a model it knows by
//! a preset name or a Hugging Face id), with vLLM's arguments from the ConfigMap that
//! `inference.config` names (its `inference_config.yaml`, a `vllm:` mapping). Both API versions
//! keep `resource` and `inference` at the top level, beside `metadata`
//! (https://github.com/kaito-project/kaito/blob/main/api/v1beta1/workspace_types.go, and
//! `api/v1alpha1/workspace_types.go`).
//!
//! A typed view of a Workspace, the preset names Kaito maps to Hugging Face ids, and the
//! repository's inference ConfigMaps (`KaitoFacts`, a repo fact: a Workspace reads the ConfigMap
//! of its namespace). The arithmetic is in `rules/model_fit/kaito.rs`.

use std::collections::BTreeMap;

use super::workload::{Object, ObjectRef};
use crate::source::yaml::{Entry, Node, Stream};

/// The API group of Kaito's kinds.
pub const GROUP: &str = "kaito.sh/";

/// The instance type v1alpha1's CRD defaults `resource.instanceType` to (v1beta1 has no default:
/// it is required when Kaito provisions nodes, and empty for BYO nodes).
/// https://github.com/kaito-project/kaito/blob/main/config/crd/bases/kaito.sh_workspaces.yaml
pub const V1ALPHA1_DEFAULT_INSTANCE_TYPE: &str = "Standard_NC24ads_A100_v4";

/// The annotation that picks Kaito's runtime (`vllm`, the default, or `transformers`).
pub const RUNTIME_ANNOTATION: &str = "kaito.sh/runtime";

/// The ConfigMap key Kaito reads inference arguments from.
pub const CONFIG_KEY: &str = "inference_config.yaml";

/// Kaito's preset names for models it also knows by their Hugging Face id: Kaito looks a preset
/// name up here first (`LegacyBuiltinToCatalog`, pkg/utils/plugin/plugin.go of
/// https://github.com/kaito-project/kaito at commit 056b8280b1a8); any other name with a `/` is
/// a Hugging Face id. Names are compared in lower case, as Kaito does.
const PRESETS: &[(&str, &str)] = &[
    ("phi-4", "microsoft/phi-4"),
    ("phi-4-mini-instruct", "microsoft/phi-4-mini-instruct"),
    ("llama-3.1-8b-instruct", "meta-llama/llama-3.1-8b-instruct"),
    (
        "llama-3.3-70b-instruct",
        "meta-llama/llama-3.3-70b-instruct",
    ),
    (
        "deepseek-r1-distill-llama-8b",
        "deepseek-ai/deepseek-r1-distill-llama-8b",
    ),
    (
        "deepseek-r1-distill-qwen-14b",
        "deepseek-ai/deepseek-r1-distill-qwen-14b",
    ),
    ("deepseek-r1-0528", "deepseek-ai/deepseek-r1-0528"),
    ("deepseek-v3-0324", "deepseek-ai/deepseek-v3-0324"),
    ("phi-3-mini-4k-instruct", "microsoft/phi-3-mini-4k-instruct"),
    (
        "phi-3-mini-128k-instruct",
        "microsoft/phi-3-mini-128k-instruct",
    ),
    (
        "phi-3-medium-4k-instruct",
        "microsoft/phi-3-medium-4k-instruct",
    ),
    (
        "phi-3-medium-128k-instruct",
        "microsoft/phi-3-medium-128k-instruct",
    ),
    ("phi-3.5-mini-instruct", "microsoft/phi-3.5-mini-instruct"),
    (
        "qwen2.5-coder-7b-instruct",
        "qwen/qwen2.5-coder-7b-instruct",
    ),
    (
        "qwen2.5-coder-32b-instruct",
        "qwen/qwen2.5-coder-32b-instruct",
    ),
    ("gpt-oss-20b", "openai/gpt-oss-20b"),
    ("gpt-oss-120b", "openai/gpt-oss-120b"),
    ("gemma-3-4b-instruct", "google/gemma-3-4b-it"),
    ("gemma-3-27b-instruct", "google/gemma-3-27b-it"),
    ("mistral-7b", "mistralai/mistral-7b-v0.3"),
    ("mistral-7b-instruct", "mistralai/mistral-7b-instruct-v0.3"),
    (
        "ministral-3-3b-instruct",
        "mistralai/ministral-3-3b-instruct-2512",
    ),
    (
        "ministral-3-8b-instruct",
        "mistralai/ministral-3-8b-instruct-2512",
    ),
    (
        "ministral-3-14b-instruct",
        "mistralai/ministral-3-14b-instruct-2512",
    ),
    (
        "mistral-large-3-675b-instruct",
        "mistralai/mistral-large-3-675b-instruct-2512",
    ),
    // Presets of earlier Kaito releases (presets/workspace/models/supported_models.yaml), by
    // the repository their `version` names.
    ("falcon-7b", "tiiuae/falcon-7b"),
    ("falcon-7b-instruct", "tiiuae/falcon-7b-instruct"),
    ("falcon-40b", "tiiuae/falcon-40b"),
    ("falcon-40b-instruct", "tiiuae/falcon-40b-instruct"),
];

/// The model a preset name names: its Hugging Face id when Kaito maps the name to one, else
/// the name as written (a Hugging Face id, or a name the catalogue may know).
pub fn preset_model(preset: &str) -> String {
    let lower = preset.trim().to_ascii_lowercase();
    PRESETS
        .iter()
        .find(|(name, _)| *name == lower)
        .map_or_else(|| preset.trim().to_string(), |(_, id)| id.to_string())
}

pub fn is_workspace(id: &ObjectRef) -> bool {
    id.kind == "Workspace" && id.api_version.starts_with(GROUP)
}

/// `resource.partition` (v1beta1, BYO nodes only): a MIG slice, or a number of whole GPUs.
#[derive(Clone, Copy, Debug)]
pub struct Partition<'a> {
    pub node: &'a Node,
    pub mode: Option<&'a str>,
    pub profile: Option<&'a Node>,
    pub count: Option<&'a Node>,
}

/// A Workspace, as the fit rules read it.
#[derive(Clone, Debug)]
pub struct Workspace<'a> {
    pub name: Option<&'a str>,
    pub namespace: Option<&'a str>,
    /// `kaito.sh/v1alpha1`: an absent instance type is the CRD's default.
    pub v1alpha1: bool,
    /// The `resource` entry (its key locates what its defaults say).
    pub resource: Option<&'a Entry>,
    /// `resource.instanceType`, when written and not empty.
    pub instance_type: Option<&'a Node>,
    /// `resource.count` (deprecated in v1beta1; the vLLM runtime's node count is Kaito's estimate).
    pub count: Option<&'a Node>,
    /// `resource.labelSelector`: `matchLabels`, and `In` expressions of one value (the only
    /// forms Kaito accepts, `metav1.LabelSelectorAsMap`).
    pub labels: Vec<(&'a str, &'a str)>,
    pub partition: Option<Partition<'a>>,
    /// `inference.preset.name`.
    pub preset: Option<&'a Node>,
    /// `inference.config`: the ConfigMap of vLLM's arguments.
    pub config: Option<&'a Node>,
    /// `inference.template`: a pod template of the user's (its containers are linted as such).
    pub template: bool,
    /// `tuning`: a fine-tuning job, not an inference service.
    pub tuning: bool,
    /// The `kaito.sh/runtime` annotation.
    pub runtime: Option<&'a str>,
}

/// A non-empty scalar.
fn written(node: Option<&Node>) -> Option<&Node> {
    node.filter(|n| n.text().is_some_and(|t| !t.trim().is_empty()))
}

impl<'a> Workspace<'a> {
    pub fn of(object: &Object<'a>) -> Option<Workspace<'a>> {
        if !is_workspace(&object.id) {
            return None;
        }
        let node = object.node;
        let metadata = node.get("metadata");
        let resource = node.entry("resource");
        let r = resource.map(|e| &e.value);
        let selector = r.and_then(|r| r.get("labelSelector"));
        let mut labels: Vec<(&str, &str)> = selector
            .and_then(|s| s.get("matchLabels"))
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| Some((e.key.text()?, e.value.text()?)))
            .collect();
        for e in selector
            .and_then(|s| s.get("matchExpressions"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let values = e.get("values").and_then(Node::as_seq).unwrap_or_default();
            if let (Some(key), Some("In"), [value]) =
                (e.get_str("key"), e.get_str("operator"), values)
            {
                if let Some(v) = value.text() {
                    labels.push((key, v));
                }
            }
        }
        let partition = r
            .and_then(|r| r.get("partition"))
            .filter(|p| p.as_map().is_some());
        let inference = node.get("inference");
        Some(Workspace {
            name: metadata.and_then(|m| m.get_str("name")),
            namespace: metadata.and_then(|m| m.get_str("namespace")),
            v1alpha1: object.id.api_version == "kaito.sh/v1alpha1",
            resource,
            instance_type: written(r.and_then(|r| r.get("instanceType"))),
            count: r.and_then(|r| r.get("count")).filter(|n| !n.is_null()),
            labels,
            partition: partition.map(|p| Partition {
                node: p,
                mode: p.get_str("mode"),
                profile: written(p.get("profile")),
                count: p.get("count").filter(|n| !n.is_null()),
            }),
            preset: written(inference.and_then(|i| i.get_path(&["preset", "name"]))),
            config: written(inference.and_then(|i| i.get("config"))),
            template: inference
                .and_then(|i| i.get("template"))
                .is_some_and(|t| !t.is_null()),
            tuning: node.get("tuning").is_some_and(|t| !t.is_null()),
            runtime: metadata
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get_str(RUNTIME_ANNOTATION)),
        })
    }

    /// A label its `labelSelector` requires.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        self.labels.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// What an inference ConfigMap's `inference_config.yaml` says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InferenceConfig {
    /// The `vllm:` settings as written (scalars only), keys with `_` read as `-`: Kaito passes
    /// each as `--key value` after its own flags (presets/workspace/inference/vllm/inference_api.py),
    /// and vLLM's parser reads `_` as `-` in long options, so the last one written wins.
    pub vllm: BTreeMap<String, String>,
    /// The text is not YAML, or `vllm` is not a mapping: none of it can be read.
    pub unreadable: bool,
}

impl InferenceConfig {
    pub fn parse(text: &str) -> InferenceConfig {
        let stream = Stream::parse(text);
        let root = stream.documents.first().map(|d| &d.root);
        if stream.error.is_some() {
            return InferenceConfig {
                unreadable: true,
                ..InferenceConfig::default()
            };
        }
        let Some(vllm) = root.and_then(|r| r.get("vllm")).filter(|v| !v.is_null()) else {
            // No `vllm:` section: Kaito's defaults.
            return InferenceConfig::default();
        };
        let Some(entries) = vllm.as_map() else {
            return InferenceConfig {
                unreadable: true,
                ..InferenceConfig::default()
            };
        };
        InferenceConfig {
            vllm: entries
                .iter()
                .filter_map(|e| {
                    let key = e.key.text()?.trim().replace('_', "-");
                    Some((key, e.value.text()?.trim().to_string()))
                })
                .collect(),
            unreadable: false,
        }
    }

    /// A setting (`max-model-len`), whichever spelling was written.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vllm.get(key).map(String::as_str)
    }
}

/// The repository's inference ConfigMaps (those with an `inference_config.yaml`), by the
/// namespace they name (`None`: none, so the one they are applied to) and name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KaitoFacts {
    pub configs: BTreeMap<(Option<String>, String), InferenceConfig>,
}

impl KaitoFacts {
    pub fn add(&mut self, object: &Object) {
        if object.id.kind != "ConfigMap" || object.id.api_version != "v1" {
            return;
        }
        let Some(name) = object.id.name.clone() else {
            return;
        };
        let Some(text) = object
            .node
            .get_path(&["data", CONFIG_KEY])
            .and_then(Node::as_scalar)
            .map(|s| s.text.as_str())
        else {
            return;
        };
        self.configs.insert(
            (object.id.namespace.clone(), name),
            InferenceConfig::parse(text),
        );
    }

    /// The ConfigMap `name` a Workspace of `namespace` reads: one of that namespace, else one
    /// that names no namespace.
    pub fn config(&self, namespace: &str, name: &str) -> Option<&InferenceConfig> {
        self.configs
            .get(&(Some(namespace.to_string()), name.to_string()))
            .or_else(|| self.configs.get(&(None, name.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::workload::objects;

    fn workspace(text: &str, check: impl Fn(&Workspace)) {
        let stream = Stream::parse(text);
        assert_eq!(stream.error, None);
        let objects = objects(&stream.documents[0]);
        let ws = Workspace::of(&objects[0]).expect("a Workspace");
        check(&ws);
    }

    /// Kaito's own examples: v1beta1 (examples/inference/kaito_workspace_llama-3.3_70b_instruct.yaml)
    /// and v1alpha1 (the same fields, the v0.4 examples), a BYO partition, a template.
    #[test]
    fn both_api_versions_read_the_same_fields() {
        workspace(
            "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata:\n  name: workspace-llama-3-3-70b-instruct\nresource:\n  count: 2\n  instanceType: \"Standard_NC48ads_A100_v4\"\n  labelSelector:\n    matchLabels:\n      apps: llama-3-3-70b-instruct\ninference:\n  preset:\n    name: llama-3.3-70b-instruct\n    presetOptions:\n      modelAccessSecret: hf-token\n  config: \"llama-inference-params\"\n",
            |ws| {
                assert_eq!(ws.name, Some("workspace-llama-3-3-70b-instruct"));
                assert!(!ws.v1alpha1);
                assert_eq!(ws.instance_type.and_then(Node::text), Some("Standard_NC48ads_A100_v4"));
                assert_eq!(ws.count.and_then(Node::text), Some("2"));
                assert_eq!(ws.preset.and_then(Node::text), Some("llama-3.3-70b-instruct"));
                assert_eq!(ws.config.and_then(Node::text), Some("llama-inference-params"));
                assert_eq!(ws.label("apps"), Some("llama-3-3-70b-instruct"));
                assert!(!ws.template && !ws.tuning && ws.partition.is_none());
            },
        );
        workspace(
            "apiVersion: kaito.sh/v1alpha1\nkind: Workspace\nmetadata: {name: ws, namespace: ml, annotations: {kaito.sh/runtime: transformers}}\nresource:\n  labelSelector:\n    matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4]}]\ninference:\n  preset: {name: falcon-7b}\n",
            |ws| {
                assert!(ws.v1alpha1);
                assert_eq!(ws.namespace, Some("ml"));
                assert!(ws.instance_type.is_none());
                assert_eq!(ws.label("node.kubernetes.io/instance-type"), Some("Standard_NC24ads_A100_v4"));
                assert_eq!(ws.runtime, Some("transformers"));
            },
        );
        workspace(
            "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: ws}\nresource:\n  instanceType: \"\"\n  labelSelector: {matchLabels: {apps: x}}\n  partition: {mode: mig, profile: 1g.10gb}\ninference:\n  preset: {name: llama-3.1-8b-instruct}\n",
            |ws| {
                assert!(ws.instance_type.is_none(), "an empty instance type is BYO");
                let p = ws.partition.expect("a partition");
                assert_eq!((p.mode, p.profile.and_then(Node::text)), (Some("mig"), Some("1g.10gb")));
            },
        );
        workspace(
            "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: ws}\nresource: {instanceType: Standard_NC24ads_A100_v4}\ninference:\n  template:\n    spec:\n      containers: [{name: c, image: x}]\n",
            |ws| assert!(ws.template && ws.preset.is_none()),
        );
        // Not a Workspace: another group's kind of the same name.
        let stream =
            Stream::parse("apiVersion: example.com/v1\nkind: Workspace\nmetadata: {name: x}\n");
        assert!(Workspace::of(&objects(&stream.documents[0])[0]).is_none());
    }

    #[test]
    fn preset_names_map_to_their_hugging_face_ids() {
        assert_eq!(preset_model("phi-4"), "microsoft/phi-4");
        assert_eq!(
            preset_model("Mistral-7B-Instruct"),
            "mistralai/mistral-7b-instruct-v0.3"
        );
        assert_eq!(preset_model("gemma-3-4b-instruct"), "google/gemma-3-4b-it");
        // A Hugging Face id, or a name Kaito does not map, is kept as written.
        assert_eq!(preset_model("Qwen/Qwen3-8B"), "Qwen/Qwen3-8B");
        assert_eq!(preset_model("my-model"), "my-model");
        // Every mapped id is in gpulint's catalogue.
        let c = crate::k8s::model::Catalogue::default();
        for (name, id) in PRESETS {
            assert!(
                c.find(id).is_some(),
                "preset {name}: {id} is not catalogued"
            );
        }
    }

    /// The ConfigMap of Kaito's examples/inference/kaito_workspace_custom_config.yaml.
    #[test]
    fn an_inference_config_is_read_as_kaito_passes_it() {
        let c = InferenceConfig::parse("# Maximum number of steps\nmax_probe_steps: 6\n\nvllm:\n  cpu-offload-gb: 0\n  gpu-memory-utilization: 0.95\n  swap-space: 4\n  max_model_len: 131072\n  tensor-parallel-size: 2\n  enable-chunked-prefill: true\n  compilation-config: {level: 3}\n");
        assert!(!c.unreadable);
        assert_eq!(c.get("gpu-memory-utilization"), Some("0.95"));
        assert_eq!(c.get("max-model-len"), Some("131072"), "`_` reads as `-`");
        assert_eq!(c.get("tensor-parallel-size"), Some("2"));
        assert_eq!(c.get("compilation-config"), None, "not a scalar");
        assert_eq!(
            InferenceConfig::parse("max_probe_steps: 6\n"),
            InferenceConfig::default()
        );
        assert!(InferenceConfig::parse("vllm: [a, b]\n").unreadable);
        assert!(InferenceConfig::parse("vllm: {a: [\n").unreadable);
    }

    #[test]
    fn configs_are_found_in_the_workspace_namespace_or_in_none() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: params}\ndata:\n  inference_config.yaml: |\n    vllm:\n      max-model-len: 4096\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: params, namespace: prod}\ndata:\n  inference_config.yaml: \"vllm: {max-model-len: 8192}\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n";
        let stream = Stream::parse(text);
        let mut facts = KaitoFacts::default();
        for doc in &stream.documents {
            for o in objects(doc) {
                facts.add(&o);
            }
        }
        assert_eq!(facts.configs.len(), 2, "only inference ConfigMaps");
        let len = |ns: &str| {
            facts
                .config(ns, "params")
                .and_then(|c| c.get("max-model-len"))
        };
        assert_eq!(len("prod"), Some("8192"));
        assert_eq!(len("default"), Some("4096"));
        assert!(facts.config("prod", "other").is_none());
    }
}
