//! The GitHub Action (action.yml + scripts/action/), run locally: scripts/action/run.sh with
//! the variables a runner sets, on temporary git repositories made with the real `git` CLI,
//! using the gpulint binary cargo built for this test (GPULINT_BIN), never `cargo install`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const GPULINT: &str = env!("CARGO_BIN_EXE_gpulint");

use crate::support::common::{self, run as gpulint};

/// `git` (isolated: see tests/integration/support/common.rs) with its output trimmed, as these tests compare
/// commit ids and file texts.
fn git(dir: &Path, args: &[&str]) -> String {
    common::git(dir, args).trim().to_owned()
}

/// A GPU002 mistake (request 2, limit 1) and nothing else: Guaranteed CPU and memory.
const BAD: &str = "\
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
            requests:
              nvidia.com/gpu: 2
              cpu: \"4\"
              memory: 32Gi
            limits:
              nvidia.com/gpu: 1
              cpu: \"4\"
              memory: 32Gi
";

const CLEAN: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: embedder
  namespace: ml
spec:
  template:
    spec:
      containers:
        - name: tei
          image: ghcr.io/huggingface/text-embeddings-inference:1.5
          resources:
            limits: {nvidia.com/gpu: 1, cpu: \"2\", memory: 8Gi}
";

/// Warnings only: a GPU container without a memory limit (QOS001) and Burstable (QOS002).
const WARN_ONLY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: notebook
  namespace: research
spec:
  template:
    spec:
      containers:
        - name: jupyter
          image: jupyter/pytorch-notebook:latest
          resources:
            requests: {nvidia.com/gpu: 1, cpu: \"2\", memory: 16Gi}
            limits: {nvidia.com/gpu: 1, cpu: \"2\"}
";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn init_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Test"]);
    git(dir, &["config", "user.email", "test@example.com"]);
}

fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A repo with `files`, committed on main.
fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    init_repo(&ws);
    for (name, text) in files {
        write(&ws, name, text);
    }
    commit_all(&ws, "manifests");
    (tmp, ws)
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    summary: String,
    outputs: BTreeMap<String, String>,
    /// GITHUB_OUTPUT as written, for secret checks.
    output_text: String,
}

impl Outcome {
    fn annotations(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| {
                l.starts_with("::error file=")
                    || l.starts_with("::warning file=")
                    || l.starts_with("::notice file=")
            })
            .collect()
    }

    /// The rows of the findings table (the sizing sections after it are not findings).
    fn rows(&self) -> Vec<&str> {
        self.summary
            .lines()
            .take_while(|l| !l.starts_with("### "))
            .filter(|l| l.starts_with("| ") && !l.starts_with("| file:line "))
            .collect()
    }

    fn context(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}\n--- summary\n{}\n--- outputs\n{}",
            self.code, self.stdout, self.stderr, self.summary, self.output_text
        )
    }
}

/// GITHUB_OUTPUT as the runner reads it: `key=value` lines, and `key<<DELIMITER` followed by
/// the value's lines up to a line that is DELIMITER (a missing delimiter fails the step on
/// GitHub, and the test here).
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((key, delimiter)) = line.split_once("<<") {
            let mut value = Vec::new();
            loop {
                let next = lines
                    .next()
                    .unwrap_or_else(|| panic!("no closing delimiter for {key}:\n{text}"));
                if next == delimiter {
                    break;
                }
                value.push(next);
            }
            outputs.insert(key.to_string(), value.join("\n"));
        } else if let Some((key, value)) = line.split_once('=') {
            outputs.insert(key.to_string(), value.to_string());
        } else if !line.is_empty() {
            panic!("not an output line: {line:?}\n{text}");
        }
    }
    outputs
}

/// Runs scripts/action/run.sh in `ws` as the runner would: a clean environment with the
/// runner's variables and the inputs as INPUT_* (names upper-cased, `-` as `_`).
fn run_action(
    ws: &Path,
    event: &str,
    inputs: &[(&str, &str)],
    extra_env: &[(&str, &str)],
) -> Outcome {
    let runner = ws.parent().unwrap().join("runner");
    let temp = runner.join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let summary = runner.join("step_summary.md");
    let output = runner.join("github_output");
    std::fs::write(&summary, "").unwrap();
    std::fs::write(&output, "").unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/action/run.sh"))
        .current_dir(ws)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &runner)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GPULINT_BIN", GPULINT)
        .env("GITHUB_EVENT_NAME", event)
        .env("GITHUB_WORKSPACE", ws)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .env("RUNNER_TEMP", &temp);
    if event == "pull_request" {
        cmd.env("GITHUB_BASE_REF", "main")
            .env("GITHUB_HEAD_REF", "feature");
    }
    for (name, value) in inputs {
        cmd.env(
            format!("INPUT_{}", name.to_uppercase().replace('-', "_")),
            value,
        );
    }
    for (name, value) in extra_env {
        cmd.env(name, value);
    }
    let out = cmd.output().expect("bash runs");
    let output_text = std::fs::read_to_string(&output).unwrap();
    let outputs = parse_outputs(&output_text);
    let leftovers: Vec<_> = std::fs::read_dir(&temp).unwrap().collect();
    assert!(leftovers.is_empty(), "run.sh left files in RUNNER_TEMP");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        summary: std::fs::read_to_string(&summary).unwrap(),
        outputs,
        output_text,
    }
}

fn json_findings(dir: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = gpulint(dir, &all);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap().clone();
    assert_eq!(code, i32::from(!findings.is_empty()), "{stderr}");
    findings
}

