//! From rows to workloads: the owner maps (pod -> ReplicaSet/Job -> Deployment/CronJob), and the
//! per-pod then per-workload folding of the series into `Usage` (maximum over pods, sums of
//! samples and OOM kills, the limit a kill hit).

use std::collections::{BTreeSet, HashMap};

use super::client::Row;
use super::gpu_queries::{PodGpu, WorkloadGpu};
use super::query::{Metric, OwnerQuery};
use crate::metrics::usage::{ContainerKey, GpuMemory, GpuUtilization, Stats, Usage};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct PodContainer {
    pub(super) namespace: String,
    pub(super) pod: String,
    pub(super) container: String,
}

#[derive(Default)]
pub(super) struct Owners {
    /// (namespace, pod) -> (owner kind, owner name); controller owners win.
    pub(super) pods: HashMap<(String, String), (String, String, bool)>,
    replicasets: HashMap<(String, String), (String, String)>,
    jobs: HashMap<(String, String), (String, String)>,
}

impl Owners {
    pub(super) fn add(&mut self, q: OwnerQuery, rows: &[Row]) {
        for row in rows {
            let ns = row.effective("namespace").to_string();
            let kind = row.label("owner_kind").to_string();
            let name = row.label("owner_name").to_string();
            match q {
                OwnerQuery::Pod => {
                    let pod = row.effective("pod").to_string();
                    if pod.is_empty() {
                        continue;
                    }
                    let controller = row.label("owner_is_controller") == "true";
                    let entry = self.pods.entry((ns, pod));
                    match entry {
                        std::collections::hash_map::Entry::Vacant(v) => {
                            v.insert((kind, name, controller));
                        }
                        std::collections::hash_map::Entry::Occupied(mut o) => {
                            let cur = o.get();
                            // A controller owner beats a plain one; "<none>" loses to anything.
                            let better = (controller && !cur.2)
                                || (is_none_owner(&cur.0) && !is_none_owner(&kind));
                            if better {
                                o.insert((kind, name, controller));
                            }
                        }
                    }
                }
                OwnerQuery::ReplicaSet => {
                    let rs = row.label("replicaset").to_string();
                    if !rs.is_empty() {
                        self.replicasets.entry((ns, rs)).or_insert((kind, name));
                    }
                }
                OwnerQuery::Job => {
                    let job = row.label("job_name").to_string();
                    if !job.is_empty() {
                        self.jobs.entry((ns, job)).or_insert((kind, name));
                    }
                }
            }
        }
    }
}

fn is_none_owner(kind: &str) -> bool {
    kind.is_empty() || kind == "<none>"
}

pub(super) struct Resolver<'a> {
    pub(super) owners: &'a Owners,
    pub(super) wanted: &'a BTreeSet<ContainerKey>,
    pub(super) guessed_rs: BTreeSet<String>,
    pub(super) guessed_jobs: BTreeSet<String>,
}

impl Resolver<'_> {
    pub(super) fn wants_workload(&self, ns: &str, kind: &str, name: &str) -> bool {
        self.wanted
            .iter()
            .any(|k| k.namespace == ns && k.kind == kind && k.name == name)
    }

    /// The workload (kind, name) owning pod `ns/pod`.
    pub(super) fn resolve(&mut self, ns: &str, pod: &str) -> Option<(String, String)> {
        let (kind, name, _) = self.owners.pods.get(&(ns.to_string(), pod.to_string()))?;
        if is_none_owner(kind) {
            return Some(("Pod".to_string(), pod.to_string()));
        }
        let key = (ns.to_string(), name.clone());
        match kind.as_str() {
            "ReplicaSet" => match self.owners.replicasets.get(&key) {
                Some((k, n)) if !is_none_owner(k) => Some((k.clone(), n.clone())),
                Some(_) => Some(("ReplicaSet".to_string(), name.clone())),
                None => {
                    // `<deployment>-<pod-template-hash>`
                    if let Some((dep, _)) = name.rsplit_once('-') {
                        if self.wants_workload(ns, "Deployment", dep) {
                            self.guessed_rs.insert(format!("{ns}/{name}"));
                            return Some(("Deployment".to_string(), dep.to_string()));
                        }
                    }
                    Some(("ReplicaSet".to_string(), name.clone()))
                }
            },
            "Job" => match self.owners.jobs.get(&key) {
                Some((k, n)) if !is_none_owner(k) => Some((k.clone(), n.clone())),
                Some(_) => Some(("Job".to_string(), name.clone())),
                None => {
                    // `<cronjob>-<scheduled minute>`
                    if let Some((cj, suffix)) = name.rsplit_once('-') {
                        if !suffix.is_empty()
                            && suffix.bytes().all(|b| b.is_ascii_digit())
                            && self.wants_workload(ns, "CronJob", cj)
                        {
                            self.guessed_jobs.insert(format!("{ns}/{name}"));
                            return Some(("CronJob".to_string(), cj.to_string()));
                        }
                    }
                    Some(("Job".to_string(), name.clone()))
                }
            },
            _ => Some((kind.clone(), name.clone())),
        }
    }
}

