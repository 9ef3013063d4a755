//! pre-commit in a Kustomize monorepo: a named file is linted through the roots that read it,
//! found from the kustomization files without rendering the others; in a git work tree, the
//! kustomization files are listed by git's index (as pre-commit commits them), elsewhere by a
//! walk. Counts, not times (the times are in bench/monorepo.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

use gpulint::config::Config;
use gpulint::source::discover::discover;

use crate::support::common::{git, gpulint, write_files};

/// `bench/gen_monorepo.py`'s tree, small: 20 overlays over 10 bases (overlay i uses base i % 10),
/// committed.
fn monorepo() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = untracked_monorepo();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "monorepo"]);
    (tmp, root)
}

/// The same tree in a git work tree where nothing is added yet: found by the walk.
fn untracked_monorepo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_monorepo.py");
    let status = Command::new("python3")
        .arg(&generator)
        .arg(&root)
        .args(["20", "10"])
        .status()
        .expect("python3 runs");
    assert!(status.success(), "gen_monorepo.py failed");
    git(&root, &["init", "-q"]);
    (tmp, root)
}

/// The roots a run naming `named` renders, sorted.
fn roots_for(root: &Path, named: &str) -> Vec<String> {
    let found = discover(&[root.join(named)], &Config::default(), Some(root));
    let mut roots: Vec<String> = found
        .roots
        .iter()
        .map(|r| r.strip_prefix(root).unwrap_or(r).display().to_string())
        .collect();
    roots.sort();
    roots
}

