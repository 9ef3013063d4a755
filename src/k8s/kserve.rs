//! KServe serving runtimes (`ServingRuntime`, `ClusterServingRuntime`): the container an
//! `InferenceService`'s `predictor.model` runs when it names no image of its own. KServe takes
//! the runtime `model.runtime` names (a ServingRuntime of the service's namespace, else a
//! ClusterServingRuntime), or the one runtime whose `supportedModelFormats` auto-selects the
//! model's format (a `disabled` runtime is never taken), and merges the model's container
//! fields over the runtime's `kserve-container` (else its first container): a strategic merge
//! patch, `image` and `command` replace, `env` merges by name, and `args` are the runtime's
//! followed by the model's ("strategic merge patch will replace args but more useful behaviour
//! here is to concatenate": `pkg/controller/v1beta1/inferenceservice/utils`,
//! `MergeRuntimeContainers`).
//!
//! [`merged`] writes that container as a JSON text (parsed back as YAML), so the engine
//! readers see one container; its nodes are in no file of the run (a finding on one is moved
//! to the `InferenceService` by the rule that reads it).

use std::collections::BTreeMap;

use super::workload::Object;
use crate::source::yaml::{Entry, Node, ScalarKind, SourceId, Span, Value};

const GROUP: &str = "serving.kserve.io/";

/// The first container of a serving runtime, as literal values (what is not literal, a
/// `valueFrom`, is left out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Runtime {
    /// `ServingRuntime` or `ClusterServingRuntime`.
    pub kind: String,
    pub name: String,
    pub image: Option<String>,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// `resources.limits` and `resources.requests`, as written.
    pub limits: Vec<(String, String)>,
    pub requests: Vec<(String, String)>,
    /// `supportedModelFormats` names with `autoSelect: true`, lower case.
    pub auto_formats: Vec<String>,
}

impl Runtime {
    /// `ClusterServingRuntime `nvidia-nim-llama3-8b-instruct-1.0.0``.
    pub fn describe(&self) -> String {
        format!("{} `{}`", self.kind, self.name)
    }
}

/// The repository's serving runtimes: namespaced ones by the namespace they name (`None`:
/// none, so the one they are applied to) and name, cluster ones by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuntimeFacts {
    pub namespaced: BTreeMap<(Option<String>, String), Runtime>,
    pub cluster: BTreeMap<String, Runtime>,
}

/// A resource list (`limits`, `requests`) as written.
fn quantities(node: Option<&Node>) -> Vec<(String, String)> {
    node.and_then(Node::as_map)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| Some((e.key.text()?.to_string(), e.value.text()?.to_string())))
        .collect()
}

impl RuntimeFacts {
    pub fn add(&mut self, object: &Object) {
        let kind = object.id.kind.as_str();
        if !matches!(kind, "ServingRuntime" | "ClusterServingRuntime")
            || !object.id.api_version.starts_with(GROUP)
        {
            return;
        }
        let Some(name) = object.id.name.clone() else {
            return;
        };
        let Some(spec) = object.node.get("spec") else {
            return;
        };
        if spec.get("disabled").and_then(Node::text) == Some("true") {
            return;
        }
        let containers = spec
            .get("containers")
            .and_then(Node::as_seq)
            .unwrap_or_default();
        let Some(container) = containers
            .iter()
            .find(|c| c.get_str("name") == Some("kserve-container"))
            .or_else(|| containers.first())
        else {
            return;
        };
        let auto_formats = spec
            .get("supportedModelFormats")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter(|f| f.get("autoSelect").and_then(Node::text) == Some("true"))
            .filter_map(|f| f.get_str("name").map(str::to_ascii_lowercase))
            .collect();
        let runtime = Runtime {
            kind: kind.to_string(),
            name: name.clone(),
            image: container.get_str("image").map(str::to_string),
            command: super::texts(container.get("command")),
            args: super::texts(container.get("args")),
            env: super::engine::env_values(container.get("env"))
                .into_iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            limits: quantities(container.get_path(&["resources", "limits"])),
            requests: quantities(container.get_path(&["resources", "requests"])),
            auto_formats,
        };
        if kind == "ClusterServingRuntime" {
            self.cluster.insert(name, runtime);
        } else {
            self.namespaced
                .insert((object.id.namespace.clone(), name), runtime);
        }
    }

    /// The runtime a predictor of `namespace` runs: the one `name` names (a ServingRuntime of
    /// that namespace, else a ClusterServingRuntime), else the only one auto-selecting
    /// `format`.
    pub fn runtime_for(
        &self,
        namespace: &str,
        name: Option<&str>,
        format: Option<&str>,
    ) -> Option<&Runtime> {
        if let Some(name) = name {
            return self
                .namespaced
                .get(&(Some(namespace.to_string()), name.to_string()))
                .or_else(|| self.namespaced.get(&(None, name.to_string())))
                .or_else(|| self.cluster.get(name));
        }
        let format = format?.to_ascii_lowercase();
        let mut matching = self
            .namespaced
            .iter()
            .filter(|((ns, _), _)| ns.as_deref().is_none_or(|n| n == namespace))
            .map(|(_, r)| r)
            .chain(self.cluster.values())
            .filter(|r| r.auto_formats.contains(&format));
        let first = matching.next()?;
        matching.next().is_none().then_some(first)
    }
}