#[test]
fn github_format_annotates_and_summarises_every_finding() {
    let (_tmp, ws) = repo(&[("apps/bad.yaml", BAD), ("apps/clean.yaml", CLEAN)]);
    let findings = json_findings(&ws, &["."]);
    assert_eq!(
        findings.len(),
        1,
        "the fixture has one mistake: {findings:?}"
    );
    assert_eq!(findings[0]["rule"], "GPU002");
    let line = findings[0]["line"].as_u64().unwrap();

    let run = run_action(&ws, "push", &[("paths", "apps")], &[]);
    assert_eq!(run.code, 1, "{}", run.context());

    // The annotation: on stdout, where the runner reads workflow commands.
    let annotations = run.annotations();
    assert_eq!(annotations.len(), 1, "{}", run.context());
    let prefix = format!("::error file=apps/bad.yaml,line={line},");
    assert!(annotations[0].starts_with(&prefix), "{}", annotations[0]);
    assert!(
        annotations[0].contains(",title=GPU002 gpu-request-limit-mismatch::"),
        "{}",
        annotations[0]
    );
    // Rendered from the JSON, yet exactly what `gpulint --format github` prints.
    let (code, github, stderr) = gpulint(&ws, &["--format", "github", "apps"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(annotations, github.lines().collect::<Vec<_>>());

    // The summary: a header line of counts and one row per finding.
    assert!(run.summary.starts_with("## gpulint\n"), "{}", run.summary);
    assert!(
        run.summary
            .contains("**1 finding**: 1 error, 0 warnings, 0 notices · 0 input errors · fail-on `warning` · exit code 1 (failed)"),
        "{}",
        run.summary
    );
    assert!(
        run.summary
            .contains("| file:line | rule | message | suggested value |\n|---|---|---|---|\n"),
        "{}",
        run.summary
    );
    let rows = run.rows();
    assert_eq!(rows.len(), 1, "{}", run.summary);
    assert!(
        rows[0].starts_with(&format!("| apps/bad.yaml:{line} | GPU002 (error) | ")),
        "{}",
        rows[0]
    );
    assert!(
        rows[0].ends_with(" | - |"),
        "no measured value: {}",
        rows[0]
    );
    assert!(!run.summary.contains("clean.yaml"));

    assert_eq!(run.outputs["findings"], "1");
    assert_eq!(run.outputs["errors"], "1");
    assert_eq!(run.outputs["warnings"], "0");
    assert_eq!(run.outputs["exit-code"], "1");
    assert!(
        !run.outputs.contains_key("changed-since"),
        "a push event lints everything"
    );

    // An error finding fails fail-on error too; the clean file alone passes.
    let run = run_action(&ws, "push", &[("paths", "apps"), ("fail-on", "error")], &[]);
    assert_eq!(run.code, 1, "{}", run.context());
    let run = run_action(&ws, "push", &[("paths", "apps/clean.yaml")], &[]);
    assert_eq!(run.code, 0, "{}", run.context());
    assert!(run.annotations().is_empty());
    assert!(run.summary.contains("**0 findings**"), "{}", run.summary);
    assert!(run.rows().is_empty(), "{}", run.summary);
}

#[test]
fn fail_on_decides_the_exit_code_of_a_warning_only_repo() {
    let (_tmp, ws) = repo(&[("notebook.yaml", WARN_ONLY), ("clean.yaml", CLEAN)]);
    let expected = json_findings(&ws, &["."]);
    assert!(!expected.is_empty());
    assert!(expected.iter().all(|f| f["severity"] == "warning"));

    let run = run_action(&ws, "push", &[], &[]);
    assert_eq!(
        run.code,
        1,
        "fail-on warning (the default): {}",
        run.context()
    );
    assert_eq!(run.annotations().len(), expected.len(), "{}", run.context());
    assert!(run
        .annotations()
        .iter()
        .all(|a| a.starts_with("::warning file=notebook.yaml,line=")));

    let run = run_action(&ws, "push", &[("fail-on", "error")], &[]);
    assert_eq!(run.code, 0, "fail-on error: {}", run.context());
    // Still reported, only not failing.
    assert_eq!(run.annotations().len(), expected.len());
    assert_eq!(run.rows().len(), expected.len(), "{}", run.summary);
    for (row, f) in run.rows().iter().zip(&expected) {
        let head = format!(
            "| notebook.yaml:{} | {} (warning) | ",
            f["line"],
            f["rule"].as_str().unwrap()
        );
        assert!(row.starts_with(&head), "{row}");
    }
    assert!(
        run.summary.contains("exit code 0 (passed)"),
        "{}",
        run.summary
    );
    assert_eq!(run.outputs["exit-code"], "0");

    // A bad input is an action error (2), not a lint result.
    let run = run_action(&ws, "push", &[("fail-on", "sometimes")], &[]);
    assert_eq!(run.code, 2);
    assert!(run
        .stdout
        .contains("::error title=gpulint action::fail-on must be"));
    let run = run_action(&ws, "push", &[("paths", "--select GPU001")], &[]);
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("looks like an option"),
        "{}",
        run.context()
    );
}

#[test]
fn the_suggested_value_comes_from_the_measured_recommendation() {
    // 14 days of usage far above the 32Gi limit: MEM001 with a recommended memory.
    let snapshot = r#"{"version": 1, "window": "14d",
 "containers": [{"namespace": "ml", "kind": "Deployment", "name": "embedder", "container": "tei",
   "samples": 20160, "history_seconds": 1209600,
   "memory_bytes": {"p50": 9.0e9, "p99": 1.2e10, "max": 1.3e10},
   "cpu_cores": {"p50": 1.2, "p99": 1.5, "max": 1.9}}]}
"#;
    let (_tmp, ws) = repo(&[("clean.yaml", CLEAN), ("metrics.json", snapshot)]);
    let expected = json_findings(&ws, &["--metrics", "metrics.json", "clean.yaml"]);
    let measured: Vec<_> = expected
        .iter()
        .filter(|f| f.get("recommended").is_some())
        .collect();
    assert!(
        !measured.is_empty(),
        "the snapshot must give a recommendation: {expected:?}"
    );

    let run = run_action(
        &ws,
        "push",
        &[("paths", "clean.yaml"), ("metrics", "metrics.json")],
        &[],
    );
    assert_eq!(run.rows().len(), expected.len(), "{}", run.context());
    for (row, f) in run.rows().iter().zip(&expected) {
        let rec = &f["recommended"];
        let value = match (rec.get("memory"), rec.get("cpu")) {
            (Some(m), Some(c)) => format!(
                "memory: {}, cpu: {}",
                m.as_str().unwrap(),
                c.as_str().unwrap()
            ),
            (Some(m), None) => format!("memory: {}", m.as_str().unwrap()),
            (None, Some(c)) => format!("cpu: {}", c.as_str().unwrap()),
            (None, None) => "-".to_string(),
        };
        assert!(row.ends_with(&format!(" | {value} |")), "{row} / {rec}");
    }
}

