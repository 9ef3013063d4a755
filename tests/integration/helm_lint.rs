//! Helm charts in a lint run, end to end through the binary, with a REAL Helm engine
//! (`GPULINT_HELM`, installed by scripts/test; without it the tests fail): releases declared by the config or an Argo CD Application are rendered and linted,
//! findings land on the values leaf that makes the field (else the template), `--fix` edits that
//! leaf, and rendering again shows the intended values.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

use crate::support::common::{copy_dir, counting_helm, git, gpulint, helm, helm_renders, run};

const VALUES: &str = r#"servingEngineSpec:
  runtimeClassName: ""
  modelSpec:
  - name: "opt125m"
    repository: "vllm/vllm-openai"
    tag: "latest"
    modelURL: "facebook/opt-125m"
    replicaCount: 1
    requestCPU: 6
    requestMemory: "16Gi"   # sized at deploy time
    requestGPU: 1
    limitMemory: "16Gi"
    limitCPU: 6
"#;

/// vLLM's serving engine measured at P99 19.6Gi, max 20.5Gi: the recommendation is 23Gi.
const METRICS: &str = r#"{"version": 1, "window": "14d", "collected_at": "2026-12-01T00:00:00Z", "source": "test",
 "containers": [
  {"namespace": "llm", "kind": "Deployment", "name": "vllm-opt125m-deployment-vllm", "container": "vllm", "samples": 20160,
   "memory_bytes": {"p50": 1.0e10, "p99": 2.1e10, "max": 2.2e10},
   "cpu_cores": {"p50": 1.2, "p99": 3.4, "max": 5.0},
   "oom_kills": 0}
 ]}
"#;

/// A repo with the vllm-stack chart, a values file and the config declaring the release.
fn repo(values: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/helm");
    copy_dir(
        &corpus.join("vllm-project__production-stack/vllm-stack"),
        &dir.path().join("charts/vllm-stack"),
    );
    fs::write(dir.path().join("values-prod.yaml"), values).unwrap();
    fs::write(dir.path().join("metrics.json"), METRICS).unwrap();
    fs::write(
        dir.path().join(".gpulint.yaml"),
        "charts:\n- path: charts/vllm-stack\n  release: vllm\n  namespace: llm\n  values: [values-prod.yaml]\n",
    )
    .unwrap();
    dir
}

fn findings(stdout: &str) -> Vec<Json> {
    let report: Json = serde_json::from_str(stdout).expect("JSON output");
    report["findings"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_measured_finding_lands_on_the_values_leaf_and_the_fix_edits_it() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    let repo = repo(VALUES);
    let dir = repo.path();
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            helm,
            "--metrics",
            "metrics.json",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let found = findings(&out);
    let mem: Vec<&Json> = found.iter().filter(|f| f["rule"] == "MEM001").collect();
    assert_eq!(mem.len(), 1, "{out}");
    // The limit comes from `limitMemory` in the user's values file, line 12.
    assert_eq!(mem[0]["file"], "values-prod.yaml");
    assert_eq!(mem[0]["line"], 12);
    assert_eq!(mem[0]["object"]["namespace"], "llm");
    assert!(mem[0]["message"]
        .as_str()
        .unwrap()
        .contains("[release vllm of charts/vllm-stack]"));
    // No chart file is linted as a manifest: templates are not YAML, values are not objects.
    assert!(!err.contains("invalid YAML"), "{err}");
    assert!(found
        .iter()
        .all(|f| !f["file"].as_str().unwrap().ends_with("values.yaml")));

    let (code, _, err) = run(
        dir,
        &["--helm", helm, "--metrics", "metrics.json", "--fix", "."],
    );
    assert_eq!(code, 0, "{err}");
    let fixed = fs::read_to_string(dir.join("values-prod.yaml")).unwrap();
    // Both leaves edited in place, quotes and the comment kept, nothing else touched.
    assert_eq!(
        fixed,
        VALUES
            .replace(
                "requestMemory: \"16Gi\"   # sized",
                "requestMemory: \"23Gi\"   # sized"
            )
            .replace("limitMemory: \"16Gi\"", "limitMemory: \"23Gi\"")
    );
    assert!(err.contains("fixed values-prod.yaml"), "{err}");
    // The chart is untouched.
    let chart_values = fs::read_to_string(dir.join("charts/vllm-stack/values.yaml")).unwrap();
    let corpus_values = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/corpus/helm/vllm-project__production-stack/vllm-stack/values.yaml"),
    )
    .unwrap();
    assert_eq!(chart_values, corpus_values);
    // Rendering again shows the intended values, and a second run has nothing to fix.
    let render = Command::new(helm)
        .current_dir(dir)
        .args([
            "template",
            "vllm",
            "charts/vllm-stack",
            "--namespace",
            "llm",
            "-f",
            "values-prod.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&render.stdout);
    assert!(text.contains("memory: \"23Gi\""), "{text}");
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            helm,
            "--metrics",
            "metrics.json",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(findings(&out).is_empty(), "{out}");
}

#[test]
fn a_field_without_a_values_key_is_reported_not_fixed() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    // No limitMemory key: the chart writes no memory limit, so the fix's limit has no origin.
    let values = VALUES
        .replace("    limitMemory: \"16Gi\"\n", "")
        .replace("    limitCPU: 6\n", "");
    let repo = repo(&values);
    let dir = repo.path();
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            helm,
            "--metrics",
            "metrics.json",
            "--fix",
            "--diff",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "nothing to show: {out}");
    assert!(err.contains("not fixed"), "{err}");
    assert!(err.contains("no values key alone makes"), "{err}");
    assert_eq!(
        fs::read_to_string(dir.join("values-prod.yaml")).unwrap(),
        values
    );
}