/// The model's `resources` over the runtime's: each of `limits` and `requests` a map merged by
/// resource name, the model's quantities kept where they are written. `None` when neither has
/// any.
fn merged_resources(own: Option<&Entry>, runtime: &Runtime) -> Option<Entry> {
    let side = |key: &str, base: &[(String, String)]| -> Option<Entry> {
        let own_side = own.and_then(|r| r.value.entry(key));
        let mut entries: Vec<Entry> = own_side
            .and_then(|e| e.value.as_map())
            .map(<[Entry]>::to_vec)
            .unwrap_or_default();
        for (name, value) in base {
            if !entries.iter().any(|e| e.key.text() == Some(name.as_str())) {
                entries.push(entry(name, given(value)));
            }
        }
        if entries.is_empty() {
            return None;
        }
        let mut e = own_side
            .cloned()
            .unwrap_or_else(|| entry(key, given_seq(Vec::new())));
        e.value.value = Value::Map(entries);
        Some(e)
    };
    let sides: Vec<Entry> = [
        side("limits", &runtime.limits),
        side("requests", &runtime.requests),
    ]
    .into_iter()
    .flatten()
    .collect();
    if sides.is_empty() {
        return own.cloned();
    }
    let mut e = own
        .cloned()
        .unwrap_or_else(|| entry("resources", given_seq(Vec::new())));
    let mut rest: Vec<Entry> = e
        .value
        .as_map()
        .unwrap_or_default()
        .iter()
        .filter(|x| !matches!(x.key.text(), Some("limits" | "requests")))
        .cloned()
        .collect();
    rest.extend(sides);
    e.value.value = Value::Map(rest);
    Some(e)
}

/// Where the nodes a runtime gives a merged container are: in no file of the run, so a span on
/// one is never read as another file's bytes (a rule moves such a finding to the model).
pub const RUNTIME_SOURCE: SourceId = SourceId::NOWHERE;

/// A scalar the runtime gives.
fn given(text: &str) -> Node {
    let mut n = Node::scalar(text, ScalarKind::Str);
    n.set_source(RUNTIME_SOURCE);
    n
}

fn given_seq(items: Vec<Node>) -> Node {
    Node {
        value: Value::Seq(items),
        span: Span {
            source: RUNTIME_SOURCE,
            ..Span::default()
        },
        flow: false,
        via_alias: false,
    }
}

fn entry(key: &str, value: Node) -> Entry {
    Entry {
        key: given(key),
        value,
    }
}

