//! The HTTP side: one `Client` per run that POSTs instant queries to `/api/v1/query` with the
//! token, headers and TLS roots given, caps answer bodies, refuses redirects, and redacts every
//! URL and secret it shows.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use super::aggregate::PodContainer;
use super::query::{Query, QueryPlan, Splits};
use super::{PrometheusError, PrometheusOptions};

pub(super) struct Client {
    agent: ureq::Agent,
    endpoint: String,
    /// The base URL without credentials, for messages.
    pub(super) url_shown: String,
    https: bool,
    headers: Vec<(String, String)>,
    auth: Option<String>,
    secrets: Vec<String>,
    timeout: Duration,
    max_body_bytes: u64,
    /// Evaluation time of every query (unix seconds), so all answers describe the same instant.
    time: String,
    pub(super) requests: usize,
    pub(super) warnings: Vec<String>,
    pub(super) notes: Vec<String>,
}

/// One element of a result vector.
pub(super) struct Row {
    pub(super) labels: BTreeMap<String, String>,
    pub(super) value: f64,
}

impl Row {
    pub(super) fn label(&self, name: &str) -> &str {
        self.labels.get(name).map(String::as_str).unwrap_or("")
    }

    /// `exported_<name>` when set (relabelled at scrape time), else `<name>`.
    pub(super) fn effective(&self, name: &str) -> &str {
        let exported = self
            .labels
            .get(&format!("exported_{name}"))
            .map(String::as_str)
            .unwrap_or("");
        if exported.is_empty() {
            self.label(name)
        } else {
            exported
        }
    }

    pub(super) fn pod_container(&self) -> Option<PodContainer> {
        let namespace = self.effective("namespace");
        let pod = self.effective("pod");
        let container = self.effective("container");
        if pod.is_empty() || container.is_empty() || container == "POD" {
            return None;
        }
        Some(PodContainer {
            namespace: namespace.to_string(),
            pod: pod.to_string(),
            container: container.to_string(),
        })
    }
}

#[derive(Deserialize)]
struct ApiResponse {
    status: String,
    #[serde(default)]
    data: Option<ApiData>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    pub(super) warnings: Vec<String>,
    #[serde(default)]
    infos: Vec<String>,
}

#[derive(Deserialize)]
struct ApiData {
    #[serde(rename = "resultType")]
    result_type: String,
    #[serde(default)]
    result: serde_json::Value,
}

#[derive(Deserialize)]
struct ApiSample {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    pub(super) value: (serde_json::Value, String),
}

