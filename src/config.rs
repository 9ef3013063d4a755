//! `.gpulint.yaml`: rule severities and enablement, excludes, extra GPU resource names, extra
//! workload kinds, the Kueue requirement, path-scoped ignores and Helm charts (`charts:`; the
//! `helm` binary is never named here). Decoding is strict: an unknown
//! key or a wrong type is an error with its file, line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::k8s::catalog::KindEntry;
use crate::metrics::measure::QueryDefaults;
use crate::metrics::recommend::{MigStrategy, Policy};
use crate::rules::{Rule, Severity};
use crate::source::decode::{self, DecodeError, Fields};
use crate::source::discover::{Excludes, CONFIG_FILE_NAME};
use crate::source::helm::ChartEntry;
use crate::source::yaml::{Node, ScalarStyle, Stream};

#[derive(Clone, Debug, Default)]
pub struct RuleSetting {
    pub enabled: Option<bool>,
    pub severity: Option<Severity>,
}

#[derive(Clone, Debug)]
pub struct IgnoreEntry {
    pub pattern: String,
    pub globs: GlobSet,
    pub rules: Vec<Rule>,
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Where the config was read from; relative globs are relative to its folder.
    pub path: Option<PathBuf>,
    pub rules: BTreeMap<Rule, RuleSetting>,
    pub exclude: Vec<String>,
    exclude_set: Option<GlobSet>,
    pub gpu_resources: Vec<String>,
    /// DRA device classes whose devices are GPUs, besides the built-in ones.
    pub gpu_device_classes: Vec<String>,
    pub workloads: Vec<KindEntry>,
    pub kueue_required: bool,
    pub ignore: Vec<IgnoreEntry>,
    /// Thresholds of the recommendation and the measured rules (`policy:`).
    pub policy: Policy,
    /// The live metrics source (`prometheus:`); command-line flags take precedence.
    pub prometheus: Option<PrometheusConfig>,
    /// The namespace of manifests that name none (`namespace:`; Kubernetes' `default` if unset).
    pub default_namespace: Option<String>,
    /// Per-path namespaces (`namespaces: [{path, namespace}]`), first match wins.
    pub path_namespaces: Vec<(GlobSet, String)>,
    /// Helm releases to render (`charts:`), besides those Argo CD and Flux manifests declare.
    pub charts: Vec<ChartEntry>,
    /// A metrics snapshot in the repository (`metrics:`, relative to the config's folder),
    /// resolved and checked to be inside the repository; `--metrics`/`--prometheus` win.
    pub metrics: Option<PathBuf>,
    /// Where `metrics:` is written (byte offset), for errors.
    metrics_at: usize,
    /// Snapshots per cluster (`metrics: {prod: metrics/prod.json}`), resolved like `metrics:`,
    /// with where each file is written (byte offset), for errors.
    pub cluster_metrics: Vec<(String, PathBuf, usize)>,
    /// The clusters and the paths each applies (`clusters:`), before any GitOps declaration.
    pub clusters: Vec<crate::deploy::ClusterEntry>,
    /// Private models (`models:`), in `rules/models.yaml`'s format; they come before the
    /// built-in ones.
    pub models: Vec<crate::k8s::model::Model>,
}

/// `prometheus:` in the config: how to query, never where. The URL and the token come from the
/// command line or the environment only (`url:` and `token_file:` are refused): a repository
/// file must not choose the host that receives a secret, nor a file whose content is sent.
#[derive(Clone, Debug, Default)]
pub struct PrometheusConfig {
    pub window: Option<String>,
    pub headers: Vec<(String, String)>,
    /// A CA file in the repository (relative to the config's folder), resolved and checked to be
    /// a regular file inside it by [`Config::parse`].
    pub ca: Option<PathBuf>,
    /// Where `ca:` is written (byte offset), for errors.
    ca_at: usize,
    pub timeout_seconds: Option<u64>,
    /// Label matchers for every query, e.g. `cluster="prod"`.
    pub selector: Option<String>,
    /// Per-path selectors: manifests under `clusters/prod/**` are measured with `cluster="prod"`.
    pub path_selectors: Vec<PathSelector>,
    /// The label that tells the repository's clusters apart in the store (`cluster_label:`,
    /// default `cluster`, as kube-prometheus-stack's and Thanos' external labels name it): in a
    /// run of several clusters, each cluster is asked with `<label>="<its name>"`.
    pub cluster_label: Option<String>,
}

