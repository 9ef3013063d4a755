//! Helm as Argo CD and a chart repository's CI apply it, end to end through the binary with a
//! REAL Helm engine (`GPULINT_HELM`, installed by scripts/test; without it the tests fail), on
//! charts copied from testdata/corpus:
//!
//! * a chart folder given as the path is rendered as a chart (lint, inventory, render);
//! * Argo CD `helm.parameters` (`forceString` too) and `fileParameters` are applied with
//!   Argo CD's precedence; a finding on a parameter's value lands on it, and `--fix` edits it;
//! * a missing or out-of-repository values file or file parameter is an error at its line;
//! * a finding with no values leaf lands on the template line writing the field.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::support::common::{copy_dir, counting_helm, git, helm, helm_renders, run};

fn corpus_chart(owner_repo_chart: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/corpus/helm")
        .join(owner_repo_chart)
}

/// A git repository (the boundary of what gpulint reads) holding `charts` copied from the
/// corpus under `charts/<name>`, and `files`.
fn repo(charts: &[(&str, &str)], files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "."]);
    for (corpus, name) in charts {
        copy_dir(&corpus_chart(corpus), &dir.path().join("charts").join(name));
    }
    for (path, text) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    dir
}

fn report(stdout: &str) -> Json {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("JSON output ({e}): {stdout}"))
}