impl Client {
    pub(super) fn new(opts: &PrometheusOptions) -> Result<Client, PrometheusError> {
        let raw = opts.url.trim();
        if raw.is_empty() {
            return Err(PrometheusError::Options(
                "the Prometheus URL is empty".into(),
            ));
        }
        let lower = raw.to_ascii_lowercase();
        let https = lower.starts_with("https://");
        if !https && !lower.starts_with("http://") {
            return Err(PrometheusError::Options(format!(
                "Prometheus URL {} must start with http:// or https://",
                redact_url(raw)
            )));
        }
        if opts.timeout.is_zero() {
            return Err(PrometheusError::Options(
                "the timeout must be positive".into(),
            ));
        }
        let (endpoint, url_shown) = endpoint_of(raw);

        // Everything redact_url hides is also scrubbed from what a server or a library echoes.
        let mut secrets = url_secrets(raw);
        let token = opts
            .bearer_token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let auth = token.map(|t| format!("Bearer {t}"));
        if let Some(t) = token {
            secrets.push(t.to_string());
        }
        let mut headers = Vec::new();
        for (name, value) in &opts.headers {
            let name = name.trim();
            if ureq::http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(PrometheusError::Options(format!(
                    "invalid HTTP header name {name:?}"
                )));
            }
            if ureq::http::HeaderValue::from_str(value.trim()).is_err() {
                return Err(PrometheusError::Options(format!(
                    "invalid value for HTTP header {name:?}"
                )));
            }
            if auth.is_some() && name.eq_ignore_ascii_case("authorization") {
                return Err(PrometheusError::Options(
                    "both a bearer token and an Authorization header are given".into(),
                ));
            }
            if is_sensitive_header(name) {
                secrets.push(value.trim().to_string());
            }
            headers.push((name.to_string(), value.trim().to_string()));
        }
        if let Some(a) = &auth {
            if ureq::http::HeaderValue::from_str(a).is_err() {
                return Err(PrometheusError::Options(
                    "the bearer token contains characters not allowed in an HTTP header".into(),
                ));
            }
        }
        // Only scrub secrets long enough not to mangle ordinary words.
        secrets.retain(|s| s.len() >= 4);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));

        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(path) = &opts.ca_file {
            tls = tls.root_certs(load_roots(path)?);
        }
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // Follow nothing: a redirect would carry the token and headers to the host it names.
            .max_redirects(0)
            .timeout_global(Some(opts.timeout))
            .timeout_connect(Some(opts.timeout.min(Duration::from_secs(10))))
            .user_agent(concat!("gpulint/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls.build())
            .build();
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| format!("{:.3}", d.as_secs_f64()))
            .unwrap_or_else(|_| "0".to_string());
        Ok(Client {
            agent: config.into(),
            endpoint,
            url_shown,
            https,
            headers,
            auth,
            secrets,
            timeout: opts.timeout,
            max_body_bytes: opts.max_body_bytes.max(1),
            time,
            requests: 0,
            warnings: Vec::new(),
            notes: Vec::new(),
        })
    }

    /// Replace every secret in `s`.
    fn scrub(&self, s: &str) -> String {
        let mut out = s.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "<redacted>");
            }
        }
        out
    }

    /// Run `q` over the whole store; if that is too expensive, once per namespace, and a
    /// namespace still too expensive once per wanted workload in it.
    pub(super) fn run(
        &mut self,
        plan: &QueryPlan,
        q: &Query,
        splits: &Splits,
    ) -> Result<Vec<Row>, PrometheusError> {
        let whole = plan.promql(q, "");
        match self.query(&whole) {
            Ok(rows) => Ok(rows),
            Err(e) if e.is_too_big() && !splits.namespaces.is_empty() => {
                self.notes.push(format!(
                    "query split into {} per-namespace queries after: {}\n  query: {whole}",
                    splits.namespaces.len(),
                    refusal(&e)
                ));
                let mut rows = Vec::new();
                for ns in &splits.namespaces {
                    match self.query(&plan.promql_in_namespace(q, ns)) {
                        Ok(r) => rows.extend(r),
                        Err(e) if e.is_too_big() => {
                            rows.extend(self.run_per_workload(plan, q, ns, splits, &e)?)
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(rows)
            }
            Err(e) => Err(e),
        }
    }

    /// `q` once per wanted workload of namespace `ns` (its pods by name), after the namespace
    /// alone was refused as too big (`refused`); a workload still refused once per pod (every
    /// figure is per pod, so the parts are the whole's rows); a pod still refused fails the
    /// run.
    fn run_per_workload(
        &mut self,
        plan: &QueryPlan,
        q: &Query,
        ns: &str,
        splits: &Splits,
        refused: &PrometheusError,
    ) -> Result<Vec<Row>, PrometheusError> {
        let Some(workloads) = splits.workloads.get(ns).filter(|w| !w.is_empty()) else {
            // No wanted workload has a pod there: nothing of it to measure.
            return Ok(Vec::new());
        };
        self.notes.push(format!(
            "namespace {ns} split into {} per-workload queries after: {}",
            workloads.len(),
            refusal(refused)
        ));
        let mut rows = Vec::new();
        for (kind, name, pods) in workloads {
            match self.query(&plan.promql_in_pods(q, ns, pods)) {
                Ok(r) => rows.extend(r),
                Err(e) if e.is_too_big() && pods.len() > 1 => {
                    self.notes.push(format!(
                        "workload {ns}/{kind}/{name} split into {} per-pod queries after: {}",
                        pods.len(),
                        refusal(&e)
                    ));
                    for pod in pods {
                        match self.query(&plan.promql_in_pods(q, ns, std::slice::from_ref(pod))) {
                            Ok(r) => rows.extend(r),
                            Err(e) => {
                                return Err(still_refused(
                                    e,
                                    &format!("pod {ns}/{pod} of {kind}/{name} alone"),
                                ))
                            }
                        }
                    }
                }
                Err(e) => {
                    return Err(still_refused(
                        e,
                        &format!("{ns}/{kind}/{name} alone, {} pod(s)", pods.len()),
                    ))
                }
            }
        }
        Ok(rows)
    }

    pub(super) fn query(&mut self, promql: &str) -> Result<Vec<Row>, PrometheusError> {
        // Let Prometheus give up (HTTP 503, errorType timeout) a little before we do.
        let server_timeout = self.timeout.mul_f64(0.9).max(Duration::from_millis(100));
        let server_timeout = format!("{}ms", server_timeout.as_millis());
        let mut req = self
            .agent
            .post(&self.endpoint)
            .header("Accept", "application/json");
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a.as_str());
        }
        self.requests += 1;
        let sent = req.send_form([
            ("query", promql),
            ("time", self.time.as_str()),
            ("timeout", server_timeout.as_str()),
        ]);
        let mut resp = match sent {
            Ok(r) => r,
            Err(e) => return Err(self.transport_error(e)),
        };
        let status = resp.status().as_u16();
        if (300..400).contains(&status) {
            let location = resp
                .headers()
                .get("location")
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_else(|| "(no Location)".to_string());
            return Err(PrometheusError::Redirect {
                url: self.url_shown.clone(),
                status,
                location: self.scrub(&redact_url(&location)),
            });
        }
        let body = self.read_capped(resp.body_mut())?;
        let parsed: Result<ApiResponse, _> = serde_json::from_str(&body);
        let api = match parsed {
            Ok(api) => api,
            Err(e) => {
                if !(200..300).contains(&status) {
                    return Err(PrometheusError::Http {
                        url: self.url_shown.clone(),
                        status,
                        body: self.scrub(&excerpt(&body)),
                    });
                }
                return Err(self.bad_response(
                    promql,
                    format!("not a Prometheus API answer ({e}): {}", excerpt(&body)),
                ));
            }
        };
        for w in api.warnings.iter().chain(api.infos.iter()) {
            let w = self.scrub(w);
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
        if api.status != "success" {
            return Err(PrometheusError::Query {
                url: self.url_shown.clone(),
                status,
                error_type: self.scrub(api.error_type.as_deref().unwrap_or("unknown")),
                message: self.scrub(api.error.as_deref().unwrap_or("(no error text)")),
                query: self.scrub(promql),
            });
        }
        if !(200..300).contains(&status) {
            return Err(PrometheusError::Http {
                url: self.url_shown.clone(),
                status,
                body: self.scrub(&excerpt(&body)),
            });
        }
        let Some(data) = api.data else {
            return Err(self.bad_response(promql, "status success but no data".into()));
        };
        if data.result_type != "vector" {
            return Err(self.bad_response(
                promql,
                format!("expected a vector result, got {:?}", data.result_type),
            ));
        }
        let samples: Vec<ApiSample> = match serde_json::from_value(data.result) {
            Ok(s) => s,
            Err(e) => return Err(self.bad_response(promql, format!("malformed result: {e}"))),
        };
        Ok(samples
            .into_iter()
            .filter_map(|s| {
                let value: f64 = s.value.1.trim().parse().ok()?;
                value.is_finite().then_some(Row {
                    labels: s.metric,
                    value,
                })
            })
            .collect())
    }

    /// The body, read incrementally and refused once it passes the cap (never held whole).
    fn read_capped(&self, body: &mut ureq::Body) -> Result<String, PrometheusError> {
        use std::io::Read;
        let mut bytes = Vec::new();
        let read = body
            .as_reader()
            .take(self.max_body_bytes.saturating_add(1))
            .read_to_end(&mut bytes);
        if let Err(e) = read {
            return Err(self.transport_error(ureq::Error::Io(e)));
        }
        if bytes.len() as u64 > self.max_body_bytes {
            return Err(PrometheusError::TooLarge {
                url: self.url_shown.clone(),
                limit: self.max_body_bytes,
            });
        }
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    fn bad_response(&self, promql: &str, reason: String) -> PrometheusError {
        PrometheusError::BadResponse {
            url: self.url_shown.clone(),
            query: self.scrub(promql),
            reason: self.scrub(&reason),
        }
    }

    fn transport_error(&self, e: ureq::Error) -> PrometheusError {
        let url = self.url_shown.clone();
        match e {
            ureq::Error::Timeout(_) => PrometheusError::Timeout {
                url,
                timeout: self.timeout,
            },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                PrometheusError::Timeout {
                    url,
                    timeout: self.timeout,
                }
            }
            // rustls handshake failures surface as InvalidData I/O errors wrapping rustls::Error.
            ureq::Error::Io(io)
                if self.https
                    && (io.kind() == std::io::ErrorKind::InvalidData
                        || io.to_string().contains("certificate")) =>
            {
                PrometheusError::Tls {
                    url,
                    reason: self.scrub(&tls_reason(&io.to_string())),
                }
            }
            ureq::Error::Io(io) => {
                let reason = match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => {
                        "connection refused (is Prometheus running at this address?)".to_string()
                    }
                    _ => io.to_string(),
                };
                PrometheusError::Connect {
                    url,
                    reason: self.scrub(&reason),
                }
            }
            ureq::Error::HostNotFound => PrometheusError::Connect {
                url,
                reason: "host not found (DNS)".into(),
            },
            ureq::Error::ConnectionFailed => PrometheusError::Connect {
                url,
                reason: "connection failed".into(),
            },
            ureq::Error::BodyExceedsLimit(n) => PrometheusError::Connect {
                url,
                reason: format!("answer larger than {n} bytes"),
            },
            e @ (ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Pem(_)) => {
                PrometheusError::Tls {
                    url,
                    reason: self.scrub(&tls_reason(&e.to_string())),
                }
            }
            other => PrometheusError::Connect {
                url,
                reason: self.scrub(&other.to_string()),
            },
        }
    }
}

