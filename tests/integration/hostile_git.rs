//! Issue 24, attack 3: `.git/` and files git does not track are outside the boundary. A real
//! git repository whose `.git/config` holds the line `actions/checkout` leaves there
//! (`extraheader = AUTHORIZATION: basic …`, here a random fake): no chart template (`.Files.Get`,
//! `.Files.Glob`, through a symlink to `.git`), no kustomization (built-in renderer or the
//! `kubectl kustomize` fallback), and no `gitdir:` named by a `.git` file may bring it (or an
//! untracked credential file another CI step wrote) into any output, raw, base64 or hex.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use crate::support::common::{git, gpulint, helm, kubectl, run_within, Finished, Rng};

struct Scene {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    /// The fake credential in `.git/config`.
    secret: String,
    /// The content of an untracked `gha-creds-x.json`.
    creds: String,
}

fn random(tag: &str) -> String {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(7, |d| d.as_nanos() as u64)
        ^ (tag.len() as u64) << 48;
    let mut rng = Rng::new(seed);
    format!("{tag}{:016x}{:016x}", rng.next(), rng.next())
}

impl Scene {
    /// A git repository at `repo/` (`git init`; `separate` puts the git folder at
    /// `repo/meta`, named by a `.git` file) with the fake credential in its config.
    fn new(separate: bool) -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let repo = fs::canonicalize(tmp.path()).unwrap().join("repo");
        fs::create_dir_all(&repo).unwrap();
        if separate {
            git(&repo, &["init", "-q", "--separate-git-dir=meta"]);
        } else {
            git(&repo, &["init", "-q"]);
        }
        let secret = random("S3CR3T");
        let config = if separate {
            repo.join("meta/config")
        } else {
            repo.join(".git/config")
        };
        let mut text = fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {secret}\n"
        ));
        fs::write(&config, text).unwrap();
        Scene {
            _tmp: tmp,
            repo,
            secret,
            creds: random("CR3DS"),
        }
    }

    /// Writes and stages `rel` (git tracks it).
    fn track(&self, rel: &str, text: &str) {
        let p = self.repo.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        git(&self.repo, &["add", "--", rel]);
    }

    /// Every form either sentinel could leak in.
    fn leaks(&self, out: &Finished) -> Option<String> {
        let all = format!("{}{}", out.stdout, out.stderr);
        for secret in [&self.secret, &self.creds] {
            let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
            let mut forms = vec![secret.to_string(), hex.clone(), hex.to_uppercase()];
            // Base64 at any of the three alignments: its middle survives.
            forms.extend((0..3).map(|skip| {
                let mut shifted = vec![b'x'; skip];
                shifted.extend_from_slice(secret.as_bytes());
                let b = base64(&shifted);
                b[4..b.len() - 4].to_string()
            }));
            if let Some(form) = forms.iter().find(|f| all.contains(f.as_str())) {
                return Some(form.clone());
            }
        }
        None
    }

    fn run(&self, args: &[&str]) -> Finished {
        let mut cmd = gpulint();
        cmd.current_dir(&self.repo).args(args);
        run_within(&mut cmd, Duration::from_secs(120))
    }

    /// `gpulint render` and a lint of `target` with the real Helm.
    fn helm_runs(&self, target: &str) -> Vec<Finished> {
        let helm = helm();
        let helm = helm.to_str().unwrap();
        vec![
            self.run(&["render", "--helm", helm, target]),
            self.run(&["--helm", helm, "--format", "json", target]),
        ]
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

fn all(out: &Finished) -> String {
    format!(
        "exit {}\n--- stdout\n{}\n--- stderr\n{}",
        out.code, out.stdout, out.stderr
    )
}

const CHART: &str = "apiVersion: v2\nname: c\nversion: 0.1.0\n";

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        resources:
          limits: {nvidia.com/gpu: 1}
";

/// A template printing `what` into a ConfigMap, raw and base64.
fn configmap(what: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x}}\ndata:\n  raw: {{{{ {what} | quote }}}}\n  b64: {{{{ {what} | b64enc | quote }}}}\n"
    )
}

/// (a) A `Chart.yaml` at the repository root: `.Files` would see `.git/config`. The chart is
/// rendered from a private copy of its tracked files, which has no `.git`.
#[test]
fn a_root_chart_never_reads_git_s_config() {
    for template in [
        "{{ fail (.Files.Get \".git/config\" | b64enc) }}\n".to_string(),
        configmap(".Files.Get \".git/config\""),
        configmap("(.Files.Glob \".git/**\").AsConfig"),
    ] {
        let s = Scene::new(false);
        s.track("Chart.yaml", CHART);
        s.track("values.yaml", "a: 1\n");
        s.track("templates/leak.yaml", &template);
        s.track("templates/deploy.yaml", DEPLOY);
        for out in s.helm_runs(".") {
            assert!(s.leaks(&out).is_none(), "{template}\n{}", all(&out));
            assert!(out.code != 101, "{}", all(&out));
        }
    }
    // The copy still renders what is tracked.
    let s = Scene::new(false);
    s.track("Chart.yaml", CHART);
    s.track("templates/deploy.yaml", DEPLOY);
    let out = &s.helm_runs(".")[0];
    assert_eq!(out.code, 0, "{}", all(out));
    assert!(out.stdout.contains("kind: Deployment"), "{}", all(out));
}

