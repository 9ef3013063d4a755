//! A hostile pull request, programs and files: nothing in the linted repository can make gpulint
//! run a program, fetch a URL, or read a file outside the repository. One test per attack, each
//! through the binary, asserting what the issue asks: no program ran (a sentinel file is not
//! created), nothing outside the repository was read (a secret placed outside never appears in
//! any output), no connection was made, and the exit code and message are as specified.

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::common::{gpulint, kubectl, run_within, Finished};

const SECRET: &str = "s3cr3t-0utside-the-repo";

/// A scratch area: `repo/` (a git work tree: it has `.git`) and `outside/` next to it, holding
/// the secret, and the sentinel path a hostile program would create.
struct Scene {
    _tmp: tempfile::TempDir,
    base: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("repo/.git")).unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/secret.txt"), SECRET).unwrap();
        fs::write(
            base.join("outside/x.yaml"),
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {SECRET}\nspec:\n  template:\n    spec:\n      containers:\n      - name: {SECRET}\n        image: x\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
            ),
        )
        .unwrap();
        Scene { _tmp: tmp, base }
    }

    fn repo(&self) -> PathBuf {
        self.base.join("repo")
    }

    fn sentinel(&self) -> PathBuf {
        self.base.join("PWNED")
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.repo().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    /// An executable in the repository that creates the sentinel when run.
    fn evil_script(&self, rel: &str) {
        let p = self.write(
            rel,
            &format!("#!/bin/sh\ntouch '{}'\ncat\n", self.sentinel().display()),
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A `helm` stand-in given on the command line: logs its arguments one a line, and acts on
    /// `--post-renderer=` as Helm does (runs it), so a flag smuggled in a name shows.
    fn logging_helm(&self) -> PathBuf {
        let p = self.base.join("bin/helm");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(
            &p,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> '{log}'; done\necho '--end--' >> '{log}'\n\
                 for a in \"$@\"; do case \"$a\" in --post-renderer=*) sh \"${{a#--post-renderer=}}\" </dev/null ;; esac; done\n\
                 echo '---'\necho '# Source: c/templates/cm.yaml'\necho 'apiVersion: v1'\necho 'kind: ConfigMap'\necho 'metadata: {{name: x}}'\n",
                log = self.helm_log().display()
            ),
        )
        .unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn helm_log(&self) -> PathBuf {
        self.base.join("helm.log")
    }

    fn chart(&self, rel: &str) {
        self.write(
            &format!("{rel}/Chart.yaml"),
            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        );
        self.write(&format!("{rel}/values.yaml"), "a: 1\n");
        self.write(
            &format!("{rel}/templates/cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        );
    }
}

type Out = Finished;

impl Finished {
    fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// The input errors of a `--format json` run as `file:line:column: message` lines, then
    /// stderr (notes, config errors).
    fn located(&self) -> String {
        let mut text = String::new();
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&self.stdout) {
            for e in json["errors"].as_array().into_iter().flatten() {
                text.push_str(&format!(
                    "{}:{}:{}: {}\n",
                    e["file"].as_str().unwrap_or_default(),
                    e["line"],
                    e["column"],
                    e["message"].as_str().unwrap_or_default()
                ));
            }
        }
        text + &self.stderr
    }
}

/// Runs gpulint in `dir` with `env`, killed after `limit`.
fn gpulint_with(dir: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Out {
    let mut cmd = gpulint();
    cmd.current_dir(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_within(&mut cmd, limit)
}

fn run(dir: &Path, args: &[&str]) -> Out {
    gpulint_with(dir, args, &[], Duration::from_secs(60))
}

/// A lint run with JSON output.
fn lint(dir: &Path, args: &[&str]) -> Out {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    run(dir, &all)
}

/// A listener on 127.0.0.1 that counts connections (a fetch of a URL in the repository).
fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, count)
}

#[test]
fn helm_named_in_the_config_is_refused_and_never_run() {
    let s = Scene::new();
    s.evil_script("evil.sh");
    s.write(".gpulint.yaml", "rules: {}\nhelm: ./evil.sh\n");
    s.chart("charts/c");
    let out = run(&s.repo(), &["."]);
    assert!(!s.sentinel().exists(), "the repository's helm ran");
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located().contains(".gpulint.yaml:2:7")
            && out
                .located()
                .contains("`helm:` is not read from a repository file")
            && out.located().contains("--helm PATH")
            && out.located().contains("GPULINT_HELM"),
        "{}",
        out.all()
    );
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
spec:
  source:
    path: charts/c
    helm:
      releaseName: RELEASE
  destination:
    namespace: NAMESPACE
";

fn app(name: &str, release: &str, namespace: &str) -> String {
    APP.replace("NAMESPACE", namespace)
        .replace("RELEASE", release)
        .replace("NAME", name)
}

#[test]
fn an_argo_release_name_never_reaches_helm_as_a_flag() {
    let s = Scene::new();
    s.evil_script("evil.sh");
    s.chart("charts/c");
    s.write(
        "apps/evil.yaml",
        &app("evil", "\"--post-renderer=./evil.sh\"", "ml"),
    );
    // A second Application of the same chart is still rendered: the run goes on.
    s.write("apps/good.yaml", &app("good", "good", "ml"));
    let helm = s.logging_helm();
    let out = lint(&s.repo(), &["--helm", helm.to_str().unwrap(), "."]);
    assert!(
        !s.sentinel().exists(),
        "a post-renderer named in a manifest ran"
    );
    let log = fs::read_to_string(s.helm_log()).unwrap_or_default();
    assert!(!log.contains("--post-renderer"), "{log}");
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located().contains("apps/evil.yaml:9:20: helm: release name \"--post-renderer=./evil.sh\" is not a DNS-1123 subdomain"),
        "{}",
        out.all()
    );
    // The good release was rendered, its names after `--`.
    assert!(
        log.contains("--namespace=ml\n--\ngood\n") || log.contains("\n--\ngood\n"),
        "{log}"
    );
}

#[test]
fn a_flux_release_name_or_namespace_never_reaches_helm_as_a_flag() {
    let s = Scene::new();
    s.chart("charts/c");
    s.write(
        "apps/flux.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: x\n  namespace: ml\nspec:\n  releaseName: --set-file=x=/etc/shadow\n  chart:\n    spec:\n      chart: charts/c\n      sourceRef: {kind: GitRepository, name: repo}\n",
    );
    s.write(
        "apps/flux-ns.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: y\n  namespace: ml\nspec:\n  targetNamespace: --kubeconfig=/etc/shadow\n  releaseName: y\n  chart:\n    spec:\n      chart: charts/c\n      sourceRef: {kind: GitRepository, name: repo}\n",
    );
    let helm = s.logging_helm();
    let out = lint(&s.repo(), &["--helm", helm.to_str().unwrap(), "."]);
    let log = fs::read_to_string(s.helm_log()).unwrap_or_default();
    assert!(
        !log.contains("/etc/shadow"),
        "a manifest's name reached helm: {log}"
    );
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("apps/flux.yaml:7:16: helm: release name"),
        "{}",
        out.all()
    );
    assert!(
        out.located()
            .contains("apps/flux-ns.yaml:7:20: helm: namespace"),
        "{}",
        out.all()
    );
}

#[test]
fn argo_values_files_that_are_fifos_or_devices_are_not_read() {
    let s = Scene::new();
    s.chart("charts/c");
    let fifo = s.repo().join("charts/c/fifo.yaml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    symlink("/dev/zero", s.repo().join("charts/c/zero.yaml")).unwrap();
    s.write(
        "apps/a.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\nspec:\n  source:\n    path: charts/c\n    helm:\n      valueFiles: [fifo.yaml]\n  destination:\n    namespace: ml\n",
    );
    s.write(
        "apps/b.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: b\nspec:\n  source:\n    path: charts/c\n    helm:\n      valueFiles: [zero.yaml]\n      fileParameters:\n      - name: x\n        path: fifo.yaml\n  destination:\n    namespace: ml\n",
    );
    let helm = s.logging_helm();
    let out = gpulint_with(
        &s.repo(),
        &["--format", "json", "--helm", helm.to_str().unwrap(), "."],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("apps/a.yaml:9:20: helm: values file fifo.yaml not a regular file (a FIFO)"),
        "{}",
        out.all()
    );
    assert!(
        out.located().contains("apps/b.yaml:9:20: helm: values file zero.yaml resolves to /dev/zero, outside the repository"),
        "{}",
        out.all()
    );
    assert!(
        out.located().contains(
            "apps/b.yaml:12:15: helm: file parameter fifo.yaml not a regular file (a FIFO)"
        ),
        "{}",
        out.all()
    );
}

#[test]
fn a_remote_kustomize_resource_is_an_error_and_never_fetched() {
    let s = Scene::new();
    let (port, connections) = counting_listener();
    s.write(
        "app/kustomization.yaml",
        &format!("resources:\n- deploy.yaml\n- http://127.0.0.1:{port}/x.yaml\n"),
    );
    s.write(
        "app/deploy.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    let out = lint(&s.repo(), &["."]);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "a URL in the repository was fetched"
    );
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("app/kustomization.yaml:3:3: kustomize: remote resource not rendered"),
        "{}",
        out.all()
    );
}

#[test]
fn a_remote_base_behind_an_unsupported_feature_is_not_handed_to_kubectl() {
    let s = Scene::new();
    let (port, connections) = counting_listener();
    // A generator makes the built-in renderer hand the root to the external tool; the remote
    // resource is in a base the built-in renderer never reached.
    s.write(
        "app/kustomization.yaml",
        "resources:\n- ../base\nconfigMapGenerator:\n- name: c\n  literals: [a=b]\n",
    );
    s.write(
        "base/kustomization.yaml",
        &format!("resources:\n- http://127.0.0.1:{port}/x.yaml\n"),
    );
    // A `kubectl` on PATH that would fetch (here: it records that it ran).
    let bin = s.base.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("kubectl");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\ntouch '{}'\necho 'apiVersion: v1'\necho 'kind: ConfigMap'\necho 'metadata: {{name: c}}'\n",
            s.sentinel().display()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let out = gpulint_with(
        &s.repo(),
        &["--format", "json", "app"],
        &[("PATH", &path)],
        Duration::from_secs(60),
    );
    assert!(
        !s.sentinel().exists(),
        "kubectl ran on a tree with a remote resource"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("base/kustomization.yaml:2:3: kustomize: remote resource not rendered"),
        "{}",
        out.all()
    );
}

#[test]
fn the_kubectl_fallback_never_reads_a_generator_file_outside_the_repository() {
    kubectl(); // the oracle: fails the test when it is missing
    let s = Scene::new();
    s.write(
        "app/kustomization.yaml",
        "configMapGenerator:\n- name: c\n  files:\n  - ../../outside/secret.txt\n",
    );
    let out = run(&s.repo(), &["render", "--load-restrictor", "none", "app"]);
    assert!(!out.located().contains(SECRET), "{}", out.all());
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("app/kustomization.yaml:4:5: security;")
            && out.located().contains("outside the repository"),
        "{}",
        out.all()
    );
}

