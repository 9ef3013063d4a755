//! End-to-end tests of the binary: outputs (insta snapshots), exit codes, config, suppression.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::common::{gpulint, run as run_in, temp_tree};

const FIXTURES: &str = "testdata/fixtures/output";

/// Runs gpulint; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn json(args: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = run(args);
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    (code, value)
}

fn rules_of(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

const GPU002_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {nvidia.com/gpu: 2, cpu: 1, memory: 1Gi}\n      limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}\n";
const CLEAN_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}\n";

#[test]
fn human_output() {
    let (code, stdout, _) = run(&[FIXTURES]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
}

#[test]
fn json_output() {
    let (code, value) = json(&[FIXTURES, "--format", "json"]);
    assert_eq!(code, 1);
    insta::assert_json_snapshot!(value);
}

#[test]
fn sarif_output() {
    let (code, stdout, _) = run(&[FIXTURES, "--format", "sarif"]);
    assert_eq!(code, 1);
    let mut value: Value = serde_json::from_str(&stdout).unwrap();
    // The rule texts are snapshotted through `gpulint explain`; keep this snapshot readable.
    for rule in value["runs"][0]["tool"]["driver"]["rules"]
        .as_array_mut()
        .unwrap()
    {
        rule["help"]["markdown"] = Value::String("<rules/ID.md>".into());
    }
    value["runs"][0]["tool"]["driver"]["version"] = Value::String("<version>".into());
    value["runs"][0]["tool"]["driver"]["semanticVersion"] = Value::String("<version>".into());
    insta::assert_json_snapshot!(value);
}

#[test]
fn github_output() {
    let (code, stdout, _) = run(&[FIXTURES, "--format", "github"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
}

#[test]
fn sarif_passes_the_multitool_with_githubs_rules() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (code_1, stdout, _) = run(&[FIXTURES, "testdata/demo", "--format", "sarif"]);
    assert_eq!(code_1, 1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpulint.sarif");
    std::fs::write(&file, stdout).unwrap();
    let out = Command::new("bash")
        .arg(root.join("scripts/sarif-validate"))
        .arg(&file)
        .output()
        .expect("scripts/sarif-validate runs");
    assert!(
        out.status.success(),
        "SARIF Multitool rejected the output:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sarif_lists_suppressed_findings_with_their_justification() {
    let (code_2, stdout, _) = run(&[FIXTURES, "--format", "sarif"]);
    assert_eq!(code_2, 1);
    let value: Value = serde_json::from_str(&stdout).unwrap();
    let results = value["runs"][0]["results"].as_array().unwrap();
    let suppressed: Vec<_> = results
        .iter()
        .filter(|r| r.get("suppressions").is_some())
        .collect();
    assert_eq!(suppressed.len(), 1);
    assert_eq!(suppressed[0]["ruleId"], "GPU001");
    assert_eq!(suppressed[0]["suppressions"][0]["kind"], "inSource");
    assert_eq!(
        suppressed[0]["suppressions"][0]["justification"],
        "the mutating webhook adds the limit"
    );
    // Regions are real positions, never a fake line 1.
    for r in results {
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() > 1, "{r}");
    }
}

#[test]
fn exit_codes_follow_fail_on() {
    let repo = temp_tree(&[("clean.yaml", CLEAN_POD)]);
    let dir = repo.path().to_str().unwrap();
    assert_eq!(run(&[dir]).0, 0, "clean input exits 0");
    let (code, stdout, _) = run(&[FIXTURES, "--select", "GPU004"]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        run(&[FIXTURES, "--select", "GPU004", "--fail-on", "error"]).0,
        0
    );
    assert_eq!(
        run(&[FIXTURES, "--select", "GPU005"]).0,
        0,
        "no GPU005 findings"
    );
    let (code, _, stderr) = run(&[FIXTURES, "--select", "GPU999"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown rule \"GPU999\""), "{stderr}");
    let (code, _, stderr) = run(&["--format", "xml"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn a_broken_file_is_an_error_and_the_others_are_still_linted() {
    let repo = temp_tree(&[
        (
            "a-broken.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [oops\n",
        ),
        ("b-pod.yaml", GPU002_POD),
    ]);
    let (code, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 2);
    assert_eq!(rules_of(&value), ["GPU002"]);
    let error = &value["errors"][0];
    assert!(error["file"].as_str().unwrap().ends_with("a-broken.yaml"));
    assert_eq!(error["line"], 4, "{error}");
    assert!(error["column"].as_u64().unwrap() >= 1);
}

#[test]
fn invalid_utf8_is_reported_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.yaml"), b"a: 1\nb: \xff\n").unwrap();
    let (code, value) = json(&[dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 2);
    assert_eq!(value["errors"][0]["line"], 2);
    assert_eq!(value["errors"][0]["column"], 4);
    assert!(value["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("invalid UTF-8"));
}

#[test]
fn stdin_is_read_with_a_dash() {
    let out = gpulint()
        .args(["-", "--format", "json"])
        .write_stdin_bytes(GPU002_POD)
        .expect("runs");
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rules_of(&value), ["GPU002"]);
    assert_eq!(value["findings"][0]["file"], "-");
    assert_eq!(value["findings"][0]["line"], 8);
}

trait WriteStdin {
    fn write_stdin_bytes(&mut self, input: &str) -> std::io::Result<std::process::Output>;
}

impl WriteStdin for Command {
    fn write_stdin_bytes(&mut self, input: &str) -> std::io::Result<std::process::Output> {
        use std::io::Write;
        let mut child = self
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(input.as_bytes())?;
        child.wait_with_output()
    }
}

#[test]
fn suppression_by_comment_annotation_and_config() {
    let annotated = GPU002_POD.replace(
        "metadata: {name: p}",
        "metadata:\n  name: p\n  annotations: {gpulint.io/ignore: \"GPU002, QOS001\"}",
    );
    let commented = GPU002_POD.replace(
        "      requests: {nvidia.com/gpu: 2",
        "      # gpulint: ignore[gpu-request-limit-mismatch] migrating\n      requests: {nvidia.com/gpu: 2",
    );
    let repo = temp_tree(&[
        ("annotated.yaml", &annotated),
        ("commented.yaml", &commented),
        ("vendor/upstream.yaml", GPU002_POD),
        ("plain.yaml", GPU002_POD),
        (
            ".gpulint.yaml",
            "ignore:\n- path: vendor/**\n  rules: [GPU002]\n",
        ),
    ]);
    let (code, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let files: Vec<_> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["file"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(files, ["plain.yaml"], "{value:#}");
}

/// A finding inside a script points at the flag, on a line of the block scalar where no YAML
/// comment can go: a comment at the script's first line (after `|`) or above it suppresses it.
#[test]
fn a_finding_inside_a_script_is_suppressed_by_a_comment_at_the_script() {
    let job = |header: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: train\n        image: pytorch/pytorch\n        command: [bash, -c]\n        args:\n{header}\n          pip install -r requirements.txt\n          torchrun --nnodes=1 --nproc_per_node=2 train.py\n        resources:\n          limits: {{nvidia.com/gpu: 8}}\n"
        )
    };
    let repo = temp_tree(&[
        ("plain.yaml", &job("        - |")),
        (
            "after.yaml",
            &job("        - | # gpulint: ignore[GPU012] two ranks on purpose"),
        ),
        (
            "above.yaml",
            &job("        # gpulint: ignore[GPU012] two ranks on purpose\n        - |"),
        ),
        // Blank lines opening the script are part of it: the header is still `- |`.
        (
            "after_blank.yaml",
            &job("        - | # gpulint: ignore[GPU012] two ranks on purpose\n\n"),
        ),
        (
            "above_blank.yaml",
            &job("        # gpulint: ignore[GPU012] two ranks on purpose\n        - |\n"),
        ),
    ]);
    let (_, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    let gpu012: Vec<(String, u64)> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "GPU012")
        .map(|f| {
            let file = f["file"].as_str().unwrap().rsplit('/').next().unwrap();
            (file.to_string(), f["line"].as_u64().unwrap())
        })
        .collect();
    // Line 14: `torchrun …`, the flag, not the script's first line.
    assert_eq!(gpu012, [("plain.yaml".to_string(), 14)], "{value:#}");
}

#[test]
fn gitignore_and_config_excludes_are_honoured() {
    let repo = temp_tree(&[
        ("apps/pod.yaml", GPU002_POD),
        ("rendered/pod.yaml", GPU002_POD),
        ("generated/pod.yml", GPU002_POD),
        (".gitignore", "rendered/\n"),
        (".gpulint.yaml", "exclude: [generated/**]\n"),
        ("notes.txt", "not yaml"),
    ]);
    let (code_3, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code_3, 1);
    let files: Vec<_> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with("apps/pod.yaml"));
}

#[test]
fn config_errors_name_the_file_line_and_key() {
    let repo = temp_tree(&[
        ("pod.yaml", GPU002_POD),
        (".gpulint.yaml", "rules:\n  GPU004: error\nexcludes: [x]\n"),
    ]);
    let (code, stdout, stderr) = run_in(repo.path(), &["."]);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stderr.contains(".gpulint.yaml:3:1: unknown key `excludes`"),
        "{stderr}"
    );
}

#[test]
fn config_sets_severities_and_enables_rules() {
    let repo = temp_tree(&[
        ("pod.yaml", GPU002_POD),
        (
            ".gpulint.yaml",
            "rules:\n  GPU002: warning\n  SCH001: {enabled: true}\n",
        ),
    ]);
    let (code_4, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code_4, 1);
    let findings = value["findings"].as_array().unwrap();
    assert_eq!(rules_of(&value), ["SCH001", "GPU002"]);
    assert_eq!(findings[1]["severity"], "warning");
    // --select runs an off-by-default rule without any config.
    let plain = temp_tree(&[("pod.yaml", CLEAN_POD)]);
    let (code_5, value) = json(&[
        plain.path().to_str().unwrap(),
        "--format",
        "json",
        "--select",
        "SCH002",
    ]);
    assert_eq!(code_5, 1);
    assert_eq!(rules_of(&value), ["SCH002"]);
}

#[test]
fn kueue_queues_in_the_repo_make_labels_required() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}\n";
    let queue = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: team-a, namespace: ml}\nspec: {clusterQueue: gpus}\n";
    let repo = temp_tree(&[("job.yaml", job), ("queue.yaml", queue)]);
    let (code_6, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code_6, 1);
    assert_eq!(rules_of(&value), ["KUE001"]);
    let alone = temp_tree(&[("job.yaml", job)]);
    let (code, _) = json(&[alone.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0);
}

#[test]
fn rules_and_explain() {
    let (code, stdout, _) = run(&["rules"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(stdout);
    let (code, stdout, _) = run(&["explain", "GPU002"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("# GPU002 gpu-request-limit-mismatch"));
    assert!(stdout.contains("## Bad") && stdout.contains("## Good"));
    let (code, stdout, _) = run(&["explain", "shm-size-limit-missing"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("# SHM001"));
    assert_eq!(run(&["explain", "NOPE"]).0, 2);
}

#[test]
fn inventory_table_and_json() {
    let (code, stdout, _) = run(&["inventory", FIXTURES]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(stdout);
    let (code, value) = json(&["inventory", FIXTURES, "--format", "json"]);
    assert_eq!(code, 0);
    insta::assert_json_snapshot!(value);
}

#[test]
fn config_workload_kinds_are_used() {
    // A custom batch kind: its catalogue entry makes it a batch workload, so KUE001 applies.
    let trainer = "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {name: t, namespace: ml}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}\n";
    let config = "kueue: {required: true}\nworkloads:\n- kind: Trainer\n  group: example.com\n  pod_templates: [\"$.spec.template\"]\n  batch: true\n";
    let repo = temp_tree(&[("trainer.yaml", trainer), (".gpulint.yaml", config)]);
    let (code_7, value) = json(&[repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code_7, 1);
    assert_eq!(rules_of(&value), ["KUE001"]);
    let (code_8, inventory) = json(&[
        "inventory",
        repo.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code_8, 0);
    assert_eq!(
        inventory["workloads"][0]["containers"][0]["path"],
        "$['spec']['template']['spec']['containers'][0]"
    );
    // Without the entry the kind is still found by the generic search, but it is not batch.
    let bare = temp_tree(&[
        ("trainer.yaml", trainer),
        (".gpulint.yaml", "kueue: {required: true}\n"),
    ]);
    let (code, value) = json(&[bare.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!((code, rules_of(&value)), (0, vec![]));
}

#[test]
fn human_output_of_a_parse_error_shows_the_place() {
    let repo = temp_tree(&[(
        "broken.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [oops\n",
    )]);
    let (code, stdout, _) = run_in(repo.path(), &["broken.yaml"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!(stdout);
}

#[test]
fn the_demo_shows_every_rule() {
    let (code, value) = json(&["testdata/demo", "--format", "json"]);
    assert_eq!(code, 1);
    assert_eq!(value["errors"], serde_json::json!([]));
    let seen: std::collections::BTreeSet<String> = rules_of(&value).into_iter().collect();
    // Every rule of the registry; the measured ones from the snapshot the demo's config names
    // (`metrics: metrics.json`).
    let all: std::collections::BTreeSet<String> = gpulint::rules::RULES
        .iter()
        .map(|r| r.id.to_string())
        .collect();
    assert_eq!(seen, all);
}

#[test]
fn select_lists_trim_spaces_and_unknown_ids_are_named() {
    let repo = temp_tree(&[("p.yaml", GPU002_POD)]);
    let dir = repo.path().to_str().unwrap();
    let (code, value) = json(&[dir, "--format", "json", "--select", "GPU001, GPU002"]);
    assert_eq!((code, rules_of(&value)), (1, vec!["GPU002".to_string()]));
    let (code, value) = json(&[dir, "--format", "json", "--ignore", " GPU002 ,"]);
    assert_eq!(code, 0, "{value}");
    for flag in ["--select", "--ignore"] {
        let (code, _, stderr) = run(&[dir, flag, "GPU002, GPU999"]);
        assert_eq!(code, 2);
        assert!(
            stderr.contains(&format!("{flag}: unknown rule \"GPU999\"")),
            "{stderr}"
        );
    }
    let repo = temp_tree(&[
        ("p.yaml", GPU002_POD),
        (
            ".gpulint.yaml",
            "ignore:\n- path: \"*.yaml\"\n  rules: [GPU002, NOPE01]\n",
        ),
    ]);
    let (code, _, stderr) = run(&[repo.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown rule \"NOPE01\""), "{stderr}");
}

#[test]
fn a_folder_excluded_without_a_glob_is_excluded() {
    let repo = temp_tree(&[
        ("platform/trainer/job.yaml", GPU002_POD),
        ("platform/trainer-ok/job.yaml", CLEAN_POD),
        (".gpulint.yaml", "exclude: [\"platform/trainer\"]\n"),
    ]);
    let (code, stdout, stderr) = run(&[repo.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("No findings in 1 file(s)"), "{stdout}");
}

#[test]
fn a_measured_rule_without_measurements_says_so() {
    let repo = temp_tree(&[("p.yaml", CLEAN_POD)]);
    let (code, _, stderr) = run(&[repo.path().to_str().unwrap(), "--select", "MEM002"]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("note: MEM002 needs measurements: pass --metrics FILE or --prometheus URL"),
        "{stderr}"
    );
    let (code_9, _, stderr) = run(&[repo.path().to_str().unwrap(), "--select", "GPU002"]);
    assert_eq!(code_9, 0, "{stderr}");
    assert!(!stderr.contains("needs measurements"), "{stderr}");
}

#[test]
fn the_summary_counts_files_with_findings_apart_from_files_read() {
    let repo = temp_tree(&[
        ("a.yaml", GPU002_POD),
        ("b.yaml", CLEAN_POD),
        ("c.yaml", CLEAN_POD),
    ]);
    let (code, stdout, _) = run(&[repo.path().to_str().unwrap(), "--select", "GPU002"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("Found 1 finding(s) in 1 of 3 file(s) read: 1 error(s)"),
        "{stdout}"
    );
}

/// The demo's snapshot, copied next to a config that names it.
const SNAPSHOT: &str = "testdata/demo/metrics.json";

#[test]
fn the_config_names_a_snapshot_inside_the_repository() {
    let demo_snapshot =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT)).unwrap();
    let llm = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo/apps/llm/deployment.yaml"),
    )
    .unwrap();
    let repo = temp_tree(&[
        ("apps/llm.yaml", &llm),
        ("ops/metrics.json", &demo_snapshot),
        (".gpulint.yaml", "metrics: ops/metrics.json\n"),
    ]);
    let dir = repo.path().to_str().unwrap();
    let (code_10, value) = json(&[dir, "--format", "json"]);
    assert_eq!(code_10, 1);
    let measured: Vec<String> = rules_of(&value)
        .into_iter()
        .filter(|r| r.starts_with("MEM") || r == "CPU001" || r.starts_with("GPU01"))
        .collect();
    assert!(!measured.is_empty(), "{value}");
    // The flag wins: an empty snapshot judges nothing.
    let empty = repo.path().join("empty.json");
    std::fs::write(
        &empty,
        "{\"version\": 1, \"window\": \"14d\", \"collected_at\": \"2026-12-01T00:00:00Z\", \"source\": \"t\", \"containers\": []}\n",
    )
    .unwrap();
    let (code_11, value) = json(&[
        dir,
        "--format",
        "json",
        "--metrics",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(code_11, 1);
    assert!(
        rules_of(&value).iter().all(|r| !r.starts_with("MEM")),
        "{value}"
    );
    // Outside the repository (directly, or through a symlink): refused, naming the key.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("metrics.json");
    std::fs::write(&secret, &demo_snapshot).unwrap();
    for target in [secret.to_str().unwrap().to_string(), "../x.json".into()] {
        std::fs::write(
            repo.path().join(".gpulint.yaml"),
            format!("metrics: {target}\n"),
        )
        .unwrap();
        let (code, _, stderr) = run(&[dir]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(".gpulint.yaml:1:10: `metrics:"), "{stderr}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, repo.path().join("link.json")).unwrap();
        std::fs::write(repo.path().join(".gpulint.yaml"), "metrics: link.json\n").unwrap();
        let (code, _, stderr) = run(&[dir]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("outside the repository"), "{stderr}");
    }
}

#[test]
fn rendered_and_defaulted_namespaces_are_in_the_json_findings() {
    let base = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {nvidia.com/gpu: 2, cpu: 1, memory: 1Gi}\n      limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}\n";
    let repo = temp_tree(&[
        ("plain/p.yaml", base),
        ("base/pod.yaml", base),
        ("base/kustomization.yaml", "resources: [pod.yaml]\n"),
        (
            "prod/kustomization.yaml",
            "resources: [../base]\nnamespace: prod\n",
        ),
        (
            "staging/kustomization.yaml",
            "resources: [../base]\nnamePrefix: s-\n",
        ),
        (".gpulint.yaml", "namespace: ml\n"),
    ]);
    // Renders read nothing outside the repository of the working directory: run inside it.
    let (code_12, stdout, stderr) = run_in(
        repo.path(),
        &[".", "--format", "json", "--select", "GPU002"],
    );
    assert_eq!(code_12, 1, "{stderr}");
    let value: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(value["errors"], serde_json::json!([]));
    let mut seen: Vec<(String, String)> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["object"]["name"].as_str().unwrap().to_string(),
                f["object"]["namespace"]
                    .as_str()
                    .unwrap_or("null")
                    .to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("p".to_string(), "ml".to_string()),
            ("p".to_string(), "prod".to_string()),
            ("s-p".to_string(), "ml".to_string()),
        ]
    );
}

/// An ignore comment naming no rule suppresses nothing, and says so with the nearest rule.
#[test]
fn an_unknown_id_in_an_ignore_comment_is_noted_where_it_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = dir.path().join("job.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        image: x\n        resources:\n          # gpulint: ignore[GPU01, QOS001] typo in the first id\n          limits: {nvidia.com/gpu: 1}\n",
    )
    .expect("write");
    let out = gpulint()
        .arg("--select")
        .arg("QOS001")
        .arg(&manifest)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "note: {}:11: `gpulint: ignore` comment: unknown rule \"GPU01\"; did you mean `GPU001`? (it suppresses nothing)",
            manifest.display()
        )),
        "{stderr}"
    );
    // The known id in the same comment still suppresses; no note names it.
    assert!(!stderr.contains("\"QOS001\""), "{stderr}");
}

/// The same for the `gpulint.io/ignore` annotation, on the object or its pod template; the
/// known ids beside the typo still suppress.
#[test]
fn an_unknown_id_in_an_ignore_annotation_is_noted_where_it_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest = dir.path().join("job.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: ml\n  annotations:\n    gpulint.io/ignore: QOS001, gpu-limit-mising\nspec:\n  template:\n    metadata:\n      annotations: {gpulint.io/ignore: \"QOS01\"}\n    spec:\n      containers:\n      - name: t\n        image: x\n        resources:\n          limits: {nvidia.com/gpu: 1}\n",
    )
    .expect("write");
    let out = gpulint()
        .args(["--select", "QOS001", "--format", "json"])
        .arg(&manifest)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("suppresses nothing"))
        .collect();
    let name = manifest.display();
    assert_eq!(
        notes,
        vec![
            format!("note: {name}:7:24: `gpulint.io/ignore` annotation: unknown rule \"gpu-limit-mising\"; did you mean `gpu-limit-missing`? (it suppresses nothing)"),
            format!("note: {name}:11:40: `gpulint.io/ignore` annotation: unknown rule \"QOS01\"; did you mean `QOS001`? (it suppresses nothing)"),
        ],
        "{stderr}"
    );
    // QOS001 is still suppressed by the annotation on the object; without it, it fires.
    let findings = |out: &std::process::Output| -> Vec<String> {
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        json["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(findings(&out), Vec::<String>::new());
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(&manifest, text.replace("QOS001, ", "")).expect("write");
    let out = gpulint()
        .args(["--select", "QOS001", "--format", "json"])
        .arg(&manifest)
        .output()
        .expect("runs");
    assert_eq!(findings(&out), vec!["QOS001".to_string()]);
}
