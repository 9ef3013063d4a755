//! The PromQL of a collection: the fixed plan of whole-store instant queries (usage series,
//! owner maps, GPU sizing), selectors and per-namespace retries, and the window's durations.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::gpu_queries::{self, GpuQuery};
use super::{PrometheusError, PrometheusOptions};
use crate::metrics::selector::{promql_string, Selector};

/// Label sets that identify a pod container, plain and dcgm-exporter's `exported_*`.
const POD_LABELS: &str =
    "namespace, pod, container, exported_namespace, exported_pod, exported_container";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OwnerQuery {
    Pod,
    ReplicaSet,
    Job,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Metric {
    MemP50,
    MemP99,
    MemMax,
    MemSamples,
    MemFirst,
    MemLast,
    CpuP50,
    CpuP99,
    CpuMax,
    GpuMemP99,
    GpuMemMax,
    GpuMemCapacity,
    GpuUtilAvg,
    GpuUtilP99,
    OomSeen,
    OomCount,
    MemLimit,
}

impl Metric {
    /// The cAdvisor metrics, which a pod-level cgroup also has.
    pub(super) const CADVISOR: [Metric; 9] = [
        Metric::MemP50,
        Metric::MemP99,
        Metric::MemMax,
        Metric::MemSamples,
        Metric::MemFirst,
        Metric::MemLast,
        Metric::CpuP50,
        Metric::CpuP99,
        Metric::CpuMax,
    ];

    pub(super) const ALL: [Metric; 17] = [
        Metric::MemP50,
        Metric::MemP99,
        Metric::MemMax,
        Metric::MemSamples,
        Metric::MemFirst,
        Metric::MemLast,
        Metric::CpuP50,
        Metric::CpuP99,
        Metric::CpuMax,
        Metric::GpuMemP99,
        Metric::GpuMemMax,
        Metric::GpuMemCapacity,
        Metric::GpuUtilAvg,
        Metric::GpuUtilP99,
        Metric::OomSeen,
        Metric::OomCount,
        Metric::MemLimit,
    ];
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Query {
    Owner(OwnerQuery),
    Metric(Metric),
    /// GPU sizing (src/metrics/gpu_queries.rs).
    Gpu(GpuQuery),
    /// A cAdvisor metric of the pod-level cgroup (`container=""`), for pods that have no
    /// container-level series (K3s): sent only when such a pod belongs to a wanted workload.
    PodLevel(Metric),
}

impl Query {
    pub(super) const ALL: [Query; 25] = [
        Query::Owner(OwnerQuery::Pod),
        Query::Owner(OwnerQuery::ReplicaSet),
        Query::Owner(OwnerQuery::Job),
        Query::Metric(Metric::MemP50),
        Query::Metric(Metric::MemP99),
        Query::Metric(Metric::MemMax),
        Query::Metric(Metric::MemSamples),
        Query::Metric(Metric::MemFirst),
        Query::Metric(Metric::MemLast),
        Query::Metric(Metric::CpuP50),
        Query::Metric(Metric::CpuP99),
        Query::Metric(Metric::CpuMax),
        Query::Metric(Metric::GpuMemP99),
        Query::Metric(Metric::GpuMemMax),
        Query::Metric(Metric::GpuMemCapacity),
        Query::Metric(Metric::GpuUtilAvg),
        Query::Metric(Metric::GpuUtilP99),
        Query::Metric(Metric::OomSeen),
        Query::Metric(Metric::OomCount),
        Query::Metric(Metric::MemLimit),
        Query::Gpu(GpuQuery::PerGpuAvg),
        Query::Gpu(GpuQuery::EngineP99),
        Query::Gpu(GpuQuery::KvP99),
        Query::Gpu(GpuQuery::KvMax),
        Query::Gpu(GpuQuery::PerGpuSpan),
    ];
}

pub(super) struct QueryPlan {
    pub(super) window: String,
    /// Resolution of the subqueries over timestamps, GPU capacity and OOM restarts.
    step: String,
    /// The user's matchers, without braces (may be empty).
    pub(super) selector: String,
}

impl QueryPlan {
    pub(super) fn new(opts: &PrometheusOptions) -> Result<QueryPlan, PrometheusError> {
        let window = opts.window.trim().to_string();
        let window_secs = parse_duration(&window)
            .ok_or_else(|| {
                PrometheusError::Options(format!(
                    "window {window:?} is not a Prometheus duration (e.g. 14d, 36h, 1w)"
                ))
            })?
            .as_secs_f64();
        if window_secs < 3600.0 {
            return Err(PrometheusError::Options(format!(
                "window {window:?} is shorter than an hour"
            )));
        }
        Ok(QueryPlan {
            step: subquery_step(window_secs),
            window,
            selector: parse_selector(opts.selector.as_deref())?,
        })
    }

    /// The PromQL of `q`, with `extra` (e.g. `namespace="a"`) added to every selector.
    pub(super) fn promql(&self, q: &Query, extra: &str) -> String {
        let w = &self.window;
        let s = &self.step;
        let user = join_matchers(&[&self.selector, extra]);
        let cadv = match q {
            // The pod's cgroup: no container, and no image (the pause container has one).
            Query::PodLevel(_) => {
                join_matchers(&[r#"container="""#, r#"image="""#, r#"pod!="""#, &user])
            }
            // cAdvisor: skip the pod-level cgroup ("") and the pause container ("POD").
            _ => join_matchers(&[r#"container!="""#, r#"container!="POD""#, &user]),
        };
        let mem = format!("container_memory_working_set_bytes{{{cadv}}}");
        let cpu = format!("rate(container_cpu_usage_seconds_total{{{cadv}}}[5m])");
        let oom_reason = format!(
            "kube_pod_container_status_last_terminated_reason{{{}}}",
            join_matchers(&[r#"reason="OOMKilled""#, &user])
        );
        let restarts = format!("kube_pod_container_status_restarts_total{{{user}}}");
        // The limit the container ran with: the one an OOM kill hit.
        let mem_limit = format!(
            "kube_pod_container_resource_limits{{{}}}",
            join_matchers(&[r#"resource="memory""#, &user])
        );
        let fb_used = format!("DCGM_FI_DEV_FB_USED{{{user}}}");
        let fb_free = format!("DCGM_FI_DEV_FB_FREE{{{user}}}");
        let util = format!("DCGM_FI_DEV_GPU_UTIL{{{user}}}");
        let util_whole = format!(
            "DCGM_FI_DEV_GPU_UTIL{{{}}}",
            join_matchers(&[r#"GPU_I_PROFILE="""#, &user])
        );
        let engine = format!("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{user}}}");
        let by = POD_LABELS;
        match q {
            Query::Owner(OwnerQuery::Pod) => format!(
                "max by (namespace, pod, exported_namespace, exported_pod, owner_kind, owner_name, owner_is_controller) \
                 (max_over_time(kube_pod_owner{{{user}}}[{w}]))"
            ),
            Query::Owner(OwnerQuery::ReplicaSet) => format!(
                "max by (namespace, exported_namespace, replicaset, owner_kind, owner_name) \
                 (max_over_time(kube_replicaset_owner{{{user}}}[{w}]))"
            ),
            Query::Owner(OwnerQuery::Job) => format!(
                "max by (namespace, exported_namespace, job_name, owner_kind, owner_name) \
                 (max_over_time(kube_job_owner{{{user}}}[{w}]))"
            ),
            Query::Gpu(g) => gpu_queries::promql(*g, &user, w, s, by),
            Query::Metric(m) | Query::PodLevel(m) => match m {
                Metric::MemP50 => {
                    format!("max by ({by}) (quantile_over_time(0.5, {mem}[{w}]))")
                }
                Metric::MemP99 => {
                    format!("max by ({by}) (quantile_over_time(0.99, {mem}[{w}]))")
                }
                Metric::MemMax => format!("max by ({by}) (max_over_time({mem}[{w}]))"),
                Metric::MemSamples => format!("sum by ({by}) (count_over_time({mem}[{w}]))"),
                Metric::MemFirst => {
                    format!("min by ({by}) (min_over_time(timestamp({mem})[{w}:{s}]))")
                }
                Metric::MemLast => {
                    format!("max by ({by}) (max_over_time(timestamp({mem})[{w}:{s}]))")
                }
                Metric::CpuP50 => {
                    format!("max by ({by}) (quantile_over_time(0.5, {cpu}[{w}:1m]))")
                }
                Metric::CpuP99 => {
                    format!("max by ({by}) (quantile_over_time(0.99, {cpu}[{w}:1m]))")
                }
                Metric::CpuMax => format!("max by ({by}) (max_over_time({cpu}[{w}:1m]))"),
                Metric::GpuMemP99 => {
                    format!("max by ({by}) (quantile_over_time(0.99, {fb_used}[{w}]))")
                }
                Metric::GpuMemMax => format!("max by ({by}) (max_over_time({fb_used}[{w}]))"),
                Metric::GpuMemCapacity => {
                    format!("max by ({by}) (max_over_time(({fb_used} + {fb_free})[{w}:{s}]))")
                }
                // Utilisation first, except on a MIG instance (`GPU_I_PROFILE` set), where
                // dcgm-exporter reports it as 0 and only engine activity is true; `or` keeps
                // the left side of each GPU.
                Metric::GpuUtilAvg => format!(
                    "max by ({by}) (avg_over_time({util_whole}[{w}]) / 100 \
                     or avg_over_time({engine}[{w}]) or avg_over_time({util}[{w}]) / 100)"
                ),
                Metric::GpuUtilP99 => format!(
                    "max by ({by}) (quantile_over_time(0.99, {util_whole}[{w}]) / 100 \
                     or quantile_over_time(0.99, {engine}[{w}]) \
                     or quantile_over_time(0.99, {util}[{w}]) / 100)"
                ),
                Metric::OomSeen => format!("max by ({by}) (max_over_time({oom_reason}[{w}]))"),
                Metric::MemLimit => format!("max by ({by}) (max_over_time({mem_limit}[{w}]))"),
                Metric::OomCount => format!(
                    "sum by ({by}) (sum_over_time((increase({restarts}[{s}]) \
                     and on ({by}) {oom_reason} > 0)[{w}:{s}]))"
                ),
            },
        }
    }

    /// `q` restricted to namespace `ns`: by `namespace`, or by `exported_namespace` for series
    /// relabelled at scrape time (dcgm-exporter, kube-state-metrics without honorLabels).
    pub(super) fn promql_in_namespace(&self, q: &Query, ns: &str) -> String {
        let v = promql_string(ns);
        format!(
            "({}) or ({})",
            self.promql(q, &format!("namespace={v}")),
            self.promql(q, &format!("exported_namespace={v}"))
        )
    }
}

/// How a query too big for the store is split: by namespace, then a namespace by wanted
/// workload (kind, name and its pods' names, from `kube_pod_owner`).
pub(super) struct Splits {
    pub(super) namespaces: Vec<String>,
    pub(super) workloads: BTreeMap<String, Vec<(String, String, Vec<String>)>>,
}

impl QueryPlan {
    /// `q` restricted to the pods `pods` of namespace `ns` (plain or `exported_*` labels).
    pub(super) fn promql_in_pods(&self, q: &Query, ns: &str, pods: &[String]) -> String {
        let v = promql_string(ns);
        // The names are the store's data: every character but [A-Za-z0-9_-] matched literally.
        let literal = |p: &String| {
            p.chars().fold(String::new(), |mut out, c| {
                if !(c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                    out.push('\\');
                }
                out.push(c);
                out
            })
        };
        let re = pods.iter().map(literal).collect::<Vec<_>>().join("|");
        let re = promql_string(&re);
        format!(
            "({}) or ({})",
            self.promql(q, &format!("namespace={v},pod=~{re}")),
            self.promql(q, &format!("exported_namespace={v},exported_pod=~{re}"))
        )
    }
}

fn join_matchers(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// The selector as matchers rebuilt from their parsed form (`{cluster="prod",}` becomes
/// `cluster="prod"`), never the text as given: a selector that is not a list of label
/// matchers is an error before any query is sent.
fn parse_selector(sel: Option<&str>) -> Result<String, PrometheusError> {
    let text = sel.unwrap_or("");
    Selector::parse(text)
        .map(|s| s.to_string())
        .map_err(|e| PrometheusError::Options(format!("selector {text:?}: {e}")))
}

/// Subquery resolution: about 1000 points over the window, whole minutes, at least 5m (the
/// default lookback, and enough samples for `increase(...[step])` at usual scrape intervals).
fn subquery_step(window_secs: f64) -> String {
    let minutes = (window_secs / 60.0 / 1000.0).ceil().max(5.0);
    format!("{minutes:.0}m")
}

/// A Prometheus duration: one or more `<integer><unit>` with units ms, s, m, h, d, w, y.
fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut total_ms: u128 = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return None;
        }
        let n: u128 = s.get(start..i)?.parse().ok()?;
        let ustart = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit_ms: u128 = match s.get(ustart..i)? {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 604_800_000,
            "y" => 31_536_000_000,
            _ => return None,
        };
        total_ms = total_ms.checked_add(n.checked_mul(unit_ms)?)?;
    }
    let ms = u64::try_from(total_ms).ok()?;
    if ms == 0 {
        return None;
    }
    Some(Duration::from_millis(ms))
}

pub(super) fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

pub(super) fn join_limited(items: &BTreeSet<String>, limit: usize) -> String {
    let mut s = items
        .iter()
        .take(limit)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > limit {
        s.push_str(&format!(", ... ({} more)", items.len() - limit));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("14d"), Some(Duration::from_secs(14 * 86400)));
        assert_eq!(
            parse_duration("1d12h"),
            Some(Duration::from_secs(36 * 3600))
        );
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        for bad in ["", "14", "d", "14x", "-1d", "1.5d", "0d"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(subquery_step(14.0 * 86400.0), "21m");
        assert_eq!(subquery_step(3.0 * 86400.0), "5m");
        assert_eq!(subquery_step(3600.0), "5m");
        assert_eq!(subquery_step(60.0 * 86400.0), "87m");
    }

    #[test]
    fn selectors_and_promql_strings() {
        assert_eq!(
            parse_selector(Some(" {cluster=\"prod\",} ")).expect("valid"),
            "cluster=\"prod\""
        );
        assert_eq!(parse_selector(None).expect("empty"), "");
        // Pasted text never reaches a query: what is not a matcher list is an error.
        assert!(parse_selector(Some(r#"x="y"}[14d]) or vector(1) or up{x="y""#)).is_err());
        assert_eq!(promql_string("a\"b\\c"), r#""a\"b\\c""#);
    }

    #[test]
    fn promql_covers_the_whole_store() {
        let plan = QueryPlan {
            window: "14d".into(),
            step: "21m".into(),
            selector: r#"cluster="prod""#.into(),
        };
        let q = plan.promql(&Query::Metric(Metric::MemP99), "");
        assert_eq!(
            q,
            "max by (namespace, pod, container, exported_namespace, exported_pod, exported_container) \
             (quantile_over_time(0.99, container_memory_working_set_bytes{container!=\"\",container!=\"POD\",cluster=\"prod\"}[14d]))"
        );
        let split = plan.promql_in_namespace(&Query::Metric(Metric::GpuMemCapacity), "ml");
        assert!(split.contains(r#"DCGM_FI_DEV_FB_USED{cluster="prod",namespace="ml"}"#));
        assert!(split.contains(r#"DCGM_FI_DEV_FB_FREE{cluster="prod",exported_namespace="ml"}"#));
        let pods = ["llm-7c9d-a.b".to_string(), "x+y".to_string()];
        let per_pods = plan.promql_in_pods(&Query::Metric(Metric::MemMax), "ml", &pods);
        assert!(
            per_pods.contains(r#"namespace="ml",pod=~"llm-7c9d-a\\.b|x\\+y""#)
                && per_pods
                    .contains(r#"exported_namespace="ml",exported_pod=~"llm-7c9d-a\\.b|x\\+y""#),
            "{per_pods}"
        );
        let plain = QueryPlan {
            selector: String::new(),
            ..plan
        };
        assert!(plain
            .promql(&Query::Owner(OwnerQuery::Pod), "")
            .contains("kube_pod_owner{}[14d]"));
    }
}