fn fold_max(slot: &mut Option<f64>, v: f64) {
    *slot = Some(slot.map_or(v, |c| c.max(v)));
}

fn fold_min(slot: &mut Option<f64>, v: f64) {
    *slot = Some(slot.map_or(v, |c| c.min(v)));
}

fn fold_sum(slot: &mut Option<f64>, v: f64) {
    *slot = Some(slot.unwrap_or(0.0) + v);
}

/// Per (namespace, pod, container).
#[derive(Default)]
pub(super) struct PodAcc {
    mem: [Option<f64>; 3],
    samples: Option<f64>,
    first: Option<f64>,
    last: Option<f64>,
    cpu: [Option<f64>; 3],
    pub(super) gpu_mem: [Option<f64>; 3],
    gpu_util: [Option<f64>; 2],
    oom_seen: Option<f64>,
    oom_count: Option<f64>,
    mem_limit: Option<f64>,
    pub(super) gpu: PodGpu,
}

const MIB: f64 = 1024.0 * 1024.0;

impl PodAcc {
    pub(super) fn add(&mut self, m: Metric, v: f64) {
        match m {
            Metric::MemP50 => fold_max(&mut self.mem[0], v),
            Metric::MemP99 => fold_max(&mut self.mem[1], v),
            Metric::MemMax => fold_max(&mut self.mem[2], v),
            Metric::MemSamples => fold_sum(&mut self.samples, v),
            Metric::MemFirst => fold_min(&mut self.first, v),
            Metric::MemLast => fold_max(&mut self.last, v),
            Metric::CpuP50 => fold_max(&mut self.cpu[0], v),
            Metric::CpuP99 => fold_max(&mut self.cpu[1], v),
            Metric::CpuMax => fold_max(&mut self.cpu[2], v),
            Metric::GpuMemP99 => fold_max(&mut self.gpu_mem[0], v * MIB),
            Metric::GpuMemMax => fold_max(&mut self.gpu_mem[1], v * MIB),
            Metric::GpuMemCapacity => fold_max(&mut self.gpu_mem[2], v * MIB),
            Metric::GpuUtilAvg => fold_max(&mut self.gpu_util[0], v),
            Metric::GpuUtilP99 => fold_max(&mut self.gpu_util[1], v),
            Metric::OomSeen => fold_max(&mut self.oom_seen, v),
            Metric::OomCount => fold_sum(&mut self.oom_count, v),
            Metric::MemLimit => fold_max(&mut self.mem_limit, v),
        }
    }

    /// OOM kills of this pod container: counted restarts after an OOMKilled termination, at
    /// least 1 when an OOMKilled last-termination was seen.
    fn oom_kills(&self) -> u64 {
        let counted = self.oom_count.unwrap_or(0.0).round().max(0.0);
        let seen = if self.oom_seen.unwrap_or(0.0) > 0.0 {
            1.0
        } else {
            0.0
        };
        // Bounded by f64 -> u64 saturation; counts are small.
        counted.max(seen) as u64
    }

