//! Strategic merge patch on the span-aware tree.
//!
//! Merged mappings keep the base node (and its span); each entry keeps the origin of whoever
//! wrote its value: untouched entries the base file's, replaced scalars the patch file's. Lists
//! merge by key where Kubernetes declares a `patchMergeKey` (containers by `name`, volumeMounts
//! by `mountPath`, ...), other lists are replaced whole.
//!
//! Kinds without a known schema (CRDs such as PyTorchJob, RayCluster, JobSet): kustomize v5.5
//! (checked with `kubectl kustomize`) does NOT merge their lists by key: a patch naming one
//! container of a PyTorchJob worker replaces the whole `containers` list, dropping the image and
//! every other field the patch does not repeat. We match that, since we must render what the
//! cluster gets (and a rule can then warn about it).

use crate::source::yaml::{Entry, Node, Value};

/// Kinds whose schema kustomize knows (built-in Kubernetes types).
fn known_kind(kind: &str) -> bool {
    matches!(
        kind,
        "Pod"
            | "PodTemplate"
            | "Deployment"
            | "ReplicaSet"
            | "StatefulSet"
            | "DaemonSet"
            | "Job"
            | "CronJob"
            | "ReplicationController"
            | "Service"
            | "ConfigMap"
            | "Secret"
            | "ServiceAccount"
            | "PersistentVolume"
            | "PersistentVolumeClaim"
            | "Namespace"
            | "Role"
            | "ClusterRole"
            | "RoleBinding"
            | "ClusterRoleBinding"
            | "Ingress"
            | "NetworkPolicy"
            | "PodDisruptionBudget"
            | "HorizontalPodAutoscaler"
            | "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "CustomResourceDefinition"
            | "StorageClass"
            | "PriorityClass"
            | "ResourceQuota"
            | "LimitRange"
            | "Endpoints"
    )
}

/// The merge key Kubernetes declares for a list field; `Some(None)` and `None` (a field not
/// listed) both mean the list is replaced whole.
fn declared_key(field: &str, path: &[String]) -> Option<Option<&'static str>> {
    let in_container = path.iter().rev().nth(1).is_some_and(|p| {
        matches!(
            p.as_str(),
            "containers" | "initContainers" | "ephemeralContainers"
        )
    });
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "hostAliases" => Some("ip"),
        "topologySpreadConstraints" => Some("topologyKey"),
        "conditions" => Some("type"),
        "ports" if in_container => Some("containerPort"),
        "ports" if path.len() == 2 && path[0] == "spec" => Some("port"),
        "args" | "command" | "tolerations" | "envFrom" | "finalizers" | "rules" | "subjects"
        | "webhooks" | "accessModes" | "egress" | "ingress" | "from" | "to" | "items" => None,
        _ => return Option::None,
    })
}

/// Merges a strategic merge patch into a resource.
pub(crate) fn merge_resource(base: &Node, patch: &Node) -> Node {
    let kind = base.get_str("kind").unwrap_or_default();
    let ctx = Ctx {
        known: known_kind(kind),
    };
    let mut path = Vec::new();
    ctx.merge(base, patch, &mut path)
        .unwrap_or_else(|| base.clone())
}

struct Ctx {
    known: bool,
}

fn directive(node: &Node) -> Option<&str> {
    node.get_str("$patch")
}

/// A patch value with its directives removed, for content the base did not have.
pub(crate) fn strip(node: &Node) -> Option<Node> {
    match &node.value {
        Value::Map(entries) => {
            if directive(node) == Some("delete") {
                return None;
            }
            let mut out = node.clone();
            out.value = Value::Map(
                entries
                    .iter()
                    .filter(|e| !e.key.text().is_some_and(|k| k.starts_with('$')))
                    .filter(|e| !e.value.is_null())
                    .filter_map(|e| {
                        Some(Entry {
                            key: e.key.clone(),
                            value: strip(&e.value)?,
                        })
                    })
                    .collect(),
            );
            Some(out)
        }
        Value::Seq(items) => {
            let mut out = node.clone();
            out.value = Value::Seq(
                items
                    .iter()
                    .filter(|i| directive(i) != Some("replace"))
                    .filter_map(strip)
                    .collect(),
            );
            Some(out)
        }
        Value::Scalar(_) => Some(node.clone()),
    }
}