#[test]
fn an_argo_cd_application_declares_the_release_and_its_inline_values_are_fixed() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    let repo = repo(VALUES);
    let dir = repo.path();
    fs::remove_file(dir.join(".gpulint.yaml")).unwrap();
    let app = r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: vllm
spec:
  destination:
    namespace: llm
  source:
    repoURL: https://example.com/repo.git
    path: charts/vllm-stack
    helm:
      releaseName: vllm
      valueFiles:
      - ../../values-prod.yaml
      valuesObject:
        servingEngineSpec:
          modelSpec:
          - name: "opt125m"
            repository: "vllm/vllm-openai"
            tag: "latest"
            modelURL: "facebook/opt-125m"
            replicaCount: 1
            requestCPU: 6
            requestMemory: 16Gi
            requestGPU: 1
            limitMemory: 16Gi
            limitCPU: 6
"#;
    fs::write(dir.join("app.yaml"), app).unwrap();
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            helm,
            "--metrics",
            "metrics.json",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let found = findings(&out);
    let mem: Vec<&Json> = found.iter().filter(|f| f["rule"] == "MEM001").collect();
    assert_eq!(mem.len(), 1, "{out}");
    // valuesObject wins over the values file: the finding is in the Application.
    assert_eq!(mem[0]["file"], "app.yaml");
    assert_eq!(mem[0]["line"], 26);
    let (code, _, err) = run(
        dir,
        &["--helm", helm, "--metrics", "metrics.json", "--fix", "."],
    );
    assert_eq!(code, 0, "{err}");
    let fixed = fs::read_to_string(dir.join("app.yaml")).unwrap();
    assert_eq!(
        fixed,
        app.replace("requestMemory: 16Gi", "requestMemory: 23Gi")
            .replace("limitMemory: 16Gi", "limitMemory: 23Gi")
    );
    assert_eq!(
        fs::read_to_string(dir.join("values-prod.yaml")).unwrap(),
        VALUES
    );
}

#[test]
fn without_helm_charts_are_skipped_with_a_note_and_not_linted_as_files() {
    let repo = repo(VALUES);
    let dir = repo.path();
    let (code, out, err) = run(
        dir,
        &["--helm", "/nonexistent/helm", "--format", "json", "."],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(
        err.contains("1 Helm chart(s) not linted: no helm binary"),
        "{err}"
    );
    assert!(findings(&out).is_empty(), "{out}");
}

#[test]
fn pre_rendered_output_names_each_objects_template() {
    let rendered =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/helm-rendered/vllm-stack.yaml");
    let dir = tempfile::tempdir().unwrap();
    let out = gpulint()
        .current_dir(dir.path())
        .args(["--format", "json", "-"])
        .stdin(fs::File::open(rendered).unwrap())
        .output()
        .unwrap();
    let found = findings(&String::from_utf8_lossy(&out.stdout));
    assert!(!found.is_empty());
    for f in &found {
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("[template vllm-stack/templates/deployment-vllm-multi.yaml]"),
            "{message}"
        );
    }
}