/// A refusal of the narrowest query there is (`what`): the run's error, saying so.
fn still_refused(e: PrometheusError, what: &str) -> PrometheusError {
    match e {
        PrometheusError::Query {
            url,
            status,
            error_type,
            message,
            query,
        } => PrometheusError::Query {
            url,
            status,
            error_type,
            message: format!(
                "{message} (even for {what}: narrow --window, or raise the store's limit)"
            ),
            query,
        },
        e => e,
    }
}

/// What the store said when it refused a query.
fn refusal(e: &PrometheusError) -> String {
    match e {
        PrometheusError::Query { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

fn tls_reason(text: &str) -> String {
    if text.contains("UnknownIssuer") {
        format!(
            "{text} (signed by a private CA? pass that CA's PEM certificate with --prometheus-ca)"
        )
    } else {
        text.to_string()
    }
}

fn load_roots(path: &std::path::Path) -> Result<ureq::tls::RootCerts, PrometheusError> {
    let err = |reason: String| PrometheusError::CaFile {
        path: path.to_path_buf(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| err(format!("cannot read it: {e}")))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(err(format!("not valid PEM: {e}"))),
        }
    }
    if certs.is_empty() {
        return Err(err(
            "no PEM certificate (-----BEGIN CERTIFICATE-----) in it".to_string(),
        ));
    }
    Ok(ureq::tls::RootCerts::Specific(Arc::new(certs)))
}

pub(crate) fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization"
        || n == "proxy-authorization"
        || n == "cookie"
        || ["token", "secret", "password", "key", "auth", "credential"]
            .iter()
            .any(|w| n.contains(w))
}

/// The query endpoint of a base URL, and the base as shown. A query string (a proxy's
/// `?token=`) stays at the end: `https://h/p?x=1` -> `https://h/p/api/v1/query?x=1`.
fn endpoint_of(raw: &str) -> (String, String) {
    let (path, query) = match raw.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (raw, None),
    };
    let base = path.trim_end_matches('/');
    let base = base.strip_suffix("/api/v1/query").unwrap_or(base);
    let endpoint = format!("{base}/api/v1/query");
    match query {
        Some(q) => (
            format!("{endpoint}?{q}"),
            redact_url(&format!("{base}?{q}")),
        ),
        None => (endpoint, redact_url(base)),
    }
}

