//! The GPU-sizing queries of `gpulint snapshot` / `--prometheus`: per-GPU engine activity (GPU
//! count, busy GPUs, model), the P99 of engine activity, and the serving engine's KV-cache usage.
//! Five fixed queries, whatever the number of workloads; `prometheus` runs them with the
//! others and folds their rows in here, per pod, then per workload.
//!
//! No query puts two metric names under one function that drops `__name__`: vLLM 0.9.2–0.10.x
//! exports `vllm:gpu_cache_usage_perc` and `vllm:kv_cache_usage_perc` with identical labels,
//! and `quantile_over_time({__name__=~"a|b"}[w])` is then refused by Prometheus ("vector
//! cannot contain metrics with the same labelset"). Each name is its own term, joined by `or`.

use std::collections::BTreeMap;

use crate::metrics::usage::{GpuUtilization, KvCache, Usage};

/// A GPU is busy when its average engine activity over the window is at least this.
pub const BUSY_THRESHOLD: f64 = 0.05;

/// The KV-cache series of the serving engines (`rules/engines.yaml`'s `kv_cache_metrics`, a
/// test keeps them the same), 0 to 1; the current name first (`or` keeps the left side where a
/// pod exports both). NVIDIA NIM exports `gpu_cache_usage_perc` at `/v1/metrics`
/// (docs.nvidia.com/nim/large-language-models/latest/observability.html).
const KV_CACHE_METRICS: [&str; 4] = [
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
    "gpu_cache_usage_perc",
];

/// dcgm-exporter's labels of a GPU (a MIG instance adds `GPU_I_PROFILE` and `GPU_I_ID` to its
/// parent GPU's `UUID`).
const GPU_LABELS: &str = "UUID, gpu, modelName, GPU_I_PROFILE, GPU_I_ID";

/// The label that says which signal a per-GPU row is (engine activity or utilisation).
const SIGNAL: &str = "gpulint_signal";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuQuery {
    /// Per GPU (UUID, gpu, modelName) and pod container: average engine activity, and average
    /// utilisation / 100 as the fallback, told apart by `gpulint_signal`.
    PerGpuAvg,
    /// Per pod container: the P99 of engine activity, the busiest GPU.
    EngineP99,
    /// Per pod: the P99 of the KV-cache usage, the fullest engine.
    KvP99,
    /// Per pod: the max of the KV-cache usage.
    KvMax,
    /// Per GPU and pod container: the first and last sample time, told apart by
    /// `gpulint_signal`, so that a pod recreated on other GPUs is not counted as holding both.
    PerGpuSpan,
}

impl GpuQuery {
    pub const ALL: [GpuQuery; 5] = [
        GpuQuery::PerGpuAvg,
        GpuQuery::EngineP99,
        GpuQuery::KvP99,
        GpuQuery::KvMax,
        GpuQuery::PerGpuSpan,
    ];

    /// Whether the rows identify a pod only (no container label): joined by namespace and pod.
    pub fn per_pod(self) -> bool {
        matches!(self, GpuQuery::KvP99 | GpuQuery::KvMax)
    }
}