#[test]
fn a_symlinked_kustomize_resource_leaving_the_repository_is_refused_under_either_restrictor() {
    let s = Scene::new();
    s.write("app/kustomization.yaml", "resources:\n- link.yaml\n");
    symlink("../../outside/x.yaml", s.repo().join("app/link.yaml")).unwrap();
    for restrictor in ["root-only", "none"] {
        let out = run(
            &s.repo(),
            &["render", "--load-restrictor", restrictor, "app"],
        );
        assert!(
            !out.located().contains(SECRET),
            "{restrictor}: {}",
            out.all()
        );
        assert_eq!(out.code, 2, "{restrictor}: {}", out.all());
        assert!(
            out.located()
                .contains("app/kustomization.yaml:2:3: security;")
                && out.located().contains("outside the repository"),
            "{restrictor}: {}",
            out.all()
        );
        let out = run(
            &s.repo(),
            &["--load-restrictor", restrictor, "--format", "json", "."],
        );
        assert!(
            !out.located().contains(SECRET),
            "{restrictor}: {}",
            out.all()
        );
        assert_eq!(out.code, 2, "{restrictor}: {}", out.all());
    }
}

#[test]
fn a_top_level_symlink_to_the_root_does_not_walk_the_machine() {
    let s = Scene::new();
    symlink("/", s.repo().join("everything")).unwrap();
    symlink("../outside", s.repo().join("elsewhere")).unwrap();
    for link in ["everything", "elsewhere"] {
        let out = gpulint_with(
            &s.repo(),
            &["--format", "json", link],
            &[],
            Duration::from_secs(30),
        );
        assert!(!out.located().contains(SECRET), "{}", out.all());
        assert_eq!(out.code, 2, "{}", out.all());
        assert!(
            out.located().contains(&format!("{link}: resolves to /"))
                && out.located().contains("outside the repository"),
            "{}",
            out.all()
        );
        assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
    }
}

