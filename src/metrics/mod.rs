//! Measured usage: the snapshot file, the live Prometheus client and the measuring over it, and
//! the recommendation engine.

pub mod measure;
pub mod mig;
pub mod nodes;
pub mod prometheus;
pub mod recommend;
pub mod selector;
pub mod snapshot;
pub mod usage;

/// The GPU-sizing queries live with the other Prometheus queries; the old path still works.
pub use prometheus::gpu_queries;
