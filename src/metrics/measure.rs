//! Live measuring: the options of a Prometheus run, and the queries that turn the wanted
//! containers into one [`UsageSet`] (used by `gpulint snapshot` and by `gpulint --prometheus`).
//!
//! The trust rule is in the types: [`LiveRequest`] holds where to send (the URL) and with what
//! secret (the token), and only the command line and the environment fill it; [`QueryDefaults`],
//! from the repository's `.gpulint.yaml`, says how to query and has no field for either.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::prometheus::{self, redact_url, PrometheusError, PrometheusOptions};
use super::usage::{ContainerKey, UsageSet};

/// The look-back window when neither the command line nor the config names one.
pub const DEFAULT_WINDOW: &str = "14d";

/// What the command line and the environment say about the live source. No `Debug`: it holds
/// the token.
#[derive(Clone, Default)]
pub struct LiveRequest {
    /// `--prometheus`, else GPULINT_PROMETHEUS_URL: the host that receives the token and headers.
    pub url: String,
    /// `--window`.
    pub window: Option<String>,
    /// `--prometheus-header` values, `Name: value` each.
    pub headers: Vec<String>,
    /// `--prometheus-token-file`; read here, and wins over `token`.
    pub token_file: Option<PathBuf>,
    /// GPULINT_PROMETHEUS_TOKEN (an empty one is no token).
    pub token: Option<String>,
    /// `--prometheus-ca`.
    pub ca: Option<PathBuf>,
    /// `--prometheus-timeout`, in seconds.
    pub timeout_seconds: Option<u64>,
    /// `--prometheus-selector`.
    pub selector: Option<String>,
    /// `--prometheus-max-body`, in MiB.
    pub max_body_mib: Option<u64>,
}

/// How to query, from the config's `prometheus:` section; the command line wins over each.
#[derive(Clone, Debug, Default)]
pub struct QueryDefaults {
    pub window: Option<String>,
    /// Sent before the command line's headers.
    pub headers: Vec<(String, String)>,
    pub ca: Option<PathBuf>,
    pub timeout_seconds: Option<u64>,
    pub selector: Option<String>,
}

/// Why the options could not be built or the queries failed. No variant holds the token.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("--prometheus-header {0:?}: expected `Name: value`")]
    Header(String),
    #[error("prometheus token file {}: {source}", path.display())]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the repository's `prometheus.ca` ({}) is not used when a token or credential header is \
         sent: a repository file may not choose which server receives them; pass \
         --prometheus-ca FILE",
        .0.display()
    )]
    RepositoryCa(PathBuf),
    #[error(transparent)]
    Prometheus(#[from] PrometheusError),
}

/// The options of a live run: the request's values, else the config's, else the defaults.
pub fn options(
    request: LiveRequest,
    defaults: QueryDefaults,
) -> Result<PrometheusOptions, MeasureError> {
    let window = request
        .window
        .or(defaults.window)
        .unwrap_or_else(|| DEFAULT_WINDOW.into());
    let mut opts = PrometheusOptions::new(request.url, window);
    let mut flags = Vec::new();
    for h in request.headers {
        let Some((k, v)) = h.split_once(':') else {
            return Err(MeasureError::Header(h));
        };
        flags.push((k.trim().to_string(), v.trim().to_string()));
    }
    // A header the command line names replaces the config's of that name: a repository file
    // must not choose, say, the tenant (`X-Scope-OrgID`) the CI's token reads.
    opts.headers = defaults
        .headers
        .into_iter()
        .filter(|(name, _)| !flags.iter().any(|(f, _)| f.eq_ignore_ascii_case(name)))
        .collect();
    opts.headers.extend(flags);
    opts.bearer_token = match request.token_file {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(t) => Some(t.trim().to_string()),
            Err(source) => return Err(MeasureError::TokenFile { path, source }),
        },
        None => request.token.filter(|t| !t.is_empty()),
    };
    // The CA decides which server may receive the credentials: with credentials, only the
    // command line may name it (a repository's CA would let a pull request vouch for its own
    // server).
    let credentials = opts.bearer_token.is_some()
        || opts
            .headers
            .iter()
            .any(|(name, _)| prometheus::is_sensitive_header(name));
    opts.ca_file = match (request.ca, defaults.ca) {
        (Some(ca), _) => Some(ca),
        (None, Some(ca)) if credentials => return Err(MeasureError::RepositoryCa(ca)),
        (None, ca) => ca,
    };
    let timeout = request
        .timeout_seconds
        .or(defaults.timeout_seconds)
        .unwrap_or(prometheus::DEFAULT_TIMEOUT.as_secs());
    opts.timeout = Duration::from_secs(timeout.max(1));
    opts.selector = request.selector.or(defaults.selector);
    if let Some(mib) = request.max_body_mib {
        opts.max_body_bytes = mib.max(1).saturating_mul(1024 * 1024);
    }
    Ok(opts)
}