impl PrometheusConfig {
    /// How the live measuring queries, as this section says (it has no URL and no token to give).
    pub fn query_defaults(&self) -> QueryDefaults {
        QueryDefaults {
            window: self.window.clone(),
            headers: self.headers.clone(),
            ca: self.ca.clone(),
            timeout_seconds: self.timeout_seconds,
            selector: self.selector.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct PathSelector {
    pub pattern: String,
    pub globs: GlobSet,
    pub selector: String,
}

/// Headers that carry credentials: only the command line and the environment choose what
/// credentials go to Prometheus, never a file of the linted repository.
const CREDENTIAL_HEADERS: &[&str] = &["Authorization", "Proxy-Authorization", "Cookie"];

/// The headers a repository file may send: the tenant of a multi-tenant store, and nothing
/// that routes the request or carries credentials (`Host`, `X-Forwarded-*`, `Forwarded`,
/// `X-Original-URL` would let a pull request send the CI's token to another virtual host
/// behind the same proxy). `X-Scope-OrgID`: Cortex, Mimir, Loki; `THANOS-TENANT`: Thanos'
/// default `--query.tenant-header`; `AccountID`, `ProjectID`: VictoriaMetrics cluster.
pub const TENANT_HEADERS: &[&str] = &["X-Scope-OrgID", "THANOS-TENANT", "AccountID", "ProjectID"];

/// A config error, placed in its file: the first, and every other one the file holds (a user
/// fixes them all in one go, not one per run).
#[derive(Debug)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The errors after the first, in the order of the file.
    pub more: Vec<ConfigError>,
}

/// One line per error, each but the first after `error: ` (the command prints the first's).
impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )?;
        for e in &self.more {
            write!(f, "\nerror: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

fn glob_set(patterns: &[String], at: usize) -> Result<GlobSet, DecodeError> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        // Like .gitignore: `vendor/**` matches at any depth below the config's folder, and a
        // folder (`platform/trainer`, `platform/trainer/`) matches everything below it.
        let p = p.trim_end_matches('/');
        let mut variants = vec![p.to_string(), format!("**/{p}")];
        if !p.ends_with("**") {
            variants.extend([format!("{p}/**"), format!("**/{p}/**")]);
        }
        for variant in variants {
            let glob = Glob::new(&variant).map_err(|e| DecodeError {
                offset: at,
                message: format!("invalid glob {p:?}: {e}"),
            })?;
            builder.add(glob);
        }
    }
    builder.build().map_err(|e| DecodeError {
        offset: at,
        message: format!("invalid globs: {e}"),
    })
}

/// A rule id or name of the config: an unknown one is an error at its position, with the
/// closest id or name when it looks like a typo.
fn rule_id(node: &Node) -> Result<Rule, DecodeError> {
    let text = decode::string(node)?;
    Rule::parse_or_suggest(&text).map_err(|message| DecodeError {
        offset: node.span.start(),
        message: format!("{message} (see `gpulint rules`)"),
    })
}

/// Every key of `.gpulint.yaml`, by where it is (`""` the top level, `charts[]` an entry of the
/// `charts` list, `rules.<ID>` a rule's mapping): what the parser reads and an unknown key's
/// error lists, and what `tests/integration/docs.rs` holds docs/configuration.md to.
pub const CONFIG_KEYS: &[(&str, &[&str])] = &[
    ("", TOP_KEYS),
    ("rules.<ID>", RULE_KEYS),
    ("ignore[]", IGNORE_KEYS),
    ("clusters[]", CLUSTER_KEYS),
    ("charts[]", CHART_KEYS),
    ("kueue", KUEUE_KEYS),
    ("kustomize", KUSTOMIZE_KEYS),
    ("namespaces[]", NAMESPACE_KEYS),
    ("policy", POLICY_KEYS),
    ("prometheus", PROMETHEUS_KEYS),
    ("prometheus.selectors[]", SELECTOR_KEYS),
    ("workloads[]", crate::k8s::catalog::KIND_KEYS),
    ("models[]", crate::k8s::model::MODEL_KEYS),
    ("models[].mla", crate::k8s::model::MLA_KEYS),
];

/// Keys the parser knows only to refuse them with an error of their own: a repository file may
/// not name a program or where secrets go (`helm` is not among the top level's keys).
pub const REFUSED_KEYS: &[&str] = &["helm", "prometheus.url", "prometheus.token_file"];

const TOP_KEYS: &[&str] = &[
    "rules",
    "exclude",
    "ignore",
    "metrics",
    "clusters",
    "charts",
    "gpu_resources",
    "gpu_device_classes",
    "kueue",
    "kustomize",
    "namespace",
    "namespaces",
    "policy",
    "prometheus",
    "workloads",
    "models",
];
const RULE_KEYS: &[&str] = &["enabled", "severity"];
const IGNORE_KEYS: &[&str] = &["path", "rules"];
const CLUSTER_KEYS: &[&str] = &["name", "paths"];
const CHART_KEYS: &[&str] = &["path", "release", "namespace", "values", "remote"];
const KUEUE_KEYS: &[&str] = &["required"];
const KUSTOMIZE_KEYS: &[&str] = &["load_restrictor"];
const NAMESPACE_KEYS: &[&str] = &["path", "namespace"];
const POLICY_KEYS: &[&str] = &[
    "memory_margin",
    "cpu_margin",
    "oom_bump_factor",
    "memory_round_tolerance",
    "cpu_round_tolerance",
    "min_samples",
    "min_history_seconds",
    "concurrent_requests",
    "overprovision_factor",
    "cpu_far_factor",
    "gpu_underuse_threshold",
    "gpu_memory_pressure",
    "kv_cache_pressure",
    "mig_strategy",
    "guaranteed",
];
const PROMETHEUS_KEYS: &[&str] = &[
    "url",
    "token_file",
    "window",
    "headers",
    "ca",
    "timeout",
    "selector",
    "selectors",
    "cluster_label",
];
const SELECTOR_KEYS: &[&str] = &["path", "selector"];

fn decode_rule_setting(node: &Node) -> Result<RuleSetting, DecodeError> {
    if let Some(text) = node.text() {
        return match text {
            "off" | "false" => Ok(RuleSetting {
                enabled: Some(false),
                severity: None,
            }),
            "on" | "true" => Ok(RuleSetting {
                enabled: Some(true),
                severity: None,
            }),
            s => Severity::parse(s)
                .map(|sev| RuleSetting {
                    enabled: Some(true),
                    severity: Some(sev),
                })
                .ok_or_else(|| DecodeError {
                    offset: node.span.start(),
                    message: format!(
                        "invalid rule setting {s:?}: expected error, warning, info, off or {{enabled, severity}}"
                    ),
                }),
        };
    }
    let mut fields = Fields::with_keys(node, "rule setting", RULE_KEYS)?;
    let enabled = fields.bool("enabled")?;
    let severity = match fields.string_at("severity")? {
        None => None,
        Some((s, offset)) => Some(Severity::parse(&s).ok_or_else(|| DecodeError {
            offset,
            message: format!("invalid severity {s:?}: expected error, warning or info"),
        })?),
    };
    fields.finish()?;
    Ok(RuleSetting { enabled, severity })
}

fn decode_prometheus(node: &Node) -> Result<PrometheusConfig, DecodeError> {
    let mut f = Fields::with_keys(node, "`prometheus`", PROMETHEUS_KEYS)?;
    if let Some((_, offset)) = f.string_at("url")? {
        return Err(DecodeError {
            offset,
            message: "`prometheus.url`: a repository file may not name the host gpulint queries \
                      (it would receive the token and headers); pass --prometheus URL or set \
                      GPULINT_PROMETHEUS_URL (the other `prometheus:` settings still apply)"
                .into(),
        });
    }
    if let Some((_, offset)) = f.string_at("token_file")? {
        return Err(DecodeError {
            offset,
            message: "`prometheus.token_file`: a repository file may not name the token to send; \
                      pass --prometheus-token-file FILE or set GPULINT_PROMETHEUS_TOKEN"
                .into(),
        });
    }
    let ca = f.string_at("ca")?;
    let mut config = PrometheusConfig {
        window: f.string("window")?,
        ca: ca.as_ref().map(|(p, _)| PathBuf::from(p)),
        ca_at: ca.map_or(0, |(_, at)| at),
        selector: f.take("selector").map(selector).transpose()?,
        ..PrometheusConfig::default()
    };
    if let Some(t) = f.number("timeout")? {
        if !(t >= 1.0 && t.fract() == 0.0 && t < 1e9) {
            return Err(DecodeError {
                offset: node.span.start(),
                message: format!("`prometheus.timeout`: expected whole seconds >= 1, found {t}"),
            });
        }
        config.timeout_seconds = Some(t as u64);
    }
    if let Some(headers) = f.take("headers") {
        Fields::new(headers, "`prometheus.headers`")?;
        for e in headers.as_map().unwrap_or_default() {
            let name = decode::string(&e.key)?;
            if CREDENTIAL_HEADERS
                .iter()
                .any(|c| c.eq_ignore_ascii_case(name.trim()))
            {
                return Err(DecodeError {
                    offset: e.key.span.start(),
                    message: format!(
                        "`prometheus.headers`: a repository file may not send credentials \
                         (`{name}`); pass --prometheus-header or --prometheus-token-file"
                    ),
                });
            }
            if !TENANT_HEADERS
                .iter()
                .any(|t| t.eq_ignore_ascii_case(name.trim()))
            {
                return Err(DecodeError {
                    offset: e.key.span.start(),
                    message: format!(
                        "`prometheus.headers`: a repository file may send tenant headers only \
                         ({}), not `{name}` (a header such as `Host` or `X-Forwarded-Host` \
                         could route the token elsewhere); pass --prometheus-header",
                        TENANT_HEADERS.join(", ")
                    ),
                });
            }
            config.headers.push((name, decode::string(&e.value)?));
        }
    }
    if let Some((label, at)) = f.string_at("cluster_label")? {
        let valid = label
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(DecodeError {
                offset: at,
                message: format!(
                    "`prometheus.cluster_label`: {label:?} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)"
                ),
            });
        }
        config.cluster_label = Some(label);
    }
    if let Some(list) = f.seq("selectors")? {
        for item in list {
            let mut sf = Fields::with_keys(item, "`prometheus.selectors` entry", SELECTOR_KEYS)?;
            let (pattern, at) = sf.string_at("path")?.ok_or_else(|| DecodeError {
                offset: item.span.start(),
                message: "`prometheus.selectors` entry: missing required key `path`".into(),
            })?;
            let selector = match sf.take("selector") {
                Some(node) => selector(node)?,
                None => sf.required_string("selector")?,
            };
            sf.finish()?;
            config.path_selectors.push(PathSelector {
                globs: glob_set(std::slice::from_ref(&pattern), at)?,
                pattern,
                selector,
            });
        }
    }
    f.finish()?;
    Ok(config)
}

