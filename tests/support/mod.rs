//! Helpers for tests/prometheus.rs: a real Prometheus (Debian's package) fed by backfilled
//! OpenMetrics, and tiny local TCP servers that record or stall requests.
#![allow(dead_code)]

pub mod fake_http;
pub mod openmetrics;
pub mod prometheus;
