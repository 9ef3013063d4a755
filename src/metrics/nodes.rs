//! The cluster's nodes, for cluster fit (FIT001): each node's name, labels and allocatable
//! resources, from kube-state-metrics in two instant queries (`kube_node_status_allocatable`,
//! `kube_node_labels`), whatever the cluster's size; kept in the snapshot's optional `nodes`
//! list.
//!
//! kube-state-metrics sanitizes names into Prometheus label names: the resource
//! `nvidia.com/gpu` is `resource="nvidia_com_gpu"`, the node label `nvidia.com/gpu.product` is
//! `label_nvidia_com_gpu_product`, and it exports only the labels its
//! `--metric-labels-allowlist` names. Well-known resource names are written back as Kubernetes
//! spells them; other names stay sanitized, and matching compares sanitized names
//! ([`sanitize`]) so both spellings select the same node.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::quantity::{format_millicores, Quantity};

/// One node as measured (or written by hand in a snapshot). Quantities are Kubernetes
/// quantity strings (`"96"`, `"1Ti"`, `"8"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeInfo {
    /// The cluster the node is in (a snapshot of several clusters); `None`: not named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub allocatable: BTreeMap<String, String>,
}

impl NodeInfo {
    /// A label by any spelling of its key (`nvidia.com/gpu.product` or
    /// `nvidia_com_gpu_product`); the node name is `kubernetes.io/hostname`.
    pub fn label(&self, key: &str) -> Option<&str> {
        let want = sanitize(key);
        if want == sanitize("kubernetes.io/hostname") {
            return Some(&self.name);
        }
        self.labels
            .iter()
            .find(|(k, _)| sanitize(k) == want)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the node carries some label with this key (sanitized).
    pub fn has_label_key(&self, key: &str) -> bool {
        self.label(key).is_some()
    }

    /// An allocatable quantity by any spelling of the resource name.
    pub fn allocatable(&self, resource: &str) -> Option<Quantity> {
        let want = sanitize(resource);
        self.allocatable
            .iter()
            .find(|(k, _)| sanitize(k) == want)
            .and_then(|(_, v)| v.trim().parse().ok())
    }
}

/// A name as kube-state-metrics writes it into a Prometheus label: every character that is not
/// an ASCII letter, digit or `_` becomes `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The Kubernetes spelling of a resource kube-state-metrics sanitized, when it is well known.
fn resource_name(sanitized: &str) -> String {
    const KNOWN: &[&str] = &[
        "cpu",
        "memory",
        "pods",
        "ephemeral-storage",
        "nvidia.com/gpu",
        "nvidia.com/gpu.shared",
        "amd.com/gpu",
        "gpu.intel.com/i915",
        "gpu.intel.com/xe",
    ];
    if let Some(k) = KNOWN.iter().find(|k| sanitize(k) == sanitized) {
        return (*k).to_string();
    }
    // nvidia_com_mig_1g_10gb -> nvidia.com/mig-1g.10gb
    if let Some(profile) = sanitized.strip_prefix("nvidia_com_mig_") {
        if let Some((g, mem)) = profile.split_once('_') {
            return format!("nvidia.com/mig-{g}.{mem}");
        }
    }
    sanitized.to_string()
}

/// A measured value as a quantity string: CPU in millicores when fractional, whole numbers
/// as integers (bytes, devices).
fn quantity_text(resource: &str, value: f64) -> Option<String> {
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    if resource == "cpu" {
        return Some(format_millicores((value * 1000.0).round() as i128));
    }
    Some(format!("{}", value.floor() as i128))
}

/// The two queries, with the user's selector (`cluster="prod"`, may be empty): each node's last
/// value in the past hour (so a scrape gap of a few minutes loses no node; a node gone for an
/// hour is gone).
pub fn planned(selector: &str) -> [String; 2] {
    [
        format!("last_over_time(kube_node_status_allocatable{{{selector}}}[1h])"),
        format!("last_over_time(kube_node_labels{{{selector}}}[1h])"),
    ]
}

/// A result row: its labels and value.
pub type Row = (BTreeMap<String, String>, f64);

/// Every node kube-state-metrics reports, from the answers to [`planned`]'s two queries,
/// sorted by name. `query` runs one instant query.
pub fn collect<E>(
    selector: &str,
    query: &mut dyn FnMut(&str) -> Result<Vec<Row>, E>,
) -> Result<Vec<NodeInfo>, E> {
    let [allocatable, labels] = planned(selector);
    let mut nodes: BTreeMap<String, NodeInfo> = BTreeMap::new();
    for (row, value) in query(&allocatable)? {
        let (Some(node), Some(resource)) = (row.get("node"), row.get("resource")) else {
            continue;
        };
        let name = resource_name(resource);
        let Some(text) = quantity_text(&name, value) else {
            continue;
        };
        let entry = nodes.entry(node.clone()).or_insert_with(|| NodeInfo {
            name: node.clone(),
            ..NodeInfo::default()
        });
        entry.allocatable.insert(name, text);
    }
    for (row, _) in query(&labels)? {
        let Some(node) = row.get("node") else {
            continue;
        };
        // Only nodes with allocatable resources can run pods.
        let Some(entry) = nodes.get_mut(node) else {
            continue;
        };
        for (k, v) in &row {
            if let Some(key) = k.strip_prefix("label_") {
                entry.labels.insert(key.to_string(), v.clone());
            }
        }
    }
    Ok(nodes.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pairs: &[(&str, &str)], value: f64) -> Row {
        (
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            value,
        )
    }

    #[test]
    fn two_queries_make_the_node_list() {
        let mut asked = Vec::new();
        let mut query = |q: &str| -> Result<Vec<Row>, String> {
            asked.push(q.to_string());
            Ok(if q.contains("kube_node_status_allocatable") {
                vec![
                    row(
                        &[
                            ("node", "h100-1"),
                            ("resource", "nvidia_com_gpu"),
                            ("unit", "integer"),
                        ],
                        8.0,
                    ),
                    row(
                        &[("node", "h100-1"), ("resource", "cpu"), ("unit", "core")],
                        191.5,
                    ),
                    row(
                        &[("node", "h100-1"), ("resource", "memory"), ("unit", "byte")],
                        2.0e12,
                    ),
                    row(
                        &[("node", "a100-1"), ("resource", "nvidia_com_mig_1g_10gb")],
                        7.0,
                    ),
                ]
            } else {
                vec![row(
                    &[
                        ("node", "h100-1"),
                        ("label_nvidia_com_gpu_product", "NVIDIA-H100-80GB-HBM3"),
                    ],
                    1.0,
                )]
            })
        };
        let nodes = collect(r#"cluster="prod""#, &mut query).expect("no error");
        assert_eq!(asked.len(), 2);
        assert!(
            asked.iter().all(|q| q.contains(r#"{cluster="prod"}"#)),
            "{asked:?}"
        );
        assert_eq!(nodes.len(), 2);
        let h100 = &nodes[1];
        assert_eq!(h100.allocatable["nvidia.com/gpu"], "8");
        assert_eq!(h100.allocatable["cpu"], "191500m");
        assert_eq!(h100.allocatable["memory"], "2000000000000");
        assert_eq!(
            h100.label("nvidia.com/gpu.product"),
            Some("NVIDIA-H100-80GB-HBM3")
        );
        assert_eq!(h100.label("kubernetes.io/hostname"), Some("h100-1"));
        assert_eq!(nodes[0].allocatable["nvidia.com/mig-1g.10gb"], "7");
        assert_eq!(h100.allocatable("nvidia.com/gpu"), Some(Quantity::from(8)));
    }
}
