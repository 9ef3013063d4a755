//! Verdicts that were false or misleading on real upstream manifests (issues 25 and 26): each
//! test lints real files (or a copy changed as its comment says) with the rule alone, through
//! the library, and asserts what the rule says, or that it says nothing.

use std::path::{Path, PathBuf};

use gpulint::rules::{Finding, Rule};

use crate::support::common::copy_dir;
use crate::support::rule_fixtures::linter;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The findings of rule `id` alone on `dir` (with `dir/metrics.json` when there is one).
fn findings(id: &str, dir: &Path) -> Vec<Finding> {
    findings_of(&[id], dir)
}

/// The findings of rules `ids` on `dir` (with `dir/metrics.json` when there is one).
fn findings_of(ids: &[&str], dir: &Path) -> Vec<Finding> {
    let mut linter = linter(ids[0], dir);
    linter.selection.select = ids
        .iter()
        .map(|id| Rule::parse(id).unwrap_or_else(|| panic!("no rule {id}")))
        .collect();
    let run = linter.run(&[dir.to_path_buf()]);
    assert!(run.errors.is_empty(), "{ids:?}: {:?}", run.errors);
    run.findings
        .into_iter()
        .filter(|f| ids.contains(&f.rule.id))
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

/// Kueue's TAS example again: a flavor whose `nodeLabels` name the GPU product puts that label
/// in the pod's node selector at admission, so the LeaderWorkerSet queued to it selects a GPU
/// product without one of its own (SCH002, issue 26); the upstream flavor's node-group label
/// does not, and SCH002 stays.
#[test]
fn sch002_a_kueue_flavor_selects_the_gpu_product() {
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
    let found = findings("SCH002", tmp.path());
    assert!(!found.is_empty(), "the node group is not a GPU product");
    let label = "    cloud.provider.com/node-group: \"tas-group\"\n";
    assert!(queues.contains(label));
    std::fs::write(
        tmp.path().join("queues.yaml"),
        queues.replace(
            label,
            &format!("{label}    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"),
        ),
    )
    .expect("write");
    let found = findings("SCH002", tmp.path());
    assert!(found.is_empty(), "{}", texts(&found));
}

/// torchrun with `--nproc-per-node 4` on 8 GPUs, measured with 4 busy: GPU012 and GPU014 name
/// the same 4 idle GPUs, counted once. After GPU012's fix (`--nproc-per-node 8`), last week's
/// measurement no longer describes the manifest: GPU014 says so and frees nothing.
#[test]
fn gpu014_agrees_with_gpu012_and_is_stale_after_its_fix() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let job = |nproc: u32| {
        format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: ml}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: torch\n        image: nvcr.io/nvidia/pytorch:25.01-py3\n        command: [torchrun, --nproc-per-node, \"{nproc}\", train.py]\n        resources:\n          limits: {{nvidia.com/gpu: 8, cpu: \"32\", memory: 256Gi}}\n")
    };
    std::fs::write(tmp.path().join("metrics.json"), "{\"version\": 1, \"window\": \"7d\", \"collected_at\": \"2026-12-01T00:00:00Z\", \"containers\": [{\"namespace\": \"ml\", \"kind\": \"Job\", \"name\": \"train\", \"container\": \"torch\", \"samples\": 10080, \"history_seconds\": 604800, \"gpu_model\": \"NVIDIA H100 80GB HBM3\", \"gpu_count\": 8, \"gpus_used\": 4, \"gpu_utilization\": {\"avg\": 0.4, \"p99\": 0.9}}]}").expect("write");
    std::fs::write(tmp.path().join("job.yaml"), job(4)).expect("write");
    let before = findings_of(&["GPU012", "GPU014"], tmp.path());
    let ids: Vec<&str> = before.iter().map(|f| f.rule.id).collect();
    assert_eq!(ids, ["GPU012", "GPU014"], "{}", texts(&before));
    assert!(
        before[0].message.contains("4 GPU(s) sit idle"),
        "{}",
        texts(&before)
    );
    assert!(
        before[1]
            .message
            .contains("the same 4 idle GPU(s) that GPU012 reports"),
        "{}",
        texts(&before)
    );
    // The 4 idle GPUs are freed once, by GPU012.
    let freed: f64 = before
        .iter()
        .filter_map(|f| f.frees.as_ref())
        .map(|f| f.gpus())
        .sum();
    assert_eq!(freed, 4.0);
    std::fs::write(tmp.path().join("job.yaml"), job(8)).expect("write");
    let after = findings_of(&["GPU012", "GPU014"], tmp.path());
    assert_eq!(after.len(), 1, "{}", texts(&after));
    assert_eq!(after[0].rule.id, "GPU014");
    assert!(
        after[0].message.contains("now start 8 ranks, one per GPU")
            && after[0]
                .message
                .contains("not a reason to request fewer GPUs")
            && !after[0].message.contains("request 4"),
        "{}",
        texts(&after)
    );
    assert!(after[0].frees.is_none());
}

