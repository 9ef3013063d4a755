//! `gpulint inventory` end to end: pod counts per pod set, GPU totals per namespace, Helm
//! releases with their containers (with a REAL Helm engine from `GPULINT_HELM`), cluster-scoped
//! templates, several paths.

use std::path::Path;

use serde_json::Value;

use crate::support::common::{copy_dir, helm, run, temp_tree};

fn json(dir: &Path, args: &[&str]) -> Value {
    let (code, out, err) = run(dir, args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{err}"))
}

fn workload<'a>(inventory: &'a Value, name: &str) -> &'a Value {
    inventory["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .unwrap_or_else(|| panic!("no workload {name}: {inventory:#}"))
}

fn namespace_gpus(inventory: &Value) -> Vec<(Value, Value, Value)> {
    inventory["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["namespace"].clone(),
                n["gpus"].clone(),
                n["unknown_pod_sets"].clone(),
            )
        })
        .collect()
}

/// Real shapes from the corpus (Kubeflow, JobSet, Ray, LeaderWorkerSet), sized down.
const TRAINING: &str = r#"apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ft, namespace: research}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - {name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}
    Worker:
      replicas: 3
      template:
        spec:
          initContainers:
          - {name: fetch, resources: {limits: {nvidia.com/gpu: 1}}}
          containers:
          - {name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: research}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          spec:
            containers:
            - {name: nemo, resources: {limits: {nvidia.com/gpu: 8}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: sweep, namespace: research}
spec:
  parallelism: 5
  template:
    spec:
      containers:
      - {name: trial, resources: {limits: {nvidia.com/gpu: 1}}}
      initContainers:
      - {name: proxy, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: prep, namespace: data}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, resources: {limits: {cpu: 4}}}]
  workerGroupSpecs:
  - groupName: gpu
    minReplicas: 2
    template:
      spec:
        containers: [{name: ray-worker, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve, namespace: serving}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: 4}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: serving}
spec:
  replicas: ${REPLICAS}
  template:
    spec:
      containers: [{name: api, resources: {limits: {nvidia.com/gpu: 1}}}]
"#;

