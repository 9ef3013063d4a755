//! Resource bombs and bounds from a hostile pull request (issue 10): each input must end quickly
//! with an input error that names the file and line, never run for minutes or eat gigabytes.

use std::path::Path;

use std::time::Duration;

use crate::support::common::{gpulint, run_within};

/// Runs gpulint in `dir`; a run past `limit` is killed and fails the test. Returns the exit
/// code and stdout followed by stderr.
fn gpulint_within(dir: &Path, args: &[&str], limit: Duration) -> (i32, String) {
    let out = run_within(gpulint().current_dir(dir).args(args), limit);
    (out.code, out.stdout + &out.stderr)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// 2,000 documents, each expanding its aliases to about 80,000 nodes: under a per-document
/// budget this took 64 s and 8 GB; the per-file budget stops it at the first document.
#[test]
fn alias_bomb_spread_over_documents_is_an_error_quickly() {
    let repo = tempfile::tempdir().unwrap();
    let doc = "a: &a [x, x, x, x, x, x, x, x, x, x]\n\
               b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
               c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n\
               d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
               e: [*d, *d, *d, *d, *d, *d, *d]\n";
    write(
        &repo.path().join("bomb.yaml"),
        &vec![doc; 2000].join("---\n"),
    );
    let (code, out) = gpulint_within(repo.path(), &["."], Duration::from_secs(60));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("possible alias bomb"), "{out}");
    assert!(out.contains("bomb.yaml:11:5"), "{out}");
}

/// A second `limits:` in the same mapping must not silently hide the first (the API server's
/// strict decoding rejects it): an input error naming both lines.
#[test]
fn duplicate_mapping_keys_are_an_input_error_naming_both_lines() {
    let repo = tempfile::tempdir().unwrap();
    write(
        &repo.path().join("deploy.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      \
         containers:\n        - name: train\n          image: train:1\n          resources:\n            \
         limits:\n              nvidia.com/gpu: 1\n            requests:\n              cpu: 1\n            \
         limits:\n              cpu: 2\n",
    );
    let (code, out) = gpulint_within(repo.path(), &["."], Duration::from_secs(60));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("duplicate mapping key 'limits' at line 16 (first at line 12)"),
        "{out}"
    );
    assert!(out.contains("deploy.yaml:16:13"), "{out}");
}

/// A Kustomize diamond: `levels` levels, each including the next twice under two name prefixes,
/// over one ConfigMap: 2^levels objects from 3 * levels + 2 tiny files.
fn diamond(root: &Path, levels: usize) {
    for i in 0..levels {
        write(
            &root.join(format!("l{i}/kustomization.yaml")),
            "resources:\n- x\n- y\n",
        );
        for side in ["x", "y"] {
            write(
                &root.join(format!("l{i}/{side}/kustomization.yaml")),
                &format!("namePrefix: {side}-\nresources:\n- ../../l{}\n", i + 1),
            );
        }
    }
    write(
        &root.join(format!("l{levels}/kustomization.yaml")),
        "resources:\n- cm.yaml\n",
    );
    write(
        &root.join(format!("l{levels}/cm.yaml")),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    );
}

/// 47 tiny files: 15 levels, each including the next twice, expand to 32,768 objects (58 s and
/// 500 MB before). Bases are built once and the object cap makes it an error at its line.
#[test]
fn kustomize_diamond_hits_the_object_cap_quickly() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    diamond(root, 15);
    let (code, out) = gpulint_within(root, &["l0"], Duration::from_secs(60));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("more than the 10000 a render may hold")
            && out.contains("--max-render-objects raises the cap"),
        "{out}"
    );
    assert!(out.contains("l1/kustomization.yaml:3:3"), "{out}");
}

/// The cap is the command line's to move, both ways: a user with a big legitimate render raises
/// it, a cautious CI lowers it.
#[test]
fn the_command_line_moves_the_object_cap() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    diamond(root, 14); // 16,384 objects
    let (code, out) = gpulint_within(
        root,
        &["render", "l0", "--max-render-objects", "20000"],
        Duration::from_secs(120),
    );
    assert_eq!(code, 0, "{}", &out[..out.len().min(2000)]);
    assert_eq!(out.matches("kind: ConfigMap").count(), 16_384);
    let (code, out) = gpulint_within(
        root,
        &["l12", "--max-render-objects", "3"],
        Duration::from_secs(60),
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("more than the 3 a render may hold"), "{out}");
    let (code, out) = gpulint_within(
        root,
        &["l13", "--max-render-objects", "0"],
        Duration::from_secs(60),
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--max-render-objects"), "{out}");
}

/// Names with terminal escape sequences (a title change, a screen clear, a bidi override) are
/// printed escaped in every output, never raw.
#[test]
fn control_characters_in_names_are_escaped_in_every_output() {
    let repo = tempfile::tempdir().unwrap();
    write(
        &repo.path().join("d.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"train\\e]0;pwned\\a\"\nspec:\n  \
         template:\n    spec:\n      containers:\n        - name: \"gpu\\e[2J\\u202Ex\\x9b\"\n          \
         image: train:1\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    let raw = |s: &str| {
        s.chars()
            .any(|c| matches!(c, '\u{1b}' | '\u{7}' | '\u{9b}' | '\u{202E}'))
    };
    for args in [
        &["--format", "human", "."][..],
        &["--format", "github", "."],
        &["--format", "json", "."],
        &["--format", "sarif", "."],
        &["inventory", "."],
    ] {
        let (code_1, out) = gpulint_within(repo.path(), args, Duration::from_secs(300));
        assert_eq!(code_1, i32::from(args[0] != "inventory"), "{out}");
        assert!(out.contains("gpu"), "{args:?}: {out}");
        assert!(
            !raw(&out),
            "{args:?} printed a control character raw:\n{out}"
        );
    }
}