impl Ctx {
    /// `None`: the patch deletes the value.
    fn merge(&self, base: &Node, patch: &Node, path: &mut Vec<String>) -> Option<Node> {
        match (&base.value, &patch.value) {
            (Value::Map(b), Value::Map(p)) => {
                match directive(patch) {
                    Some("delete") => return None,
                    Some("replace") => return strip(&without_directive(patch)),
                    _ => {}
                }
                let mut out: Vec<Entry> = b.clone();
                for pe in p {
                    let Some(key) = pe.key.text() else { continue };
                    if key.starts_with('$') {
                        continue;
                    }
                    let pos = out.iter().position(|e| e.key.text() == Some(key));
                    if pe.value.is_null() {
                        if let Some(i) = pos {
                            out.remove(i);
                        }
                        continue;
                    }
                    match pos {
                        Some(i) => {
                            path.push(key.to_string());
                            let merged = self.merge(&out[i].value, &pe.value, path);
                            path.pop();
                            match merged {
                                Some(v) => out[i].value = v,
                                None => {
                                    out.remove(i);
                                }
                            }
                        }
                        None => {
                            if let Some(v) = strip(&pe.value) {
                                out.push(Entry {
                                    key: pe.key.clone(),
                                    value: v,
                                });
                            }
                        }
                    }
                }
                let mut node = base.clone();
                node.value = Value::Map(out);
                Some(node)
            }
            (Value::Seq(b), Value::Seq(p)) => Some(self.merge_list(base, b, patch, p, path)),
            _ => strip(patch),
        }
    }

    fn merge_list(
        &self,
        base: &Node,
        b: &[Node],
        patch: &Node,
        p: &[Node],
        path: &mut Vec<String>,
    ) -> Node {
        if p.iter().any(|i| directive(i) == Some("replace")) {
            return strip(patch).unwrap_or_else(|| patch.clone());
        }
        let field = path.last().cloned().unwrap_or_default();
        let key = if self.known {
            declared_key(&field, path).flatten()
        } else {
            None
        };
        let Some(key) = key else {
            return strip(patch).unwrap_or_else(|| patch.clone());
        };
        let key_of = |n: &Node| n.get(key).and_then(|v| v.text().map(str::to_string));
        // The patch's elements (merged with their base counterparts), in patch order...
        let mut right: Vec<Node> = Vec::new();
        let mut consumed: Vec<String> = Vec::new();
        for item in p {
            let Some(k) = key_of(item) else {
                right.extend(strip(item));
                continue;
            };
            consumed.push(k.clone());
            if directive(item) == Some("delete") {
                continue;
            }
            match b.iter().find(|o| key_of(o).as_deref() == Some(k.as_str())) {
                Some(orig) => {
                    // The key identifies the element: it keeps the base's node (and origin).
                    let mut item = item.clone();
                    if let Value::Map(entries) = &mut item.value {
                        entries.retain(|e| e.key.text() != Some(key));
                    }
                    // Elements are identified by key: the path does not grow with the index.
                    right.extend(self.merge(orig, &item, path));
                }
                None => right.extend(strip(item)),
            }
        }
        // ...then the base's other elements in base order (kyaml's associative-list walk;
        // checked against `kubectl kustomize`).
        let mut out = right;
        out.extend(
            b.iter()
                .filter(|o| key_of(o).is_none_or(|k| !consumed.contains(&k)))
                .cloned(),
        );
        let mut node = base.clone();
        node.value = Value::Seq(out);
        node
    }
}

fn without_directive(node: &Node) -> Node {
    let mut n = node.clone();
    if let Value::Map(entries) = &mut n.value {
        entries.retain(|e| e.key.text() != Some("$patch"));
    }
    n
}
