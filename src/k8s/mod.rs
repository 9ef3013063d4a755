//! Kubernetes knowledge: GPU resource names, the workload catalogue and views.

pub mod accelerator;
pub mod catalog;
pub mod dra;
pub mod engine;
pub mod gpu;
pub mod kaito;
pub mod kserve;
pub mod kueue;
pub mod model;
pub mod podsets;
pub mod workload;

use crate::source::yaml::Node;

/// The scalar texts of a YAML list (`command`, `args`, `values`), what is not a scalar left out.
pub(crate) fn texts(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.text().map(str::to_string))
        .collect()
}
