//! Writes planned fixes in a folder a pull request controls. Every target is checked before the
//! first write: a symbolic link, anything but a regular file, or a file without write permission
//! is refused and nothing is written. Each file is written to a temp file with a random name,
//! created exclusively beside it (never through a planted link), synced, checked once more against
//! the text that was linted (right before the rename: a concurrent change is never lost), and
//! renamed over it with its permissions.
//!
//! Every target is reached through no symbolic link below its anchor (the working directory,
//! else the repository holding it; see [`reach`]): on Linux its folder is opened with `openat2`
//! and `RESOLVE_NO_SYMLINKS` and held open while the file is written through it, elsewhere each
//! folder on the way is checked with `symlink_metadata`. A folder of the repository that is a
//! link (`reports -> /outside`) is refused, before the first write of a run.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::plan::{FileFix, FixPlan};

/// Files written at once by `write_each`: their temp files are written in parallel and synced
/// together (see [`sync_batch`]), then checked and renamed one by one in landing order (so at
/// most this many temp files are open, and a stop leaves every file whole).
const WRITE_BATCH: usize = 64;

/// Test-only: before the last check and the rename of each file, the writer creates the file this
/// variable names and waits (at most a minute) until it is removed, so a test can change a target
/// at that moment deterministically. Not for use outside tests.
const TEST_PAUSE_VAR: &str = "GPULINT_TEST_PAUSE_BEFORE_RENAME";