/// The containers to measure, grouped by the cluster they run in and the selector they are
/// measured with: a path's own selector (the config's `path_selectors`), else, in a run of
/// several clusters, the run's selector with `<cluster_label>="<cluster>"`, else the run's.
/// Each group's figures are named with its cluster and never merged with another's.
pub struct Wanted {
    default_selector: Option<String>,
    /// Set in a run of several clusters: the label that tells them apart in the store.
    cluster_label: Option<String>,
    groups: BTreeMap<(Option<String>, Option<String>), Vec<ContainerKey>>,
}

impl Wanted {
    /// An empty set; `default_selector` is the run's (`PrometheusOptions::selector`);
    /// `cluster_label` is given when the run names several clusters.
    pub fn new(default_selector: Option<String>, cluster_label: Option<String>) -> Wanted {
        Wanted {
            default_selector,
            cluster_label,
            groups: BTreeMap::new(),
        }
    }

    /// Adds the containers of one input, under its path's selector if it has one, else its
    /// cluster's.
    pub fn add(&mut self, path_selector: Option<&str>, keys: Vec<ContainerKey>) {
        for key in keys {
            let cluster = key.cluster.clone().filter(|_| self.cluster_label.is_some());
            let selector = match (path_selector, &cluster, &self.cluster_label) {
                (Some(s), _, _) => Some(s.to_string()),
                (None, Some(c), Some(label)) => {
                    Some(with_cluster(self.default_selector.as_deref(), label, c))
                }
                _ => self.default_selector.clone(),
            };
            self.groups
                .entry((cluster, selector))
                .or_default()
                .push(key);
        }
    }

