//! Issue 10, writes and interrupts: what a hostile pull request can plant around the files
//! `--fix` writes (symlinks at temp names, a symlinked, read-only or FIFO target, a file appended
//! to while the fix runs), and a `--fix` run interrupted by SIGINT at random points.
//! Real binary, real files, the real `git` CLI.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::common::{git, gpulint, run, Rng};

/// A manifest GPU002 fixes: `nvidia.com/gpu: {requests}` in requests becomes the limit's 1.
fn broken(name: &str, requests: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          resources:\n            requests:\n              nvidia.com/gpu: {requests}\n            limits:\n              nvidia.com/gpu: 1\n"
    )
}

fn fixed(name: &str) -> String {
    broken(name, 1)
}

fn git_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "init"]);
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// Files a run left in `dir` whose name says they are temp files (any naming, old or new).
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != ".git" {
                    stack.push(p);
                }
            } else if e.file_name().to_string_lossy().contains(".tmp") {
                found.push(p);
            }
        }
    }
    found
}

/// Symlinks at the temp names the old writer used (`.NAME.gpulint-PID.tmp`) for the next few
/// thousand PIDs: a pull request can commit such links, and CI's PIDs are predictable.
fn plant_temp_links(dir: &Path, name: &str, to: &Path) -> usize {
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .expect("ns_last_pid is readable");
    let mut planted = 0;
    for pid in last + 1..=last + 4000 {
        symlink(to, dir.join(format!(".{name}.gpulint-{pid}.tmp"))).unwrap();
        planted += 1;
    }
    planted
}

#[test]
fn fix_commit_through_planted_temp_links_creates_no_git_hook() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let file = repo.join("deploy.yaml");
    std::fs::write(&file, broken("llm", 2)).unwrap();
    // git keeps the executable bit a pull request sets; the old writer copied it onto the link.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    git_repo(repo);
    let hook = repo.join(".git/hooks/pre-push");
    plant_temp_links(repo, "deploy.yaml", &hook);
    let (code, _, stderr) = run(
        repo,
        &["--fix", "--commit", "--select", "GPU002", "deploy.yaml"],
    );
    assert!(
        !hook.exists(),
        "a planted link made --fix --commit create {}:\n{stderr}",
        hook.display()
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("committed "), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), fixed("llm"));
    assert_eq!(mode(&file), 0o755, "the manifest keeps its mode");
    assert!(file.symlink_metadata().unwrap().file_type().is_file());
    assert_eq!(git(repo, &["status", "--porcelain", "deploy.yaml"]), "");
}

#[test]
fn fix_through_planted_temp_links_writes_nothing_outside_the_repo() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "keep me\n").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let file = repo.join("deploy.yaml");
    std::fs::write(&file, broken("llm", 2)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    plant_temp_links(&repo, "deploy.yaml", &outside);
    let (code, _, stderr) = run(&repo, &["--fix", "--select", "GPU002", "deploy.yaml"]);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
    assert_eq!(mode(&outside), 0o600, "the outside file's mode changed");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), fixed("llm"));
    assert_eq!(mode(&file), 0o666, "the manifest keeps its mode");
}

#[test]
fn a_symlinked_target_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::create_dir(repo.join("sub")).unwrap();
    std::fs::write(repo.join("a.yaml"), broken("a", 2)).unwrap();
    std::fs::write(repo.join("sub/real.yaml"), broken("b", 2)).unwrap();
    symlink("sub/real.yaml", repo.join("link.yaml")).unwrap();
    let (code, _, stderr) = run(repo, &["--fix", "a.yaml", "link.yaml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("error: link.yaml: is a symbolic link"),
        "the error names the link: {stderr}"
    );
    assert!(!stderr.contains("fixed "), "nothing was fixed: {stderr}");
    let link = repo.join("link.yaml").symlink_metadata().unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(
        std::fs::read_to_string(repo.join("sub/real.yaml")).unwrap(),
        broken("b", 2)
    );
    // The whole plan is checked before the first write.
    assert_eq!(
        std::fs::read_to_string(repo.join("a.yaml")).unwrap(),
        broken("a", 2)
    );
    assert_eq!(temp_files(repo), Vec::<PathBuf>::new());
}

