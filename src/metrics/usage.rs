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

/// The serving engine's KV-cache usage as a fraction (0.0–1.0) of the cache it reserved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvCache {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
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
    /// The largest memory limit, in bytes, the container's pods ran with in the window
    /// (kube-state-metrics `kube_pod_container_resource_limits{resource="memory"}`). `None`:
    /// not measured, or the container had no limit. The OOM bump starts from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<f64>,
    /// DCGM's `modelName` label of the container's GPUs (`NVIDIA H100 80GB HBM3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// How many GPUs a pod of the container had (distinct GPU series per pod; the largest pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_count: Option<u64>,
    /// How many of them were busy: average engine activity over the window at least 5%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_used: Option<u64>,
    /// `DCGM_FI_PROF_GR_ENGINE_ACTIVE` as a fraction (avg over the window, P99), the busiest GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_engine_active: Option<GpuUtilization>,
    /// The serving engine's KV-cache usage (vLLM, SGLang).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage: Option<KvCache>,
}

impl Usage {
    /// Orders the statistics (p50 <= p99 <= max, GPU p99 <= max <= capacity, utilisation in
    /// 0..=1) by lowering the higher one: figures from separate queries can differ by float
    /// noise, and a snapshot must read back.
    pub fn make_consistent(&mut self) {
        fn order(low: &mut Option<f64>, high: Option<f64>) {
            if let (Some(l), Some(h)) = (low.as_mut(), high) {
                if *l > h {
                    *l = h;
                }
            }
        }
        for stats in [&mut self.memory_bytes, &mut self.cpu_cores]
            .into_iter()
            .flatten()
        {
            order(&mut stats.p99, stats.max);
            order(&mut stats.p50, stats.p99.or(stats.max));
        }
        if let Some(g) = &mut self.gpu_memory_bytes {
            order(&mut g.max, g.capacity);
            order(&mut g.p99, g.max.or(g.capacity));
        }
        for u in [&mut self.gpu_utilization, &mut self.gpu_engine_active]
            .into_iter()
            .flatten()
        {
            for v in [&mut u.avg, &mut u.p99].into_iter().flatten() {
                *v = v.clamp(0.0, 1.0);
            }
        }
        if let Some(k) = &mut self.kv_cache_usage {
            for v in [&mut k.p99, &mut k.max].into_iter().flatten() {
                *v = v.clamp(0.0, 1.0);
            }
            order(&mut k.p99, k.max);
        }
        if let (Some(used), Some(count)) = (self.gpus_used.as_mut(), self.gpu_count) {
            *used = (*used).min(count);
        }
    }
}

/// Usage of every measured container, plus where it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageSet {
    /// e.g. `14d`.
    pub window: Option<String>,
    /// e.g. `prometheus https://prom:9090` or `snapshot metrics.json`.
    pub source: String,
    pub containers: BTreeMap<ContainerKey, Usage>,
    /// The cluster's nodes (the snapshot's optional `nodes`), for cluster fit; empty when not
    /// measured.
    pub nodes: Vec<super::nodes::NodeInfo>,
}

impl UsageSet {
    pub fn get(&self, key: &ContainerKey) -> Option<&Usage> {
        self.containers.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_noise_is_ordered_away() {
        let mut u = Usage {
            cpu_cores: Some(Stats {
                p50: Some(0.03),
                p99: Some(0.027_000_000_000_000_08),
                max: Some(0.027_000_000_000_000_076),
            }),
            gpu_memory_bytes: Some(GpuMemory {
                p99: Some(10.0),
                max: Some(12.0),
                capacity: Some(11.0),
            }),
            gpu_utilization: Some(GpuUtilization {
                avg: Some(1.0000001),
                p99: None,
            }),
            ..Usage::default()
        };
        u.make_consistent();
        let cpu = u.cpu_cores.unwrap();
        assert!(cpu.p50 <= cpu.p99 && cpu.p99 <= cpu.max);
        assert_eq!(u.gpu_memory_bytes.unwrap().max, Some(11.0));
        assert_eq!(u.gpu_utilization.unwrap().avg, Some(1.0));
    }
}
