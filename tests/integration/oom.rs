//! OOM advice as a pure function of the measurement (issue 11): the message, the JSON
//! `recommended` and what `--fix` writes are one number, in every fix round and every later run;
//! a kill never lowers a limit; once the manifest covers the need the kill is an info (MEM005),
//! so the run after a fix passes. Verdicts compare with the computed need, not its rounding.

use serde_json::Value;

use crate::support::common::{git, run};

const GI: f64 = 1024.0 * 1024.0 * 1024.0;
const MI: f64 = 1024.0 * 1024.0;

/// A snapshot with one container entry.
fn snapshot(kind: &str, name: &str, container: &str, series: &str) -> String {
    format!(
        r#"{{"version": 1, "window": "14d", "source": "test",
 "containers": [{{"namespace": "ml", "kind": "{kind}", "name": "{name}", "container": "{container}",
   "samples": 20160, "history_seconds": 1209600, {series}}}]}}
"#
    )
}

struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new(manifest: &str, metrics: &str) -> Repo {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("w.yaml"), manifest).expect("write manifest");
        std::fs::write(dir.path().join("m.json"), metrics).expect("write snapshot");
        Repo { dir }
    }

    fn run(&self, extra: &[&str]) -> (i32, String, String) {
        let mut args = vec!["w.yaml", "--metrics", "m.json"];
        args.extend_from_slice(extra);
        run(self.dir.path(), &args)
    }

    /// The findings of `rule` in the JSON output, and the exit code.
    fn findings(&self, rule: &str) -> (i32, Vec<Value>) {
        let (code, stdout, stderr) = self.run(&["--format", "json"]);
        let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        let all = v["findings"].as_array().cloned().unwrap_or_default();
        (
            code,
            all.into_iter()
                .filter(|f| f["rule"].as_str() == Some(rule))
                .collect(),
        )
    }

    fn text(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("w.yaml")).expect("read manifest")
    }
}

const MPIJOB: &str = "apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: allreduce
  namespace: ml
spec:
  mpiReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: mpi:1
              resources:
                requests:
                  cpu: \"8\"
                  memory: 32000Mi
                  nvidia.com/gpu: 1
                limits:
                  cpu: \"8\"
                  memory: 32000Mi
                  nvidia.com/gpu: 1
";

/// Killed at 32000Mi while sampling saw at most 20.8Gi: the advice starts from the limit it was
/// killed at (38Gi), never below it, and `--fix` writes that number.
#[test]
fn a_kill_above_the_observed_max_raises_from_the_limit_it_hit() {
    let series = format!(
        r#""memory_bytes": {{"p50": {}, "p99": {}, "max": {}}}, "oom_kills": 1, "memory_limit_bytes": {}"#,
        15.0 * GI,
        19.0 * GI,
        20.8 * GI,
        32000.0 * MI
    );
    let repo = Repo::new(MPIJOB, &snapshot("MPIJob", "allreduce", "worker", &series));
    let (code, found) = repo.findings("MEM003");
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:?}");
    let msg = found[0]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("at a memory limit of 31.2Gi"), "{msg}");
    assert!(
        msg.contains("set memory requests = limits to 38Gi"),
        "{msg}"
    );
    assert_eq!(found[0]["recommended"]["memory"], "38Gi");
    assert_eq!(found[0]["fixable"], true);
    let (code_1, _, stderr) = repo.run(&["--fix"]);
    assert_eq!(code_1, 0, "{stderr}");
    let text = repo.text();
    assert_eq!(text.matches("memory: 38Gi").count(), 2, "{stderr}\n{text}");
    // The next run: the kill is addressed (MEM005, info), and the run passes.
    let (code, found) = repo.findings("MEM003");
    assert!(found.is_empty(), "{found:?}");
    let (code_2, addressed) = repo.findings("MEM005");
    assert_eq!(code_2, 0);
    assert_eq!(addressed.len(), 1);
    assert_eq!(addressed[0]["severity"], "info");
    assert_eq!(addressed[0]["recommended"]["memory"], "38Gi");
    assert_eq!(code, 0);
}

const PYTORCHJOB: &str = "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: sft
  namespace: ml
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: pytorch:2
              resources:
                requests:
                  cpu: \"8\"
                  nvidia.com/gpu: 1
                limits:
                  cpu: \"8\"
                  nvidia.com/gpu: 1