/// instaslice's notebook asks for `mig-3g.20gb`, an A100 40GB profile; the cluster's A100 80GB
/// nodes offer `1g.10gb` and `3g.40gb`: FIT001's help says so, from the MIG table.
#[test]
fn fit001_names_the_mig_profile_of_another_gpu() {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(
        &root().join("testdata/fit/instaslice-operator/samples"),
        tmp.path(),
    );
    std::fs::write(tmp.path().join("metrics.json"), "{\"version\": 1, \"window\": \"7d\", \"collected_at\": \"2026-12-01T00:00:00Z\", \"containers\": [], \"nodes\": [{\"name\": \"a100-1\", \"labels\": {\"nvidia_com_gpu_product\": \"NVIDIA-A100-SXM4-80GB\"}, \"allocatable\": {\"cpu\": \"95500m\", \"memory\": \"1000Gi\", \"nvidia.com/mig-1g.10gb\": \"7\", \"nvidia.com/mig-3g.40gb\": \"2\"}}]}").expect("write");
    let found = findings("FIT001", tmp.path());
    assert_eq!(found.len(), 1, "{}", texts(&found));
    let help = found[0].help.as_deref().unwrap_or_default();
    assert_eq!(help, "`3g.20gb` is a MIG profile of the A100 40GB; the nodes it may run on that name their GPU (`nvidia.com/gpu.product`) have A100 80GB; they offer `nvidia.com/mig-1g.10gb`, `nvidia.com/mig-3g.40gb`: request `nvidia.com/mig-3g.40gb` instead");
}

/// KubeRay's Ray Serve LLM sample (vLLM behind `rayproject/ray-llm`, `gpu_memory_utilization`
/// in `serveConfigV2`, raised to 0.92 here): 93% of the framebuffer is the engine's reservation,
/// and with its KV cache measured at 35% there is no pressure. Without KV-cache figures the
/// image says it is Ray Serve LLM, which preallocates: GPU015 says it was not judged.
#[test]
fn gpu011_a_container_with_kv_cache_measurements_preallocates() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        root().join("testdata/rules/GPU011/ray-serve-llm.yaml"),
        tmp.path().join("ray-serve-llm.yaml"),
    )
    .expect("copy");
    let snapshot = |kv: &str| {
        format!("{{\"version\": 1, \"window\": \"14d\", \"collected_at\": \"2026-12-01T00:00:00Z\", \"containers\": [{{\"namespace\": \"default\", \"kind\": \"RayService\", \"name\": \"ray-serve-llm\", \"container\": \"ray-worker\", \"samples\": 20160, \"history_seconds\": 1209600, \"gpu_memory_bytes\": {{\"p99\": 7.9e10, \"max\": 7.9e10, \"capacity\": 8.5e10}}, \"gpu_utilization\": {{\"avg\": 0.5, \"p99\": 0.9}}, \"gpu_model\": \"NVIDIA H100 80GB HBM3\", \"gpu_count\": 4, \"gpus_used\": 4{kv}}}]}}")
    };
    let metrics = tmp.path().join("metrics.json");
    std::fs::write(
        &metrics,
        snapshot(", \"kv_cache_usage\": {\"p99\": 0.35, \"max\": 0.52}"),
    )
    .expect("write");
    let found = findings("GPU011", tmp.path());
    assert!(found.is_empty(), "{}", texts(&found));
    // Without KV-cache measurements: not judged by its framebuffer, and GPU015 says why.
    std::fs::write(&metrics, snapshot("")).expect("write");
    let found = findings_of(&["GPU011", "GPU015"], tmp.path());
    assert_eq!(found.len(), 1, "{}", texts(&found));
    assert_eq!(found[0].rule.id, "GPU015", "{}", texts(&found));
    assert!(
        found[0]
            .message
            .contains("Ray Serve LLM (vLLM) in container `ray-worker` preallocates GPU memory by engine_kwargs.gpu_memory_utilization"),
        "{}",
        texts(&found)
    );
}