#[test]
fn changed_since_keeps_a_release_when_its_values_or_chart_changed() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    let repo = repo(VALUES);
    let dir = repo.path();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let args = [
        "--helm",
        helm,
        "--metrics",
        "metrics.json",
        "--format",
        "json",
        "--changed-since",
        "HEAD",
        ".",
    ];
    // Nothing changed: the release is out of scope.
    let (code, out, err) = run(dir, &args);
    assert_eq!(code, 0, "{err}");
    assert!(findings(&out).is_empty(), "{out}");
    // A values file the release reads changed: its findings are back.
    fs::write(
        dir.join("values-prod.yaml"),
        VALUES.replace("replicaCount: 1", "replicaCount: 2"),
    )
    .unwrap();
    let (code, out, err) = run(dir, &args);
    assert_eq!(code, 1, "{err}");
    assert!(
        findings(&out).iter().any(|f| f["rule"] == "MEM001"),
        "{out}"
    );
    // Only the objects the change changed: the router's findings stay out.
    let names: std::collections::BTreeSet<String> = findings(&out)
        .iter()
        .map(|f| f["object"]["name"].as_str().unwrap_or_default().to_string())
        .collect();
    let everything: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--changed-since" && *a != "HEAD")
        .collect();
    let (code_1, all, _) = run(dir, &everything);
    assert_eq!(code_1, 1);
    let all_names: std::collections::BTreeSet<String> = findings(&all)
        .iter()
        .map(|f| f["object"]["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, all_names, "the changed engine keeps its findings");
    // A change that renders differently only in the router: the engine's findings stay out.
    fs::write(
        dir.join("values-prod.yaml"),
        format!("{VALUES}routerSpec:\n  replicaCount: 3\n"),
    )
    .unwrap();
    let (code, out, err) = run(dir, &args);
    assert!(findings(&out).is_empty(), "{out}");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 object(s) and 1 render(s) changed"), "{err}");
    // A template helper changed without changing what renders: no object changed.
    git(dir, &["checkout", "-q", "--", "values-prod.yaml"]);
    let helpers = dir.join("charts/vllm-stack/templates/_helpers.tpl");
    let mut text = fs::read_to_string(&helpers).unwrap();
    text.push_str("\n{{/* reviewed */}}\n");
    fs::write(&helpers, text).unwrap();
    let (code, out, err) = run(dir, &args);
    assert_eq!(code, 0, "{err}");
    assert!(findings(&out).is_empty(), "{out}");
    assert!(err.contains("0 object(s) and 1 render(s) changed"), "{err}");
}

#[test]
fn a_flux_helmrelease_declares_the_release_and_its_values_are_fixed() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    let repo = repo(VALUES);
    let dir = repo.path();
    fs::remove_file(dir.join(".gpulint.yaml")).unwrap();
    fs::remove_file(dir.join("values-prod.yaml")).unwrap();
    let release = r#"apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: vllm
  namespace: llm
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/vllm-stack
      sourceRef:
        kind: GitRepository
        name: platform
  values:
    servingEngineSpec:
      modelSpec:
      - name: opt125m
        repository: vllm/vllm-openai
        tag: latest
        modelURL: facebook/opt-125m
        replicaCount: 1
        requestCPU: 6
        requestMemory: '16Gi'
        requestGPU: 1
        limitMemory: '16Gi'
        limitCPU: 6
"#;
    fs::write(dir.join("helmrelease.yaml"), release).unwrap();
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            helm,
            "--metrics",
            "metrics.json",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let found = findings(&out);
    let mem: Vec<&Json> = found.iter().filter(|f| f["rule"] == "MEM001").collect();
    assert_eq!(mem.len(), 1, "{out}");
    assert_eq!(mem[0]["file"], "helmrelease.yaml");
    assert_eq!(mem[0]["line"], 25);
    let (code, _, err) = run(
        dir,
        &["--helm", helm, "--metrics", "metrics.json", "--fix", "."],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        fs::read_to_string(dir.join("helmrelease.yaml")).unwrap(),
        release
            .replace("requestMemory: '16Gi'", "requestMemory: '23Gi'")
            .replace("limitMemory: '16Gi'", "limitMemory: '23Gi'")
    );
}