fn findings(stdout: &str) -> Vec<Json> {
    report(stdout)["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// (rule, file, line) of every finding.
fn places(stdout: &str) -> Vec<(String, String, u64)> {
    findings(stdout)
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_string(),
                f["file"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

fn line_of(text: &str, needle: &str) -> u64 {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {text}"));
    text[..at].matches('\n').count() as u64 + 1
}

const A4: &str = "AI-Hypercomputer__gpu-recipes/a4_jobset_workload";
const OLLAMA: &str = "otwld__ollama-helm/ollama";
const VLLM: &str = "vllm-project__production-stack/vllm-stack";

#[test]
fn a_chart_folder_given_as_the_path_is_rendered_not_linted_as_templates() {
    let helm = helm().to_string_lossy().into_owned();
    let repo = repo(&[(A4, "a4")], &[]);
    let dir = repo.path();
    // The chart folder, a folder inside it, and a folder holding charts: the same release.
    let mut seen = Vec::new();
    for path in ["charts/a4", "charts/a4/templates", "charts", "."] {
        let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", path]);
        assert_eq!(code, 1, "{path}: {err}{out}");
        let report = report(&out);
        assert!(
            report["errors"].as_array().is_none_or(Vec::is_empty),
            "{path}: {out}"
        );
        let found = findings(&out);
        assert!(!found.is_empty(), "{path}: {out}");
        for f in &found {
            // Never a template linted as a manifest (`{{ .Values.x }}` is not a GPU count).
            assert_ne!(f["rule"], "GPU003", "{path}: {f}");
            assert_ne!(f["rule"], "GPU005", "{path}: {f}");
            let message = f["message"].as_str().unwrap();
            assert!(
                message.ends_with("[release a4 of charts/a4]"),
                "{path}: {f}"
            );
        }
        seen.push(places(&out));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");

    // Inventory and render take the chart folder too.
    let (code, out, err) = run(
        dir,
        &[
            "inventory",
            "--helm",
            &helm,
            "--format",
            "json",
            "charts/a4",
        ],
    );
    assert_eq!(code, 0, "{err}{out}");
    assert!(!err.contains("error"), "{err}");
    let (code, out, err) = run(dir, &["render", "--helm", &helm, "charts/a4"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("# Source: a4_jobset_workload/templates/workload-job.yaml"),
        "{out}"
    );
    assert!(out.contains("kind: JobSet"), "{out}");
    assert!(!out.contains("{{"), "{out}");
}

const OLLAMA_APP: &str = "\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ollama
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://example.com/gitops.git
    path: charts/ollama
    helm:
      valueFiles:
      - ../../values/ollama-gpu.yaml
      values: |
        ollama:
          gpu:
            number: 4
      valuesObject:
        ollama:
          gpu:
            number: 2
      parameters:
      - name: ollama.gpu.number
        value: \"0.5\"
      - name: resources.limits.memory
        value: 1Gi
      - name: resources.requests.memory
        value: \"1Gi\"
      - name: resources.requests.cpu
        value: \"2\"
      - name: resources.limits.cpu
        value: \"2\"
  destination:
    namespace: llm
";

const OLLAMA_GPU_VALUES: &str = "ollama:\n  gpu:\n    enabled: true\n    number: 3\n";

/// ollama measured at P99 4.2Gi, max 4.7Gi: the recommendation is 5Gi.
const OLLAMA_METRICS: &str = r#"{"version": 1, "window": "14d", "collected_at": "2026-12-01T00:00:00Z", "source": "test",
 "containers": [
  {"namespace": "llm", "kind": "Deployment", "name": "ollama", "container": "ollama", "samples": 20160,
   "memory_bytes": {"p50": 3.0e9, "p99": 4.5e9, "max": 5.0e9},
   "cpu_cores": {"p50": 1.2, "p99": 1.8, "max": 1.9},
   "oom_kills": 0}
 ]}
"#;

#[test]
fn argo_cd_parameters_win_and_findings_on_them_land_on_their_value() {
    let helm = helm().to_string_lossy().into_owned();
    let repo = repo(
        &[(OLLAMA, "ollama")],
        &[
            ("apps/ollama.yaml", OLLAMA_APP),
            ("values/ollama-gpu.yaml", OLLAMA_GPU_VALUES),
            ("metrics.json", OLLAMA_METRICS),
        ],
    );
    let dir = repo.path();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 1, "{err}{out}");
    // The parameter beats valuesObject (2), values (4, ignored next to valuesObject) and the
    // values file (3): `--set` types 0.5 as the string "0.5", which is not a GPU count.
    let gpu003: Vec<Json> = findings(&out)
        .into_iter()
        .filter(|f| f["rule"] == "GPU003")
        .collect();
    assert_eq!(gpu003.len(), 1, "{out}");
    assert_eq!(gpu003[0]["file"], "apps/ollama.yaml");
    assert_eq!(gpu003[0]["line"], line_of(OLLAMA_APP, "value: \"0.5\""));
    assert_eq!(gpu003[0]["column"], 16);
    assert_eq!(gpu003[0]["object"]["namespace"], "llm");

    // A measured finding on memory set by two parameters: reported on the limit's value, and
    // --fix edits both values, keeping each one's quoting.
    fs::write(
        dir.join("apps/ollama.yaml"),
        OLLAMA_APP.replace("value: \"0.5\"", "value: \"1\""),
    )
    .unwrap();
    let app = fs::read_to_string(dir.join("apps/ollama.yaml")).unwrap();
    let (code, out, err) = run(
        dir,
        &[
            "--helm",
            &helm,
            "--metrics",
            "metrics.json",
            "--format",
            "json",
            ".",
        ],
    );
    assert_eq!(code, 1, "{err}{out}");
    assert_eq!(
        places(&out),
        [(
            "MEM001".to_string(),
            "apps/ollama.yaml".to_string(),
            line_of(&app, "value: 1Gi")
        )],
        "{out}"
    );
    let (code, _, err) = run(
        dir,
        &["--helm", &helm, "--metrics", "metrics.json", "--fix", "."],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("fixed apps/ollama.yaml"), "{err}");
    let fixed = fs::read_to_string(dir.join("apps/ollama.yaml")).unwrap();
    assert_eq!(
        fixed,
        app.replace("value: 1Gi", "value: 5Gi")
            .replace("value: \"1Gi\"", "value: \"5Gi\"")
    );
    // The chart and the values file are untouched.
    assert_eq!(
        fs::read_to_string(dir.join("values/ollama-gpu.yaml")).unwrap(),
        OLLAMA_GPU_VALUES
    );
}

#[test]
fn force_string_and_file_parameters_are_applied_inside_the_repository_only() {
    let helm = helm().to_string_lossy().into_owned();
    // `forceString` keeps "2" a string (still a valid count); a file parameter (applied after
    // every parameter, as `--set-file`) sets the count from a file in the repository.
    let app = OLLAMA_APP.replace(
        "      parameters:\n      - name: ollama.gpu.number\n        value: \"0.5\"\n",
        "      parameters:\n      - name: ollama.gpu.number\n        value: \"2\"\n        forceString: true\n      fileParameters:\n      - name: ollama.gpu.number\n        path: ../../values/gpu-count.txt\n",
    );
    assert_ne!(app, OLLAMA_APP);
    let repo = repo(
        &[(OLLAMA, "ollama")],
        &[
            ("apps/ollama.yaml", app.as_str()),
            ("values/ollama-gpu.yaml", OLLAMA_GPU_VALUES),
            ("values/gpu-count.txt", "0.25"),
        ],
    );
    let dir = repo.path();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 1, "{err}{out}");
    let gpu003: Vec<Json> = findings(&out)
        .into_iter()
        .filter(|f| f["rule"] == "GPU003")
        .collect();
    assert_eq!(gpu003.len(), 1, "{out}");
    assert!(
        gpu003[0]["message"].as_str().unwrap().contains("`0.25`"),
        "{out}"
    );
    // A file's text is no values leaf: the finding is on the template line writing the field.
    assert_eq!(gpu003[0]["file"], "charts/ollama/templates/deployment.yaml");

    // A file parameter outside the repository is refused at its line; the rest is linted.
    let outside = tempfile::NamedTempFile::new().unwrap();
    fs::write(outside.path(), "1").unwrap();
    let escaping = app.replace(
        "../../values/gpu-count.txt",
        &format!("../../../../../../../../..{}", outside.path().display()),
    );
    fs::write(dir.join("apps/ollama.yaml"), &escaping).unwrap();
    fs::write(
        dir.join("apps/plain.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: llm}\nspec:\n  containers:\n  - name: c\n    image: x\n    resources:\n      requests: {nvidia.com/gpu: 1}\n",
    )
    .unwrap();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 2, "{err}{out}");
    let errors = report(&out)["errors"].clone();
    let errors = errors.as_array().unwrap();
    assert_eq!(errors.len(), 1, "{out}");
    assert_eq!(errors[0]["file"], "apps/ollama.yaml");
    assert_eq!(errors[0]["line"], line_of(&escaping, "path: ../../../"));
    assert_eq!(errors[0]["column"], 15);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("outside the repository"), "{message}");
    // The release is not rendered (nor its chart with defaults); the plain Pod still is linted.
    let places = places(&out);
    assert!(
        places.contains(&("GPU001".to_string(), "apps/plain.yaml".to_string(), 9)),
        "{out}"
    );
    assert!(
        places.iter().all(|(_, f, _)| f == "apps/plain.yaml"),
        "{out}"
    );
}

#[test]
fn a_missing_values_file_is_an_error_at_its_line_and_the_run_goes_on() {
    let helm = helm().to_string_lossy().into_owned();
    let app = OLLAMA_APP.replace(
        "      - ../../values/ollama-gpu.yaml\n",
        "      - values-prod.yaml\n      - ../../values/ollama-gpu.yaml\n",
    );
    assert_ne!(app, OLLAMA_APP);
    // A second Application of the same chart, whose values exist, is still rendered.
    let other = OLLAMA_APP
        .replace(
            "name: ollama\n  namespace: argocd",
            "name: ollama-b\n  namespace: argocd",
        )
        .replace("namespace: llm", "namespace: llm-b");
    let repo = repo(
        &[(OLLAMA, "ollama")],
        &[
            ("apps/ollama.yaml", app.as_str()),
            ("apps/ollama-b.yaml", other.as_str()),
            ("values/ollama-gpu.yaml", OLLAMA_GPU_VALUES),
        ],
    );
    let dir = repo.path();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 2, "{err}{out}");
    assert!(
        !out.contains("Traceback") && !err.contains("Traceback"),
        "{err}"
    );
    let errors = report(&out)["errors"].clone();
    let errors = errors.as_array().unwrap();
    assert_eq!(errors.len(), 1, "{out}");
    assert_eq!(errors[0]["file"], "apps/ollama.yaml");
    assert_eq!(errors[0]["line"], line_of(&app, "- values-prod.yaml"));
    assert_eq!(errors[0]["column"], 9);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("values file values-prod.yaml of release ollama does not exist"),
        "{message}"
    );
    // The other release is linted, in its own namespace.
    let found = findings(&out);
    assert!(
        found.iter().any(|f| f["rule"] == "GPU003"
            && f["file"] == "apps/ollama-b.yaml"
            && f["object"]["namespace"] == "llm-b"),
        "{out}"
    );
    assert!(
        found.iter().all(|f| f["object"]["namespace"] != "llm"),
        "{out}"
    );

    // With ignoreMissingValueFiles, Argo CD drops the file: so does gpulint.
    fs::write(
        dir.join("apps/ollama.yaml"),
        app.replace(
            "      valueFiles:\n",
            "      ignoreMissingValueFiles: true\n      valueFiles:\n",
        ),
    )
    .unwrap();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 1, "{err}{out}");
    assert!(
        findings(&out)
            .iter()
            .any(|f| f["rule"] == "GPU003" && f["object"]["namespace"] == "llm"),
        "{out}"
    );
}

