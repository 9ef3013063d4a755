//! The NVIDIA NIM operator's `NIMCache` (`apps.nvidia.com/v1alpha1`): which model profiles it
//! caches for the `NIMService`s that name it (`spec.storage.nimCache.name`, in their
//! namespace). The operator runs a NIMService on its cache's profile (the one
//! `spec.storage.nimCache.profile` names, passed as `NIM_MODEL_PROFILE`) and, when the
//! NIMService asks for no GPUs, gives it that profile's tensor parallel in GPUs
//! (`internal/controller/platform/standalone/nimservice.go`, NVIDIA/k8s-nim-operator
//! f63f74d). What a cache's `spec.source.ngc.model` selects (`api/apps/v1alpha1/
//! nimcache_types.go` `ModelSpec`): `profiles`, `precision`, `engine`, `tensorParallelism`,
//! `gpus[].product`.

use std::collections::BTreeMap;

use super::workload::Object;
use crate::source::yaml::{Node, Span};

/// What a NIMCache selects of its model's profiles (each `None`/empty when not written).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CacheSelection {
    pub name: String,
    pub profiles: Vec<String>,
    pub precision: Option<String>,
    pub engine: Option<String>,
    pub tensor_parallelism: Option<String>,
    /// Where `spec.source.ngc.model` is written.
    pub at: Span,
}

/// The repository's NIMCaches, by the namespace they name (`None`: none, so the one they are
/// applied to) and name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NimFacts {
    pub caches: BTreeMap<(Option<String>, String), CacheSelection>,
}

impl NimFacts {
    pub fn add(&mut self, object: &Object) {
        if object.id.kind != "NIMCache" || !object.id.api_version.starts_with("apps.nvidia.com/") {
            return;
        }
        let Some(name) = object.id.name.clone() else {
            return;
        };
        let Some(model) = object.node.get_path(&["spec", "source", "ngc", "model"]) else {
            return;
        };
        let text = |key: &str| {
            model
                .get(key)
                .and_then(Node::text)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        let profiles = model
            .get("profiles")
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.text().map(str::to_string))
            .collect();
        self.caches.insert(
            (object.id.namespace.clone(), name.clone()),
            CacheSelection {
                name,
                profiles,
                precision: text("precision"),
                engine: text("engine"),
                tensor_parallelism: text("tensorParallelism"),
                at: model.span,
            },
        );
    }

    /// The NIMCache `name` a NIMService of `namespace` reads: one of that namespace, else one
    /// that names no namespace.
    pub fn cache(&self, namespace: &str, name: &str) -> Option<&CacheSelection> {
        self.caches
            .get(&(Some(namespace.to_string()), name.to_string()))
            .or_else(|| self.caches.get(&(None, name.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::workload::objects;
    use crate::source::yaml::Stream;

    #[test]
    fn a_nimcache_says_what_it_selects() {
        let stream = Stream::parse(
            "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata: {name: llama, namespace: nim}\nspec:\n  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n      model:\n        engine: tensorrt_llm\n        precision: \"fp16\"\n        tensorParallelism: \"2\"\n        gpus: [{product: A10G}]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: llama, namespace: nim}\n",
        );
        let mut facts = NimFacts::default();
        for d in &stream.documents {
            for o in objects(d) {
                facts.add(&o);
            }
        }
        assert_eq!(facts.caches.len(), 1);
        let c = facts.cache("nim", "llama").expect("the NIMCache");
        assert_eq!(c.engine.as_deref(), Some("tensorrt_llm"));
        assert_eq!(c.precision.as_deref(), Some("fp16"));
        assert_eq!(c.tensor_parallelism.as_deref(), Some("2"));
        assert!(c.profiles.is_empty());
        assert!(facts.cache("other", "llama").is_none());
    }
}