#[test]
fn a_read_only_target_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::write(repo.join("a.yaml"), broken("a", 2)).unwrap();
    let ro = repo.join("ro.yaml");
    std::fs::write(&ro, broken("ro", 2)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let (code, _, stderr) = run(repo, &["--fix", "a.yaml", "ro.yaml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("error: ro.yaml: not writable"),
        "the error names the file: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), broken("ro", 2));
    assert_eq!(mode(&ro), 0o444);
    assert_eq!(
        std::fs::read_to_string(repo.join("a.yaml")).unwrap(),
        broken("a", 2),
        "the whole plan is checked before the first write"
    );
}

#[test]
fn patch_output_through_a_planted_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::write(repo.join("deploy.yaml"), broken("llm", 2)).unwrap();
    git_repo(repo);
    let hook = repo.join(".git/hooks/pre-push");
    symlink(&hook, repo.join("fixes.patch")).unwrap();
    let (code, _, stderr) = run(repo, &["--fix", "--patch", "fixes.patch", "deploy.yaml"]);
    assert!(!hook.exists(), "--patch wrote through the link:\n{stderr}");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("fixes.patch: is a symbolic link"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("deploy.yaml")).unwrap(),
        broken("llm", 2)
    );
}

/// Starts `gpulint --fix FILES` with the test-only pause before the last check and the rename,
/// waits until it pauses, runs `meanwhile`, releases it and returns its exit code and stderr.
fn fix_with_pause(repo: &Path, files: &[&str], meanwhile: impl FnOnce()) -> (i32, String) {
    let pause = repo.parent().unwrap().join("paused");
    let mut child = gpulint()
        .current_dir(repo)
        .env("GPULINT_TEST_PAUSE_BEFORE_RENAME", &pause)
        .arg("--fix")
        .args(files)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !pause.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "gpulint ended ({status}) without pausing before the rename:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never paused");
        std::thread::sleep(Duration::from_millis(5));
    }
    meanwhile();
    std::fs::remove_file(&pause).unwrap();
    let out = wait_at_most(child, Duration::from_secs(60));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn wait_at_most(mut child: Child, limit: Duration) -> std::process::Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("gpulint hangs");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn lines_appended_while_fix_runs_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let file = repo.join("deploy.yaml");
    std::fs::write(&file, broken("llm", 2)).unwrap();
    let appended = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\n";
    let (code, stderr) = fix_with_pause(&repo, &["deploy.yaml"], || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(appended.as_bytes()).unwrap();
    });
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        broken("llm", 2) + appended,
        "the appended lines were lost:\n{stderr}"
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("not fixed: deploy.yaml: changed while gpulint ran; left as is"),
        "{stderr}"
    );
    assert!(!stderr.contains("fixed deploy.yaml:"), "{stderr}");
    assert_eq!(temp_files(&repo), Vec::<PathBuf>::new());
}