#[test]
fn gpu_totals_count_pods() {
    let dir = temp_tree(&[("training.yaml", TRAINING)]);
    let inv = json(dir.path(), &["inventory", "--format", "json", "."]);
    // Master 1 × 8 + Worker 3 × 8 (the init container's 1 GPU does not add).
    let ft = workload(&inv, "ft");
    assert_eq!(ft["gpus"], 32, "{ft:#}");
    assert_eq!(ft["pod_sets"][1]["name"], "Worker");
    assert_eq!(ft["pod_sets"][1]["pods"], 3);
    assert_eq!(ft["pod_sets"][1]["gpus_per_pod"]["nvidia.com/gpu"], 8);
    assert_eq!(ft["containers"][1]["pod_set"], 1);
    // 2 replicated jobs × parallelism 4 × 8.
    assert_eq!(workload(&inv, "pretrain")["gpus"], 64);
    // 5 pods × (1 + a native sidecar's 1).
    assert_eq!(workload(&inv, "sweep")["gpus"], 10);
    // The head has no GPU; 2 workers (minReplicas) × 1.
    assert_eq!(workload(&inv, "prep")["gpus"], 2);
    // 2 groups × size 2 × 4.
    assert_eq!(workload(&inv, "serve")["gpus"], 16);
    // A templated replica count is not a count: unknown, and said so.
    let api = workload(&inv, "api");
    assert_eq!(api["gpus"], Value::Null);
    assert_eq!(api["pod_sets"][0]["pods"], Value::Null);
    assert!(
        api["pod_sets"][0]["pods_unknown"]
            .as_str()
            .unwrap()
            .contains("${REPLICAS}"),
        "{api:#}"
    );
    assert_eq!(
        namespace_gpus(&inv),
        [
            ("data".into(), 2.into(), 0.into()),
            ("research".into(), 106.into(), 0.into()),
            ("serving".into(), 16.into(), 1.into()),
        ]
    );
    let (code, table, _) = run(dir.path(), &["inventory", "."]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(table);
}

const RUNTIME: &str = r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - {name: node, resources: {limits: {nvidia.com/gpu: 8}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tune}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}
"#;

#[test]
fn cluster_scoped_templates_are_listed_under_cluster_and_run_no_pods() {
    let dir = temp_tree(&[
        ("runtime.yaml", RUNTIME),
        (".gpulint.yaml", "namespace: ml\n"),
    ]);
    let inv = json(dir.path(), &["inventory", "--format", "json", "."]);
    let runtime = workload(&inv, "torch-distributed");
    assert_eq!(runtime["namespace"], Value::Null);
    assert_eq!(runtime["cluster_scoped"], true);
    assert_eq!(runtime["pod_sets"][0]["template"], true);
    assert_eq!(runtime["gpus"], Value::Null);
    // A namespaced object without a namespace is in the config's namespace, never null.
    let job = workload(&inv, "tune");
    assert_eq!(job["namespace"], "ml");
    assert_eq!(job["gpus"], 8);
    assert_eq!(
        namespace_gpus(&inv),
        [
            (Value::Null, 0.into(), 0.into()),
            ("ml".into(), 8.into(), 0.into())
        ]
    );
    let (code_1, table, _) = run(dir.path(), &["inventory", "."]);
    assert_eq!(code_1, 0);
    let row = table
        .lines()
        .find(|l| l.contains("ClusterTrainingRuntime/torch-distributed"))
        .unwrap();
    assert!(row.contains("(cluster)"), "{table}");
    assert!(!row.contains("default"), "{table}");
    assert!(row.contains("template"), "{table}");
}

/// A `generateName` object (`kubectl create` names it) is listed by its prefix.
#[test]
fn a_generate_name_object_is_listed_by_its_prefix() {
    let dir = temp_tree(&[(
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: pi-}\nspec:\n  template:\n    spec:\n      containers:\n      - name: pi\n        resources: {limits: {nvidia.com/gpu: 1}}\n",
    )]);
    let inv = json(dir.path(), &["inventory", "--format", "json", "."]);
    let w = &inv["workloads"][0];
    assert_eq!(
        (&w["name"], &w["generate_name"]),
        (&Value::Null, &Value::from("pi-"))
    );
    let (code, table, err) = run(dir.path(), &["inventory", "."]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("Job/pi-*"), "{table}");
}

#[test]
fn a_missing_path_is_named() {
    let dir = temp_tree(&[]);
    let (code, _, err) = run(dir.path(), &["inventory", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim(), "error: nope: no such file or directory");
}

/// The objects (kind/name) of the inventory, and those the lint reports findings on.
fn listed(inv: &Value) -> std::collections::BTreeSet<String> {
    inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            format!(
                "{}/{}",
                w["kind"].as_str().unwrap(),
                w["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// An Argo CD Application of the vLLM production-stack chart (corpus), in namespace `llm`.
const APPLICATION: &str = r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: vllm, namespace: argocd}
spec:
  destination: {namespace: llm}
  source:
    path: charts/vllm-stack
    helm:
      releaseName: vllm
      valuesObject:
        servingEngineSpec:
          modelSpec:
          - name: opt125m
            repository: vllm/vllm-openai
            tag: latest
            modelURL: facebook/opt-125m
            replicaCount: 3
            requestCPU: 6
            requestMemory: 16Gi
            requestGPU: 2
"#;

#[test]
fn helm_releases_are_listed_with_their_containers_and_several_paths_list_what_is_linted() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    let dir = temp_tree(&[
        ("apps/vllm.yaml", APPLICATION),
        ("apps/train.yaml", TRAINING),
    ]);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/corpus/helm/vllm-project__production-stack/vllm-stack"),
        &dir.path().join("charts/vllm-stack"),
    );
    let inv = json(
        dir.path(),
        &[
            "inventory",
            "--helm",
            helm,
            "--format",
            "json",
            "apps",
            "charts",
        ],
    );
    let engine = workload(&inv, "vllm-opt125m-deployment-vllm");
    assert_eq!(engine["namespace"], "llm", "{engine:#}");
    assert_eq!(engine["render"], "release vllm of charts/vllm-stack");
    let container = &engine["containers"][0];
    assert_eq!(container["name"], "vllm", "{engine:#}");
    assert_eq!(container["requests"]["nvidia.com/gpu"], "2");
    // Placed at the template that writes the container's resources, not Chart.yaml:1.
    assert!(
        container["resources_file"]
            .as_str()
            .unwrap()
            .starts_with("charts/vllm-stack/templates/"),
        "{container:#}"
    );
    assert_eq!(engine["gpus"], 6);
    // What `gpulint apps charts` lints (every object it reports on) is listed.
    let (code_2, out, err) = run(
        dir.path(),
        &[
            "--helm",
            helm,
            "--format",
            "json",
            "--select",
            "QOS001,QOS003,GPU001",
            "apps",
            "charts",
        ],
    );
    assert_eq!(code_2, 1, "{err}");
    let lint: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let reported: std::collections::BTreeSet<String> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}/{}",
                f["object"]["kind"].as_str().unwrap(),
                f["object"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        reported.contains("Deployment/vllm-opt125m-deployment-vllm"),
        "{out}"
    );
    let inventoried = listed(&inv);
    assert!(
        reported.is_subset(&inventoried),
        "{reported:?} vs {inventoried:?}"
    );
    assert!(inventoried.contains("PyTorchJob/ft"));
}

