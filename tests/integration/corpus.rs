//! The real public manifests of testdata/corpus (copied from ../shared/corpus, see its SOURCES.md)
//! load without a panic, and every GPU `resources` block in them shows up in the inventory. The
//! reference is independent of gpulint: `scripts/count_gpu_blocks.py` walks every mapping with
//! PyYAML, without the workload catalogue, and its output is committed as
//! testdata/corpus/gpu_resource_blocks.json.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::common::{gpulint, output};

const RAW: &str = "testdata/corpus/raw";

fn read_json(path: &str) -> Value {
    let text = std::fs::read_to_string(path).expect("reference file");
    serde_json::from_str(&text).expect("reference is JSON")
}

/// `gpulint <args>` in the crate root, its stdout parsed as JSON.
fn lint_json(args: &[&str]) -> (i32, Value, String) {
    let (code, stdout, stderr) = output(gpulint().args(args));
    let value = serde_json::from_str(&stdout).expect("JSON output");
    (code, value, stderr)
}

fn is_gpu_name(name: &str) -> bool {
    name.starts_with("nvidia.com/gpu")
        || name.starts_with("nvidia.com/mig-")
        || name == "amd.com/gpu"
        || name.starts_with("gpu.intel.com/")
}

#[test]
fn every_gpu_resources_block_of_the_corpus_is_in_the_inventory() {
    let reference = read_json("testdata/corpus/gpu_resource_blocks.json");
    let expected: BTreeSet<(String, u64)> = reference["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["file"].as_str().unwrap().to_string(),
                b["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let unparsable_by_pyyaml: BTreeSet<String> = reference["unparsable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["file"].as_str().unwrap().to_string())
        .collect();
    assert!(
        expected.len() >= 150,
        "reference has {} blocks",
        expected.len()
    );

    let (code, inventory, stderr) = lint_json(&["inventory", RAW, "--format", "json"]);
    // Exit 2: a few upstream files really are invalid YAML; they must be reported, not crash.
    assert_eq!(code, 2, "{stderr}");
    let prefix = format!("{RAW}/");
    let mut found = BTreeSet::new();
    for w in inventory["workloads"].as_array().unwrap() {
        let file = w["file"]
            .as_str()
            .unwrap()
            .strip_prefix(&prefix)
            .unwrap()
            .to_string();
        for c in w["containers"].as_array().unwrap() {
            let names = ["requests", "limits"]
                .iter()
                .filter_map(|side| c[side].as_object())
                .flat_map(|m| m.keys().cloned())
                .collect::<Vec<_>>();
            if names.iter().any(|n| is_gpu_name(n)) {
                if let Some(line) = c["resources_line"].as_u64() {
                    found.insert((file.clone(), line));
                }
            }
        }
    }
    let missing: Vec<_> = expected.difference(&found).collect();
    assert!(
        missing.is_empty(),
        "GPU blocks missing from the inventory: {missing:#?}"
    );
    // Extra blocks may only come from files PyYAML could not read (gpulint's parser reads the
    // `{{HF_TOKEN}}`-keyed llama4 files, which are valid YAML).
    let extra: Vec<_> = found
        .difference(&expected)
        .filter(|(file, _)| !unparsable_by_pyyaml.contains(file))
        .collect();
    assert!(
        extra.is_empty(),
        "blocks the reference does not know: {extra:#?}"
    );

    // Every file that gpulint cannot parse is one PyYAML cannot parse either.
    for line in stderr.lines().filter(|l| l.starts_with("error: ")) {
        let file = line["error: ".len()..].split(':').next().unwrap();
        let file = file.strip_prefix(&prefix).unwrap_or(file);
        assert!(
            unparsable_by_pyyaml.contains(file),
            "unexpected parse error: {line}"
        );
    }
}

#[test]
fn the_corpus_lints_without_a_panic_and_places_every_finding() {
    let (code, report, _) = lint_json(&[RAW, "--format", "json", "--select",
        "GPU001,GPU002,GPU003,GPU004,GPU005,QOS001,QOS002,QOS003,SHM001,SHM002,KUE001,SCH001,SCH002"]);
    assert_eq!(code, 2, "invalid upstream files are input errors");
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings.len() > 100,
        "the corpus has many real findings: {}",
        findings.len()
    );
    for f in findings {
        let text = std::fs::read_to_string(f["file"].as_str().unwrap()).unwrap();
        let line = f["line"].as_u64().unwrap() as usize;
        assert!(line >= 1 && line <= text.lines().count(), "{f}");
        assert!(f["column"].as_u64().unwrap() >= 1, "{f}");
    }
}

/// The public serving manifests of the corpus are published configurations that run (Google's
/// GKE samples, the LeaderWorkerSet and vLLM production-stack examples, KServe's samples):
/// FIT002 and FIT003 (the model does not fit its GPU) must not call any of them an error. The
/// rules do judge them: the samples that name a catalogued model and a GPU are counted.
#[test]
fn published_serving_manifests_raise_no_model_fit_error() {
    let mut judged = 0;
    for dir in [
        RAW,
        "testdata/corpus/kustomize",
        "testdata/corpus/helm-rendered",
    ] {
        let (_, report, stderr) = lint_json(&[
            dir,
            "--select",
            "FIT002,FIT003,FIT004,FIT005",
            "--format",
            "json",
        ]);
        let findings = report["findings"].as_array().expect("findings");
        let errors: Vec<String> = findings
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| format!("{} {}: {}", f["rule"], f["file"], f["message"]))
            .collect();
        assert!(errors.is_empty(), "{stderr}\n{}", errors.join("\n"));
        judged += findings.len();
    }
    // Llama 4 Scout and Maverick (bf16 on 8 H100 or H200, FP8 on 8 H100, up to 1.3M tokens)
    // fit; a local checkpoint is not catalogued (FIT005), and a few samples are close to
    // their memory (FIT004): the rules ran on the corpus.
    assert!(judged >= 4, "{judged}");
}