    /// Whether cAdvisor measured this container (memory or CPU).
    pub(super) fn has_cadvisor(&self) -> bool {
        self.samples.is_some()
            || self.mem.iter().any(Option::is_some)
            || self.cpu.iter().any(Option::is_some)
    }

    fn has_usage(&self) -> bool {
        self.samples.is_some()
            || self.mem.iter().any(Option::is_some)
            || self.cpu.iter().any(Option::is_some)
            || self.gpu_mem.iter().any(Option::is_some)
            || self.gpu_util.iter().any(Option::is_some)
            || self.gpu.has_usage()
    }
}

/// Per workload container.
#[derive(Default)]
pub(super) struct WorkloadAcc {
    mem: [Option<f64>; 3],
    samples: Option<f64>,
    first: Option<f64>,
    last: Option<f64>,
    cpu: [Option<f64>; 3],
    pub(super) gpu_mem: [Option<f64>; 3],
    gpu_util: [Option<f64>; 2],
    oom_kills: u64,
    /// Largest memory limit of the pods that were OOMKilled, and of all pods.
    mem_limit_killed: Option<f64>,
    mem_limit_any: Option<f64>,
    has_usage: bool,
    pub(super) gpu: WorkloadGpu,
}

impl WorkloadAcc {
    pub(super) fn add(&mut self, p: &PodAcc) {
        let max_all = |dst: &mut [Option<f64>], src: &[Option<f64>]| {
            for (d, s) in dst.iter_mut().zip(src) {
                if let Some(v) = s {
                    fold_max(d, *v);
                }
            }
        };
        max_all(&mut self.mem, &p.mem);
        max_all(&mut self.cpu, &p.cpu);
        max_all(&mut self.gpu_mem, &p.gpu_mem);
        max_all(&mut self.gpu_util, &p.gpu_util);
        if let Some(v) = p.samples {
            fold_sum(&mut self.samples, v);
        }
        if let Some(v) = p.first {
            fold_min(&mut self.first, v);
        }
        if let Some(v) = p.last {
            fold_max(&mut self.last, v);
        }
        let kills = p.oom_kills();
        self.oom_kills = self.oom_kills.saturating_add(kills);
        if let Some(v) = p.mem_limit {
            // A pod's limit is fixed for its life, so a killed pod's limit is the one the kill
            // hit; a later pod with a raised limit (the fix) does not move the OOM bump.
            fold_max(&mut self.mem_limit_any, v);
            if kills > 0 {
                fold_max(&mut self.mem_limit_killed, v);
            }
        }
        self.has_usage |= p.has_usage();
        self.gpu.add(&p.gpu);
    }

    pub(super) fn into_usage(self) -> Option<Usage> {
        if !self.has_usage {
            return None;
        }
        let stats = |a: [Option<f64>; 3]| {
            a.iter().any(Option::is_some).then_some(Stats {
                p50: a[0],
                p99: a[1],
                max: a[2],
            })
        };
        let history = match (self.first, self.last) {
            (Some(f), Some(l)) if l >= f => Some(l - f),
            _ => None,
        };
        let mut usage =
            Usage {
                samples: self.samples.map(|s| s.round().max(0.0) as u64),
                history_seconds: history,
                memory_bytes: stats(self.mem),
                cpu_cores: stats(self.cpu),
                gpu_memory_bytes: self
                    .gpu_mem
                    .iter()
                    .any(Option::is_some)
                    .then_some(GpuMemory {
                        p99: self.gpu_mem[0],
                        max: self.gpu_mem[1],
                        capacity: self.gpu_mem[2],
                    }),
                gpu_utilization: self.gpu_util.iter().any(Option::is_some).then_some(
                    GpuUtilization {
                        avg: self.gpu_util[0],
                        p99: self.gpu_util[1],
                    },
                ),
                oom_kills: Some(self.oom_kills),
                // The limit an OOM kill hit when there was one, else the largest limit. A limit of 0
                // is "none"; no series at all means none either.
                memory_limit_bytes: self
                    .mem_limit_killed
                    .or(self.mem_limit_any)
                    .filter(|l| *l > 0.0),
                ..Usage::default()
            };
        self.gpu.apply(&mut usage);
        Some(usage)
    }
}