/// DRA GPUs count per pod and in the totals: NVIDIA's DRA driver quickstart specs
/// (testdata/dra, see its SOURCES.md), v1 and v1beta1 shapes, MIG devices from CEL selectors.
#[test]
fn dra_claims_count_as_gpus_per_pod_and_in_the_totals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let v1 = root.join("testdata/dra/nvidia-k8s-dra-driver-gpu/v1");
    let inventory = json(&v1, &["inventory", "--format", "json", "."]);
    let pod1 = workload(&inventory, "pod1");
    assert_eq!(
        pod1["pod_sets"][0]["gpus_per_pod"],
        serde_json::json!({"gpu.nvidia.com": 1})
    );
    assert_eq!(pod1["gpus"], 1);
    // gpu-test4: a Deployment of 4 pods, each with 4 MIG devices (1g.5gb ×2, 2g.10gb, 3g.20gb).
    // (gpu-test2's Pod is also named `pod`: pick the Deployment.)
    let mig = inventory["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "Deployment" && w["name"] == "pod")
        .unwrap_or_else(|| panic!("no Deployment pod: {inventory:#}"));
    assert_eq!(mig["pod_sets"][0]["pods"], 4);
    assert_eq!(
        mig["pod_sets"][0]["gpus_per_pod"],
        serde_json::json!({"mig.nvidia.com": 4})
    );
    assert_eq!(mig["gpus"], 16);
    // pod1, pod2 (1 each) and gpu-test2's pod whose two containers share one claim (1).
    assert_eq!(
        namespace_gpus(&inventory),
        [
            (
                serde_json::json!("gpu-test1"),
                serde_json::json!(2),
                serde_json::json!(0)
            ),
            (
                serde_json::json!("gpu-test2"),
                serde_json::json!(1),
                serde_json::json!(0)
            ),
            (
                serde_json::json!("gpu-test4"),
                serde_json::json!(16),
                serde_json::json!(0)
            ),
        ]
    );
}

/// `allocationMode: All` (GKE's DRA sample, testdata/corpus) is a count gpulint cannot know:
/// listed under `gpus_unknown`, the total null, the set counted as unknown in its namespace.
#[test]
fn dra_all_devices_is_an_unknown_count_not_zero() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join(
        "testdata/corpus/raw/GoogleCloudPlatform__kubernetes-engine-samples/autoscaling/custom-compute-classes/dra",
    );
    let inventory = json(&dir, &["inventory", "--format", "json", "deployment.yaml"]);
    let d = workload(&inventory, "ccc-gpu");
    assert_eq!(
        d["pod_sets"][0]["gpus_unknown"],
        serde_json::json!(["gpu.nvidia.com"])
    );
    assert_eq!(d["gpus"], Value::Null);
    assert_eq!(
        namespace_gpus(&inventory),
        [(
            serde_json::json!("default"),
            serde_json::json!(0),
            serde_json::json!(1)
        )]
    );
}