#[test]
fn sarif_mode_writes_a_valid_sarif_file() {
    let (_tmp, ws) = repo(&[("apps/bad.yaml", BAD), ("apps/clean.yaml", CLEAN)]);
    let run = run_action(
        &ws,
        "push",
        &[("format", "sarif"), ("sarif-file", "reports/gpulint.sarif")],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.context());
    let file = ws.join("reports/gpulint.sarif");
    assert!(file.is_file(), "{}", run.context());
    assert_eq!(
        PathBuf::from(&run.outputs["sarif-file"]),
        file.canonicalize().unwrap()
    );
    // Code scanning annotates from the SARIF: no workflow-command annotations here.
    assert!(run.annotations().is_empty(), "{}", run.context());
    assert_eq!(
        run.rows().len(),
        1,
        "the summary is written in sarif mode too"
    );

    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["ruleId"], "GPU002");

    let out = Command::new("bash")
        .arg(root().join("scripts/sarif-validate"))
        .arg(&file)
        .output()
        .expect("scripts/sarif-validate runs");
    assert!(
        out.status.success(),
        "SARIF validation failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_prometheus_token_goes_to_gpulint_in_its_environment_only() {
    let (tmp, ws) = repo(&[("apps/bad.yaml", BAD)]);
    // A port nothing listens on: bind, note it, close it.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let token = "tok-3c1e9f0a-never-print-me-77";
    // A wrapper around gpulint that records its argv and its token variable.
    let log = tmp.path().join("wrapper");
    std::fs::create_dir_all(&log).unwrap();
    let wrapper = log.join("gpulint");
    std::fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env bash\nprintf '%s\\n' \"$0\" \"$@\" >>'{dir}/argv'\n\
             printf '%s\\n' \"${{GPULINT_PROMETHEUS_TOKEN-unset}}\" >>'{dir}/env'\n\
             exec '{GPULINT}' \"$@\"\n",
            dir = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();

    let url = format!("http://127.0.0.1:{port}");
    let wrapper_str = wrapper.to_str().unwrap();
    for format in ["github", "sarif"] {
        let run = run_action(
            &ws,
            "push",
            &[
                ("format", format),
                ("prometheus-url", &url),
                ("prometheus-token", token),
                (
                    "prometheus-headers",
                    "X-Scope-OrgID: team-a\r\n\n  \nX-Other: b",
                ),
            ],
            &[("GPULINT_BIN", wrapper_str)],
        );
        assert_eq!(
            run.code,
            2,
            "connection refused is an error: {}",
            run.context()
        );
        for (what, text) in [
            ("stdout", &run.stdout),
            ("stderr", &run.stderr),
            ("summary", &run.summary),
            ("GITHUB_OUTPUT", &run.output_text),
        ] {
            assert!(
                !text.contains(token),
                "the token is in {what}:\n{}",
                run.context()
            );
            assert!(
                !text.contains("never-print-me"),
                "part of the token is in {what}"
            );
        }
        // The failure is explained, in an annotation and in the summary.
        assert!(
            run.stdout.contains("::error title=gpulint::error"),
            "{}",
            run.context()
        );
        assert!(run.summary.contains("exit code 2"), "{}", run.summary);
        assert_eq!(run.outputs["exit-code"], "2");
    }
    let argv = std::fs::read_to_string(log.join("argv")).unwrap();
    assert!(argv.contains(&format!("--prometheus\n{url}\n")), "{argv}");
    // Each header line is one --prometheus-header; blank lines and CRs are dropped.
    assert!(
        argv.contains(
            "--prometheus-header\nX-Scope-OrgID: team-a\n--prometheus-header\nX-Other: b\n"
        ),
        "{argv}"
    );
    assert!(
        !argv.contains(token),
        "the token is on a command line:\n{argv}"
    );
    let env = std::fs::read_to_string(log.join("env")).unwrap();
    // `--version`, then the lint run(s): every invocation that queries has the token.
    assert!(env.lines().any(|l| l == token), "{env}");
    assert!(env.lines().all(|l| l == token || l == "unset"), "{env}");

    // Without a URL the token is not handed to gpulint at all.
    std::fs::remove_file(log.join("env")).unwrap();
    let run = run_action(
        &ws,
        "push",
        &[("prometheus-token", token)],
        &[("GPULINT_BIN", wrapper_str)],
    );
    assert_eq!(run.code, 1, "{}", run.context());
    assert!(!run.stdout.contains(token) && !run.summary.contains(token));
    let env = std::fs::read_to_string(log.join("env")).unwrap();
    assert!(env.lines().all(|l| l == "unset"), "{env}");
}

#[test]
fn mask_registers_the_token_line_by_line_and_nothing_else() {
    let mask = |token: &str| {
        let out = Command::new("bash")
            .arg(root().join("scripts/action/mask.sh"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("INPUT_PROMETHEUS_TOKEN", token)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stderr.is_empty());
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(mask("-n s3cr\\et"), "::add-mask::-n s3cr\\et\n");
    assert_eq!(
        mask("line-one\r\nline-two\n"),
        "::add-mask::line-one\n::add-mask::line-two\n"
    );
    assert_eq!(mask(""), "");
}

#[test]
fn changed_only_reports_what_the_pull_request_changed() {
    let tmp = tempfile::tempdir().unwrap();
    // The upstream repository, with main and a PR branch that forked from it.
    let upstream = tmp.path().join("upstream");
    init_repo(&upstream);
    write(&upstream, "apps/bad.yaml", BAD);
    write(&upstream, "apps/clean.yaml", CLEAN);
    commit_all(&upstream, "base");
    git(&upstream, &["checkout", "-q", "-b", "feature"]);
    write(
        &upstream,
        "apps/new-bad.yaml",
        &BAD.replace("name: llm", "name: llm-canary"),
    );
    write(&upstream, "apps/clean.yaml", &CLEAN.replace("1.5", "1.6"));
    commit_all(&upstream, "feature: a canary");
    // After the fork, main touches bad.yaml: the PR did not, so it must not be charged with it.
    git(&upstream, &["checkout", "-q", "main"]);
    write(
        &upstream,
        "apps/bad.yaml",
        &BAD.replace("namespace: ml", "namespace: ml\n  labels: {team: llm}"),
    );
    commit_all(&upstream, "main moves on");
    // The runner's checkout of the PR branch with fetch-depth 0: origin/main is there.
    let ws = tmp.path().join("workspace");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--branch",
            "feature",
            upstream.to_str().unwrap(),
            "workspace",
        ],
    );
    let fork_point = git(&ws, &["merge-base", "origin/main", "HEAD"]);

    let run = run_action(&ws, "pull_request", &[], &[]);
    assert_eq!(run.code, 1, "{}", run.context());
    let annotations = run.annotations();
    assert_eq!(annotations.len(), 1, "{}", run.context());
    assert!(
        annotations[0].starts_with("::error file=apps/new-bad.yaml,line="),
        "{}",
        annotations[0]
    );
    assert_eq!(run.outputs["changed-since"], fork_point);
    assert_eq!(run.rows().len(), 1, "{}", run.summary);
    assert!(run.rows()[0].starts_with("| apps/new-bad.yaml:"));
    assert!(
        run.summary.contains(&format!(
            "Scope: objects changed since {} (merge base with origin/main).",
            &fork_point[..12]
        )),
        "{}",
        run.summary
    );

    // Off: every manifest, bad.yaml included.
    let run = run_action(&ws, "pull_request", &[("changed-only", "false")], &[]);
    assert_eq!(run.annotations().len(), 2, "{}", run.context());
    assert!(!run.outputs.contains_key("changed-since"));

    // A base branch the checkout does not have: a warning, and every manifest.
    let run = run_action(
        &ws,
        "pull_request",
        &[],
        &[("GITHUB_BASE_REF", "release-9")],
    );
    assert!(
        run.stdout.contains("::warning title=gpulint action::changed-only: base branch 'release-9' is not in the checkout"),
        "{}",
        run.context()
    );
    assert_eq!(run.annotations().len(), 2, "{}", run.context());

    // SARIF is always the whole repo (code scanning diffs it against the base itself).
    let run = run_action(&ws, "pull_request", &[("format", "sarif")], &[]);
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("gpulint.sarif")).unwrap()).unwrap();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 2);
    assert_eq!(
        run.rows().len(),
        1,
        "the summary stays changed-only: {}",
        run.summary
    );
}