/// Why a file was not written.
enum Failure {
    /// The target is not what was linted any more: left as it is, the run goes on.
    LeftAsIs(String),
    /// The write itself failed.
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

/// What `write_each` did.
#[derive(Debug, Default)]
pub struct Written {
    pub files: usize,
    /// Files left as they were, with why (`NAME: changed while gpulint ran; left as is`).
    pub left: Vec<String>,
    /// Files not reached because SIGINT/SIGTERM asked to stop.
    pub not_reached: usize,
}

/// Writes the files one by one, calling `done` as each is on disk; stops between two files when
/// `stop` is set. A file that changed (or stopped being a regular file) since it was read is left
/// as it is and listed. Errors: a refused target (nothing written) or a failed write (the files
/// before it are written and were passed to `done`).
pub fn write_each(
    plan: &FixPlan,
    stop: &AtomicBool,
    mut done: impl FnMut(&FileFix),
) -> Result<Written, String> {
    check_targets(plan)?;
    let mut out = Written::default();
    let files: Vec<&FileFix> = in_landing_order(plan).collect();
    for (b, batch) in files.chunks(WRITE_BATCH).enumerate() {
        if stop.load(Ordering::SeqCst) {
            out.not_reached = files.len() - b * WRITE_BATCH;
            break;
        }
        // Staged in parallel, then synced together: every temp file is on disk before the
        // first rename of the batch.
        let staged: Vec<Result<Staged, Failure>> =
            batch.par_iter().map(|f| stage(f, false)).collect();
        let staged = sync_batch(staged);
        for (i, (f, staged)) in batch.iter().zip(staged).enumerate() {
            // A stop here drops the staged temp files: the files not reached stay as they were.
            if stop.load(Ordering::SeqCst) {
                out.not_reached = files.len() - (b * WRITE_BATCH + i);
                return Ok(out);
            }
            match staged.and_then(|s| land(f, s)) {
                Ok(()) => {
                    out.files += 1;
                    done(f);
                }
                Err(Failure::LeftAsIs(why)) => {
                    out.left.push(format!("{}: {why}; left as is", f.name))
                }
                Err(Failure::Io(e)) => {
                    return Err(format!(
                        "{}: cannot write: {e}; stopped after {} of {} file(s)",
                        f.name,
                        out.files,
                        plan.files.len()
                    ))
                }
            }
        }
    }
    Ok(out)
}

/// Writes every file or none (`--commit`): on a failure or a stop request, the files already
/// written get their original text back.
pub fn write_all(plan: &FixPlan, stop: &AtomicBool) -> Result<(), String> {
    check_targets(plan)?;
    let mut written: Vec<&FileFix> = Vec::new();
    for f in in_landing_order(plan) {
        let failed = if stop.load(Ordering::SeqCst) {
            Some("interrupted".to_string())
        } else {
            match write_file(f) {
                Ok(()) => None,
                Err(Failure::LeftAsIs(why)) => Some(format!("{}: {why}", f.name)),
                Err(Failure::Io(e)) => Some(format!("{}: cannot write: {e}", f.name)),
            }
        };
        if let Some(why) = failed {
            let kept = restore(&written);
            let mut message = format!("{why}; nothing written");
            if !kept.is_empty() {
                message = format!(
                    "{why}; could not put back {} (they have the fixes)",
                    kept.join(", ")
                );
            }
            return Err(message);
        }
        written.push(f);
    }
    Ok(())
}

/// New files first: a Kustomize fix adds a patch file and the kustomization entry that names
/// it, and a run stopped between the two must leave an unused file, never an entry naming a
/// file that does not exist (which breaks the build). Otherwise the plan's order.
fn in_landing_order(plan: &FixPlan) -> impl Iterator<Item = &FileFix> {
    let created = plan.files.iter().filter(|f| f.created);
    created.chain(plan.files.iter().filter(|f| !f.created))
}

/// Puts the original text back (only where the file is still as gpulint wrote it); returns the
/// files that could not be put back.
fn restore(written: &[&FileFix]) -> Vec<String> {
    let mut kept = Vec::new();
    for f in written.iter().rev() {
        let ok = if f.created {
            reach(&f.path).is_ok_and(|r| std::fs::remove_file(&r.path).is_ok())
        } else {
            replace(&f.path, f.fixed.as_bytes(), f.original.as_bytes()).is_ok()
        };
        if !ok {
            kept.push(f.name.clone());
        }
    }
    kept
}

/// Checks every target before anything is written: see `target_problem`; a file a fix creates
/// must not exist yet.
pub fn check_targets(plan: &FixPlan) -> Result<(), String> {
    for f in &plan.files {
        // Its folder, through no link (each is opened and closed again: a plan may touch more
        // folders than a process may hold open).
        let reached =
            reach(&f.path).map_err(|why| format!("{}: {why}; nothing written", f.name))?;
        if f.created {
            match std::fs::symlink_metadata(&reached.path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Ok(_) => return Err(format!("{}: already exists; nothing written", f.name)),
                Err(e) => return Err(format!("{}: {e}; nothing written", f.name)),
            }
        } else if let Some(why) = target_problem(&reached.path, true) {
            return Err(format!("{}: {why}; nothing written", f.name));
        }
    }
    Ok(())
}

/// Checks the files a diff or patch is made of: a link or a non-regular file is refused, as
/// `--fix` would refuse it.
pub fn check_sources(plan: &FixPlan) -> Result<(), String> {
    for f in plan.files.iter().filter(|f| !f.created) {
        if let Some(why) = target_problem(&f.path, false) {
            return Err(format!("{}: {why}; no diff made", f.name));
        }
    }
    Ok(())
}

/// Why `path` may not be replaced: a link (gpulint never writes through one), not a regular
/// file, or (with `write`) no write permission for anyone (root would override it; the owner's
/// 0444 says "do not change").
fn target_problem(path: &Path, write: bool) -> Option<String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return Some(e.to_string()),
    };
    if meta.file_type().is_symlink() {
        return Some("is a symbolic link; gpulint does not write through links".into());
    }
    if !meta.is_file() {
        return Some("not a regular file".into());
    }
    if !write {
        return None;
    }
    if meta.permissions().readonly() {
        return Some(format!("not writable ({})", mode_text(&meta)));
    }
    // Permission for this user: open for writing, without truncating, following no link.
    match open_nofollow(OpenOptions::new().write(true), path) {
        Ok(_) => None,
        Err(e) => Some(format!("not writable: {e}")),
    }
}