/// Issue 24: a chain of 6,000 kustomizations (`k/i` includes `../i+1`) overflowed the stack
/// (SIGABRT). Nesting is capped: an error at the entry that goes too deep, within seconds.
#[test]
fn a_deep_kustomize_chain_is_an_error_not_a_stack_overflow() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    let n = 6000;
    for i in 0..n - 1 {
        write(
            &root.join(format!("k/{i}/kustomization.yaml")),
            &format!("resources:\n- ../{}\n", i + 1),
        );
    }
    write(
        &root.join(format!("k/{}/kustomization.yaml", n - 1)),
        "resources:\n- cm.yaml\n",
    );
    write(
        &root.join(format!("k/{}/cm.yaml", n - 1)),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    for args in [&["render", "k/0"][..], &["k/0"][..]] {
        let (code, out) = gpulint_within(root, args, Duration::from_secs(60));
        assert_eq!(code, 2, "{args:?}: {}", &out[..out.len().min(2000)]);
        assert!(
            out.contains("k/99/kustomization.yaml:2:3")
                && out.contains("more than 100 nested kustomizations"),
            "{args:?}: {}",
            &out[..out.len().min(2000)]
        );
    }
    // The last 100 levels still render.
    let (code, out) = gpulint_within(root, &["render", "k/5900"], Duration::from_secs(60));
    assert_eq!(code, 0, "{}", &out[..out.len().min(2000)]);
    assert!(out.contains("kind: ConfigMap"), "{out}");
}

/// A chart at `dir` whose template is `body`.
fn chart(dir: &Path, body: &str) {
    write(
        &dir.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    write(&dir.join("values.yaml"), "a: 1\n");
    write(&dir.join("templates/cm.yaml"), body);
}

/// Issue 24: Helm had a timeout per release but none per run (4 Applications on a busy-loop
/// chart took 252 s), and no cap on what it prints. The run's budget (`--render-budget`) is
/// shared by every release: past it, each one left is an error of its own; a release that
/// prints more than the cap is an error, not gigabytes in memory.
#[test]
fn helm_runs_share_the_run_budget_and_their_output_is_capped() {
    let helm = crate::support::common::helm();
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    chart(
        &root.join("charts/busy"),
        "{{- range until 20000 }}{{- range until 20000 }}{{- end }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    );
    for i in 0..4 {
        write(
            &root.join(format!("apps/app{i}.yaml")),
            &format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app{i}\nspec:\n  source:\n    path: charts/busy\n  destination:\n    namespace: ml\n"),
        );
    }
    let helm = helm.to_str().unwrap();
    let out = run_within(
        gpulint().current_dir(root).args([
            "--helm",
            helm,
            "--render-budget",
            "3",
            "--format",
            "json",
            ".",
        ]),
        Duration::from_secs(60),
    );
    let all = out.stdout.clone() + &out.stderr;
    assert!(
        out.elapsed < Duration::from_secs(40),
        "{:?}: {all}",
        out.elapsed
    );
    assert_eq!(out.code, 2, "{all}");
    assert_eq!(
        all.matches("the run's 3 s for renderers (--render-budget) are spent")
            .count(),
        4,
        "{all}"
    );
    // 100 MB of output: stopped at the cap.
    std::fs::remove_dir_all(root.join("apps")).unwrap();
    chart(
        &root.join("charts/busy"),
        "data: {{ repeat 100000000 \"x\" }}\n",
    );
    let out = run_within(
        gpulint()
            .current_dir(root)
            .args(["--helm", helm, "--format", "json", "."]),
        Duration::from_secs(120),
    );
    let all = out.stdout.clone() + &out.stderr;
    assert_eq!(out.code, 2, "{}", &all[..all.len().min(2000)]);
    assert!(
        all.contains("helm printed more than 64 MiB"),
        "{}",
        &all[..all.len().min(2000)]
    );
}

/// Issue 24: every folder of a chain of kustomizations is a root, and each was rendered on its
/// own: 100 levels with 3,000 objects and a `namePrefix` at each took 39 s (debug build). A
/// root that a render which succeeded already built is linted through it and not rendered again.
#[test]
fn a_chain_of_roots_is_rendered_once() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let n = 100;
    for i in 0..n - 1 {
        write(
            &root.join(format!("k/{i}/kustomization.yaml")),
            &format!("resources:\n- ../{}\nnamePrefix: p-\n", i + 1),
        );
    }
    write(
        &root.join(format!("k/{}/kustomization.yaml", n - 1)),
        "resources:\n- cm.yaml\n",
    );
    let objects: String = (0..3000)
        .map(|j| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{j}}}\n"))
        .collect();
    write(&root.join(format!("k/{}/cm.yaml", n - 1)), &objects);
    let out = run_within(
        gpulint().current_dir(root).args(["--format", "json", "."]),
        Duration::from_secs(120),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.elapsed < Duration::from_secs(20),
        "{:?}: each root of the chain was rendered again",
        out.elapsed
    );
}