#[test]
fn a_finding_without_a_values_leaf_lands_on_the_template_line_writing_the_field() {
    let helm = helm().to_string_lossy().into_owned();
    // vllm-stack's engine with a memory request and no memory limit: "no memory limit" has no
    // values leaf, so the finding goes to the template line writing the engine container's
    // `resources:`, not the first `resources:` of the file (the init container's), and never
    // to Chart.yaml:1:1.
    let app = "\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: vllm
spec:
  source:
    path: charts/vllm-stack
    helm:
      valuesObject:
        servingEngineSpec:
          runtimeClassName: \"\"
          modelSpec:
          - name: opt125m
            repository: vllm/vllm-openai
            tag: latest
            modelURL: facebook/opt-125m
            replicaCount: 1
            requestCPU: 6
            requestMemory: 16Gi
            requestGPU: 1
  destination:
    namespace: llm
";
    let repo = repo(&[(VLLM, "vllm-stack")], &[("apps/vllm.yaml", app)]);
    let dir = repo.path();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 1, "{err}{out}");
    let template =
        fs::read_to_string(corpus_chart(VLLM).join("templates/deployment-vllm-multi.yaml"))
            .unwrap();
    let engine_resources = line_of(&template, "resources: {{ toYaml $modelSpec.resources");
    let first_resources = line_of(&template, "resources:");
    assert!(first_resources < engine_resources);
    let qos001: Vec<(String, String, u64)> = places(&out)
        .into_iter()
        .filter(|(rule, _, _)| rule == "QOS001")
        .collect();
    assert_eq!(
        qos001,
        [(
            "QOS001".to_string(),
            "charts/vllm-stack/templates/deployment-vllm-multi.yaml".to_string(),
            engine_resources
        )],
        "{out}"
    );
    // The requests that do come from values land on them.
    let qos002: Vec<(String, String, u64)> = places(&out)
        .into_iter()
        .filter(|(rule, _, _)| rule == "QOS002")
        .collect();
    assert_eq!(
        qos002,
        [
            (
                "QOS002".to_string(),
                "apps/vllm.yaml".to_string(),
                line_of(app, "requestCPU")
            ),
            (
                "QOS002".to_string(),
                "apps/vllm.yaml".to_string(),
                line_of(app, "requestMemory")
            ),
        ],
        "{out}"
    );
    assert!(
        findings(&out)
            .iter()
            .all(|f| !f["file"].as_str().unwrap().ends_with("Chart.yaml")),
        "{out}"
    );
}

