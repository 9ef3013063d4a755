//! Clusters, not files: a repository in the Flux multi-cluster shape (`clusters/prod`,
//! `clusters/staging`, overlays `apps/prod` and `apps/staging` of one base, post-build
//! substitution, Kueue per cluster) is linted as each cluster applies it, each judged with its
//! own measurements and nodes, and fixed in its own overlay (checked with `kubectl kustomize`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::common::{copy_dir, gpulint, helm, kubectl, output, write_files};

const FIXTURE: &str = "testdata/gitops/flux-multi";

/// A copy of the fixture in a temporary folder (the tests write into it).
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("repo");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &root);
    (tmp, root)
}

/// `gpulint <args> --format json` in `root`: (exit code, the report, stderr).
fn lint_json(root: &Path, args: &[&str]) -> (i32, Value, String) {
    let (code, stdout, stderr) = output(
        gpulint()
            .current_dir(root)
            .args(args)
            .args(["--format", "json"]),
    );
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    (code, report, stderr)
}

/// (rule, cluster, file, recommended memory or cpu, message) of every finding.
fn findings(report: &Value) -> Vec<(String, String, String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            let rec = &f["recommended"];
            let value = rec["value"]
                .as_str()
                .or(rec["memory"].as_str())
                .or(rec["cpu"].as_str())
                .unwrap_or_default()
                .to_string();
            (
                text(&f["rule"]),
                text(&f["cluster"]),
                text(&f["file"]),
                value,
                text(&f["message"]),
            )
        })
        .collect()
}

#[test]
fn each_overlay_is_judged_with_its_own_clusters_figures() {
    let (_tmp, root) = fixture();
    let (code, report, stderr) = lint_json(&root, &["."]);
    assert_eq!(code, 1, "{stderr}");
    let got = findings(&report);
    let rows: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(r, c, f, _, _)| (r.as_str(), c.as_str(), f.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            // prod: its P99 of 78Gi against its patch's 80Gi; the trainer against the base.
            ("MEM001", "prod", "apps/base/trainer/job.yaml"),
            ("MEM001", "prod", "apps/prod/vllm-memory.yaml"),
            // staging: the same Deployment uses 21Gi of its 48Gi.
            ("CPU001", "staging", "apps/base/vllm/deployment.yaml"),
            ("MEM002", "staging", "apps/staging/vllm-memory.yaml"),
        ],
        "{got:#?}"
    );
    // Each message carries its own cluster's number, the one the JSON recommends.
    for (rule, cluster, _, _, message) in &got {
        assert!(
            message.ends_with(&format!("[cluster {cluster}]")) || !message.contains("[cluster"),
            "{rule}: {message}"
        );
    }
    let prod = &got[1].4;
    let staging = &got[3].4;
    assert!(
        prod.contains("P99 78.0Gi") && prod.contains("90Gi"),
        "{prod}"
    );
    assert!(
        staging.contains("P99 21.0Gi") && staging.contains("25Gi"),
        "{staging}"
    );
    let recommended: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["recommended"])
        .collect();
    let text = serde_json::to_string(&recommended).unwrap();
    assert!(text.contains("90Gi") && text.contains("25Gi"), "{text}");
}