#[test]
fn a_target_replaced_by_a_fifo_is_left_alone_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("a.yaml"), broken("a", 2)).unwrap();
    let file = repo.join("b.yaml");
    std::fs::write(&file, broken("b", 2)).unwrap();
    // Pauses once per file: a.yaml is written first, b.yaml becomes a FIFO while paused.
    let pause = dir.path().join("paused");
    let mut child = gpulint()
        .current_dir(&repo)
        .env("GPULINT_TEST_PAUSE_BEFORE_RENAME", &pause)
        .args(["--fix", "a.yaml", "b.yaml"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for round in 0..2 {
        let started = Instant::now();
        while !pause.exists() {
            if child.try_wait().unwrap().is_some() {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "gpulint ended without pausing (round {round}):\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(started.elapsed() < Duration::from_secs(60), "never paused");
            std::thread::sleep(Duration::from_millis(5));
        }
        if round == 1 {
            std::fs::remove_file(&file).unwrap();
            let made = Command::new("mkfifo").arg(&file).status().unwrap();
            assert!(made.success());
        }
        std::fs::remove_file(&pause).unwrap();
    }
    let out = wait_at_most(child, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not fixed: b.yaml: not a regular file; left as is"),
        "{stderr}"
    );
    assert!(std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(
        std::fs::read_to_string(repo.join("a.yaml")).unwrap(),
        fixed("a")
    );
    assert!(stderr.contains("fixed a.yaml:"), "{stderr}");
    assert_eq!(temp_files(&repo), Vec::<PathBuf>::new());
}

const TREE_FILES: usize = 2000;

/// A git repository of `TREE_FILES` fixable manifests in 20 folders; returns (path, workload
/// name, original text).
fn tree(root: &Path, rng: &mut Rng) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    for i in 0..TREE_FILES {
        let rel = format!("d{:02}/f{i:04}.yaml", i % 20);
        let name = format!("w{i}");
        let text = broken(&name, 2 + rng.below(6) as u32);
        let path = root.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        files.push((rel, name, text));
    }
    git_repo(root);
    files
}

/// A scratch folder on tmpfs when there is one: 20 runs of 2,000 fsyncs stay quick.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new()
            .prefix("gpulint-int-")
            .tempdir_in(shm)
        {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

struct Interrupted {
    /// The exit code, or None when SIGINT ended the process outside the write phase.
    code: Option<i32>,
    stderr: String,
    /// When the first and the last `fixed` lines were printed, and when the run ended.
    fixed_lines: Option<(Duration, Duration)>,
    ended: Duration,
}

/// When to send SIGINT.
#[derive(Clone, Copy, Debug)]
enum Signal {
    Never,
    /// This long after the start.
    After(Duration),
    /// This long after the first `fixed` line (writing has begun).
    AfterFirstFix(Duration),
}

/// Runs `gpulint --fix` in `repo` and sends SIGINT as `signal` says.
fn fix_and_interrupt(repo: &Path, signal: Signal) -> Interrupted {
    let started = Instant::now();
    let mut child = gpulint()
        .current_dir(repo)
        .args(["--fix", "--select", "GPU002", "."])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (writing, has_begun) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines: Option<(Duration, Duration)> = None;
        let mut all = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if line.starts_with("fixed ") && line.contains(".yaml:") {
                let now = started.elapsed();
                if lines.is_none() {
                    let _ = writing.send(());
                }
                lines = Some((lines.map_or(now, |(first, _)| first), now));
            }
            all.push_str(&line);
            all.push('\n');
        }
        (lines, all)
    });
    let at = match signal {
        Signal::Never => None,
        Signal::After(after) => Some(started + after),
        Signal::AfterFirstFix(after) => has_begun
            .recv_timeout(Duration::from_secs(120))
            .ok()
            .map(|()| Instant::now() + after),
    };
    if let Some(at) = at {
        while Instant::now() < at && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(200));
        }
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
    }
    let status = child.wait().unwrap();
    let ended = started.elapsed();
    let (fixed_lines, stderr) = reader.join().unwrap();
    Interrupted {
        code: status.code(),
        stderr,
        fixed_lines,
        ended,
    }
}

/// The files the printed `fixed FILE:LINE: …` lines name.
fn reported(stderr: &str) -> std::collections::BTreeSet<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("fixed "))
        .filter_map(|l| l.split_once(':'))
        .filter(|(file, rest)| !rest.is_empty() && file.ends_with(".yaml"))
        .map(|(file, _)| file.trim_start_matches("./").to_string())
        .collect()
}