#[test]
fn a_symlink_in_the_walk_that_leaves_the_repository_is_skipped_with_a_note() {
    let s = Scene::new();
    s.write(
        "deploy/ok.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    symlink("../../outside/x.yaml", s.repo().join("deploy/x.yaml")).unwrap();
    symlink("/", s.repo().join("deploy/root")).unwrap();
    let out = run(&s.repo(), &["--format", "json", "."]);
    assert!(!out.located().contains(SECRET), "{}", out.all());
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.located()
            .contains("deploy/x.yaml: symbolic link skipped: it resolves to")
            && out.located().contains("deploy/root: symbolic link skipped"),
        "{}",
        out.all()
    );
}

#[test]
fn a_fifo_or_a_folder_named_as_a_manifest_is_not_a_regular_file() {
    let s = Scene::new();
    let fifo = s.repo().join("pipe.yaml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = gpulint_with(
        &s.repo(),
        &["--format", "json", "pipe.yaml"],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("pipe.yaml: not a regular file (a FIFO)"),
        "{}",
        out.all()
    );
    // Met in the walk: skipped with a note, never opened (a read would block forever). A
    // manifest beside it, so the walk finds something to lint.
    std::fs::write(
        s.repo().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    )
    .unwrap();
    let out = gpulint_with(
        &s.repo(),
        &["--format", "json", "."],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.code, 0, "{}", out.all());
    assert!(
        out.located()
            .contains("pipe.yaml: skipped: not a regular file (a FIFO)"),
        "{}",
        out.all()
    );
}