/// An Application whose chart comes from a Helm repository (`repoURL` + `chart`, the usual
/// Argo CD shape for public charts): named in a note with the `charts:` entry that maps it,
/// then rendered from the vendored copy that entry names, with the Application's values
/// (issue 23).
#[test]
fn a_helm_repository_chart_of_an_application_renders_from_its_vendored_copy() {
    let helm = helm().to_string_lossy().into_owned();
    let app = OLLAMA_APP.replace(
        "    repoURL: https://example.com/gitops.git\n    path: charts/ollama\n",
        "    repoURL: https://otwld.github.io/ollama-helm/\n    chart: ollama\n    targetRevision: 1.4.0\n",
    );
    assert!(app.contains("chart: ollama"));
    // Argo CD reads a Helm repository chart's valueFiles inside the chart.
    let app = app
        .replace(
            "      valueFiles:\n      - ../../values/ollama-gpu.yaml\n",
            "",
        )
        .replace(
            "      valuesObject:\n        ollama:\n          gpu:\n",
            "      valuesObject:\n        ollama:\n          gpu:\n            enabled: true\n",
        );
    assert!(app.contains("enabled: true"));
    let repo = repo(&[(OLLAMA, "ollama")], &[("apps/ollama.yaml", &app)]);
    let dir = repo.path();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 0, "{err}{out}");
    assert!(findings(&out).is_empty(), "{out}");
    assert!(
        err.contains("Application ollama: its chart (https://otwld.github.io/ollama-helm: ollama@1.4.0) is not in this repository: not rendered (vendor it and map it in .gpulint.yaml: `charts: [{path: <folder>, remote: https://otwld.github.io/ollama-helm/ollama}]`)"),
        "{err}"
    );
    fs::write(
        dir.join(".gpulint.yaml"),
        "charts:\n  - path: charts/ollama\n    remote: https://otwld.github.io/ollama-helm/ollama\n",
    )
    .unwrap();
    let (code, out, err) = run(dir, &["--helm", &helm, "--format", "json", "."]);
    assert_eq!(code, 1, "{err}{out}");
    assert!(!err.contains("not in this repository"), "{err}");
    // The Application's parameter (`ollama.gpu.number: "0.5"`) reached the render.
    let gpu003: Vec<Json> = findings(&out)
        .into_iter()
        .filter(|f| f["rule"] == "GPU003")
        .collect();
    assert_eq!(gpu003.len(), 1, "{out}");
    assert_eq!(gpu003[0]["file"], "apps/ollama.yaml");
    assert_eq!(gpu003[0]["object"]["namespace"], "llm");
}

