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
//! When a query is too expensive for the store (HTTP 422/503, errorType `execution` or
//! `timeout`, e.g. "too many samples"), it is retried once per namespace of the wanted keys, so
//! the request count grows at most with the number of namespaces.
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
use query::{fmt_duration, join_limited, Metric, OwnerQuery, Query, QueryPlan};

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
    /// Too expensive for the whole store: worth retrying per namespace.
    fn is_too_big(&self) -> bool {
        match self {
            PrometheusError::Query {
                status, error_type, ..
            } => {
                matches!(*status, 422 | 503)
                    || matches!(error_type.as_str(), "execution" | "timeout")
            }
            PrometheusError::Http { status, .. } => matches!(*status, 422 | 503),
            _ => false,
        }
    }
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
    let namespaces: Vec<String> = wanted_set
        .iter()
        .map(|k| k.namespace.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    // 1. Owner maps.
    let mut owners = Owners::default();
    for q in [OwnerQuery::Pod, OwnerQuery::ReplicaSet, OwnerQuery::Job] {
        let rows = client.run(&plan, &Query::Owner(q), &namespaces)?;
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

    // 2. Usage, per (namespace, pod, container).
    let mut pods: HashMap<PodContainer, PodAcc> = HashMap::new();
    for m in Metric::ALL {
        let rows = client.run(&plan, &Query::Metric(m), &namespaces)?;
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
        for row in client.run(&plan, &Query::Gpu(g), &namespaces)? {
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
    let mut resolver = Resolver {
        owners: &owners,
        wanted: &wanted_set,
        guessed_rs: BTreeSet::new(),
        guessed_jobs: BTreeSet::new(),
    };
    let mut per_key: BTreeMap<ContainerKey, WorkloadAcc> = BTreeMap::new();
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
    // Separate queries (quantile, max, capacity) can disagree in the last float digits;
    // the statistics must stay ordered (p50 <= p99 <= max <= capacity), as snapshots require.
    for usage in out.usage.containers.values_mut() {
        usage.make_consistent();
    }
    Ok(out)
}

fn finish(
    out: &mut Collected,
    client: &mut Client,
    wanted: &BTreeSet<ContainerKey>,
    per_key: BTreeMap<ContainerKey, WorkloadAcc>,
) {
    for (key, acc) in per_key {
        if let Some(usage) = acc.into_usage() {
            out.usage.containers.insert(key, usage);
        }
    }
    out.missing = wanted
        .iter()
        .filter(|k| !out.usage.containers.contains_key(*k))
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
        assert_eq!(qs.len(), 24);
        for q in &qs {
            assert!(q.contains(r#"cluster="prod""#), "{q}");
            assert!(!q.contains("namespace=\""), "whole store: {q}");
        }
        o.window = "30m".into();
        assert!(planned_queries(&o).is_err());
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
