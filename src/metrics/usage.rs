//! Measured usage of workload containers, keyed by (cluster, namespace, kind, name, container).
//!
//! Every series is optional: `None` means "not measured", never zero. Bytes and cores are f64
//! here because they are statistics of samples (Prometheus returns floats); the recommendation
//! turns them into exact quantities, rounding up.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

mod containers;

pub use containers::{Builder, Containers};

/// Identity of a workload container in metrics: the owning workload, not the pod, in the
/// cluster that runs it (`None`: a snapshot or repository that names no cluster).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ContainerKey {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
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
    /// How many GPUs a pod of the container held at one time (distinct GPU series per pod; the
    /// largest pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_count: Option<u64>,
    /// How many of them were busy at one time: average engine activity over the window at least
    /// 5%.
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
    /// Held compactly: a snapshot can have a million of them.
    pub containers: Containers,
    /// The clusters' nodes (the snapshot's optional `nodes`, each with its optional
    /// `cluster`), for cluster fit; empty when not measured.
    pub nodes: Vec<super::nodes::NodeInfo>,
    /// Whether the run names several clusters. Figures that name no cluster stand for every
    /// cluster of a run that names at most one (a snapshot of "the" cluster), and for none of a
    /// run that names several (each cluster's figures must name it). Set by the linter once it
    /// knows the run's clusters, which is after the figures are read.
    pub several_clusters: Flag,
}

/// A setting made once the run knows it, through a shared reference (the linter holds the
/// figures while it loads the inputs that decide it).
#[derive(Debug, Default)]
pub struct Flag(std::sync::atomic::AtomicBool);

