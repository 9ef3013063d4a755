//! A hostile repository (or a hostile server) against gpulint's Prometheus client: the token
//! and the custom headers go only to a host the command line or the environment names, never
//! to one a repository file or a redirect names; credentials in URLs are never shown; an
//! answer is read through a byte cap. Each test drives the real binary against a real TCP
//! listener on 127.0.0.1 that counts connections and records what it received.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::common::{gpulint, run_within, write_files, Finished};
const TOKEN: &str = "tok-hostile-7f3a9c";

const MANIFEST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: ml
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits: {nvidia.com/gpu: 1, cpu: \"4\", memory: 32Gi}
";

const EMPTY_VECTOR: &str = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;

/// What the listener answers to one request (its head and body as received).
enum Answer {
    /// Raw bytes written back as they are.
    Raw(Vec<u8>),
    /// A 200 claiming `Content-Length: declared`, then as many bytes as the client reads.
    Endless { declared: u64 },
}

/// A loopback listener: counts connections, records requests, answers from a closure.
struct Listener {
    url: String,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<String>>>,
    /// Body bytes written by `Answer::Endless`.
    streamed: Arc<AtomicU64>,
}

impl Listener {
    fn start(answer: impl Fn(&str) -> Answer + Send + Sync + 'static) -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let streamed = Arc::new(AtomicU64::new(0));
        let answer = Arc::new(answer);
        let (c, r, s) = (
            Arc::clone(&connections),
            Arc::clone(&requests),
            Arc::clone(&streamed),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let (r, s, answer) = (Arc::clone(&r), Arc::clone(&s), Arc::clone(&answer));
                std::thread::spawn(move || serve(stream, &r, &s, &*answer));
            }
        });
        Listener {
            url,
            connections,
            requests,
            streamed,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

fn serve(
    stream: TcpStream,
    requests: &Mutex<Vec<String>>,
    streamed: &AtomicU64,
    answer: &(dyn Fn(&str) -> Answer + Send + Sync),
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.trim().eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let end = line.trim_end().is_empty();
            head.push_str(&line);
            if end {
                break;
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request = format!("{head}{}", String::from_utf8_lossy(&body));
        let reply = answer(&request);
        requests.lock().expect("lock").push(request);
        let stream = reader.get_mut();
        match reply {
            Answer::Raw(bytes) => {
                if stream.write_all(&bytes).is_err() {
                    return;
                }
            }
            Answer::Endless { declared } => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
                );
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = vec![b' '; 64 * 1024];
                while streamed.load(Ordering::SeqCst) < declared {
                    if stream.write_all(&chunk).is_err() {
                        return;
                    }
                    streamed.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                }
                return;
            }
        }
    }
}

fn ok(body: &str) -> Answer {
    Answer::Raw(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

/// A repository (a git work tree) with the manifest and `files`.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ws = tmp.path().join("repo");
    git2::Repository::init(&ws).expect("git init");
    std::fs::write(ws.join("app.yaml"), MANIFEST).expect("write");
    write_files(&ws, files);
    tmp
}

/// gpulint in `dir` with `args`, a clean environment (PATH only) plus `env`, killed after 60 s.
fn gpulint_clean(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut cmd = gpulint();
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_within(&mut cmd, Duration::from_secs(60))
}

fn text(out: &Finished) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.code, out.stdout, out.stderr
    )
}

#[test]
fn a_repository_config_cannot_name_the_host_that_gets_the_token() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let config = format!(
        "rules: {{}}\nprometheus:\n  window: 14d\n  url: {}\n",
        server.url
    );
    let tmp = repo(&[(".gpulint.yaml", &config)]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(&ws, &["app.yaml"], &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)]);
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains(".gpulint.yaml:4:8: `prometheus.url`")
            && all.contains("--prometheus URL")
            && all.contains("GPULINT_PROMETHEUS_URL"),
        "{all}"
    );
    assert_eq!(server.connections(), 0, "a connection was made:\n{all}");
    assert!(!all.contains(TOKEN), "{all}");
}