#[test]
fn an_interrupted_fix_leaves_each_file_whole_reports_it_and_leaves_no_temp_file() {
    let mut rng = Rng::new(0x5EED_0010);
    // One uninterrupted run tells when writing starts and ends on this machine.
    let calibration = scratch();
    tree(calibration.path(), &mut rng);
    let full = fix_and_interrupt(calibration.path(), Signal::Never);
    assert_eq!(full.code, Some(0), "{}", full.stderr);
    assert_eq!(reported(&full.stderr).len(), TREE_FILES, "{}", full.stderr);
    let (first, last) = full.fixed_lines.expect("fixed lines are printed");
    let writing = (last - first).max(Duration::from_millis(20));
    let mut partial = 0;
    // At least 20 rounds; more (up to 40) when the machine's load moved the writes away from
    // the calibration, until 3 runs were interrupted while writing.
    let mut rounds = 0;
    for round in 0..40 {
        if round >= 20 && partial >= 3 {
            break;
        }
        rounds += 1;
        let dir = scratch();
        let files = tree(dir.path(), &mut rng);
        // Most points fall while files are written (the part that matters), the others
        // anywhere in the run, before or after the writes.
        let signal = if round % 4 == 3 {
            Signal::After(Duration::from_micros(
                rng.below(full.ended.as_micros() as usize * 11 / 10) as u64,
            ))
        } else {
            Signal::AfterFirstFix(Duration::from_micros(
                rng.below(writing.as_micros() as usize) as u64,
            ))
        };
        let r = fix_and_interrupt(dir.path(), signal);
        let context = format!("round {round}, SIGINT {signal:?}: exit {:?}", r.code);
        let mut changed = std::collections::BTreeSet::new();
        for (rel, name, original) in &files {
            let now = std::fs::read_to_string(dir.path().join(rel)).unwrap();
            if now != *original {
                assert_eq!(
                    now,
                    fixed(name),
                    "{context}: {rel} is neither original nor fixed"
                );
                changed.insert(rel.clone());
            }
        }
        let status = git(
            dir.path(),
            &["status", "--porcelain", "--untracked-files=all"],
        );
        for line in status.lines() {
            assert!(
                line.starts_with(" M "),
                "{context}: git status shows {line:?}"
            );
        }
        assert_eq!(status.lines().count(), changed.len(), "{context}");
        assert_eq!(
            reported(&r.stderr),
            changed,
            "{context}: the printed fixed lines must name exactly the files changed\n{}",
            r.stderr
        );
        match r.code {
            // Ended by SIGINT outside the write phase (its default action there): before it
            // nothing was written, after it everything was (and reported, as checked above).
            None => assert!(
                changed.is_empty() || changed.len() == TREE_FILES,
                "{context}: {} file(s) changed",
                changed.len()
            ),
            Some(130) => assert!(r.stderr.contains("interrupted:"), "{context}: {}", r.stderr),
            // The signal came after the last write.
            Some(0) => assert_eq!(changed.len(), TREE_FILES, "{context}"),
            Some(_) => panic!("{context}: {}", r.stderr),
        }
        if !changed.is_empty() && changed.len() < TREE_FILES {
            partial += 1;
        }
        eprintln!("{context}: {} file(s) fixed", changed.len());
    }
    assert!(
        partial >= 3,
        "only {partial} of {rounds} runs were interrupted while writing: the test proves little"
    );
}

