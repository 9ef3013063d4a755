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

/// The LWS docs' vLLM example: tensor × pipeline parallelism (8 × 2, the pipeline flag written
/// with underscores) against the GPUs of the group (size 2 × 8 GPUs per pod), not of one pod.
#[test]
fn gpu012_counts_a_leader_worker_set_group() {
    let upstream =
        root().join("testdata/corpus/raw/kubernetes-sigs__lws/docs/examples/vllm/GPU/lws.yaml");
    let text = std::fs::read_to_string(&upstream).expect("read");
    let lint_with = |pp: &str| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let changed = text.replace(
            "--pipeline_parallel_size 2\"",
            &format!("--pipeline_parallel_size {pp}\""),
        );
        assert!(changed.contains(&format!("--pipeline_parallel_size {pp}\"")));
        std::fs::write(tmp.path().join("lws.yaml"), changed).expect("write");
        findings("GPU012", tmp.path())
    };
    let found = lint_with("2");
    assert!(found.is_empty(), "{}", texts(&found));
    let found = lint_with("1");
    assert_eq!(found.len(), 1, "{}", texts(&found));
    assert!(
        found[0].message.contains("starts 8 rank(s) (--tensor-parallel-size 8 × --pipeline_parallel_size 1) on 16 GPU(s), a LeaderWorkerSet group of 2 pod(s): 1 leader pod(s) × 8 + 1 worker pod(s) × 8: 8 GPU(s) sit idle"),
        "{}",
        texts(&found)
    );
    // 8 idle GPUs in each of the 2 groups.
    assert_eq!(found[0].frees.as_ref().map(|f| f.gpus()), Some(16.0));
    let found = lint_with("4");
    assert_eq!(found.len(), 1, "{}", texts(&found));
    assert!(
        found[0].message.contains("starts 32 rank(s)")
            && found[0].message.contains("more ranks than GPUs"),
        "{}",
        texts(&found)
    );
}

/// Kueue's TAS example: the `tas-flavor` ResourceFlavor tolerates `nvidia.com/gpu`, and Kueue
/// adds a flavor's tolerations to the pods it admits, so the LeaderWorkerSet queued to it needs
/// none of its own.
#[test]
fn sch001_a_kueue_flavor_adds_the_toleration() {
    let examples = root().join("testdata/corpus/raw/kubernetes-sigs__kueue/site/static/examples");
    let tmp = tempfile::tempdir().expect("tempdir");
    let queues =
        std::fs::read_to_string(examples.join("tas/sample-gpu-queues.yaml")).expect("read");
    std::fs::write(tmp.path().join("queues.yaml"), &queues).expect("write");
    std::fs::copy(
        examples.join("serving-workloads/sample-leaderworkerset-tas.yaml"),
        tmp.path().join("lws.yaml"),
    )
    .expect("copy");
    let found = findings("SCH001", tmp.path());
    assert!(found.is_empty(), "{}", texts(&found));
    // Without the flavor's toleration, the GPU workers need their own.
    let start = queues.find("  tolerations:").expect("tolerations");
    let end = queues[start..].find("---").expect("end") + start;
    std::fs::write(
        tmp.path().join("queues.yaml"),
        format!("{}{}", &queues[..start], &queues[end..]),
    )
    .expect("write");
    let found = findings("SCH001", tmp.path());
    assert_eq!(found.len(), 1, "{}", texts(&found));
    assert_eq!(
        found[0].object.name.as_deref(),
        Some("nginx-leaderworkerset")
    );
}