#[test]
fn fix_commit_pushes_the_fix_to_the_pull_request_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let upstream = tmp.path().join("upstream.git");
    git(
        tmp.path(),
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            upstream.to_str().unwrap(),
        ],
    );
    let seed = tmp.path().join("seed");
    init_repo(&seed);
    write(&seed, "apps/clean.yaml", CLEAN);
    commit_all(&seed, "base");
    git(&seed, &["push", "-q", upstream.to_str().unwrap(), "main"]);
    git(&seed, &["checkout", "-q", "-b", "feature"]);
    write(&seed, "apps/bad.yaml", BAD);
    commit_all(&seed, "feature: llm");
    git(
        &seed,
        &["push", "-q", upstream.to_str().unwrap(), "feature"],
    );

    let ws = tmp.path().join("workspace");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--branch",
            "feature",
            upstream.to_str().unwrap(),
            "workspace",
        ],
    );
    git(&ws, &["config", "user.name", "Test"]);
    git(&ws, &["config", "user.email", "test@example.com"]);
    let before = git(&ws, &["rev-parse", "HEAD"]);

    let run = run_action(
        &ws,
        "pull_request",
        &[("fix", "commit"), ("changed-only", "false")],
        &[],
    );
    assert_eq!(run.code, 0, "the only finding was fixed: {}", run.context());
    let fixed = run.outputs.get("fixed-commit").cloned().unwrap_or_default();
    assert_eq!(fixed.len(), 40, "{}", run.context());
    assert_eq!(git(&ws, &["rev-parse", "HEAD^"]), before);
    // Pushed to the PR branch upstream, main untouched.
    assert_eq!(git(&upstream, &["rev-parse", "refs/heads/feature"]), fixed);
    let text = git(&upstream, &["show", "feature:apps/bad.yaml"]);
    assert!(
        text.contains("nvidia.com/gpu: 1\n              cpu"),
        "{text}"
    );
    assert!(!text.contains("nvidia.com/gpu: 2"), "{text}");
    assert!(
        run.summary.contains(&format!(
            "Fixes committed as {} and pushed to feature",
            &fixed[..12]
        )),
        "{}",
        run.summary
    );
    assert!(run.rows().is_empty(), "{}", run.summary);

    // Nothing left to fix: no commit, no push.
    let run = run_action(
        &ws,
        "pull_request",
        &[("fix", "commit"), ("changed-only", "false")],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.context());
    assert!(!run.outputs.contains_key("fixed-commit"));
    assert_eq!(git(&upstream, &["rev-parse", "refs/heads/feature"]), fixed);

    // The default PR checkout (a detached merge commit) is refused: nothing is committed.
    write(
        &ws,
        "apps/bad2.yaml",
        &BAD.replace("name: llm", "name: llm-2"),
    );
    commit_all(&ws, "another");
    let head = git(&ws, &["rev-parse", "HEAD"]);
    git(&ws, &["checkout", "-q", "--detach"]);
    let run = run_action(&ws, "pull_request", &[("fix", "commit")], &[]);
    assert_eq!(run.code, 2, "{}", run.context());
    assert!(
        run.stdout.contains("not the branch 'feature'"),
        "{}",
        run.context()
    );
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), head);
}

#[test]
fn report_escapes_cells_and_commands_and_redacts() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("lint.json");
    let stderr = tmp.path().join("lint.stderr");
    let summary = tmp.path().join("summary.md");
    // A commit id line first, as `--fix --commit` prints it.
    std::fs::write(
        &json,
        r#"0123456789abcdef0123456789abcdef01234567
{"version": 1, "findings": [
 {"rule": "MEM001", "name": "memory-limit-below-usage", "severity": "error",
  "message": "a|b\nc <b>x</b> 100% `q` _z_ `x|y`", "file": "dir,x/a:b.yaml", "line": 3, "column": 5,
  "end_line": 3, "end_column": 9, "recommended": {"cpu": "4", "memory": "21Gi"}}],
 "errors": [{"file": "broken.yaml", "line": 2, "column": 1, "message": "bad\nyaml"}]}
"#,
    )
    .unwrap();
    std::fs::write(
        &stderr,
        "::warning::injected\nerror: token s3cr3t-tok-123 refused\n",
    )
    .unwrap();
    let out = Command::new("python3")
        .arg(root().join("scripts/action/report.py"))
        .args([
            "--json",
            json.to_str().unwrap(),
            "--stderr",
            stderr.to_str().unwrap(),
        ])
        .args(["--rc", "2", "--summary", summary.to_str().unwrap()])
        .env("GPULINT_ACTION_REDACT", "s3cr3t-tok-123")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(!stdout.contains("s3cr3t") && !summary.contains("s3cr3t"));
    assert!(stdout.contains("error: token *** refused"), "{stdout}");
    // gpulint's stderr sits between stop-commands markers: `::warning::injected` is inert.
    let lines: Vec<&str> = stdout.lines().collect();
    let stop = lines[0]
        .strip_prefix("::stop-commands::")
        .expect("stop-commands first");
    assert_eq!(lines[1], "::warning::injected");
    assert_eq!(lines[3], format!("::{stop}::"));
    assert_eq!(
        lines[4],
        "::error file=dir%2Cx/a%3Ab.yaml,line=3,endLine=3,col=5,endColumn=9,\
         title=MEM001 memory-limit-below-usage::a|b%0Ac <b>x</b> 100%25 `q` _z_ `x|y`"
    );
    assert_eq!(
        lines[5],
        "::error file=broken.yaml,line=2,col=1,title=gpulint input error::bad%0Ayaml"
    );
    assert!(
        summary.contains(
            "| dir,x/a:b.yaml:3 | MEM001 (error) | a\\|b<br>c &lt;b&gt;x&lt;/b&gt; 100% `q` \\_z\\_ `x\\|y` | memory: 21Gi, cpu: 4 |"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("| broken.yaml:2 | bad<br>yaml |"),
        "{summary}"
    );
    assert!(
        summary.contains("1 input error · fail-on `warning` · exit code 2"),
        "{summary}"
    );
}

/// Every input of action.yml reaches run.sh as INPUT_*, and docs/ci.md documents it.
#[test]
fn action_inputs_are_wired_and_documented() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let script = std::fs::read_to_string(root().join("scripts/action/run.sh")).unwrap();
    let docs = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let section = docs
        .split("\n## GitHub Action\n")
        .nth(1)
        .expect("docs/ci.md has a GitHub Action section")
        .split("\n## ")
        .next()
        .unwrap();
    let inputs: Vec<&str> = action
        .split("\ninputs:\n")
        .nth(1)
        .unwrap()
        .split("\noutputs:\n")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.strip_suffix(':'))
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(
        inputs,
        [
            "paths",
            "config",
            "metrics",
            "prometheus-url",
            "prometheus-token",
            "prometheus-headers",
            "fail-on",
            "format",
            "sarif-file",
            "html-file",
            "changed-only",
            "fix",
            "github-token",
            "version"
        ]
    );
    for input in inputs {
        let var = format!("INPUT_{}", input.to_uppercase().replace('-', "_"));
        assert!(
            action.contains(&format!("{var}: ${{{{ inputs.{input} }}}}")),
            "action.yml does not pass {input} as {var}"
        );
        assert!(script.contains(&var), "run.sh does not read {var}");
        assert!(
            section.contains(&format!("| `{input}` |")),
            "docs/ci.md does not document {input}"
        );
    }
    // Nothing but env vars carries an input into a shell: no `${{ inputs.* }}` in a `run:`.
    for block in action.split("run: ").skip(1) {
        let body: String = block
            .lines()
            .take_while(|l| !l.trim_start().starts_with("- name:"))
            .collect();
        assert!(!body.contains("${{"), "an expression inside run:\n{body}");
    }
}

