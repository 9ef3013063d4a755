//! What GPU verdicts free, per finding and for the run: the JSON `savings` object and the
//! human summary's savings line. A pure sum of what the findings say, so the message, the
//! finding's `frees` and the total agree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Finding, Origin};
use crate::k8s::podsets::pod_sets;
use crate::k8s::workload::{Container, Workload};

const HOURS_PER_WEEK: f64 = 168.0;

/// What following one finding frees.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frees {
    /// GPUs one pod gives back (a MIG slice frees a fraction: 0.75 for 1g.20gb on an A100).
    pub gpus_per_pod: f64,
    /// Pods that run the container, when the manifest says (`replicas`, a Job's parallelism…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pods: Option<u64>,
    /// The workload runs all the time (not a Job-like kind): GPU-hours per week apply.
    #[serde(skip)]
    pub always_on: bool,
    /// The container's place in its object, so that several findings on it count once.
    #[serde(skip)]
    pub container_path: String,
}

impl Frees {
    pub fn new(gpus_per_pod: f64, w: &Workload, c: &Container) -> Option<Frees> {
        if !gpus_per_pod.is_finite() || gpus_per_pod <= 0.0 {
            return None;
        }
        let index = w.containers.iter().position(|x| x.path == c.path);
        let pods = index.and_then(|i| {
            pod_sets(w)
                .into_iter()
                .find(|s| s.containers.contains(&i))
                .and_then(|s| s.count.known())
        });
        Some(Frees {
            gpus_per_pod,
            pods,
            always_on: !w.batch,
            container_path: c.path.clone(),
        })
    }

    /// GPUs freed over all the pods (one pod when the count is not known).
    pub fn gpus(&self) -> f64 {
        self.gpus_per_pod * self.pods.unwrap_or(1) as f64
    }

    /// GPU-hours a week, for workloads that run all the time with a known pod count.
    pub fn gpu_hours_per_week(&self) -> Option<f64> {
        (self.always_on && self.pods.is_some()).then(|| self.gpus() * HOURS_PER_WEEK)
    }
}

/// Two decimals: what a person reads, and what JSON consumers compare.
fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Amount {
    pub gpus: f64,
    pub gpu_hours_per_week: f64,
}

/// The run's total: each container counted once, with the largest of its findings' savings.
/// In a run of several clusters, namespaces are named `cluster/namespace` and each cluster has
/// its own total (`by_cluster`); `gpus` adds up devices of different clusters, which are
/// different devices.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Savings {
    pub gpus: f64,
    pub gpu_hours_per_week: f64,
    pub by_namespace: BTreeMap<String, Amount>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_cluster: BTreeMap<String, Amount>,
}

impl Savings {
    pub fn is_empty(&self) -> bool {
        self.by_namespace.is_empty()
    }

    /// `3.75 GPUs (630 GPU-hours a week; ml 3, research 0.75)`, for the summary; per cluster
    /// when there are several (`prod 3 GPU(s) (…; ml 3), staging 0.75 GPU(s) (…)`).
    pub fn describe(&self) -> String {
        if !self.by_cluster.is_empty() {
            return self
                .by_cluster
                .iter()
                .map(|(cluster, total)| {
                    let prefix = format!("{cluster}/");
                    let of_cluster = Savings {
                        gpus: total.gpus,
                        gpu_hours_per_week: total.gpu_hours_per_week,
                        by_namespace: self
                            .by_namespace
                            .iter()
                            .filter_map(|(k, a)| {
                                Some((k.strip_prefix(&prefix)?.to_string(), a.clone()))
                            })
                            .collect(),
                        by_cluster: BTreeMap::new(),
                    };
                    format!("{cluster} {}", of_cluster.describe())
                })
                .collect::<Vec<_>>()
                .join("; ");
        }
        let namespaces: Vec<String> = self
            .by_namespace
            .iter()
            .map(|(ns, a)| format!("{ns} {}", a.gpus))
            .collect();
        let hours = if self.gpu_hours_per_week > 0.0 {
            format!("{} GPU-hours a week; ", self.gpu_hours_per_week)
        } else {
            String::new()
        };
        format!("{} GPU(s) ({hours}{})", self.gpus, namespaces.join(", "))
    }
}

/// Adds up what the unsuppressed findings free; per cluster when `several` clusters run.
pub fn total(findings: &[Finding], several: bool) -> Savings {
    type Key = (Option<String>, String, String, String, String, Origin);
    let mut best: BTreeMap<Key, &Frees> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.suppression.is_none()) {
        let Some(frees) = &f.frees else { continue };
        let key = (
            f.cluster.clone().filter(|_| several),
            f.namespace.clone().unwrap_or_default(),
            f.object.kind.clone(),
            f.object.name.clone().unwrap_or_default(),
            frees.container_path.clone(),
            f.origin,
        );
        let slot = best.entry(key).or_insert(frees);
        if frees.gpus() > slot.gpus() {
            *slot = frees;
        }
    }
    let mut out = Savings::default();
    for ((cluster, ns, ..), frees) in best {
        let label = match &cluster {
            Some(c) => format!("{c}/{ns}"),
            None => ns,
        };
        let a = out.by_namespace.entry(label).or_default();
        a.gpus += frees.gpus();
        a.gpu_hours_per_week += frees.gpu_hours_per_week().unwrap_or(0.0);
        if let Some(c) = cluster {
            let t = out.by_cluster.entry(c).or_default();
            t.gpus += frees.gpus();
            t.gpu_hours_per_week += frees.gpu_hours_per_week().unwrap_or(0.0);
        }
    }
    for a in out.by_namespace.values_mut() {
        out.gpus += a.gpus;
        out.gpu_hours_per_week += a.gpu_hours_per_week;
        a.gpus = round2(a.gpus);
        a.gpu_hours_per_week = round2(a.gpu_hours_per_week);
    }
    for t in out.by_cluster.values_mut() {
        t.gpus = round2(t.gpus);
        t.gpu_hours_per_week = round2(t.gpu_hours_per_week);
    }
    out.gpus = round2(out.gpus);
    out.gpu_hours_per_week = round2(out.gpu_hours_per_week);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frees(gpus: f64, pods: Option<u64>, always_on: bool, path: &str) -> Frees {
        Frees {
            gpus_per_pod: gpus,
            pods,
            always_on,
            container_path: path.into(),
        }
    }

    #[test]
    fn per_finding_figures() {
        let f = frees(0.75, Some(2), true, "$");
        assert_eq!(f.gpus(), 1.5);
        assert_eq!(f.gpu_hours_per_week(), Some(252.0));
        assert_eq!(frees(0.75, None, true, "$").gpu_hours_per_week(), None);
        assert_eq!(frees(2.0, Some(3), false, "$").gpu_hours_per_week(), None);
        assert_eq!(frees(2.0, None, false, "$").gpus(), 2.0);
    }
}
