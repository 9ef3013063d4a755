//! The helpers every integration test shares: the gpulint binary with a clean environment, an
//! isolated `git`, `copy_dir` and a seeded RNG. One copy here, so a new environment variable
//! or a git setting is added in one place.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every environment variable gpulint reads (besides PATH). `gpulint()` removes them all, so
/// the developer's shell (or scripts/test exporting GPULINT_HELM) cannot change a test: a test
/// that needs one sets it on the returned command.
pub const GPULINT_ENV: &[&str] = &[
    "GPULINT_HELM",
    "GPULINT_PROMETHEUS_URL",
    "GPULINT_PROMETHEUS_TOKEN",
    "NO_COLOR",
    "SOURCE_DATE_EPOCH",
    "GPULINT_TEST_PAUSE_BEFORE_RENAME",
    "GPULINT_RENDER_BUDGET",
];

/// The gpulint binary with none of `GPULINT_ENV` set, run in the crate root unless the caller
/// sets another directory.
pub fn gpulint() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gpulint"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    for var in GPULINT_ENV {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `cmd` to the end: (exit code, stdout, stderr); a run killed by a signal is -1.
pub fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("gpulint runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `gpulint <args>` in `dir`: (exit code, stdout, stderr).
pub fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    output(gpulint().current_dir(dir).args(args))
}

/// Variables that point git at another repository (set when the tests run inside a git hook).
pub const GIT_REPO_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
];

/// `git` in `dir`, isolated from the machine's git configuration and any outer repository,
/// with a fixed identity, `main` as the first branch and no commit signing.
pub fn git_cmd(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "gpulint test")
        .env("GIT_AUTHOR_EMAIL", "test@gpulint.invalid")
        .env("GIT_COMMITTER_NAME", "gpulint test")
        .env("GIT_COMMITTER_EMAIL", "test@gpulint.invalid")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ]);
    for var in GIT_REPO_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// `git <args>` in `dir`; fails the test when git fails. Returns stdout as git wrote it.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_with(git_cmd(dir), args)
}

/// `git <args>` through a `git_cmd` a test adjusted (say, fixed dates).
pub fn git_with(mut cmd: Command, args: &[&str]) -> String {
    let out = cmd.args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {:?} failed: {}",
        cmd.get_current_dir(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copies the tree `from` into `to` (created), files and folders only.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// xorshift64* (Vigna), seeded through splitmix64 so nearby seeds give unrelated streams:
/// deterministic randomness with no extra dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        // Never zero: xorshift would stay at zero.
        Rng((z ^ (z >> 31)) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn one<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// A run that ended within its time limit.
pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs `cmd` (stdin empty) and fails the test if it is still running after `limit`: a hang
/// on hostile input is a failure, not a stuck suite.
pub fn run_within(cmd: &mut Command, limit: Duration) -> Finished {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gpulint starts");
    // Read both pipes while waiting: a full pipe would block the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Finished {
        code,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        elapsed: start.elapsed(),
    }
}

/// The Helm engine scripts/test installs and exports as `GPULINT_HELM`. The Helm tests need
/// it as an oracle: without it they fail (a skipped oracle test passes silently in CI).
pub fn helm() -> PathBuf {
    let path = std::env::var_os("GPULINT_HELM")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .expect("GPULINT_HELM is not set: run scripts/test, which installs the Helm engine");
    assert!(
        path.is_file(),
        "GPULINT_HELM={} does not exist: run scripts/test to (re)install the Helm engine",
        path.display()
    );
    path
}

/// `kubectl` on PATH: the Kustomize oracle (`kubectl kustomize`). Without it the oracle
/// tests fail, never skip.
pub fn kubectl() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file())
        .expect("kubectl is not on PATH: it is the Kustomize oracle (scripts/test installs it)")
}

/// Writes `files` (relative path, text) under `dir`, creating folders.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A temporary folder holding `files`.
pub fn temp_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    dir
}

/// A `helm` at `dir/helm-counting` that appends each call's first argument (`template`,
/// `version`, ...) to `dir/helm-calls` and runs the real one: tests count renders, not time.
pub fn counting_helm(dir: &Path, real: &str) -> (PathBuf, PathBuf) {
    let count = dir.join("helm-calls");
    let wrapper = dir.join("helm-counting");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            count.display(),
            real
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    (wrapper, count)
}

/// How many `helm template` calls a [`counting_helm`] saw.
pub fn helm_renders(count: &Path) -> usize {
    std::fs::read_to_string(count).map_or(0, |t| t.lines().filter(|l| *l == "template").count())
}