/// The build cache key follows the source the build reads, and nothing else.
#[test]
fn the_cache_key_is_a_hash_of_the_build_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("action");
    for (name, text) in [
        ("Cargo.lock", "# lock\n"),
        ("Cargo.toml", "[package]\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("rules/GPU002.md", "# GPU002\n"),
        ("README.md", "readme\n"),
    ] {
        write(&src, name, text);
    }
    let keys = || -> BTreeMap<String, String> {
        let out = Command::new("bash")
            .arg(root().join("scripts/action/cache-key.sh"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", tmp.path())
            .env("GITHUB_ACTION_PATH", &src)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("ImageOS", "ubuntu24")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let first = keys();
    assert!(
        first["bin-key"].starts_with("gpulint-bin-Linux-X64-ubuntu24-"),
        "{first:?}"
    );
    assert!(
        first["target-key"].starts_with(&first["target-prefix"]),
        "{first:?}"
    );
    assert_eq!(
        PathBuf::from(&first["bin"]),
        tmp.path().join(".cargo/bin/gpulint")
    );
    assert_eq!(keys(), first, "the same source gives the same keys");
    write(&src, "README.md", "another readme\n");
    assert_eq!(keys(), first, "the README is not built");
    for (name, text) in [
        ("src/main.rs", "fn main() { }\n"),
        ("src/new.rs", "\n"),
        ("rules/GPU002.md", "# GPU002 changed\n"),
        ("Cargo.lock", "# lock 2\n"),
    ] {
        let before = keys();
        write(&src, name, text);
        let after = keys();
        assert_ne!(after["bin-key"], before["bin-key"], "{name}");
        assert_ne!(after["target-key"], before["target-key"], "{name}");
        assert_eq!(after["target-prefix"], before["target-prefix"], "{name}");
    }
}

#[test]
fn a_file_that_does_not_parse_is_an_input_error_and_the_rest_is_still_linted() {
    let (_tmp, ws) = repo(&[("bad.yaml", BAD), ("broken.yaml", "a: [1, 2\nb: {\n")]);
    let run = run_action(&ws, "push", &[], &[]);
    assert_eq!(run.code, 2, "{}", run.context());
    assert!(run
        .stdout
        .lines()
        .any(|l| l.starts_with("::error file=broken.yaml,line=")
            && l.contains(",title=gpulint input error::")));
    assert!(run
        .annotations()
        .iter()
        .any(|a| a.starts_with("::error file=bad.yaml,")));
    assert!(run.summary.contains("1 input error"), "{}", run.summary);
    assert!(
        run.summary
            .contains("| file:line | input error |\n|---|---|\n| broken.yaml:"),
        "{}",
        run.summary
    );
    assert_eq!(run.outputs["input-errors"], "1");
    assert_eq!(run.outputs["exit-code"], "2");
}

#[test]
fn a_huge_summary_stays_under_githubs_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let finding = serde_json::json!({
        "rule": "QOS001", "name": "gpu-memory-limit-missing", "severity": "warning",
        "message": "m".repeat(300), "file": "apps/x.yaml", "line": 1, "column": 1,
        "end_line": 1, "end_column": 2});
    let doc = serde_json::json!({"version": 1, "findings": vec![finding; 5000], "errors": []});
    let json = tmp.path().join("lint.json");
    std::fs::write(&json, doc.to_string()).unwrap();
    let summary = tmp.path().join("summary.md");
    let out = Command::new("python3")
        .arg(root().join("scripts/action/report.py"))
        .args(["--json", json.to_str().unwrap(), "--rc", "1"])
        .args(["--summary", summary.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("::warning file="))
            .count(),
        5000
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.len() < 1024 * 1024, "{}", text.len());
    assert!(text.contains("**5000 findings**"));
    assert!(text.contains("GitHub shows at most 10 annotations of each type per step"));
    let rows = text
        .lines()
        .filter(|l| l.starts_with("| apps/x.yaml:1 |"))
        .count();
    assert!(rows > 1000 && rows < 5000, "{rows}");
    assert!(
        text.contains(&format!("{} more finding(s) not shown", 5000 - rows)),
        "{}",
        &text[text.len() - 300..]
    );
}

/// A hostile pull request: `.gpulint.yaml` names a program as `helm:` (with a chart for it to
/// render) and a Prometheus URL of its choosing, on a runner with a token. Nothing runs and
/// nothing is sent: the config is refused before any render or query, with its file and line.
#[test]
fn a_hostile_config_runs_nothing_and_sends_nothing() {
    use std::io::Read as _;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let connections = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&connections);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
        }
    });
    let tmp = tempfile::tempdir().unwrap();
    let sentinel = tmp.path().join("evil-ran");
    let evil = format!(
        "#!/bin/sh\ntouch '{}'\necho 'v3.15.0'\n",
        sentinel.display()
    );
    let config = format!("helm: ./evil.sh\nprometheus:\n  url: {url}\n");
    let (_tmp, ws) = repo(&[
        ("deploy/app.yaml", BAD),
        (
            "charts/app/Chart.yaml",
            "apiVersion: v2\nname: app\nversion: 0.1.0\n",
        ),
        (
            "charts/app/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        ),
        ("evil.sh", &evil),
        (".gpulint.yaml", &config),
    ]);
    std::fs::set_permissions(
        ws.join("evil.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let token = "tok-action-hostile-51c2";
    for format in ["github", "sarif"] {
        let run = run_action(
            &ws,
            "pull_request",
            &[("format", format), ("prometheus-token", token)],
            &[("GPULINT_PROMETHEUS_TOKEN", token)],
        );
        assert_eq!(run.code, 2, "{}", run.context());
        assert!(
            run.stdout
                .contains(".gpulint.yaml:1:7: `helm:` is not read from a repository file"),
            "the refusal names the config's first refused line: {}",
            run.context()
        );
        assert!(!sentinel.exists(), "the repository's helm: ran");
        assert_eq!(
            connections.load(Ordering::SeqCst),
            0,
            "a connection reached the repository's URL: {}",
            run.context()
        );
        for text in [&run.stdout, &run.stderr, &run.summary, &run.output_text] {
            assert!(!text.contains(token), "{}", run.context());
        }
    }
}

/// zizmor, the pinned copy scripts/test installs (GPULINT_ZIZMOR), else the cache's.
fn zizmor() -> PathBuf {
    if let Some(path) = std::env::var_os("GPULINT_ZIZMOR") {
        return PathBuf::from(path);
    }
    let cache = std::env::var_os("GPULINT_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gpulint")))
        .unwrap_or_default();
    let exe = cache.join("venv-zizmor/bin/zizmor");
    assert!(
        exe.is_file(),
        "zizmor is not installed: run scripts/test (it installs it), or set GPULINT_ZIZMOR"
    );
    exe
}

