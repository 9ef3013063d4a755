//! A real Prometheus server for tests: backfill with promtool, start on a free loopback port,
//! wait for `/-/ready`, kill on drop (also when the test panics).

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binaries of Debian's `prometheus` package.
#[derive(Clone, Debug)]
pub struct Tools {
    pub prometheus: PathBuf,
    pub promtool: PathBuf,
}

fn find(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env).map(PathBuf::from) {
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The Prometheus binaries, or `None` when they are missing and `GPULINT_SKIP_PROMETHEUS=1`.
/// Panics (fails the test) when they are missing otherwise.
pub fn tools() -> Option<Tools> {
    match (
        find("GPULINT_PROMETHEUS", "prometheus"),
        find("GPULINT_PROMTOOL", "promtool"),
    ) {
        (Some(prometheus), Some(promtool)) => Some(Tools {
            prometheus,
            promtool,
        }),
        _ if std::env::var("GPULINT_SKIP_PROMETHEUS").as_deref() == Ok("1") => {
            eprintln!("prometheus/promtool not installed: skipped (GPULINT_SKIP_PROMETHEUS=1)");
            None
        }
        _ => panic!(
            "prometheus and/or promtool not found on PATH: run scripts/test, which installs \
             Debian's `prometheus` package (apt-get install prometheus), or set \
             GPULINT_SKIP_PROMETHEUS=1 to skip the tests that need a real Prometheus"
        ),
    }
}

/// Turn OpenMetrics files into TSDB blocks in `data` (one promtool per file, in parallel).
pub fn backfill(tools: &Tools, files: &[PathBuf], data: &Path) {
    std::fs::create_dir_all(data).expect("create data dir");
    let mut children = Vec::new();
    for file in files {
        let child = Command::new(&tools.promtool)
            .args(["tsdb", "create-blocks-from", "openmetrics", "--quiet"])
            // Hidden flag (present in 2.42): one block per UTC day instead of 12 of 2h.
            .arg("--max-block-duration=24h")
            .arg(file)
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run promtool");
        children.push((file.clone(), child));
    }
    for (file, child) in children {
        let out = child.wait_with_output().expect("wait for promtool");
        assert!(
            out.status.success(),
            "promtool tsdb create-blocks-from openmetrics {} failed ({}):\n{}{}",
            file.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Copy a data directory (blocks only) for a second server.
pub fn copy_blocks(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create data dir");
    for entry in std::fs::read_dir(from).expect("read data dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        // Blocks are ULID-named directories; skip wal/, chunks_head/, lock, queries.active.
        if !entry.path().is_dir() || name_str.len() != 26 {
            continue;
        }
        let dst = to.join(&name);
        std::fs::create_dir_all(dst.join("chunks")).expect("mkdir");
        for f in ["meta.json", "index", "tombstones"] {
            let src = entry.path().join(f);
            if src.exists() {
                std::fs::copy(&src, dst.join(f)).expect("copy block file");
            }
        }
        for c in std::fs::read_dir(entry.path().join("chunks")).expect("chunks") {
            let c = c.expect("chunk");
            std::fs::copy(c.path(), dst.join("chunks").join(c.file_name())).expect("copy chunk");
        }
    }
}

/// A running server; killed (and reaped) on drop.
pub struct Prometheus {
    child: Child,
    pub port: u16,
    /// `http://127.0.0.1:<port>` (or https).
    pub url: String,
    log: PathBuf,
    agent: ureq::Agent,
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// Waits until `url` answers 2xx, the server `child` having not exited, for at most `limit`.
pub fn wait_ready(
    child: &mut Child,
    agent: &ureq::Agent,
    url: &str,
    limit: Duration,
) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("the server exited early: {status}"));
        }
        if let Ok(resp) = agent.get(url).call() {
            if resp.status().is_success() {
                return Ok(());
            }
        }
        if start.elapsed() > limit {
            return Err(format!("not ready after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A server's log file, as far as it was written.
pub fn log_text(log: &Path) -> String {
    let mut s = String::new();
    if let Ok(mut f) = std::fs::File::open(log) {
        let _ = f.read_to_string(&mut s);
    }
    s
}

impl Prometheus {
    /// Start on `data` with a minimal config (no scrape jobs) written into `work`.
    /// `web_config`: contents of a `--web.config.file` (TLS), if any.
    pub fn start(
        tools: &Tools,
        work: &Path,
        data: &Path,
        extra: &[&str],
        web_config: Option<&str>,
    ) -> Prometheus {
        let config = work.join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 1h\n").expect("write config");
        let https = web_config.is_some();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(5)))
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .disable_verification(true)
                    .build(),
            )
            .build()
            .into();
        let mut last_log = String::new();
        for attempt in 0..3 {
            let port = free_port();
            let log = work.join(format!("prometheus-{port}.log"));
            let mut cmd = Command::new(&tools.prometheus);
            cmd.arg(format!("--config.file={}", config.display()))
                .arg(format!("--storage.tsdb.path={}", data.display()))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--storage.tsdb.retention.time=30d")
                .arg("--log.level=warn")
                .args(extra);
            if let Some(wc) = web_config {
                let path = work.join("web.yml");
                std::fs::write(&path, wc).expect("write web config");
                cmd.arg(format!("--web.config.file={}", path.display()));
            }
            let logf = std::fs::File::create(&log).expect("create log");
            let child = cmd
                .stdin(Stdio::null())
                .stdout(logf.try_clone().expect("clone log"))
                .stderr(logf)
                .spawn()
                .expect("start prometheus");
            let scheme = if https { "https" } else { "http" };
            let mut server = Prometheus {
                child,
                port,
                url: format!("{scheme}://127.0.0.1:{port}"),
                log,
                agent: agent.clone(),
            };
            match server.wait_ready(Duration::from_secs(30)) {
                Ok(()) => return server,
                Err(e) => {
                    last_log = format!("attempt {attempt}: {e}\n{}", server.log_text());
                    // Dropping kills it; try another port (it may have been taken meanwhile).
                }
            }
        }
        panic!("prometheus did not become ready:\n{last_log}");
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let ready = format!("{}/-/ready", self.url);
        wait_ready(&mut self.child, &self.agent, &ready, limit)
    }

    pub fn log_text(&self) -> String {
        log_text(&self.log)
    }

    /// Sum of `prometheus_http_requests_total{handler="/api/v1/query"}` over all codes.
    pub fn query_requests(&self) -> u64 {
        let text = self
            .agent
            .get(format!("{}/metrics", self.url))
            .call()
            .expect("GET /metrics")
            .body_mut()
            .read_to_string()
            .expect("read /metrics");
        text.lines()
            .filter(|l| {
                l.starts_with("prometheus_http_requests_total{")
                    && l.contains(r#"handler="/api/v1/query""#)
            })
            .map(|l| {
                let v = l.rsplit(' ').next().unwrap_or("0");
                v.parse::<f64>().expect("counter value") as u64
            })
            .sum()
    }

    /// Raw instant query (for checks), returns the JSON answer.
    pub fn query_json(&self, promql: &str) -> serde_json::Value {
        let body = self
            .agent
            .post(format!("{}/api/v1/query", self.url))
            .send_form([("query", promql)])
            .expect("query")
            .body_mut()
            .read_to_string()
            .expect("read");
        serde_json::from_str(&body).expect("json")
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