#[test]
fn a_repository_config_cannot_name_a_token_file() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let tmp = repo(&[(
        ".gpulint.yaml",
        "prometheus:\n  token_file: ../secret.txt\n",
    )]);
    std::fs::write(tmp.path().join("secret.txt"), "outside-secret-41d8").expect("write");
    let ws = tmp.path().join("repo");
    // Even with --prometheus given (the old code read the file and let it win over the env).
    let out = gpulint_clean(
        &ws,
        &["--prometheus", &server.url, "app.yaml"],
        &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains(".gpulint.yaml:2:15: `prometheus.token_file`")
            && all.contains("--prometheus-token-file"),
        "{all}"
    );
    assert_eq!(server.connections(), 0, "{all}");
    assert!(!all.contains("outside-secret-41d8"), "{all}");
}

#[test]
fn the_token_goes_to_the_url_the_environment_names() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &["app.yaml"],
        &[
            ("GPULINT_PROMETHEUS_URL", &server.url),
            ("GPULINT_PROMETHEUS_TOKEN", TOKEN),
        ],
    );
    let all = text(&out);
    assert_ne!(out.code, 2, "{all}");
    let requests = server.requests();
    assert!(!requests.is_empty(), "{all}");
    let bearer = format!("authorization: bearer {TOKEN}");
    assert!(
        requests
            .iter()
            .all(|r| r.to_ascii_lowercase().contains(&bearer)),
        "{requests:#?}"
    );
}

#[test]
fn a_repository_config_cannot_choose_the_tenant_the_command_line_names() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let tmp = repo(&[(
        ".gpulint.yaml",
        "prometheus:\n  headers: {X-Scope-OrgID: other-team, AccountID: kept}\n",
    )]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &[
            "--prometheus",
            &server.url,
            "--prometheus-header",
            "x-scope-orgid: ci-team",
            "app.yaml",
        ],
        &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
    );
    let all = text(&out);
    assert_ne!(out.code, 2, "{all}");
    let requests = server.requests();
    assert!(!requests.is_empty(), "{all}");
    for r in &requests {
        let lower = r.to_ascii_lowercase();
        // Exactly one tenant header, the command line's; the config's other header still goes.
        assert_eq!(lower.matches("x-scope-orgid:").count(), 1, "{r}");
        assert!(lower.contains("x-scope-orgid: ci-team"), "{r}");
        assert!(!lower.contains("other-team"), "{r}");
        assert!(lower.contains("accountid: kept"), "{r}");
    }
}

#[test]
fn a_repository_config_cannot_send_credentials() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let tmp = repo(&[(
        ".gpulint.yaml",
        "prometheus:\n  headers:\n    Authorization: Bearer planted\n",
    )]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &["--prometheus", &server.url, "app.yaml"],
        &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains(".gpulint.yaml:3:5: `prometheus.headers`")
            && all.contains("--prometheus-header"),
        "{all}"
    );
    assert_eq!(server.connections(), 0, "{all}");
}

/// The CA decides which server may receive the token: a pull request that commits its own CA
/// (and names it in the config) must not make gpulint trust the server it vouches for with the
/// CI's token. Refused before any connection; without credentials the CA is used.
#[test]
fn a_repository_ca_is_not_trusted_with_the_token() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let tmp = repo(&[
        (".gpulint.yaml", "prometheus:\n  ca: certs/ca.pem\n"),
        (
            "certs/ca.pem",
            "-----BEGIN CERTIFICATE-----\nplanted\n-----END CERTIFICATE-----\n",
        ),
    ]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &["--prometheus", &server.url, "app.yaml"],
        &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains("`prometheus.ca`") && all.contains("--prometheus-ca"),
        "{all}"
    );
    assert!(!all.contains(TOKEN), "{all}");
    assert_eq!(server.connections(), 0, "{all}");
}