/// (b) An untracked credential file another step wrote into the work tree is not in the
/// copy: `.Files.Glob "gha-creds-*.json"` finds nothing.
#[test]
fn untracked_files_are_not_seen_by_a_chart() {
    let s = Scene::new(false);
    s.track("Chart.yaml", CHART);
    s.track(
        "templates/leak.yaml",
        &configmap("(.Files.Glob \"gha-creds-*.json\").AsConfig"),
    );
    s.track("templates/deploy.yaml", DEPLOY);
    fs::write(
        s.repo.join("gha-creds-x.json"),
        format!("{{\"token\": \"{}\"}}\n", s.creds),
    )
    .unwrap();
    for out in s.helm_runs(".") {
        assert!(s.leaks(&out).is_none(), "{}", all(&out));
        assert!(out.code != 101, "{}", all(&out));
    }
    // Rendered, from the tracked files.
    let out = &s.helm_runs(".")[0];
    assert_eq!(out.code, 0, "{}", all(out));
    assert!(out.stdout.contains("kind: ConfigMap"), "{}", all(out));
}

/// (c) A chart symlink to the repository's `.git` (inside the repository, so no link leaves
/// it): the chart is refused at the link, before Helm runs.
#[test]
fn a_chart_symlink_to_git_is_refused() {
    for target in ["../../.git", "../../d"] {
        let s = Scene::new(false);
        s.track("charts/c/Chart.yaml", CHART);
        s.track(
            "charts/c/templates/leak.yaml",
            &configmap(".Files.Get \"dot/config\""),
        );
        s.track("charts/c/templates/deploy.yaml", DEPLOY);
        // `d` is a second hop: `d -> .git`.
        std::os::unix::fs::symlink(".git", s.repo.join("d")).unwrap();
        std::os::unix::fs::symlink(target, s.repo.join("charts/c/dot")).unwrap();
        git(&s.repo, &["add", "--", "charts/c/dot"]);
        for out in s.helm_runs("charts/c") {
            assert!(s.leaks(&out).is_none(), "{target}\n{}", all(&out));
            assert!(
                out.stdout.contains("charts/c/dot") || out.stderr.contains("charts/c/dot"),
                "{target}\n{}",
                all(&out)
            );
            assert!(all(&out).contains("`.git`"), "{target}\n{}", all(&out));
            assert_eq!(out.code, 2, "{target}\n{}", all(&out));
        }
    }
}

/// (d) The built-in renderer: `resources: [.git/config]` and `patches: [{path: .git/config}]`
/// (also through a symlink, and the `gitdir:` a `.git` file names) are input errors at the
/// kustomization's line, and nothing of the file is printed.
#[test]
fn a_kustomization_never_reads_git_s_folder() {
    for separate in [false, true] {
        let config = if separate {
            "meta/config"
        } else {
            ".git/config"
        };
        for (entry, line) in [
            (format!("resources: [deploy.yaml, {config}]\n"), 1),
            (
                format!("resources: [deploy.yaml]\npatches:\n- path: {config}\n"),
                3,
            ),
            ("resources: [deploy.yaml, link/config]\n".to_string(), 1),
        ] {
            let s = Scene::new(separate);
            s.track("deploy.yaml", DEPLOY);
            s.track("kustomization.yaml", &entry);
            let dir = if separate { "meta" } else { ".git" };
            std::os::unix::fs::symlink(dir, s.repo.join("link")).unwrap();
            for args in [&["render", "."][..], &["--format", "json", "."][..]] {
                let out = s.run(args);
                assert!(s.leaks(&out).is_none(), "{entry}\n{}", all(&out));
                assert_eq!(out.code, 2, "{entry}\n{}", all(&out));
                let text = all(&out);
                assert!(
                    text.contains(&format!("kustomization.yaml:{line}:"))
                        || text.contains(&format!("\"line\": {line}"))
                        || text.contains(&format!("\"line\":{line}")),
                    "{entry}\n{text}"
                );
                assert!(text.contains("`.git`"), "{entry}\n{text}");
            }
        }
    }
}

/// (e) The `kubectl kustomize` fallback (a `replacements` entry would print a generated
/// value in its error): `configMapGenerator` `files: [t=.git/config]`, or the `gitdir:` a
/// `.git` file names, or a link into either, is refused before kustomize runs.
#[test]
fn the_fallback_never_reads_git_s_folder() {
    kubectl();
    for separate in [false, true] {
        let config = if separate {
            "meta/config"
        } else {
            ".git/config"
        };
        for file in [config.to_string(), "link/config".to_string()] {
            let s = Scene::new(separate);
            s.track("deploy.yaml", DEPLOY);
            s.track(
                "kustomization.yaml",
                &format!(
                    "resources: [deploy.yaml]\nconfigMapGenerator:\n- name: x\n  files: [t={file}]\nreplacements:\n- source: {{kind: ConfigMap, name: x, fieldPath: data.t}}\n  targets:\n  - select: {{kind: Deployment}}\n    fieldPaths: [spec.replicas]\n"
                ),
            );
            let dir = if separate { "meta" } else { ".git" };
            std::os::unix::fs::symlink(dir, s.repo.join("link")).unwrap();
            for args in [&["render", "."][..], &["--format", "json", "."][..]] {
                let out = s.run(args);
                assert!(s.leaks(&out).is_none(), "{file}\n{}", all(&out));
                assert_eq!(out.code, 2, "{file}\n{}", all(&out));
                assert!(all(&out).contains("`.git`"), "{file}\n{}", all(&out));
            }
        }
    }
}

/// A path the command line names inside `.git` is refused too (gpulint reads no file there).
#[test]
fn the_command_line_cannot_name_a_file_in_git() {
    let s = Scene::new(false);
    let out = s.run(&["--format", "json", ".git/config"]);
    assert!(s.leaks(&out).is_none(), "{}", all(&out));
    assert_eq!(out.code, 2, "{}", all(&out));
}
