//! GPU sizing end to end on real manifests from testdata/corpus (GKE samples: a vLLM Deployment,
//! a Triton Deployment, a JAX Job built by a Kustomize overlay; Kubeflow's MNIST PyTorchJob):
//! GPU012 on a real parallelism bug, the MIG fix (GPU013) landing where `nvidia.com/gpu` is
//! written (the overlay's patch, a plain file) and rendering as intended with `kubectl
//! kustomize`, and engines judged by their KV cache, not their framebuffer.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::common::{helm, kubectl, run};

const GKE: &str = "testdata/corpus/raw/GoogleCloudPlatform__kubernetes-engine-samples/ai-ml";
const JAX: &str = "testdata/corpus/kustomize/GoogleCloudPlatform__kubernetes-engine-samples/ai-ml/gke-a100-jax/kubernetes";
const VLLM: &str = "testdata/corpus/kustomize/GoogleCloudPlatform__kubernetes-engine-samples/ai-ml/llm-serving-gemma/vllm/vllm-7b.yaml";
const MNIST: &str =
    "testdata/corpus/raw/kubeflow__training-operator/examples/pytorch/mnist/v1/pytorch_job_mnist_nccl.yaml";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The findings of `gpulint <args> --format json` in `dir`, and the whole report.
fn findings(dir: &Path, args: &[&str]) -> (Vec<Value>, Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = run(dir, &all);
    assert_ne!(code, 2, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(v["errors"], serde_json::json!([]), "{v}");
    (v["findings"].as_array().cloned().unwrap_or_default(), v)
}

fn rules(f: &[Value]) -> Vec<String> {
    f.iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A temporary repository with `files` copied from the crate (`(from, to)`).
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (from, to) in files {
        let path = dir.path().join(to);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::copy(root().join(from), &path).unwrap_or_else(|e| panic!("{from}: {e}"));
    }
    dir
}

/// A snapshot with one GPU container: `fb_gb` GB at P99 of `cap_gb`, engine activity P99,
/// optional KV cache P99.
fn snapshot(
    key: [&str; 4],
    model: &str,
    gpus: u64,
    fb_gb: f64,
    cap_gb: f64,
    engine_p99: f64,
    kv_p99: Option<f64>,
) -> String {
    let kv = kv_p99.map_or(String::new(), |k| {
        format!(r#", "kv_cache_usage": {{"p99": {k}, "max": {k}}}"#)
    });
    format!(
        r#"{{"version": 1, "window": "14d", "source": "test", "containers": [{{"namespace": "{}", "kind": "{}", "name": "{}", "container": "{}", "samples": 20160, "history_seconds": 1209600, "memory_bytes": {{"p50": 1e9, "p99": 2e9, "max": 2e9}}, "gpu_memory_bytes": {{"p99": {}, "max": {}, "capacity": {}}}, "gpu_utilization": {{"avg": 0.5, "p99": 0.9}}, "gpu_model": "{model}", "gpu_count": {gpus}, "gpus_used": {gpus}, "gpu_engine_active": {{"avg": {}, "p99": {engine_p99}}}{kv}}}]}}"#,
        key[0],
        key[1],
        key[2],
        key[3],
        fb_gb * 1e9,
        fb_gb * 1e9,
        cap_gb * 1e9,
        engine_p99 / 2.0
    )
}

#[test]
fn a_real_parallelism_bug_is_gpu012_and_counts_as_savings() {
    // GKE's NeMo RL sample serves with --tensor-parallel-size=4 on 8 GPUs.
    let file = format!(
        "{GKE}/nemo-rl-on-gke/nemoRL/gemma3-27b-it/nvidia-vllm-post-trained-gemma3-27-deploy.yaml"
    );
    let dir = repo(&[(&file, "deploy.yaml")]);
    let (f, report) = findings(dir.path(), &["deploy.yaml", "--select", "GPU012"]);
    assert_eq!(rules(&f), ["GPU012"]);
    let message = f[0]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        "vLLM in container `inference-server` starts 4 rank(s) (--tensor-parallel-size 4) on 8 GPU(s): 4 GPU(s) sit idle"
    );
    assert_eq!(f[0]["line"], 43);
    // The message, the finding's `frees` and the run's total say the same number.
    assert_eq!(f[0]["frees"]["gpus"], 4.0);
    assert_eq!(f[0]["frees"]["pods"], 1);
    assert_eq!(report["savings"]["gpus"], 4.0);
    assert_eq!(report["savings"]["gpu_hours_per_week"], 672.0);
    assert_eq!(report["savings"]["by_namespace"]["default"]["gpus"], 4.0);
}

#[test]
fn the_mig_fix_lands_in_the_overlay_patch_and_renders() {
    let dir = repo(&[
        (
            &format!("{JAX}/kustomization.yaml"),
            "jax/kustomization.yaml",
        ),
        (&format!("{JAX}/job.yaml"), "jax/job.yaml"),
        (&format!("{JAX}/job-patch.yaml"), "jax/job-patch.yaml"),
        (&format!("{JAX}/service.yaml"), "jax/service.yaml"),
    ]);
    // The Job the overlay names jax-hello-world, on an A100 80GB: 8 GB and 10% engine activity.
    let snap = snapshot(
        ["default", "Job", "jax-hello-world", "jax-worker"],
        "NVIDIA A100-SXM4-80GB",
        1,
        8.0,
        85.1,
        0.10,
        None,
    );
    std::fs::write(dir.path().join("metrics.json"), snap).expect("write");
    let args = ["jax", "--metrics", "metrics.json", "--select", "GPU013"];
    let (f, _) = findings(dir.path(), &args);
    assert_eq!(rules(&f), ["GPU013"]);
    assert_eq!(f[0]["file"], "jax/job-patch.yaml");
    assert_eq!(f[0]["unsafe_fix"], true);
    assert!(f[0]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("MIG 1g.10gb fits and frees 6/7 of the GPU"));
    let base = std::fs::read_to_string(dir.path().join("jax/job.yaml")).expect("read");
    let patch = std::fs::read_to_string(dir.path().join("jax/job-patch.yaml")).expect("read");

    // `--fix` alone does not write an unsafe fix.
    let (code_1, _, err) = run(dir.path(), &[&args[..], &["--fix"]].concat());
    assert_eq!(code_1, 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("jax/job-patch.yaml")).expect("read"),
        patch,
        "{err}"
    );
    let (code, _, err) = run(
        dir.path(),
        &[&args[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_ne!(code, 2, "{err}");
    let fixed = std::fs::read_to_string(dir.path().join("jax/job-patch.yaml")).expect("read");
    assert_eq!(
        fixed,
        patch.replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.10gb: 1")
    );
    assert_ne!(fixed, patch);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("jax/job.yaml")).expect("read"),
        base
    );

    // kubectl renders the slice where the whole GPU was.
    let out = Command::new(kubectl())
        .arg("kustomize")
        .arg(dir.path().join("jax"))
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = String::from_utf8_lossy(&out.stdout);
    assert!(rendered.contains("nvidia.com/mig-1g.10gb: 1"), "{rendered}");
    assert!(!rendered.contains("nvidia.com/gpu:"), "{rendered}");
    // And the next run is clean: a MIG slice is already in use.
    let (f, _) = findings(dir.path(), &args);
    assert_eq!(rules(&f), Vec::<String>::new());
}

#[test]
fn the_mig_fix_renames_every_replica_spec_of_a_pytorchjob() {
    let dir = repo(&[(MNIST, "mnist.yaml")]);
    let snap = snapshot(
        [
            "default",
            "PyTorchJob",
            "pytorch-dist-mnist-nccl",
            "pytorch",
        ],
        "NVIDIA A100-SXM4-40GB",
        1,
        3.0,
        42.4,
        0.12,
        None,
    );
    std::fs::write(dir.path().join("metrics.json"), snap).expect("write");
    let args = [
        "mnist.yaml",
        "--metrics",
        "metrics.json",
        "--select",
        "GPU013",
    ];
    let (f, _) = findings(dir.path(), &args);
    // Master and Worker: 3 GB × 1.15 fits 1g.5gb.
    assert_eq!(rules(&f), ["GPU013", "GPU013"]);
    assert!(f[0]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("MIG 1g.5gb"));
    let before = std::fs::read_to_string(dir.path().join("mnist.yaml")).expect("read");
    let (code, _, err) = run(
        dir.path(),
        &[&args[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_ne!(code, 2, "{err}");
    let after = std::fs::read_to_string(dir.path().join("mnist.yaml")).expect("read");
    assert_eq!(
        after,
        before.replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.5gb: 1")
    );
    assert_eq!(after.matches("nvidia.com/mig-1g.5gb: 1").count(), 2);
}

#[test]
fn a_vllm_pod_at_92_percent_framebuffer_with_35_percent_kv_cache_is_not_under_pressure() {
    let dir = repo(&[(VLLM, "vllm.yaml")]);
    let key = [
        "default",
        "Deployment",
        "vllm-gemma-deployment",
        "inference-server",
    ];
    let measured = |kv: Option<f64>| {
        std::fs::write(
            dir.path().join("metrics.json"),
            snapshot(key, "NVIDIA L4", 2, 0.92 * 24.0, 24.0, 0.6, kv),
        )
        .expect("write");
        let (f, _) = findings(
            dir.path(),
            &[
                "vllm.yaml",
                "--metrics",
                "metrics.json",
                "--select",
                "GPU011,GPU012,GPU013,GPU014,GPU015",
            ],
        );
        f
    };
    // 92% of the framebuffer, 35% of the KV cache: no finding (the TP of 2 matches 2 GPUs).
    assert_eq!(rules(&measured(Some(0.35))), Vec::<String>::new());
    // 95% of the KV cache: pressure, with the engine's advice.
    let f = measured(Some(0.95));
    assert_eq!(rules(&f), ["GPU011"]);
    assert!(f[0]["message"]
        .as_str()
        .unwrap_or_default()
        .starts_with("vLLM in GPU container `inference-server` uses 95% of its KV cache at P99"));
    // No KV-cache metrics: not judged.
    assert_eq!(rules(&measured(None)), ["GPU015"]);
}

#[test]
fn triton_is_not_judged_by_its_framebuffer() {
    let dir = repo(&[(
        &format!("{GKE}/gke-online-serving-single-gpu/src/gke-config/deployment-triton.yaml"),
        "triton.yaml",
    )]);
    std::fs::write(
        dir.path().join("metrics.json"),
        snapshot(
            [
                "default",
                "Deployment",
                "triton-deployment",
                "triton-server",
            ],
            "NVIDIA L4",
            1,
            23.0,
            24.0,
            0.3,
            None,
        ),
    )
    .expect("write");
    let (f, _) = findings(
        dir.path(),
        &[
            "triton.yaml",
            "--metrics",
            "metrics.json",
            "--select",
            "GPU011,GPU013,GPU015",
        ],
    );
    assert_eq!(rules(&f), ["GPU015"]);
    assert!(f[0]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("Triton Inference Server in container `triton-server` preallocates GPU memory"));
}

/// A chart that renders `resources` whole (`toYaml .Values.resources`), with the GPU in a
/// release values file or in the chart's own values.yaml.
fn chart_repo(chart_values: &str, release_values: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "charts/svc/Chart.yaml",
        "apiVersion: v2\nname: svc\nversion: 0.1.0\n",
    );
    write("charts/svc/values.yaml", chart_values);
    write(
        "charts/svc/templates/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: {{ .Values.image }}\n          resources:\n            {{- toYaml .Values.resources | nindent 12 }}\n",
    );
    let values = match release_values {
        Some(text) => {
            write("envs/prod.yaml", text);
            "\n  values: [envs/prod.yaml]"
        }
        None => "",
    };
    write(
        ".gpulint.yaml",
        &format!("charts:\n- path: charts/svc\n  release: embed\n  namespace: ml{values}\n"),
    );
    write(
        "metrics.json",
        &snapshot(
            ["ml", "Deployment", "embed", "app"],
            "NVIDIA H100 80GB HBM3",
            1,
            8.0,
            85.1,
            0.1,
            None,
        ),
    );
    dir
}

#[test]
fn the_mig_fix_lands_in_the_helm_values_leaf() {
    const GPU: &str =
        "resources:\n  limits:\n    cpu: \"4\"\n    memory: 16Gi\n    nvidia.com/gpu: 1\n";
    let dir = chart_repo(
        "image: ghcr.io/example/embedder:1\nresources: {}\n",
        Some(GPU),
    );
    let helm = helm().to_string_lossy().into_owned();
    let args = [
        ".",
        "--metrics",
        "metrics.json",
        "--select",
        "GPU013",
        "--helm",
        &helm,
    ];
    let (f, _) = findings(dir.path(), &args);
    assert_eq!(rules(&f), ["GPU013"]);
    assert_eq!(f[0]["file"], "envs/prod.yaml");
    let (code, _, err) = run(
        dir.path(),
        &[&args[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_ne!(code, 2, "{err}");
    let fixed = std::fs::read_to_string(dir.path().join("envs/prod.yaml")).expect("read");
    assert_eq!(
        fixed,
        GPU.replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.10gb: 1")
    );
    // Rendered again (the verification ran the Helm engine): MIG in use, nothing to say.
    let (f, _) = findings(dir.path(), &args);
    assert_eq!(rules(&f), Vec::<String>::new());

    // In the chart's own values.yaml the rename cannot be verified (user values merge over the
    // chart's defaults, which keep the old key): reported, nothing written.
    let chart_values = format!("image: ghcr.io/example/embedder:1\n{GPU}");
    let dir = chart_repo(&chart_values, None);
    let (code, _, err) = run(
        dir.path(),
        &[&args[..], &["--fix", "--unsafe-fixes"]].concat(),
    );
    assert_ne!(code, 2, "{err}");
    assert!(err.contains("not fixed: charts/svc/values.yaml"), "{err}");
    let after = std::fs::read_to_string(dir.path().join("charts/svc/values.yaml")).expect("read");
    assert_eq!(after, chart_values);
}

#[test]
fn parallelism_rendered_by_helm_is_checked() {
    let helm = helm().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "charts/llm/Chart.yaml",
        "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
    );
    write("charts/llm/values.yaml", "tp: 4\ngpus: 2\n");
    write(
        "charts/llm/templates/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.10.0\n          command: [\"/bin/sh\", \"-c\"]\n          args:\n            - exec vllm serve m --tensor-parallel-size={{ .Values.tp }}\n          resources:\n            limits: {nvidia.com/gpu: {{ .Values.gpus }}}\n",
    );
    write(
        ".gpulint.yaml",
        "charts:\n- path: charts/llm\n  release: chat\n  namespace: ml\n",
    );
    let (f, _) = findings(dir.path(), &[".", "--select", "GPU012", "--helm", &helm]);
    assert_eq!(rules(&f), ["GPU012"]);
    assert!(
        f[0]["message"].as_str().unwrap_or_default().starts_with(
            "vLLM in container `vllm` starts 4 rank(s) (--tensor-parallel-size 4) on 2 GPU(s)"
        ),
        "{}",
        f[0]["message"]
    );
    // Values that agree: clean.
    write("charts/llm/values.yaml", "tp: 2\ngpus: 2\n");
    let (f, _) = findings(dir.path(), &[".", "--select", "GPU012", "--helm", &helm]);
    assert_eq!(rules(&f), Vec::<String>::new());
}

/// A hand-written snapshot with engine activity and no utilisation (as other tools write for
/// MIG slices, whose utilisation dcgm-exporter reports as 0): GPU010 reads engine activity.
#[test]
fn gpu010_reads_engine_activity_where_utilisation_is_absent_or_zero() {
    let dir = repo(&[(VLLM, "vllm.yaml")]);
    let lint = |util: &str, engine_avg: f64| {
        let snap = format!(
            r#"{{"version": 1, "window": "14d", "source": "test", "containers": [{{"namespace": "default", "kind": "Deployment", "name": "vllm-gemma-deployment", "container": "inference-server", "samples": 20160, "history_seconds": 1209600, "memory_bytes": {{"p50": 1e9, "p99": 2e9, "max": 2e9}}{util}, "gpu_engine_active": {{"avg": {engine_avg}, "p99": 0.9}}}}]}}"#
        );
        std::fs::write(dir.path().join("metrics.json"), snap).expect("write");
        let (f, _) = findings(
            dir.path(),
            &[
                "vllm.yaml",
                "--metrics",
                "metrics.json",
                "--select",
                "GPU010",
            ],
        );
        rules(&f)
    };
    assert_eq!(lint("", 0.03), ["GPU010"], "engine activity alone: 3%");
    assert_eq!(lint("", 0.55), Vec::<String>::new());
    let zero = r#", "gpu_utilization": {"avg": 0, "p99": 0}"#;
    assert_eq!(lint(zero, 0.55), Vec::<String>::new(), "a MIG slice's 0");
}