#[test]
fn a_ca_file_from_the_config_must_be_a_regular_file_inside_the_repository() {
    let tmp = repo(&[(".gpulint.yaml", "prometheus:\n  ca: ../outside.pem\n")]);
    std::fs::write(tmp.path().join("outside.pem"), "outside-pem-9b2e").expect("write");
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(&ws, &["app.yaml"], &[]);
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains(".gpulint.yaml:2:7: `prometheus.ca: ../outside.pem` resolves to")
            && all.contains("outside the repository"),
        "{all}"
    );

    // A FIFO inside the repository: refused, never opened (opening it would block forever).
    let status = Command::new("mkfifo")
        .arg(ws.join("ca.pem"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    std::fs::write(ws.join(".gpulint.yaml"), "prometheus:\n  ca: ca.pem\n").expect("write");
    let out = gpulint_clean(&ws, &["app.yaml"], &[]);
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains(".gpulint.yaml:2:7: `prometheus.ca: ca.pem`: not a regular file"),
        "{all}"
    );
}

#[test]
fn no_redirect_is_followed_and_its_location_is_shown_redacted() {
    let elsewhere = Listener::start(|_| ok(EMPTY_VECTOR));
    let target = elsewhere
        .url
        .replace("http://", "http://bob:loc-pass-5d1c@")
        + "/q?sig=loc-sig-77e0";
    let location = target.clone();
    let server = Listener::start(move |_| {
        Answer::Raw(
            format!("HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n")
                .into_bytes(),
        )
    });
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &[
            "--prometheus",
            &server.url,
            "--prometheus-header",
            "X-Scope-OrgID: tenant-secret-3a",
            "app.yaml",
        ],
        &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert_eq!(
        elsewhere.connections(),
        0,
        "the redirect was followed:\n{all}"
    );
    assert_eq!(server.requests().len(), 1, "{all}");
    let shown = elsewhere.url.replace("http://", "http://<redacted>@") + "/q?sig=<redacted>";
    assert!(
        all.contains(&format!("answered a redirect (HTTP 307) to {shown}"))
            && all.contains("follows no redirect"),
        "{all}"
    );
    for secret in ["loc-pass-5d1c", "loc-sig-77e0", TOKEN] {
        assert!(!all.contains(secret), "{secret} shown:\n{all}");
    }
}

#[test]
fn credentials_in_the_url_are_redacted_in_every_output() {
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let url =
        server.url.replace("http://", "http://alice:url-pass-c4f1@") + "/?token=qs-secret-8d2b";
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let secrets = ["url-pass-c4f1", "qs-secret-8d2b", "alice:"];
    for format in ["human", "json", "sarif", "github"] {
        let out = gpulint_clean(
            &ws,
            &["--prometheus", &url, "--format", format, "app.yaml"],
            &[],
        );
        let all = text(&out);
        assert_ne!(out.code, 2, "{all}");
        // The URL is shown (the summary line, and MET001 names the source), redacted.
        assert!(all.contains("<redacted>@127.0.0.1"), "{format}: {all}");
        assert!(all.contains("?token=<redacted>"), "{format}: {all}");
        for secret in secrets {
            assert!(!all.contains(secret), "{format}: {secret} shown:\n{all}");
        }
    }
    assert!(!server.requests().is_empty());

    // `gpulint snapshot`: its `source` field.
    let out = gpulint_clean(&ws, &["snapshot", "--prometheus", &url, "app.yaml"], &[]);
    let all = text(&out);
    assert_eq!(out.code, 0, "{all}");
    let snapshot: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let source = snapshot["source"].as_str().expect("source");
    assert!(source.contains("?token=<redacted>"), "{source}");
    for secret in secrets {
        assert!(!all.contains(secret), "snapshot: {secret} shown:\n{all}");
    }
}