";

/// No memory limit, killed: the bump starts from the observed max (22Gi × 1.2 = 26.4Gi → 27Gi).
/// One `--fix` run writes what the message said (not a second bump on top of round one), the fix
/// log names each field once, and the next run passes.
#[test]
fn one_fix_run_writes_the_number_the_message_gave() {
    let series = format!(
        r#""memory_bytes": {{"p50": {}, "p99": {}, "max": {}}}, "oom_kills": 1"#,
        12.0 * GI,
        20.0 * GI,
        22.0 * GI
    );
    let repo = Repo::new(
        PYTORCHJOB,
        &snapshot("PyTorchJob", "sft", "pytorch", &series),
    );
    let (code_3, found) = repo.findings("MEM003");
    assert_eq!(code_3, 1);
    assert_eq!(found.len(), 1, "{found:?}");
    let msg = found[0]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("to 27Gi"), "{msg}");
    assert_eq!(found[0]["recommended"]["memory"], "27Gi");
    let (code, _, stderr) = repo.run(&["--fix"]);
    let text = repo.text();
    // In the style of the mapping's other values (quoted here).
    assert_eq!(
        text.matches("memory: \"27Gi\"").count(),
        2,
        "{stderr}\n{text}"
    );
    for field in ["limits.memory", "requests.memory"] {
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("fixed ") && l.contains(&format!("{field}:")))
            .collect();
        assert_eq!(lines.len(), 1, "{field} once in the fix log:\n{stderr}");
        assert!(lines[0].contains("(none) -> 27Gi"), "{stderr}");
    }
    assert_eq!(code, 0, "{stderr}");
    // A second run and a second fix run change nothing.
    let (code, found) = repo.findings("MEM005");
    assert_eq!((code, found.len()), (0, 1), "{found:?}");
    let (code_4, diff, _) = repo.run(&["--fix", "--diff"]);
    assert_eq!(code_4, 0);
    assert_eq!(diff, "");
}

const DECODE: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: decode
  namespace: ml
spec:
  replicas: 1
  selector: {matchLabels: {app: decode}}
  template:
    metadata:
      labels: {app: decode}
    spec:
      containers:
        - name: decode
          image: vllm:1
          resources:
            requests:
              cpu: 4
              memory: 20Gi   # raised by gpulint --fix after a kill at 16Gi
              nvidia.com/gpu: 1
            limits:
              cpu: 4
              memory: 20Gi
              nvidia.com/gpu: 1
";

/// The run after a fix: killed at 16Gi, the manifest now says 20Gi (≥ 19.2Gi needed). Info,
/// not an error, at the limit's line, and never "set … to 18Gi".
#[test]
fn after_the_fix_the_kill_is_an_info_at_the_limit() {
    let series = format!(
        r#""memory_bytes": {{"p50": {}, "p99": {}, "max": {}}}, "oom_kills": 1, "memory_limit_bytes": {}"#,
        10.0 * GI,
        14.0 * GI,
        15.9 * GI,
        16.0 * GI
    );
    let repo = Repo::new(DECODE, &snapshot("Deployment", "decode", "decode", &series));
    let (code, found) = repo.findings("MEM005");
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(f["severity"], "info");
    assert_eq!(f["line"], 23, "the limit's line: {f}");
    let msg = f["message"].as_str().unwrap_or_default();
    assert!(msg.contains("at a memory limit of 16Gi"), "{msg}");
    assert!(
        msg.contains("the limit is now 20Gi, at or above the recommendation"),
        "{msg}"
    );
    assert_eq!(f["recommended"]["memory"], "20Gi", "never below the limit");
    assert_eq!(f["fixable"], false);
    assert_eq!(code, 0);
    assert!(repo.findings("MEM003").1.is_empty());
    assert!(repo.findings("MEM002").1.is_empty(), "no lowering advice");
    let (code_5, diff, _) = repo.run(&["--fix", "--diff"]);
    assert_eq!(code_5, 0);
    assert_eq!(diff, "", "nothing to write");
}

fn replicaset(limit: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: proxy
  namespace: ml
spec:
  replicas: 1
  selector: {{matchLabels: {{app: proxy}}}}
  template:
    metadata:
      labels: {{app: proxy}}
    spec:
      containers:
        - name: proxy
          image: envoy:1
          resources:
            requests:
              memory: {limit}
            limits:
              memory: {limit}
"
    )
}