/// A selector of the config (`prometheus.selector`, `prometheus.selectors[].selector`): label
/// matchers, rebuilt from their parsed form so that no text of the repository is pasted into
/// a query; anything else is an error at its column.
fn selector(node: &Node) -> Result<String, DecodeError> {
    let text = decode::string(node)?;
    crate::metrics::selector::Selector::parse(&text)
        .map(|s| s.to_string())
        .map_err(|e| {
            // Exact for a plain or quoted scalar without escapes; else near the mistake.
            let quoted = node.as_scalar().is_some_and(|s| {
                matches!(
                    s.style,
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted
                )
            });
            DecodeError {
                offset: node.span.start() + usize::from(quoted) + e.offset,
                message: format!("`prometheus` selector: {}", e.message),
            }
        })
}

/// `kustomize.load_restrictor`: `root-only` (the default) is accepted; `none` widens what a
/// render reads, which only the command line may do.
fn decode_load_restrictor(k: &mut Fields) -> Result<(), DecodeError> {
    if let Some((value, at)) = k.string_at("load_restrictor")? {
        match parse_load_restrictor(&value) {
            Some(crate::source::kustomize::LoadRestrictor::RootOnly) => Ok(()),
            Some(crate::source::kustomize::LoadRestrictor::None) => Err(DecodeError {
                offset: at,
                message: "`kustomize.load_restrictor: none` is not read from a repository file (it widens what a render reads): pass `--load-restrictor none`".into(),
            }),
            None => Err(DecodeError {
                offset: at,
                message: format!(
                    "`kustomize.load_restrictor`: expected `root-only`, found {value:?} (`none` is the command line's `--load-restrictor none`)"
                ),
            }),
        }
    } else {
        Ok(())
    }
}