#[cfg(unix)]
fn mode_text(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::PermissionsExt;
    format!("mode {:04o}", meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_text(_: &std::fs::Metadata) -> String {
    "read-only".into()
}

/// Opens `path` without following a link at its last component and without blocking on a FIFO.
fn open_nofollow(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

fn write_file(f: &FileFix) -> Result<(), Failure> {
    stage(f, true).and_then(|s| land(f, s))
}

/// A fixed text written and synced to its temp file, not yet renamed over its target (reached
/// through the folder it holds open; the temp file is dropped first, then the folder).
struct Staged(tempfile::NamedTempFile, Reached);

/// Stages `f`'s fixed text; synced now with `sync`, else the caller syncs it ([`sync_batch`]).
fn stage(f: &FileFix, sync: bool) -> Result<Staged, Failure> {
    let reached = reach(&f.path).map_err(|why| Failure::Io(io::Error::other(why)))?;
    stage_unsynced(reached, f.created, f.fixed.as_bytes()).and_then(|s| {
        if sync {
            s.0.as_file().sync_all()?;
        }
        Ok(s)
    })
}

/// Syncs the staged temp files of a batch. On Linux 5.8 and later, one `syncfs` per file system
/// they are on: each `fsync` waits for a flush of the device's cache of its own, so a batch of
/// 64 small files was 64 flushes (on the 2-core VM the syncs took longer than the rest of
/// `--fix` together), and `syncfs` reports a failed write-back since 5.8 (before, it returned 0
/// whatever happened, so earlier kernels and other systems sync each file). A file whose sync
/// fails (or whose file system's does) fails as its write would: nothing of the batch is renamed
/// after it.
fn sync_batch(staged: Vec<Result<Staged, Failure>>) -> Vec<Result<Staged, Failure>> {
    #[cfg(target_os = "linux")]
    if syncfs_reports_errors() {
        use std::os::unix::fs::MetadataExt;
        let mut synced: Vec<(u64, Result<(), io::ErrorKind>)> = Vec::new();
        return staged
            .into_iter()
            .map(|s| {
                let s = s?;
                let file = s.0.as_file();
                let dev = file.metadata()?.dev();
                let done = match synced.iter().find(|(d, _)| *d == dev) {
                    Some((_, done)) => *done,
                    None => {
                        let done = rustix::fs::syncfs(file).map_err(|e| io::Error::from(e).kind());
                        synced.push((dev, done));
                        done
                    }
                };
                match done {
                    Ok(()) => Ok(s),
                    Err(kind) => Err(Failure::Io(io::Error::new(
                        kind,
                        "syncing the file system failed",
                    ))),
                }
            })
            .collect();
    }
    staged
        .into_iter()
        .map(|s| {
            let s = s?;
            s.0.as_file().sync_all()?;
            Ok(s)
        })
        .collect()
}

/// Whether this kernel's `syncfs` says when a write-back failed (Linux 5.8 and later).
#[cfg(target_os = "linux")]
fn syncfs_reports_errors() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        // The kernel's release (`6.1.0-18-amd64`); without /proc, the file-by-file syncs.
        let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else {
            return false;
        };
        let mut parts = release
            .split(|c: char| !c.is_ascii_digit())
            .map(|p| p.parse::<u32>().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(major), Some(minor)) => (major, minor) >= (5, 8),
            _ => false,
        }
    })
}

fn land(f: &FileFix, staged: Staged) -> Result<(), Failure> {
    if f.created {
        rename_new(staged)
    } else {
        rename_over(staged, f.original.as_bytes())
    }
}

/// A target reached through no symbolic link below its anchor: `path` names it through its
/// folder, which `_folder` holds open (Linux: `/proc/self/fd/N/NAME`, which the kernel resolves
/// to that very folder without walking the path again), or is the path itself after each
/// folder on the way was checked with `symlink_metadata`.
pub(crate) struct Reached {
    path: std::path::PathBuf,
    #[cfg(target_os = "linux")]
    _folder: Option<rustix::fd::OwnedFd>,
}

