//! Live usage from the Prometheus HTTP API (also Thanos, Mimir, VictoriaMetrics).
//!
//! [`collect`] sends a FIXED set of instant queries (POST `/api/v1/query`, form-encoded), each
//! covering the whole store (narrowed only by the user's selector): the number of requests does
//! not depend on how many workloads are wanted. Results are per (namespace, pod, container);
//! the owner maps of kube-state-metrics (`kube_pod_owner`, `kube_replicaset_owner`,
//! `kube_job_owner`, taken over the whole window so that every ReplicaSet of every rollout and
//! every Job of a CronJob is seen) turn pods into workloads client side:
//!
//! * Deployment -> ReplicaSet -> Pod, CronJob -> Job -> Pod;
//! * StatefulSet, DaemonSet, Job, and custom resources owning their pods directly (PyTorchJob,
//!   RayCluster, ...: the key's kind is the owner's kind);
//! * a pod without an owner is keyed as kind `Pod`.
//!
//! A workload container's statistic is the maximum over its pods of the per-pod statistic; its
//! `samples` and `oom_kills` are sums over its pods, and `history_seconds` spans from the first
//! sample of any of its pods to the last. `memory_limit_bytes` is the largest memory limit of
//! its pods that were OOMKilled (of all its pods when none was), from kube-state-metrics'
//! `kube_pod_container_resource_limits{resource="memory"}`: the limit a kill hit.
//!
//! When a query is too expensive for the store (HTTP 503 or errorType `timeout`, or a 422 that
//! names a limit, e.g. "too many samples"), it is retried once per namespace of the wanted
//! keys, a namespace refused again once per wanted workload in it (its pods by name, from
//! `kube_pod_owner`), and a workload refused again once per pod: a query is sent at most
//! 1 + namespaces + wanted workloads + their pods times. Every figure is per pod, so the parts
//! combine exactly. Any other refusal
//! (a 422 "vector cannot contain metrics with the same labelset") is the query's error.
//!
//! A pod of a wanted workload without container-level cAdvisor series (K3s exporting pod
//! cgroups only) is measured from its pod cgroup when its workload has one container (9 more
//! queries, sent only when there is such a pod); a note names those workloads, and those whose
//! containers the pod cgroup cannot tell apart.
//!
//! dcgm-exporter series may carry `exported_namespace`/`exported_pod`/`exported_container`
//! (scraped without `honorLabels`); those take precedence over the plain labels everywhere.
//!
//! The bearer token is sent as `Authorization: Bearer ...` and is scrubbed from every error
//! message; `Debug` of [`PrometheusOptions`] redacts it. No redirect is followed (the token and
//! the custom headers would go with it to whatever host it names): a 3xx answer is an error
//! naming the redacted `Location`. A URL is only ever shown through [`redact_url`] (user info
//! and every query value replaced). An answer is read through a byte cap
//! ([`DEFAULT_MAX_BODY_BYTES`], `--prometheus-max-body`) and refused past it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

mod aggregate;
mod client;
pub mod gpu_queries;
mod query;

pub use client::redact_url;

use super::usage::{ContainerKey, UsageSet};
use aggregate::{Owners, PodAcc, PodContainer, Resolver, WorkloadAcc};
pub(crate) use client::is_sensitive_header;
use client::Client;
use gpu_queries::{GpuQuery, PodGpu};
use query::{fmt_duration, join_limited, Metric, OwnerQuery, Query, QueryPlan, Splits};

/// Default per-request timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Largest answer accepted by default, per query (a big cluster's result vectors can be tens
/// of MiB; the answer is held, then parsed, so memory is a small multiple of this).
pub const DEFAULT_MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;

/// How to reach Prometheus and what to ask for.
#[derive(Clone)]
pub struct PrometheusOptions {
    /// Base URL, e.g. `https://prometheus.example:9090` or `https://mimir/prometheus`.
    pub url: String,
    /// Extra request headers, e.g. `("X-Scope-OrgID", "tenant-1")`.
    pub headers: Vec<(String, String)>,
    /// Sent as `Authorization: Bearer <token>`; never shown.
    pub bearer_token: Option<String>,
    /// PEM file of root certificates to trust INSTEAD of the built-in (Mozilla) roots.
    pub ca_file: Option<PathBuf>,
    /// Per-request timeout (the whole request: connect, send, wait, read).
    pub timeout: Duration,
    /// Extra label matchers added to every selector, e.g. `cluster="prod"`.
    pub selector: Option<String>,
    /// Look-back window as a Prometheus duration, e.g. `14d`.
    pub window: String,
    /// Largest answer read per query, in bytes; a larger one is an error.
    pub max_body_bytes: u64,
}

