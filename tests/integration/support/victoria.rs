//! A real VictoriaMetrics (Debian's `victoria-metrics`, single-node) for tests: start on a free
//! loopback port with its own data folder, import OpenMetrics text through its Prometheus
//! import API, flush, and serve the same PromQL API gpulint queries; killed on drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::prometheus::free_port;

/// The server binary: `GPULINT_VICTORIA_METRICS`, else `victoria-metrics` on PATH. A missing
/// binary fails the test (scripts/test installs the package); `GPULINT_SKIP_PROMETHEUS=1`
/// skips it as it skips Prometheus.
pub fn binary() -> Option<PathBuf> {
    let from_env = std::env::var_os("GPULINT_VICTORIA_METRICS")
        .map(PathBuf::from)
        .filter(|p| p.is_file());
    let on_path = || {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .chain([PathBuf::from("/usr/bin")])
            .map(|d| d.join("victoria-metrics"))
            .find(|p| p.is_file())
    };
    match from_env.or_else(on_path) {
        Some(p) => Some(p),
        None if std::env::var("GPULINT_SKIP_PROMETHEUS").as_deref() == Ok("1") => {
            eprintln!("victoria-metrics not installed: skipped (GPULINT_SKIP_PROMETHEUS=1)");
            None
        }
        None => panic!(
            "victoria-metrics not found on PATH: run scripts/test, which installs Debian's \
             `victoria-metrics` package (apt-get install victoria-metrics)"
        ),
    }
}

pub struct VictoriaMetrics {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    log: PathBuf,
    agent: ureq::Agent,
}

impl VictoriaMetrics {
    /// Starts a server storing under `work/vm-data`.
    pub fn start(binary: &Path, work: &Path) -> VictoriaMetrics {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        let mut last = String::new();
        for attempt in 0..3 {
            let port = free_port();
            let log = work.join(format!("victoria-metrics-{port}.log"));
            let logf = std::fs::File::create(&log).expect("create log");
            let child = Command::new(binary)
                .arg(format!(
                    "-storageDataPath={}",
                    work.join("vm-data").display()
                ))
                .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
                // The samples are days old: keep them, and answer from them at once.
                .arg("-retentionPeriod=100y")
                .arg("-search.latencyOffset=0s")
                .arg("-search.disableCache")
                .arg("-loggerLevel=WARN")
                .stdin(Stdio::null())
                .stdout(logf.try_clone().expect("clone log"))
                .stderr(logf)
                .spawn()
                .expect("start victoria-metrics");
            let mut server = VictoriaMetrics {
                child,
                url: format!("http://127.0.0.1:{port}"),
                log,
                agent: agent.clone(),
            };
            match server.wait_ready(Duration::from_secs(30)) {
                Ok(()) => return server,
                Err(e) => last = format!("attempt {attempt}: {e}\n{}", server.log_text()),
            }
        }
        panic!("victoria-metrics did not become ready:\n{last}");
    }

    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let health = format!("{}/health", self.url);
        super::prometheus::wait_ready(&mut self.child, &self.agent, &health, limit)
    }

    /// Imports OpenMetrics files (timestamps in seconds) through `/api/v1/import/prometheus`
    /// (milliseconds), then flushes so that queries see every sample.
    pub fn import(&self, files: &[PathBuf]) {
        for file in files {
            let text = std::fs::read_to_string(file).expect("read OpenMetrics file");
            let mut body = String::with_capacity(text.len() + text.len() / 8);
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                let (series, ts) = line.rsplit_once(' ').expect("sample line");
                let seconds: i64 = ts.parse().expect("timestamp in seconds");
                body.push_str(series);
                body.push(' ');
                body.push_str(&(seconds * 1000).to_string());
                body.push('\n');
            }
            let resp = self
                .agent
                .post(format!("{}/api/v1/import/prometheus", self.url))
                .send(body)
                .expect("import");
            assert!(resp.status().is_success(), "import: {}", resp.status());
        }
        let resp = self
            .agent
            .get(format!("{}/internal/force_flush", self.url))
            .call()
            .expect("force_flush");
        assert!(resp.status().is_success(), "force_flush: {}", resp.status());
    }

    pub fn log_text(&self) -> String {
        super::prometheus::log_text(&self.log)
    }
}

impl Drop for VictoriaMetrics {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