/// Where the links stop being the user's: the working directory when `path` is below it, else
/// the repository holding it, else its own folder (only the file itself is checked then).
fn anchor_of(path: &Path) -> std::path::PathBuf {
    use crate::source::kustomize::normalize;
    if let Some(cwd) = std::env::current_dir().ok().filter(|c| path.starts_with(c)) {
        return cwd;
    }
    let repo = normalize(&crate::source::repo::repository_of(path));
    if path.starts_with(&repo) && path != repo {
        return repo;
    }
    folder(path).to_path_buf()
}

/// Opens the folder of `path` without following a symbolic link anywhere below its anchor
/// ([`anchor_of`]); `Err` says which link (or why not).
pub(crate) fn reach(path: &Path) -> Result<Reached, String> {
    use crate::source::kustomize::normalize;
    let absolute = normalize(path);
    let Some(name) = absolute.file_name().map(|n| n.to_os_string()) else {
        return Err("not a file name".into());
    };
    let parent = folder(&absolute).to_path_buf();
    let anchor = anchor_of(&absolute);
    let below = parent.strip_prefix(&anchor).unwrap_or(Path::new(""));
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        use rustix::io::Errno;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let opened = rustix::fs::open(&anchor, flags, Mode::empty()).and_then(|root| {
            let below = if below.as_os_str().is_empty() {
                Path::new(".")
            } else {
                below
            };
            let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            rustix::fs::openat2(&root, below, flags, Mode::empty(), resolve)
        });
        match opened {
            Ok(fd) => {
                use std::os::fd::AsRawFd;
                let through = Path::new("/proc/self/fd").join(fd.as_raw_fd().to_string());
                if through.is_dir() {
                    return Ok(Reached {
                        path: through.join(&name),
                        _folder: Some(fd),
                    });
                }
                // No /proc: the long way below.
            }
            // A link on the way: the long way below names it.
            Err(Errno::LOOP) => {}
            // No `openat2` (before Linux 5.6, or a seccomp filter): the long way.
            Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::AGAIN) => {}
            Err(e) => return Err(format!("{}: {}", parent.display(), io::Error::from(e))),
        }
    }
    no_link_below(&anchor, below)?;
    Ok(Reached {
        path: parent.join(&name),
        #[cfg(target_os = "linux")]
        _folder: None,
    })
}

/// Checks each folder of `below` (relative to `anchor`) with `symlink_metadata`: none may be a
/// symbolic link (the long way of [`reach`], and how it names the link it met).
fn no_link_below(anchor: &Path, below: &Path) -> Result<(), String> {
    let mut at = anchor.to_path_buf();
    for part in below.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link; gpulint does not write through links",
                    at.display()
                ))
            }
            Ok(m) if !m.is_dir() => return Err(format!("{} is not a folder", at.display())),
            Ok(_) => {}
            Err(e) => return Err(format!("{}: {e}", at.display())),
        }
    }
    Ok(())
}

/// Writes `text` to a temp file beside the reached target (with the permissions of the file
/// there, unless `new`) and syncs it; nothing visible changes.
fn stage_at(reached: Reached, new: bool, text: &[u8]) -> Result<Staged, Failure> {
    let staged = stage_unsynced(reached, new, text)?;
    staged.0.as_file().sync_all()?;
    Ok(staged)
}

/// [`stage_at`] without the sync.
fn stage_unsynced(reached: Reached, new: bool, text: &[u8]) -> Result<Staged, Failure> {
    let path = reached.path.as_path();
    let existing = if new {
        None
    } else {
        let meta = std::fs::symlink_metadata(path)?;
        if !meta.is_file() {
            return Err(Failure::LeftAsIs("not a regular file".to_string()));
        }
        Some(meta)
    };
    let mut temp = new_temp(path, new)?;
    temp.write_all(text)?;
    if let Some(meta) = existing {
        // On the open file: a link planted at the temp name could not redirect it.
        temp.as_file().set_permissions(meta.permissions())?;
    }
    Ok(Staged(temp, reached))
}

