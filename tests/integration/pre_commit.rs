//! The hooks of `.pre-commit-hooks.yaml`, end to end, with the REAL pre-commit and git.
//!
//! pre-commit comes from `GPULINT_PRE_COMMIT` (scripts/test installs the pinned PyPI package
//! and exports it). Without it this test FAILS, asking to run scripts/test, unless
//! `GPULINT_SKIP_PRE_COMMIT=1`.
//!
//! The working tree (with any uncommitted change) is copied into a hook repository with one
//! commit, and a user repository whose config pins that repository at that commit runs the
//! hooks, exactly as a `.pre-commit-config.yaml` with `repo:`/`rev:` does: pre-commit clones
//! it and builds gpulint with `cargo install --bins --root <env> --path .` (release).
//!
//! Speed. `pre-commit try-repo` would rebuild gpulint for every call: it always uses a fresh,
//! temporary store (it ignores `PRE_COMMIT_HOME`), and cargo sees the fresh clone's new mtimes.
//! So the hooks run through `pre-commit run` with a store under the target dir instead: the
//! hook repository's commit is deterministic (fixed author, dates and message), so the same
//! sources give the same rev and a warm run installs nothing. When the sources changed, the
//! hooks' `CARGO_TARGET_DIR` is the test run's own target dir, whose release build (shared
//! with the wheel's, support/release.rs) has the dependencies, so only gpulint itself is
//! recompiled. Old revs are garbage-collected.
//! Every scenario shares one install, so they are one #[test].

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use crate::support::common::{self, copy_dir, git_with, GIT_REPO_VARS};

/// What `cargo install --path` reads from the repository (everything else is left out so that
/// an unrelated change, e.g. in tests/ or testdata/, does not change the rev and rebuild).
const HOOK_REPO_FILES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    ".pre-commit-hooks.yaml",
];
const HOOK_REPO_DIRS: &[&str] = &["src", "rules"];

/// GPU002: request 1, limit 2. Otherwise Guaranteed QoS, so GPU002 is the only finding.
const BAD: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: ml
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.0
          resources:
            requests:
              nvidia.com/gpu: 1 # keep this comment
              cpu: \"4\"
              memory: 24Gi
            limits:
              nvidia.com/gpu: 2
              cpu: \"4\"
              memory: 24Gi
";

fn pre_commit_exe() -> Option<PathBuf> {
    if std::env::var("GPULINT_SKIP_PRE_COMMIT").as_deref() == Ok("1") {
        eprintln!("pre-commit hook test skipped: GPULINT_SKIP_PRE_COMMIT=1");
        return None;
    }
    let exe = match std::env::var_os("GPULINT_PRE_COMMIT") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!(
            "GPULINT_PRE_COMMIT is not set: run scripts/test, which installs pre-commit and \
             exports it (or set GPULINT_SKIP_PRE_COMMIT=1 to skip this test)"
        ),
    };
    assert!(
        exe.is_file(),
        "GPULINT_PRE_COMMIT={} does not exist: run scripts/test to (re)install pre-commit",
        exe.display()
    );
    Some(exe)
}

/// A git command isolated from the machine's git config and from any outer repository.
/// Fixed dates too, so the same tree gives the same commit id (the hook store's key).
fn git_cmd(dir: &Path) -> Command {
    let mut cmd = common::git_cmd(dir);
    cmd.env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z");
    cmd
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_with(git_cmd(dir), args).trim().to_owned()
}

/// `git init` and one commit of everything in `dir` (deterministic: see `git_cmd`).
fn init_and_commit(dir: &Path, message: &str) {
    let commit = ["-c", "commit.gpgsign=false", "commit", "-q", "-m", message];
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &commit);
}

/// Copies the working tree's build inputs into a fresh repository with one deterministic
/// commit, and moves it to `<repos>/<rev>` (kept, so the store's key stays the same).
fn hook_repo(repos: &Path) -> (PathBuf, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::create_dir_all(repos).unwrap();
    let staging = tempfile::tempdir_in(repos).unwrap();
    let dir = staging.path();
    for file in HOOK_REPO_FILES {
        if root.join(file).is_file() {
            fs::copy(root.join(file), dir.join(file)).unwrap();
        }
    }
    for sub in HOOK_REPO_DIRS {
        copy_dir(&root.join(sub), &dir.join(sub));
    }
    init_and_commit(dir, "gpulint hooks under test");
    let rev = git(dir, &["rev-parse", "HEAD"]);
    let path = repos.join(&rev);
    if !path.exists() {
        // A concurrent run of the same sources may win the race: its copy is identical.
        let _ = fs::rename(staging.keep(), &path);
    }
    (path, rev)
}