impl Flag {
    pub fn new(value: bool) -> Flag {
        Flag(std::sync::atomic::AtomicBool::new(value))
    }
    pub fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn set(&self, value: bool) {
        self.0.store(value, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clone for Flag {
    fn clone(&self) -> Flag {
        Flag::new(self.get())
    }
}

impl PartialEq for Flag {
    fn eq(&self, other: &Flag) -> bool {
        self.get() == other.get()
    }
}

impl UsageSet {
    /// The usage of a container in its cluster: the figures that name that cluster, else, when
    /// they stand for every cluster, those that name none.
    pub fn get(&self, key: &ContainerKey) -> Option<Usage> {
        self.containers.usage_at(self.position(key)?)
    }

    /// Where the figures [`UsageSet::get`] gives are in `containers`.
    fn position(&self, key: &ContainerKey) -> Option<usize> {
        if let Some(p) = self.containers.position(key) {
            return Some(p);
        }
        if self.several_clusters.get() {
            return None;
        }
        // One cluster: figures that name none are its, and a key that names none (a report's,
        // which names clusters only when there are several) is the one cluster's.
        let other = |cluster: Option<String>| ContainerKey {
            cluster,
            ..key.clone()
        };
        match &key.cluster {
            Some(_) => self.containers.position(&other(None)),
            None => {
                let only = self.containers.only_named_cluster()?;
                self.containers.position(&other(Some(only.to_string())))
            }
        }
    }

    /// Which of the repository's containers (each with whether it gets GPUs) these figures
    /// cover, and which figures match none of them.
    pub fn coverage<'k>(
        &self,
        repo: impl IntoIterator<Item = (&'k ContainerKey, bool)>,
    ) -> Coverage {
        let mut c = Coverage {
            source: self.source.clone(),
            window: self.window.clone(),
            entries: self.containers.len(),
            ..Coverage::default()
        };
        let mut matched: BTreeSet<usize> = BTreeSet::new();
        for (key, gpu) in repo {
            let found = self.position(key);
            c.containers += 1;
            c.gpu_containers += usize::from(gpu);
            if let Some(stored) = found {
                matched.insert(stored);
                c.measured += 1;
                c.gpu_measured += usize::from(gpu);
            }
        }
        // Counted, and only the first few copied: a snapshot of a million containers the
        // repository does not have would otherwise be copied key by key.
        c.unmatched = self.containers.len() - matched.len();
        c.unmatched_first = (0..self.containers.len())
            .filter(|p| !matched.contains(p))
            .take(NAMED)
            .filter_map(|p| self.containers.key_at(p))
            .collect();
        c
    }

    /// The nodes of a cluster: those that name it, else (as for [`UsageSet::get`]) those that
    /// name none.
    pub fn nodes_of(&self, cluster: Option<&str>) -> Vec<&super::nodes::NodeInfo> {
        let named: Vec<_> = self
            .nodes
            .iter()
            .filter(|n| n.cluster.as_deref() == cluster)
            .collect();
        if !named.is_empty() || cluster.is_none() || self.several_clusters.get() {
            return named;
        }
        self.nodes.iter().filter(|n| n.cluster.is_none()).collect()
    }

    /// Adds another set's figures (a snapshot of another cluster); a container or node both
    /// name is the first's.
    pub fn merge(&mut self, other: UsageSet) {
        let mine = std::mem::take(&mut self.containers);
        // Of equal keys the first is kept.
        self.containers = mine.iter().chain(other.containers.iter()).collect();
        let known: std::collections::BTreeSet<(Option<String>, String)> = self
            .nodes
            .iter()
            .map(|n| (n.cluster.clone(), n.name.clone()))
            .collect();
        self.nodes.extend(
            other
                .nodes
                .into_iter()
                .filter(|n| !known.contains(&(n.cluster.clone(), n.name.clone()))),
        );
        if self.source != other.source {
            self.source = format!("{}, {}", self.source, other.source);
        }
        if self.window.is_none() {
            self.window = other.window;
        }
    }

    /// Names every figure that names no cluster with `cluster` (a snapshot file the config maps
    /// to one cluster).
    pub fn label(&mut self, cluster: &str) {
        let containers = std::mem::take(&mut self.containers);
        // Figures that name the cluster themselves come first, so that they are kept over
        // unnamed ones for the same container (of equal keys the first is kept).
        let named = containers.iter().filter(|(k, _)| k.cluster.is_some());
        let unnamed = containers.iter().filter(|(k, _)| k.cluster.is_none());
        self.containers = named
            .chain(unnamed.map(|(mut k, u)| {
                k.cluster = Some(cluster.to_string());
                (k, u)
            }))
            .collect();
        for n in &mut self.nodes {
            n.cluster.get_or_insert_with(|| cluster.to_string());
        }
    }
}

/// How much of the repository the measurements cover: one count for every output (the
/// summary line, JSON's `metrics`, the HTML header and its measured section).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Coverage {
    /// Where the figures come from (`snapshot metrics.json`, `prometheus https://…`), and their
    /// window.
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// The repository's GPU containers, and those with figures.
    pub gpu_containers: usize,
    pub gpu_measured: usize,
    /// All its judged containers (not init containers), and those with figures.
    pub containers: usize,
    pub measured: usize,
    /// The figures given (snapshot entries, or the containers Prometheus had data for).
    pub entries: usize,
    /// How many of the figures match no container of the repository.
    #[serde(skip)]
    pub unmatched: usize,
    /// The first few of them (sorted), which messages name.
    #[serde(skip)]
    pub unmatched_first: Vec<ContainerKey>,
}

/// How many unmatched entries a message names.
const NAMED: usize = 3;

impl Coverage {
    /// "measured 3 of 4 GPU container(s) (10 of 12 container(s)); 2 snapshot entries match
    /// nothing in the repository: ml/Deployment/a/c, ..."
    pub fn describe(&self) -> String {
        let mut s = format!(
            "measured {} of {} GPU container(s) ({} of {} container(s))",
            self.gpu_measured, self.gpu_containers, self.measured, self.containers
        );
        if self.unmatched > 0 {
            s.push_str(&format!(
                "; {} of {} measured entr{} match nothing in the repository: {}",
                self.unmatched,
                self.entries,
                if self.entries == 1 { "y" } else { "ies" },
                self.unmatched_named().join(", ")
            ));
            if self.unmatched > NAMED {
                s.push_str(&format!(", ... ({} more)", self.unmatched - NAMED));
            }
        }
        s
    }

    /// The first few unmatched entries, as `[cluster:]namespace/Kind/name/container`.
    pub fn unmatched_named(&self) -> Vec<String> {
        self.unmatched_first
            .iter()
            .map(|k| {
                let cluster = k
                    .cluster
                    .as_deref()
                    .map_or(String::new(), |c| format!("{c}:"));
                format!(
                    "{cluster}{}/{}/{}/{}",
                    k.namespace, k.kind, k.name, k.container
                )
            })
            .collect()
    }

    /// A warning when the figures cover fewer than half of the repository's GPU containers
    /// (of its containers when none gets GPUs): likely another cluster's, namespace's or
    /// window's.
    pub fn warning(&self) -> Option<String> {
        // Figures of nodes alone (a snapshot for FIT001) measure no container: nothing to
        // doubt about whose containers they are.
        if self.entries == 0 {
            return None;
        }
        let (n, of, what) = if self.gpu_containers > 0 {
            (self.gpu_measured, self.gpu_containers, "GPU containers")
        } else {
            (self.measured, self.containers, "containers")
        };
        (of > 0 && n * 2 < of).then(|| {
            format!(
                "the measurements cover {n} of the repository's {of} {what}, fewer than half: \
                 are they from this cluster, with its namespaces and names?"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(cluster: Option<&str>, name: &str) -> ContainerKey {
        ContainerKey {
            cluster: cluster.map(str::to_string),
            namespace: "ml".into(),
            kind: "Deployment".into(),
            name: name.into(),
            container: "c".into(),
        }
    }

    #[test]
    fn coverage_counts_the_repository_and_names_what_matches_nothing() {
        let mut set = UsageSet {
            source: "snapshot m.json".into(),
            ..UsageSet::default()
        };
        for n in ["a", "x", "y", "z", "w"] {
            set.containers.insert(k(Some("prod"), n), Usage::default());
        }
        // The repository names no cluster: the one named cluster's figures are its.
        let repo = [
            (k(None, "a"), true),
            (k(None, "b"), true),
            (k(None, "c"), true),
            (k(None, "d"), false),
        ];
        let c = set.coverage(repo.iter().map(|(k, g)| (k, *g)));
        assert_eq!(
            (
                c.gpu_measured,
                c.gpu_containers,
                c.measured,
                c.containers,
                c.entries
            ),
            (1, 3, 1, 4, 5)
        );
        assert_eq!(
            c.describe(),
            "measured 1 of 3 GPU container(s) (1 of 4 container(s)); 4 of 5 measured entries match \
             nothing in the repository: prod:ml/Deployment/w/c, prod:ml/Deployment/x/c, \
             prod:ml/Deployment/y/c, ... (1 more)"
        );
        let w = c.warning().unwrap_or_default();
        assert!(
            w.contains("cover 1 of the repository's 3 GPU containers"),
            "{w}"
        );
        // Figures of nodes alone doubt nothing.
        let nodes_only = UsageSet::default().coverage(repo.iter().map(|(k, g)| (k, *g)));
        assert_eq!((nodes_only.entries, nodes_only.warning()), (0, None));
        // Half is enough; without GPU containers, all containers count.
        let half = set.coverage([(&k(None, "a"), true), (&k(None, "b"), true)]);
        assert_eq!(half.warning(), None);
        let cpu = set.coverage([(&k(None, "b"), false), (&k(None, "c"), false)]);
        assert!(cpu
            .warning()
            .is_some_and(|w| w.contains("0 of the repository's 2 containers")));
    }

    #[test]
    fn a_key_that_names_no_cluster_finds_the_one_named_cluster() {
        let key = |c: Option<&str>, name: &str| ContainerKey {
            cluster: c.map(str::to_string),
            namespace: "ml".into(),
            kind: "Deployment".into(),
            name: name.into(),
            container: "c".into(),
        };
        let mut set = UsageSet::default();
        set.containers.insert(key(None, "plain"), Usage::default());
        set.containers
            .insert(key(Some("prod"), "a"), Usage::default());
        set.containers
            .insert(key(Some("prod"), "b"), Usage::default());
        assert_eq!(set.containers.only_named_cluster(), Some("prod"));
        assert!(set.get(&key(None, "a")).is_some());
        assert!(set.get(&key(Some("prod"), "plain")).is_some());
        set.containers
            .insert(key(Some("staging"), "a"), Usage::default());
        assert_eq!(set.containers.only_named_cluster(), None);
        assert!(set.get(&key(None, "b")).is_none());
    }

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