/// P99 171Mi, max 185Mi: the need is max(171Mi × 1.15, 185Mi) ≈ 197Mi. A 250Mi limit covers it
/// although a fix would write 256Mi; a 190Mi limit does not.
#[test]
fn verdicts_compare_with_the_need_not_its_rounding() {
    let series = format!(
        r#""memory_bytes": {{"p50": {}, "p99": {}, "max": {}}}"#,
        120.0 * MI,
        171.0 * MI,
        185.0 * MI
    );
    let metrics = snapshot("ReplicaSet", "proxy", "proxy", &series);
    let enough = Repo::new(&replicaset("250Mi"), &metrics);
    assert!(enough.findings("MEM001").1.is_empty());
    let short = Repo::new(&replicaset("190Mi"), &metrics);
    let (code_6, found) = short.findings("MEM001");
    assert_eq!(code_6, 1);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["recommended"]["memory"], "256Mi");
}

const OVERSIZED: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: ml
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm:1
          resources:
            requests:
              cpu: 4
              memory: 48Gi
              nvidia.com/gpu: 1
            limits:
              cpu: 4
              memory: 64Gi
              nvidia.com/gpu: 1
";

/// Round 1 sets the request to the limit (QOS002: 48Gi -> 64Gi), round 2 sets both to the
/// measured 21Gi (MEM002). The log and the commit message say `48Gi -> 21Gi` once, never the
/// intermediate 64Gi.
#[test]
fn the_fix_log_prints_each_fields_net_change_once() {
    let series = format!(
        r#""memory_bytes": {{"p50": {}, "p99": {}, "max": {}}}"#,
        10.0 * GI,
        18.0 * GI,
        19.0 * GI
    );
    let repo = Repo::new(OVERSIZED, &snapshot("Deployment", "llm", "vllm", &series));
    let dir = repo.dir.path();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "w.yaml"]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "initial",
        ],
    );
    let (code, _, stderr) = repo.run(&["--fix", "--commit"]);
    assert_eq!(code, 0, "{stderr}");
    let text = repo.text();
    assert_eq!(text.matches("memory: 21Gi").count(), 2, "{text}");
    let message = git(dir, &["log", "-1", "--format=%B"]);
    for log in [stderr.as_str(), message.as_str()] {
        assert!(!log.contains("-> 64Gi"), "no intermediate round:\n{log}");
        assert!(!log.contains("requests.memory: 64Gi"), "{log}");
        assert_eq!(
            log.matches("requests.memory: 48Gi -> 21Gi").count(),
            1,
            "{log}"
        );
        assert_eq!(
            log.matches("limits.memory: 64Gi -> 21Gi").count(),
            1,
            "{log}"
        );
    }
}

/// RES001 (a request above its limit) raises the limit, never lowers the request: to the
/// measured recommendation when it is above the request, else to the request.
#[test]
fn a_request_above_its_limit_raises_the_limit_to_the_measurement() {
    let manifest = replicaset("16Gi").replace(
        "            limits:\n              memory: 16Gi\n",
        "            limits:\n              memory: 8Gi\n",
    );
    assert!(manifest.contains("memory: 8Gi"), "{manifest}");
    let measured = |p99: f64| {
        snapshot(
            "ReplicaSet",
            "proxy",
            "proxy",
            &format!(r#""memory_bytes": {{"p99": {p99}, "max": {p99}}}"#),
        )
    };
    for (p99, want) in [(20.0 * GI, "23Gi"), (4.0 * GI, "16Gi")] {
        let repo = Repo::new(&manifest, &measured(p99));
        let (code_7, found) = repo.findings("RES001");
        assert_eq!(code_7, 1);
        assert_eq!(found.len(), 1, "{found:?}");
        let (code_8, _, stderr) = repo.run(&["--fix", "--select", "RES001"]);
        assert_eq!(code_8, 0, "{stderr}");
        let text = repo.text();
        assert!(
            text.contains("requests:\n              memory: 16Gi"),
            "never lowered: {text}"
        );
        assert!(
            text.contains(&format!("limits:\n              memory: {want}")),
            "{stderr}\n{text}"
        );
    }
}
