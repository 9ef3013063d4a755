//! pre-commit in a Kustomize monorepo: a named file is linted through the roots that read it,
//! found from the kustomization files without rendering the others. Counts, not times (the
//! times are in bench/monorepo.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

use gpulint::config::Config;
use gpulint::source::discover::discover;

use crate::support::common::{git, gpulint};

/// `bench/gen_monorepo.py`'s tree, small: 20 overlays over 10 bases (overlay i uses base i % 10).
fn monorepo() -> (tempfile::TempDir, PathBuf) {
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

#[test]
fn one_named_patch_renders_one_root() {
    let (_tmp, root) = monorepo();
    assert_eq!(
        roots_for(&root, "apps/app7/overlays/prod/patch.yaml"),
        ["apps/app7/overlays/prod"]
    );
}

#[test]
fn a_named_base_file_renders_the_base_and_every_overlay_over_it() {
    let (_tmp, root) = monorepo();
    assert_eq!(
        roots_for(&root, "bases/base7/deployment.yaml"),
        [
            "apps/app17/overlays/prod",
            "apps/app7/overlays/prod",
            "bases/base7"
        ]
    );
    // The kustomization file itself is read by its root.
    assert_eq!(
        roots_for(&root, "bases/base3/kustomization.yaml"),
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
    let out = gpulint()
        .args(["apps/app7/overlays/prod/patch.yaml", "--format", "json"])
        .current_dir(&root)
        .output()
        .expect("gpulint runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    let files: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["file"].as_str())
        .collect();
    assert!(!files.is_empty(), "the overlay's GPU findings are reported");
    assert!(
        files
            .iter()
            .all(|f| *f == "apps/app7/overlays/prod/patch.yaml" || f.starts_with("bases/base7/")),
        "only app7's render is linted: {files:?}"
    );
    assert!(
        files.contains(&"apps/app7/overlays/prod/patch.yaml"),
        "the limit the patch wrote is reported there: {files:?}"
    );
}
