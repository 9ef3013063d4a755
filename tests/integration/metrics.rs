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
        "Found 9 finding(s) in 1 of 1 file(s) read: 2 error(s), 5 warning(s), 2 info; 5 fixable\n\
         Metrics: measured 5 of 6 GPU container(s) (5 of 6 container(s))\n"
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

/// A snapshot that mostly names other workloads (another cluster's, or renamed ones): the
/// coverage says so, with one count in the summary, the JSON and the HTML.
#[test]
fn a_snapshot_that_matches_little_of_the_repository_is_a_warning_with_one_count() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join(DIR).join("workloads.yaml"),
        dir.path().join("w.yaml"),
    )
    .unwrap();
    let text = std::fs::read_to_string(root().join(DIR).join("metrics.json")).unwrap();
    let mut snap: Value = serde_json::from_str(&text).unwrap();
    // Keep the vLLM entry; the others are renamed into workloads the repository does not have.
    for (i, c) in snap["containers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
        .skip(1)
    {
        c["name"] = Value::from(format!("elsewhere-{i}"));
    }
    std::fs::write(dir.path().join("m.json"), snap.to_string()).unwrap();
    let args = ["w.yaml", "--metrics", "m.json"];

    let (code, stdout, stderr) = run(dir.path(), &args);
    assert_eq!(code, 1, "{stderr}");
    let said = "Metrics: measured 1 of 6 GPU container(s) (1 of 6 container(s)); 4 of 5 measured \
                entries match nothing in the repository: ml/Deployment/elsewhere-2/tei, \
                ml/Job/elsewhere-1/trainer, research/Deployment/elsewhere-3/jupyter, ... (1 more)\n\
                warning: the measurements cover 1 of the repository's 6 GPU containers, fewer \
                than half: are they from this cluster, with its namespaces and names?\n";
    assert!(stdout.ends_with(said), "{stdout}");

    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let (_, stdout, stderr) = run(dir.path(), &json_args);
    let m: Value = serde_json::from_str(&stdout).unwrap();
    let m = &m["metrics"];
    assert_eq!(
        (
            &m["gpu_measured"],
            &m["gpu_containers"],
            &m["unmatched"],
            &m["entries"]
        ),
        (&1.into(), &6.into(), &4.into(), &5.into()),
        "{m}"
    );
    assert_eq!(m["unmatched_first"][0], "ml/Deployment/elsewhere-2/tei");
    assert!(m["warning"]
        .as_str()
        .is_some_and(|w| w.contains("fewer than half")));
    assert!(
        stderr.contains("warning: the measurements cover 1 of"),
        "{stderr}"
    );

    let mut html_args = args.to_vec();
    html_args.extend(["--format", "html"]);
    let (_, html, _) = run(dir.path(), &html_args);
    assert!(
        html.contains("measured 1 of 6 GPU container(s) (1 of 6 container(s))")
            && html.contains("<h2>Measured containers (1)</h2>")
            && html.contains("id=\"coverage\">warning: the measurements cover 1 of"),
        "{html}"
    );
}
