//! The Action's download step (scripts/action/install.sh, docs/install.md): a release of the
//! action's own version, served by a real HTTP server on 127.0.0.1 (python3's http.server)
//! from a folder laid out as a GitHub release is: the archive of the gpulint binary cargo
//! built for the tests, SHA256SUMS and source-tree.sha256. Run with a PATH without cargo, so
//! an install that tried to build would fail.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const GPULINT: &str = env!("CARGO_BIN_EXE_gpulint");
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// What install.sh picks on RUNNER_OS=Linux, RUNNER_ARCH=X64.
const TARGET: &str = "x86_64-unknown-linux-musl";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sh(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sha256(path: &Path) -> String {
    sh(Command::new("sha256sum").arg(path))[..64].to_owned()
}

/// A release folder `<dir>/v<VERSION>/` and the HTTP server in front of it (killed on drop).
struct Release {
    dir: tempfile::TempDir,
    server: Child,
    url: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Release {
    fn files(&self) -> PathBuf {
        self.dir.path().join(format!("v{VERSION}"))
    }

    fn archive(&self) -> PathBuf {
        self.files()
            .join(format!("gpulint-{VERSION}-{TARGET}.tar.gz"))
    }

    /// Writes SHA256SUMS with `hash` for the archive (and a line for another file).
    fn sums(&self, hash: &str) {
        std::fs::write(
            self.files().join("SHA256SUMS"),
            format!(
                "{}  gpulint-{VERSION}-aarch64-apple-darwin.tar.gz\n{hash}  gpulint-{VERSION}-{TARGET}.tar.gz\n",
                "0".repeat(64)
            ),
        )
        .unwrap();
    }
}

/// A release of this checkout's version and sources, served on 127.0.0.1.
fn release() -> Release {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join(format!("v{VERSION}"));
    let name = format!("gpulint-{VERSION}-{TARGET}");
    std::fs::create_dir_all(files.join(&name)).unwrap();
    // The test build's binary without its debug info: a release-sized archive, packed fast.
    sh(Command::new("objcopy")
        .arg("--strip-debug")
        .arg(GPULINT)
        .arg(files.join(&name).join("gpulint")));
    std::fs::write(files.join(&name).join("README.md"), "gpulint\n").unwrap();
    sh(Command::new("tar")
        .arg("-C")
        .arg(&files)
        .arg("-czf")
        .arg(files.join(format!("{name}.tar.gz")))
        .arg(&name));
    std::fs::remove_dir_all(files.join(&name)).unwrap();
    let source = sh(Command::new("bash")
        .arg(root().join("scripts/action/source-hash.sh"))
        .arg(root()));
    std::fs::write(files.join("source-tree.sha256"), source).unwrap();

    let mut server = Command::new("python3")
        .args([
            "-u",
            "-m",
            "http.server",
            "0",
            "--bind",
            "127.0.0.1",
            "--directory",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 -m http.server starts");
    // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .split(" port ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no port in {line:?}"))
        .to_owned();
    let release = Release {
        dir,
        server,
        url: format!("http://127.0.0.1:{port}"),
    };
    let hash = sha256(&release.archive());
    release.sums(&hash);
    release
}

struct Install {
    code: i32,
    stdout: String,
    outputs: BTreeMap<String, String>,
    temp: PathBuf,
    _runner: tempfile::TempDir,
}

/// Runs install.sh as the action's step does, in a clean environment whose PATH has no cargo.
fn install(url: &str) -> Install {
    let runner = tempfile::tempdir().unwrap();
    let temp = runner.path().join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let output = runner.path().join("github_output");
    std::fs::write(&output, "").unwrap();
    let start = Instant::now();
    let out = Command::new("bash")
        .arg(root().join("scripts/action/install.sh"))
        .current_dir(runner.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", runner.path())
        .env("GITHUB_ACTION_PATH", root())
        .env("GITHUB_OUTPUT", &output)
        .env("RUNNER_TEMP", &temp)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("GPULINT_RELEASE_URL", url)
        .output()
        .expect("bash runs");
    eprintln!("install.sh from {url}: {:.2?}", start.elapsed());
    let outputs = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Install {
        code: out.status.code().unwrap_or(-1),
        stdout: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        outputs,
        temp,
        _runner: runner,
    }
}

/// The files install.sh left in RUNNER_TEMP (its own download folder is always removed).
fn left_in(temp: &Path) -> Vec<PathBuf> {
    walk(temp)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_release_with_the_right_checksum_installs_and_the_lint_runs_it() {
    let release = release();
    let r = install(&release.url);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        r.outputs.get("installed").map(String::as_str),
        Some("true"),
        "{}",
        r.stdout
    );
    assert_eq!(r.outputs["version"], VERSION);
    let bin = PathBuf::from(&r.outputs["bin"]);
    assert_eq!(
        left_in(&r.temp),
        std::slice::from_ref(&bin),
        "only the binary is kept"
    );
    assert!(
        r.stdout.contains(&format!(
            "installed gpulint {VERSION} ({TARGET}, SHA-256 {}",
            sha256(&release.archive())
        )),
        "{}",
        r.stdout
    );
    // The lint step runs the downloaded binary.
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("ok.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .unwrap();
    let out = Command::new("bash")
        .arg(root().join("scripts/action/run.sh"))
        .current_dir(ws.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", ws.path())
        .env("GPULINT_BIN", &bin)
        .env("GITHUB_WORKSPACE", ws.path())
        .env("INPUT_CHANGED_ONLY", "false")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "gpulint action: gpulint {VERSION} ({})",
            bin.display()
        )),
        "{stdout}"
    );
}

#[test]
fn a_wrong_checksum_fails_the_step_and_installs_nothing() {
    let release = release();
    let wrong = "ab".repeat(32);
    release.sums(&wrong);
    let r = install(&release.url);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let archive = format!("gpulint-{VERSION}-{TARGET}.tar.gz");
    assert!(
        r.stdout.contains(&format!(
            "::error title=gpulint action::checksum mismatch for {archive} from {}/v{VERSION}: SHA256SUMS says {wrong}, the download is {}. Nothing was installed.",
            release.url,
            sha256(&release.archive())
        )),
        "{}",
        r.stdout
    );
    assert_eq!(r.outputs.get("installed"), None, "{:?}", r.outputs);
    assert_eq!(r.outputs.get("bin"), None);
    assert!(left_in(&r.temp).is_empty(), "{:?}", left_in(&r.temp));

    // A release whose SHA256SUMS does not answer fails the same way: no source build behind
    // the user's back.
    std::fs::remove_file(release.files().join("SHA256SUMS")).unwrap();
    let r = install(&release.url);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stdout.contains("SHA256SUMS failed (HTTP 404)"),
        "{}",
        r.stdout
    );
    assert!(left_in(&r.temp).is_empty());
}

#[test]
fn an_unreleased_ref_is_built_from_source() {
    let release = release();
    // The action's sources are not the release's: a commit after the tag.
    std::fs::write(
        release.files().join("source-tree.sha256"),
        format!("{}\n", "1".repeat(64)),
    )
    .unwrap();
    let r = install(&release.url);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.outputs["installed"], "false");
    assert!(
        r.stdout.contains(
            "::notice title=gpulint action::the action's source is not the source of release"
        ),
        "{}",
        r.stdout
    );
    // No release of this version at all.
    std::fs::remove_dir_all(release.files()).unwrap();
    let r = install(&release.url);
    assert_eq!(r.outputs["installed"], "false", "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("gpulint {VERSION} has no release at")),
        "{}",
        r.stdout
    );
    assert!(left_in(&r.temp).is_empty());
}

#[test]
fn the_download_host_must_be_https_or_this_machine() {
    for url in [
        "http://example.com/releases",
        "ftp://127.0.0.1/x",
        "file:///tmp",
    ] {
        let r = install(url);
        assert_eq!(r.code, 2, "{url}: {}", r.stdout);
        assert!(
            r.stdout
                .contains("GPULINT_RELEASE_URL must be an https URL"),
            "{}",
            r.stdout
        );
    }
}

/// action.yml runs the download first; the source build and its caches only when it installed
/// nothing; the lint step runs whichever binary there is.
#[test]
fn the_action_builds_from_source_only_when_nothing_was_downloaded() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let steps: Vec<&str> = action.split("\n    - name: ").skip(1).collect();
    let names: Vec<&str> = steps.iter().map(|s| s.lines().next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Mask the Prometheus token",
            "Download the released gpulint",
            "Cache keys of the gpulint build",
            "Restore the gpulint binary",
            "Restore the gpulint build dir",
            "Install gpulint from the action's source",
            "Run gpulint"
        ]
    );
    for step in &steps[2..6] {
        assert!(
            step.contains("if: steps.download.outputs.installed != 'true'"),
            "{step}"
        );
    }
    assert!(steps[6]
        .contains("GPULINT_BIN: ${{ steps.download.outputs.bin || steps.keys.outputs.bin }}"));
    assert!(
        !steps[6].contains("if:"),
        "the lint step runs after a download too"
    );
    // Only the workflow's environment names the host: no input does.
    assert!(!action.contains("inputs.release"), "{action}");
}
