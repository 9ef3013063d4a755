//! The built-in Kustomize renderer against the real thing: `kubectl kustomize` (kustomize v5) on
//! every kustomization root of testdata/corpus/kustomize and on GPU-shaped trees written here.
//! Objects are compared in order as plain data (key order ignored). Without kubectl the tests
//! fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpulint::source::document::plain;
use gpulint::source::kustomize::{
    render, render_external, FsSources, LoadRestrictor, Options, Reorder, KUSTOMIZATION_FILE_NAMES,
};
use gpulint::source::yaml::Stream;

use crate::support::common::{kubectl, write_files};

/// kubectl's output as plain documents, or its error.
fn oracle(dir: &Path, restrictor: LoadRestrictor) -> Result<Vec<serde_json::Value>, String> {
    let mut cmd = Command::new(kubectl());
    cmd.arg("kustomize").arg(dir);
    if restrictor == LoadRestrictor::None {
        cmd.args(["--load-restrictor", "LoadRestrictionsNone"]);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let s = Stream::parse(&String::from_utf8_lossy(&out.stdout));
    assert!(s.error.is_none(), "kubectl output parses");
    Ok(s.documents.iter().map(|d| plain(&d.root)).collect())
}

fn ours(dir: &Path, restrictor: LoadRestrictor) -> Result<Vec<serde_json::Value>, String> {
    let options = Options {
        load_restrictor: restrictor,
        reorder: Reorder::Legacy,
        ..Options::default()
    };
    render(dir, &FsSources::new(), &options)
        .map(|r| r.objects.iter().map(plain).collect())
        .map_err(|e| format!("{e} ({:?})", e.kind))
}

/// Keys sorted, so a failure's two sides diff cleanly.
fn sorted(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<_> = m.keys().collect();
            keys.sort();
            serde_json::Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn differs(dir: &Path, want: &[serde_json::Value], got: &[serde_json::Value]) -> String {
    format!(
        "{}: differs\n--- kubectl\n{}\n--- ours\n{}",
        dir.display(),
        serde_json::to_string_pretty(&sorted(&serde_json::Value::Array(want.to_vec()))).unwrap(),
        serde_json::to_string_pretty(&sorted(&serde_json::Value::Array(got.to_vec()))).unwrap()
    )
}

/// Compares one root; returns a failure description.
fn compare(dir: &Path) -> Option<String> {
    match (
        oracle(dir, LoadRestrictor::RootOnly),
        ours(dir, LoadRestrictor::RootOnly),
    ) {
        (Ok(want), Ok(got)) if want == got => {
            println!("agree: {} ({} objects)", dir.display(), got.len());
            None
        }
        (Ok(want), Ok(got)) => Some(differs(dir, &want, &got)),
        (Ok(want), Err(e)) if e.ends_with("(Unsupported)") => {
            // The built-in renderer refuses what it does not implement; the fallback renders it.
            let r = render_external(dir, &FsSources::new(), &Options::default());
            let got: Vec<_> = r
                .map(|r| r.objects.iter().map(plain).collect())
                .unwrap_or_default();
            println!("unsupported, fallback used: {} ({e})", dir.display());
            (got != want).then(|| differs(dir, &want, &got))
        }
        (Ok(_), Err(e)) => Some(format!("{}: kubectl renders, we fail: {e}", dir.display())),
        (Err(e), Ok(_)) => Some(format!("{}: kubectl fails, we render: {e}", dir.display())),
        (Err(_), Err(ours_err)) => {
            // Both refuse (e.g. the load restrictor); without restrictions both must agree.
            println!("both refuse: {} ({ours_err})", dir.display());
            match (
                oracle(dir, LoadRestrictor::None),
                ours(dir, LoadRestrictor::None),
            ) {
                (Ok(want), Ok(got)) if want == got => {
                    println!("agree without load restrictor: {}", dir.display());
                    None
                }
                (Err(_), Err(_)) => None,
                (Ok(want), Ok(got)) => Some(differs(dir, &want, &got)),
                (want, got) => Some(format!(
                    "{}: without load restrictor: kubectl {:?} ours {:?}",
                    dir.display(),
                    want.map(|w| w.len()),
                    got.map(|g| g.len())
                )),
            }
        }
    }
}

fn roots(dir: &Path, out: &mut Vec<PathBuf>) {
    if KUSTOMIZATION_FILE_NAMES
        .iter()
        .any(|n| dir.join(n).is_file())
    {
        out.push(dir.to_path_buf());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subs: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    for s in subs {
        roots(&s, out);
    }
}

#[test]
fn corpus_renders_like_kubectl_kustomize() {
    kubectl(); // the oracle: fails the test when it is missing
    let mut all = Vec::new();
    roots(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/kustomize"),
        &mut all,
    );
    assert!(all.len() >= 10, "corpus roots: {all:?}");
    let failures: Vec<String> = all.iter().filter_map(|d| compare(d)).collect();
    println!("{} roots, {} disagree", all.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

const PYTORCHJOB: &str = "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example.com/pt:1.0
            resources:
              limits:
                nvidia.com/gpu: 1
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example.com/pt:1.0
            env:
            - name: NCCL_DEBUG
              value: INFO
            resources:
              limits:
                nvidia.com/gpu: 1
                memory: 8Gi
          - name: sidecar
            image: busybox
          tolerations:
          - key: nvidia.com/gpu
            operator: Exists
";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
  labels:
    app: server
spec:
  replicas: 1
  selector:
    matchLabels:
      app: server
  template:
    metadata:
      labels:
        app: server
    spec:
      serviceAccountName: runner
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.5.0
        args: [--model, m]
        ports:
        - containerPort: 8000
        env:
        - name: A
          value: \"1\"
        volumeMounts:
        - name: cache
          mountPath: /cache
        resources:
          limits:
            nvidia.com/gpu: 1
      initContainers:
      - name: fetch
        image: busybox:1.36
      volumes:
      - name: cache
        configMap:
          name: settings
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  a: b
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: runner
---
apiVersion: v1
kind: Service
metadata:
  name: server
spec:
  selector:
    app: server
  ports:
  - port: 80
    targetPort: 8000
---
apiVersion: batch/v1
kind: Job
metadata:
  name: warmup
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: warm
        image: busybox:1.36
";

#[test]
fn written_trees_render_like_kubectl_kustomize() {
    kubectl(); // the oracle: fails the test when it is missing
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_files(
        t,
        &[
            // PyTorchJob + a patch on one worker container's resources (kustomize replaces CRD lists).
            ("pt/job.yaml", PYTORCHJOB),
            ("pt/kustomization.yaml", "resources:\n- job.yaml\npatches:\n- path: patch.yaml\n"),
            (
                "pt/patch.yaml",
                "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: train\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 4\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            resources:\n              limits:\n                nvidia.com/gpu: 8\n",
            ),
            // The same with a targeted JSON patch, which keeps the rest of the list.
            ("pt-json/job.yaml", PYTORCHJOB),
            (
                "pt-json/kustomization.yaml",
                "resources:\n- job.yaml\npatches:\n- target:\n    group: kubeflow.org\n    kind: PyTorchJob\n  patch: |\n    - op: replace\n      path: /spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/resources/limits/nvidia.com~1gpu\n      value: 8\n    - op: add\n      path: /spec/pytorchReplicaSpecs/Worker/template/spec/nodeSelector\n      value: {gpu: a100}\nimages:\n- name: registry.example.com/pt\n  newName: mirror.example.com/pt\n  newTag: \"2.1\"\n",
            ),
            // A base and an overlay with every transformer.
            ("base/resources.yaml", DEPLOYMENT),
            ("base/kustomization.yaml", "resources:\n- resources.yaml\n"),
            (
                "overlay/kustomization.yaml",
                "resources:\n- ../base\nnamePrefix: prod-\nnameSuffix: -v2\nnamespace: serving\ncommonLabels:\n  team: ml\ncommonAnnotations:\n  owner: ml-platform\nlabels:\n- pairs:\n    tier: gpu\n  includeTemplates: true\nimages:\n- name: vllm/vllm-openai\n  newTag: v0.6.3\n- name: busybox\n  digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\nreplicas:\n- name: server\n  count: 3\npatches:\n- path: resources.yaml\n",
            ),
            (
                "overlay/resources.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: server\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        env:\n        - name: B\n          value: \"2\"\n        resources:\n          limits:\n            nvidia.com/gpu: 2\n            memory: 40Gi\n      - name: metrics\n        image: exporter:1\n      tolerations:\n      - key: nvidia.com/gpu\n        operator: Exists\n",
            ),
            // Components.
            (
                "with-components/kustomization.yaml",
                "resources:\n- ../base\ncomponents:\n- ../gpu-component\nnamePrefix: c-\n",
            ),
            (
                "gpu-component/kustomization.yaml",
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- extra.yaml\npatches:\n- target:\n    kind: Deployment\n  patch: |\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: any\n    spec:\n      template:\n        spec:\n          nodeSelector:\n            cloud.google.com/gke-accelerator: nvidia-l4\n",
            ),
            ("gpu-component/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gpu-settings\ndata:\n  x: y\n"),
            // patchesJson6902 and patchesStrategicMerge on resources.
            (
                "json/kustomization.yaml",
                "resources:\n- ../base\npatchesJson6902:\n- target:\n    group: apps\n    version: v1\n    kind: Deployment\n    name: server\n  path: ops.yaml\npatchesStrategicMerge:\n- |-\n  apiVersion: batch/v1\n  kind: Job\n  metadata:\n    name: warmup\n  spec:\n    backoffLimit: 2\n",
            ),
            (
                "json/ops.yaml",
                "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --tensor-parallel-size=2\n- op: remove\n  path: /spec/template/spec/initContainers\n- op: replace\n  path: /spec/replicas\n  value: 2\n- op: copy\n  from: /metadata/labels\n  path: /metadata/annotations\n",
            ),
            // Strategic merge directives and list kinds on a known kind; images with ports and digests.
            (
                "smp/kustomization.yaml",
                "resources:\n- d.yaml\npatches:\n- path: p.yaml\n- target:\n    kind: Job\n  patch: |\n    apiVersion: batch/v1\n    kind: Job\n    metadata:\n      name: any\n    spec:\n      template:\n        spec:\n          $patch: replace\n          containers:\n          - name: only\n            image: localhost:5000/tool:1\nimages:\n- name: localhost:5000/tool\n  newTag: \"2\"\n- name: nvcr.io/nvidia/pytorch\n  newName: mirror/pytorch\ncommonLabels:\n  a: b\nlabels:\n- pairs:\n    c: d\n",
            ),
            (
                "smp/d.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      hostAliases:\n      - ip: 1.2.3.4\n        hostnames: [a]\n      topologySpreadConstraints:\n      - topologyKey: zone\n        maxSkew: 1\n        whenUnsatisfiable: DoNotSchedule\n      readinessGates:\n      - conditionType: x\n      containers:\n      - name: a\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n        ports:\n        - containerPort: 80\n          name: http\n        - containerPort: 81\n        volumeMounts:\n        - name: v\n          mountPath: /v\n        command: [x]\n      - name: b\n        image: nvcr.io/nvidia/pytorch@sha256:1111111111111111111111111111111111111111111111111111111111111111\n      - name: c\n        image: c:1\n        resources:\n          limits: {cpu: 1, memory: 1Gi}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: x\n        image: x\n---\napiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cj\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - name: x\n            image: x\n",
            ),
            (
                "smp/p.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      hostAliases:\n      - ip: 5.6.7.8\n        hostnames: [b]\n      topologySpreadConstraints:\n      - topologyKey: host\n        maxSkew: 2\n        whenUnsatisfiable: DoNotSchedule\n      readinessGates:\n      - conditionType: y\n      containers:\n      - name: b\n        $patch: delete\n      - name: a\n        ports:\n        - containerPort: 82\n        volumeMounts:\n        - mountPath: /w\n          name: w\n        command: [y]\n      - name: c\n        resources:\n          limits:\n            cpu: null\n          $patch: replace\n          requests: {cpu: 2}\n",
            ),
            // A file outside the root: refused by both, same output when allowed.
            ("outside/kustomization.yaml", "resources:\n- ../base/resources.yaml\n"),
        ],
    );
    let mut failures = Vec::new();
    for d in [
        "pt",
        "pt-json",
        "base",
        "overlay",
        "with-components",
        "smp",
        "json",
        "outside",
    ] {
        if let Some(f) = compare(&t.join(d)) {
            failures.push(f);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn external_fallback_maps_origins_by_identity() {
    kubectl(); // the oracle: fails the test when it is missing
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    write_files(
        t,
        &[
            ("base/resources.yaml", DEPLOYMENT),
            ("base/kustomization.yaml", "resources:\n- resources.yaml\n"),
            (
                "o/kustomization.yaml",
                "resources:\n- ../base\nnamePrefix: x-\nreplicas:\n- name: server\n  count: 5\n",
            ),
        ],
    );
    let sources = FsSources::new();
    let r = render_external(&t.join("o"), &sources, &Options::default()).expect("kubectl renders");
    let builtin = render(&t.join("o"), &FsSources::new(), &Options::default()).unwrap();
    assert_eq!(
        r.objects.iter().map(plain).collect::<Vec<_>>(),
        builtin.objects.iter().map(plain).collect::<Vec<_>>()
    );
    let dep = r
        .objects
        .iter()
        .find(|o| o.get_str("kind") == Some("Deployment"))
        .unwrap();
    let files = sources.files();
    let file_of = |n: &gpulint::source::yaml::Node| files[n.span.source.index().unwrap()].0.clone();
    let image = dep
        .get_path(&["spec", "template", "spec", "containers"])
        .and_then(|c| c.as_seq())
        .unwrap()[0]
        .get("image")
        .unwrap();
    assert!(file_of(image).ends_with("base/resources.yaml"));
    let replicas = dep.get_path(&["spec", "replicas"]).unwrap();
    assert!(file_of(replicas).ends_with("o/kustomization.yaml"));
}

/// The id after "already registered id: " in an error, as kustomize prints it.
fn registered_id(error: &str) -> Option<&str> {
    let (_, rest) = error.split_once("may not add resource with an already registered id: ")?;
    rest.split(['\'', '"', ' ']).next()
}

#[test]
fn duplicate_ids_are_refused_like_kubectl_kustomize() {
    kubectl(); // the oracle: fails the test when it is missing
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
    const CM_DEFAULT: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: default\n";
    const CM_PROD: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: prod\n";
    let two_docs = format!("{CM}---\n{CM}");
    write_files(
        t,
        &[
            // Two files.
            ("files/a.yaml", CM),
            ("files/b.yaml", CM),
            ("files/kustomization.yaml", "resources:\n- a.yaml\n- b.yaml\n"),
            // One file holding the object twice.
            ("one-file/a.yaml", &two_docs),
            ("one-file/kustomization.yaml", "resources:\n- a.yaml\n"),
            // One file listed twice.
            ("listed-twice/a.yaml", CM),
            ("listed-twice/kustomization.yaml", "resources:\n- a.yaml\n- a.yaml\n"),
            // A base's object and a file's: an empty namespace is `default`.
            ("base/a.yaml", CM),
            ("base/kustomization.yaml", "resources:\n- a.yaml\n"),
            ("base-and-file/b.yaml", CM_DEFAULT),
            ("base-and-file/kustomization.yaml", "resources:\n- ../base\n- b.yaml\n"),
            // Two bases.
            ("base2/a.yaml", CM),
            ("base2/kustomization.yaml", "resources:\n- a.yaml\n"),
            ("two-bases/kustomization.yaml", "resources:\n- ../base\n- ../base2\n"),
            // A component adding what the resources hold.
            ("comp/c.yaml", CM),
            (
                "comp/kustomization.yaml",
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- c.yaml\n",
            ),
            ("with-comp/a.yaml", CM),
            ("with-comp/kustomization.yaml", "resources:\n- a.yaml\ncomponents:\n- ../comp\n"),
            // Cluster-scoped: the namespace is not part of the id.
            ("ns-a.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  namespace: a\n"),
            ("ns-b.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  namespace: b\n"),
            ("cluster-scoped/kustomization.yaml", "resources:\n- ../ns-a.yaml\n- ../ns-b.yaml\n"),
            // Not duplicates: another namespace, another kind, another group, a prefix.
            ("other-ns/a.yaml", CM),
            ("other-ns/b.yaml", CM_PROD),
            ("other-ns/kustomization.yaml", "resources:\n- a.yaml\n- b.yaml\n"),
            (
                "other-kind/a.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n---\napiVersion: example.com/v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
            ),
            ("other-kind/kustomization.yaml", "resources:\n- a.yaml\n"),
            ("prefixed/kustomization.yaml", "resources:\n- ../base\nnamePrefix: p-\n"),
            ("renamed/a.yaml", CM),
            ("renamed/kustomization.yaml", "resources:\n- a.yaml\n- ../prefixed\n"),
        ],
    );
    let mut failures = Vec::new();
    let mut refused = 0;
    for d in [
        "files",
        "one-file",
        "listed-twice",
        "base-and-file",
        "two-bases",
        "with-comp",
        "cluster-scoped",
        "other-ns",
        "other-kind",
        "renamed",
    ] {
        let dir = t.join(d);
        match (
            oracle(&dir, LoadRestrictor::None),
            ours(&dir, LoadRestrictor::None),
        ) {
            (Err(want), Err(got)) => {
                refused += 1;
                let (w, g) = (registered_id(&want), registered_id(&got));
                if w.is_none() || w != g || !got.ends_with("(DuplicateId)") {
                    failures.push(format!("{d}: kubectl: {want}\nours: {got}"));
                }
            }
            (Ok(want), Ok(got)) if want == got => {}
            (Ok(want), Ok(got)) => failures.push(differs(&dir, &want, &got)),
            (want, got) => failures.push(format!("{d}: kubectl {want:?}\nours {got:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(refused, 7, "every duplicate is refused by both");
}