#[test]
fn an_error_echoing_the_authorization_header_and_the_query_is_scrubbed() {
    // A server that echoes the request (headers included) in its error.
    let server = Listener::start(|request| {
        let body = serde_json::json!({
            "status": "error", "errorType": "bad_data", "error": request
        })
        .to_string();
        Answer::Raw(
            format!(
                "HTTP/1.1 400 Bad Request\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        )
    });
    let url =
        server.url.replace("http://", "http://alice:url-pass-c4f1@") + "/?token=qs-secret-8d2b";
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &[
            "--prometheus",
            &url,
            "--prometheus-header",
            "X-Api-Key: hdr-secret-0e9a",
            "app.yaml",
        ],
        &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(all.contains("rejected the query"), "{all}");
    // The echo reached gpulint (the server did see them) and none of it is shown.
    let seen = server.requests().concat();
    assert!(
        seen.contains(TOKEN) && seen.contains("hdr-secret-0e9a"),
        "{seen}"
    );
    // The query string stays a query string, after the API path.
    assert!(
        seen.starts_with("POST /api/v1/query?token=qs-secret-8d2b HTTP/1.1"),
        "{seen}"
    );
    for secret in [TOKEN, "hdr-secret-0e9a", "url-pass-c4f1", "qs-secret-8d2b"] {
        assert!(!all.contains(secret), "{secret} shown:\n{all}");
    }
}

#[test]
fn a_huge_answer_is_refused_at_the_cap_without_reading_it_whole() {
    const GIB: u64 = 1024 * 1024 * 1024;
    let server = Listener::start(|_| Answer::Endless { declared: GIB });
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(&ws, &["--prometheus", &server.url, "app.yaml"], &[]);
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(
        all.contains("sent an answer larger than 64 MiB") && all.contains("--prometheus-max-body"),
        "{all}"
    );
    // The read stopped at the cap (plus what sat in socket buffers), far from 1 GiB.
    let sent = server.streamed.load(Ordering::SeqCst);
    assert!(sent < 96 * 1024 * 1024, "{sent} bytes were sent");

    // The cap is an option.
    let server = Listener::start(|_| Answer::Endless { declared: GIB });
    let out = gpulint_clean(
        &ws,
        &[
            "--prometheus",
            &server.url,
            "--prometheus-max-body",
            "1",
            "app.yaml",
        ],
        &[],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(all.contains("larger than 1 MiB"), "{all}");
    let sent = server.streamed.load(Ordering::SeqCst);
    assert!(sent < 32 * 1024 * 1024, "{sent} bytes were sent");
}

/// A chart whose template is a symlink to a file outside the repository: Helm follows symlinks
/// in a chart folder, and gpulint showed the lines around a finding from that file (a secret
/// next to a `resources:` block reached the CI log). The chart is refused before Helm runs,
/// at the link, and nothing of the file is printed; the rest of the repository is still linted.
#[cfg(unix)]
#[test]
fn a_chart_symlink_leaving_the_repository_is_not_followed() {
    let tmp = repo(&[
        (
            "charts/c/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        ),
        ("charts/c/values.yaml", "replicas: 1\n"),
    ]);
    let ws = tmp.path().join("repo");
    let outside = tmp.path().join("outside-deploy.yaml");
    std::fs::write(
        &outside,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: leak\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          image: x\n          # SECRET-TOKEN-4242\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    )
    .expect("write");
    std::fs::create_dir_all(ws.join("charts/c/templates")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, ws.join("charts/c/templates/deploy.yaml"))
        .expect("symlink");
    let helm = crate::support::common::helm();
    let out = gpulint_clean(&ws, &["--helm", helm.to_str().expect("utf-8"), "."], &[]);
    let all = text(&out);
    assert!(!all.contains("SECRET-TOKEN-4242"), "{all}");
    assert!(
        all.contains("charts/c/templates/deploy.yaml")
            && all.contains("the chart is not rendered")
            && all.contains("outside"),
        "{all}"
    );
    // The plain manifest beside the chart is still linted; the refusal is an input error.
    assert!(all.contains("in 1 file(s); 1 input error(s)"), "{all}");
    assert_eq!(out.code, 2, "{all}");
    // `gpulint render` of the chart refuses it the same way, before Helm runs.
    let out = gpulint_clean(
        &ws,
        &[
            "render",
            "--helm",
            helm.to_str().expect("utf-8"),
            "charts/c",
        ],
        &[],
    );
    let all = text(&out);
    assert!(!all.contains("SECRET-TOKEN-4242"), "{all}");
    assert!(
        all.contains("the chart is not rendered") && out.code != 0,
        "{all}"
    );
}

/// Issue 24, item 10: a header from the repository that routes the request (`Host`, and the
/// proxies' `X-Forwarded-Host`, `X-Original-URL`) would send the CI's token to another virtual
/// host behind the same proxy. Refused at its line, before any connection.
#[test]
fn a_repository_config_cannot_send_routing_headers() {
    for name in ["Host", "X-Forwarded-Host", "X-Original-URL", "Forwarded"] {
        let server = Listener::start(|_| ok(EMPTY_VECTOR));
        let tmp = repo(&[(
            ".gpulint.yaml",
            &format!("prometheus:\n  headers:\n    {name}: attacker-vhost.example\n"),
        )]);
        let ws = tmp.path().join("repo");
        let out = gpulint_clean(
            &ws,
            &["--prometheus", &server.url, "app.yaml"],
            &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)],
        );
        let all = text(&out);
        assert_eq!(out.code, 2, "{name}: {all}");
        assert!(
            all.contains(".gpulint.yaml:3:5: `prometheus.headers`: a repository file may send tenant headers only")
                && all.contains(&format!("not `{name}`")),
            "{all}"
        );
        assert_eq!(server.connections(), 0, "{name}: {all}");
        assert!(!all.contains(TOKEN), "{all}");
    }
    // The command line is trusted: the same header given there is sent.
    let server = Listener::start(|_| ok(EMPTY_VECTOR));
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &[
            "--prometheus",
            &server.url,
            "--prometheus-header",
            "X-Forwarded-Host: ci-chosen.example",
            "app.yaml",
        ],
        &[],
    );
    let all = text(&out);
    assert_ne!(out.code, 2, "{all}");
    let requests = server.requests();
    assert!(!requests.is_empty(), "{all}");
    assert!(
        requests.iter().all(|r| r
            .to_ascii_lowercase()
            .contains("x-forwarded-host: ci-chosen.example")),
        "{requests:#?}"
    );
}

/// Issue 24, item 4: a `.gpulint.yaml` that links to a file outside the repository is refused
/// (exit 2, naming the link), and no word of the file is shown: the old error quoted its
/// first key (`unknown key `aws_access_key_id``). `--config` from the command line may name
/// any file.
#[test]
fn a_config_linking_outside_the_repository_is_not_read() {
    let tmp = repo(&[("sub/app.yaml", MANIFEST)]);
    let outside = tmp.path().join("credentials");
    std::fs::write(
        &outside,
        "aws_access_key_id: AKIASENTINEL4c1d\naws_secret_access_key: sentinel-secret-9e0f\n",
    )
    .expect("write");
    let ws = tmp.path().join("repo");
    std::os::unix::fs::symlink("../credentials", ws.join(".gpulint.yaml")).expect("symlink");
    // Found from the repository's root and from a folder below it (discovery goes up).
    for args in [&["app.yaml"][..], &["sub/app.yaml"][..], &["sub"][..]] {
        let out = gpulint_clean(&ws, args, &[]);
        let all = text(&out);
        assert_eq!(out.code, 2, "{args:?}: {all}");
        assert!(
            all.contains(".gpulint.yaml")
                && all.contains("outside the repository")
                && all.contains("gpulint never reads it"),
            "{all}"
        );
        for leaked in [
            "aws_access_key_id",
            "AKIASENTINEL4c1d",
            "sentinel-secret-9e0f",
        ] {
            assert!(!all.contains(leaked), "{leaked} leaked:\n{all}");
        }
    }
    // A link inside the repository is a config like any other.
    std::fs::write(ws.join("real.yaml"), "rules: {QOS001: off}\n").expect("write");
    std::fs::remove_file(ws.join(".gpulint.yaml")).expect("rm");
    std::os::unix::fs::symlink("real.yaml", ws.join(".gpulint.yaml")).expect("symlink");
    let out = gpulint_clean(&ws, &["app.yaml"], &[]);
    assert_ne!(out.code, 2, "{}", text(&out));
    // The command line is trusted: --config may name the outside file (its unknown keys are
    // then the user's own error to see).
    let out = gpulint_clean(
        &ws,
        &["--config", &outside.display().to_string(), "app.yaml"],
        &[],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(all.contains("unknown key `aws_access_key_id`"), "{all}");
}

/// Issue 24, item 11: `prometheus.selector` was pasted into the queries, so a pull request could
/// make the CI's token run its own PromQL. Now it is parsed as label matchers: the injection is
/// a config error at its line and column, and a real Prometheus receives no query at all.
#[test]
fn a_selector_cannot_inject_promql() {
    use crate::support::prometheus::{tools, Prometheus};
    let Some(tools) = tools() else { return };
    let work = tempfile::tempdir().expect("tempdir");
    let data = work.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    let prom = Prometheus::start(&tools, work.path(), &data, &[], None);
    let injection = r#"x="y"}[14d]) or label_replace(vector(1), "pwned", "1", "", "") or quantile_over_time(0.99, up{x="y""#;
    let configs = [
        (
            format!("prometheus:\n  selector: '{injection}'\n"),
            ".gpulint.yaml:2:19",
        ),
        (
            format!("prometheus:\n  selectors:\n  - path: '**'\n    selector: '{injection}'\n"),
            ".gpulint.yaml:4:21",
        ),
    ];
    for (config, at) in &configs {
        let tmp = repo(&[(".gpulint.yaml", config)]);
        let ws = tmp.path().join("repo");
        for command in [&[][..], &["snapshot", "-o", "usage.json"][..]] {
            let mut args: Vec<&str> = command.to_vec();
            args.extend(["--prometheus", &prom.url, "app.yaml"]);
            let out = gpulint_clean(&ws, &args, &[("GPULINT_PROMETHEUS_TOKEN", TOKEN)]);
            let all = text(&out);
            assert_eq!(out.code, 2, "{all}");
            assert!(
                all.contains(&format!(
                    "{at}: `prometheus` selector: not a list of label matchers"
                )),
                "{all}"
            );
            assert!(!ws.join("usage.json").exists(), "{all}");
        }
    }
    // The command line's selector goes through the same parser (an error, nothing sent).
    let tmp = repo(&[]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(
        &ws,
        &[
            "--prometheus",
            &prom.url,
            "--prometheus-selector",
            injection,
            "app.yaml",
        ],
        &[],
    );
    let all = text(&out);
    assert_eq!(out.code, 2, "{all}");
    assert!(all.contains("not a list of label matchers"), "{all}");
    assert_eq!(prom.query_requests(), 0, "a query reached Prometheus");
    // A valid selector still measures (queries are sent).
    let tmp = repo(&[(
        ".gpulint.yaml",
        "prometheus:\n  selector: \"cluster='prod'\"\n",
    )]);
    let ws = tmp.path().join("repo");
    let out = gpulint_clean(&ws, &["--prometheus", &prom.url, "app.yaml"], &[]);
    assert_ne!(out.code, 2, "{}", text(&out));
    assert!(prom.query_requests() > 0);
}
