//! Measured usage: the snapshot file, the live Prometheus client, and the recommendation engine.

pub mod gpu_queries;
pub mod mig;
pub mod nodes;
pub mod prometheus;
pub mod recommend;
pub mod snapshot;
pub mod usage;
