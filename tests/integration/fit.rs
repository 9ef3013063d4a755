//! Cluster fit (FIT001) end to end against a REAL Prometheus (Debian's package, fed by
//! backfilled OpenMetrics as kube-state-metrics exports nodes): `gpulint snapshot` writes the
//! nodes (two queries), linting against that snapshot and linting live give the same FIT001,
//! with the measured allocatable in the message.
//!
//! If `prometheus`/`promtool` are missing this test FAILS (see tests/integration/prometheus.rs), unless
//! GPULINT_SKIP_PROMETHEUS=1.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::openmetrics::{labels, OpenMetrics};
use crate::support::prometheus::{backfill, tools, Prometheus};

use crate::support::common::{gpulint, output};

/// A Job pinned to H100 nodes asking 8 GPUs per pod, and one asking 4 (which fits).
const JOBS: &str = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pretrain, namespace: ml}\nspec:\n  template:\n    spec:\n      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n      containers:\n      - name: trainer\n        resources: {limits: {nvidia.com/gpu: 8, cpu: 16, memory: 64Gi}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: finetune, namespace: ml}\nspec:\n  template:\n    spec:\n      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n      containers:\n      - name: trainer\n        resources: {limits: {nvidia.com/gpu: 4, cpu: 16, memory: 64Gi}}\n";

fn series(end: i64) -> OpenMetrics {
    let mut om = OpenMetrics::new();
    let times = || (end - 2 * 3600..=end).step_by(300).map(|t| (t, 0.0));
    let at = |v: f64| (end - 2 * 3600..=end).step_by(300).map(move |t| (t, v));
    // A pod of the Job, so the collection runs to the end (nodes are asked for last).
    om.add(
        "kube_pod_owner",
        &labels(&[
            ("namespace", "ml"),
            ("pod", "pretrain-x7k2p"),
            ("uid", "u1"),
            ("owner_kind", "Job"),
            ("owner_name", "pretrain"),
            ("owner_is_controller", "true"),
        ]),
        times().map(|(t, _)| (t, 1.0)),
    );
    // kube-state-metrics' node series: sanitized resource names and label keys.
    for (node, product, gpus) in [
        ("gpu-h100-1", "NVIDIA-H100-80GB-HBM3", 4.0),
        ("gpu-h100-2", "NVIDIA-H100-80GB-HBM3", 4.0),
        ("gpu-a100-1", "NVIDIA-A100-SXM4-80GB", 8.0),
    ] {
        for (resource, unit, v) in [
            ("nvidia_com_gpu", "integer", gpus),
            ("cpu", "core", 95.5),
            ("memory", "byte", 1.2e12),
        ] {
            om.add(
                "kube_node_status_allocatable",
                &labels(&[("node", node), ("resource", resource), ("unit", unit)]),
                at(v),
            );
        }
        om.add(
            "kube_node_labels",
            &labels(&[("node", node), ("label_nvidia_com_gpu_product", product)]),
            at(1.0),
        );
    }
    om
}

#[test]
fn snapshot_nodes_from_kube_state_metrics_and_no_node_fits() {
    let Some(tools) = tools() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let end = (now - 600) / 300 * 300;
    let mut om = series(end);
    let files = om.write_daily(tmp.path());
    let data = tmp.path().join("data");
    backfill(&tools, &files, &data);
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let prom = Prometheus::start(&tools, &work, &data, &[], None);

    let repo = tempfile::tempdir().expect("tempdir");
    std::fs::write(repo.path().join("jobs.yaml"), JOBS).expect("write");
    let run = |args: &[&str]| {
        output(
            gpulint()
                .current_dir(repo.path())
                .env("NO_COLOR", "1")
                .args(args),
        )
    };
    let url = prom.url.as_str();
    let (code, _, stderr) = run(&[
        "snapshot",
        "--prometheus",
        url,
        "--window",
        "3h",
        "-o",
        "snap.json",
        ".",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let snap: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join("snap.json")).expect("snapshot written"),
    )
    .expect("JSON");
    let nodes = snap["nodes"].as_array().expect("nodes written");
    assert_eq!(nodes.len(), 3, "{snap:#}");
    let h100 = nodes
        .iter()
        .find(|n| n["name"] == "gpu-h100-1")
        .expect("gpu-h100-1");
    assert_eq!(h100["allocatable"]["nvidia.com/gpu"], "4");
    assert_eq!(h100["allocatable"]["cpu"], "95500m");
    assert_eq!(h100["allocatable"]["memory"], "1200000000000");
    assert_eq!(
        h100["labels"]["nvidia_com_gpu_product"],
        "NVIDIA-H100-80GB-HBM3"
    );

    let fit = |args: &[&str]| -> Vec<String> {
        let (code, out, err) = run(args);
        assert_eq!(code, 1, "{out}\n{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["rule"] == "FIT001")
            .map(|f| {
                format!(
                    "{} {}",
                    f["object"]["name"].as_str().unwrap_or(""),
                    f["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    let from_snapshot = fit(&[".", "--metrics", "snap.json", "--format", "json"]);
    let live = fit(&[
        ".",
        "--prometheus",
        url,
        "--window",
        "3h",
        "--format",
        "json",
    ]);
    assert_eq!(from_snapshot, live, "snapshot and live agree");
    assert_eq!(from_snapshot.len(), 1, "{from_snapshot:?}");
    assert!(
        from_snapshot[0].starts_with("pretrain no node fits pod set `job` of Job `pretrain`: asks 8 nvidia.com/gpu per pod; the largest node it may run on (nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3) has 4"),
        "{}",
        from_snapshot[0]
    );
}
