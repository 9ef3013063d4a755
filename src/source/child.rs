//! Running a renderer (`kustomize`, `kubectl kustomize`) as a bounded child: no stdin, a
//! deadline, a cap on what it prints, and an environment built from nothing (no proxy, no
//! plugin home, git told to use no transport, `HOME` a private empty folder). On the deadline or
//! the cap the child's process group is killed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bounds of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Duration,
    /// The most bytes read from stdout (and from stderr, each).
    pub max_output: usize,
    /// The child's address space (`RLIMIT_AS`), set right after it starts (Linux).
    pub max_memory: Option<u64>,
}

/// The address space one renderer run may use: Go programs (helm, kubectl) reserve more than
/// they touch (`kubectl kustomize` and the test suite's Helm fail under 512 MiB, run under
/// 1 GiB); a template that expands without end stops here instead of taking the machine.
pub const MAX_CHILD_MEMORY: u64 = 4 << 30;

/// The time all renderer runs of one gpulint run may take together (`--render-budget`): past
/// it, each release or root not yet rendered is an error of its own, and the run ends.
#[derive(Debug)]
pub struct Budget {
    start: Instant,
    total: Duration,
}

/// The default of `--render-budget`.
pub const DEFAULT_RENDER_BUDGET: Duration = Duration::from_secs(300);

impl Budget {
    pub fn new(total: Duration) -> Arc<Budget> {
        Arc::new(Budget {
            start: Instant::now(),
            total,
        })
    }

    pub fn total(&self) -> Duration {
        self.total
    }

    /// What is left of it.
    pub fn remaining(&self) -> Duration {
        self.total.saturating_sub(self.start.elapsed())
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            start: Instant::now(),
            total: DEFAULT_RENDER_BUDGET,
        }
    }
}

/// How a bounded run ended.
#[derive(Debug)]
pub enum Ended {
    Exited {
        status: ExitStatus,
        stdout: Vec<u8>,
        stderr: Vec<u8>,
    },
    TimedOut,
    /// It printed more than [`Limits::max_output`].
    TooMuchOutput,
}

/// Clears the environment of `cmd` and sets only what a renderer needs: `PATH` (to find what
/// the tool itself runs), `HOME`, `TMPDIR` and the XDG folders inside `home` (a private, empty
/// folder), git with no transport and no system or global config.
pub fn sanitize_env(cmd: &mut Command, home: &Path) {
    cmd.env_clear();
    cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    cmd.env("HOME", home);
    cmd.env("TMPDIR", home);
    cmd.env("XDG_CONFIG_HOME", home.join(".config"));
    cmd.env("XDG_CACHE_HOME", home.join(".cache"));
    cmd.env("XDG_DATA_HOME", home.join(".local/share"));
    cmd.env("GIT_ALLOW_PROTOCOL", "none");
    cmd.env("GIT_CONFIG_NOSYSTEM", "1");
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null");
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    cmd.env("LC_ALL", "C");
}

fn reader<R: Read + Send + 'static>(
    pipe: Option<R>,
    cap: usize,
    over: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = pipe {
            // One byte more than the cap tells "too much" from "exactly the cap".
            let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
            let _ = p.take(limit).read_to_end(&mut buf);
            if buf.len() > cap {
                over.store(true, Ordering::SeqCst);
                buf.truncate(cap);
            }
        }
        buf
    })
}

/// Runs `cmd` (its environment already set) within `limits`.
pub fn run(cmd: &mut Command, limits: Limits) -> std::io::Result<Ended> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    #[cfg(target_os = "linux")]
    if let Some(bytes) = limits.max_memory {
        if let Some(pid) = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let limit = rustix::process::Rlimit {
                current: Some(bytes),
                maximum: Some(bytes),
            };
            let _ = rustix::process::prlimit(Some(pid), rustix::process::Resource::As, limit);
        }
    }
    let over = Arc::new(AtomicBool::new(false));
    let out = reader(child.stdout.take(), limits.max_output, over.clone());
    let err = reader(child.stderr.take(), limits.max_output, over.clone());
    let start = Instant::now();
    let kill = |child: &mut std::process::Child| {
        #[cfg(unix)]
        if let Some(pid) = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = child.kill();
        let _ = child.wait();
    };
    let status = loop {
        if over.load(Ordering::SeqCst) {
            kill(&mut child);
            break None;
        }
        if let Some(status) = child.try_wait()? {
            // What it left running (holding the pipes open) goes with it.
            #[cfg(unix)]
            if let Some(pid) = i32::try_from(child.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            break Some(status);
        }
        if start.elapsed() >= limits.timeout {
            kill(&mut child);
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The group is gone (or the child exited and closed its ends): the readers finish.
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if over.load(Ordering::SeqCst) {
        return Ok(Ended::TooMuchOutput);
    }
    Ok(match status {
        Some(status) => Ended::Exited {
            status,
            stdout,
            stderr,
        },
        None => Ended::TimedOut,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_child_past_its_deadline_or_its_output_cap_is_stopped() {
        let limits = Limits {
            timeout: Duration::from_millis(300),
            max_output: 1000,
            max_memory: Some(1 << 30),
        };
        let start = Instant::now();
        let ended = run(Command::new("sh").args(["-c", "sleep 30"]), limits);
        assert!(matches!(ended, Ok(Ended::TimedOut)), "{ended:?}");
        assert!(start.elapsed() < Duration::from_secs(10));
        let ended = run(Command::new("sh").args(["-c", "yes"]), limits);
        assert!(matches!(ended, Ok(Ended::TooMuchOutput)), "{ended:?}");
        let ended = run(Command::new("sh").args(["-c", "echo hi"]), limits);
        match ended {
            Ok(Ended::Exited { stdout, .. }) => assert_eq!(stdout, b"hi\n"),
            other => panic!("{other:?}"),
        }
        // The address space is limited (set right after the start: the shell waits a little).
        #[cfg(target_os = "linux")]
        {
            let limits = Limits {
                timeout: Duration::from_secs(10),
                ..limits
            };
            match run(
                Command::new("sh").args(["-c", "sleep 0.3; ulimit -v"]),
                limits,
            ) {
                Ok(Ended::Exited { stdout, .. }) => assert_eq!(stdout, b"1048576\n"),
                other => panic!("{other:?}"),
            }
        }
    }
}