/// Argo CD's app-of-apps: a root Application points at a chart whose templates are
/// Applications, one per app, each with its destination cluster and namespace. The folders and
/// charts they name are linted as that cluster applies them: the chart's release with the
/// rendered Application's release name and values files, the folder's objects in its
/// namespace; before, the chart was an undeclared release with its defaults and the folder
/// belonged to no cluster.
#[test]
fn applications_a_chart_renders_declare_their_folders_and_releases() {
    let helm = helm().to_string_lossy().into_owned();
    let apps_template = r#"{{- range $app := .Values.apps }}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {{ $app.name }}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://github.com/example/gitops.git
    path: {{ $app.path }}
    {{- with $app.valueFiles }}
    helm:
      releaseName: {{ $.Values.cluster }}-{{ $app.name }}
      valueFiles:
      {{- toYaml . | nindent 6 }}
    {{- end }}
  destination:
    name: {{ $.Values.cluster }}
    namespace: {{ $app.namespace }}
{{- end }}
"#;
    let gpu_deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.6.3\n        resources:\n          limits:\n            nvidia.com/gpu: {{ .Values.gpus }}\n";
    let repo = repo(
        &[],
        &[
            (
                "bootstrap/root.yaml",
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/example/gitops.git\n    path: apps-chart\n    helm:\n      valueFiles: [values-prod.yaml]\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n",
            ),
            ("apps-chart/Chart.yaml", "apiVersion: v2\nname: apps\nversion: 0.1.0\n"),
            ("apps-chart/values.yaml", "cluster: in-cluster\napps: []\n"),
            (
                "apps-chart/values-prod.yaml",
                "cluster: prod\napps:\n- name: llm\n  path: charts/llm\n  namespace: serving\n  valueFiles: [values-prod.yaml]\n- name: batch\n  path: workloads/batch\n  namespace: training\n",
            ),
            ("apps-chart/templates/apps.yaml", apps_template),
            ("charts/llm/Chart.yaml", "apiVersion: v2\nname: llm\nversion: 0.1.0\n"),
            ("charts/llm/values.yaml", "gpus: 1\n"),
            ("charts/llm/values-prod.yaml", "gpus: 2\n"),
            ("charts/llm/templates/deploy.yaml", gpu_deployment),
            (
                "workloads/batch/job.yaml",
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: train\n        image: pytorch/pytorch:2.4.0\n        resources:\n          limits:\n            nvidia.com/gpu: 4\n",
            ),
        ],
    );
    let dir = repo.path();
    let (wrapper, count) = counting_helm(dir, &helm);
    let wrapper = wrapper.to_string_lossy().into_owned();
    let (code, out, err) = run(dir, &["--helm", &wrapper, "--format", "json", "."]);
    assert_eq!(code, 1, "{err}{out}");
    let mut got: Vec<(String, String, String, String, String)> = findings(&out)
        .iter()
        .map(|f| {
            let s = |v: &Json| v.as_str().unwrap_or_default().to_string();
            (
                s(&f["rule"]),
                s(&f["cluster"]),
                s(&f["object"]["namespace"]),
                s(&f["object"]["name"]),
                s(&f["file"]),
            )
        })
        .collect();
    got.sort();
    let t = |r: &str, ns: &str, n: &str, f: &str| {
        let s = str::to_string;
        (s(r), s("prod"), s(ns), s(n), s(f))
    };
    let chart = "charts/llm/templates/deploy.yaml";
    let job = "workloads/batch/job.yaml";
    assert_eq!(
        got,
        [
            t("QOS001", "serving", "prod-llm", chart),
            t("QOS001", "training", "train", job),
            t("QOS003", "serving", "prod-llm", chart),
            t("QOS003", "training", "train", job),
        ],
        "{err}"
    );
    // The rendered Application's values file reached the release: 2 GPUs, not the default 1.
    let (code, inventory, err) = run(dir, &["inventory", "--helm", &helm, "."]);
    assert_eq!(code, 0, "{err}");
    assert!(
        inventory.contains("prod/serving   Deployment/prod-llm  vllm       2 nvidia.com/gpu"),
        "{inventory}"
    );
    assert!(
        !inventory.contains("Deployment/llm "),
        "no undeclared release: {inventory}"
    );
    // Renders: the root release once (the render that found its Applications is the one
    // linted), the app's release, and the app's probe for where its findings' values come from.
    assert_eq!(helm_renders(&count), 3, "helm template calls");

    // A values file the rendered Application names that does not exist is an error of the
    // chart that renders it, naming the release, and the run goes on.
    let values = dir.join("apps-chart/values-prod.yaml");
    let text = fs::read_to_string(&values).unwrap();
    fs::write(
        &values,
        text.replace("[values-prod.yaml]", "[values-gone.yaml]"),
    )
    .unwrap();
    let (code, out, err) = run(dir, &["--helm", &helm, "."]);
    let err = format!("{out}{err}");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("apps-chart/Chart.yaml:0:0: helm: an Application that release root of this chart renders: values file values-gone.yaml of release prod-llm does not exist"),
        "{err}"
    );
    assert!(
        err.contains("workloads/batch/job.yaml"),
        "the folder is still linted: {err}"
    );
}