/// Removes the hook repositories (and their configs) of other revs, unless they are recent
/// enough that a concurrent run may still be using them.
fn remove_old_hook_repos(repos: &Path, rev: &str) {
    let old = SystemTime::now() - Duration::from_secs(600);
    for entry in fs::read_dir(repos).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(rev) {
            continue;
        }
        let modified = entry.metadata().and_then(|m| m.modified()).unwrap_or(old);
        if modified > old {
            continue;
        }
        let path = entry.path();
        let _ = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
    }
}

struct PreCommit {
    exe: PathBuf,
    home: PathBuf,
    cargo_target: PathBuf,
    path: std::ffi::OsString,
}

struct Run {
    code: i32,
    output: String,
    took: Duration,
}

impl PreCommit {
    fn run(&self, cwd: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new(&self.exe);
        crate::support::release::cargo_env_of_a_shell(&mut cmd);
        cmd.current_dir(cwd)
            .args(args)
            .env("PRE_COMMIT_HOME", &self.home)
            // Read by pre-commit's `cargo install` (which passes no --target-dir).
            .env("CARGO_TARGET_DIR", &self.cargo_target)
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .env("PATH", &self.path)
            .env("NO_COLOR", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(std::process::Stdio::null());
        for var in GIT_REPO_VARS {
            cmd.env_remove(var);
        }
        let start = Instant::now();
        let out = cmd.output().expect("pre-commit runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            took: start.elapsed(),
        }
    }
}

/// PATH with the directory of the cargo running this test first, so pre-commit finds a cargo
/// (its rust `language_version` is then `system`; without one it would download rustup).
fn path_with_cargo() -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|c| c.parent().map(Path::to_path_buf))
    {
        dirs.push(dir);
    }
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn hooks_lint_and_fix_through_real_pre_commit() {
    let Some(exe) = pre_commit_exe() else { return };
    let total = Instant::now();
    // Under the target dir: survives between runs, goes with `cargo clean`.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit");
    let repos = cache.join("hook-repos");
    let pc = PreCommit {
        exe,
        home: cache.join("home"),
        // The test run's one release build (support/release.rs): the dependencies compiled for
        // the wheel are the ones this `cargo install` needs.
        cargo_target: crate::support::release::target_dir(),
        path: path_with_cargo(),
    };
    // The user's repository: the files must be tracked for pre-commit to see a hook's edits.
    let user = tempfile::tempdir().unwrap();
    let dir = user.path();
    let clean = BAD.replace("nvidia.com/gpu: 1 #", "nvidia.com/gpu: 2 #");
    fs::write(dir.join("bad.yaml"), BAD).unwrap();
    fs::write(dir.join("clean.yaml"), &clean).unwrap();
    fs::write(dir.join("notes.txt"), "not yaml: the hooks never see it\n").unwrap();
    init_and_commit(dir, "manifests");

    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml");
    let r = pc.run(dir, &["validate-manifest", manifest.to_str().unwrap()]);
    assert_eq!(r.code, 0, "invalid .pre-commit-hooks.yaml:\n{}", r.output);

    let (hook_repo, rev) = hook_repo(&repos);
    // The config a user writes, pinned to the hook repository's commit. It lives next to the
    // hook repository (not in the temporary user repository) so that `pre-commit gc` keeps
    // this rev's install for the next run and removes the installs of the other revs.
    let config = repos.join(format!("{rev}.pre-commit-config.yaml"));
    fs::write(
        &config,
        format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: gpulint\n      - id: gpulint-fix\n",
            hook_repo.display()
        ),
    )
    .unwrap();
    remove_old_hook_repos(&repos, &rev);
    let r = pc.run(dir, &["gc"]);
    assert_eq!(r.code, 0, "pre-commit gc failed:\n{}", r.output);

    let cfg = config.to_str().unwrap();
    let run = |hook: &str, files: &[&str]| {
        let mut args = vec!["run", hook, "--config", cfg, "--color", "never", "--files"];
        args.extend_from_slice(files);
        let r = pc.run(dir, &args);
        eprintln!(
            "pre-commit run {hook} --files {files:?}: exit {} in {:.1?}",
            r.code, r.took
        );
        r
    };

    // 1. The check hook reports the GPU002 finding and fails; the file is left alone.
    let r = run("gpulint", &["bad.yaml", "notes.txt"]);
    assert_eq!(r.code, 1, "gpulint on bad.yaml must fail:\n{}", r.output);
    assert!(
        r.output.contains("gpulint....") && r.output.contains("Failed"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("- hook id: gpulint\n- exit code: 1"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("error[GPU002]"),
        "no GPU002 finding:\n{}",
        r.output
    );
    assert!(
        r.output.contains("bad.yaml:14:31"),
        "finding not located:\n{}",
        r.output
    );
    assert!(
        !r.output.contains("notes.txt"),
        "a non-YAML file was passed:\n{}",
        r.output
    );
    assert_eq!(fs::read_to_string(dir.join("bad.yaml")).unwrap(), BAD);

    // 2. The fix hook fixes it: pre-commit sees the edit and fails the commit attempt.
    let r = run("gpulint-fix", &["bad.yaml"]);
    assert_eq!(
        r.code, 1,
        "gpulint-fix must fail when it modifies files:\n{}",
        r.output
    );
    assert!(
        r.output.contains("gpulint --fix....") && r.output.contains("Failed"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("- files were modified by this hook"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("fixed bad.yaml:14: GPU002"),
        "{}",
        r.output
    );
    assert_eq!(
        fs::read_to_string(dir.join("bad.yaml")).unwrap(),
        clean,
        "not fixed"
    );

    // 3. Clean files (and the fixed one) pass both hooks; the fix hook then changes nothing.
    let r = run("gpulint", &["bad.yaml", "clean.yaml"]);
    assert_eq!(r.code, 0, "gpulint on clean files must pass:\n{}", r.output);
    assert!(
        r.output.contains("gpulint....") && r.output.contains("Passed"),
        "{}",
        r.output
    );
    let r = run("gpulint-fix", &["bad.yaml", "clean.yaml"]);
    assert_eq!(
        r.code, 0,
        "gpulint-fix on clean files must pass:\n{}",
        r.output
    );
    assert!(!r.output.contains("files were modified"), "{}", r.output);
    assert_eq!(fs::read_to_string(dir.join("clean.yaml")).unwrap(), clean);

    // 4. A file that belongs to a kustomization is linted through the kustomization's render:
    // the overlay's partial patch (a GPU request, the limit is in the base) is not a GPU001 on
    // its own; rendered, the request 2 against the base's limit 1 is a GPU002, reported in the
    // patch at the request's line.
    fs::create_dir_all(dir.join("base")).unwrap();
    fs::create_dir_all(dir.join("overlays/prod")).unwrap();
    fs::write(
        dir.join("base/kustomization.yaml"),
        "resources:\n- deploy.yaml\n",
    )
    .unwrap();
    fs::write(
        dir.join("base/deploy.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai\n        resources:\n          requests: {cpu: \"4\", memory: 16Gi}\n          limits: {cpu: \"4\", memory: 16Gi, nvidia.com/gpu: 1}\n",
    )
    .unwrap();
    fs::write(
        dir.join("overlays/prod/kustomization.yaml"),
        "namespace: prod\nresources:\n- ../../base\npatches:\n- path: gpus.yaml\n",
    )
    .unwrap();
    fs::write(
        dir.join("overlays/prod/gpus.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        resources:\n          requests:\n            nvidia.com/gpu: 2\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "overlay"]);
    let r = run("gpulint", &["overlays/prod/gpus.yaml"]);
    assert_eq!(
        r.code, 1,
        "the rendered overlay has a GPU002:\n{}",
        r.output
    );
    assert!(r.output.contains("GPU002"), "{}", r.output);
    assert!(
        r.output.contains("overlays/prod/gpus.yaml:12"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("[render of overlays/prod]"),
        "{}",
        r.output
    );
    assert!(
        !r.output.contains("GPU001"),
        "a partial patch is not linted raw:\n{}",
        r.output
    );

    eprintln!("pre-commit hook test: {:.1?} in all", total.elapsed());
}

/// PATH without any folder that has a `cargo`: a hook that needed a compile step would fail.
fn path_without_cargo() -> std::ffi::OsString {
    let dirs: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("cargo").exists())
        .collect();
    std::env::join_paths(dirs).unwrap()
}

/// The mirror repository's `language: python` hooks (packaging/pre-commit-mirror, documented
/// in docs/install.md), with the real pre-commit: its package pins the gpulint wheel, which
/// pip takes from a local wheel index (`PIP_FIND_LINKS`, `PIP_NO_INDEX`: the wheel maturin
/// built, and setuptools for the mirror's own build). A cold store, no cargo on PATH: the
/// install compiles nothing, and its time is reported.
#[test]
fn python_hooks_install_the_wheel_from_a_local_index_without_compiling() {
    let Some(exe) = pre_commit_exe() else { return };
    let wheel = crate::support::release::wheel();
    let build_wheels = crate::support::release::tool_dir("GPULINT_BUILD_WHEELS");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();

    // The mirror repository, at one commit, its package pinning this gpulint version.
    let mirror = tmp.path().join("gpulint-pre-commit");
    fs::create_dir_all(&mirror).unwrap();
    for file in [".pre-commit-hooks.yaml", "pyproject.toml"] {
        fs::copy(
            root.join("packaging/pre-commit-mirror").join(file),
            mirror.join(file),
        )
        .unwrap();
    }
    let pyproject = fs::read_to_string(mirror.join("pyproject.toml")).unwrap();
    let pin = format!("\"gpulint=={}\"", env!("CARGO_PKG_VERSION"));
    assert!(
        pyproject.contains(&pin),
        "the mirror pins {pin} (Cargo.toml's version):\n{pyproject}"
    );
    init_and_commit(&mirror, "mirror");
    let rev = git(&mirror, &["rev-parse", "HEAD"]);

    let user = tmp.path().join("user");
    fs::create_dir_all(&user).unwrap();
    fs::write(user.join("bad.yaml"), BAD).unwrap();
    fs::write(
        user.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: gpulint\n      - id: gpulint-fix\n",
            mirror.display()
        ),
    )
    .unwrap();
    init_and_commit(&user, "manifests");

    // pip splits PIP_FIND_LINKS on whitespace (neither path has any).
    let links = format!(
        "{} {}",
        wheel.parent().unwrap().display(),
        build_wheels.display()
    );
    let home = tmp.path().join("pre-commit-home");
    let pre_commit = |args: &[&str]| {
        let mut cmd = Command::new(&exe);
        cmd.current_dir(&user)
            .args(args)
            .env("PRE_COMMIT_HOME", &home)
            .env("PATH", path_without_cargo())
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", &links)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("NO_COLOR", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("CARGO_TARGET_DIR")
            .stdin(std::process::Stdio::null());
        for var in GIT_REPO_VARS {
            cmd.env_remove(var);
        }
        let start = Instant::now();
        let out = cmd.output().expect("pre-commit runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            took: start.elapsed(),
        }
    };

    let r = pre_commit(&[
        "validate-manifest",
        mirror.join(".pre-commit-hooks.yaml").to_str().unwrap(),
    ]);
    assert_eq!(
        r.code, 0,
        "invalid mirror .pre-commit-hooks.yaml:\n{}",
        r.output
    );

    let r = pre_commit(&["install-hooks"]);
    assert_eq!(r.code, 0, "pre-commit install-hooks:\n{}", r.output);
    eprintln!(
        "language: python hook installed from the local wheel index in {:.1?} (cold store, no cargo)",
        r.took
    );
    // The hook's environment runs the wheel's binary.
    let installed: Vec<PathBuf> = fs::read_dir(&home)
        .unwrap()
        .flatten()
        .flat_map(|repo| fs::read_dir(repo.path()).into_iter().flatten().flatten())
        .map(|env| env.path().join("bin/gpulint"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(
        installed.len(),
        1,
        "one python env with gpulint: {installed:?}"
    );
    let version = Command::new(&installed[0])
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("gpulint {}", env!("CARGO_PKG_VERSION"))
    );

    let r = pre_commit(&["run", "gpulint", "--color", "never", "--files", "bad.yaml"]);
    assert_eq!(
        r.code, 1,
        "the GPU002 finding fails the hook:\n{}",
        r.output
    );
    assert!(r.output.contains("error[GPU002]"), "{}", r.output);
    assert!(r.output.contains("bad.yaml:14:31"), "{}", r.output);

    let r = pre_commit(&[
        "run",
        "gpulint-fix",
        "--color",
        "never",
        "--files",
        "bad.yaml",
    ]);
    assert_eq!(r.code, 1, "the fix hook modifies the file:\n{}", r.output);
    assert!(
        r.output.contains("fixed bad.yaml:14: GPU002"),
        "{}",
        r.output
    );
    assert_eq!(
        fs::read_to_string(user.join("bad.yaml")).unwrap(),
        BAD.replace("nvidia.com/gpu: 1 #", "nvidia.com/gpu: 2 #")
    );
}