/// The container KServe runs for a `predictor.model` on `runtime`: the model's `image` and
/// `command` replace the runtime's, its `args` follow the runtime's, its `env` and `resources`
/// lists merge over the runtime's by name, and the rest is the model's. The model's nodes are its own (their places are the
/// InferenceService's); what the runtime gives is in [`RUNTIME_SOURCE`]. `None` when the model
/// names an image of its own (it needs no runtime).
pub fn merged(model: &Node, runtime: &Runtime) -> Option<Node> {
    if model.get("image").is_some() {
        return None;
    }
    let mut entries: Vec<Entry> = model
        .as_map()?
        .iter()
        .filter(|e| !matches!(e.key.text(), Some("env" | "args" | "resources")))
        .cloned()
        .collect();
    entries.push(entry("name", given("kserve-container")));
    if let Some(image) = &runtime.image {
        entries.push(entry("image", given(image)));
    }
    // An empty `command` is no `command`: the image's entrypoint runs.
    if model.get("command").is_none() && !runtime.command.is_empty() {
        entries.push(entry(
            "command",
            given_seq(runtime.command.iter().map(|w| given(w)).collect()),
        ));
    }
    let mut args: Vec<Node> = runtime.args.iter().map(|w| given(w)).collect();
    args.extend(
        model
            .get("args")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .cloned(),
    );
    if !args.is_empty() {
        entries.push(entry("args", given_seq(args)));
    }
    let own_env: Vec<&Node> = model
        .get("env")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .collect();
    let mut env: Vec<Node> = runtime
        .env
        .iter()
        .filter(|(name, _)| !own_env.iter().any(|e| e.get_str("name") == Some(name)))
        .map(|(name, value)| {
            let mut item = given_seq(Vec::new());
            item.value = Value::Map(vec![
                entry("name", given(name)),
                entry("value", given(value)),
            ]);
            item
        })
        .collect();
    env.extend(own_env.into_iter().cloned());
    entries.push(entry("env", given_seq(env)));
    if let Some(resources) = merged_resources(model.entry("resources"), runtime) {
        entries.push(resources);
    }
    let mut node = model.clone();
    node.value = Value::Map(entries);
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::workload::objects;
    use crate::source::yaml::Stream;

    const RUNTIME: &str = "apiVersion: serving.kserve.io/v1alpha1\nkind: ClusterServingRuntime\nmetadata: {name: nim-llama3-8b}\nspec:\n  supportedModelFormats: [{name: nvidia-nim-llama3-8b-instruct, autoSelect: true}]\n  containers:\n  - name: kserve-container\n    image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0\n    env:\n    - {name: NIM_CACHE_PATH, value: /mnt/models/cache}\n    - {name: NGC_API_KEY, valueFrom: {secretKeyRef: {name: s, key: k}}}\n    - {name: NIM_MAX_MODEL_LEN, value: \"8192\"}\n    args: [--max-num-seqs, \"8\"]\n---\napiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {name: off, namespace: ml}\nspec:\n  disabled: true\n  supportedModelFormats: [{name: huggingface, autoSelect: true}]\n  containers: [{name: kserve-container, image: kserve/huggingfaceserver:v0.15.0}]\n";

    fn facts(text: &str) -> RuntimeFacts {
        let stream = Stream::parse(text);
        let mut facts = RuntimeFacts::default();
        for d in &stream.documents {
            for o in objects(d) {
                facts.add(&o);
            }
        }
        facts
    }

    #[test]
    fn a_runtime_is_found_by_name_or_by_the_format_it_auto_selects() {
        let f = facts(RUNTIME);
        let r = f
            .runtime_for("ml", Some("nim-llama3-8b"), None)
            .expect("by name");
        assert_eq!(r.describe(), "ClusterServingRuntime `nim-llama3-8b`");
        assert_eq!(
            r.env,
            [
                (
                    "NIM_CACHE_PATH".to_string(),
                    "/mnt/models/cache".to_string()
                ),
                ("NIM_MAX_MODEL_LEN".to_string(), "8192".to_string())
            ]
        );
        assert!(f
            .runtime_for("ml", None, Some("NVIDIA-NIM-llama3-8b-instruct"))
            .is_some());
        assert!(f.runtime_for("ml", Some("other"), None).is_none());
        // A disabled runtime is never taken.
        assert!(f.runtime_for("ml", Some("off"), None).is_none());
        assert!(f.runtime_for("ml", None, Some("huggingface")).is_none());
    }

    #[test]
    fn the_models_fields_merge_over_the_runtimes_container() {
        let f = facts(RUNTIME);
        let r = f.runtime_for("ml", Some("nim-llama3-8b"), None).unwrap();
        let model = Stream::parse("runtime: nim-llama3-8b\nenv: [{name: NIM_MAX_MODEL_LEN, value: \"4096\"}, {name: X, value: y}]\nargs: [--a]\n");
        let m = merged(&model.documents[0].root, r).expect("merged");
        assert_eq!(
            m.get_str("image"),
            Some("nvcr.io/nim/meta/llama3-8b-instruct:1.0.0")
        );
        assert_eq!(m.get("image").map(|n| n.span.source), Some(RUNTIME_SOURCE));
        // The model's own nodes keep their places.
        let args = m.get("args").and_then(Node::as_seq).expect("args");
        // The runtime's args, then the model's (which keep their places).
        let words: Vec<Option<&str>> = args.iter().map(Node::text).collect();
        assert_eq!(words, [Some("--max-num-seqs"), Some("8"), Some("--a")]);
        assert_eq!(args[0].span.source, RUNTIME_SOURCE);
        assert_ne!(args[2].span.source, RUNTIME_SOURCE);
        let env: Vec<(Option<&str>, Option<&str>)> = m
            .get("env")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .map(|e| (e.get_str("name"), e.get("value").and_then(Node::text)))
            .collect();
        assert_eq!(
            env,
            [
                (Some("NIM_CACHE_PATH"), Some("/mnt/models/cache")),
                (Some("NIM_MAX_MODEL_LEN"), Some("4096")),
                (Some("X"), Some("y"))
            ]
        );
        // Resources merge by name: the runtime's cpu and memory, the model's GPUs (in place).
        let runtime = Runtime {
            limits: vec![
                ("cpu".into(), "12".into()),
                ("memory".into(), "32Gi".into()),
            ],
            requests: vec![("memory".into(), "32Gi".into())],
            ..r.clone()
        };
        let model = Stream::parse("resources:\n  limits: {nvidia.com/gpu: \"4\", memory: 40Gi}\n");
        let m = merged(&model.documents[0].root, &runtime).expect("merged");
        let limits = m.get_path(&["resources", "limits"]).expect("limits");
        let names: Vec<(Option<&str>, Option<&str>, bool)> = limits
            .as_map()
            .unwrap_or_default()
            .iter()
            .map(|e| {
                (
                    e.key.text(),
                    e.value.text(),
                    e.value.span.source == RUNTIME_SOURCE,
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                (Some("nvidia.com/gpu"), Some("4"), false),
                (Some("memory"), Some("40Gi"), false),
                (Some("cpu"), Some("12"), true)
            ]
        );
        assert_eq!(
            m.get_path(&["resources", "requests", "memory"])
                .and_then(Node::text),
            Some("32Gi")
        );
        // A model with its own image needs no runtime.
        let own = Stream::parse("image: vllm/vllm-openai:v0.10.1\n");
        assert!(merged(&own.documents[0].root, r).is_none());
    }
}