/// Findings in one release share their renders: the release's own render, then one render with
/// every numeric values leaf a distinct sentinel (a control render only when the chart renders
/// something that changes by itself, see the next test), and one render of the edited values
/// that verifies the fixes. The fixes' leaves need no permuted render although each model's
/// two leaves hold the same value: the verification would fail for a leaf that does not give
/// the field its new value alone. Six models, each measured under its memory, make six
/// values-driven findings and six fixes.
#[test]
fn findings_in_one_release_share_their_renders() {
    let helm = helm();
    let models: String = (0..6)
        .map(|i| {
            format!(
                "  - name: \"m{i}\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"v0.{i}\"\n    modelURL: \"org/m{i}\"\n    replicaCount: 1\n    requestCPU: {cpu}\n    limitCPU: {cpu}\n    requestMemory: \"{mem}Gi\"\n    limitMemory: \"{mem}Gi\"\n    requestGPU: 1\n",
                cpu = 2 + i,
                mem = 10 + i
            )
        })
        .collect();
    let values = format!("servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n{models}");
    let repo = repo(&values);
    let dir = repo.path();
    // Each model measured well under its memory: a MEM002 fix per model on its two leaves.
    let containers: Vec<String> = (0..6)
        .map(|i| {
            format!(
                r#"{{"namespace": "llm", "kind": "Deployment", "name": "vllm-m{i}-deployment-vllm", "container": "vllm", "samples": 20160, "memory_bytes": {{"p50": 1.0e9, "p99": 2.0e9, "max": 2.1e9}}}}"#
            )
        })
        .collect();
    fs::write(
        dir.join("metrics.json"),
        format!(
            r#"{{"version": 1, "window": "14d", "source": "test", "containers": [{}]}}"#,
            containers.join(",\n")
        ),
    )
    .unwrap();
    let (wrapper, count) = counting_helm(dir, helm.to_str().unwrap());
    let calls = || helm_renders(&count);
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            wrapper.to_str().unwrap(),
            "--metrics",
            "metrics.json",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let on_values = findings(&out)
        .iter()
        .filter(|f| f["file"] == "values-prod.yaml")
        .count();
    assert!(
        on_values >= 6,
        "each model's memory finding lands on its values leaves: {out}"
    );
    let lint = calls();
    eprintln!("lint: {on_values} findings on values leaves, {lint} renders");
    // A lint plans the fixes too ("fixable" is what `--fix` writes): the plan's verification
    // of the edited values is one render more.
    // A fix is verified by rendering its edited values, so the leaves it edits need no
    // permuted render (both leaves of a model hold the same value).
    assert_eq!(
        lint, 3,
        "the release render + the combined render + the fix plan's verification"
    );

    // --fix --diff: each round renders the release, asks where its findings come from, and
    // verifies the edited values by rendering them.
    let (code, diff, err) = run(
        dir,
        &[
            "--helm",
            wrapper.to_str().unwrap(),
            "--metrics",
            "metrics.json",
            "--fix",
            "--diff",
            ".",
        ],
    );
    assert!(code == 0 || code == 1, "{err}");
    let edited = |key: &str| {
        diff.lines()
            .filter(|l| l.starts_with(&format!("+    {key}: \"")))
            .count()
    };
    assert_eq!(
        (edited("requestMemory"), edited("limitMemory")),
        (6, 6),
        "every model's two leaves: {diff}\n{err}"
    );
    let fix = calls() - lint;
    eprintln!("--fix --diff: {fix} renders");
    assert_eq!(
        fix, 3,
        "the release render, the combined render, and the verification of the edited values"
    );
}