/// What [`redact_url`] hides in `url`: the user info (`user:password`, and its password
/// alone) and every query value, for scrubbing them from echoed text too.
fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some((userinfo, _)) = rest[..end].rsplit_once('@') {
        out.push(userinfo.to_string());
        if let Some((_, pw)) = userinfo.split_once(':') {
            out.push(pw.to_string());
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        let query = query.split('#').next().unwrap_or("");
        for pair in query.split('&') {
            if let Some((_, value)) = pair.split_once('=') {
                out.push(value.to_string());
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// `url` as it may be shown: without user info (`https://user:pw@host` ->
/// `https://<redacted>@host`) and with every query value replaced (`?token=x` ->
/// `?token=<redacted>`); a query value is as likely a credential as not.
pub fn redact_url(url: &str) -> String {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("<redacted>@{host}"),
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        None => tail.to_string(),
        Some((path, query)) => {
            let (query, fragment) = match query.split_once('#') {
                Some((q, f)) => (q, Some(f)),
                None => (query, None),
            };
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) => format!("{key}=<redacted>"),
                    None => pair.to_string(),
                })
                .collect();
            let mut t = format!("{path}?{}", query.join("&"));
            if fragment.is_some() {
                t.push_str("#<redacted>");
            }
            t
        }
    };
    match scheme {
        Some(scheme) => format!("{scheme}://{authority}{tail}"),
        None => format!("{authority}{tail}"),
    }
}

