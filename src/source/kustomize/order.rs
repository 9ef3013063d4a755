//! kustomize's legacy output order (the CLI default): some kinds first, webhooks last, the rest
//! by group/version/kind, then namespace and name.

use crate::source::yaml::Node;

const ORDER_FIRST: &[&str] = &[
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

const ORDER_LAST: &[&str] = &[
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn type_order(kind: &str) -> i64 {
    if let Some(i) = ORDER_FIRST.iter().position(|k| *k == kind) {
        return i as i64 - ORDER_FIRST.len() as i64;
    }
    if let Some(i) = ORDER_LAST.iter().position(|k| *k == kind) {
        return i as i64 + 1;
    }
    0
}

/// kustomize's `Gvk.String()`: `group_version_kind` with `~G`/`~V`/`~K` for missing parts.
fn gvk_string(node: &Node) -> String {
    let api = node.get_str("apiVersion").unwrap_or_default();
    let (g, v) = api.split_once('/').unwrap_or(("", api));
    let k = node.get_str("kind").unwrap_or_default();
    let or = |s: &str, d: &str| {
        if s.is_empty() {
            d.to_string()
        } else {
            s.to_string()
        }
    };
    format!("{}_{}_{}", or(g, "~G"), or(v, "~V"), or(k, "~K"))
}

fn key(node: &Node) -> (i64, String, String) {
    let kind = node.get_str("kind").unwrap_or_default();
    let meta = |k: &str, d: &str| {
        node.get_path(&["metadata", k])
            .and_then(Node::text)
            .filter(|s| !s.is_empty())
            .unwrap_or(d)
            .to_string()
    };
    let gvk = gvk_string(node);
    let id = format!("{gvk}|{}|{}", meta("namespace", "~X"), meta("name", "~N"));
    (type_order(kind), gvk, id)
}

pub(crate) fn legacy_sort(objects: &mut [Node]) {
    objects.sort_by_cached_key(key);
}
