//! NVIDIA NIM for LLMs (FIT002–FIT005, GPU012) on real public manifests
//! (`testdata/fit/nim`, byte-for-byte copies, see its SOURCES.md): each on the GPU its source
//! documents (given as the measured nodes of a snapshot: most of them select none), none known
//! to run raises an error; on a GPU too small for any profile, the ones whose model is large
//! are errors at the line that names it, so the check above is not empty.

use std::path::{Path, PathBuf};

use crate::support::common::{gpulint, output};

/// `rule file:line severity` of a run's JSON report.
fn said(stdout: &str, stderr: &str) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_str(stdout).expect(stderr);
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            format!(
                "{} {}:{} {}",
                f["rule"].as_str().unwrap_or_default(),
                f["file"].as_str().unwrap_or_default(),
                f["line"],
                f["severity"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

fn nim() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/fit/nim")
}

/// A snapshot whose one node has 8 GPUs of `product` (GPU feature discovery's label, as
/// kube-state-metrics exports it).
fn nodes_of(dir: &Path, product: &str) -> PathBuf {
    let snapshot = serde_json::json!({
        "version": 1,
        "window": "14d",
        "collected_at": "2026-12-01T00:00:00Z",
        "source": "the GPU the source documents",
        "containers": [],
        "nodes": [{
            "name": "gpu-1",
            "labels": {"nvidia_com_gpu_product": product},
            "allocatable": {"cpu": "95", "memory": "900Gi", "nvidia.com/gpu": "8", "pods": "110"},
        }],
    });
    let path = dir.join(format!("{product}.json"));
    std::fs::write(&path, snapshot.to_string()).expect("write the snapshot");
    path
}

/// `rule file:line severity` of the FIT and GPU012 findings of `files` (one or several
/// `;`-separated, linted together) on `product` nodes.
fn findings(files: &str, product: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let snapshot = nodes_of(tmp.path(), product);
    let mut args: Vec<&str> = files.split(';').collect();
    args.extend([
        "--metrics",
        snapshot.to_str().expect("UTF-8 path"),
        "--select",
        "FIT002,FIT003,FIT004,FIT005,GPU012",
        "--format",
        "json",
    ]);
    let (_, stdout, stderr) = output(gpulint().current_dir(nim()).args(args));
    said(&stdout, &stderr)
}

/// Each file on the smallest GPU its source runs it on (SOURCES.md): no error, and nothing
/// at all but what is said (every LLM in them is catalogued and judged).
#[test]
fn published_nim_deployments_on_their_gpus_raise_no_error() {
    for (file, product, said) in [
        // NVIDIA's RAG blueprint v2.3.0: Nemotron Super 49B on one H100 (an fp8 profile), with
        // its embedding, reranking and retriever NIMs (not LLMs: not read).
        (
            "rag-v2.3.0-nimservices-llm-embed-rerank.yaml",
            "NVIDIA-H100-80GB-HBM3",
            &[][..],
        ),
        // ai-on-eks: Llama 3.1 8B on g5.12xlarge, 2 A10G, from its NIMCache of fp16
        // TensorRT-LLM profiles for the A10G.
        (
            "eks-nimcache-llama-3.1-8b-a10g.yaml;eks-nimservice-llama-3.1-8b-g5.yaml",
            "NVIDIA-A10G",
            &[],
        ),
        // Red Hat's guide: Llama 3.1 8B on one A10G (g5.4xlarge), its profile pinned by id.
        (
            "openshift-nimservice-llama-3.1-8b-profile-pinned.yaml",
            "NVIDIA-A10G",
            &[],
        ),
        // The operator's end-to-end test: Llama 3.2 1B on one L40S (g6e.2xlarge).
        (
            "nim-operator-e2e-llama-3.2-1b-nimservice.yaml",
            "NVIDIA-L40S",
            &[],
        ),
        // The operator's multi-LLM sample: hf://meta-llama/Llama-3.2-1B-Instruct on one GPU.
        (
            "nim-operator-multi-llm-hf-nimservice.yaml",
            "NVIDIA-L4",
            &[],
        ),
        // nim-deploy's OKE example, "working & tested on OCI A100": Llama 3 8B on one A100.
        (
            "oke-llama3-8b-instruct-deployment.yaml",
            "NVIDIA-A100-SXM4-40GB",
            &[],
        ),
        // nim-deploy's AKS workshop: Nemotron Super 49B v1.5 on 2 H100 NVL, with
        // NIM_RELAX_MEM_CONSTRAINTS, whose effect is not documented: a note, not a verdict.
        (
            "aks-nemotron-super-49b-statefulset.yaml",
            "NVIDIA-H100-NVL",
            &["FIT005 aks-nemotron-super-49b-statefulset.yaml:63 info"],
        ),
        // The operator's multi-node DeepSeek R1 (pipeline parallel over pods): not compared.
        (
            "nim-operator-multinode-deepseek-r1.yaml",
            "NVIDIA-H100-80GB-HBM3",
            &[],
        ),
    ] {
        assert_eq!(findings(file, product), said, "{file} on {product}");
    }
}

/// On one L4 (or A10G) each: Nemotron Super 49B cannot load there at any profile's precision
/// (even 4 bits a parameter is more than the GPU holds); Llama 3.1 8B can.
#[test]
fn on_an_l4_no_nim_profile_loads_nemotron_super_49b() {
    for product in ["NVIDIA-L4", "NVIDIA-A10G"] {
        assert_eq!(
            findings("rag-v2.3.0-nimservices-llm-embed-rerank.yaml", product),
            ["FIT002 rag-v2.3.0-nimservices-llm-embed-rerank.yaml:7 error"],
            "{product}"
        );
        assert_eq!(
            findings(
                "openshift-nimservice-llama-3.1-8b-profile-pinned.yaml",
                product
            ),
            Vec::<String>::new(),
            "{product}"
        );
    }
}

/// nim-deploy's KServe examples: the InferenceService names a ClusterServingRuntime that holds
/// the NIM image; KServe runs the runtime's container with the model's fields over it. The
/// 8B one (2 A100 80GB) fits. The 70B one selects `NVIDIA-H100-SXM4-80GB`, a value GPU feature
/// discovery never writes (an H100 SXM is `NVIDIA-H100-80GB-HBM3`), so it is judged on a copy
/// with the real label (fits on 4), and on one L4 (no profile loads 70B there): an error at the
/// service's `runtime`, naming the runtime.
#[test]
fn a_kserve_service_is_judged_as_the_nim_runtime_it_names() {
    assert_eq!(
        findings(
            "kserve-llama3-8b-instruct-2xa100-isvc.yaml;kserve-llama3-8b-instruct-runtime.yaml",
            "NVIDIA-A100-SXM4-80GB"
        ),
        Vec::<String>::new()
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let runtime = "kserve-llama3-70b-instruct-runtime.yaml";
    std::fs::copy(nim().join(runtime), tmp.path().join(runtime)).expect("copy");
    let service =
        std::fs::read_to_string(nim().join("kserve-llama3-70b-instruct-4xh100-isvc.yaml"))
            .expect("read");
    let lint = |gpus: &str, product: &str| {
        let changed = service.replace("NVIDIA-H100-SXM4-80GB", product).replace(
            "nvidia.com/gpu: \"4\"",
            &format!("nvidia.com/gpu: \"{gpus}\""),
        );
        assert_ne!(changed, service);
        std::fs::write(tmp.path().join("isvc.yaml"), changed).expect("write");
        let (_, stdout, stderr) = output(gpulint().current_dir(tmp.path()).args([
            ".",
            "--select",
            "FIT002,FIT003,FIT004,FIT005,GPU012",
            "--format",
            "json",
        ]));
        (said(&stdout, &stderr), stdout)
    };
    assert_eq!(lint("4", "NVIDIA-H100-80GB-HBM3").0, Vec::<String>::new());
    let (found, stdout) = lint("1", "NVIDIA-L4");
    assert_eq!(found, ["FIT002 isvc.yaml:18 error"]);
    assert!(
        stdout.contains(
            "the image and settings of ClusterServingRuntime `nvidia-nim-llama3-70b-instruct-1.0.0`"
        ),
        "{stdout}"
    );
}

/// KServe merges the runtime's `resources` with the model's: nim-deploy's runtime sets cpu and
/// memory requests = limits, its InferenceService only the GPUs, so the pod is Guaranteed. Read
/// alone, the service's model has neither (QOS001, QOS003).
#[test]
fn a_kserve_runtimes_cpu_and_memory_count_for_qos() {
    let qos = |files: &str| {
        let mut args: Vec<&str> = files.split(';').collect();
        args.extend(["--select", "QOS001,QOS002,QOS003", "--format", "json"]);
        let (_, stdout, stderr) = output(gpulint().current_dir(nim()).args(args));
        said(&stdout, &stderr)
    };
    assert_eq!(
        qos("kserve-llama3-70b-instruct-4xh100-isvc.yaml;kserve-llama3-70b-instruct-runtime.yaml"),
        Vec::<String>::new()
    );
    assert_eq!(
        qos("kserve-llama3-70b-instruct-4xh100-isvc.yaml"),
        [
            "QOS001 kserve-llama3-70b-instruct-4xh100-isvc.yaml:13 warning",
            "QOS003 kserve-llama3-70b-instruct-4xh100-isvc.yaml:13 warning"
        ]
    );
}
