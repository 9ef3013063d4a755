//! Kaito `Workspace`s (FIT002–FIT005 on a preset and an instance type): Kaito's own published
//! Workspaces (`testdata/fit/kaito-project__kaito`, byte-for-byte copies, see
//! `testdata/fit/SOURCES.md`) raise no error and every preset and instance type in them is
//! known; a copy of one whose ConfigMap lowers vLLM's memory share below what Kaito's node
//! estimator assumed is an error at the Workspace's instance type, file and line.

use std::path::{Path, PathBuf};

use crate::support::common::{copy_dir, gpulint, output};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/fit/kaito-project__kaito")
}

/// The FIT findings of a run on `dir` (relative to `cwd`), as JSON values.
fn fit_findings(cwd: &Path, dir: &str) -> Vec<serde_json::Value> {
    let (_, stdout, stderr) = output(gpulint().current_dir(cwd).args([
        dir,
        "--select",
        "FIT002,FIT003,FIT004,FIT005",
        "--format",
        "json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stderr);
    report["findings"].as_array().expect("findings").clone()
}

#[test]
fn kaitos_published_workspaces_fit_and_are_all_known() {
    let found = fit_findings(&examples(), "examples");
    let said: Vec<String> = found
        .iter()
        .map(|f| {
            format!(
                "{} {}:{}: {}",
                f["rule"], f["file"], f["line"], f["message"]
            )
        })
        .collect();
    // No error, and no note that a preset, an instance type or a ConfigMap is unknown: every
    // Workspace with a preset and an instance type was sized and judged.
    assert!(
        found
            .iter()
            .all(|f| f["severity"] != "error" && f["rule"] != "FIT005"),
        "{}",
        said.join("\n")
    );
}

#[test]
fn a_configmap_below_kaitos_share_is_an_error_at_the_instance_type() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&examples(), tmp.path());
    let file = tmp
        .path()
        .join("examples/inference/kaito_workspace_llama-3.3_70b_instruct.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    // Kaito's example gives vLLM 0.95 of each A100; 0.35 is well below the 0.84 its node
    // estimator sizes with (2 nodes of 2 GPUs for 131 GiB of weights).
    let changed = text.replace(
        "gpu-memory-utilization: 0.95",
        "gpu-memory-utilization: 0.35",
    );
    assert_ne!(changed, text);
    std::fs::write(&file, changed).unwrap();
    let found = fit_findings(tmp.path(), "examples");
    let errors: Vec<String> = found
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            format!(
                "{} {}:{}",
                f["rule"].as_str().unwrap(),
                f["file"].as_str().unwrap(),
                f["line"]
            )
        })
        .collect();
    assert_eq!(
        errors,
        ["FIT002 examples/inference/kaito_workspace_llama-3.3_70b_instruct.yaml:28"],
        "{found:#?}"
    );
    let fit = &found
        .iter()
        .find(|f| f["rule"] == "FIT002")
        .expect("FIT002")["fit"];
    assert_eq!(
        (
            fit["tensor_parallel"].as_u64(),
            fit["pipeline_parallel"].as_u64()
        ),
        (Some(2), Some(2)),
        "Kaito's layout: tensor parallel over a node's 2 GPUs, pipeline over its 2 nodes"
    );
    let (code, human, stderr) = output(gpulint().current_dir(tmp.path()).args([
        "examples/inference/kaito_workspace_llama-3.3_70b_instruct.yaml",
        "--select",
        "FIT002,FIT003,FIT004,FIT005",
    ]));
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!("kaito_workspace_human", human);
}

/// Kaito's custom-config example asks vLLM for tensor parallel 2 in its ConfigMap on
/// Standard_NC24ads_A100_v4 (one A100): the ConfigMap's keys come after Kaito's flags, so vLLM
/// is started with 2 ranks on 1 GPU and fails. It is the only GPU012 of the published
/// Workspaces, at the Workspace's `inference.config`.
#[test]
fn the_custom_config_example_starts_more_ranks_than_its_gpus() {
    let (_, stdout, stderr) = output(
        gpulint()
            .current_dir(examples())
            .args(["examples", "--select", "GPU012", "--format", "json"]),
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stderr);
    let found: Vec<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            format!(
                "{} {}:{} {}",
                f["rule"], f["file"], f["line"], f["severity"]
            )
        })
        .collect();
    assert_eq!(
        found,
        [r#""GPU012" "examples/inference/kaito_workspace_custom_config.yaml":34 "error""#]
    );
}
