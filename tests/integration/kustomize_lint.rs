//! Kustomize roots linted as rendered: findings at their origin (base, patch file, inline patch),
//! metrics judged per overlay, fixes written at the origin or as an overlay patch and checked
//! with `kubectl kustomize` (the oracle), `gpulint render`, pre-commit style file arguments and
//! `--changed-since` with renders. Every test runs the binary on a git-initialised temp copy of
//! testdata/kustomize-lint.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpulint::source::document::plain;
use gpulint::source::yaml::Stream;
use serde_json::Value;

use crate::support::common::{copy_dir, git, kubectl, run};

const FIXTURE: &str = "testdata/kustomize-lint";
const OVERLAYS: [&str; 3] = ["overlays/prod", "overlays/staging", "overlays/canary"];

/// A temp folder holding `repo/`: the fixture, committed on `main`.
struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), &dir);
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["config", "user.name", "T"]);
        git(&dir, &["config", "user.email", "t@example.com"]);
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "fixture"]);
        Repo { _tmp: tmp, dir }
    }

    fn gpulint(&self, args: &[&str]) -> (i32, String, String) {
        run(&self.dir, args)
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        let (code, stdout, stderr) = self.gpulint(&all);
        assert!(code == 0 || code == 1, "exit {code}: {stderr}");
        serde_json::from_str(&stdout).unwrap()
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.join(path)).unwrap()
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Every file of the work tree (not .git), for "nothing changed" checks.
    fn tree(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.file_name().is_some_and(|n| n == ".git") {
                    continue;
                }
                if path.is_dir() {
                    walk(&path, root, out);
                } else {
                    let rel = path.strip_prefix(root).unwrap().to_path_buf();
                    out.insert(rel, std::fs::read(&path).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.dir, &self.dir, &mut out);
        out
    }

    /// `kubectl kustomize DIR`, parsed.
    fn kubectl(&self, overlay: &str) -> Vec<Value> {
        let out = Command::new(kubectl())
            .current_dir(&self.dir)
            .args(["kustomize", overlay])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl kustomize {overlay}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        docs(&String::from_utf8_lossy(&out.stdout))
    }
}

fn docs(text: &str) -> Vec<Value> {
    let s = Stream::parse(text);
    assert!(s.error.is_none(), "{:?}", s.error);
    s.documents.iter().map(|d| plain(&d.root)).collect()
}

/// `(rule, file:line, render)` of every finding.
fn places(value: &Value) -> Vec<(String, String, String)> {
    value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                format!("{}:{}", f["file"].as_str().unwrap(), f["line"]),
                f["render"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

fn place(rule: &str, at: &str, render: &str) -> (String, String, String) {
    (rule.into(), at.into(), render.into())
}

/// The object of `kind` named `name` in a parsed render.
fn object<'v>(objects: &'v mut [Value], kind: &str, name: &str) -> &'v mut Value {
    objects
        .iter_mut()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind}/{name} not rendered"))
}

fn container<'v>(o: &'v mut Value, pointer: &str) -> &'v mut Value {
    o.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} not rendered"))
}

const LLM: &str = "/spec/template/spec/containers/0/resources";
const WORKER: &str = "/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/resources";

#[test]
fn findings_land_in_the_file_and_line_that_set_the_field() {
    let repo = Repo::new();
    let value = repo.json(&["."]);
    let got = places(&value);
    for want in [
        // Set by the shared base: reported there, once per render that uses it.
        place("QOS002", "base/deploy.yaml:22", "overlays/prod"),
        place("QOS002", "base/deploy.yaml:22", "overlays/staging"),
        place("QOS002", "base/deploy.yaml:22", "overlays/canary"),
        // Set by prod's strategic-merge patch file and its JSON 6902 patch.
        place("QOS002", "overlays/prod/memory.yaml:13", "overlays/prod"),
        place("GPU002", "overlays/prod/workers.yaml:6", "overlays/prod"),
        // Set by canary's inline `patch: |`: the line inside kustomization.yaml.
        place(
            "GPU002",
            "overlays/canary/kustomization.yaml:21",
            "overlays/canary",
        ),
        // The unshared base.
        place("QOS002", "solo/embedder.yaml:22", "overlays/canary"),
        // A file no kustomization reads: linted as written.
        place("GPU002", "loose/partial.yaml:12", "-"),
    ] {
        assert!(got.contains(&want), "{want:?} missing from {got:#?}");
    }
    insta::assert_json_snapshot!("kustomize_findings_json", value);
    let (code, human, stderr) = repo.gpulint(&["."]);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!("kustomize_findings_human", human);
}