/// `gpulint NAMED --format json` in `root`: its exit code, its output and the files its
/// findings are in.
fn lint_named(root: &Path, named: &str) -> (Option<i32>, String, Vec<String>) {
    let out = gpulint()
        .args([named, "--format", "json"])
        .current_dir(root)
        .output()
        .expect("gpulint runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let files = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["file"].as_str().map(str::to_string))
        .collect();
    (out.status.code(), stdout, files)
}

#[test]
fn one_named_patch_renders_one_root() {
    for (_tmp, root) in [monorepo(), untracked_monorepo()] {
        assert_eq!(
            roots_for(&root, "apps/app7/overlays/prod/patch.yaml"),
            ["apps/app7/overlays/prod"]
        );
    }
}

#[test]
fn a_named_base_file_renders_the_base_and_every_overlay_over_it() {
    for (_tmp, root) in [monorepo(), untracked_monorepo()] {
        a_named_base_file_renders_the_base_and_every_overlay_over_it_in(&root);
    }
}

fn a_named_base_file_renders_the_base_and_every_overlay_over_it_in(root: &Path) {
    assert_eq!(
        roots_for(root, "bases/base7/deployment.yaml"),
        [
            "apps/app17/overlays/prod",
            "apps/app7/overlays/prod",
            "bases/base7"
        ]
    );
    // The kustomization file itself is read by its root.
    assert_eq!(
        roots_for(root, "bases/base3/kustomization.yaml"),
        [
            "apps/app13/overlays/prod",
            "apps/app3/overlays/prod",
            "bases/base3"
        ]
    );
}

#[test]
fn the_finding_of_a_named_patch_lands_in_it() {
    let (_tmp, root) = monorepo();
    let (code, stdout, files) = lint_named(&root, "apps/app7/overlays/prod/patch.yaml");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(!files.is_empty(), "the overlay's GPU findings are reported");
    assert!(
        files
            .iter()
            .all(|f| f == "apps/app7/overlays/prod/patch.yaml" || f.starts_with("bases/base7/")),
        "only app7's render is linted: {files:?}"
    );
    assert!(
        files.contains(&"apps/app7/overlays/prod/patch.yaml".to_string()),
        "the limit the patch wrote is reported there: {files:?}"
    );
}

/// A second overlay over base7, with a patch of its own, written after the commit.
fn add_overlay(root: &Path) {
    write_files(
        root,
        &[
            (
                "apps/new/overlays/prod/kustomization.yaml",
                "namePrefix: new-\nresources:\n- ../../../../bases/base7\npatches:\n- path: patch.yaml\n",
            ),
            (
                "apps/new/overlays/prod/patch.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app7}\n",
            ),
        ],
    );
}

const BASE7: [&str; 3] = [
    "apps/app17/overlays/prod",
    "apps/app7/overlays/prod",
    "bases/base7",
];

/// In a git work tree the index lists the kustomizations (one file read, not a walk of every
/// folder): an overlay not yet added is not looked at for a named base file, as pre-commit
/// would not commit it; once staged it is.
#[test]
fn an_overlay_git_does_not_track_is_not_looked_at_until_it_is_added() {
    let (_tmp, root) = monorepo();
    add_overlay(&root);
    assert_eq!(roots_for(&root, "bases/base7/deployment.yaml"), BASE7);
    // Its own patch, named before `git add` (by hand, not by pre-commit): untracked itself, so
    // the walk finds the overlay that reads it, and the patch is linted through it.
    assert_eq!(
        roots_for(&root, "apps/new/overlays/prod/patch.yaml"),
        ["apps/new/overlays/prod"]
    );
    git(&root, &["add", "apps/new"]);
    assert_eq!(
        roots_for(&root, "bases/base7/deployment.yaml"),
        [
            "apps/app17/overlays/prod",
            "apps/app7/overlays/prod",
            "apps/new/overlays/prod",
            "bases/base7"
        ]
    );
}

/// A file marked skip-worktree (a local config file, or a sparse checkout's) keeps the index
/// listing: the overlays are still those git tracks.
#[test]
fn a_skip_worktree_file_keeps_the_index_listing() {
    let (_tmp, root) = monorepo();
    add_overlay(&root);
    git(
        &root,
        &[
            "update-index",
            "--skip-worktree",
            "apps/app3/overlays/prod/patch.yaml",
        ],
    );
    assert_eq!(roots_for(&root, "bases/base7/deployment.yaml"), BASE7);
}

/// Where the index does not list every file of the checkout (a submodule's files are in its
/// own index; so is nothing before the first `git add`), the walk finds the kustomizations,
/// untracked ones included.
#[test]
fn a_submodule_or_an_empty_index_falls_back_to_the_walk() {
    let with_new = [
        "apps/app17/overlays/prod",
        "apps/app7/overlays/prod",
        "apps/new/overlays/prod",
        "bases/base7",
    ];
    let (_tmp, root) = untracked_monorepo();
    add_overlay(&root);
    assert_eq!(roots_for(&root, "bases/base7/deployment.yaml"), with_new);

    let (_tmp, root) = monorepo();
    add_overlay(&root);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let gitlink = format!("160000,{},vendor/sub", head.trim());
    git(&root, &["update-index", "--add", "--cacheinfo", &gitlink]);
    assert_eq!(roots_for(&root, "bases/base7/deployment.yaml"), with_new);
}

/// A folder the index lists, swapped in the work tree for a symlink out of the repository, is
/// not read through (the kernel refuses the link on the way): the overlay there counts as
/// reading anything, so it is rendered, and its render is refused like any path leaving the
/// repository.
#[cfg(unix)]
#[test]
fn a_tracked_folder_swapped_for_a_symlink_out_is_not_read_through() {
    let (tmp, root) = monorepo();
    let outside = tmp.path().join("outside");
    write_files(
        &outside,
        &[
            ("kustomization.yaml", "resources:\n- deployment.yaml\n"),
            (
                "deployment.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: leaked}\n",
            ),
        ],
    );
    let overlay = root.join("apps/app3/overlays/prod");
    std::fs::remove_dir_all(&overlay).expect("overlay removed");
    std::os::unix::fs::symlink(&outside, &overlay).expect("symlink");
    // Refused, not read: a kustomization that cannot be read counts as reading anything, so
    // the overlay is among the roots looked at for base7 (read through the link, it would read
    // only the outside file and not be).
    let roots = roots_for(&root, "bases/base7/deployment.yaml");
    assert!(
        roots.contains(&"apps/app3/overlays/prod".to_string()),
        "{roots:?}"
    );
    let (_, stdout, files) = lint_named(&root, "bases/base7/deployment.yaml");
    assert!(!stdout.contains("leaked"), "{stdout}");
    assert!(
        files.iter().all(|f| f.starts_with("bases/base7/")
            || f.starts_with("apps/app7/")
            || f.starts_with("apps/app17/")),
        "only base7 and its overlays: {files:?}"
    );
    assert!(!files.is_empty(), "base7's findings are still reported");
}

/// Planning the fixes (which every lint does, to say what `--fix` writes) costs the same per
/// overlay however big the repository: the run's files are shared out once, and an overlay
/// whose one fix verifies alone is rendered once. With the run's files copied and indexed per
/// render, a 1,000-overlay repository's lint took 15 times as long as its 200-overlay share.
#[test]
fn planning_fixes_shares_the_files_once_and_renders_each_overlay_once() {
    use gpulint::lint::{Linter, Selection};
    let (_tmp, root) = monorepo();
    let linter = Linter::new(Config::default(), Selection::default());
    let run = linter.run(std::slice::from_ref(&root));
    // Each overlay's patch sets a GPU request above its limit: one safe fix per overlay.
    let gpu002 = run
        .findings
        .iter()
        .filter(|f| f.rule.id == "GPU002")
        .count();
    assert_eq!(gpu002, 20);
    let plan = gpulint::fix::plan::plan(&linter, &run, false);
    assert_eq!(plan.files.len(), 20, "one patch fixed per overlay");
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    assert_eq!(
        plan.work,
        gpulint::fix::plan::PlanWork {
            kustomize_renders: 20,
            reader_renders: 0,
            file_sets: 1,
        }
    );
}

/// pre-commit naming one overlay's patch: whether another render reads a file is asked only for
/// the files a fix would edit in place, and answered by rendering only the roots outside the
/// run whose kustomization files may lead to it. The patch is the overlay's own: no render. A
/// fix in a base two overlays use: the other overlay (and the base) are rendered, and the base
/// is not edited for one overlay.
#[test]
fn a_named_files_fix_plan_renders_only_the_roots_that_may_read_its_files() {
    use gpulint::lint::{Linter, Selection};
    use gpulint::source::units::RenderSettings;
    let (_tmp, root) = monorepo();
    let mut linter = Linter::new(Config::default(), Selection::default());
    linter.render = RenderSettings {
        boundary: Some(root.clone()),
        ..RenderSettings::default()
    };
    let run = linter.run(&[root.join("apps/app7/overlays/prod/patch.yaml")]);
    let plan = gpulint::fix::plan::plan(&linter, &run, false);
    assert_eq!(plan.files.len(), 1, "the named overlay's patch is fixed");
    assert_eq!(plan.work.reader_renders, 0, "{:?}", plan.work);

    // A GPU request above its limit in a shared base, linted through one overlay.
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path().canonicalize().expect("canonical temp dir");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n          image: x:1\n          resources:\n            requests: {nvidia.com/gpu: 2, cpu: \"1\", memory: 1Gi}\n            limits: {nvidia.com/gpu: 1, cpu: \"1\", memory: 1Gi}\n";
    write_files(
        &repo,
        &[
            ("base/deployment.yaml", deployment),
            ("base/kustomization.yaml", "resources: [deployment.yaml]\n"),
            (
                "prod/kustomization.yaml",
                "resources: [../base]\nnamePrefix: prod-\n",
            ),
            (
                "staging/kustomization.yaml",
                "resources: [../base]\nnamePrefix: staging-\n",
            ),
            ("unrelated/kustomization.yaml", "resources: [cm.yaml]\n"),
            (
                "unrelated/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
            ),
        ],
    );
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "repo"]);
    linter.render.boundary = Some(repo.clone());
    let run = linter.run(&[repo.join("prod/kustomization.yaml")]);
    let plan = gpulint::fix::plan::plan(&linter, &run, false);
    // staging's overlay and the base root: not `unrelated/`.
    assert_eq!(plan.work.reader_renders, 2, "{:?}", plan.work);
    let written: Vec<String> = plan.files.iter().map(|f| f.name.clone()).collect();
    assert!(
        !written.iter().any(|n| n.contains("base/")),
        "the shared base is not edited for one overlay: {written:?}"
    );
    assert!(
        written.iter().any(|n| n.contains("prod/")),
        "the fix is a patch of the prod overlay: {written:?}"
    );
}