#[test]
fn substitution_and_totals_are_per_cluster() {
    let (_tmp, root) = fixture();
    let (code, stdout, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args(["inventory", ".", "--format", "json"]),
        );
    assert_eq!(code, 0, "{stderr}");
    let inv: Value = serde_json::from_str(&stdout).expect("inventory JSON");
    let trainer: Vec<(String, i64)> = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["name"] == "finetune-llama")
        .map(|w| {
            (
                w["cluster"].as_str().unwrap_or_default().to_string(),
                w["gpus"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    // `${GPUS_PER_NODE}`: 8 in prod, 4 in staging, from each cluster's `postBuild.substitute`.
    assert_eq!(
        trainer,
        [("prod".to_string(), 8), ("staging".to_string(), 4)]
    );
    // GPUs per namespace within each cluster, never added across them: prod 2×2 + 8,
    // staging 1×2 + 4.
    let totals: Vec<(String, String, i64)> = inv["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["gpus"].as_i64() != Some(0))
        .map(|n| {
            (
                n["cluster"].as_str().unwrap_or("-").to_string(),
                n["namespace"].as_str().unwrap_or("-").to_string(),
                n["gpus"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let t = |c: &str, ns: &str, n| (c.to_string(), ns.to_string(), n);
    assert_eq!(
        totals,
        [
            t("prod", "ml-inference", 4),
            t("prod", "training", 8),
            t("staging", "ml-inference", 2),
            t("staging", "training", 4),
        ]
    );
    let (_, table, _) = output(gpulint().current_dir(&root).args(["inventory", "."]));
    assert!(
        table.contains("GPUs by namespace in cluster prod:"),
        "{table}"
    );
    assert!(
        table.contains("GPUs by namespace in cluster staging:"),
        "{table}"
    );
    assert!(table.contains("staging/training"), "{table}");
    // The queue label came from a substituteFrom ConfigMap: the job is admitted (no KUE002).
    let (_, report, _) = lint_json(&root, &["."]);
    assert!(!report.to_string().contains("KUE002"), "{report}");
}

#[test]
fn one_snapshot_naming_clusters_gives_the_same_verdicts_as_one_per_cluster() {
    let (_tmp, root) = fixture();
    let (_, expected, _) = lint_json(&root, &["."]);
    // Both files in one, each figure and node with its `cluster`.
    let mut containers = Vec::new();
    let mut nodes = Vec::new();
    for cluster in ["prod", "staging"] {
        let text = std::fs::read_to_string(root.join(format!("metrics/{cluster}.json"))).unwrap();
        let snapshot: Value = serde_json::from_str(&text).unwrap();
        for mut c in snapshot["containers"].as_array().unwrap().clone() {
            c["cluster"] = Value::from(cluster);
            containers.push(c);
        }
        for mut n in snapshot["nodes"].as_array().unwrap().clone() {
            n["cluster"] = Value::from(cluster);
            nodes.push(n);
        }
    }
    let combined = serde_json::json!({
        "version": 1, "window": "14d", "containers": containers, "nodes": nodes,
    });
    std::fs::write(root.join("metrics/all.json"), combined.to_string()).unwrap();
    std::fs::write(root.join(".gpulint.yaml"), "metrics: metrics/all.json\n").unwrap();
    let (_, got, stderr) = lint_json(&root, &["."]);
    assert_eq!(findings(&got), findings(&expected), "{stderr}");
}

#[test]
fn figures_that_name_no_cluster_are_used_for_none_of_several() {
    let (_tmp, root) = fixture();
    // prod's snapshot, unlabelled, for a repository of two clusters: staging must not be judged
    // with it, and neither can prod be told from staging in it.
    let (_, report, stderr) = lint_json(&root, &[".", "--metrics", "metrics/prod.json"]);
    let rules: Vec<(String, String)> = findings(&report)
        .into_iter()
        .map(|(r, c, ..)| (r, c))
        .collect();
    assert!(
        rules.iter().all(|(r, _)| r == "MET001"),
        "only MET001 without figures per cluster: {rules:?}"
    );
    assert!(
        rules.contains(&("MET001".into(), "prod".into())),
        "{rules:?}"
    );
    assert!(
        rules.contains(&("MET001".into(), "staging".into())),
        "{rules:?}"
    );
    assert!(
        stderr.contains("declares 2 clusters (prod, staging)") && stderr.contains("`cluster`"),
        "{stderr}"
    );
}

#[test]
fn a_pod_is_fitted_to_its_own_clusters_nodes() {
    let (_tmp, root) = fixture();
    // staging's nodes hold 2 GPUs each: its 4-GPU trainer fits none. prod's 8-GPU nodes would
    // take it, and must not be asked.
    let path = root.join("metrics/staging.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("\"nvidia.com/gpu\": \"4\"", "\"nvidia.com/gpu\": \"2\""),
    )
    .unwrap();
    let (_, report, stderr) = lint_json(&root, &["."]);
    let fit: Vec<(String, String)> = findings(&report)
        .into_iter()
        .filter(|(r, ..)| r == "FIT001")
        .map(|(_, c, _, _, m)| (c, m))
        .collect();
    assert_eq!(fit.len(), 1, "{fit:?}\n{stderr}");
    assert_eq!(fit[0].0, "staging");
    assert!(fit[0].1.contains("finetune-llama"), "{}", fit[0].1);
}

/// `kubectl kustomize DIR` in `root`: the rendered stream.
fn kustomize(root: &Path, dir: &str) -> String {
    let out = Command::new(kubectl())
        .args(["kustomize", dir])
        .current_dir(root)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The memory limit of `container` in the rendered stream (the first document that has it).
fn rendered_field(stream: &str, container: &str, field: &str) -> String {
    let at = stream
        .find(&format!("name: {container}\n"))
        .unwrap_or_else(|| panic!("{container} not rendered:\n{stream}"));
    let rest = &stream[at..];
    let limits = rest.find("limits:").expect("limits");
    let line = rest[limits..]
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{field}:")))
        .expect("field");
    line.split(':')
        .nth(1)
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn fixes_land_in_each_clusters_overlay() {
    let (_tmp, root) = fixture();
    let base_before = std::fs::read_to_string(root.join("apps/base/vllm/deployment.yaml")).unwrap();
    let trainer_before = std::fs::read_to_string(root.join("apps/base/trainer/job.yaml")).unwrap();
    let (code, stdout, stderr) = output(gpulint().current_dir(&root).args([".", "--fix"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // The base both clusters read is untouched: each value went to its cluster's overlay.
    assert_eq!(
        std::fs::read_to_string(root.join("apps/base/vllm/deployment.yaml")).unwrap(),
        base_before
    );
    assert_eq!(
        std::fs::read_to_string(root.join("apps/base/trainer/job.yaml")).unwrap(),
        trainer_before
    );
    let prod = kustomize(&root, "apps/prod");
    let staging = kustomize(&root, "apps/staging");
    assert_eq!(rendered_field(&prod, "vllm", "memory"), "90Gi");
    assert_eq!(rendered_field(&prod, "trainer", "memory"), "265Gi");
    assert_eq!(rendered_field(&prod, "vllm", "cpu"), "\"8\"");
    assert_eq!(rendered_field(&staging, "vllm", "memory"), "25Gi");
    // A Guaranteed GPU container gets whole cores (3700m rounded up).
    assert_eq!(rendered_field(&staging, "vllm", "cpu"), "\"4\"");
    assert_eq!(rendered_field(&staging, "trainer", "memory"), "256Gi");
    // And the fixed repository lints clean.
    let (code, report, stderr) = lint_json(&root, &["."]);
    assert_eq!(code, 0, "{report}\n{stderr}");
}

#[test]
fn a_fix_never_writes_a_literal_over_a_flux_variable() {
    let (_tmp, root) = fixture();
    // The GPU limit is missing: GPU001's fix would copy the request, which `${GPUS_PER_NODE}`
    // made 8 in prod and 4 in staging, into the base both read.
    let job = root.join("apps/base/trainer/job.yaml");
    let text = std::fs::read_to_string(&job).unwrap();
    let without_limit = text.replacen(
        "              memory: 256Gi\n              nvidia.com/gpu: ${GPUS_PER_NODE}\n",
        "              memory: 256Gi\n",
        2,
    );
    let limits = without_limit.rfind("memory: 256Gi").unwrap();
    let (head, tail) = without_limit.split_at(limits);
    let edited = format!(
        "{}{}",
        head.replacen(
            "memory: 256Gi\n",
            "memory: 256Gi\n              nvidia.com/gpu: ${GPUS_PER_NODE}\n",
            1
        ),
        tail
    );
    std::fs::write(&job, &edited).unwrap();
    let (_, stdout, stderr) = output(
        gpulint()
            .current_dir(&root)
            .args([".", "--fix", "--diff", "--select", "GPU001"]),
    );
    assert!(stdout.is_empty(), "nothing written:\n{stdout}");
    assert!(stderr.contains("Flux substitutes variables"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&job).unwrap(), edited);
}

#[test]
fn a_root_two_clusters_apply_takes_no_measured_fix() {
    let (_tmp, root) = fixture();
    // The config says both clusters apply apps/prod: no file there is one cluster's alone.
    write_files(
        &root,
        &[(
            ".gpulint.yaml",
            "metrics:\n  prod: metrics/prod.json\n  staging: metrics/staging.json\nclusters:\n  - name: prod\n    paths: [apps/prod]\n  - name: staging\n    paths: [apps/prod]\n",
        )],
    );
    let (_, stdout, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args(["apps/prod", "--fix", "--diff"]),
        );
    assert!(stdout.is_empty(), "nothing written:\n{stdout}");
    assert!(
        stderr.contains("clusters prod, staging apply this file and each has its own measurements"),
        "{stderr}"
    );
}

#[test]
fn each_cluster_admits_with_its_own_queues() {
    let (_tmp, root) = fixture();
    // staging's ClusterQueue is cut to 2 GPUs: its 4-GPU trainer can never be admitted there.
    // prod's queue of the same name (16 GPUs) must not answer for staging, nor staging's for
    // prod.
    let path = root.join("infrastructure/staging/kueue.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "- name: nvidia.com/gpu\n              nominalQuota: 8",
            "- name: nvidia.com/gpu\n              nominalQuota: 2",
        ),
    )
    .unwrap();
    let (_, report, stderr) = lint_json(&root, &["."]);
    let kue: Vec<(String, String)> = findings(&report)
        .into_iter()
        .filter(|(r, ..)| r.starts_with("KUE"))
        .map(|(r, c, ..)| (r, c))
        .collect();
    assert_eq!(
        kue,
        [("KUE005".to_string(), "staging".to_string())],
        "{stderr}"
    );
}

#[test]
fn a_helm_release_in_a_render_is_declared_as_its_cluster_applies_it() {
    let (_tmp, root) = fixture();
    let helm = helm();
    let helm = helm.to_str().expect("helm path");
    let (_, report, stderr) = lint_json(&root, &[".", "--helm", helm]);
    let release: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["message"]
                .as_str()
                .unwrap_or_default()
                .contains("[release ")
        })
        .collect();
    let rows: Vec<(String, String, String, i64, String, String, bool)> = release
        .iter()
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                s(&f["rule"]),
                s(&f["cluster"]),
                s(&f["file"]),
                f["line"].as_i64().unwrap_or(0),
                s(&f["object"]["namespace"]),
                s(&f["object"]["name"]),
                f["fixable"].as_bool().unwrap_or(true),
            )
        })
        .collect();
    let row = |c: &str, f: &str, l| {
        (
            "MEM001".to_string(),
            c.to_string(),
            f.to_string(),
            l,
            "ml-inference".to_string(),
            "chat-server".to_string(),
            true,
        )
    };
    // The release is `chat` in `ml-inference`, as the HelmRelease declares it (not the chart's
    // defaults in `default`); prod's 48Gi comes from prod's patch of the values, staging's
    // 40Gi from the base; both are fixed (see the test below).
    assert_eq!(
        rows,
        [
            row("prod", "apps/prod/chat-values.yaml", 14),
            row("staging", "apps/base/chat/release.yaml", 25),
        ],
        "{stderr}"
    );
    assert!(
        release.iter().all(|f| f["message"]
            .as_str()
            .unwrap_or_default()
            .contains("[release chat of")),
        "{release:?}"
    );
    assert!(
        !report.to_string().contains("vllm-server-server"),
        "{report}"
    );
    let (_, stdout, _) = output(gpulint().current_dir(&root).args([
        "inventory",
        ".",
        "--format",
        "json",
        "--helm",
        helm,
    ]));
    let inv: Value = serde_json::from_str(&stdout).expect("inventory JSON");
    let chat: Vec<(String, i64)> = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["name"] == "chat-server")
        .map(|w| {
            (
                w["cluster"].as_str().unwrap_or("-").to_string(),
                w["gpus"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(chat, [("prod".to_string(), 2), ("staging".to_string(), 1)]);
}

/// The memory of the HelmRelease `chat`'s values in a rendered stream.
fn release_memory(stream: &str) -> String {
    let at = stream
        .find("kind: HelmRelease")
        .unwrap_or_else(|| panic!("no HelmRelease:\n{stream}"));
    let rest = &stream[at..];
    let limits = rest.find("limits:").expect("limits");
    let line = rest[limits..]
        .lines()
        .find(|l| l.trim_start().starts_with("memory:"))
        .expect("memory");
    line.split(':')
        .nth(1)
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn a_helm_release_in_a_render_is_fixed_in_its_clusters_overlay() {
    let (_tmp, root) = fixture();
    let helm = helm();
    let helm = helm.to_str().expect("helm path");
    let base = root.join("apps/base/chat/release.yaml");
    let base_before = std::fs::read_to_string(&base).unwrap();
    // What each cluster's finding recommends: the fix must write exactly that.
    let (_, report, _) = lint_json(&root, &[".", "--helm", helm, "--select", "MEM001"]);
    let recommended = |cluster: &str| -> String {
        findings(&report)
            .into_iter()
            .find(|(rule, c, _, _, message)| {
                rule == "MEM001" && c == cluster && message.contains("[release chat of")
            })
            .map(|(.., value, _)| value)
            .unwrap_or_else(|| panic!("no MEM001 on chat in {cluster}: {report}"))
    };
    let (prod, staging) = (recommended("prod"), recommended("staging"));
    assert_ne!(prod, staging, "each cluster has its own figure");
    let (code, stdout, stderr) = output(
        gpulint()
            .current_dir(&root)
            .args([".", "--fix", "--select", "MEM001", "--helm", helm]),
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Prod's value is in prod's own patch of the values: edited there. Staging's comes from
    // the base prod also reads: a patch of the HelmRelease in staging's overlay.
    assert_eq!(std::fs::read_to_string(&base).unwrap(), base_before);
    let staging_patch =
        std::fs::read_to_string(root.join("apps/staging/gpulint-helmrelease-chat.yaml"))
            .expect("staging's patch of the HelmRelease");
    assert!(
        staging_patch.contains("kind: HelmRelease"),
        "{staging_patch}"
    );
    assert!(
        std::fs::read_to_string(root.join("apps/prod/chat-values.yaml"))
            .unwrap()
            .contains(&format!("memory: {prod}")),
    );
    assert_eq!(release_memory(&kustomize(&root, "apps/prod")), prod);
    assert_eq!(release_memory(&kustomize(&root, "apps/staging")), staging);
    // The chart rendered with the fixed values: no MEM001 left on the release, in either cluster.
    let (_, after, stderr) = lint_json(&root, &[".", "--helm", helm, "--select", "MEM001"]);
    let left: Vec<_> = findings(&after)
        .into_iter()
        .filter(|(.., message)| message.contains("[release chat of"))
        .collect();
    assert!(left.is_empty(), "{left:?}\n{stderr}");
}

#[test]
fn a_helm_release_whose_chart_is_elsewhere_is_named_not_guessed() {
    let (_tmp, root) = fixture();
    write_files(
        &root,
        &[(
            "apps/base/chat/remote.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: embeddings\n  namespace: ml-inference\nspec:\n  chart:\n    spec:\n      chart: text-embeddings-inference\n      version: 1.2.0\n      sourceRef:\n        kind: HelmRepository\n        name: hf\n",
        )],
    );
    let kustomization = root.join("apps/base/chat/kustomization.yaml");
    let text = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        text.replace("  - release.yaml\n", "  - release.yaml\n  - remote.yaml\n"),
    )
    .unwrap();
    let helm = helm();
    let (code, _, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args([".", "--helm", helm.to_str().unwrap()]),
        );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("HelmRelease embeddings: its chart (HelmRepository hf: text-embeddings-inference@1.2.0) is not in this repository: not rendered"),
        "{stderr}"
    );
}

/// A HelmRelease's `valuesFrom` ConfigMap (in the base, beside the release) is merged under its
/// `spec.values`, as Flux does: staging's memory finding is located on the line of the
/// ConfigMap's values text that wrote 40Gi, and prod's still on its own patch. A Secret is
/// never read, and a note names it once however many clusters apply the release.
#[test]
fn a_helm_release_reads_its_values_from_config_maps() {
    let (_tmp, root) = fixture();
    let release = root.join("apps/base/chat/release.yaml");
    let text = std::fs::read_to_string(&release).unwrap();
    let (head, resources) = text.split_once("    resources:\n").unwrap();
    std::fs::write(
        &release,
        head.replace(
            "  values:\n",
            "  valuesFrom:\n    - kind: ConfigMap\n      name: chat-values\n    - kind: Secret\n      name: chat-token\n      valuesKey: token\n  values:\n",
        ),
    )
    .unwrap();
    // The resources, now in the ConfigMap's values.yaml (indented under the block scalar).
    let values: String = resources.lines().map(|l| format!("    {l}\n")).collect();
    std::fs::write(
        root.join("apps/base/chat/values.yaml"),
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chat-values\n  namespace: ml-inference\ndata:\n  values.yaml: |\n    resources:\n{values}"),
    )
    .unwrap();
    let kustomization = root.join("apps/base/chat/kustomization.yaml");
    let k = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        k.replace("  - release.yaml\n", "  - release.yaml\n  - values.yaml\n"),
    )
    .unwrap();
    let helm = helm();
    let helm = helm.to_str().expect("helm path");
    let (_, report, stderr) = lint_json(&root, &[".", "--helm", helm]);
    let mem: Vec<(String, String, i64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["rule"] == "MEM001"
                && f["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("[release chat of")
        })
        .map(|f| {
            (
                f["cluster"].as_str().unwrap_or_default().to_string(),
                f["file"].as_str().unwrap_or_default().to_string(),
                f["line"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    let written = std::fs::read_to_string(root.join("apps/base/chat/values.yaml")).unwrap();
    let line = written
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("memory: 40Gi"))
        .map(|(i, _)| i as i64 + 1)
        .last()
        .unwrap();
    assert_eq!(
        mem,
        [
            (
                "prod".to_string(),
                "apps/prod/chat-values.yaml".to_string(),
                14
            ),
            (
                "staging".to_string(),
                "apps/base/chat/values.yaml".to_string(),
                line
            ),
        ],
        "{stderr}"
    );
    let note = "HelmRelease chat: its valuesFrom Secret chat-token (gpulint never reads secrets) is not read";
    assert_eq!(stderr.matches(note).count(), 1, "{stderr}");
    // The ConfigMap is the base's, read by both clusters: staging's fix is a spec.values
    // patch in staging's overlay (spec.values wins over valuesFrom), verified by rendering.
    let (_, diff, stderr) = output(
        gpulint()
            .current_dir(&root)
            .args([".", "--helm", helm, "--fix", "--diff"]),
    );
    let patch = diff
        .split("+++ b/apps/staging/gpulint-helmrelease-chat.yaml\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no staging patch of the release:\n{diff}\n{stderr}"));
    assert!(
        patch
            .contains("+spec:\n+  values:\n+    resources:\n+      limits:\n+        memory: 42Gi"),
        "{patch}"
    );
    assert!(!diff.contains("apps/base/chat/values.yaml"), "{diff}");
}

/// Flux 2.7's layout (the upstream flux2-kustomize-helm-example since "Update structure for
/// Flux 2.7"): the Kustomization reads an ExternalArtifact that an ArtifactGenerator of its
/// cluster copies from the repository. Same verdicts as the GitRepository form.
#[test]
fn an_external_artifact_is_followed_through_its_generator() {
    let (_tmp, root) = fixture();
    let before = verdicts(&root, &["."]);
    assert!(before.iter().any(|(_, c, _)| c == "staging"), "{before:?}");
    edit(
        &root,
        "clusters/staging/apps.yaml",
        "  path: ./apps/staging\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
        "  path: ./staging\n  prune: true\n  sourceRef:\n    kind: ExternalArtifact\n    name: apps\n",
    );
    write_files(
        &root,
        &[(
            "clusters/staging/artifacts.yaml",
            "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  sources:\n    - alias: monorepo\n      kind: GitRepository\n      name: flux-system\n  artifacts:\n    - name: apps\n      originRevision: \"@monorepo\"\n      copy:\n        - from: \"@monorepo/apps/base/**\"\n          to: \"@artifact/base/\"\n        - from: \"@monorepo/apps/staging/**\"\n          to: \"@artifact/staging/\"\n",
        )],
    );
    let after = verdicts(&root, &["."]);
    assert_eq!(after, before);
    // A path no copy puts in the artifact is named, not guessed.
    edit(
        &root,
        "clusters/staging/apps.yaml",
        "path: ./staging",
        "path: ./prod",
    );
    let (_, stdout, stderr) = output(gpulint().current_dir(&root).arg("."));
    assert!(
        stderr.contains("Flux Kustomization flux-system/apps in clusters/staging/apps.yaml: no whole-folder copy of ArtifactGenerator clusters/staging/artifacts.yaml puts \"./prod\" in its artifact apps: not followed"),
        "{stdout}\n{stderr}"
    );
}

/// A HelmRelease whose chart comes from a HelmRepository renders a vendored copy that a
/// `charts:` entry maps to it (`remote: <source>/<chart>`), with the HelmRelease's values.
#[test]
fn a_remote_chart_renders_from_its_vendored_copy() {
    let (_tmp, root) = fixture();
    edit(
        &root,
        "apps/base/chat/release.yaml",
        "      chart: ./charts/vllm-server\n      sourceRef:\n        kind: GitRepository\n        name: flux-system\n        namespace: flux-system\n",
        "      chart: vllm-server\n      version: 0.1.0\n      sourceRef:\n        kind: HelmRepository\n        name: ours\n",
    );
    let helm = helm();
    let helm = helm.to_str().expect("helm path");
    let chat = |report: &Value| -> Vec<(String, String)> {
        findings(report)
            .into_iter()
            .filter(|(.., m)| m.contains("[release chat of"))
            .map(|(rule, cluster, ..)| (rule, cluster))
            .collect()
    };
    let (_, unmapped, stderr) = lint_json(&root, &[".", "--helm", helm]);
    assert!(chat(&unmapped).is_empty(), "{unmapped}");
    assert!(
        stderr.contains("(HelmRepository ours: vllm-server@0.1.0) is not in this repository: not rendered (vendor it and map it in .gpulint.yaml: `charts: [{path: <folder>, remote: ours/vllm-server}]`)"),
        "{stderr}"
    );
    let config = root.join(".gpulint.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{text}charts:\n  - path: charts/vllm-server\n    remote: ours/vllm-server\n"),
    )
    .unwrap();
    let (_, mapped, stderr) = lint_json(&root, &[".", "--helm", helm]);
    assert_eq!(
        chat(&mapped),
        [
            ("MEM001".to_string(), "prod".to_string()),
            ("MEM001".to_string(), "staging".to_string())
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("not in this repository"), "{stderr}");
}

/// The fixture committed in a git repository of its own (a pull request's base).
fn committed_fixture() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = fixture();
    crate::support::common::git(&root, &["init", "-q", "-b", "main"]);
    crate::support::common::git(&root, &["add", "-A"]);
    crate::support::common::git(&root, &["commit", "-q", "-m", "base"]);
    (tmp, root)
}

/// (rule, cluster, object name) of a run's findings.
fn verdicts(root: &Path, args: &[&str]) -> Vec<(String, String, String)> {
    let (_, report, _) = lint_json(root, args);
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (s(&f["rule"]), s(&f["cluster"]), s(&f["object"]["name"]))
        })
        .collect()
}

fn edit(root: &Path, file: &str, from: &str, to: &str) {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// What `--changed-since main` reports of `rules`, and that a whole run reports it too.
fn pull_request_verdicts(root: &Path, rules: &str) -> Vec<(String, String, String)> {
    let scoped = verdicts(root, &[".", "--select", rules, "--changed-since", "main"]);
    let whole = verdicts(root, &[".", "--select", rules]);
    for v in &scoped {
        assert!(whole.contains(v), "{v:?} is not in the whole run {whole:?}");
    }
    scoped
}

#[test]
fn a_quota_cut_reports_the_jobs_it_strands() {
    let (_tmp, root) = committed_fixture();
    assert!(pull_request_verdicts(&root, "KUE005").is_empty());
    // The pull request touches only staging's ClusterQueue: 8 GPUs to 2.
    edit(
        &root,
        "infrastructure/staging/kueue.yaml",
        "- name: nvidia.com/gpu\n              nominalQuota: 8",
        "- name: nvidia.com/gpu\n              nominalQuota: 2",
    );
    let t = |r: &str, c: &str, n: &str| (r.to_string(), c.to_string(), n.to_string());
    assert_eq!(
        pull_request_verdicts(&root, "KUE005"),
        [t("KUE005", "staging", "finetune-llama")]
    );
}

#[test]
fn a_removed_queue_reports_the_jobs_that_named_it() {
    let (_tmp, root) = committed_fixture();
    // staging's LocalQueue moves to a file of its own, committed; the pull request deletes it.
    // (staging keeps its `evals` queue: Kueue still manages the namespace.)
    let team_a = "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: team-a\n  namespace: training\nspec:\n  clusterQueue: training\n";
    edit(&root, "infrastructure/staging/kueue.yaml", team_a, "");
    std::fs::write(root.join("infrastructure/staging/local-queue.yaml"), team_a).unwrap();
    edit(
        &root,
        "infrastructure/staging/kustomization.yaml",
        "  - kueue.yaml\n",
        "  - kueue.yaml\n  - local-queue.yaml\n",
    );
    crate::support::common::git(&root, &["add", "-A"]);
    crate::support::common::git(&root, &["commit", "-q", "-m", "queue file"]);
    // The pull request: the queue's file and its entry go.
    std::fs::remove_file(root.join("infrastructure/staging/local-queue.yaml")).unwrap();
    edit(
        &root,
        "infrastructure/staging/kustomization.yaml",
        "  - local-queue.yaml\n",
        "",
    );
    let t = |r: &str, c: &str, n: &str| (r.to_string(), c.to_string(), n.to_string());
    let got = pull_request_verdicts(&root, "KUE002");
    assert_eq!(got, [t("KUE002", "staging", "finetune-llama")]);
    // A queue deleted in a plain file nothing renders: the file itself is gone.
    let (_tmp2, plain) = committed_fixture();
    std::fs::write(
        plain.join("clusters/staging/team-b-queue.yaml"),
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: team-b\n  namespace: training\nspec:\n  clusterQueue: training\n",
    )
    .unwrap();
    edit(
        &plain,
        "clusters/staging/cluster-settings.yaml",
        "TRAINING_QUEUE: team-a",
        "TRAINING_QUEUE: team-b",
    );
    crate::support::common::git(&plain, &["add", "-A"]);
    crate::support::common::git(&plain, &["commit", "-q", "-m", "team-b"]);
    assert!(pull_request_verdicts(&plain, "KUE002").is_empty());
    std::fs::remove_file(plain.join("clusters/staging/team-b-queue.yaml")).unwrap();
    assert_eq!(
        pull_request_verdicts(&plain, "KUE002"),
        [t("KUE002", "staging", "finetune-llama")]
    );
}

#[test]
fn a_substitution_change_reports_what_it_changes() {
    let (_tmp, root) = committed_fixture();
    // staging's nodes hold 4 GPUs and its queue 8: asking 16 fits neither.
    edit(
        &root,
        "clusters/staging/apps.yaml",
        "GPUS_PER_NODE: \"4\"",
        "GPUS_PER_NODE: \"16\"",
    );
    let mut got = pull_request_verdicts(&root, "KUE005,FIT001");
    got.sort();
    let t = |r: &str, c: &str, n: &str| (r.to_string(), c.to_string(), n.to_string());
    assert_eq!(
        got,
        [
            t("FIT001", "staging", "finetune-llama"),
            t("KUE005", "staging", "finetune-llama"),
        ]
    );
}

#[test]
fn a_named_file_reports_what_it_holds_and_what_its_change_causes() {
    let (_tmp, root) = committed_fixture();
    let t = |r: &str, c: &str, n: &str| (r.to_string(), c.to_string(), n.to_string());
    let named = |root: &Path| {
        let mut v = verdicts(root, &["apps/base/vllm/deployment.yaml"]);
        v.sort();
        v
    };
    // Committed as it is: the findings located in the file (staging's CPU request, written in
    // the base), not every finding of the two overlays that read it (the trainer's MEM001, the
    // overlays' memory patches).
    assert_eq!(named(&root), [t("CPU001", "staging", "vllm-qwen3-32b")]);
    // Changed (as pre-commit stages it): also what the change makes in each overlay's render.
    edit(
        &root,
        "apps/base/vllm/deployment.yaml",
        "image: vllm/vllm-openai:v0.10.1",
        "image: vllm/vllm-openai:v0.10.2",
    );
    assert_eq!(
        named(&root),
        [
            t("CPU001", "staging", "vllm-qwen3-32b"),
            t("MEM001", "prod", "vllm-qwen3-32b"),
            t("MEM002", "staging", "vllm-qwen3-32b"),
        ]
    );
    // A folder is linted whole.
    let whole = verdicts(&root, &["apps"]);
    assert!(
        whole.contains(&t("MEM001", "prod", "finetune-llama")),
        "{whole:?}"
    );
}

/// A pre-commit run names one file, but whether its Job is ever admitted is decided by the
/// ClusterQueue each cluster applies from `infrastructure/` (issue 23): a named-file run reads
/// what its clusters' declarations apply for those facts, and reports the staged file's KUE005
/// as the whole run does; so does a run of staging's overlay folder.
#[test]
fn a_named_file_is_judged_with_its_clusters_queues() {
    let (_tmp, root) = committed_fixture();
    edit(
        &root,
        "infrastructure/staging/kueue.yaml",
        "- name: nvidia.com/gpu\n              nominalQuota: 8",
        "- name: nvidia.com/gpu\n              nominalQuota: 2",
    );
    crate::support::common::git(&root, &["commit", "-q", "-am", "smaller staging quota"]);
    let t = |r: &str, c: &str, n: &str| (r.to_string(), c.to_string(), n.to_string());
    let stranded = t("KUE005", "staging", "finetune-llama");
    assert!(verdicts(&root, &["."]).contains(&stranded));
    for args in [
        &["apps/base/trainer/job.yaml", "--select", "KUE005"][..],
        &["apps/staging", "--select", "KUE005"][..],
    ] {
        assert_eq!(
            verdicts(&root, args),
            std::slice::from_ref(&stranded),
            "{args:?}"
        );
    }
    // Prod's quota admits it: nothing to say there either way.
    let prod = verdicts(
        &root,
        &[
            "apps/base/trainer/job.yaml",
            "--select",
            "KUE001,KUE002,KUE005",
        ],
    );
    assert!(!prod.iter().any(|(_, c, _)| c == "prod"), "{prod:?}");
}

/// Two days of the same Deployment (`ml-inference/vllm-qwen3-32b`, same pod names) in two
/// clusters told apart by a `cluster` label, with each cluster's nodes: prod's pod uses
/// 70–77Gi, staging's 18–21Gi.
fn two_cluster_metrics(dir: &Path) -> Vec<PathBuf> {
    use crate::support::openmetrics::{labels, OpenMetrics};
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let end = (now - 600) / 600 * 600;
    let start = end - 2 * 86_400;
    let every = |step: usize| (start..=end).step_by(step);
    let (ns, rs, pod) = (
        "ml-inference",
        "vllm-qwen3-32b-6d9f",
        "vllm-qwen3-32b-6d9f-x1",
    );
    let mut om = OpenMetrics::new();
    for (cluster, base, node, product) in [
        ("prod", 70.0, "h100-a", "NVIDIA-H100-80GB-HBM3"),
        ("staging", 18.0, "l40s-a", "NVIDIA-L40S"),
    ] {
        let l = |pairs: &[(&str, &str)]| {
            let mut all = vec![("cluster", cluster)];
            all.extend_from_slice(pairs);
            labels(&all)
        };
        om.add(
            "kube_pod_owner",
            &l(&[
                ("namespace", ns),
                ("pod", pod),
                ("uid", "uid-1"),
                ("owner_kind", "ReplicaSet"),
                ("owner_name", rs),
                ("owner_is_controller", "true"),
            ]),
            every(300).map(|t| (t, 1.0)),
        );
        om.add(
            "kube_replicaset_owner",
            &l(&[
                ("namespace", ns),
                ("replicaset", rs),
                ("owner_kind", "Deployment"),
                ("owner_name", "vllm-qwen3-32b"),
                ("owner_is_controller", "true"),
            ]),
            every(300).map(|t| (t, 1.0)),
        );
        let cadvisor = l(&[
            ("namespace", ns),
            ("pod", pod),
            ("container", "vllm"),
            ("node", node),
        ]);
        om.add(
            "container_memory_working_set_bytes",
            &cadvisor,
            every(300).map(|t| (t, base * GIB + ((t / 300) % 4) as f64 * GIB)),
        );
        om.add(
            "container_cpu_usage_seconds_total",
            &cadvisor,
            every(120).map(|t| (t, 1000.0 + 3.0 * (t - start) as f64)),
        );
        om.add(
            "kube_pod_container_status_restarts_total",
            &l(&[
                ("namespace", ns),
                ("pod", pod),
                ("uid", "uid-1"),
                ("container", "vllm"),
            ]),
            every(300).map(|t| (t, 0.0)),
        );
        for (resource, unit, value) in [
            ("cpu", "core", 96.0),
            ("memory", "byte", 1024.0 * GIB),
            ("nvidia_com_gpu", "integer", 8.0),
        ] {
            om.add(
                "kube_node_status_allocatable",
                &l(&[("node", node), ("resource", resource), ("unit", unit)]),
                every(300).map(|t| (t, value)),
            );
        }
        om.add(
            "kube_node_labels",
            &l(&[("node", node), ("label_nvidia_com_gpu_product", product)]),
            every(300).map(|t| (t, 1.0)),
        );
    }
    om.write_daily(dir)
}

#[test]
fn live_mode_asks_each_cluster_apart_and_the_snapshot_names_them() {
    use crate::support::prometheus::{backfill, tools, Prometheus};
    let Some(tools) = tools() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let om = tmp.path().join("om");
    std::fs::create_dir_all(&om).unwrap();
    let files = two_cluster_metrics(&om);
    let data = tmp.path().join("data");
    backfill(&tools, &files, &data);
    let work = tmp.path().join("prom");
    std::fs::create_dir_all(&work).unwrap();
    let prom = Prometheus::start(&tools, &work, &data, &[], None);
    let (_keep, root) = fixture();
    // No snapshots: the store is asked, once per cluster, under `cluster="<name>"`.
    std::fs::write(root.join(".gpulint.yaml"), "prometheus:\n  window: 2d\n").unwrap();
    let (_, report, stderr) = lint_json(&root, &[".", "--prometheus", &prom.url]);
    let memory: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["object"]["name"] == "vllm-qwen3-32b")
        .filter_map(|f| {
            let m = f["recommended"]["memory"].as_str()?;
            Some((f["cluster"].as_str()?.to_string(), m.to_string()))
        })
        .collect();
    let gib = |q: &str| q.trim_end_matches("Gi").parse::<f64>().unwrap_or(f64::NAN);
    let of = |c: &str| {
        memory
            .iter()
            .find(|(cluster, _)| cluster == c)
            .map(|(_, m)| gib(m))
            .unwrap_or_else(|| panic!("no {c} memory finding: {memory:?}\n{stderr}"))
    };
    // Each cluster's own figures: prod needs more than its 80Gi, staging far less than 48Gi.
    assert!(of("prod") > 80.0, "{memory:?}");
    assert!(of("staging") < 30.0, "{memory:?}");
    // `gpulint snapshot` writes each cluster's figures and nodes, named.
    let (code, stdout, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args(["snapshot", ".", "--prometheus", &prom.url]),
        );
    assert_eq!(code, 0, "{stderr}");
    let snapshot: Value = serde_json::from_str(&stdout).expect("snapshot JSON");
    let p99 = |c: &str| {
        snapshot["containers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["cluster"] == c && e["name"] == "vllm-qwen3-32b")
            .and_then(|e| e["memory_bytes"]["p99"].as_f64())
            .unwrap_or_else(|| panic!("no {c} entry: {snapshot}"))
    };
    assert!(p99("prod") > 70.0 * 1024f64.powi(3) && p99("staging") < 22.0 * 1024f64.powi(3));
    let nodes: Vec<(String, String)> = snapshot["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["cluster"].as_str().unwrap_or("-").to_string(),
                n["name"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            ("prod".to_string(), "h100-a".to_string()),
            ("staging".to_string(), "l40s-a".to_string())
        ]
    );
    // And linting against that snapshot gives the live verdicts.
    std::fs::write(root.join("snap.json"), &stdout).unwrap();
    let (_, from_snapshot, _) = lint_json(&root, &[".", "--metrics", "snap.json"]);
    assert_eq!(findings(&from_snapshot), findings(&report));
}

#[test]
fn argo_cd_application_sets_name_the_clusters_and_namespaces() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("repo");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/gitops/argo-appset"),
        &root,
    );
    let (_, report, stderr) = lint_json(&root, &["."]);
    let mut got: Vec<(String, String, String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                s(&f["rule"]),
                s(&f["cluster"]),
                s(&f["object"]["namespace"]),
                s(&f["object"]["name"]),
            )
        })
        .collect();
    got.sort();
    let t = |r: &str, c: &str, ns: &str, n: &str| {
        (r.to_string(), c.to_string(), ns.to_string(), n.to_string())
    };
    // The overlays' Applications put `embeddings` (which names no namespace) in the
    // Application's namespace, in the cluster the overlay's folder names; the matrix puts
    // `gpu-smoke` on both clusters, in `ml`; each is judged with its cluster's figures.
    assert_eq!(
        got,
        [
            t("MEM001", "prod", "embeddings", "embeddings"),
            t("MEM001", "staging", "ml", "gpu-smoke"),
            t("MEM002", "prod", "ml", "gpu-smoke"),
            t("MEM002", "staging", "embeddings", "embeddings"),
        ],
        "{stderr}"
    );
    // Fixes: each overlay its own value; the folder both clusters sync takes none.
    let (code, stdout, stderr) = output(gpulint().current_dir(&root).args([".", "--fix"]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("clusters prod, staging apply this file and each has its own measurements"),
        "{stderr}"
    );
    let prod = kustomize(&root, "apps/embeddings/overlays/prod");
    let staging = kustomize(&root, "apps/embeddings/overlays/staging");
    assert_eq!(rendered_field(&prod, "tei", "memory"), "13Gi");
    assert_eq!(rendered_field(&staging, "tei", "memory"), "3712Mi");
    let smoke = std::fs::read_to_string(root.join("shared/gpu-smoke/deployment.yaml")).unwrap();
    assert!(smoke.contains("memory: 4Gi"), "{smoke}");
}

#[test]
fn a_flux_target_namespace_names_the_objects_and_the_fix_addresses_the_root() {
    let (_tmp, root) = fixture();
    // staging's Kustomization moves every object to `ml-staging`; its snapshot knows them there.
    edit(
        &root,
        "clusters/staging/apps.yaml",
        "  path: ./apps/staging\n",
        "  path: ./apps/staging\n  targetNamespace: ml-staging\n",
    );
    let path = root.join("metrics/staging.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace(
            "\"namespace\": \"ml-inference\"",
            "\"namespace\": \"ml-staging\"",
        )
        .replace(
            "\"namespace\": \"training\"",
            "\"namespace\": \"ml-staging\"",
        );
    std::fs::write(&path, text).unwrap();
    let staging: Vec<(String, String, String)> = {
        let (_, report, stderr) = lint_json(&root, &["."]);
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["cluster"] == "staging")
            .map(|f| {
                let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
                (
                    s(&f["rule"]),
                    s(&f["object"]["namespace"]),
                    s(&f["message"]),
                )
            })
            .inspect(|(_, _, m)| assert!(!m.is_empty(), "{stderr}"))
            .collect()
    };
    let rules: Vec<(&str, &str)> = staging
        .iter()
        .map(|(r, ns, _)| (r.as_str(), ns.as_str()))
        .collect();
    // The trainer moved too: its LocalQueue is still in `training` (KUE002, as Flux would leave
    // it suspended).
    assert_eq!(
        rules,
        [
            ("KUE002", "ml-staging"),
            ("CPU001", "ml-staging"),
            ("MEM002", "ml-staging")
        ]
    );
    // The staging patch gpulint writes addresses the Deployment as apps/staging renders it
    // (Flux adds the namespace after), so kustomize applies it.
    let (code, stdout, stderr) =
        output(gpulint().current_dir(&root).args(["apps/staging", "--fix"]));
    assert!(code == 0 || code == 1, "{stdout}\n{stderr}");
    assert!(!stderr.contains("not fixed"), "{stderr}");
    let staging = kustomize(&root, "apps/staging");
    // A Guaranteed GPU container gets whole cores (3700m rounded up).
    assert_eq!(rendered_field(&staging, "vllm", "cpu"), "\"4\"");
    assert_eq!(rendered_field(&staging, "vllm", "memory"), "25Gi");
}

#[test]
fn a_flux_kustomizations_patches_and_images_are_applied() {
    let (_tmp, root) = fixture();
    // staging's Kustomization patches the vLLM Deployment (3 replicas, 40Gi) and pins the image.
    edit(
        &root,
        "clusters/staging/apps.yaml",
        "  path: ./apps/staging\n",
        "  path: ./apps/staging\n  patches:\n    - target:\n        kind: Deployment\n        name: vllm-qwen3-32b\n      patch: |\n        - op: replace\n          path: /spec/replicas\n          value: 3\n    - patch: |\n        apiVersion: apps/v1\n        kind: Deployment\n        metadata:\n          name: vllm-qwen3-32b\n          namespace: ml-inference\n        spec:\n          template:\n            spec:\n              containers:\n                - name: vllm\n                  resources:\n                    requests:\n                      memory: 40Gi\n                    limits:\n                      memory: 40Gi\n  images:\n    - name: vllm/vllm-openai\n      newTag: v0.10.2\n",
    );
    let (_, stdout, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args(["inventory", ".", "--format", "json"]),
        );
    let inv: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("{stderr}"));
    let vllm: Vec<(String, i64)> = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["name"] == "vllm-qwen3-32b")
        .map(|w| {
            (
                w["cluster"].as_str().unwrap_or("-").to_string(),
                w["gpus"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    // 3 replicas × 2 GPUs in staging (the JSON 6902 patch), prod untouched (2 × 2).
    assert_eq!(
        vllm,
        [("prod".to_string(), 4), ("staging".to_string(), 6)],
        "{stderr}"
    );
    // The strategic-merge patch's 40Gi is what staging is judged by, and the finding is shown
    // on its line in the Kustomization.
    let (_, report, stderr) = lint_json(&root, &["."]);
    let mem: Vec<(String, String, i64, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["cluster"] == "staging" && f["rule"] == "MEM002")
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                s(&f["object"]["name"]),
                s(&f["file"]),
                f["line"].as_i64().unwrap_or(0),
                s(&f["message"]),
            )
        })
        .collect();
    assert_eq!(mem.len(), 1, "{mem:?}\n{stderr}");
    assert_eq!(mem[0].1, "clusters/staging/apps.yaml", "{mem:?}");
    assert!(mem[0].3.contains("requests 40Gi"), "{mem:?}");
    // Its fix is not written in the folder, where the patch would undo it: the refusal says
    // where the value is.
    let (_, _, stderr) = output(gpulint().current_dir(&root).args([".", "--fix", "--diff"]));
    assert!(
        stderr.contains("MEM002: the value is set in clusters/staging/apps.yaml by the Flux Kustomization's patches (spec.patches)"),
        "{stderr}"
    );
    // A patch that matches nothing is said, and the render is linted without it.
    edit(
        &root,
        "clusters/staging/apps.yaml",
        "          name: vllm-qwen3-32b\n          namespace",
        "          name: no-such-deployment\n          namespace",
    );
    let (_, _, stderr) = output(gpulint().current_dir(&root).args(["."]));
    assert!(
        stderr.contains("its patches do not apply to the render of"),
        "{stderr}"
    );
}

/// Flux's `spec.components` (paths relative to `spec.path`) are added to the root's own
/// kustomization, as kustomize-controller does (issue 23): prod's Kustomization adds a
/// component that sets the trainer's memory. Its value is what prod is judged by, at
/// the component's patch (kubectl kustomize of the root with the component listed is the
/// oracle), and `--fix` edits the component's patch, verified by rendering it again.
#[test]
fn flux_components_are_rendered_into_their_clusters_root() {
    let (_tmp, root) = committed_fixture();
    crate::support::common::write_files(
        &root,
        &[
            (
                "components/long-context/kustomization.yaml",
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n  - path: memory.yaml\n",
            ),
            (
                "components/long-context/memory.yaml",
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: finetune-llama\n  namespace: training\nspec:\n  template:\n    spec:\n      containers:\n        - name: trainer\n          resources:\n            requests:\n              memory: 200Gi\n            limits:\n              memory: 200Gi\n",
            ),
        ],
    );
    edit(
        &root,
        "clusters/prod/apps.yaml",
        "  path: ./apps/prod\n",
        "  path: ./apps/prod\n  components:\n    - ../../components/long-context\n",
    );
    // The oracle: the root with the component listed, as kustomize-controller builds it.
    let oracle = root.join("oracle");
    copy_dir(&root.join("apps"), &oracle.join("apps"));
    copy_dir(&root.join("components"), &oracle.join("components"));
    edit(
        &oracle,
        "apps/prod/kustomization.yaml",
        "patches:\n",
        "components:\n  - ../../components/long-context\npatches:\n",
    );
    let rendered = kustomize(&oracle, "apps/prod");
    assert_eq!(rendered_field(&rendered, "trainer", "memory"), "200Gi");
    std::fs::remove_dir_all(&oracle).unwrap();

    let prod_trainer = |report: &Value| -> Vec<(String, String, String)> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["cluster"] == "prod" && f["object"]["name"] == "finetune-llama")
            .map(|f| {
                let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
                (s(&f["rule"]), s(&f["file"]), s(&f["message"]))
            })
            .collect()
    };
    let (_, report, stderr) = lint_json(&root, &["."]);
    assert!(!stderr.contains("spec.components"), "{stderr}");
    let found = prod_trainer(&report);
    let mem001: Vec<&(String, String, String)> =
        found.iter().filter(|(r, ..)| r == "MEM001").collect();
    assert_eq!(mem001.len(), 1, "{found:?}");
    assert_eq!(mem001[0].1, "components/long-context/memory.yaml");
    assert!(
        mem001[0].2.starts_with("memory limit 200Gi"),
        "{:?}",
        mem001[0]
    );
    // Staging does not add the component.
    let staging = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["cluster"] == "staging")
        .all(|f| f["file"] != "components/long-context/memory.yaml");
    assert!(staging, "{report}");

    // The fix lands in the component's patch; prod renders it, and a second run is clean.
    let (code, _, stderr) = output(
        gpulint()
            .current_dir(&root)
            .args([".", "--fix", "--select", "MEM001"]),
    );
    assert!(code == 0 || code == 1, "{stderr}");
    assert!(!stderr.contains("not fixed"), "{stderr}");
    let patch = std::fs::read_to_string(root.join("components/long-context/memory.yaml")).unwrap();
    assert!(!patch.contains("200Gi"), "{patch}");
    let (_, after, _) = lint_json(&root, &[".", "--select", "MEM001"]);
    assert!(
        !prod_trainer(&after).iter().any(|(r, ..)| r == "MEM001"),
        "{after}"
    );
}

/// A folder no cluster applies itself but whose files the clusters' overlays read
/// (`gpulint apps/base`) is linted as its files named one by one are: each finding in the
/// cluster that reads it, with that cluster's measurements, and only the findings located in
/// the folder. Before, it was rendered in no cluster (every container MET001, the coverage
/// warning). `--fix` writes exactly the fixes of the findings it reports (before, a later fix
/// round also wrote the overlays' own findings, which the report did not list), here and for a
/// named file (the `gpulint-fix` pre-commit hook).
#[test]
fn a_base_folder_is_linted_through_the_clusters_that_read_it() {
    let (_tmp, root) = committed_fixture();
    let helm = helm();
    let helm = helm.to_str().expect("helm path");
    let (_, report, stderr) = lint_json(&root, &["apps/base", "--helm", helm]);
    let mut rows: Vec<(String, String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (s(&f["rule"]), s(&f["cluster"]), s(&f["file"]))
        })
        .collect();
    rows.sort();
    let row = |r: &str, c: &str, f: &str| (r.to_string(), c.to_string(), f.to_string());
    assert_eq!(
        rows,
        [
            row("CPU001", "staging", "apps/base/vllm/deployment.yaml"),
            row("MEM001", "prod", "apps/base/trainer/job.yaml"),
            row("MEM001", "staging", "apps/base/chat/release.yaml"),
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("fewer than half"), "{stderr}");
    let files = |diff: &str| -> Vec<String> {
        diff.lines()
            .filter_map(|l| l.strip_prefix("+++ b/"))
            .map(str::to_string)
            .collect()
    };
    let (_, diff, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args(["apps/base", "--helm", helm, "--fix", "--diff"]),
        );
    assert_eq!(
        files(&diff),
        [
            "apps/prod/kustomization.yaml",
            "apps/prod/gpulint-job-finetune-llama.yaml",
            "apps/staging/kustomization.yaml",
            "apps/staging/gpulint-deployment-vllm-qwen3-32b.yaml",
            "apps/staging/gpulint-helmrelease-chat.yaml",
        ],
        "{diff}\n{stderr}"
    );
    let (_, diff, stderr) = output(gpulint().current_dir(&root).args([
        "apps/base/chat/release.yaml",
        "--helm",
        helm,
        "--fix",
        "--diff",
    ]));
    assert_eq!(
        files(&diff),
        [
            "apps/staging/kustomization.yaml",
            "apps/staging/gpulint-helmrelease-chat.yaml",
        ],
        "{diff}\n{stderr}"
    );
}

/// A folder without a kustomization that Flux Kustomizations apply with transforms (issue 23):
/// kustomize-controller generates the folder's kustomization, so the manifests run with each
/// Kustomization's target namespace, name prefix and substitution. gpulint renders the folder
/// so, once per cluster: the inventory counts each cluster's GPUs under its own name and
/// namespace, no `${…}` placeholder is left for GPU005, and a fix is written in the manifest
/// (verified by rendering the folder again) when every cluster gets the same value.
#[test]
fn a_plain_folder_flux_applies_with_transforms_is_linted_as_each_cluster_builds_it() {
    let (_tmp, root) = fixture();
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: eval\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: eval\n          image: ghcr.io/example/eval:1.0\n          resources:\n            requests:\n              cpu: \"4\"\n              memory: 16Gi\n            limits:\n              cpu: \"4\"\n              memory: 32Gi\n              nvidia.com/gpu: \"${EVAL_GPUS}\"\n";
    let flux = |cluster: &str, gpus: &str| {
        format!("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: batch\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps/batch\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  targetNamespace: ml-batch\n  namePrefix: {cluster}-\n  postBuild:\n    substitute:\n      EVAL_GPUS: \"{gpus}\"\n")
    };
    write_files(
        &root,
        &[
            ("apps/batch/eval/job.yaml", job),
            ("clusters/prod/batch.yaml", &flux("prod", "4")),
            ("clusters/staging/batch.yaml", &flux("staging", "1")),
        ],
    );
    let (code, stdout, stderr) =
        output(
            gpulint()
                .current_dir(&root)
                .args(["inventory", ".", "--format", "json"]),
        );
    assert_eq!(code, 0, "{stderr}");
    let inv: Value = serde_json::from_str(&stdout).expect("inventory JSON");
    let eval: Vec<(String, String, String, i64)> = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["name"].as_str().is_some_and(|n| n.ends_with("eval")))
        .map(|w| {
            let s = |v: &Value| v.as_str().unwrap_or("-").to_string();
            (
                s(&w["cluster"]),
                s(&w["namespace"]),
                s(&w["name"]),
                w["gpus"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let row = |c: &str, n: &str, g| (c.to_string(), "ml-batch".to_string(), n.to_string(), g);
    assert_eq!(
        eval,
        [
            row("prod", "prod-eval", 4),
            row("staging", "staging-eval", 1)
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("linted as written"), "{stderr}");
    let (_, report, stderr) = lint_json(&root, &["."]);
    let eval_findings: Vec<(String, String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == "apps/batch/eval/job.yaml")
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or("-").to_string();
            (s(&f["rule"]), s(&f["cluster"]), s(&f["object"]["name"]))
        })
        .collect();
    // The memory request below its limit, in each cluster's render; no placeholder finding.
    assert!(
        eval_findings.contains(&("QOS002".into(), "prod".into(), "prod-eval".into())),
        "{eval_findings:?}\n{stderr}"
    );
    assert!(
        eval_findings.contains(&("QOS002".into(), "staging".into(), "staging-eval".into())),
        "{eval_findings:?}"
    );
    assert!(
        !eval_findings.iter().any(|(rule, _, _)| rule == "GPU005"),
        "{eval_findings:?}"
    );
    // The request is set to the limit in the manifest: the same value for both clusters.
    let (_, _, stderr) = output(gpulint().current_dir(&root).args([".", "--fix"]));
    let fixed = std::fs::read_to_string(root.join("apps/batch/eval/job.yaml")).unwrap();
    assert!(
        fixed.contains("requests:\n              cpu: \"4\"\n              memory: 32Gi"),
        "{fixed}\n{stderr}"
    );
    assert!(fixed.contains("${EVAL_GPUS}"), "{fixed}");
    let (_, report, _) = lint_json(&root, &["."]);
    assert!(
        !report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == "apps/batch/eval/job.yaml" && f["rule"] == "QOS002"),
        "{report}"
    );
}

/// A Kustomize root that an overlay uses as a base and that an Argo CD Application also
/// applies on its own (argoproj/argocd-example-apps: `kustomize-guestbook`, which
/// `pre-post-sync` uses as a base) is two workloads: the overlay's, and its own in the
/// Application's namespace. Before, it was linted only through the overlay.
#[test]
fn a_base_an_application_applies_on_its_own_is_linted_as_its_own_workload_too() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    write_files(
        root,
        &[
            (
                "apps/guestbook.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: guestbook\n  namespace: argocd\nspec:\n  destination:\n    namespace: guestbook\n    server: https://kubernetes.default.svc\n  source:\n    path: guestbook\n    repoURL: https://example.com/gitops.git\n",
            ),
            ("guestbook/kustomization.yaml", "namePrefix: kustomize-\nresources:\n- deploy.yaml\n"),
            (
                "guestbook/deploy.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ui\nspec:\n  template:\n    spec:\n      containers:\n      - name: ui\n        image: ui:1\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n",
            ),
            (
                "hooks/kustomization.yaml",
                "namePrefix: hooks-\nnamespace: hooks\nresources:\n- ../guestbook\n",
            ),
        ],
    );
    let (_, report, stderr) = lint_json(root, &["."]);
    let mut got: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "QOS001")
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (s(&f["object"]["namespace"]), s(&f["object"]["name"]))
        })
        .collect();
    got.sort();
    let pair = |ns: &str, n: &str| (ns.to_string(), n.to_string());
    assert_eq!(
        got,
        [
            pair("guestbook", "kustomize-ui"),
            pair("hooks", "hooks-kustomize-ui")
        ],
        "{stderr}"
    );
}