fn excerpt(body: &str) -> String {
    let t = body.trim();
    let mut s: String = t.chars().take(300).collect();
    if t.chars().count() > 300 {
        s.push_str("...");
    }
    if s.is_empty() {
        s.push_str("(empty body)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_redacted() {
        assert_eq!(
            redact_url("https://u:pw@h:9090/p?x=1"),
            "https://<redacted>@h:9090/p?x=<redacted>"
        );
        assert_eq!(redact_url("http://h:9090"), "http://h:9090");
        assert_eq!(
            redact_url("https://h/p?token=s3cr3t&x=1#frag"),
            "https://h/p?token=<redacted>&x=<redacted>#<redacted>"
        );
        assert_eq!(redact_url("https://h/a@b"), "https://h/a@b");
        assert_eq!(
            url_secrets("https://u:pw@h/?token=s3cr3t"),
            ["u:pw", "pw", "s3cr3t"]
        );
        assert!(url_secrets("https://h/a@b").is_empty());
        assert_eq!(
            endpoint_of("https://h/prom/?token=t1"),
            (
                "https://h/prom/api/v1/query?token=t1".to_string(),
                "https://h/prom?token=<redacted>".to_string()
            )
        );
        assert_eq!(
            endpoint_of("http://h:9090/api/v1/query/").0,
            "http://h:9090/api/v1/query"
        );
    }
}