/// The PromQL of `q`; `user` is the matchers to add (without braces), `w` the window, `by` the
/// pod-container labels, `s` the subquery step.
pub fn promql(q: GpuQuery, user: &str, w: &str, s: &str, by: &str) -> String {
    let engine = format!("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{user}}}");
    let util = format!("DCGM_FI_DEV_GPU_UTIL{{{user}}}");
    let fb_used = format!("DCGM_FI_DEV_FB_USED{{{user}}}");
    // One term per name: `f` applied to each engine's series, joined by `or`.
    let kv = |f: &dyn Fn(&str) -> String| {
        KV_CACHE_METRICS
            .iter()
            .map(|name| f(&format!("{name}{{{user}}}")))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    let pod = "namespace, pod, exported_namespace, exported_pod";
    match q {
        GpuQuery::PerGpuAvg => format!(
            "max by ({by}, {GPU_LABELS}, {SIGNAL}) (\
             label_replace(avg_over_time({engine}[{w}]), \"{SIGNAL}\", \"engine\", \"\", \"\") \
             or label_replace(avg_over_time({util}[{w}]) / 100, \"{SIGNAL}\", \"util\", \"\", \"\"))"
        ),
        GpuQuery::EngineP99 => {
            format!("max by ({by}) (quantile_over_time(0.99, {engine}[{w}]))")
        }
        GpuQuery::KvP99 => format!(
            "max by ({pod}) ({})",
            kv(&|m| format!("quantile_over_time(0.99, {m}[{w}])"))
        ),
        GpuQuery::KvMax => format!(
            "max by ({pod}) ({})",
            kv(&|m| format!("max_over_time({m}[{w}])"))
        ),
        // The times of the framebuffer series, else of the activity ones (an exporter
        // configured without `DCGM_FI_DEV_FB_USED`): `timestamp` drops the name, so `or`
        // keeps one series per GPU and pod.
        GpuQuery::PerGpuSpan => {
            let seen = format!("(timestamp({fb_used}) or timestamp({util}) or timestamp({engine}))");
            format!(
                "min by ({by}, {GPU_LABELS}, {SIGNAL}) (\
                 label_replace(min_over_time({seen}[{w}:{s}]), \"{SIGNAL}\", \"first\", \"\", \"\")) \
                 or max by ({by}, {GPU_LABELS}, {SIGNAL}) (\
                 label_replace(max_over_time({seen}[{w}:{s}]), \"{SIGNAL}\", \"last\", \"\", \"\"))"
            )
        }
    }
}

fn fold_max(slot: &mut Option<f64>, v: f64) {
    *slot = Some(slot.map_or(v, |c| c.max(v)));
}

fn fold_min(slot: &mut Option<f64>, v: f64) {
    *slot = Some(slot.map_or(v, |c| c.min(v)));
}

/// One GPU of a pod container.
#[derive(Clone, Debug, Default)]
struct GpuSeen {
    engine_avg: Option<f64>,
    util_avg: Option<f64>,
    /// First and last sample time (unix seconds) of its framebuffer series for this pod (else
    /// of its activity series).
    first: Option<f64>,
    last: Option<f64>,
}

impl GpuSeen {
    /// The activity that decides "busy": engine activity, else utilisation.
    fn activity(&self) -> Option<f64> {
        self.engine_avg.or(self.util_avg)
    }

    fn busy(&self) -> bool {
        self.activity().is_some_and(|a| a >= BUSY_THRESHOLD)
    }

    /// Whether the pod held this GPU at `t`; a GPU without times is taken as held throughout.
    fn held_at(&self, t: f64) -> bool {
        self.first.is_none_or(|f| f <= t) && self.last.is_none_or(|l| t <= l)
    }
}

/// GPU facts of one pod container.
#[derive(Clone, Debug, Default)]
pub struct PodGpu {
    gpus: BTreeMap<String, GpuSeen>,
    model: Option<String>,
    engine_p99: Option<f64>,
    kv: [Option<f64>; 2],
}

impl PodGpu {
    /// Folds in one row of `q` (`labels` as Prometheus returned them).
    pub fn add(&mut self, q: GpuQuery, labels: &BTreeMap<String, String>, value: f64) {
        if !value.is_finite() {
            return;
        }
        let label = |k: &str| labels.get(k).map(String::as_str).unwrap_or("");
        match q {
            GpuQuery::PerGpuAvg | GpuQuery::PerGpuSpan => {
                // dcgm-exporter names a GPU by UUID; `gpu` (the index) where UUID is dropped; a
                // MIG instance by its parent's UUID and its instance id.
                let id = match (label("UUID"), label("gpu")) {
                    ("", "") => return,
                    ("", index) => format!("gpu{index}"),
                    (uuid, _) => uuid.to_string(),
                };
                let id = match label("GPU_I_ID") {
                    "" => id,
                    instance => format!("{id}/{instance}"),
                };
                let seen = self.gpus.entry(id).or_default();
                match label(SIGNAL) {
                    "engine" => fold_max(&mut seen.engine_avg, value),
                    "first" => fold_min(&mut seen.first, value),
                    "last" => fold_max(&mut seen.last, value),
                    _ => fold_max(&mut seen.util_avg, value),
                }
                let model = label("modelName");
                if !model.is_empty() && self.model.is_none() {
                    self.model = Some(model.to_string());
                }
            }
            GpuQuery::EngineP99 => fold_max(&mut self.engine_p99, value),
            GpuQuery::KvP99 => fold_max(&mut self.kv[0], value),
            GpuQuery::KvMax => fold_max(&mut self.kv[1], value),
        }
    }

    /// The pod-level KV-cache figures of `other` (a row without a container).
    pub fn add_kv(&mut self, other: &PodGpu) {
        for (d, s) in self.kv.iter_mut().zip(other.kv) {
            if let Some(v) = s {
                fold_max(d, v);
            }
        }
    }

    /// The most GPUs the pod held at one time, and the most of them busy at one time: a pod
    /// (same name) recreated on other GPUs holds one set after the other, not their union.
    fn held_at_once(&self) -> (u64, u64) {
        let (mut most, mut most_busy) = (0u64, 0u64);
        // The counts only change where a GPU's span starts; a GPU without one starts at -inf.
        for t in self.measured().map(|g| g.first.unwrap_or(f64::MIN)) {
            let held = self.measured().filter(|g| g.held_at(t));
            let (n, busy) = held.fold((0u64, 0u64), |(n, b), g| (n + 1, b + u64::from(g.busy())));
            most = most.max(n);
            most_busy = most_busy.max(busy);
        }
        (most, most_busy)
    }

    /// The GPUs with an activity signal (a framebuffer span alone counts no GPU).
    fn measured(&self) -> impl Iterator<Item = &GpuSeen> {
        self.gpus.values().filter(|g| g.activity().is_some())
    }

    pub fn has_gpus(&self) -> bool {
        self.measured().next().is_some() || self.engine_p99.is_some()
    }

    pub fn has_usage(&self) -> bool {
        self.has_gpus() || self.kv.iter().any(Option::is_some)
    }
}

/// GPU facts of a workload container: the largest pod, the busiest GPU.
#[derive(Clone, Debug, Default)]
pub struct WorkloadGpu {
    model: Option<String>,
    count: Option<u64>,
    used: Option<u64>,
    engine: [Option<f64>; 2],
    kv: [Option<f64>; 2],
}

impl WorkloadGpu {
    pub fn add(&mut self, p: &PodGpu) {
        if p.measured().next().is_some() {
            let (count, busy) = p.held_at_once();
            self.count = Some(self.count.map_or(count, |c| c.max(count)));
            self.used = Some(self.used.map_or(busy, |u| u.max(busy)));
        }
        for g in p.gpus.values() {
            if let Some(v) = g.engine_avg {
                fold_max(&mut self.engine[0], v);
            }
        }
        if let Some(v) = p.engine_p99 {
            fold_max(&mut self.engine[1], v);
        }
        for (d, s) in self.kv.iter_mut().zip(p.kv) {
            if let Some(v) = s {
                fold_max(d, v);
            }
        }
        if self.model.is_none() {
            self.model.clone_from(&p.model);
        }
    }

    /// Writes the snapshot's GPU-sizing fields.
    pub fn apply(self, u: &mut Usage) {
        u.gpu_model = self.model;
        u.gpu_count = self.count;
        u.gpus_used = self.used;
        u.gpu_engine_active = self
            .engine
            .iter()
            .any(Option::is_some)
            .then_some(GpuUtilization {
                avg: self.engine[0],
                p99: self.engine[1],
            });
        u.kv_cache_usage = self.kv.iter().any(Option::is_some).then_some(KvCache {
            p99: self.kv[0],
            max: self.kv[1],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn busy_gpus_count_engine_activity_first() {
        let mut pod = PodGpu::default();
        let gpu = |uuid: &'static str, signal: &'static str| {
            labels(&[
                ("UUID", uuid),
                ("modelName", "NVIDIA H100 80GB HBM3"),
                (SIGNAL, signal),
            ])
        };
        // GPU-a busy by engine activity; GPU-b idle by engine activity although its coarse
        // utilisation says 40%; GPU-c only has utilisation, 3%: idle.
        pod.add(GpuQuery::PerGpuAvg, &gpu("GPU-a", "engine"), 0.31);
        pod.add(GpuQuery::PerGpuAvg, &gpu("GPU-b", "engine"), 0.01);
        pod.add(GpuQuery::PerGpuAvg, &gpu("GPU-b", "util"), 0.40);
        pod.add(GpuQuery::PerGpuAvg, &gpu("GPU-c", "util"), 0.03);
        pod.add(GpuQuery::PerGpuAvg, &labels(&[(SIGNAL, "engine")]), 0.9);
        pod.add(GpuQuery::EngineP99, &labels(&[]), 0.55);
        let mut w = WorkloadGpu::default();
        w.add(&pod);
        let mut u = Usage::default();
        w.apply(&mut u);
        assert_eq!(u.gpu_count, Some(3));
        assert_eq!(u.gpus_used, Some(1));
        assert_eq!(u.gpu_model.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(
            u.gpu_engine_active,
            Some(GpuUtilization {
                avg: Some(0.31),
                p99: Some(0.55)
            })
        );
        assert_eq!(u.kv_cache_usage, None);
    }

    #[test]
    fn every_engines_kv_cache_metric_is_queried() {
        let mut table: Vec<&str> = crate::k8s::engine::table()
            .iter()
            .flat_map(|e| e.kv_cache_metrics.iter().map(String::as_str))
            .collect();
        table.sort_unstable();
        table.dedup();
        let mut queried = KV_CACHE_METRICS.to_vec();
        queried.sort_unstable();
        assert_eq!(table, queried);
    }

    #[test]
    fn the_queries_are_fixed_and_carry_the_selector() {
        let q = promql(GpuQuery::KvP99, "cluster=\"prod\"", "14d", "21m", "pod");
        assert_eq!(
            q,
            "max by (namespace, pod, exported_namespace, exported_pod) (\
             quantile_over_time(0.99, vllm:kv_cache_usage_perc{cluster=\"prod\"}[14d]) \
             or quantile_over_time(0.99, vllm:gpu_cache_usage_perc{cluster=\"prod\"}[14d]) \
             or quantile_over_time(0.99, sglang:token_usage{cluster=\"prod\"}[14d]) \
             or quantile_over_time(0.99, gpu_cache_usage_perc{cluster=\"prod\"}[14d]))"
        );
        // No function that drops `__name__` is ever given two names at once.
        for g in GpuQuery::ALL {
            assert!(
                !promql(g, "", "14d", "21m", "pod").contains("__name__"),
                "{g:?}"
            );
        }
        assert!(promql(GpuQuery::PerGpuAvg, "", "14d", "21m", "pod")
            .contains("DCGM_FI_PROF_GR_ENGINE_ACTIVE{}[14d]"));
    }

    #[test]
    fn a_pod_recreated_on_other_gpus_holds_one_set_at_a_time() {
        let mut pod = PodGpu::default();
        let row = |uuid: &str, signal: &str| labels(&[("UUID", uuid), (SIGNAL, signal)]);
        // Four GPUs from t=0 to 100 (two busy), then four others from 200 to 300 (two busy).
        for (i, from) in [0.0, 200.0].into_iter().enumerate() {
            for g in 0..4 {
                let uuid = format!("GPU-{i}{g}");
                let activity = if g < 2 { 0.6 } else { 0.01 };
                pod.add(GpuQuery::PerGpuAvg, &row(&uuid, "engine"), activity);
                pod.add(GpuQuery::PerGpuSpan, &row(&uuid, "first"), from);
                pod.add(GpuQuery::PerGpuSpan, &row(&uuid, "last"), from + 100.0);
            }
        }
        // A framebuffer span alone is no GPU; a MIG instance is its own.
        pod.add(GpuQuery::PerGpuSpan, &row("GPU-fb-only", "first"), 0.0);
        let mut w = WorkloadGpu::default();
        w.add(&pod);
        let mut u = Usage::default();
        w.apply(&mut u);
        assert_eq!((u.gpu_count, u.gpus_used), (Some(4), Some(2)));

        let mut mig = PodGpu::default();
        for id in ["1", "2"] {
            let l = labels(&[("UUID", "GPU-a"), ("GPU_I_ID", id), (SIGNAL, "util")]);
            mig.add(GpuQuery::PerGpuAvg, &l, 0.0);
        }
        assert_eq!(mig.held_at_once(), (2, 0));
    }
}