/// Three replicas of a 32B model, each using 72 GB of an H100 and idle: no smaller GPU shape
/// holds the model, so GPU010's lever is the replicas; an idle small container keeps the
/// advice of fewer GPUs or a MIG slice.
#[test]
fn gpu010_points_at_replicas_when_memory_rules_out_a_smaller_gpu() {
    let found = findings("GPU010", &root().join("testdata/rules/GPU010"));
    let help = |name: &str| {
        found
            .iter()
            .find(|f| f.object.name.as_deref() == Some(name))
            .and_then(|f| f.help.clone())
            .unwrap_or_else(|| panic!("no GPU010 on {name}: {}", texts(&found)))
    };
    assert_eq!(help("qwen-32b"), "its GPU memory rules out a MIG slice or a shared GPU (P99 72.0 GB of 85.5 GB per GPU, 82.8 GB with the 15% margin): the lever is replicas: run fewer than its 3, or let an autoscaler (HPA, KEDA) scale them with the load");
    assert!(help("idle").starts_with("request fewer GPUs, a MIG profile"));
}

/// A private model under `models:` in `.gpulint.yaml` is judged like a catalogued one: the
/// note that it is unknown (FIT005) becomes FIT002's verdict on its size.
#[test]
fn a_private_model_of_the_config_is_judged() {
    use crate::support::common::{gpulint, output};
    let tmp = tempfile::tempdir().unwrap();
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bot}\nspec:\n  template:\n    spec:\n      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.1\n        args: [--model, acme/bot-34b]\n        resources: {limits: {nvidia.com/gpu: 1}}\n";
    std::fs::write(tmp.path().join("bot.yaml"), manifest).unwrap();
    let run = |dir: &Path| {
        let (_, stdout, stderr) = output(gpulint().current_dir(dir).args([
            "--select",
            "FIT002,FIT005",
            "--format",
            "json",
            ".",
        ]));
        let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stderr);
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(run(tmp.path()), ["FIT005"]);
    std::fs::write(
        tmp.path().join(".gpulint.yaml"),
        "models:\n  - {id: acme/bot-34b, params_b: 34, layers: 48, kv_heads: 8, head_dim: 128, context: 16384, dtype: bf16, source: https://example.com/config.json}\n",
    )
    .unwrap();
    assert_eq!(run(tmp.path()), ["FIT002"]);
}

/// The demo's FIT findings in JSON carry the arithmetic their messages print (`fit`), and the
/// one measured on its own GPU says what the snapshot showed, in the same figures.
#[test]
fn fit_findings_carry_the_figures_of_their_messages() {
    use crate::support::common::{gpulint, output};
    let (_, stdout, stderr) = output(gpulint().current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "testdata/demo",
        "--select",
        "FIT002,FIT003,FIT004",
        "--format",
        "json",
    ]));
    let json: serde_json::Value = serde_json::from_str(&stdout).expect(&stderr);
    let found = json["findings"].as_array().unwrap();
    assert_eq!(found.len(), 3, "{stdout}");
    for f in found {
        let message = f["message"].as_str().unwrap();
        let fit = &f["fit"];
        for key in ["weights_gib", "usable_gib"] {
            let printed = format!("{:.1} GiB", fit[key].as_f64().unwrap());
            assert!(
                message.contains(&printed),
                "{key} {printed} not in {message}"
            );
        }
        assert!(message.contains(fit["gpu"].as_str().unwrap()), "{message}");
        if let Some(m) = fit.get("measured") {
            let printed = format!(
                "{:.1} GiB a GPU (P99)",
                m["framebuffer_gib"].as_f64().unwrap()
            );
            assert!(message.contains(&printed), "{printed} not in {message}");
        }
    }
    let measured: Vec<&str> = found
        .iter()
        .filter(|f| f["fit"].get("measured").is_some())
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(measured, ["FIT004"], "{stdout}");
}