/// Issue 24: a repository folder that is a link (`reports -> /outside`) is never written through:
/// `-o`, `--output-format FMT=FILE` and `--patch` are refused, before anything is written, and
/// the folder outside stays empty.
#[test]
fn outputs_are_never_written_through_a_symlinked_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("deep")).unwrap();
    std::fs::write(repo.join("deploy.yaml"), broken("llm", 2)).unwrap();
    git_repo(&repo);
    symlink(&outside, repo.join("reports")).unwrap();
    symlink(&outside, repo.join("deep/reports")).unwrap();
    let absolute = repo.join("reports/abs.json");
    let absolute = absolute.to_str().unwrap();
    let cases: [&[&str]; 6] = [
        &["--format", "json", "-o", "reports/x.json", "deploy.yaml"],
        &["-o", "deep/reports/x.txt", "deploy.yaml"],
        &["--format", "json", "-o", absolute, "deploy.yaml"],
        &["--output-format", "html=reports/x.html", "deploy.yaml"],
        &[
            "--output-format",
            "sarif=reports/x.sarif",
            "--output-format",
            "json=ok.json",
            "deploy.yaml",
        ],
        &["--fix", "--patch", "reports/x.patch", "deploy.yaml"],
    ];
    for args in cases {
        let (code, _, stderr) = run(&repo, args);
        let written: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert!(
            written.is_empty(),
            "{args:?} wrote through the link: {written:?}\n{stderr}"
        );
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("reports is a symbolic link; gpulint does not write through links"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(repo.join("deploy.yaml")).unwrap(),
        broken("llm", 2),
        "--patch writes no manifest"
    );
    // A real folder is written as before.
    std::fs::create_dir(repo.join("out")).unwrap();
    let (code, _, stderr) = run(
        &repo,
        &["--format", "json", "-o", "out/x.json", "deploy.yaml"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(repo.join("out/x.json").is_file());
}

/// A base two overlays read, whose GPU002 fix is written as a new overlay patch
/// `gpulint-deployment-NAME.yaml` in each overlay.
fn overlay_repo(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let repo = dir.path().join("repo");
    for overlay in ["a", "b"] {
        let k = repo.join(format!("overlays/{overlay}/kustomization.yaml"));
        std::fs::create_dir_all(k.parent().unwrap()).unwrap();
        std::fs::write(&k, "resources:\n- ../../base\n").unwrap();
    }
    std::fs::create_dir_all(repo.join("base")).unwrap();
    std::fs::write(
        repo.join("base/kustomization.yaml"),
        "resources:\n- deploy.yaml\n",
    )
    .unwrap();
    std::fs::write(repo.join("base/deploy.yaml"), broken(name, 2)).unwrap();
    git_repo(&repo);
    (dir, repo, outside)
}

fn tree_texts(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() && e.file_name() != ".git" {
                stack.push(e.path());
            } else if t.is_file() {
                out.push((e.path(), std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Issue 24, attack 8: an object named `lnk/a08-evil` would name the patch
/// `gpulint-deployment-lnk/a08-evil.yaml`, through a link the pull request put at
/// `gpulint-deployment-lnk`. No file is named after a name that is not a Kubernetes name, and
/// nothing is written at all (not one file of the run).
#[test]
fn fix_names_no_file_after_an_unsafe_object_name() {
    let (_dir, repo, outside) = overlay_repo("lnk/a08-evil");
    for overlay in ["a", "b"] {
        symlink(
            &outside,
            repo.join(format!("overlays/{overlay}/gpulint-deployment-lnk")),
        )
        .unwrap();
    }
    let before = tree_texts(&repo);
    let (_, _, stderr) = run(&repo, &["--fix", "--select", "GPU002", "overlays"]);
    let written: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert!(
        written.is_empty(),
        "--fix wrote outside: {written:?}\n{stderr}"
    );
    assert_eq!(tree_texts(&repo), before, "{stderr}");
    assert!(
        stderr.contains("not a Kubernetes name (a DNS-1123 subdomain)"),
        "{stderr}"
    );
}

/// A file of a `--fix` run reached through a folder that is a link (here to a folder of the
/// repository itself) is refused before the first write: the run's other file is not written
/// either.
#[test]
fn fix_refuses_a_symlinked_folder_before_writing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("real")).unwrap();
    std::fs::write(repo.join("a.yaml"), broken("a", 2)).unwrap();
    std::fs::write(repo.join("real/b.yaml"), broken("b", 2)).unwrap();
    symlink("real", repo.join("sub")).unwrap();
    git_repo(&repo);
    let before = tree_texts(&repo);
    let (code, _, stderr) = run(
        &repo,
        &["--fix", "--select", "GPU002", "a.yaml", "sub/b.yaml"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "sub is a symbolic link; gpulint does not write through links; nothing written"
        ),
        "{stderr}"
    );
    assert_eq!(tree_texts(&repo), before, "a file was written: {stderr}");
    assert_eq!(temp_files(&repo), Vec::<PathBuf>::new());
    // Named through the real folder, both are fixed.
    let (code, _, stderr) = run(
        &repo,
        &["--fix", "--select", "GPU002", "a.yaml", "real/b.yaml"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(repo.join("a.yaml")).unwrap(),
        fixed("a")
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("real/b.yaml")).unwrap(),
        fixed("b")
    );
}
