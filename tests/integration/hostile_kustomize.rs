//! A hostile pull request against the Kustomize fallback (issue 24): a kustomization the
//! built-in renderer hands to `kubectl kustomize` (here through `sortOptions`, which it does not
//! implement) must not make kustomize fetch a URL or read a file outside the repository, however
//! the field that names it is hidden from gpulint's check (a YAML merge key, a tag, another
//! case, a generator or transformer config, inline or in a file). A listener on 127.0.0.1
//! counts connections; a sentinel file outside the repository, with random content, must never
//! appear in any output, raw, base64 or hex.

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::common::{gpulint, kubectl, run_within, Finished, Rng};

/// `repo/` (a git work tree: it has `.git`) and `outside/` next to it, holding the sentinel.
struct Scene {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    secret: String,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("repo/.git")).unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64);
        let mut rng = Rng::new(seed);
        let secret = format!("ghp_{:016x}{:016x}", rng.next(), rng.next());
        fs::write(base.join("outside/token.txt"), &secret).unwrap();
        Scene {
            _tmp: tmp,
            base,
            secret,
        }
    }

    fn repo(&self) -> PathBuf {
        self.base.join("repo")
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.repo().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    /// Every form the sentinel could leak in.
    fn leaks(&self, out: &Finished) -> bool {
        let all = format!("{}{}", out.stdout, out.stderr);
        let hex: String = self.secret.bytes().map(|b| format!("{b:02x}")).collect();
        let forms = [
            self.secret.clone(),
            base64(self.secret.as_bytes()),
            base64(format!("{}\n", self.secret).as_bytes()),
            hex.clone(),
            hex.to_uppercase(),
        ];
        // Base64 of the secret at any of the three alignments: its middle survives.
        let middles: Vec<String> = (0..3)
            .map(|skip| {
                let mut shifted = vec![b'x'; skip];
                shifted.extend_from_slice(self.secret.as_bytes());
                let b = base64(&shifted);
                b[4..b.len() - 4].to_string()
            })
            .collect();
        forms
            .iter()
            .chain(&middles)
            .any(|f| all.contains(f.as_str()))
    }
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut cmd = gpulint();
    cmd.current_dir(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_within(&mut cmd, Duration::from_secs(120))
}

fn all(out: &Finished) -> String {
    format!("{}{}", out.stdout, out.stderr)
}

/// A listener on 127.0.0.1 that counts connections.
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

/// What makes the built-in renderer hand the root to kubectl.
const FALLBACK: &str = "sortOptions: {order: legacy}\n";

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        resources:
          limits: {nvidia.com/gpu: 1}
";

#[test]
fn the_fallback_renders_a_plain_tree() {
    kubectl(); // the oracle: fails the test when it is missing
    let s = Scene::new();
    s.write("app/deploy.yaml", DEPLOY);
    s.write(
        "app/kustomization.yaml",
        &format!("{FALLBACK}resources: [deploy.yaml]\nconfigMapGenerator:\n- name: c\n  files: [t=data.txt]\n"),
    );
    s.write("app/data.txt", "inside\n");
    let out = run(&s.repo(), &["render", "app"], &[]);
    assert_eq!(out.code, 0, "{}", all(&out));
    assert!(out.stdout.contains("kind: Deployment"), "{}", all(&out));
    assert!(out.stdout.contains("inside"), "{}", all(&out));
}

#[test]
fn hidden_remote_resources_are_never_fetched() {
    kubectl();
    let (port, connections) = counting_listener();
    let url = format!("http://127.0.0.1:{port}/x");
    let git = format!("git::http://127.0.0.1:{port}/r.git//d?ref=main");
    let cases = [
        // The two: a merge key hides `resources` from the check.
        format!("{FALLBACK}<<: {{resources: [{url}]}}\n"),
        format!("{FALLBACK}<<: {{resources: [\"{git}\"]}}\n"),
        // A merge key deeper down, an anchor merged in, a tag, another case.
        format!("{FALLBACK}patches:\n- <<: {{path: \"{url}\"}}\n"),
        format!("{FALLBACK}x: &r {{resources: [{url}]}}\n<<: *r\n"),
        format!("{FALLBACK}!!binary cmVzb3VyY2Vz: [{url}]\n"),
        format!("{FALLBACK}Resources: [{url}]\n"),
        format!("{FALLBACK}re\u{17f}ources: [{url}]\n"),
        // Files kustomize fetches over HTTP itself.
        format!("{FALLBACK}patches: [{{path: \"{url}\"}}]\n"),
        format!("{FALLBACK}configMapGenerator: [{{name: c, files: [\"t={url}\"]}}]\n"),
        format!("{FALLBACK}configMapGenerator: [{{name: c, Files: [\"t={url}\"]}}]\n"),
        format!("{FALLBACK}generators: [\"{url}\"]\n"),
        format!("{FALLBACK}transformers: [t.yaml]\n"),
    ];
    let s = Scene::new();
    s.write(
        "app/t.yaml",
        &format!(
            "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {{name: t}}\npath: \"{url}\"\n"
        ),
    );
    for (i, kustomization) in cases.iter().enumerate() {
        s.write("app/kustomization.yaml", kustomization);
        let out = run(&s.repo(), &["--format", "json", "app"], &[]);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            connections.load(Ordering::SeqCst),
            0,
            "case {i}: a URL in the repository was fetched:\n{kustomization}\n{}",
            all(&out)
        );
        assert_eq!(out.code, 2, "case {i}:\n{kustomization}\n{}", all(&out));
        assert!(
            out.stdout.contains("app/kustomization.yaml") || out.stdout.contains("app/t.yaml"),
            "case {i}: {}",
            all(&out)
        );
    }
}