/// The workflows docs/ci.md tells users to copy: every ```yaml block of the GitHub Action
/// section that has `jobs:`.
fn docs_workflows() -> Vec<String> {
    let docs = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let section = docs
        .split("\n## GitHub Action\n")
        .nth(1)
        .expect("docs/ci.md has a GitHub Action section")
        .split("\n## ")
        .next()
        .unwrap();
    section
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("\n```").next())
        .filter(|block| block.contains("\njobs:\n"))
        .map(|block| format!("{block}\n"))
        .collect()
}

/// The Action and docs/ci.md's workflows pass zizmor's auditor persona (offline): actions
/// pinned by SHA, permissions per job, concurrency, no persisted credentials, no template
/// injection. A missing zizmor fails the test.
#[test]
fn zizmor_finds_nothing_in_the_action_and_the_docs_workflows() {
    let workflows = docs_workflows();
    assert!(
        workflows.len() >= 3,
        "docs/ci.md's lint, fix and right-sizing workflows: {workflows:#?}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".github/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    let mut inputs = vec![root().join("action.yml")];
    for (i, text) in workflows.iter().enumerate() {
        let path = dir.join(format!("readme-{i}.yml"));
        std::fs::write(&path, text).unwrap();
        inputs.push(path);
    }
    let out = Command::new(zizmor())
        .args(["--offline", "--persona", "auditor", "--no-progress"])
        .args(&inputs)
        .env("NO_COLOR", "1")
        .output()
        .expect("zizmor runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("No findings to report"),
        "zizmor (exit {:?}):\n{stdout}\n{stderr}",
        out.status.code()
    );
    // Every input was audited (a file zizmor cannot parse is skipped with a warning).
    for input in &inputs {
        let name = input.file_name().unwrap().to_string_lossy();
        assert!(stderr.contains(&*name), "{name} not audited:\n{stderr}");
    }
    // And the test can fail: an unpinned action is reported.
    let bad = dir.join("unpinned.yml");
    std::fs::write(
        &bad,
        workflows[0].replace(
            "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
            "actions/checkout@v4",
        ),
    )
    .unwrap();
    let out = Command::new(zizmor())
        .args(["--offline", "--persona", "auditor", "--no-progress"])
        .arg(&bad)
        .env("NO_COLOR", "1")
        .output()
        .expect("zizmor runs");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("unpinned-uses"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_summary_has_the_gpu_table_and_the_memory_chart() {
    // The embedder's memory far above its 8Gi limit: MEM001, a measured finding.
    let snapshot = r#"{"version": 1, "window": "14d",
 "containers": [{"namespace": "ml", "kind": "Deployment", "name": "embedder", "container": "tei",
   "samples": 20160, "history_seconds": 1209600,
   "memory_bytes": {"p50": 9.0e9, "p99": 1.2e10, "max": 1.3e10},
   "cpu_cores": {"p50": 1.2, "p99": 1.5, "max": 1.9}}]}
"#;
    let (_tmp, ws) = repo(&[("clean.yaml", CLEAN), ("metrics.json", snapshot)]);
    let run = run_action(
        &ws,
        "push",
        &[("paths", "clean.yaml"), ("metrics", "metrics.json")],
        &[],
    );
    let (markdown_code, markdown, markdown_err) = gpulint(
        &ws,
        &[
            "--metrics",
            "metrics.json",
            "--format",
            "markdown",
            "clean.yaml",
        ],
    );
    assert_eq!(markdown_code, 1, "{markdown_err}");
    // The same sections as `--format markdown` prints, after the findings table.
    let section = |text: &str, heading: &str| -> String {
        let start = text
            .find(heading)
            .unwrap_or_else(|| panic!("{heading}:\n{text}"));
        text[start..]
            .split("\n### ")
            .next()
            .unwrap()
            .trim()
            .to_string()
    };
    for heading in ["### GPUs by namespace", "### Memory of the containers"] {
        assert_eq!(
            section(&run.summary, heading),
            section(&markdown, heading),
            "{}",
            run.context()
        );
    }
    let gpus = section(&run.summary, "### GPUs by namespace");
    assert!(gpus.contains("| ml | 1 | 0 | 0 |"), "{gpus}");
    assert!(gpus.contains("| **total** | **1** |"), "{gpus}");
    let chart = section(&run.summary, "### Memory of the containers");
    // 12e9 bytes P99 = 11.2GiB; the 8Gi limit.
    assert!(chart.contains("```mermaid\nxychart-beta\n"), "{chart}");
    assert!(chart.contains("x-axis [\"embedder/tei\"]"), "{chart}");
    assert!(chart.contains("bar [11.2]"), "{chart}");
    assert!(chart.contains("line [8.0]"), "{chart}");
    assert!(
        chart.contains("| ml/Deployment/embedder · tei |"),
        "{chart}"
    );
    // The findings table comes first and is whole.
    let findings = json_findings(&ws, &["--metrics", "metrics.json", "clean.yaml"]);
    assert_eq!(run.rows().len(), findings.len());
    assert!(run.summary.find("| file:line |").unwrap() < run.summary.find("### GPUs").unwrap());
}

/// A `gh` stand-in for `fix: pull-request`: appends each call (its arguments, the token it
/// saw, the body file's text) to $GH_LOG; `pr list` prints the number in $GH_STATE (the open
/// pull request), `pr create` stores 7 there and prints its URL.
const FAKE_GH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
args=("$@")
{
    printf 'CALL'; printf ' %s' "${args[@]}"; printf '\n'
    printf 'TOKEN %s\n' "${GH_TOKEN:-}"
    for ((i = 0; i < ${#args[@]}; i++)); do
        if [[ "${args[$i]}" == --body-file ]]; then
            printf 'BODY-BEGIN\n'; cat "${args[$((i + 1))]}"; printf 'BODY-END\n'
        fi
    done
} >>"$GH_LOG"
case "${args[0]} ${args[1]}" in
    "pr list") cat "$GH_STATE" 2>/dev/null || true ;;
    "pr create") printf '7\n' >"$GH_STATE"; printf 'https://github.example/o/r/pull/7\n' ;;
    "pr view") printf 'https://github.example/o/r/pull/%s\n' "${args[2]}" ;;
    "pr edit") ;;
    *) echo "unexpected gh call: ${args[*]}" >&2; exit 1 ;;
esac
"#;