/// The upstream chart with the upstream values of its Ray tutorial (pipeline parallel over a
/// RayCluster): templates that read one values leaf several times (`shmSize` in both groups),
/// a leaf written into a script (`--port "8000"`), a leaf plus one (`EXPECTED_NODES` is
/// `replicaCount + 1`), and several leaves holding the same value (`1`, `20Gi`). Measured far
/// under its CPU and memory, each group gets a CPU001 fix on its `requestCPU` and findings
/// located on its values leaves. The lint renders the release, the combined render, the
/// permuted one (which also confirms `replicaCount + 1`) and verifies the fix plan; before,
/// the script and the `+ 1` cost a control render and a render per question (9 in all).
#[test]
fn a_real_ray_chart_costs_four_renders_to_lint_and_to_fix() {
    let helm = helm();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/helm");
    let values = fs::read_to_string(corpus.join(
        "vllm-project__production-stack/_values/tutorials/assets/values-15-a-minimal-pipeline-parallel-example-raycluster.yaml",
    ))
    .unwrap();
    let repo = repo(&values);
    let dir = repo.path();
    let containers: Vec<String> = ["vllm-ray-head", "vllm-ray-worker"]
        .iter()
        .map(|c| {
            format!(
                r#"{{"namespace": "llm", "kind": "RayCluster", "name": "vllm-distilgpt2-raycluster-raycluster", "container": "{c}", "samples": 20160, "memory_bytes": {{"p50": 1.0e9, "p99": 2.0e9, "max": 2.1e9}}, "cpu_cores": {{"p50": 0.1, "p99": 0.3, "max": 0.4}}}}"#
            )
        })
        .collect();
    fs::write(
        dir.join("metrics.json"),
        format!(
            r#"{{"version": 1, "window": "14d", "source": "test", "containers": [{}]}}"#,
            containers.join(",\n")
        ),
    )
    .unwrap();
    let (wrapper, count) = counting_helm(dir, helm.to_str().unwrap());
    let calls = || helm_renders(&count);
    let args = |extra: &[&'static str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "--helm",
            wrapper.to_str().unwrap(),
            "--metrics",
            "metrics.json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a.push(".".into());
        a
    };
    let lint_args = args(&["--format", "json"]);
    let lint_args: Vec<&str> = lint_args.iter().map(String::as_str).collect();
    let (code, out, err) = run(dir, &lint_args);
    assert_eq!(code, 1, "{err}");
    let found = findings(&out);
    // Every finding of both groups on its values leaf: requestCPU (line 11, 24: CPU001 and
    // QOS002) and requestMemory (line 12, 25: MEM002 and QOS001, which alone speaks for a GPU
    // container's missing memory limit) of the model and of its head node.
    let on = |line: u64| {
        found
            .iter()
            .filter(|f| f["file"] == "values-prod.yaml" && f["line"] == line)
            .count()
    };
    assert_eq!((on(11), on(12), on(24), on(25)), (2, 2, 2, 2), "{out}");
    let cpu001: Vec<&Json> = found.iter().filter(|f| f["rule"] == "CPU001").collect();
    assert_eq!(cpu001.len(), 2, "{out}");
    assert!(cpu001.iter().all(|f| f["fixable"] == true), "{out}");
    let lint = calls();
    assert_eq!(
        lint, 4,
        "the release render, the combined and the permuted render, the fix plan's verification"
    );

    let fix_args = args(&["--fix", "--unsafe-fixes", "--diff"]);
    let fix_args: Vec<&str> = fix_args.iter().map(String::as_str).collect();
    let (code, diff, err) = run(dir, &fix_args);
    assert!(code == 0 || code == 1, "{err}");
    assert_eq!(
        diff.lines()
            .filter(|l| l.trim_start() == "+    requestCPU: 350m"
                || l.trim_start() == "+        requestCPU: 350m")
            .count(),
        2,
        "{diff}\n{err}"
    );
    assert_eq!(calls() - lint, 4, "the same four renders");
}

