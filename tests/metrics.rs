//! The measured rules against a snapshot file: findings with recommended values, and the
//! measured fix (`--metrics … --fix`) that sets requests = limits to them.

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

const DIR: &str = "testdata/fixtures/metrics";

fn gpulint(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("gpulint")
        .unwrap()
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn measured_findings_carry_their_recommendations() {
    let (code, stdout, stderr) = gpulint(
        root(),
        &[
            &format!("{DIR}/workloads.yaml"),
            "--metrics",
            &format!("{DIR}/metrics.json"),
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    insta::assert_json_snapshot!(value);
    let rules: Vec<&str> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for expected in [
        "MEM001", "MEM002", "MEM003", "MEM004", "CPU001", "GPU010", "GPU011", "MET001", "QOS001",
    ] {
        assert!(
            rules.contains(&expected),
            "{expected} missing from {rules:?}"
        );
    }
}

#[test]
fn human_output_of_measured_findings() {
    let (_, stdout, _) = gpulint(
        root(),
        &[
            &format!("{DIR}/workloads.yaml"),
            "--metrics",
            &format!("{DIR}/metrics.json"),
            "--select",
            "MEM001,MEM003",
        ],
    );
    insta::assert_snapshot!(stdout);
}

#[test]
fn measured_fix_sets_requests_equal_to_limits_at_the_recommendation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join(DIR).join("workloads.yaml"),
        dir.path().join("w.yaml"),
    )
    .unwrap();
    std::fs::copy(
        root().join(DIR).join("metrics.json"),
        dir.path().join("m.json"),
    )
    .unwrap();
    let (_, stdout, stderr) = gpulint(
        dir.path(),
        &["w.yaml", "--metrics", "m.json", "--fix", "--diff"],
    );
    insta::assert_snapshot!(stdout);
    assert!(stderr.contains("fixable") || !stderr.is_empty(), "{stderr}");
    let (_, _, stderr) = gpulint(dir.path(), &["w.yaml", "--metrics", "m.json", "--fix"]);
    assert!(stderr.contains("fixed w.yaml"), "{stderr}");
    // Idempotent: the fixed file needs no further measured fix.
    let (_, stdout, _) = gpulint(
        dir.path(),
        &["w.yaml", "--metrics", "m.json", "--fix", "--diff"],
    );
    assert_eq!(stdout, "");
    let (_, stdout, _) = gpulint(
        dir.path(),
        &[
            "w.yaml",
            "--metrics",
            "m.json",
            "--format",
            "json",
            "--select",
            "MEM001,MEM002,QOS001,QOS002",
        ],
    );
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["findings"], serde_json::json!([]), "{value:#}");
}

#[test]
fn a_bad_snapshot_is_an_error_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.json"),
        "{\"version\": 1,\n \"containers\": [{\"namespace\": 3}]}\n",
    )
    .unwrap();
    std::fs::copy(
        root().join(DIR).join("workloads.yaml"),
        dir.path().join("w.yaml"),
    )
    .unwrap();
    let (code, _, stderr) = gpulint(dir.path(), &["w.yaml", "--metrics", "m.json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("m.json:2:"), "{stderr}");
}

#[test]
fn the_config_gives_the_namespace_of_manifests_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join(DIR).join("workloads.yaml")).unwrap();
    // Only the first object (Deployment ml/llm), without its namespace.
    let first = text
        .split("\n---\n")
        .next()
        .unwrap()
        .replace("  namespace: ml\n", "");
    std::fs::write(dir.path().join("llm.yaml"), first).unwrap();
    std::fs::copy(
        root().join(DIR).join("metrics.json"),
        dir.path().join("m.json"),
    )
    .unwrap();
    let rules = |dir: &Path| {
        let (_, stdout, _) = gpulint(
            dir,
            &["llm.yaml", "--metrics", "m.json", "--format", "json"],
        );
        let v: Value = serde_json::from_str(&stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(
        rules(dir.path()).contains(&"MET001".to_string()),
        "in `default`, nothing measured"
    );
    std::fs::write(dir.path().join(".gpulint.yaml"), "namespace: ml\n").unwrap();
    let measured = rules(dir.path());
    assert!(measured.contains(&"MEM001".to_string()), "{measured:?}");
}