#[test]
fn fix_pull_request_opens_one_right_sizing_pull_request_and_updates_it() {
    // The action selects what was measured with gpulint's own test of it.
    let script = std::fs::read_to_string(root().join("scripts/action/run.sh")).unwrap();
    assert!(script.contains(r#"local args=(--fail-on "$fail_on" --measured-only)"#));

    let snapshot = |p99: f64| {
        format!(
            r#"{{"version": 1, "window": "14d",
 "containers": [{{"namespace": "ml", "kind": "Deployment", "name": "embedder", "container": "tei",
   "samples": 20160, "history_seconds": 1209600,
   "memory_bytes": {{"p50": 9.0e9, "p99": {p99:e}, "max": {max:e}}},
   "cpu_cores": {{"p50": 1.2, "p99": 1.5, "max": 1.9}}}}]}}
"#,
            max = p99 * 1.05
        )
    };
    let tmp = tempfile::tempdir().unwrap();
    let upstream = tmp.path().join("upstream.git");
    let up = upstream.to_str().unwrap();
    git(tmp.path(), &["init", "-q", "--bare", "-b", "main", up]);
    let ws = tmp.path().join("workspace");
    init_repo(&ws);
    write(&ws, "apps/embedder.yaml", CLEAN);
    write(&ws, "metrics.json", &snapshot(1.2e10));
    let base = commit_all(&ws, "base");
    git(&ws, &["remote", "add", "origin", up]);
    git(&ws, &["push", "-q", "origin", "main"]);

    let bin = tmp.path().join("fakebin");
    write(&bin, "gh", FAKE_GH);
    std::fs::set_permissions(
        bin.join("gh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let log = tmp.path().join("gh.log");
    let state = tmp.path().join("gh.state");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path.as_str()),
        ("GH_LOG", log.to_str().unwrap()),
        ("GH_STATE", state.to_str().unwrap()),
        ("GITHUB_REF_NAME", "main"),
    ];
    let inputs = [
        ("fix", "pull-request"),
        ("paths", "apps"),
        ("metrics", "metrics.json"),
        ("github-token", "gh-token-123"),
    ];
    let gh_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let branch = "refs/heads/gpulint/rightsize";

    // 1. Measured usage above the limit: a branch, a commit, one `gh pr create`.
    let expected = json_findings(&ws, &["--metrics", "metrics.json", "apps"]);
    let recommended = expected
        .iter()
        .find(|f| f["rule"] == "MEM001")
        .and_then(|f| f["recommended"]["memory"].as_str())
        .expect("MEM001 recommends a memory value")
        .to_string();
    let run = run_action(&ws, "schedule", &inputs, &env);
    assert_eq!(run.code, 0, "{}", run.context());
    let pushed = git(&upstream, &["rev-parse", branch]);
    assert_eq!(git(&upstream, &["rev-parse", &format!("{pushed}^")]), base);
    assert_eq!(git(&upstream, &["rev-parse", "refs/heads/main"]), base);
    assert_eq!(
        git(&upstream, &["log", "-1", "--format=%s", branch]),
        "gpulint: right-size requests and limits from measurements"
    );
    let fixed = git(&upstream, &["show", "gpulint/rightsize:apps/embedder.yaml"]);
    assert!(fixed.contains(&format!("memory: {recommended}")), "{fixed}");
    // The workspace is back on main, without the local branch.
    assert_eq!(git(&ws, &["symbolic-ref", "--short", "HEAD"]), "main");
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), base);
    assert_eq!(git(&ws, &["branch", "--list", "gpulint/rightsize"]), "");
    let calls: Vec<String> = gh_log()
        .lines()
        .filter(|l| l.starts_with("CALL "))
        .map(str::to_string)
        .collect();
    assert_eq!(calls.len(), 2, "{}", gh_log());
    assert_eq!(
        calls[0],
        "CALL pr list --head gpulint/rightsize --base main --state open --json number --jq .[0].number // empty"
    );
    assert!(
        calls[1].starts_with(
            "CALL pr create --base main --head gpulint/rightsize --title gpulint: right-size GPU workloads from measurements --body-file "
        ),
        "{}",
        calls[1]
    );
    let text = gh_log();
    assert!(text.contains("TOKEN gh-token-123\n"));
    assert!(text
        .lines()
        .all(|l| !l.starts_with("TOKEN ") || l == "TOKEN gh-token-123"));
    let body = text
        .split("BODY-BEGIN\n")
        .nth(1)
        .and_then(|b| b.split("BODY-END").next())
        .expect("the pull request has a body")
        .to_string();
    assert!(body.contains("### Changes (1)"), "{body}");
    assert!(body.contains("| apps/embedder.yaml:"), "{body}");
    assert!(body.contains("### GPUs by namespace"), "{body}");
    assert!(body.contains("```mermaid\nxychart-beta"), "{body}");
    assert!(body.contains(&recommended), "{body}");
    assert_eq!(
        run.outputs.get("pull-request").map(String::as_str),
        Some("https://github.example/o/r/pull/7")
    );
    assert!(run
        .summary
        .contains("Pull request opened: https://github.example/o/r/pull/7"));
    // The findings went to the pull request: the step passes.
    assert!(
        run.summary.contains("exit code 0 (passed)"),
        "{}",
        run.summary
    );
    assert!(!run.stdout.contains("gh-token-123") && !run.summary.contains("gh-token-123"));

    // 2. The same measurements again: nothing new, no push, no gh call.
    let before = gh_log();
    let run = run_action(&ws, "schedule", &inputs, &env);
    assert_eq!(run.code, 0, "{}", run.context());
    assert_eq!(gh_log(), before);
    assert_eq!(git(&upstream, &["rev-parse", branch]), pushed);
    assert!(
        run.summary.contains("already has these changes"),
        "{}",
        run.summary
    );

    // 3. New measurements on main: the branch is rewritten, the open pull request edited.
    write(&ws, "metrics.json", &snapshot(1.6e10));
    let base = commit_all(&ws, "new measurements");
    git(&ws, &["push", "-q", "origin", "main"]);
    let run = run_action(&ws, "schedule", &inputs, &env);
    assert_eq!(run.code, 0, "{}", run.context());
    let repushed = git(&upstream, &["rev-parse", branch]);
    assert_ne!(repushed, pushed);
    assert_eq!(
        git(&upstream, &["rev-parse", &format!("{repushed}^")]),
        base
    );
    let log_now = gh_log();
    let new_calls: Vec<&str> = log_now[before.len()..]
        .lines()
        .filter(|l| l.starts_with("CALL "))
        .collect::<Vec<_>>();
    assert_eq!(new_calls.len(), 3, "{new_calls:?}");
    assert!(new_calls[0].starts_with("CALL pr list "));
    assert!(new_calls[1].starts_with("CALL pr edit 7 --body-file "));
    assert!(new_calls[2].starts_with("CALL pr view 7 "));
    assert!(
        run.summary.contains("Pull request #7 updated"),
        "{}",
        run.summary
    );

    // 4. The pull request merged: nothing to right-size, no gh call, no push.
    git(&ws, &["fetch", "-q", "origin"]);
    git(
        &ws,
        &["merge", "-q", "--ff-only", "origin/gpulint/rightsize"],
    );
    git(&ws, &["push", "-q", "origin", "main"]);
    let before = gh_log();
    let run = run_action(&ws, "schedule", &inputs, &env);
    assert_eq!(run.code, 0, "{}", run.context());
    assert_eq!(gh_log(), before);
    assert_eq!(git(&upstream, &["rev-parse", branch]), repushed);
    assert!(
        run.summary.contains("Nothing to right-size"),
        "{}",
        run.summary
    );
}