/// A `.git` folder is repository content when the tree is not a checkout (an unpacked
/// archive): a FIFO among the files libgit2 opens (`config`, `index`), or as `.git` itself,
/// would block the run forever when a named file makes gpulint ask git which kustomizations it
/// tracks. gpulint treats such a tree as no git work tree and walks it.
#[test]
fn a_fifo_in_the_git_folder_does_not_stop_a_run() {
    for fifo in [".git/config", ".git/index", ".git", "sub/.git"] {
        let s = Scene::new();
        s.write("sub/app/kustomization.yaml", "resources: [deploy.yaml]\n");
        s.write(
            "sub/app/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n        resources:\n          limits: {nvidia.com/gpu: 1}\n          requests: {nvidia.com/gpu: 2}\n",
        );
        if fifo == ".git" {
            fs::remove_dir_all(s.repo().join(".git")).unwrap();
        } else {
            // Enough of a repository for libgit2 to open it (and read its config and index).
            s.write(".git/HEAD", "ref: refs/heads/main\n");
            fs::create_dir_all(s.repo().join(".git/objects")).unwrap();
            fs::create_dir_all(s.repo().join(".git/refs")).unwrap();
        }
        assert!(Command::new("mkfifo")
            .arg(s.repo().join(fifo))
            .status()
            .unwrap()
            .success());
        let out = gpulint_with(
            &s.repo(),
            &["--format", "json", "sub/app/deploy.yaml"],
            &[],
            Duration::from_secs(30),
        );
        // Linted through the kustomization that reads it, found by the walk.
        assert_eq!(out.code, 1, "{fifo}: {}", out.all());
        assert!(out.stdout.contains("GPU002"), "{fifo}: {}", out.all());
    }
}

#[test]
fn a_manifest_over_the_size_cap_is_refused() {
    let s = Scene::new();
    let big = s.repo().join("big.yaml");
    // Sparse: 65 MiB of nothing costs no disk.
    fs::File::create(&big)
        .unwrap()
        .set_len(65 * 1024 * 1024)
        .unwrap();
    let out = lint(&s.repo(), &["big.yaml"]);
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located()
            .contains("too large (68157440 bytes; gpulint reads files of at most 64 MiB)"),
        "{}",
        out.all()
    );
}

#[test]
fn config_chart_values_outside_the_repository_are_refused() {
    let s = Scene::new();
    s.chart("charts/c");
    s.write(
        ".gpulint.yaml",
        "charts:\n- path: charts/c\n  values: [../outside/secret.txt]\n",
    );
    let helm = s.logging_helm();
    let out = lint(&s.repo(), &["--helm", helm.to_str().unwrap(), "."]);
    let log = fs::read_to_string(s.helm_log()).unwrap_or_default();
    assert!(!log.contains("outside"), "{log}");
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.located().contains(".gpulint.yaml:3:12: `charts` values file ../outside/secret.txt is outside the repository"),
        "{}",
        out.all()
    );
}
