//! Issue 24, attack 9: a chart path the repository declares (Argo CD `spec.source.path`, Flux
//! `spec.chart.spec.chart`, a config `charts[].path`) that resolves outside the repository, as
//! written or through a symlinked folder, is an error at the declaring line, and Helm is never
//! handed the folder. A logging `helm` given on the command line records every run.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::common::{gpulint, run_within, Finished};

struct Scene {
    _tmp: tempfile::TempDir,
    base: PathBuf,
}

impl Scene {
    /// `repo/` (with `.git` and a chart of its own, so its declarations are read) and, next to
    /// it, a chart at `outside/chart`.
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir_all(base.join("repo/.git")).unwrap();
        let s = Scene { _tmp: tmp, base };
        s.chart_at(&s.base.join("outside/chart"));
        s.chart_at(&s.repo().join("charts/inner"));
        s
    }

    fn repo(&self) -> PathBuf {
        self.base.join("repo")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.repo().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
    }

    fn chart_at(&self, dir: &Path) {
        fs::create_dir_all(dir.join("templates")).unwrap();
        fs::write(
            dir.join("Chart.yaml"),
            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        )
        .unwrap();
        fs::write(dir.join("values.yaml"), "a: 1\n").unwrap();
        fs::write(
            dir.join("templates/cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        )
        .unwrap();
    }

    /// A `helm` that logs its arguments and prints a ConfigMap.
    fn logging_helm(&self) -> PathBuf {
        let p = self.base.join("bin/helm");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(
            &p,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> '{}'; done\necho 'apiVersion: v1'\necho 'kind: ConfigMap'\necho 'metadata: {{name: x}}'\n",
                self.log().display()
            ),
        )
        .unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn log(&self) -> PathBuf {
        self.base.join("helm.log")
    }

    /// `gpulint --format json --helm LOGGING_HELM .`: the errors as `file:line:column: message`
    /// lines, then stderr.
    fn lint(&self) -> (Finished, String) {
        let helm = self.logging_helm();
        let mut cmd = gpulint();
        cmd.current_dir(self.repo()).args([
            "--format",
            "json",
            "--helm",
            helm.to_str().unwrap(),
            ".",
        ]);
        let out = run_within(&mut cmd, Duration::from_secs(60));
        let mut text = String::new();
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&out.stdout) {
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
        text.push_str(&out.stderr);
        (out, text)
    }
}

const ARGO: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: app
spec:
  source:
    path: PATH
  destination:
    namespace: ml
";

const FLUX: &str = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: ml
spec:
  chart:
    spec:
      chart: PATH
      sourceRef: {kind: GitRepository, name: repo}
";

#[test]
fn chart_paths_leaving_the_repository_are_errors_at_their_line_and_never_reach_helm() {
    // (file, text, where the error is)
    let cases = [
        (
            "apps/app.yaml",
            ARGO.replace("PATH", "../outside/chart"),
            "apps/app.yaml:7:11: ",
        ),
        (
            "apps/app.yaml",
            ARGO.replace("PATH", "/../outside/chart"),
            "apps/app.yaml:7:11: ",
        ),
        (
            "apps/hr.yaml",
            FLUX.replace("PATH", "../outside/chart"),
            "apps/hr.yaml:9:14: ",
        ),
        (
            ".gpulint.yaml",
            "charts:\n- path: ../outside/chart\n".to_string(),
            ".gpulint.yaml:2:9: ",
        ),
    ];
    for (file, text, place) in &cases {
        let s = Scene::new();
        s.write(file, text);
        let (out, located) = s.lint();
        let log = fs::read_to_string(s.log()).unwrap_or_default();
        assert!(
            !log.contains("outside"),
            "{file}: helm was handed the outside chart:\n{log}\n{located}"
        );
        assert_eq!(out.code, 2, "{file}: {located}");
        assert!(
            located.contains(place) && located.contains("outside the repository"),
            "{file}: {located}"
        );
    }
}

#[test]
fn a_symlinked_chart_folder_leaving_the_repository_never_reaches_helm() {
    for (file, text) in [
        ("apps/app.yaml", ARGO.replace("PATH", "charts/c")),
        ("apps/hr.yaml", FLUX.replace("PATH", "./charts/c")),
    ] {
        let s = Scene::new();
        fs::create_dir_all(s.repo().join("charts")).unwrap();
        symlink("../../outside/chart", s.repo().join("charts/c")).unwrap();
        s.write(file, &text);
        let (out, located) = s.lint();
        let log = fs::read_to_string(s.log()).unwrap_or_default();
        // Helm is handed a private copy of a chart, named after its folder (`…/c`).
        assert!(
            !log.contains("charts/c") && !log.contains("outside") && !log.contains("/c\n"),
            "{file}: helm was handed the linked chart:\n{log}\n{located}"
        );
        assert_eq!(out.code, 2, "{file}: {located}");
        assert!(
            located.contains(&format!("{file}:"))
                && located.contains("resolves to")
                && located.contains("outside the repository"),
            "{file}: {located}"
        );
    }
    // A chart inside the repository is still rendered.
    let s = Scene::new();
    s.chart_at(&s.repo().join("charts/c"));
    s.write("apps/app.yaml", &ARGO.replace("PATH", "charts/c"));
    let (out, located) = s.lint();
    let log = fs::read_to_string(s.log()).unwrap_or_default();
    assert!(log.contains("/c\n"), "{log}\n{located}");
    assert!(out.code == 0 || out.code == 1, "{located}");
}
