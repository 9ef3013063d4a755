//! Live Prometheus mode on a Helm release: a REAL Prometheus (Debian's package, backfilled with
//! promtool by tests/integration/support) and a REAL Helm engine (`GPULINT_HELM`). The release is alone in
//! its namespace (no plain manifest there), its workload is measured, and the repository is
//! loaded and rendered once: counted by a wrapper around the Helm engine that logs every
//! `helm template` call.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::openmetrics::{labels, OpenMetrics};
use crate::support::prometheus::{backfill, tools, Prometheus};

use crate::support::common::{copy_dir, git, gpulint, helm, output};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const DAY: i64 = 86_400;

/// Two days of one ollama pod (Deployment `ollama` through ReplicaSet `ollama-5f7d8b9c4`) in
/// namespace `llm`, using 3.5-4.5Gi of memory and 1.5 cores.
fn ollama_metrics(dir: &Path) -> Vec<PathBuf> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let end = (now - 600) / 600 * 600;
    let start = end - 2 * DAY;
    let every = |step: usize| (start..=end).step_by(step);
    let (ns, rs, pod, uid) = (
        "llm",
        "ollama-5f7d8b9c4",
        "ollama-5f7d8b9c4-abcde",
        "uid-ollama",
    );
    let mut om = OpenMetrics::new();
    om.add(
        "kube_pod_owner",
        &labels(&[
            ("namespace", ns),
            ("pod", pod),
            ("uid", uid),
            ("owner_kind", "ReplicaSet"),
            ("owner_name", rs),
            ("owner_is_controller", "true"),
        ]),
        every(300).map(|t| (t, 1.0)),
    );
    om.add(
        "kube_replicaset_owner",
        &labels(&[
            ("namespace", ns),
            ("replicaset", rs),
            ("owner_kind", "Deployment"),
            ("owner_name", "ollama"),
            ("owner_is_controller", "true"),
        ]),
        every(300).map(|t| (t, 1.0)),
    );
    let cadvisor = labels(&[
        ("namespace", ns),
        ("pod", pod),
        ("container", "ollama"),
        ("node", "gpu-node-1"),
    ]);
    om.add(
        "container_memory_working_set_bytes",
        &cadvisor,
        every(300).map(|t| (t, 3.5 * GIB + ((t / 300) % 11) as f64 / 10.0 * GIB)),
    );
    om.add(
        "container_cpu_usage_seconds_total",
        &cadvisor,
        every(120).map(|t| (t, 1000.0 + 1.5 * (t - start) as f64)),
    );
    om.add(
        "kube_pod_container_status_restarts_total",
        &labels(&[
            ("namespace", ns),
            ("pod", pod),
            ("uid", uid),
            ("container", "ollama"),
        ]),
        every(300).map(|t| (t, 0.0)),
    );
    om.write_daily(dir)
}

const APP: &str = "\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ollama
spec:
  source:
    path: charts/ollama
    helm:
      valuesObject:
        ollama:
          gpu:
            enabled: true
            number: 1
        resources:
          requests:
            cpu: \"2\"
            memory: 1Gi
          limits:
            cpu: \"2\"
            memory: 1Gi
  destination:
    namespace: llm
";

#[test]
fn a_release_alone_in_its_namespace_is_measured_and_rendered_once() {
    let helm = helm();
    let Some(tools) = tools() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let om = tmp.path().join("om");
    fs::create_dir_all(&om).unwrap();
    let files = ollama_metrics(&om);
    backfill(&tools, &files, &data);
    let work = tmp.path().join("prom");
    fs::create_dir_all(&work).unwrap();
    let prom = Prometheus::start(&tools, &work, &data, &[], None);

    let repo = tmp.path().join("repo");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/corpus/helm/otwld__ollama-helm/ollama"),
        &repo.join("charts/ollama"),
    );
    fs::create_dir_all(repo.join("apps")).unwrap();
    fs::write(repo.join("apps/ollama.yaml"), APP).unwrap();
    git(&repo, &["init", "-q", "."]);
    // A Helm engine that counts its `template` calls.
    let calls = tmp.path().join("helm-calls");
    let wrapper = tmp.path().join("helm");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" = template ]; then echo template >> '{}'; fi\nexec '{}' \"$@\"\n",
            calls.display(),
            helm.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let wrapper = wrapper.to_string_lossy().into_owned();
    let run = |args: &[&str]| {
        let _ = fs::remove_file(&calls);
        let (code, stdout, stderr) = output(
            gpulint()
                .current_dir(&repo)
                .env("NO_COLOR", "1")
                .args(args)
                .args(["--helm", &wrapper]),
        );
        let count = fs::read_to_string(&calls)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        (code, stdout, stderr, count)
    };
    let url = prom.url.as_str();
    let (code, live, err, live_calls) = run(&[
        ".",
        "--prometheus",
        url,
        "--window",
        "3d",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{err}{live}");
    assert!(err.contains("1 container(s) with data"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&live).unwrap();
    let mem001: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "MEM001")
        .collect();
    // Measured at up to 4.5Gi against a 1Gi limit, reported on the valuesObject leaf.
    assert_eq!(mem001.len(), 1, "{live}");
    assert_eq!(mem001[0]["file"], "apps/ollama.yaml");
    assert_eq!(mem001[0]["object"]["namespace"], "llm");

    // The same lint from a snapshot of the same server: the same findings, and the same number
    // of Helm renders (live mode renders the repository once, not once more for the queries).
    let (code, _, err, _) = run(&[
        "snapshot",
        "--prometheus",
        url,
        "--window",
        "3d",
        "-o",
        "../snap.json",
        ".",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, from_snapshot, err, snapshot_calls) =
        run(&[".", "--metrics", "../snap.json", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let rules = |text: &str| -> Vec<(String, String, u64)> {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] != "MET001")
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["file"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(rules(&live), rules(&from_snapshot));
    assert!(snapshot_calls >= 1);
    assert_eq!(
        live_calls, snapshot_calls,
        "helm template calls: live vs snapshot"
    );
}
