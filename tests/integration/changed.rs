//! `--changed-since REF`: only findings of objects that changed since REF, checked with the real
//! git CLI.

use std::path::Path;

use serde_json::Value;

use crate::support::common::{git, run};

fn pod(name: &str, extra: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{extra}spec:\n  containers:\n  - name: c\n    resources:\n      requests: {{nvidia.com/gpu: 2, cpu: 1, memory: 1Gi}}\n      limits: {{nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}\n")
}

fn findings(dir: &Path, args: &[&str]) -> (i32, Vec<String>, String) {
    let (code, stdout, stderr) = run(dir, args);
    let value: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    let names = value["findings"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|f| {
                    format!(
                        "{} {}",
                        f["file"].as_str().unwrap(),
                        f["object"]["name"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (code, names, stderr)
}

/// An empty git repository on `main` with a committer identity.
fn new_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["config", "user.name", "T"]);
    git(repo, &["config", "user.email", "t@example.com"]);
    dir
}

#[test]
fn only_changed_objects_are_reported() {
    let dir = new_repo();
    let repo = dir.path();
    std::fs::write(
        repo.join("a.yaml"),
        format!("{}---\n{}", pod("a1", ""), pod("a2", "")),
    )
    .unwrap();
    std::fs::write(repo.join("b.yaml"), pod("b", "")).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "base"]);
    // a2 changes (a label); b only gains a comment; c is new.
    std::fs::write(
        repo.join("a.yaml"),
        format!(
            "{}---\n{}",
            pod("a1", ""),
            pod("a2", "  labels: {team: ml}\n")
        ),
    )
    .unwrap();
    std::fs::write(repo.join("b.yaml"), format!("# reviewed\n{}", pod("b", ""))).unwrap();
    std::fs::write(repo.join("c.yaml"), pod("c", "")).unwrap();

    let (code, all, _) = findings(repo, &[".", "--format", "json", "--select", "GPU002"]);
    assert_eq!((code, all.len()), (1, 4));
    let (code, changed, stderr) = findings(
        repo,
        &[
            ".",
            "--format",
            "json",
            "--select",
            "GPU002",
            "--changed-since",
            "HEAD",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(changed, ["a.yaml a2", "c.yaml c"]);
    assert!(
        stderr.contains("2 object(s) and 0 render(s) changed since HEAD"),
        "{stderr}"
    );

    // Nothing changed since the working tree's own state: exit 0.
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "change"]);
    let (code, changed, _) = findings(repo, &[".", "--format", "json", "--changed-since", "HEAD"]);
    assert_eq!((code, changed.len()), (0, 0));

    let (code, _, stderr) = findings(repo, &[".", "--changed-since", "no-such-ref"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--changed-since no-such-ref"), "{stderr}");
}

#[test]
fn outside_a_repository_it_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.yaml"), pod("p", "")).unwrap();
    let (code, _, stderr) = findings(dir.path(), &[".", "--changed-since", "HEAD"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not inside a git repository"), "{stderr}");
}

#[test]
fn inside_a_render_only_the_changed_objects_are_reported() {
    let dir = new_repo();
    let repo = dir.path();
    let write = |name: &str, text: &str| {
        let path = repo.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("base/a.yaml", &pod("a", ""));
    write("base/b.yaml", &pod("b", ""));
    write("base/kustomization.yaml", "resources: [a.yaml, b.yaml]\n");
    write(
        "overlays/prod/kustomization.yaml",
        "resources: [../../base]\nnamespace: prod\npatches:\n- path: a-patch.yaml\n",
    );
    write(
        "overlays/prod/a-patch.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  priorityClassName: low\n",
    );
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "base"]);

    let args = [
        ".",
        "--format",
        "json",
        "--select",
        "GPU002",
        "--changed-since",
        "HEAD",
    ];
    // The overlay's patch changes object a only: b, rendered by the same overlay, is unchanged.
    write(
        "overlays/prod/a-patch.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  priorityClassName: high\n",
    );
    let (code, changed, stderr) = findings(repo, &args);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(changed, ["base/a.yaml a"], "{stderr}");
    // A base file's change shows through the overlay, for that object only.
    git(repo, &["checkout", "-q", "--", "."]);
    write("base/b.yaml", &pod("b", "  labels: {team: ml}\n"));
    let (code, changed, stderr) = findings(repo, &args);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(changed, ["base/b.yaml b"], "{stderr}");
    // A comment changes no rendered object: nothing is reported.
    git(repo, &["checkout", "-q", "--", "."]);
    write("base/b.yaml", &format!("# reviewed\n{}", pod("b", "")));
    let (code, changed, stderr) = findings(repo, &args);
    assert_eq!((code, changed.len()), (0, 0), "{stderr}");
    // A transform of the kustomization changes every object.
    git(repo, &["checkout", "-q", "--", "."]);
    write(
        "overlays/prod/kustomization.yaml",
        "resources: [../../base]\nnamespace: prod\nnamePrefix: p-\npatches:\n- path: a-patch.yaml\n",
    );
    let (code, mut changed, stderr) = findings(repo, &args);
    changed.sort();
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(changed, ["base/a.yaml p-a", "base/b.yaml p-b"], "{stderr}");
}