#[test]
fn generator_and_transformer_configs_never_read_a_file_outside_the_repository() {
    kubectl();
    let s = Scene::new();
    let abs = s.base.join("outside/token.txt");
    let abs = abs.display();
    s.write("app/deploy.yaml", DEPLOY);
    // A replacement into an integer field makes kustomize's error print what it read.
    let leak = "replacements:\n- source: {kind: ConfigMap, name: c, fieldPath: data.t}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.replicas]\n";
    let generator = |files: &str| {
        format!("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {{name: c}}\noptions: {{disableNameSuffixHash: true}}\nfiles: [{files}]\n")
    };
    let cases: Vec<(String, Vec<(&str, String)>)> = vec![
        // The issue's: a generator file with an absolute path, or one leaving the repository.
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ngenerators: [gen.yaml]\n{leak}"),
            vec![("app/gen.yaml", generator(&format!("t={abs}")))],
        ),
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ngenerators: [gen/gen.yaml]\n{leak}"),
            vec![("app/gen/gen.yaml", generator("t=../../outside/token.txt"))],
        ),
        // An inline generator, as a block string and as a one-line flow mapping.
        (
            format!(
                "{FALLBACK}resources: [deploy.yaml]\ngenerators:\n- |\n{}{leak}",
                generator(&format!("t={abs}"))
                    .lines()
                    .map(|l| format!("  {l}\n"))
                    .collect::<String>()
            ),
            vec![],
        ),
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ngenerators:\n- \"{{apiVersion: builtin, kind: SecretGenerator, metadata: {{name: c}}, envs: [{abs}]}}\"\n"),
            vec![],
        ),
        // Other path keys: `env`, a transformer's `path`, `paths`.
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ngenerators: [gen.yaml]\n"),
            vec![(
                "app/gen.yaml",
                "apiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: c}\nenv: ../../outside/token.txt\n".to_string(),
            )],
        ),
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ntransformers: [t.yaml]\n"),
            vec![(
                "app/t.yaml",
                format!("apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata: {{name: t}}\npaths: [{abs}]\n"),
            )],
        ),
        // A merge key in the config file hides its `files`.
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ngenerators: [gen.yaml]\n{leak}"),
            vec![(
                "app/gen.yaml",
                format!("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {{name: c}}\n<<: {{files: [t={abs}]}}\n"),
            )],
        ),
        // The kustomization's own generator, behind a merge key.
        (
            format!("{FALLBACK}resources: [deploy.yaml]\nconfigMapGenerator:\n- name: c\n  <<: {{files: [t={abs}]}}\n{leak}"),
            vec![],
        ),
        // A folder of configs (a kustomization whose output would be the configs).
        (
            format!("{FALLBACK}resources: [deploy.yaml]\ngenerators: [gens]\n"),
            vec![
                ("app/gens/kustomization.yaml", "resources: [gen.yaml]\n".to_string()),
                ("app/gens/gen.yaml", generator(&format!("t={abs}"))),
            ],
        ),
    ];
    for (i, (kustomization, files)) in cases.iter().enumerate() {
        let _ = fs::remove_dir_all(s.repo().join("app"));
        s.write("app/deploy.yaml", DEPLOY);
        s.write("app/kustomization.yaml", kustomization);
        for (path, text) in files {
            s.write(path, text);
        }
        // `none` first: before the fix, kustomize printed the file there.
        for restrictor in ["none", "root-only"] {
            for args in [
                &["render", "--load-restrictor", restrictor, "app"][..],
                &["--format", "json", "--load-restrictor", restrictor, "app"][..],
            ] {
                let out = run(&s.repo(), args, &[]);
                assert!(
                    !s.leaks(&out),
                    "case {i} {args:?}: the file outside the repository was read:\n{kustomization}\n{}",
                    all(&out)
                );
                assert_eq!(
                    out.code,
                    2,
                    "case {i} {args:?}:\n{kustomization}\n{}",
                    all(&out)
                );
                assert!(
                    all(&out).contains("security;"),
                    "case {i} {args:?}: {}",
                    all(&out)
                );
            }
        }
    }
}