    /// How many containers, over every group.
    pub fn len(&self) -> usize {
        self.groups.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many query rounds [`measure`] sends: one per distinct selector.
    pub fn selectors(&self) -> usize {
        self.groups.len()
    }
}

/// What [`measure`] found.
#[derive(Debug, Default)]
pub struct Measured {
    /// The usage of the containers with data. Its window, source and nodes are the first
    /// group's; later groups add their containers.
    pub usage: UsageSet,
    /// Wanted containers with no data.
    pub missing: usize,
    /// HTTP requests sent.
    pub requests: usize,
}

impl Measured {
    /// The one line a run prints about the measuring (the URL redacted).
    pub fn summary(&self, opts: &PrometheusOptions) -> String {
        format!(
            "prometheus {}, window {}: {} container(s) with data, {} without, {} node(s) ({} request(s))",
            redact_url(&opts.url),
            opts.window,
            self.usage.containers.len(),
            self.missing,
            self.usage.nodes.len(),
            self.requests
        )
    }
}

/// `selector` (a run's, already checked) with one more matcher, `label="cluster"`, rebuilt from
/// the parsed form: the cluster's name is the repository's, and is quoted, never pasted.
fn with_cluster(selector: Option<&str>, label: &str, cluster: &str) -> String {
    use crate::metrics::selector::{MatchOp, Matcher, Selector};
    let mut parsed = selector
        .and_then(|s| Selector::parse(s).ok())
        .unwrap_or_default();
    parsed.0.retain(|m| m.name != label);
    parsed.0.push(Matcher {
        name: label.to_string(),
        op: MatchOp::Equal,
        value: cluster.to_string(),
    });
    parsed.to_string()
}

/// Queries Prometheus for `wanted`, one round of the fixed queries per (cluster, selector), and
/// gathers the answers: a cluster's figures and nodes are named with it. `warn` gets each
/// warning Prometheus returns, as it arrives.
pub fn measure(
    opts: &PrometheusOptions,
    wanted: Wanted,
    mut warn: impl FnMut(&str),
) -> Result<Measured, MeasureError> {
    let mut usage: Option<UsageSet> = None;
    let (mut missing, mut requests) = (0, 0);
    for ((cluster, selector), keys) in wanted.groups {
        let mut group_opts = opts.clone();
        group_opts.selector = selector;
        let mut collected = prometheus::collect(&group_opts, &keys)?;
        for w in &collected.warnings {
            warn(w);
        }
        missing += collected.missing.len();
        requests += collected.requests;
        if let Some(c) = &cluster {
            collected.usage.label(c);
        }
        match &mut usage {
            None => usage = Some(collected.usage),
            Some(all) => all.merge(collected.usage),
        }
    }
    Ok(Measured {
        usage: usage.unwrap_or_default(),
        missing,
        requests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ContainerKey {
        ContainerKey {
            cluster: None,
            namespace: "ml".into(),
            kind: "Deployment".into(),
            name: name.into(),
            container: "main".into(),
        }
    }

    fn request() -> LiveRequest {
        LiveRequest {
            url: "http://prometheus.example:9090".into(),
            ..LiveRequest::default()
        }
    }

    #[test]
    fn defaults_when_nothing_is_said() {
        let opts = options(request(), QueryDefaults::default()).expect("options");
        assert_eq!(opts.url, "http://prometheus.example:9090");
        assert_eq!(opts.window, "14d");
        assert_eq!(opts.timeout, Duration::from_secs(60));
        assert_eq!(opts.max_body_bytes, prometheus::DEFAULT_MAX_BODY_BYTES);
        assert!(opts.headers.is_empty());
        assert_eq!(opts.bearer_token, None);
        assert_eq!(opts.selector, None);
    }

    #[test]
    fn a_header_the_command_line_names_replaces_the_configs() {
        let defaults = QueryDefaults {
            headers: vec![
                ("X-Scope-OrgID".into(), "from-config".into()),
                ("X-Other".into(), "kept".into()),
            ],
            ..QueryDefaults::default()
        };
        let flags = LiveRequest {
            headers: vec!["x-scope-orgid: from-flag".into()],
            ..request()
        };
        let opts = options(flags, defaults).expect("options");
        assert_eq!(
            opts.headers,
            vec![
                ("X-Other".to_string(), "kept".to_string()),
                ("x-scope-orgid".to_string(), "from-flag".to_string())
            ]
        );
    }

    #[test]
    fn a_repository_ca_is_refused_when_credentials_are_sent() {
        let defaults = QueryDefaults {
            ca: Some(PathBuf::from("repo-ca.pem")),
            ..QueryDefaults::default()
        };
        let with = |request: LiveRequest| options(request, defaults.clone());
        // No credentials: the repository's CA is used.
        assert_eq!(
            with(request()).expect("options").ca_file,
            Some(PathBuf::from("repo-ca.pem"))
        );
        // A token, or a credential header from the command line: refused, saying why.
        for credentials in [
            LiveRequest {
                token: Some("t0ken".into()),
                ..request()
            },
            LiveRequest {
                headers: vec!["Authorization: Basic eA==".into()],
                ..request()
            },
        ] {
            let e = with(credentials).err().map(|e| e.to_string());
            let e = e.expect("refused");
            assert!(
                e.contains("repo-ca.pem") && e.contains("--prometheus-ca"),
                "{e}"
            );
            assert!(!e.contains("t0ken") && !e.contains("eA=="), "{e}");
        }
        // The command line's CA is the user's choice.
        let flag = LiveRequest {
            token: Some("t0ken".into()),
            ca: Some(PathBuf::from("flag-ca.pem")),
            ..request()
        };
        assert_eq!(
            with(flag).expect("options").ca_file,
            Some(PathBuf::from("flag-ca.pem"))
        );
    }

    #[test]
    fn the_command_line_wins_over_the_config() {
        let defaults = QueryDefaults {
            window: Some("7d".into()),
            headers: vec![("X-Scope-OrgID".into(), "from-config".into())],
            ca: Some(PathBuf::from("config-ca.pem")),
            timeout_seconds: Some(30),
            selector: Some(r#"cluster="config""#.into()),
        };
        let from_config = options(request(), defaults.clone()).expect("options");
        assert_eq!(from_config.window, "7d");
        assert_eq!(from_config.ca_file, Some(PathBuf::from("config-ca.pem")));
        assert_eq!(from_config.timeout, Duration::from_secs(30));
        assert_eq!(from_config.selector.as_deref(), Some(r#"cluster="config""#));

        let flags = LiveRequest {
            window: Some("1d".into()),
            headers: vec![" X-Extra :  yes ".into()],
            ca: Some(PathBuf::from("flag-ca.pem")),
            timeout_seconds: Some(0),
            selector: Some(r#"cluster="flag""#.into()),
            max_body_mib: Some(0),
            ..request()
        };
        let opts = options(flags, defaults).expect("options");
        assert_eq!(opts.window, "1d");
        // The config's headers come first; a flag's are trimmed.
        assert_eq!(
            opts.headers,
            vec![
                ("X-Scope-OrgID".to_string(), "from-config".to_string()),
                ("X-Extra".to_string(), "yes".to_string())
            ]
        );
        assert_eq!(opts.ca_file, Some(PathBuf::from("flag-ca.pem")));
        // Zero is raised to the least that works: one second, one MiB.
        assert_eq!(opts.timeout, Duration::from_secs(1));
        assert_eq!(opts.max_body_bytes, 1024 * 1024);
        assert_eq!(opts.selector.as_deref(), Some(r#"cluster="flag""#));
    }

    #[test]
    fn a_header_without_a_colon_is_an_error_naming_it() {
        let flags = LiveRequest {
            headers: vec!["X-Scope-OrgID tenant-1".into()],
            ..request()
        };
        let err = options(flags, QueryDefaults::default()).expect_err("bad header");
        assert_eq!(
            err.to_string(),
            r#"--prometheus-header "X-Scope-OrgID tenant-1": expected `Name: value`"#
        );
    }

    #[test]
    fn the_token_file_wins_over_the_environment_and_an_empty_token_is_none() {
        let dir = std::env::temp_dir().join(format!("gpulint-measure-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("token");
        std::fs::write(&file, "  from-file\n").expect("token file");
        let flags = LiveRequest {
            token_file: Some(file.clone()),
            token: Some("from-env".into()),
            ..request()
        };
        let opts = options(flags, QueryDefaults::default()).expect("options");
        assert_eq!(opts.bearer_token.as_deref(), Some("from-file"));

        let env_only = LiveRequest {
            token: Some("from-env".into()),
            ..request()
        };
        let opts = options(env_only, QueryDefaults::default()).expect("options");
        assert_eq!(opts.bearer_token.as_deref(), Some("from-env"));

        let empty = LiveRequest {
            token: Some(String::new()),
            ..request()
        };
        let opts = options(empty, QueryDefaults::default()).expect("options");
        assert_eq!(opts.bearer_token, None);

        let missing = LiveRequest {
            token_file: Some(dir.join("absent")),
            ..request()
        };
        let err = options(missing, QueryDefaults::default()).expect_err("no file");
        assert!(
            err.to_string().starts_with("prometheus token file "),
            "{err}"
        );
        assert!(!err.to_string().contains("from-"), "{err}");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn wanted_groups_by_path_selector_then_the_run_selector() {
        let mut wanted = Wanted::new(Some(r#"cluster="all""#.into()), None);
        assert!(wanted.is_empty());
        wanted.add(None, vec![key("a")]);
        wanted.add(Some(r#"cluster="prod""#), vec![key("b"), key("c")]);
        wanted.add(None, vec![key("d")]);
        assert_eq!(wanted.len(), 4);
        assert_eq!(wanted.selectors(), 2);
        assert_eq!(
            wanted
                .groups
                .get(&(None, Some(r#"cluster="all""#.to_string()))),
            Some(&vec![key("a"), key("d")])
        );

        let mut unscoped = Wanted::new(None, None);
        unscoped.add(None, vec![key("a")]);
        unscoped.add(Some(r#"cluster="prod""#), vec![key("b")]);
        assert_eq!(unscoped.selectors(), 2);
        assert_eq!(unscoped.groups.get(&(None, None)), Some(&vec![key("a")]));
    }

    #[test]
    fn several_clusters_are_asked_apart_under_their_label() {
        let in_cluster = |c: &str, name: &str| ContainerKey {
            cluster: Some(c.into()),
            ..key(name)
        };
        let mut wanted = Wanted::new(Some(r#"env="ml""#.into()), Some("k8s_cluster".into()));
        wanted.add(
            None,
            vec![in_cluster("prod", "a"), in_cluster("staging", "a")],
        );
        // A path's own selector wins; its figures are still the cluster's.
        wanted.add(Some(r#"region="eu""#), vec![in_cluster("prod", "b")]);
        // A cluster name is quoted, never pasted.
        wanted.add(None, vec![in_cluster(r#"x"}[1d]) or vector(1"#, "c")]);
        let groups: Vec<(Option<String>, Option<String>)> = wanted.groups.keys().cloned().collect();
        let g = |c: &str, s: &str| (Some(c.to_string()), Some(s.to_string()));
        assert_eq!(
            groups,
            [
                g("prod", r#"env="ml",k8s_cluster="prod""#),
                g("prod", r#"region="eu""#),
                g("staging", r#"env="ml",k8s_cluster="staging""#),
                g(
                    r#"x"}[1d]) or vector(1"#,
                    r#"env="ml",k8s_cluster="x\"}[1d]) or vector(1""#
                ),
            ]
        );
    }

    #[test]
    fn nothing_wanted_sends_nothing() {
        let opts = options(request(), QueryDefaults::default()).expect("options");
        let measured = measure(&opts, Wanted::new(None, None), |_| {}).expect("no queries");
        assert_eq!(measured.requests, 0);
        assert_eq!(measured.missing, 0);
        assert!(measured.usage.containers.is_empty());
        assert_eq!(
            measured.summary(&opts),
            "prometheus http://prometheus.example:9090, window 14d: 0 container(s) with data, 0 without, 0 node(s) (0 request(s))"
        );
    }
}
