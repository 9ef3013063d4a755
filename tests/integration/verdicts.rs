//! Verdicts that were false or misleading on real upstream manifests (issues 25 and 26): each
//! test lints real files (or a copy changed as its comment says) with the rule alone, through
//! the library, and asserts what the rule says, or that it says nothing.

use std::path::{Path, PathBuf};

use gpulint::rules::Finding;

use crate::support::common::copy_dir;
use crate::support::rule_fixtures::linter;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The findings of rule `id` alone on `dir` (with `dir/metrics.json` when there is one).
fn findings(id: &str, dir: &Path) -> Vec<Finding> {
    let linter = linter(id, dir);
    let run = linter.run(&[dir.to_path_buf()]);
    assert!(run.errors.is_empty(), "{id}: {:?}", run.errors);
    run.findings
        .into_iter()
        .filter(|f| f.rule.id == id)
        .collect()
}

fn texts(found: &[Finding]) -> String {
    found
        .iter()
        .map(|f| format!("{} / {}", f.message, f.help.as_deref().unwrap_or("")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// KAI Scheduler's IMEX pod claims the channel template its ComputeDomain names (the DRA
/// driver creates it), in a repository that defines other templates too.
#[test]
fn dra003_a_compute_domain_channel_template_exists() {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &root().join("testdata/dra/nvidia-kai-scheduler/docs/dra"),
        &tmp.path().join("kai"),
    );
    copy_dir(
        &root().join("testdata/dra/nvidia-k8s-dra-driver-gpu/v1"),
        &tmp.path().join("quickstart"),
    );
    let found = findings("DRA003", tmp.path());
    assert!(found.is_empty(), "{}", texts(&found));
    // The same pod with a typo in the template's name is still reported.
    let pod = tmp.path().join("kai/gpu-imex-pod.yaml");
    let text = std::fs::read_to_string(&pod).expect("read");
    std::fs::write(
        &pod,
        text.replace(
            "resourceClaimTemplateName: imex-channel-0",
            "resourceClaimTemplateName: imex-chanel-0",
        ),
    )
    .expect("write");
    let found = findings("DRA003", tmp.path());
    assert_eq!(found.len(), 1, "{}", texts(&found));
    assert!(
        found[0].message.contains("did you mean `imex-channel-0`"),
        "{}",
        texts(&found)
    );
}
