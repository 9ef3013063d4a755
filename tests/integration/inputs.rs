//! Input mistakes users make (issue 26): each is said once, at its place, with what it is a
//! typo of, and a repository with nothing to lint says so.

use crate::support::common::{git, helm, run, temp_tree};

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nb\nspec:\n  containers:\n  - name: nb\n    image: x\n";

#[test]
fn a_yaml_error_in_a_shared_base_is_one_error_at_its_place() {
    let repo = temp_tree(&[
        ("base/kustomization.yaml", "resources:\n- deploy.yaml\n"),
        (
            "base/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: b\n        resources:\n          limits: {nvidia.com/gpu: 1\n",
        ),
        ("overlays/a/kustomization.yaml", "resources:\n- ../../base\nnamePrefix: a-\n"),
        ("overlays/b/kustomization.yaml", "resources:\n- ../../base\nnamePrefix: b-\n"),
    ]);
    let (code, stdout, _) = run(repo.path(), &["."]);
    assert_eq!(code, 2, "{stdout}");
    assert_eq!(stdout.matches("error[input]").count(), 1, "{stdout}");
    assert!(stdout.contains("base/deploy.yaml:12:19"), "{stdout}");
    assert!(stdout.contains("; 1 input error(s)"), "{stdout}");
    // The overlays alone: their two renders fail alike, said once.
    let (_, json, _) = run(repo.path(), &["overlays", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let errors = value["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{json}");
    assert_eq!(
        (&errors[0]["file"], &errors[0]["line"], &errors[0]["column"]),
        (
            &serde_json::json!("base/deploy.yaml"),
            &serde_json::json!(12),
            &serde_json::json!(19)
        )
    );
}

#[test]
fn a_missing_resource_is_one_error_naming_the_file_it_is_a_typo_of() {
    let repo = temp_tree(&[
        (
            "nb/kustomization.yaml",
            "resources:\n- tf-notebook-mig.yml\n",
        ),
        ("nb/tf-notebook-mig.yaml", POD),
        ("overlay/kustomization.yaml", "resources:\n- ../nb\n"),
    ]);
    let (code, stdout, _) = run(repo.path(), &["--format", "json", "."]);
    assert_eq!(code, 2, "{stdout}");
    let value: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let errors = value["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{stdout}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.ends_with("no such file or directory'; did you mean `tf-notebook-mig.yaml`?"),
        "{message}"
    );
    assert_eq!(errors[0]["file"], "nb/kustomization.yaml");
    assert_eq!(
        (&errors[0]["line"], &errors[0]["column"]),
        (&2.into(), &3.into())
    );
}

#[test]
fn a_missing_values_file_of_a_config_chart_is_an_error_at_the_configs_line() {
    let repo = temp_tree(&[
        (
            "charts/c/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        ),
        ("charts/c/values.yaml", "replicas: 1\n"),
        ("charts/c/templates/pod.yaml", POD),
        ("envs/prod.yaml", "replicas: 2\n"),
        (
            ".gpulint.yaml",
            "charts:\n  - path: charts/c\n    values: [envs/prod.yml]\n",
        ),
    ]);
    git(repo.path(), &["init", "-q"]);
    let helm = helm();
    let (code, stdout, stderr) = run(
        repo.path(),
        &["--helm", helm.to_str().unwrap(), "--format", "json", "."],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty(), "no run: {stdout}");
    assert!(!stderr.contains("Chart.yaml"), "Helm was not run: {stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: {}:3:14: `charts` values file envs/prod.yml: no such file in the repository; did you mean `envs/prod.yaml`?",
            repo.path().join(".gpulint.yaml").display()
        )
    );
}

#[test]
fn every_config_error_is_reported_with_a_suggestion() {
    let repo = temp_tree(&[
        ("pod.yaml", POD),
        (
            ".gpulint.yaml",
            "exlcude: [vendor]\nrules:\n  GPU01: off\nhelm: ./evil.sh\n",
        ),
    ]);
    let (code, stdout, stderr) = run(repo.path(), &["."]);
    assert_eq!(code, 2, "{stdout}");
    let config = repo.path().join(".gpulint.yaml");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    let at = |n: usize, rest: &str| format!("error: {}:{n}:{rest}", config.display());
    assert!(
        lines[0].starts_with(&at(1, "1: unknown key `exlcude` in config; did you mean `exclude`? expected one of: charts, clusters, exclude,")),
        "{stderr}"
    );
    // `helm` is refused, so never offered as a key.
    assert!(!lines[0].contains("helm"), "{stderr}");
    assert!(
        lines[1].starts_with(&at(3, "3: unknown rule \"GPU01\"; did you mean `GPU001`?")),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with(&at(4, "7: `helm:` is not read from a repository file")),
        "{stderr}"
    );
}

#[test]
fn an_empty_repository_says_no_manifests_were_found() {
    let repo = temp_tree(&[("README.md", "nothing here\n")]);
    git(repo.path(), &["init", "-q"]);
    let (code, stdout, _) = run(repo.path(), &[]);
    assert_eq!(code, 2, "{stdout}");
    assert_eq!(
        stdout,
        "error: no Kubernetes manifests found in `.`: nothing was linted (gpulint reads `*.yaml` and `*.yml` files, Kustomize roots and Helm charts; check the paths and the config's `exclude:`)\nNo manifests found: nothing was linted; 1 input error(s)\n"
    );
    // Everything excluded is nothing found too.
    let repo = temp_tree(&[
        ("vendor/pod.yaml", POD),
        (".gpulint.yaml", "exclude: [vendor]\n"),
    ]);
    let (code, stdout, _) = run(repo.path(), &["."]);
    assert_eq!(code, 2, "{stdout}");
    // Files named one by one (pre-commit's staged files) that are excluded: nothing to do.
    let (code, stdout, _) = run(repo.path(), &["vendor/pod.yaml"]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "No manifests found: nothing was linted\n")
    );
}

#[test]
fn snapshot_and_render_help_say_what_they_do() {
    let repo = temp_tree(&[]);
    let (code, snapshot, _) = run(repo.path(), &["snapshot", "--help"]);
    assert_eq!(code, 0);
    assert!(!snapshot.contains("to lint"), "{snapshot}");
    assert!(
        snapshot.contains("Files or folders of the workloads to measure"),
        "{snapshot}"
    );
    // The format it writes, and where it is documented.
    for field in [
        "version 1",
        "`containers`",
        "`memory_bytes`",
        "`nodes`",
        "docs/measurements.md",
    ] {
        assert!(snapshot.contains(field), "{field}: {snapshot}");
    }
    let (code, render, _) = run(repo.path(), &["render", "--help"]);
    assert_eq!(code, 0);
    assert!(
        render.starts_with("Print the rendered stream of a Kustomize root or a Helm chart"),
        "{render}"
    );
    assert!(render.contains("`charts:`"), "{render}");
}