/// Renames the staged text over its target, which must still be `expected`.
fn rename_over(staged: Staged, expected: &[u8]) -> Result<(), Failure> {
    test_pause();
    // Not taken apart: the temp file must go (through the folder) before the folder is closed.
    // The last check, right before the rename: the file must still be what was linted.
    if let Some(why) = changed(&staged.1.path, expected) {
        return Err(Failure::LeftAsIs(why));
    }
    staged
        .0
        .persist(&staged.1.path)
        .map_err(|e| Failure::Io(e.error))?;
    Ok(())
}

/// Renames the staged text to its target, where nothing may exist by then.
fn rename_new(staged: Staged) -> Result<(), Failure> {
    test_pause();
    staged
        .0
        .persist_noclobber(&staged.1.path)
        .map_err(|e| Failure::Io(e.error))?;
    Ok(())
}

fn folder(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A temp file with a random name beside `path` (same file system, so the rename is atomic),
/// created exclusively: a planted file or link at its name is never opened. A temp file for a
/// new file gets what `File::create` gives (0666 less the umask), not tempfile's 0600.
fn new_temp(path: &Path, new_file: bool) -> io::Result<tempfile::NamedTempFile> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".gpulint.tmp");
    #[cfg(unix)]
    if new_file {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    #[cfg(not(unix))]
    let _ = new_file;
    builder.tempfile_in(folder(path))
}

/// Replaces the text of `path`, which must still be `expected`, by `text`.
fn replace(path: &Path, expected: &[u8], text: &[u8]) -> Result<(), Failure> {
    let reached = reach(path).map_err(|why| Failure::Io(io::Error::other(why)))?;
    stage_at(reached, false, text).and_then(|s| rename_over(s, expected))
}

/// Why `path` is no longer `expected` (None when it is): read through no link and without
/// blocking on a FIFO, and no more than one byte past the expected length.
fn changed(path: &Path, expected: &[u8]) -> Option<String> {
    let file = match open_nofollow(OpenOptions::new().read(true), path) {
        Ok(f) => f,
        Err(e) if is_link_error(&e) => return Some("became a symbolic link".into()),
        Err(e) => return Some(format!("cannot be read again: {e}")),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Some("not a regular file".into()),
        Err(e) => return Some(format!("cannot be read again: {e}")),
    }
    let mut now = Vec::with_capacity(expected.len() + 1);
    if let Err(e) = file.take(expected.len() as u64 + 1).read_to_end(&mut now) {
        return Some(format!("cannot be read again: {e}"));
    }
    (now != expected).then(|| "changed while gpulint ran".to_string())
}