/// A chart that renders the time and a random id (`now`, `uuidv4`) in an object the fix does
/// not touch: its combined render is not clean, so a control render tells that noise from the
/// leaf's effects, and the verification of the edited values renders a second plain render
/// too. The fix is still found and verified.
#[test]
fn a_chart_that_renders_the_time_costs_a_control_render_and_is_still_fixed() {
    let helm = helm();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    let files = [
        ("charts/app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.1.0\n"),
        ("charts/app/values.yaml", "memory: 8Gi\n"),
        (
            "charts/app/templates/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n        resources:\n          requests: {cpu: \"1\", memory: {{ .Values.memory }}, nvidia.com/gpu: 1}\n          limits: {memory: {{ .Values.memory }}, nvidia.com/gpu: 1}\n",
        ),
        (
            "charts/app/templates/stamp.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stamp\ndata:\n  at: {{ now | quote }}\n  id: {{ uuidv4 | quote }}\n",
        ),
        ("values-prod.yaml", "memory: 16Gi\n"),
        (
            ".gpulint.yaml",
            "charts:\n- path: charts/app\n  release: app\n  namespace: ml\n  values: [values-prod.yaml]\n",
        ),
        (
            "metrics.json",
            r#"{"version": 1, "window": "14d", "source": "test", "containers": [{"namespace": "ml", "kind": "Deployment", "name": "app", "container": "app", "samples": 20160, "memory_bytes": {"p50": 1.0e9, "p99": 2.0e9, "max": 2.1e9}}]}"#,
        ),
    ];
    crate::support::common::write_files(dir, &files);
    let (wrapper, count) = counting_helm(dir, helm.to_str().unwrap());
    let args = [
        "--helm",
        wrapper.to_str().unwrap(),
        "--metrics",
        "metrics.json",
    ];
    let (code, out, err) = run(dir, &[&args[..], &["--format", "json", "."]].concat());
    assert_eq!(code, 1, "{err}");
    assert!(
        findings(&out)
            .iter()
            .any(|f| f["file"] == "values-prod.yaml"),
        "the memory finding lands on the values leaf: {out}"
    );
    let lint = helm_renders(&count);
    // One candidate leaf (values-prod.yaml's): no permuted render.
    assert_eq!(
        lint, 5,
        "the release, the combined and the control render, and the fix plan's two (the edited \
         values, a second plain render for the stamp)"
    );
    let (code, diff, err) = run(dir, &[&args[..], &["--fix", "--diff", "."]].concat());
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        diff.contains("-memory: 16Gi") && diff.contains("+memory: "),
        "{diff}\n{err}"
    );
    assert_eq!(
        helm_renders(&count) - lint,
        5,
        "the lint's three, the edited values, and a second plain render for the stamp"
    );
}

/// A pull request that cuts the GPU quota of a ClusterQueue a Helm chart renders (a values
/// file of the platform's Kueue chart) strands a Job that is not in the chart: `--changed-since`
/// reports its KUE005 as a whole run does (issue 23: cross-object effects of rendered queues).
#[test]
fn changed_since_reports_what_a_chart_rendered_queue_change_strands() {
    let helm = helm();
    let helm = helm.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crate::support::common::write_files(
        dir,
        &[
            ("platform/kueue/Chart.yaml", "apiVersion: v2\nname: queues\nversion: 0.1.0\n"),
            ("platform/kueue/values.yaml", "gpuQuota: 16\n"),
            (
                "platform/kueue/templates/queues.yaml",
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: h100\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: training\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - name: nvidia.com/gpu\n        nominalQuota: {{ .Values.gpuQuota }}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: team-a\n  namespace: training\nspec:\n  clusterQueue: training\n",
            ),
            (
                "apps/job.yaml",
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: finetune\n  namespace: training\n  labels:\n    kueue.x-k8s.io/queue-name: team-a\nspec:\n  parallelism: 1\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: trainer\n        image: nvcr.io/nvidia/pytorch:25.01-py3\n        resources:\n          limits: {nvidia.com/gpu: 8, cpu: \"32\", memory: 256Gi}\n",
            ),
        ],
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let kue005 = |args: &[&str]| -> usize {
        let (code, out, err) = run(dir, args);
        assert!(code == 0 || code == 1, "{err}");
        findings(&out)
            .iter()
            .filter(|f| f["rule"] == "KUE005")
            .count()
    };
    let scoped = [
        "--helm",
        helm,
        "--select",
        "KUE005",
        "--format",
        "json",
        "--changed-since",
        "HEAD",
        ".",
    ];
    let whole = [
        "--helm", helm, "--select", "KUE005", "--format", "json", ".",
    ];
    assert_eq!(kue005(&whole), 0);
    // The pull request: the chart's default quota goes from 16 to 4 GPUs.
    fs::write(dir.join("platform/kueue/values.yaml"), "gpuQuota: 4\n").unwrap();
    assert_eq!(kue005(&whole), 1);
    assert_eq!(
        kue005(&scoped),
        1,
        "the stranded Job is the pull request's doing"
    );
}