impl PrometheusOptions {
    /// Options with no auth, no selector and [`DEFAULT_TIMEOUT`].
    pub fn new(url: impl Into<String>, window: impl Into<String>) -> Self {
        PrometheusOptions {
            url: url.into(),
            headers: Vec::new(),
            bearer_token: None,
            ca_file: None,
            timeout: DEFAULT_TIMEOUT,
            selector: None,
            window: window.into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl fmt::Debug for PrometheusOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let shown = if is_sensitive_header(k) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("PrometheusOptions")
            .field("url", &redact_url(&self.url))
            .field("headers", &headers)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("ca_file", &self.ca_file)
            .field("timeout", &self.timeout)
            .field("selector", &self.selector)
            .field("window", &self.window)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

/// What [`collect`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Collected {
    /// Usage of the wanted keys that have data (only those).
    pub usage: UsageSet,
    /// Wanted keys with no data at all, sorted.
    pub missing: Vec<ContainerKey>,
    /// HTTP requests sent (including failed ones and per-namespace retries).
    pub requests: usize,
    /// `warnings` (and `infos`) returned by Prometheus, deduplicated, in order of arrival.
    pub warnings: Vec<String>,
    /// What the client itself noticed: queries split by namespace, missing kube-state-metrics
    /// series, ReplicaSets/Jobs resolved by name because their owner series was absent.
    pub notes: Vec<String>,
}

/// Why [`collect`] failed. No variant ever contains the bearer token.
#[derive(Debug, thiserror::Error)]
pub enum PrometheusError {
    #[error("invalid Prometheus options: {0}")]
    Options(String),
    #[error("cannot use CA file {}: {reason}", path.display())]
    CaFile { path: PathBuf, reason: String },
    #[error("cannot reach Prometheus at {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("Prometheus at {url} did not answer within {} (timeout)", fmt_duration(*timeout))]
    Timeout { url: String, timeout: Duration },
    #[error("TLS error talking to Prometheus at {url}: {reason}")]
    Tls { url: String, reason: String },
    #[error("Prometheus at {url} answered HTTP {status}: {body}")]
    Http {
        url: String,
        status: u16,
        body: String,
    },
    #[error("Prometheus at {url} rejected the query ({error_type}, HTTP {status}): {message}\n  query: {query}")]
    Query {
        url: String,
        status: u16,
        error_type: String,
        message: String,
        query: String,
    },
    #[error("Prometheus at {url} answered a redirect (HTTP {status}) to {location}: gpulint follows no redirect (the token and headers would go with it); pass the final URL")]
    Redirect {
        url: String,
        status: u16,
        location: String,
    },
    #[error("Prometheus at {url} sent an answer larger than {} MiB; narrow the query (--prometheus-selector) or raise --prometheus-max-body", limit / (1024 * 1024))]
    TooLarge { url: String, limit: u64 },
    #[error("unexpected answer from Prometheus at {url}: {reason}\n  query: {query}")]
    BadResponse {
        url: String,
        query: String,
        reason: String,
    },
}

impl PrometheusError {
    /// Too expensive for the whole store: worth retrying per namespace. A 422 (`execution`)
    /// is also what a wrong query gets ("vector cannot contain metrics with the same
    /// labelset", "many-to-many matching"): only one that names a limit is a size problem;
    /// any other is reported as the query error it is.
    fn is_too_big(&self) -> bool {
        match self {
            PrometheusError::Query {
                status,
                error_type,
                message,
                ..
            } => {
                *status == 503
                    || error_type == "timeout"
                    || ((*status == 422 || error_type == "execution") && names_a_limit(message))
            }
            PrometheusError::Http { status, body, .. } => {
                *status == 503 || (*status == 422 && names_a_limit(body))
            }
            _ => false,
        }
    }
}

/// Whether a store's refusal is about size: Prometheus' `--query.max-samples` ("query
/// processing would load too many samples into memory"), VictoriaMetrics' `-search.max*`
/// flags ("cannot select more than -search.maxSamplesPerQuery", "the number of matching
/// timeseries exceeds"), Thanos/Mimir/Cortex limits ("exceeded the maximum", "limit"), or a
/// timeout.
fn names_a_limit(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "too many samples",
        "-search.max",
        "exceeds",
        "exceeded",
        "limit",
        "timeout",
        "timed out",
    ]
    .iter()
    .any(|p| m.contains(p))
}

/// The PromQL that [`collect`] sends (whole-store form, in order), e.g. for `--explain`.
/// Per-namespace retries wrap each one as `(… namespace="ns" …) or (… exported_namespace="ns" …)`.
pub fn planned_queries(opts: &PrometheusOptions) -> Result<Vec<String>, PrometheusError> {
    let plan = QueryPlan::new(opts)?;
    Ok(Query::ALL.iter().map(|q| plan.promql(q, "")).collect())
}

/// Ask Prometheus for the usage of `wanted` over `opts.window`, evaluated now.
pub fn collect(
    opts: &PrometheusOptions,
    wanted: &[ContainerKey],
) -> Result<Collected, PrometheusError> {
    let mut client = Client::new(opts)?;
    let plan = QueryPlan::new(opts)?;
    let window = plan.window.clone();
    // One query set answers for the store as a whole: its figures name no cluster (a per-cluster
    // selector is how a run tells clusters apart), so the repository's clusters are set aside.
    let wanted_set: BTreeSet<ContainerKey> = wanted
        .iter()
        .map(|k| ContainerKey {
            cluster: None,
            ..k.clone()
        })
        .collect();
    let mut out = Collected {
        usage: UsageSet {
            window: Some(window.clone()),
            source: format!("prometheus {}", client.url_shown),
            ..UsageSet::default()
        },
        ..Collected::default()
    };

    if wanted_set.is_empty() {
        return Ok(out);
    }
    let mut splits = Splits {
        namespaces: wanted_set
            .iter()
            .map(|k| k.namespace.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        workloads: BTreeMap::new(),
    };

    // 1. Owner maps.
    let mut owners = Owners::default();
    for q in [OwnerQuery::Pod, OwnerQuery::ReplicaSet, OwnerQuery::Job] {
        let rows = client.run(&plan, &Query::Owner(q), &splits)?;
        owners.add(q, &rows);
    }
    if owners.pods.is_empty() {
        out.notes.push(
            "kube_pod_owner returned no series (is kube-state-metrics scraped, and does the \
             selector match it?): no pod can be attributed to a workload"
                .to_string(),
        );
        finish(&mut out, &mut client, &wanted_set, BTreeMap::new());
        return Ok(out);
    }

    let mut resolver = Resolver {
        owners: &owners,
        wanted: &wanted_set,
        guessed_rs: BTreeSet::new(),
        guessed_jobs: BTreeSet::new(),
    };
    // The pods of each wanted workload, for a namespace too big for one query.
    let mut all_pods: Vec<&(String, String)> = owners.pods.keys().collect();
    all_pods.sort();
    let mut by_workload: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    for (ns, pod) in all_pods {
        if let Some((kind, name)) = resolver.resolve(ns, pod) {
            if resolver.wants_workload(ns, &kind, &name) {
                by_workload
                    .entry((ns.clone(), kind, name))
                    .or_default()
                    .push(pod.clone());
            }
        }
    }
    for ((ns, kind, name), pods) in by_workload {
        splits
            .workloads
            .entry(ns)
            .or_default()
            .push((kind, name, pods));
    }

    // 2. Usage, per (namespace, pod, container).
    let mut pods: HashMap<PodContainer, PodAcc> = HashMap::new();
    for m in Metric::ALL {
        let rows = client.run(&plan, &Query::Metric(m), &splits)?;
        for row in rows {
            let Some(pc) = row.pod_container() else {
                continue;
            };
            pods.entry(pc).or_default().add(m, row.value);
        }
    }

    // 2b. GPU sizing: per GPU, and the serving engines' KV cache joined by namespace and pod.
    let mut kv_by_pod: HashMap<(String, String), PodGpu> = HashMap::new();
    for g in GpuQuery::ALL {
        for row in client.run(&plan, &Query::Gpu(g), &splits)? {
            if g.per_pod() {
                let pod = (
                    row.effective("namespace").to_string(),
                    row.effective("pod").to_string(),
                );
                kv_by_pod
                    .entry(pod)
                    .or_default()
                    .add(g, &row.labels, row.value);
            } else if let Some(pc) = row.pod_container() {
                pods.entry(pc)
                    .or_default()
                    .gpu
                    .add(g, &row.labels, row.value);
            }
        }
    }
    for (pc, acc) in pods.iter_mut() {
        if let Some(kv) = kv_by_pod.get(&(pc.namespace.clone(), pc.pod.clone())) {
            // The engine's metrics name the pod, not the container: they go to its GPU ones.
            if acc.gpu.has_gpus() || acc.gpu_mem.iter().any(Option::is_some) {
                acc.gpu.add_kv(kv);
            }
        }
    }

    // 3. Pods -> workloads.
    let mut per_key: BTreeMap<ContainerKey, WorkloadAcc> = BTreeMap::new();
    // 3a. Pods of wanted workloads without container-level cAdvisor series (K3s exporting pod
    // cgroups only): their pod cgroup, 9 more queries, only when there is such a pod.
    let pod_level = pod_level_usage(&mut client, &plan, &splits, &pods)?;
    let mut by_pod_level: BTreeSet<String> = BTreeSet::new();
    let mut not_told_apart: BTreeSet<String> = BTreeSet::new();
    for ((kind, name, ns), accs) in pod_level {
        let containers: Vec<&ContainerKey> = wanted_set
            .iter()
            .filter(|k| k.namespace == ns && k.kind == kind && k.name == name)
            .collect();
        let shown = format!("{ns}/{kind}/{name}");
        match containers.as_slice() {
            [only] => {
                let acc = per_key.entry((*only).clone()).or_default();
                for a in &accs {
                    acc.add(a);
                }
                by_pod_level.insert(shown);
            }
            _ => {
                not_told_apart.insert(format!("{shown} ({} containers)", containers.len()));
            }
        }
    }
    if !by_pod_level.is_empty() {
        out.notes.push(format!(
            "no container-level cAdvisor series (as on K3s without container stats): memory and \
             CPU of {} single-container workload(s) measured from the pod's cgroup, which also \
             counts its sidecars and pause container if any: {}",
            by_pod_level.len(),
            join_limited(&by_pod_level, 10)
        ));
    }
    if !not_told_apart.is_empty() {
        out.notes.push(format!(
            "no container-level cAdvisor series (as on K3s without container stats) for {} \
             workload(s) with several containers: the pod's cgroup cannot tell its containers \
             apart, so their memory and CPU are not measured: {}",
            not_told_apart.len(),
            join_limited(&not_told_apart, 10)
        ));
    }
    // Pods resolved through kube_pod_owner are known to kube-state-metrics, so their OOM count
    // is defined: 0 when no OOMKilled termination was seen.
    let mut pods_sorted: Vec<(&PodContainer, &PodAcc)> = pods.iter().collect();
    pods_sorted.sort_by(|a, b| a.0.cmp(b.0));
    for (pc, acc) in pods_sorted {
        let Some((kind, name)) = resolver.resolve(&pc.namespace, &pc.pod) else {
            continue;
        };
        let key = ContainerKey {
            cluster: None,
            namespace: pc.namespace.clone(),
            kind,
            name,
            container: pc.container.clone(),
        };
        if !wanted_set.contains(&key) {
            continue;
        }
        per_key.entry(key).or_default().add(acc);
    }
    if !resolver.guessed_rs.is_empty() {
        out.notes.push(format!(
            "no kube_replicaset_owner series for {} ReplicaSet(s); attributed to Deployments by name: {}",
            resolver.guessed_rs.len(),
            join_limited(&resolver.guessed_rs, 10)
        ));
    }
    if !resolver.guessed_jobs.is_empty() {
        out.notes.push(format!(
            "no kube_job_owner series for {} Job(s); attributed to CronJobs by name: {}",
            resolver.guessed_jobs.len(),
            join_limited(&resolver.guessed_jobs, 10)
        ));
    }
    // The cluster's nodes, for cluster fit (src/metrics/nodes.rs): two more queries; optional.
    let nodes = super::nodes::collect::<PrometheusError>(&plan.selector, &mut |q| {
        let rows = client.query(q)?;
        Ok(rows.into_iter().map(|r| (r.labels, r.value)).collect())
    });
    match nodes {
        Ok(nodes) => out.usage.nodes = nodes,
        Err(e) => out
            .notes
            .push(format!("nodes not measured (FIT001 not judged): {e}")),
    }
    finish(&mut out, &mut client, &wanted_set, per_key);
    Ok(out)
}

/// Pod-cgroup figures per workload (kind, name, namespace), one per pod.
type PodLevel = BTreeMap<(String, String, String), Vec<PodAcc>>;

/// The pod-cgroup figures of the pods of wanted workloads that have no container-level
/// cAdvisor series, per workload (kind, name, namespace); no query when there is none.
fn pod_level_usage(
    client: &mut Client,
    plan: &QueryPlan,
    splits: &Splits,
    pods: &HashMap<PodContainer, PodAcc>,
) -> Result<PodLevel, PrometheusError> {
    let measured: BTreeSet<(&str, &str)> = pods
        .iter()
        .filter(|(_, acc)| acc.has_cadvisor())
        .map(|(pc, _)| (pc.namespace.as_str(), pc.pod.as_str()))
        .collect();
    let mut unmeasured: BTreeMap<(String, String), (&str, &str)> = BTreeMap::new();
    for (ns, workloads) in &splits.workloads {
        for (kind, name, pods) in workloads {
            for pod in pods {
                if !measured.contains(&(ns.as_str(), pod.as_str())) {
                    unmeasured.insert((ns.clone(), pod.clone()), (kind, name));
                }
            }
        }
    }
    if unmeasured.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut per_pod: BTreeMap<(String, String), PodAcc> = BTreeMap::new();
    for m in Metric::CADVISOR {
        for row in client.run(plan, &Query::PodLevel(m), splits)? {
            let pod = (
                row.effective("namespace").to_string(),
                row.effective("pod").to_string(),
            );
            if unmeasured.contains_key(&pod) {
                per_pod.entry(pod).or_default().add(m, row.value);
            }
        }
    }
    let mut out = PodLevel::new();
    for (pod, acc) in per_pod {
        if let Some((kind, name)) = unmeasured.get(&pod) {
            out.entry((kind.to_string(), name.to_string(), pod.0.clone()))
                .or_default()
                .push(acc);
        }
    }
    Ok(out)
}

fn finish(
    out: &mut Collected,
    client: &mut Client,
    wanted: &BTreeSet<ContainerKey>,
    per_key: BTreeMap<ContainerKey, WorkloadAcc>,
) {
    out.usage.containers = per_key
        .into_iter()
        .filter_map(|(key, acc)| {
            let mut usage = acc.into_usage()?;
            // Separate queries (quantile, max, capacity) can disagree in the last float digits;
            // the statistics must stay ordered (p50 <= p99 <= max <= capacity), as snapshots
            // require.
            usage.make_consistent();
            Some((key, usage))
        })
        .collect();
    out.missing = wanted
        .iter()
        .filter(|k| !out.usage.containers.contains_key(k))
        .cloned()
        .collect();
    out.requests = client.requests;
    out.warnings = std::mem::take(&mut client.warnings);
    out.notes.append(&mut client.notes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planned_queries_are_fixed_and_carry_the_selector() {
        let mut o = PrometheusOptions::new("http://prom:9090", "14d");
        o.selector = Some(r#"cluster="prod""#.into());
        let qs = planned_queries(&o).expect("valid options");
        assert_eq!(qs.len(), 25);
        for q in &qs {
            assert!(q.contains(r#"cluster="prod""#), "{q}");
            assert!(!q.contains("namespace=\""), "whole store: {q}");
        }
        o.window = "30m".into();
        assert!(planned_queries(&o).is_err());
    }

    #[test]
    fn only_a_refusal_that_names_a_limit_is_split() {
        let refused = |status: u16, error_type: &str, message: &str| PrometheusError::Query {
            url: "http://prom:9090".into(),
            status,
            error_type: error_type.into(),
            message: message.into(),
            query: "q".into(),
        };
        let too_many =
            "query processing would load too many samples into memory in query execution";
        assert!(refused(422, "execution", too_many).is_too_big());
        assert!(refused(503, "timeout", "query timed out in expression evaluation").is_too_big());
        assert!(refused(
            422,
            "execution",
            "cannot select more than -search.maxSamplesPerQuery=1e9 samples"
        )
        .is_too_big());
        let same = "vector cannot contain metrics with the same labelset";
        assert!(!refused(422, "execution", same).is_too_big());
        assert!(!refused(400, "bad_data", "parse error").is_too_big());
        // A bad request is not too big, whatever words its text holds (an echo of the form).
        assert!(!refused(400, "bad_data", "query=up&timeout=54000ms").is_too_big());
    }

    #[test]
    fn debug_redacts() {
        let mut o = PrometheusOptions::new("https://user:hunter22@prom:9090", "14d");
        o.bearer_token = Some("tok-very-secret".into());
        o.headers = vec![
            ("X-Scope-OrgID".into(), "team-a".into()),
            ("X-Api-Key".into(), "key-very-secret".into()),
        ];
        let d = format!("{o:?}");
        assert!(!d.contains("tok-very-secret"), "{d}");
        assert!(!d.contains("key-very-secret"), "{d}");
        assert!(!d.contains("hunter22"), "{d}");
        assert!(d.contains("team-a"), "{d}");
    }
}
