//! The measured rules against a snapshot file: findings with recommended values, and the
//! measured fix (`--metrics … --fix`) that sets requests = limits to them.

use std::path::Path;

use serde_json::Value;

use crate::support::common::run;

const DIR: &str = "testdata/fixtures/metrics";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn measured_findings_carry_their_recommendations() {
    let (code, stdout, stderr) = run(
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
    let (code_1, stdout, _) = run(
        root(),
        &[
            &format!("{DIR}/workloads.yaml"),
            "--metrics",
            &format!("{DIR}/metrics.json"),
            "--select",
            "MEM001,MEM003",
        ],
    );
    assert_eq!(code_1, 1);
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
    let (code_2, stdout, stderr) = run(
        dir.path(),
        &["w.yaml", "--metrics", "m.json", "--fix", "--diff"],
    );
    assert_eq!(code_2, 1, "{stderr}");
    insta::assert_snapshot!(stdout);
    // `--diff` writes nothing: the summary counts the 5 fixable findings still there.
    assert_eq!(
        stderr,
        "Found 9 finding(s) in 1 of 1 file(s) read: 2 error(s), 5 warning(s), 2 info; 5 fixable\n"
    );
    let (code_3, _, stderr) = run(dir.path(), &["w.yaml", "--metrics", "m.json", "--fix"]);
    assert_eq!(code_3, 1, "{stderr}");
    assert!(stderr.contains("fixed w.yaml"), "{stderr}");
    // Idempotent: the fixed file needs no further measured fix.
    let (code_4, stdout, _) = run(
        dir.path(),
        &["w.yaml", "--metrics", "m.json", "--fix", "--diff"],
    );
    assert_eq!(code_4, 1);
    assert_eq!(stdout, "");
    let (code_5, stdout, _) = run(
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
    assert_eq!(code_5, 0);
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
    let (code, _, stderr) = run(dir.path(), &["w.yaml", "--metrics", "m.json"]);
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
    let rules = |dir: &Path, expected_code: i32| {
        let (code_6, stdout, _) = run(
            dir,
            &["llm.yaml", "--metrics", "m.json", "--format", "json"],
        );
        assert_eq!(code_6, expected_code);
        let v: Value = serde_json::from_str(&stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(
        rules(dir.path(), 0).contains(&"MET001".to_string()),
        "in `default`, nothing measured"
    );
    std::fs::write(dir.path().join(".gpulint.yaml"), "namespace: ml\n").unwrap();
    let measured = rules(dir.path(), 1);
    assert!(measured.contains(&"MEM001".to_string()), "{measured:?}");
}
