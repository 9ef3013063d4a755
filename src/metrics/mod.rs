//! Measured usage: the snapshot file, the live Prometheus client, and the recommendation engine.

pub mod usage;