#[test]
fn fix_pull_request_without_measurements_or_off_the_base_branch_changes_nothing() {
    let (tmp, ws) = repo(&[("apps/embedder.yaml", CLEAN)]);
    let bin = tmp.path().join("fakebin");
    write(&bin, "gh", FAKE_GH);
    std::fs::set_permissions(
        bin.join("gh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let log = tmp.path().join("gh.log");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path.as_str()),
        ("GH_LOG", log.to_str().unwrap()),
        ("GITHUB_REF_NAME", "main"),
    ];
    let head = git(&ws, &["rev-parse", "HEAD"]);
    // No measurements: refused.
    let run = run_action(&ws, "schedule", &[("fix", "pull-request")], &env);
    assert_eq!(run.code, 2, "{}", run.context());
    assert!(
        run.stdout.contains("needs measurements"),
        "{}",
        run.context()
    );
    // Prometheus unreachable: the snapshot fails, the step says why, nothing is made.
    let run = run_action(
        &ws,
        "schedule",
        &[
            ("fix", "pull-request"),
            ("prometheus-url", "http://127.0.0.1:9"),
        ],
        &env,
    );
    assert_eq!(run.code, 2, "{}", run.context());
    assert!(
        run.summary.contains("cannot reach Prometheus"),
        "{}",
        run.context()
    );
    // A checkout of another branch than the run's: refused.
    git(&ws, &["checkout", "-q", "-b", "feature"]);
    let run = run_action(
        &ws,
        "schedule",
        &[("fix", "pull-request"), ("metrics", "m.json")],
        &env,
    );
    assert_eq!(run.code, 2, "{}", run.context());
    assert!(run.stdout.contains("HEAD is feature"), "{}", run.context());
    assert!(!log.exists(), "gh was called");
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&ws, &["branch", "--list", "gpulint/rightsize"]), "");
}

#[test]
fn html_file_writes_the_html_report_of_the_same_run() {
    let (_tmp, ws) = repo(&[("apps/bad.yaml", BAD)]);
    let run = run_action(&ws, "push", &[("html-file", "reports/gpulint.html")], &[]);
    assert_eq!(run.code, 1, "{}", run.context());
    let path = run.outputs.get("html-file").cloned().unwrap_or_default();
    assert_eq!(
        PathBuf::from(&path),
        ws.canonicalize().unwrap().join("reports/gpulint.html"),
        "{}",
        run.context()
    );
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    let findings = json_findings(&ws, &["apps"]);
    assert_eq!(html.matches("<tr data-rule=").count(), findings.len());
    assert_eq!(run.rows().len(), findings.len());
}

/// Issue 24, item 5: a pull request commits `gpulint.sarif` as a symlink to a file outside the
/// workspace (on a runner, `~/.bash_profile`): the action copied the SARIF through it. Now the
/// SARIF is placed with no symlink followed, and a symlink at the destination or on the way to
/// it is refused (exit 2): the outside file and folder are untouched.
#[test]
fn sarif_file_is_never_written_through_a_repository_symlink() {
    let (tmp, ws) = repo(&[("apps/bad.yaml", BAD)]);
    let outside = tmp.path().join("bash_profile");
    std::fs::write(&outside, "sentinel: the user's own file\n").unwrap();
    let outside_dir = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside_dir).unwrap();
    std::os::unix::fs::symlink("../bash_profile", ws.join("gpulint.sarif")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", ws.join("reports")).unwrap();
    commit_all(&ws, "a symlinked SARIF destination");
    for sarif_file in [
        "gpulint.sarif",
        "reports/gpulint.sarif",
        "reports/sub/x.sarif",
    ] {
        let run = run_action(
            &ws,
            "push",
            &[("format", "sarif"), ("sarif-file", sarif_file)],
            &[],
        );
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "sentinel: the user's own file\n",
            "{sarif_file}: the outside file was written"
        );
        assert_eq!(
            std::fs::read_dir(&outside_dir).unwrap().count(),
            0,
            "{sarif_file}: written outside"
        );
        assert!(!run.outputs.contains_key("sarif-file"), "{}", run.context());
        assert_eq!(run.code, 2, "{sarif_file}: {}", run.context());
        assert!(
            run.stdout
                .contains("is a symlink; the action does not write through it"),
            "{}",
            run.context()
        );
        assert!(std::fs::symlink_metadata(ws.join("gpulint.sarif"))
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

/// Issue 24, item 7: the html-file output was `html-file=<pwd -P>/report.html`, and a folder
/// the repository names `evil<LF>sarif-file=/etc/passwd` (reached through a committed symlink)
/// added a `sarif-file` output line. Outputs are now written as `key<<DELIMITER` with a random
/// delimiter, and a path with a line break is refused.
#[test]
fn a_folder_name_with_a_newline_adds_no_output() {
    let evil = "evil\nsarif-file=/etc/passwd";
    let (_tmp, ws) = repo(&[("apps/bad.yaml", BAD), (&format!("{evil}/.keep"), "")]);
    std::os::unix::fs::symlink(evil, ws.join("out")).unwrap();
    commit_all(&ws, "a folder named with a newline");
    let run = run_action(&ws, "push", &[("html-file", "out/report.html")], &[]);
    assert!(!run.outputs.contains_key("sarif-file"), "{}", run.context());
    assert!(
        !run.output_text.lines().any(|l| l.starts_with("sarif-file")),
        "{}",
        run.context()
    );
    assert!(!run.outputs.contains_key("html-file"), "{}", run.context());
    assert_eq!(run.code, 2, "{}", run.context());
    // Refused twice over: gpulint writes through no symlinked folder, and the action takes no
    // path with a line break (whichever is reached first).
    assert!(
        run.stdout.contains("a path with a line break is refused")
            || run.stdout.contains("gpulint does not write through links"),
        "{}",
        run.context()
    );
    // Every output is in the multi-line form, with a delimiter of its own.
    let run = run_action(&ws, "push", &[("html-file", "reports/gpulint.html")], &[]);
    assert_eq!(run.code, 1, "{}", run.context());
    let heads: Vec<&str> = run
        .output_text
        .lines()
        .filter(|l| l.contains("<<"))
        .collect();
    assert!(heads.len() >= 7, "{}", run.context());
    let mut delimiters: Vec<&str> = heads
        .iter()
        .filter_map(|l| l.split_once("<<").map(|(_, d)| d))
        .collect();
    assert!(delimiters.iter().all(|d| d.len() >= 32), "{delimiters:?}");
    delimiters.sort_unstable();
    delimiters.dedup();
    assert_eq!(delimiters.len(), heads.len(), "a delimiter was reused");
    assert_eq!(
        run.output_text.lines().count(),
        3 * heads.len(),
        "a line outside the multi-line form:\n{}",
        run.output_text
    );
}