fn is_link_error(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

fn test_pause() {
    let Some(flag) = std::env::var_os(TEST_PAUSE_VAR) else {
        return;
    };
    let flag = Path::new(&flag);
    if File::create(flag).is_err() {
        return;
    }
    let started = Instant::now();
    while flag.exists() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Writes `text` to `path` (a file the command line names, like `--patch FILE`) the same way:
/// through a random temp file and a rename, refusing a link or anything but a regular file there.
pub fn write_output(path: &Path, text: &str) -> Result<(), String> {
    let shown = path.display();
    let reached = reach(path).map_err(|why| format!("{shown}: {why}; not written"))?;
    let existing = match std::fs::symlink_metadata(&reached.path) {
        Ok(_) => match target_problem(&reached.path, true) {
            Some(why) => return Err(format!("{shown}: {why}; not written")),
            None => true,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let result = if existing {
        std::fs::read(&reached.path)
            .map_err(Failure::Io)
            .and_then(|now| {
                stage_at(reached, false, text.as_bytes()).and_then(|s| rename_over(s, &now))
            })
    } else {
        stage_at(reached, true, text.as_bytes()).and_then(rename_new)
    };
    result.map_err(|e| match e {
        Failure::LeftAsIs(why) => format!("{shown}: {why}; not written"),
        Failure::Io(e) => format!("{shown}: cannot write: {e}"),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_long_way_refuses_a_symlinked_folder_and_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
        assert_eq!(no_link_below(root, Path::new("a/b")), Ok(()));
        let refused = no_link_below(root, Path::new("link/b")).unwrap_err();
        assert!(
            refused.ends_with("link is a symbolic link; gpulint does not write through links"),
            "{refused}"
        );
        // And through `reach` (the repository is the anchor: the temp folder is not below the
        // working directory), by openat2 or the long way, whichever this kernel offers.
        std::fs::create_dir(root.join(".git")).unwrap();
        let refused = reach(&root.join("link/b/x.json")).err().unwrap_or_default();
        assert!(refused.contains("link is a symbolic link"), "{refused}");
        assert!(reach(&root.join("a/b/x.json")).is_ok());
    }

    fn fix(dir: &Path, name: &str, original: &str, fixed: &str) -> FileFix {
        FileFix {
            path: dir.join(name),
            name: name.to_string(),
            original: original.to_string(),
            fixed: fixed.to_string(),
            applied: Vec::new(),
            created: false,
        }
    }

    fn plan(files: Vec<FileFix>) -> FixPlan {
        FixPlan {
            files,
            ..FixPlan::default()
        }
    }

    #[test]
    fn write_all_puts_back_the_files_written_when_a_later_one_changed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("b.yaml"), "b: edited\n").unwrap();
        let plan = plan(vec![
            fix(dir.path(), "a.yaml", "a: 1\n", "a: 2\n"),
            fix(dir.path(), "b.yaml", "b: 1\n", "b: 2\n"),
        ]);
        let err = write_all(&plan, &AtomicBool::new(false)).unwrap_err();
        assert_eq!(err, "b.yaml: changed while gpulint ran; nothing written");
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(read("a.yaml"), "a: 1\n");
        assert_eq!(read("b.yaml"), "b: edited\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temp file"
        );
    }

    #[test]
    fn a_stop_request_ends_the_writes_between_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("b.yaml"), "b: 1\n").unwrap();
        let plan = plan(vec![
            fix(dir.path(), "a.yaml", "a: 1\n", "a: 2\n"),
            fix(dir.path(), "b.yaml", "b: 1\n", "b: 2\n"),
        ]);
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        let written = write_each(&plan, &stop, |f| {
            seen.push(f.name.clone());
            // SIGINT while the first file is written: it is finished, the second not begun.
            stop.store(true, Ordering::SeqCst);
        })
        .unwrap();
        assert_eq!(seen, ["a.yaml"]);
        assert_eq!((written.files, written.not_reached), (1, 1));
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(read("a.yaml"), "a: 2\n");
        assert_eq!(read("b.yaml"), "b: 1\n");
        // --commit: a stop request puts every written file back.
        let stopped = AtomicBool::new(true);
        let err = write_all(&plan, &stopped).unwrap_err();
        assert_eq!(err, "interrupted; nothing written");
    }

    #[test]
    fn a_stop_never_leaves_an_edit_naming_a_file_not_yet_created() {
        let dir = tempfile::tempdir().unwrap();
        let k = "resources: [d.yaml]\n";
        std::fs::write(dir.path().join("kustomization.yaml"), k).unwrap();
        let mut patch = fix(dir.path(), "patch.yaml", "", "kind: Deployment\n");
        patch.created = true;
        // The plan lists the kustomization first, as the overlay's driver does.
        let plan = plan(vec![
            fix(
                dir.path(),
                "kustomization.yaml",
                k,
                "resources: [d.yaml]\npatches: [{path: patch.yaml}]\n",
            ),
            patch,
        ]);
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        write_each(&plan, &stop, |f| {
            seen.push(f.name.clone());
            stop.store(true, Ordering::SeqCst);
        })
        .unwrap();
        assert_eq!(seen, ["patch.yaml"]);
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(
            read("kustomization.yaml"),
            k,
            "the entry waits for its file"
        );
    }

    #[test]
    fn a_new_file_is_never_written_over_an_existing_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.yaml");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &path).unwrap();
        let mut f = fix(dir.path(), "new.yaml", "", "x: 1\n");
        f.created = true;
        let err = write_each(&plan(vec![f]), &AtomicBool::new(false), |_| {}).unwrap_err();
        assert_eq!(err, "new.yaml: already exists; nothing written");
        assert!(!dir.path().join("elsewhere").exists());
    }
}