#[test]
fn plugin_configs_must_be_builtin_and_kustomization_keys_kustomize_s_own() {
    let s = Scene::new();
    s.write("app/deploy.yaml", DEPLOY);
    s.write(
        "app/gen.yaml",
        "apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata: {name: c}\n",
    );
    s.write(
        "app/kustomization.yaml",
        &format!("{FALLBACK}resources: [deploy.yaml]\ngenerators: [gen.yaml]\n"),
    );
    let out = run(&s.repo(), &["render", "app"], &[]);
    assert_eq!(out.code, 2, "{}", all(&out));
    assert!(
        out.stderr.contains("app/gen.yaml:1:1: ")
            && out
                .stderr
                .contains("not one of kustomize's builtin plugins"),
        "{}",
        all(&out)
    );
    s.write(
        "app/kustomization.yaml",
        &format!("{FALLBACK}resources: [deploy.yaml]\nsurprise: 1\n"),
    );
    let out = run(&s.repo(), &["render", "app"], &[]);
    assert_eq!(out.code, 2, "{}", all(&out));
    assert!(
        out.stderr.contains(
            "app/kustomization.yaml:3:1: security; `surprise` is not a kustomization field"
        ),
        "{}",
        all(&out)
    );
}

#[test]
fn the_repository_config_cannot_widen_the_load_restrictor() {
    kubectl();
    let s = Scene::new();
    s.write("shared/deploy.yaml", DEPLOY);
    s.write(
        "app/kustomization.yaml",
        &format!("{FALLBACK}resources: [../shared/deploy.yaml]\n"),
    );
    s.write(".gpulint.yaml", "kustomize:\n  load_restrictor: none\n");
    let out = run(&s.repo(), &["--format", "json", "app"], &[]);
    assert_eq!(out.code, 2, "{}", all(&out));
    assert!(
        out.stderr.contains(".gpulint.yaml:2:20") && out.stderr.contains("--load-restrictor none"),
        "{}",
        all(&out)
    );
    // Root-only, the default, may still be written; the command line widens it.
    s.write(
        ".gpulint.yaml",
        "kustomize:\n  load_restrictor: root-only\n",
    );
    let out = run(&s.repo(), &["render", "app"], &[]);
    assert_eq!(out.code, 2, "root-only: {}", all(&out));
    let out = run(
        &s.repo(),
        &["render", "--load-restrictor", "none", "app"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", all(&out));
}

/// A `kubectl` stand-in that records its arguments and environment, and what `$HOME` holds.
fn recording_kubectl(s: &Scene, objects: usize) -> PathBuf {
    let bin = s.base.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let p = bin.join("kubectl");
    let log = s.base.join("kubectl.log");
    let mut print = String::new();
    for i in 0..objects {
        print.push_str(&format!(
            "echo '---'; echo 'apiVersion: v1'; echo 'kind: ConfigMap'; echo 'metadata: {{name: c{i}}}'\n"
        ));
    }
    fs::write(
        &p,
        format!(
            "#!/bin/sh\n{{ echo \"ARGS $*\"; env; echo \"HOME-HOLDS $(ls -A \"$HOME\" | wc -l)\"; }} > '{}'\n{print}",
            log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn kustomize_runs_root_only_with_no_proxy_no_plugin_home_no_git_transport_and_an_empty_home() {
    let s = Scene::new();
    let bin = recording_kubectl(&s, 3);
    s.write("app/deploy.yaml", DEPLOY);
    s.write(
        "app/kustomization.yaml",
        &format!("{FALLBACK}resources: [deploy.yaml]\n"),
    );
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let home = s.base.join("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(
        home.join(".gitconfig"),
        "[http]\n  proxy = http://127.0.0.1:9\n",
    )
    .unwrap();
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("HTTPS_PROXY", "http://127.0.0.1:9"),
        ("http_proxy", "http://127.0.0.1:9"),
        ("ALL_PROXY", "http://127.0.0.1:9"),
        ("KUSTOMIZE_PLUGIN_HOME", "/tmp/plugins"),
        ("GIT_ALLOW_PROTOCOL", "http:https:ssh:file"),
    ];
    let out = run(&s.repo(), &["render", "app"], &env);
    assert_eq!(out.code, 0, "{}", all(&out));
    let log = fs::read_to_string(s.base.join("kubectl.log")).unwrap();
    assert!(
        log.contains("--load-restrictor=LoadRestrictionsRootOnly"),
        "{log}"
    );
    for var in ["PROXY=", "proxy=", "KUSTOMIZE_PLUGIN_HOME"] {
        assert!(!log.contains(var), "{var} reached kustomize:\n{log}");
    }
    assert!(log.contains("GIT_ALLOW_PROTOCOL=none\n"), "{log}");
    assert!(log.contains("GIT_CONFIG_NOSYSTEM=1\n"), "{log}");
    assert!(
        !log.contains(&format!("HOME={}\n", home.display())),
        "{log}"
    );
    assert!(log.contains("HOME-HOLDS 0\n"), "{log}");
    // The object cap applies to what kustomize printed.
    let out = run(
        &s.repo(),
        &["render", "--max-render-objects", "2", "app"],
        &env,
    );
    assert_eq!(out.code, 2, "{}", all(&out));
    assert!(
        out.stderr.contains("3 objects, more than 2"),
        "{}",
        all(&out)
    );
}

/// Issue 24: a transform of the fallback that changes a container field (`images:`) left the
/// pod spec and its container with the same made-up span, and the container was taken for
/// the pod spec seen twice: the workload vanished from the lint and the inventory, silently.
#[test]
fn a_workload_the_fallback_transformed_is_still_linted() {
    kubectl();
    let s = Scene::new();
    s.write(
        "app/deploy.yaml",
        &DEPLOY.replace(
            "limits: {nvidia.com/gpu: 1}",
            "requests: {nvidia.com/gpu: 2}\n          limits: {nvidia.com/gpu: 1}",
        ),
    );
    s.write(
        "app/kustomization.yaml",
        &format!("{FALLBACK}resources: [deploy.yaml]\nimages:\n- name: registry.example/app\n  newTag: \"2\"\n"),
    );
    let out = run(&s.repo(), &["--format", "json", "app"], &[]);
    assert_eq!(out.code, 1, "{}", all(&out));
    assert!(
        out.stdout.contains("\"rule\": \"GPU002\"") && out.stdout.contains("app/deploy.yaml"),
        "{}",
        all(&out)
    );
    let out = run(&s.repo(), &["inventory", "--format", "csv", "app"], &[]);
    assert_eq!(out.code, 0, "{}", all(&out));
    assert!(out.stdout.contains(",Deployment,app,"), "{}", all(&out));
}