fn decode_policy(node: &Node) -> Result<Policy, Vec<DecodeError>> {
    let mut f = Fields::with_keys(node, "`policy`", POLICY_KEYS).map_err(|e| vec![e])?;
    let mut p = Policy::default();
    // Each key on its own: one mistake does not hide the next.
    let mut errors: Vec<DecodeError> = Vec::new();
    macro_rules! float {
        ($($key:ident),*) => {$(
            match f.number(stringify!($key)) {
                Ok(Some(v)) => p.$key = v,
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        )*};
    }
    float!(
        memory_margin,
        cpu_margin,
        oom_bump_factor,
        memory_round_tolerance,
        cpu_round_tolerance,
        overprovision_factor,
        cpu_far_factor,
        gpu_underuse_threshold,
        gpu_memory_pressure,
        kv_cache_pressure
    );
    let whole = |v: f64, key: &str| -> Result<u64, DecodeError> {
        if v >= 0.0 && v.fract() == 0.0 && v < 1e15 {
            Ok(v as u64)
        } else {
            Err(DecodeError {
                offset: node.get(key).unwrap_or(node).span.start(),
                message: format!("`policy.{key}`: expected a whole number >= 0, found {v}"),
            })
        }
    };
    match f
        .number("min_samples")
        .and_then(|v| v.map(|v| whole(v, "min_samples")).transpose())
    {
        Ok(Some(v)) => p.min_samples = v,
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
    match f
        .number("concurrent_requests")
        .and_then(|v| v.map(|v| whole(v, "concurrent_requests")).transpose())
    {
        Ok(Some(v)) => p.concurrent_requests = v,
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
    match f
        .number("min_history_seconds")
        .and_then(|v| v.map(|v| whole(v, "min_history_seconds")).transpose())
    {
        Ok(Some(v)) => p.min_history_seconds = v,
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
    match f.bool("guaranteed") {
        Ok(Some(v)) => p.guaranteed = v,
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
    match f.string_at("mig_strategy") {
        Ok(Some((v, at))) => match MigStrategy::parse(&v) {
            Some(m) => p.mig_strategy = m,
            None => errors.push(DecodeError {
                offset: at,
                message: format!(
                    "`policy.mig_strategy`: expected `mixed` or `single`, found {v:?}"
                ),
            }),
        },
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
    errors.extend(f.finish_all());
    if !errors.is_empty() {
        return Err(errors);
    }
    p.validate().map_err(|e| {
        vec![DecodeError {
            offset: node.span.start(),
            message: e.to_string(),
        }]
    })?;
    Ok(p)
}

impl Config {
    fn decode(root: &Node, path: Option<PathBuf>) -> Result<Config, Vec<DecodeError>> {
        let mut config = Config {
            path,
            ..Config::default()
        };
        if root.is_null() {
            return Ok(config);
        }
        let mut fields = Fields::with_keys(root, "config", TOP_KEYS).map_err(|e| vec![e])?;
        // Each key is decoded on its own: an error in one does not hide the others'.
        let mut errors: Vec<DecodeError> = Vec::new();
        macro_rules! key {
            ($($body:tt)*) => {
                #[allow(clippy::redundant_closure_call)]
                if let Err(e) = (|| -> Result<(), DecodeError> { $($body)* Ok(()) })() {
                    errors.push(e);
                }
            };
        }
        if let Some(rules_node) = fields.take("rules") {
            // Checks that `rules` is a mapping; its keys are rule ids, decoded one by one.
            key! { Fields::new(rules_node, "`rules`")?; }
            for entry in rules_node.as_map().unwrap_or_default() {
                key! {
                    let id = rule_id(&entry.key)?;
                    config.rules.insert(id, decode_rule_setting(&entry.value)?);
                }
            }
        }
        key! {
            let exclude_at = fields.take("exclude").map_or(0, |n| n.span.start());
            config.exclude = fields.string_list("exclude")?;
            if !config.exclude.is_empty() {
                config.exclude_set = Some(glob_set(&config.exclude, exclude_at)?);
            }
        }
        key! { config.gpu_resources = fields.string_list("gpu_resources")?; }
        key! { config.gpu_device_classes = fields.string_list("gpu_device_classes")?; }
        key! {
            if let Some(list) = fields.seq("workloads")? {
                config.workloads = list
                    .iter()
                    .map(KindEntry::from_node)
                    .collect::<Result<_, _>>()?;
            }
        }
        // One-key sections still report a wrong value and a misspelt key together.
        if let Some(kueue) = fields.take("kueue") {
            match Fields::with_keys(kueue, "`kueue`", KUEUE_KEYS) {
                Err(e) => errors.push(e),
                Ok(mut k) => {
                    key! { config.kueue_required = k.bool("required")?.unwrap_or(false); }
                    errors.extend(k.finish_all());
                }
            }
        }
        if let Some(kustomize) = fields.take("kustomize") {
            match Fields::with_keys(kustomize, "`kustomize`", KUSTOMIZE_KEYS) {
                Err(e) => errors.push(e),
                Ok(mut k) => {
                    key! { decode_load_restrictor(&mut k)?; }
                    errors.extend(k.finish_all());
                }
            }
        }
        if let Some(node) = fields.take("policy") {
            match decode_policy(node) {
                Ok(policy) => config.policy = policy,
                Err(e) => errors.extend(e),
            }
        }
        // Each model is decoded on its own: every mistake in the list is reported.
        let models = match fields.seq("models") {
            Ok(list) => list.unwrap_or_default(),
            Err(e) => {
                errors.push(e);
                &[]
            }
        };
        for item in models {
            key! { config.models.push(crate::k8s::model::decode_model(item)?); }
        }
        key! { config.default_namespace = fields.string("namespace")?; }
        key! { if let Some(list) = fields.seq("namespaces")? {
            for item in list {
                let mut f = Fields::with_keys(item, "`namespaces` entry", NAMESPACE_KEYS)?;
                let (pattern, at) = f.string_at("path")?.ok_or_else(|| DecodeError {
                    offset: item.span.start(),
                    message: "`namespaces` entry: missing required key `path`".into(),
                })?;
                let namespace = f.required_string("namespace")?;
                f.finish()?;
                config
                    .path_namespaces
                    .push((glob_set(std::slice::from_ref(&pattern), at)?, namespace));
            }
        } }
        let charts = fields.seq("charts").unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        if let Some(list) = charts {
            for item in list {
                key! {
                    let mut f = Fields::with_keys(item, "`charts` entry", CHART_KEYS)?;
                    let (path, path_at) = f.string_at("path")?.ok_or_else(|| DecodeError {
                        offset: item.span.start(),
                        message: "`charts` entry: missing required key `path`".into(),
                    })?;
                    check_chart_path(config.path.as_deref(), &path).map_err(|message| DecodeError {
                        offset: path_at,
                        message,
                    })?;
                    let release = f.string_at("release")?;
                    let namespace = f.string_at("namespace")?;
                    let remote = f.string_at("remote")?.map(|r| r.0);
                    let value_nodes: Vec<Node> = item
                        .get("values")
                        .and_then(Node::as_seq)
                        .map(<[Node]>::to_vec)
                        .unwrap_or_default();
                    let values = f.string_list("values")?;
                    f.finish()?;
                    // Names reach `helm template`: only names Helm accepts.
                    if let Some((name, at)) = &release {
                        if !crate::source::helm::is_release_name(name) {
                            return Err(DecodeError {
                                offset: *at,
                                message: format!("`charts` entry: release {name:?} is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most 53 characters)"),
                            });
                        }
                    }
                    if let Some((ns, at)) = &namespace {
                        if !crate::source::helm::is_namespace(ns) {
                            return Err(DecodeError {
                                offset: *at,
                                message: format!("`charts` entry: namespace {ns:?} is not a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters)"),
                            });
                        }
                    }
                    for (written, node) in values.iter().zip(&value_nodes) {
                        check_values_path(config.path.as_deref(), written).map_err(|message| {
                            DecodeError {
                                offset: node.span.start(),
                                message,
                            }
                        })?;
                    }
                    let (release, namespace) = (release.map(|r| r.0), namespace.map(|n| n.0));
                    config.charts.push(ChartEntry {
                        path: PathBuf::from(path),
                        release,
                        namespace,
                        values: values.into_iter().map(PathBuf::from).collect(),
                        remote,
                    });
                }
            }
        }
        // A repository file never names a program: a pull request could point it at a script.
        // Refused, so not among the keys an unknown key's error lists.
        if let Some(node) = fields.take_unlisted("helm") {
            errors.push(DecodeError {
                offset: node.span.start(),
                message: "`helm:` is not read from a repository file (a pull request could name any program): pass `--helm PATH` or set GPULINT_HELM, else `helm` is looked up on PATH".into(),
            });
        }
        key! {
            if let Some(node) = fields.take("prometheus") {
                config.prometheus = Some(decode_prometheus(node)?);
            }
        }
        key! { match fields.take("metrics") {
            Some(node) if node.as_map().is_some() => {
                for e in node.as_map().unwrap_or_default() {
                    let cluster = decode::string(&e.key)?;
                    let file = decode::string(&e.value)?;
                    config.cluster_metrics.push((
                        cluster,
                        PathBuf::from(file),
                        e.value.span.start(),
                    ));
                }
            }
            Some(node) if !node.is_null() => {
                config.metrics = Some(PathBuf::from(decode::string(node)?));
                config.metrics_at = node.span.start();
            }
            _ => {}
        } }
        key! { if let Some(list) = fields.seq("clusters")? {
            for item in list {
                let mut f = Fields::with_keys(item, "`clusters` entry", CLUSTER_KEYS)?;
                let name = f.required_string("name")?;
                let paths = f.string_list("paths")?;
                f.finish()?;
                config.clusters.push(crate::deploy::ClusterEntry {
                    name,
                    paths: paths.into_iter().map(PathBuf::from).collect(),
                });
            }
        } }
        let ignore = fields.seq("ignore").unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        if let Some(list) = ignore {
            for item in list {
                key! {
                    let mut f = Fields::with_keys(item, "`ignore` entry", IGNORE_KEYS)?;
                    let (pattern, at) = f.string_at("path")?.ok_or_else(|| DecodeError {
                        offset: item.span.start(),
                        message: "`ignore` entry: missing required key `path`".into(),
                    })?;
                    let rules = match f.take("rules") {
                        None => Vec::new(),
                        Some(node) => match node.as_seq() {
                            Some(ids) => ids.iter().map(rule_id).collect::<Result<_, _>>()?,
                            None => vec![rule_id(node)?],
                        },
                    };
                    f.finish()?;
                    config.ignore.push(IgnoreEntry {
                        globs: glob_set(std::slice::from_ref(&pattern), at)?,
                        pattern,
                        rules,
                    });
                }
            }
        }
        errors.extend(fields.finish_all());
        if errors.is_empty() {
            Ok(config)
        } else {
            errors.sort_by_key(|e| e.offset);
            Err(errors)
        }
    }

    /// Parses a config text; errors carry the file's line and column.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let stream = Stream::parse(text);
        let file = path.display().to_string();
        let at = |offset: usize, message: String| {
            let (line, column) = stream.line_col(offset);
            ConfigError {
                file: file.clone(),
                line,
                column,
                message,
                more: Vec::new(),
            }
        };
        if let Some(e) = &stream.error {
            return Err(at(e.offset, format!("invalid YAML: {}", e.message)));
        }
        let empty = Node::default();
        let root = stream.documents.first().map_or(&empty, |d| &d.root);
        let (mut config, mut errors) = match Config::decode(root, Some(path.to_path_buf())) {
            Ok(config) => (config, Vec::new()),
            Err(errors) => (Config::default(), errors),
        };
        if let Some(written) = config.metrics.take() {
            match resolve_inside_repository(path, &written, "metrics", "snapshot") {
                Ok(resolved) => config.metrics = Some(resolved),
                Err(message) => errors.push(DecodeError {
                    offset: config.metrics_at,
                    message,
                }),
            }
        }
        for (_, written, offset) in config.cluster_metrics.iter_mut() {
            match resolve_inside_repository(path, written, "metrics", "snapshot") {
                Ok(resolved) => *written = resolved,
                Err(message) => errors.push(DecodeError {
                    offset: *offset,
                    message,
                }),
            }
        }
        // Cluster paths are relative to the config's folder, like every path it names.
        if let Some(dir) = path.parent() {
            for c in &mut config.clusters {
                for p in &mut c.paths {
                    *p = crate::source::kustomize::normalize(&dir.join(&*p));
                }
            }
        }
        if let Some(prometheus) = config.prometheus.as_mut() {
            if let Some(written) = prometheus.ca.take() {
                match resolve_inside_repository(path, &written, "prometheus.ca", "CA file") {
                    Ok(resolved) => prometheus.ca = Some(resolved),
                    Err(message) => errors.push(DecodeError {
                        offset: prometheus.ca_at,
                        message,
                    }),
                }
            }
        }
        errors.sort_by_key(|e| e.offset);
        let mut placed = errors.into_iter().map(|e| at(e.offset, e.message));
        match placed.next() {
            None => Ok(config),
            Some(mut first) => {
                first.more = placed.collect();
                Err(first)
            }
        }
    }

    /// The config the command line names (`--config FILE`): anywhere, since the command line
    /// is trusted, but a regular file of bounded size.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_within(path, None)
    }

    /// A config [`Config::discover`] found: a file of the repository it is in, so read through
    /// the repository boundary (a regular file that, symlinks followed, stays inside the
    /// repository). A `.gpulint.yaml` linking to a file elsewhere is refused with its path
    /// only, never a word of the file (an error quoting its first key would leak it).
    pub fn load_discovered(path: &Path) -> Result<Config, ConfigError> {
        let root = crate::source::repo::repository_of(path);
        Config::load_within(path, Some(&root))
    }

    fn load_within(path: &Path, root: Option<&Path>) -> Result<Config, ConfigError> {
        // A regular file of bounded size: a FIFO named `.gpulint.yaml` must not hang the run.
        let text = crate::source::repo::read_file(path, root)
            .map_err(std::io::Error::from)
            .and_then(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })
            .map_err(|e| ConfigError {
                file: path.display().to_string(),
                line: 1,
                column: 1,
                message: format!("cannot read config: {e}"),
                more: Vec::new(),
            })?;
        Config::parse(&text, path)
    }

    /// `.gpulint.yaml` in `start` or the nearest folder above it.
    pub fn discover(start: &Path) -> Option<PathBuf> {
        let start = if start.is_file() {
            start.parent()?.to_path_buf()
        } else {
            start.to_path_buf()
        };
        let start = std::fs::canonicalize(&start).unwrap_or(start);
        // Any entry but a folder counts, a symlink too, even a dangling one or one leading out
        // of the repository: it is this folder's config, and reading it says why it is
        // refused, instead of a config further up being used in its place.
        start
            .ancestors()
            .map(|dir| dir.join(CONFIG_FILE_NAME))
            .find(|candidate| std::fs::symlink_metadata(candidate).is_ok_and(|m| !m.is_dir()))
    }

    /// The path relative to the config's folder, for glob matching.
    fn relative<'p>(&self, path: &'p Path) -> std::borrow::Cow<'p, Path> {
        let Some(dir) = self.path.as_ref().and_then(|p| p.parent()) else {
            return path.into();
        };
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        match absolute.strip_prefix(&dir) {
            Ok(rel) => rel.to_path_buf().into(),
            Err(_) => path.into(),
        }
    }

    pub fn is_excluded(&self, path: &Path) -> bool {
        self.exclude_set
            .as_ref()
            .is_some_and(|set| set.is_match(self.relative(path).as_ref()))
    }

    /// The config `ignore:` entry that suppresses `rule` in `path`, if any.
    /// (`rule`: a `Rule` or its id.)
    pub fn ignored(&self, path: &Path, rule: impl AsRef<str>) -> Option<&IgnoreEntry> {
        let rule = rule.as_ref();
        let rel = self.relative(path);
        self.ignore.iter().find(|entry| {
            (entry.rules.is_empty() || entry.rules.iter().any(|r| r.id() == rule))
                && entry.globs.is_match(rel.as_ref())
        })
    }

    /// The namespace of a manifest without one: a matching `namespaces:` entry, else
    /// `namespace:`, else `default`.
    pub fn namespace_for(&self, path: &Path) -> &str {
        let rel = self.relative(path);
        self.path_namespaces
            .iter()
            .find(|(globs, _)| globs.is_match(rel.as_ref()))
            .map(|(_, ns)| ns.as_str())
            .or(self.default_namespace.as_deref())
            .unwrap_or("default")
    }

    /// The per-path Prometheus selector for a manifest, if one matches.
    pub fn path_selector(&self, path: &Path) -> Option<&str> {
        let rel = self.relative(path);
        self.prometheus
            .as_ref()?
            .path_selectors
            .iter()
            .find(|s| s.globs.is_match(rel.as_ref()))
            .map(|s| s.selector.as_str())
    }

    pub fn rule_enabled(&self, info: &crate::rules::RuleInfo) -> bool {
        self.rules
            .get(&info.rule)
            .and_then(|s| s.enabled)
            .unwrap_or(info.enabled_by_default)
    }

    pub fn severity(&self, info: &crate::rules::RuleInfo) -> Severity {
        self.rules
            .get(&info.rule)
            .and_then(|s| s.severity)
            .unwrap_or(info.severity)
    }
}

/// A `charts:` entry's `path` (relative to the repository root) must be a folder inside the
/// repository, symlinks followed: Helm is never handed a chart from elsewhere.
fn check_chart_path(config: Option<&Path>, written: &str) -> Result<(), String> {
    let folder = match config.and_then(Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let root = crate::source::kustomize::normalize(&crate::source::repo::repository_of(&folder));
    let path = crate::source::kustomize::normalize(&root.join(written.trim_start_matches('/')));
    let outside = |how: String| {
        Err(format!(
            "`charts` entry: chart path {written} {how}, outside the repository ({}): not rendered (Helm is never handed a folder outside it)",
            root.display()
        ))
    };
    if !path.starts_with(&root) {
        return outside(format!("is {}", path.display()));
    }
    if let Ok(real) = std::fs::canonicalize(&path) {
        if !real.starts_with(&root) {
            return outside(format!("resolves to {}", real.display()));
        }
    }
    Ok(())
}

/// A `charts:` values file (relative to the repository root): never outside the repository,
/// symlinks followed, and an existing regular file (a missing one is said at the config's
/// line, with the name it is a typo of, before any render).
fn check_values_path(config: Option<&Path>, written: &str) -> Result<(), String> {
    let folder = match config.and_then(Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let root = crate::source::repo::repository_of(&folder);
    let path = crate::source::kustomize::normalize(&root.join(written.trim_start_matches('/')));
    if !path.starts_with(&root) {
        return Err(format!(
            "`charts` values file {written} is outside the repository ({}): gpulint never reads it",
            root.display()
        ));
    }
    if std::fs::symlink_metadata(&path).is_err() {
        // Said here, at the config's line: Helm would only say it cannot read the file.
        return Err(format!(
            "`charts` values file {written}: no such file in the repository{}",
            sibling_hint(&path, &root, written)
        ));
    }
    crate::source::repo::check_file(&path, Some(&root))
        .map_err(|refused| format!("`charts` values file {written} {refused}"))?;
    Ok(())
}

/// `; did you mean `x`?` when a file of the same folder is a typo away from the missing `path`
/// (`values.yml` for `values.yaml`).
fn sibling_hint(path: &Path, root: &Path, written: &str) -> String {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return String::new();
    };
    // A folder on the way may be a link: only a folder that stays in the repository is listed.
    let inside = |p: &Path| std::fs::canonicalize(p).ok();
    if !inside(dir)
        .zip(inside(root))
        .is_some_and(|(d, r)| d.starts_with(r))
    {
        return String::new();
    }
    let siblings: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    match decode::did_you_mean(name, siblings.iter().map(String::as_str)) {
        // As written, with the near name in place of the missing one.
        Some(near) => {
            let folder = written.rfind('/').map_or("", |i| &written[..=i]);
            format!("; did you mean `{folder}{near}`?")
        }
        None => String::new(),
    }
}

/// A path the config names (as `key`), relative to the config's folder, resolved (symlinks
/// followed), required to be inside the repository the config is in (its git work tree, else
/// its folder) and to be a regular file (a FIFO would hang the read, a device never end it):
/// repository content is data, and a config must not make gpulint read files elsewhere.
fn resolve_inside_repository(
    config: &Path,
    written: &Path,
    key: &str,
    what: &str,
) -> Result<PathBuf, String> {
    use crate::source::repo::Refused;
    let shown = written.display();
    let folder = match config.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let folder = std::fs::canonicalize(&folder)
        .map_err(|e| format!("`{key}: {shown}`: {}: {e}", folder.display()))?;
    let root = crate::source::repo::repository_of(&folder);
    let resolved = match crate::source::repo::resolve_inside(&folder.join(written), Some(&root)) {
        Ok(resolved) => resolved,
        Err(Refused::Outside { real, root }) => {
            return Err(format!(
                "`{key}: {shown}` resolves to {}, outside the repository ({}): gpulint reads only files inside it",
                real.display(),
                root.display()
            ))
        }
        Err(e) => return Err(format!("`{key}: {shown}`: cannot read the {what}: {e}")),
    };
    // The resolved path has no symlink left: this is the file itself, not followed further.
    match std::fs::metadata(&resolved) {
        Ok(m) if m.is_file() => Ok(resolved),
        Ok(_) => Err(format!(
            "`{key}: {shown}`: not a regular file (a folder, FIFO or device); the {what} must be a file in the repository"
        )),
        Err(e) => Err(format!("`{key}: {shown}`: cannot read the {what}: {e}")),
    }
}

/// `root-only` / `none`, also in kustomize's own spelling (`LoadRestrictionsRootOnly`).
pub fn parse_load_restrictor(s: &str) -> Option<crate::source::kustomize::LoadRestrictor> {
    use crate::source::kustomize::LoadRestrictor;
    match s {
        "root-only" | "rootOnly" | "LoadRestrictionsRootOnly" => Some(LoadRestrictor::RootOnly),
        "none" | "LoadRestrictionsNone" => Some(LoadRestrictor::None),
        _ => None,
    }
}

impl Excludes for Config {
    fn is_excluded(&self, path: &Path) -> bool {
        Config::is_excluded(self, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("repo/.gpulint.yaml"))
    }

    #[test]
    fn a_full_config_decodes() {
        let c = parse(
            "rules:\n  GPU004: error\n  SCH001: {enabled: true}\n  gpu-burstable-qos: off\nexclude: [vendor/**]\ngpu_resources: [example.com/gpu]\nkueue: {required: true}\nignore:\n- path: charts/**\n  rules: [GPU002]\nworkloads:\n- kind: Trainer\n  group: example.com\n  pod_templates: [\"$.spec.template\"]\n",
        )
        .unwrap();
        assert_eq!(
            c.rules[&Rule::GpuResourceUnknown].severity,
            Some(Severity::Error)
        );
        assert_eq!(c.rules[&Rule::GpuTolerationMissing].enabled, Some(true));
        assert_eq!(c.rules[&Rule::GpuBurstableQos].enabled, Some(false));
        assert!(c.kueue_required);
        assert_eq!(c.workloads[0].kind, "Trainer");
        assert_eq!(c.ignore[0].rules, [Rule::GpuRequestLimitMismatch]);
        assert_eq!(c.gpu_resources, ["example.com/gpu"]);
        assert!(c.gpu_device_classes.is_empty());
        let dra = parse("gpu_device_classes: [gpu.example.com]\n").expect("valid");
        assert_eq!(dra.gpu_device_classes, ["gpu.example.com"]);
    }

    #[test]
    fn unknown_keys_are_errors_with_positions() {
        let e = parse("rules: {}\nexclud: [x]\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("unknown key `exclud`"), "{}", e.message);
        assert_eq!(e.to_string().split(':').next(), Some("repo/.gpulint.yaml"));
    }

    #[test]
    fn wrong_types_and_unknown_rules_are_errors() {
        let e = parse("kueue: {required: yes-please}\n").unwrap_err();
        assert!(
            e.message.contains("expected true or false"),
            "{}",
            e.message
        );
        let e = parse("rules:\n  GPU999: error\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown rule"), "{}", e.message);
        let e = parse("exclude: {a: 1}\n").unwrap_err();
        assert!(e.message.contains("list of strings"), "{}", e.message);
    }

    #[test]
    fn policy_thresholds_are_configurable_and_checked() {
        let c = parse("policy:\n  overprovision_factor: 2\n  gpu_underuse_threshold: 0.2\n  guaranteed: false\n  min_samples: 50\n").unwrap();
        assert_eq!(c.policy.overprovision_factor, 2.0);
        assert_eq!(c.policy.gpu_underuse_threshold, 0.2);
        assert!(!c.policy.guaranteed);
        assert_eq!(c.policy.min_samples, 50);
        assert_eq!(c.policy.mig_strategy, MigStrategy::Mixed);
        let c = parse("policy:\n  mig_strategy: single\n  kv_cache_pressure: 0.8\n").unwrap();
        assert_eq!(c.policy.mig_strategy, MigStrategy::Single);
        assert_eq!(c.policy.kv_cache_pressure, 0.8);
        let e = parse("policy:\n  mig_strategy: whole\n").unwrap_err();
        assert!(e.message.contains("`mixed` or `single`"), "{}", e.message);
        let e = parse("policy:\n  memory_margn: 0.2\n").unwrap_err();
        assert_eq!(e.line, 2);
        // Every mistake in `policy:`, not the first only (issue 26), with the others'.
        let e = parse(
            "policy:\n  memroy_margin: 0.2\n  cpu_margn: 0.1\n  min_samples: 1.5\nexlcude: [x]\n",
        )
        .unwrap_err();
        let lines: Vec<usize> = std::iter::once(e.line)
            .chain(e.more.iter().map(|m| m.line))
            .collect();
        assert_eq!(lines, [2, 3, 4, 5], "{e}");
        assert!(
            e.more[0].message.contains("did you mean `cpu_margin`"),
            "{e}"
        );
        // The one-key sections too: a wrong value and a misspelt key, both reported.
        let e = parse(
            "kueue:\n  required: maybe\n  requird: true\nkustomize:\n  load_restrictor: none\n  load_restricter: root-only\n",
        )
        .unwrap_err();
        let lines: Vec<usize> = std::iter::once(e.line)
            .chain(e.more.iter().map(|m| m.line))
            .collect();
        assert_eq!(lines, [2, 3, 5, 6], "{e}");
        assert!(e.more[0].message.contains("did you mean `required`"), "{e}");
        let e = parse("policy:\n  gpu_underuse_threshold: 7\n").unwrap_err();
        assert!(
            e.message.contains("gpu_underuse_threshold"),
            "{}",
            e.message
        );
    }

    #[test]
    fn prometheus_settings_and_path_selectors() {
        let c = parse("prometheus:\n  window: 7d\n  headers: {X-Scope-OrgID: tenant-1}\n  timeout: 30\n  selectors:\n  - path: clusters/prod/**\n    selector: 'cluster=\"prod\"'\n").unwrap();
        let p = c.prometheus.as_ref().unwrap();
        assert_eq!(p.window.as_deref(), Some("7d"));
        assert_eq!(
            p.headers,
            [("X-Scope-OrgID".to_string(), "tenant-1".to_string())]
        );
        assert_eq!(p.timeout_seconds, Some(30));
        assert_eq!(
            c.path_selector(Path::new("clusters/prod/app.yaml")),
            Some("cluster=\"prod\"")
        );
        assert_eq!(
            c.path_selector(Path::new("clusters/staging/app.yaml")),
            None
        );
        let e = parse("prometheus:\n  urll: x\n").unwrap_err();
        assert!(e.message.contains("unknown key `urll`"), "{}", e.message);
    }

    #[test]
    fn a_repository_config_names_no_prometheus_host_and_no_token_file() {
        let e = parse("prometheus:\n  window: 7d\n  url: http://attacker.example\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 8));
        assert!(e.message.contains("--prometheus URL"), "{}", e.message);
        assert!(
            e.message.contains("GPULINT_PROMETHEUS_URL"),
            "{}",
            e.message
        );
        let e = parse("prometheus:\n  token_file: ../secret.txt\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 15));
        assert!(
            e.message.contains("--prometheus-token-file")
                && e.message.contains("GPULINT_PROMETHEUS_TOKEN"),
            "{}",
            e.message
        );
    }

    /// Issue 24, item 10: a header from the repository is an allow-list of tenant headers;
    /// one that routes the request (and the CI's token with it) is an error at its key.
    #[test]
    fn repository_headers_are_tenant_headers_only() {
        let c = parse(
            "prometheus:\n  headers: {x-scope-orgid: a, THANOS-TENANT: b, AccountID: '1', ProjectID: '2'}\n",
        )
        .expect("tenant headers");
        assert_eq!(c.prometheus.as_ref().map_or(0, |p| p.headers.len()), 4);
        for name in [
            "Host",
            "X-Forwarded-Host",
            "X-Forwarded-For",
            "X-Original-URL",
            "X-Rewrite-URL",
            "Forwarded",
            "Proxy-Connection",
            "X-Extra",
        ] {
            let e = parse(&format!(
                "prometheus:\n  window: 7d\n  headers:\n    {name}: attacker-vhost.example\n"
            ))
            .expect_err(name);
            assert_eq!((e.line, e.column), (4, 5), "{name}: {e}");
            assert!(
                e.message.contains("tenant headers only") && e.message.contains(name),
                "{e}"
            );
        }
    }

    /// Issue 24, item 11: selectors are label matchers, rebuilt from their parsed form; the
    /// injection of the issue is an error at its line and column.
    #[test]
    fn selectors_are_label_matchers_rebuilt() {
        let c = parse("prometheus:\n  selector: \"{cluster='prod', team=~\\\"a|b\\\",}\"\n  selectors:\n  - path: x/**\n    selector: region != 'eu'\n").expect("matchers");
        let p = c.prometheus.as_ref().expect("prometheus");
        assert_eq!(p.selector.as_deref(), Some(r#"cluster="prod",team=~"a|b""#));
        assert_eq!(
            c.path_selector(Path::new("x/a.yaml")),
            Some(r#"region!="eu""#)
        );
        let injection = r#"x="y"}[14d]) or label_replace(vector(1), "a", "b", "", "") or quantile_over_time(0.99, up{x="y""#;
        let e = parse(&format!("prometheus:\n  selector: '{injection}'\n")).expect_err("selector");
        // The `}` after `x="y"`: `  selector: '` is 13 bytes, `x="y"` 5 more: column 19.
        assert_eq!((e.line, e.column), (2, 19), "{e}");
        assert!(e.message.contains("label matchers"), "{e}");
        let e = parse(&format!(
            "prometheus:\n  selectors:\n  - path: a/**\n    selector: {injection}\n"
        ))
        .expect_err("path selector");
        assert_eq!((e.line, e.column), (4, 20), "{e}");
    }

    /// `.nan` and `.inf` are numbers to YAML but not thresholds: the error says which.
    #[test]
    fn non_finite_policy_values_say_so() {
        for (value, found) in [
            (".nan", "NaN"),
            (".NaN", "NaN"),
            (".inf", "infinity"),
            ("-.inf", "infinity"),
            ("1e999", "infinity"),
        ] {
            let e = parse(&format!("policy:\n  memory_margin: {value}\n")).expect_err(value);
            assert_eq!((e.line, e.column), (2, 18), "{e}");
            assert!(
                e.message.contains(&format!(
                    "`memory_margin`: expected a finite number, found {found}"
                )),
                "{e}"
            );
        }
        let e = parse("prometheus:\n  timeout: .nan\n").expect_err("timeout");
        assert!(e.message.contains("finite number, found NaN"), "{e}");
    }

    #[test]
    fn namespaces_for_manifests_without_one() {
        let c =
            parse("namespace: ml\nnamespaces:\n- path: teams/research/**\n  namespace: research\n")
                .unwrap();
        assert_eq!(
            c.namespace_for(Path::new("teams/research/nb.yaml")),
            "research"
        );
        assert_eq!(c.namespace_for(Path::new("apps/llm.yaml")), "ml");
        assert_eq!(
            parse("").unwrap().namespace_for(Path::new("x.yaml")),
            "default"
        );
    }

    #[test]
    fn helm_charts() {
        // Values files must exist: a folder of its own (no git: the config's folder is the
        // repository).
        let dir =
            std::env::temp_dir().join(format!("gpulint-config-charts-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("envs")).unwrap();
        for f in ["envs/prod.yaml", "envs/gpu.yaml"] {
            std::fs::write(dir.join(f), "a: 1\n").unwrap();
        }
        let config = dir.join(".gpulint.yaml");
        let c = Config::parse("charts:\n- path: charts/llm\n  release: llm-prod\n  namespace: serving\n  values: [envs/prod.yaml, envs/gpu.yaml]\n- path: charts/other\n", &config).unwrap();
        assert_eq!(
            c.charts[0],
            ChartEntry {
                path: PathBuf::from("charts/llm"),
                release: Some("llm-prod".into()),
                namespace: Some("serving".into()),
                values: vec![
                    PathBuf::from("envs/prod.yaml"),
                    PathBuf::from("envs/gpu.yaml")
                ],
                remote: None,
            }
        );
        assert_eq!(c.charts[1].release, None);
        assert!(c.charts[1].values.is_empty());
        let e = parse("charts:\n- path: charts/x\n  relase: y\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.message.contains("unknown key `relase`"), "{}", e.message);
        let e = parse("charts:\n- release: y\n").unwrap_err();
        assert!(
            e.message.contains("missing required key `path`"),
            "{}",
            e.message
        );
        let e = parse("charts: {path: x}\n").unwrap_err();
        assert_eq!(e.line, 1);
        // A missing values file is an error at its line, with the file it is a typo of.
        let e = Config::parse(
            "charts:\n- path: charts/llm\n  values:\n  - envs/gpu.yaml\n  - envs/prod.yml\n",
            &config,
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (5, 5));
        assert_eq!(
            e.message,
            "`charts` values file envs/prod.yml: no such file in the repository; did you mean `envs/prod.yaml`?"
        );
        let e = Config::parse(
            "charts:\n- path: charts/llm\n  values: [nope.yaml]\n",
            &config,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "`charts` values file nope.yaml: no such file in the repository"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn private_models_decode_and_each_mistake_is_placed() {
        let c = parse("models:\n  - {id: acme/bot-13b, params_b: 13, layers: 40, kv_heads: 40, head_dim: 128, context: 4096, dtype: bf16, source: x}\n").unwrap();
        assert_eq!(c.models.len(), 1);
        assert_eq!(c.models[0].layers, 40);
        let e = parse("models:\n  - {id: a, params_b: 13, layer: 40, kv_heads: 40, head_dim: 128, context: 4096, dtype: bf16, source: x}\n  - {id: b, params_b: 13, layers: 40, kv_heads: 40, head_dim: 128, context: 4096, dtype: bf61, source: x}\n").unwrap_err();
        let all: Vec<(usize, &str)> = std::iter::once(&e)
            .chain(&e.more)
            .map(|e| (e.line, e.message.as_str()))
            .collect();
        assert_eq!(all.len(), 2, "{all:#?}");
        assert_eq!(all[0].0, 2);
        assert!(all[0].1.contains("did you mean `layers`?"), "{}", all[0].1);
        assert_eq!(all[1].0, 3);
        assert!(
            all[1].1.contains("`dtype`: expected one of"),
            "{}",
            all[1].1
        );
        let e = parse("models: {id: a}\n").unwrap_err();
        assert!(
            e.message.contains("`models`: expected a list"),
            "{}",
            e.message
        );
    }

    #[test]
    fn every_config_error_is_reported_with_the_key_it_is_a_typo_of() {
        let e = parse("exlcude: [vendor]\nrules:\n  GPU01: off\n  QOS002: loud\npolicy: {memory_margn: 0.1}\nkueue: {required: true}\nnamespace: [a]\n").unwrap_err();
        let all: Vec<(usize, usize, &str)> = std::iter::once(&e)
            .chain(&e.more)
            .map(|e| (e.line, e.column, e.message.as_str()))
            .collect();
        assert_eq!(all.len(), 5, "{all:#?}");
        assert_eq!((all[0].0, all[0].1), (1, 1));
        assert!(
            all[0].2.starts_with("unknown key `exlcude` in config; did you mean `exclude`? expected one of: charts, clusters, exclude,"),
            "{}",
            all[0].2
        );
        assert!(all[1].2.contains("did you mean `GPU001`?"), "{}", all[1].2);
        assert_eq!(all[2].0, 4);
        assert!(
            all[3].2.contains("did you mean `memory_margin`?"),
            "{}",
            all[3].2
        );
        assert_eq!(all[4].0, 7);
        // Printed one per line, each after `error: ` but the first (the command prints it).
        let shown = e.to_string();
        assert_eq!(shown.lines().count(), 5);
        assert!(shown
            .lines()
            .skip(1)
            .all(|l| l.starts_with("error: repo/.gpulint.yaml:")));
        // Refused keys are not offered: `helm` is never among the expected ones.
        let e = parse("hlem: x\n").unwrap_err();
        assert!(!e.message.contains("helm"), "{}", e.message);
        assert!(e.more.is_empty());
    }

    #[test]
    fn a_config_never_names_the_helm_binary() {
        for text in ["helm: ./evil.sh\n", "rules: {}\nhelm: [a]\n"] {
            let e = parse(text).unwrap_err();
            assert!(
                e.message
                    .contains("`helm:` is not read from a repository file"),
                "{}",
                e.message
            );
            assert!(
                e.message.contains("--helm PATH") && e.message.contains("GPULINT_HELM"),
                "{}",
                e.message
            );
        }
        let e = parse("rules: {}\nhelm: ./evil.sh\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7));
    }

    #[test]
    fn an_empty_config_is_the_default() {
        let c = parse("").unwrap();
        assert!(c.rules.is_empty());
    }
}
