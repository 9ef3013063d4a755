//! Measured usage of workload containers, keyed by (namespace, kind, name, container).
//!
//! Every series is optional: `None` means "not measured", never zero. Bytes and cores are f64
//! here because they are statistics of samples (Prometheus returns floats); the recommendation
//! turns them into exact quantities, rounding up.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Identity of a workload container in metrics: the owning workload, not the pod.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ContainerKey {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub container: String,
}

/// Percentiles of a series over the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// GPU framebuffer memory: used (P99, max) and the device's capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuMemory {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f64>,
}

/// GPU utilisation as a fraction (0.0–1.0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuUtilization {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
}

/// What was measured for one workload container over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Number of memory samples behind the statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    /// Seconds between the first and the last sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_bytes: Option<GpuMemory>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_utilization: Option<GpuUtilization>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<u64>,
}

/// Usage of every measured container, plus where it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageSet {
    /// e.g. `14d`.
    pub window: Option<String>,
    /// e.g. `prometheus https://prom:9090` or `snapshot metrics.json`.
    pub source: String,
    pub containers: BTreeMap<ContainerKey, Usage>,
}

impl UsageSet {
    pub fn get(&self, key: &ContainerKey) -> Option<&Usage> {
        self.containers.get(key)
    }
}