#[test]
fn patch_files_are_not_linted_alone_and_unread_files_are_plain() {
    let repo = Repo::new();
    let value = repo.json(&["."]);
    for f in value["findings"].as_array().unwrap() {
        let file = f["file"].as_str().unwrap();
        let rendered = !f["render"].is_null();
        // memory.yaml alone is a GPU container without a CPU request (QOS003) nor a GPU request:
        // only the render, where the base gives both, is judged.
        assert_eq!(rendered, !file.starts_with("loose/"), "{file}: {f:#}");
        assert!(!rendered || f["rule"] != "QOS003", "{file}: {f:#}");
    }
    let got = places(&value);
    assert!(got.contains(&place("QOS001", "loose/partial.yaml:10", "-")));
    // The loose file's findings are the ones a plain run of it alone gives.
    let alone = repo.json(&["loose/partial.yaml"]);
    let loose: Vec<_> = got.into_iter().filter(|p| p.2 == "-").collect();
    assert_eq!(loose, places(&alone));
}

#[test]
fn metrics_judge_each_overlay_by_its_rendered_namespace_and_name() {
    let repo = Repo::new();
    let value = repo.json(&[
        "overlays",
        "--metrics",
        "metrics.json",
        "--select",
        "MEM001,MEM002",
    ]);
    let got: Vec<(String, String, String, String)> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                format!("{}:{}", f["file"].as_str().unwrap(), f["line"]),
                format!(
                    "{}/{}",
                    f["object"]["namespace"].as_str().unwrap_or("-"),
                    f["object"]["name"].as_str().unwrap()
                ),
                f["render"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // One base, two judgments: prod (namespace prod, limit 32Gi from its patch) uses more than
    // its limit; staging (`staging-llm`, the base's 16Gi) uses far less than it requests.
    assert_eq!(
        got,
        [
            (
                "MEM001".to_string(),
                "overlays/prod/memory.yaml:16".to_string(),
                "prod/llm".to_string(),
                "overlays/prod".to_string()
            ),
            (
                "MEM002".to_string(),
                "base/deploy.yaml:23".to_string(),
                "default/staging-llm".to_string(),
                "overlays/staging".to_string()
            ),
        ]
    );
}

/// The renders after the full `--fix`: the originals plus exactly the intended values.
fn expected_after_fix(repo: &Repo, overlay: &str, before: &[Value]) -> Vec<Value> {
    let mut want = before.to_vec();
    match overlay {
        "overlays/prod" => {
            let llm = object(&mut want, "Deployment", "llm");
            *container(llm, &format!("{LLM}/requests/cpu")) = "8".into();
            *container(llm, &format!("{LLM}/requests/memory")) = "32Gi".into();
            let job = object(&mut want, "PyTorchJob", "trainer");
            *container(job, &format!("{WORKER}/requests/nvidia.com~1gpu")) = "8".into();
        }
        "overlays/staging" => {
            let llm = object(&mut want, "Deployment", "staging-llm");
            *container(llm, &format!("{LLM}/requests/cpu")) = "8".into();
        }
        "overlays/canary" => {
            let llm = object(&mut want, "Deployment", "llm-canary");
            *container(llm, &format!("{LLM}/requests/cpu")) = "8".into();
            *container(llm, &format!("{LLM}/requests/nvidia.com~1gpu")) = "1".into();
            let tei = object(&mut want, "Deployment", "embedder-canary");
            *container(tei, &format!("{LLM}/requests/memory")) = "12Gi".into();
        }
        _ => unreachable!("{overlay} in {}", repo.dir.display()),
    }
    want
}

#[test]
fn fix_edits_the_origin_or_adds_an_overlay_patch_and_renders_the_intended_values() {
    let repo = Repo::new();
    let before: Vec<Vec<Value>> = OVERLAYS.iter().map(|o| repo.kubectl(o)).collect();
    let base = repo.read("base/deploy.yaml");
    let (code, _, stderr) = repo.gpulint(&[".", "--fix"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("not fixed"), "{stderr}");
    // The patch that set a value is edited in place (SMP and JSON 6902), the inline patch too.
    assert!(repo
        .read("overlays/prod/memory.yaml")
        .contains("              memory: 32Gi\n            limits:"));
    assert!(repo
        .read("overlays/prod/workers.yaml")
        .ends_with("  value: 8\n"));
    assert!(repo
        .read("overlays/canary/kustomization.yaml")
        .contains("                    nvidia.com/gpu: 1\n"));
    // The base only canary uses is edited in place; the shared base is not touched.
    assert!(repo
        .read("solo/embedder.yaml")
        .contains("              memory: 12Gi\n            limits:"));
    assert_eq!(repo.read("base/deploy.yaml"), base);
    // Shared base: a patch per overlay, listed in the overlay's own style.
    for overlay in OVERLAYS {
        let patch = repo.read(&format!("{overlay}/gpulint-deployment-llm.yaml"));
        assert!(patch.contains("  name: llm\n"), "{patch}");
        assert!(
            patch.ends_with("          requests:\n            cpu: \"8\"\n"),
            "{patch}"
        );
    }
    assert!(repo
        .read("overlays/prod/kustomization.yaml")
        .ends_with("      name: trainer\n  - path: gpulint-deployment-llm.yaml\n"));
    assert!(repo
        .read("overlays/staging/kustomization.yaml")
        .ends_with("resources:\n- ../../base\npatches:\n- path: gpulint-deployment-llm.yaml\n"));
    // After the inline block scalar, a new item (not a line inside the scalar).
    assert!(repo
        .read("overlays/canary/kustomization.yaml")
        .ends_with("nvidia.com/gpu: 1\n  - path: gpulint-deployment-llm.yaml\n"));
    // The oracle: every overlay renders the intended values, and nothing else changed.
    for (overlay, before) in OVERLAYS.iter().zip(&before) {
        assert_eq!(
            repo.kubectl(overlay),
            expected_after_fix(&repo, overlay, before),
            "{overlay}"
        );
    }
    // Idempotent: a second --fix has nothing left to do.
    let tree = repo.tree();
    let (code_1, _, stderr) = repo.gpulint(&[".", "--fix"]);
    assert_eq!(code_1, 1, "{stderr}");
    assert!(!stderr.contains("fixed "), "{stderr}");
    assert_eq!(repo.tree(), tree);
}

#[test]
fn fixing_one_overlay_leaves_the_others_unchanged() {
    let repo = Repo::new();
    let staging = repo.kubectl("overlays/staging");
    let canary = repo.kubectl("overlays/canary");
    let (code_2, _, stderr) = repo.gpulint(&["overlays/prod", "--fix"]);
    assert_eq!(code_2, 0, "{stderr}");
    assert!(stderr.contains("fixed "), "{stderr}");
    assert_eq!(repo.kubectl("overlays/staging"), staging);
    assert_eq!(repo.kubectl("overlays/canary"), canary);
    let status = git(&repo.dir, &["status", "--porcelain"]);
    assert_eq!(
        status,
        " M overlays/prod/kustomization.yaml\n M overlays/prod/memory.yaml\n M overlays/prod/workers.yaml\n?? overlays/prod/gpulint-deployment-llm.yaml\n"
    );
}

#[test]
fn a_later_fix_extends_the_overlays_gpulint_patch() {
    let repo = Repo::new();
    repo.gpulint(&["overlays/staging", "--fix"]);
    // A new finding on the shared base: memory request 8Gi, limit 16Gi.
    let base = repo
        .read("base/deploy.yaml")
        .replacen("memory: 16Gi", "memory: 8Gi", 1);
    repo.write("base/deploy.yaml", &base);
    let (code_3, _, stderr) = repo.gpulint(&["overlays/staging", "--fix"]);
    assert_eq!(code_3, 0, "{stderr}");
    assert!(
        stderr.contains("fixed overlays/staging/gpulint-deployment-llm.yaml:15: QOS002"),
        "{stderr}"
    );
    assert!(!repo
        .dir
        .join("overlays/staging/gpulint-deployment-llm-2.yaml")
        .exists());
    assert!(repo
        .read("overlays/staging/gpulint-deployment-llm.yaml")
        .ends_with("          requests:\n            cpu: \"8\"\n            memory: 16Gi\n"));
    assert!(repo
        .read("overlays/staging/kustomization.yaml")
        .ends_with("patches:\n- path: gpulint-deployment-llm.yaml\n"));
    let rendered = repo.kubectl("overlays/staging");
    let llm = rendered.iter().find(|o| o["kind"] == "Deployment").unwrap();
    assert_eq!(
        llm.pointer(&format!("{LLM}/requests/memory")).unwrap(),
        "16Gi"
    );
}

#[test]
fn fix_diff_writes_nothing_and_fix_patch_applies_with_git() {
    let repo = Repo::new();
    let tree = repo.tree();
    let (code, diff, stderr) = repo.gpulint(&[".", "--fix", "--diff"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(repo.tree(), tree, "--diff wrote files");
    assert!(
        diff.contains("+++ b/overlays/staging/gpulint-deployment-llm.yaml\n"),
        "{diff}"
    );
    assert!(
        diff.contains("+- path: gpulint-deployment-llm.yaml\n"),
        "{diff}"
    );

    let (code, _, stderr) = repo.gpulint(&[".", "--fix", "--patch", "../fix.patch"]);
    assert!(code == 0 || code == 1, "{stderr}");
    assert_eq!(repo.tree(), tree, "--patch wrote manifests");
    let patch = std::fs::read_to_string(repo.dir.join("../fix.patch")).unwrap();
    assert!(
        patch.contains("--- /dev/null\n+++ b/overlays/prod/gpulint-deployment-llm.yaml\n"),
        "{patch}"
    );
    git(&repo.dir, &["apply", "--check", "../fix.patch"]);
    git(&repo.dir, &["apply", "../fix.patch"]);
    // Applied by git, the patch gives what --fix writes.
    let patched = repo.tree();
    let other = Repo::new();
    other.gpulint(&[".", "--fix"]);
    assert_eq!(patched, other.tree());
}

#[test]
fn fix_diff_shows_new_files_as_dev_null() {
    let repo = Repo::new();
    let (code_4, diff, _) = repo.gpulint(&[".", "--fix", "--diff"]);
    assert_eq!(code_4, 1);
    assert!(
        diff.contains("--- /dev/null\n+++ b/overlays/staging/gpulint-deployment-llm.yaml\n"),
        "{diff}"
    );
}

#[test]
fn fix_commit_commits_the_new_patch_files_too() {
    let repo = Repo::new();
    let (code_5, _, stderr) = repo.gpulint(&[".", "--fix", "--commit"]);
    assert_eq!(code_5, 1, "{stderr}");
    assert!(!stderr.contains("not fixed"), "{stderr}");
    let stat = git(&repo.dir, &["show", "--stat=200", "--format=", "HEAD"]);
    for file in [
        "overlays/prod/gpulint-deployment-llm.yaml",
        "overlays/staging/gpulint-deployment-llm.yaml",
        "overlays/canary/gpulint-deployment-llm.yaml",
        "overlays/staging/kustomization.yaml",
        "overlays/prod/memory.yaml",
        "solo/embedder.yaml",
    ] {
        assert!(stat.contains(file), "{file} not in\n{stat}");
    }
    assert_eq!(git(&repo.dir, &["status", "--porcelain"]), "");
}

/// A repo of its own: one base used by one overlay.
fn single_overlay_repo(overlay_extra: &str, base_resources: &str) -> Repo {
    let repo = Repo::new();
    for dir in ["base", "solo", "overlays", "loose"] {
        std::fs::remove_dir_all(repo.dir.join(dir)).unwrap();
    }
    repo.write("b/kustomization.yaml", "resources:\n  - enc.yaml\n");
    repo.write(
        "b/enc.yaml",
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: enc\nspec:\n  template:\n    spec:\n      containers:\n        - name: tei\n          resources:\n{base_resources}"
        ),
    );
    repo.write(
        "o/kustomization.yaml",
        &format!("namespace: ml\nresources:\n  - ../b\n{overlay_extra}"),
    );
    git(&repo.dir, &["add", "-A"]);
    git(&repo.dir, &["commit", "-q", "-m", "single"]);
    repo
}

#[test]
fn fixes_that_clash_in_one_round_land_in_the_next() {
    // QOS001 (measured: limit and request to 11Gi) and GPU001 (the GPU limit) both insert at the
    // end of `limits:`: one round cannot take both.
    let repo = single_overlay_repo(
        "",
        "            requests:\n              nvidia.com/gpu: 1\n              cpu: \"2\"\n              memory: 8Gi\n            limits:\n              cpu: \"2\"\n",
    );
    repo.write(
        "m.json",
        r#"{"version": 1, "window": "14d", "collected_at": "2026-12-01T00:00:00Z", "source": "test",
 "containers": [{"namespace": "ml", "kind": "Deployment", "name": "enc", "container": "tei",
   "samples": 20160, "memory_bytes": {"p50": 8.0e9, "p99": 1.0e10, "max": 1.1e10}, "oom_kills": 0}]}"#,
    );
    let (code_6, _, stderr) = repo.gpulint(&["o", "--metrics", "m.json", "--fix"]);
    assert_eq!(code_6, 1, "{stderr}");
    assert!(!stderr.contains("not fixed"), "{stderr}");
    assert!(stderr.contains("fixed b/enc.yaml:17: QOS001"), "{stderr}");
    assert!(stderr.contains("fixed b/enc.yaml:18: GPU001"), "{stderr}");
    let rendered = repo.kubectl("o");
    let resources = rendered[0].pointer(LLM).unwrap();
    assert_eq!(resources["limits"]["nvidia.com/gpu"], "1");
    assert_eq!(resources["limits"]["memory"], "11Gi");
    assert_eq!(resources["requests"]["memory"], "11Gi");
    let value = repo.json(&[
        "o",
        "--metrics",
        "m.json",
        "--select",
        "QOS001,GPU001,QOS002",
    ]);
    assert_eq!(value["findings"].as_array().unwrap().len(), 0, "{value:#}");
}

#[test]
fn fix_commit_commits_an_edited_base() {
    let repo = single_overlay_repo(
        "",
        "            requests:\n              nvidia.com/gpu: 1\n              cpu: \"2\"\n            limits:\n              nvidia.com/gpu: 1\n              cpu: \"4\"\n",
    );
    let (code_7, _, stderr) = repo.gpulint(&["o", "--fix", "--commit"]);
    assert_eq!(code_7, 1, "{stderr}");
    assert!(stderr.contains("fixed b/enc.yaml:13: QOS002"), "{stderr}");
    let stat = git(&repo.dir, &["show", "--stat=200", "--format=", "HEAD"]);
    assert_eq!(
        stat.lines()
            .next()
            .unwrap()
            .split('|')
            .next()
            .unwrap()
            .trim(),
        "b/enc.yaml",
        "{stat}"
    );
    assert_eq!(git(&repo.dir, &["status", "--porcelain"]), "");
}

#[test]
fn a_fix_the_render_undoes_is_not_fixed_and_nothing_is_written() {
    // `replacements` writes the CPU request from a ConfigMap after every patch: the finding is
    // placed at the ConfigMap's value (where the request really comes from), and neither an edit
    // there (it would change the ConfigMap too) nor an overlay patch gives exactly the change.
    let repo = single_overlay_repo(
        "  - sizes.yaml\nreplacements:\n  - source:\n      kind: ConfigMap\n      name: sizes\n      fieldPath: data.cpu\n    targets:\n      - select:\n          kind: Deployment\n          name: enc\n        fieldPaths:\n          - spec.template.spec.containers.[name=tei].resources.requests.cpu\n",
        "            requests:\n              nvidia.com/gpu: 1\n              cpu: \"2\"\n              memory: 8Gi\n            limits:\n              nvidia.com/gpu: 1\n              cpu: \"4\"\n              memory: 8Gi\n",
    );
    repo.write(
        "o/sizes.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sizes\ndata:\n  cpu: \"2\"\n",
    );
    git(&repo.dir, &["add", "-A"]);
    git(&repo.dir, &["commit", "-q", "-m", "sizes"]);
    let tree = repo.tree();
    let (code, _, stderr) = repo.gpulint(&["o", "--fix"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("not fixed: o/sizes.yaml:6: QOS002: rendering the fixed files again"),
        "{stderr}"
    );
    assert_eq!(repo.tree(), tree);
}

#[test]
fn render_prints_what_kubectl_kustomize_prints() {
    let repo = Repo::new();
    for overlay in OVERLAYS {
        let (code, stdout, stderr) = repo.gpulint(&["render", overlay]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(docs(&stdout), repo.kubectl(overlay), "{overlay}");
    }
}

#[test]
fn render_errors_exit_2_at_their_place() {
    let repo = Repo::new();
    repo.write(
        "bad/kustomization.yaml",
        "resources:\n  - ../base\n  - nope.yaml\n",
    );
    let (code, stdout, stderr) = repo.gpulint(&["render", "bad"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("bad/kustomization.yaml:3:5: "), "{stderr}");
}

#[test]
fn load_restrictor_none_reads_outside_the_root_but_never_outside_the_repository() {
    let repo = Repo::new();
    repo.write("shared/extra.yaml", &repo.read("base/deploy.yaml"));
    repo.write(
        "ov/kustomization.yaml",
        "resources:\n  - ../shared/extra.yaml\n",
    );
    let (code, _, stderr) = repo.gpulint(&["render", "ov"]);
    assert_eq!(code, 2, "root-only is the default: {stderr}");
    assert!(stderr.contains("ov/kustomization.yaml:2:5: "), "{stderr}");
    let (code, stdout, stderr) = repo.gpulint(&["render", "ov", "--load-restrictor", "none"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(docs(&stdout), docs(&repo.read("shared/extra.yaml")));
    // Next to the repository, not in it: not read, whatever the restrictor.
    std::fs::write(
        repo.dir.join("../outside.yaml"),
        repo.read("base/deploy.yaml"),
    )
    .unwrap();
    repo.write(
        "ov/kustomization.yaml",
        "resources:\n  - ../../outside.yaml\n",
    );
    let (code, stdout, stderr) = repo.gpulint(&["render", "ov", "--load-restrictor", "none"]);
    assert_eq!(code, 2, "{stdout}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("ov/kustomization.yaml:2:5: "), "{stderr}");
}

fn renders_of(value: &Value) -> Vec<String> {
    let mut renders: Vec<String> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["render"].as_str().unwrap_or("-").to_string())
        .collect();
    renders.sort();
    renders.dedup();
    renders
}

#[test]
fn a_file_argument_lints_every_render_that_reads_it() {
    let repo = Repo::new();
    // Pre-commit passes files: the shared base's file brings in every overlay.
    let value = repo.json(&["base/deploy.yaml"]);
    assert_eq!(
        renders_of(&value),
        ["overlays/canary", "overlays/prod", "overlays/staging"]
    );
    // A patch of prod brings in prod only.
    let value = repo.json(&["overlays/prod/memory.yaml"]);
    assert_eq!(renders_of(&value), ["overlays/prod"]);
    assert!(places(&value).contains(&place(
        "QOS002",
        "overlays/prod/memory.yaml:13",
        "overlays/prod"
    )));
}

#[test]
fn changed_since_keeps_the_changed_objects_of_the_renders_that_read_a_changed_file() {
    let repo = Repo::new();
    // Only the base changes (a comment would not do: its objects must differ).
    let base = repo
        .read("base/deploy.yaml")
        .replace("replicas: 1", "replicas: 2");
    repo.write("base/deploy.yaml", &base);
    let value = repo.json(&[".", "--changed-since", "HEAD"]);
    assert_eq!(
        renders_of(&value),
        ["overlays/canary", "overlays/prod", "overlays/staging"]
    );
    // Only the objects whose render changed: the Deployment, not prod's PyTorchJob (its patch
    // finding stays out, its render did not change).
    assert!(!places(&value).contains(&place(
        "GPU002",
        "overlays/prod/workers.yaml:6",
        "overlays/prod"
    )));
    let objects: std::collections::BTreeSet<String> = value["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["object"]["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(objects, ["Deployment".to_string()].into(), "{value:#}");
    git(&repo.dir, &["checkout", "-q", "--", "."]);
    // Only prod's patch changes.
    let patch = repo
        .read("overlays/prod/memory.yaml")
        .replace("24Gi", "20Gi");
    repo.write("overlays/prod/memory.yaml", &patch);
    let value = repo.json(&[".", "--changed-since", "HEAD"]);
    assert_eq!(renders_of(&value), ["overlays/prod"]);
    assert!(places(&value).contains(&place("QOS002", "base/deploy.yaml:22", "overlays/prod")));
    // Nothing changed: nothing reported, the plain file neither.
    git(&repo.dir, &["checkout", "-q", "--", "."]);
    let value = repo.json(&[".", "--changed-since", "HEAD"]);
    assert_eq!(value["findings"].as_array().unwrap().len(), 0, "{value:#}");
}

#[test]
fn a_fix_over_fields_from_two_files_becomes_an_overlay_patch() {
    // Prod's patch sets the memory limit, the shared base the request: MEM001 sets both (one
    // fix, edits in two files), which no single in-place edit can do.
    let repo = Repo::new();
    let patch = repo
        .read("overlays/prod/memory.yaml")
        .replace("            requests:\n              memory: 24Gi\n", "");
    repo.write("overlays/prod/memory.yaml", &patch);
    let mut want = repo.kubectl("overlays/prod");
    let llm = object(&mut want, "Deployment", "llm");
    *container(llm, &format!("{LLM}/limits/memory")) = "42Gi".into();
    *container(llm, &format!("{LLM}/requests/memory")) = "42Gi".into();
    let (code_8, _, stderr) = repo.gpulint(&[
        "overlays/prod",
        "--metrics",
        "metrics.json",
        "--select",
        "MEM001",
        "--fix",
    ]);
    assert_eq!(code_8, 0, "{stderr}");
    assert!(
        stderr.contains("fixed overlays/prod/gpulint-deployment-llm.yaml:14: MEM001"),
        "{stderr}"
    );
    assert_eq!(repo.read("overlays/prod/memory.yaml"), patch);
    assert_eq!(repo.kubectl("overlays/prod"), want);
}

const PYTORCHJOB: &str = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: sft\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            image: nvcr.io/nvidia/pytorch:24.05\n            resources:\n              requests: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: 4}\n              limits: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: 4}\n";

#[test]
fn a_strategic_merge_patch_that_replaces_a_crds_container_list_is_kus001() {
    let repo = Repo::new();
    repo.write("crd/base/job.yaml", PYTORCHJOB);
    repo.write("crd/base/kustomization.yaml", "resources:\n- job.yaml\n");
    // The patch meant to raise the GPU count; on a CRD it replaces the whole containers list.
    repo.write(
        "crd/smp/kustomization.yaml",
        "resources:\n- ../base\npatches:\n- path: gpus.yaml\n",
    );
    repo.write(
        "crd/smp/gpus.yaml",
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: sft\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers:\n          - name: pytorch\n            resources:\n              requests: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: 8}\n              limits: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: 8}\n",
    );
    // The same change as a JSON 6902 patch keeps the container.
    repo.write(
        "crd/json/kustomization.yaml",
        "resources:\n- ../base\npatches:\n- target: {kind: PyTorchJob, name: sft}\n  patch: |-\n    - op: replace\n      path: /spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/resources/limits/nvidia.com~1gpu\n      value: 8\n    - op: replace\n      path: /spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/resources/requests/nvidia.com~1gpu\n      value: 8\n",
    );
    // The oracle agrees on what the render loses.
    let image = |overlay: &str| {
        repo.kubectl(overlay)[0]
            .pointer("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image")
            .cloned()
    };
    assert_eq!(image("crd/smp"), None);
    assert_eq!(
        image("crd/json"),
        Some(Value::from("nvcr.io/nvidia/pytorch:24.05"))
    );

    let report = repo.json(&["crd"]);
    let kus: Vec<(String, String, String)> = places(&report)
        .into_iter()
        .filter(|(rule, _, _)| rule == "KUS001")
        .collect();
    assert_eq!(kus, [place("KUS001", "crd/smp/gpus.yaml:11", "crd/smp")]);
}

#[test]
fn the_patches_of_an_overlay_that_does_not_render_are_not_linted_raw() {
    let repo = Repo::new();
    // The overlay names a resource that is not there: a render error, and its patch (a partial
    // Deployment with a GPU request and no limit) must not turn into a raw GPU001.
    repo.write(
        "broken/kustomization.yaml",
        "resources:\n- missing.yaml\npatches:\n- path: gpus.yaml\n",
    );
    repo.write(
        "broken/gpus.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        resources:\n          requests:\n            nvidia.com/gpu: 2\n",
    );
    let (code, stdout, stderr) = repo.gpulint(&["broken", "--format", "json"]);
    assert_eq!(code, 2, "a render error exits 2: {stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["findings"], serde_json::json!([]), "{stdout}");
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{stdout}");
    assert_eq!(errors[0]["file"], "broken/kustomization.yaml");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("missing.yaml"));
}
