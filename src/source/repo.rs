//! The repository boundary: the one definition of "the repository" and the one check every
//! path gpulint opens goes through.
//!
//! Only the command line and the environment may name places outside the repository; what the
//! repository's own files name (kustomize resources, values files, config paths) is data and is
//! refused when, symlinks followed, it leaves the repository. Only regular files are opened (a
//! FIFO would block a read forever, `/dev/zero` never ends), and never more than
//! [`MAX_FILE_BYTES`].

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::source::kustomize::normalize;

/// The most gpulint reads of one file (manifest, kustomization, patch, values file, config).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The repository `path` belongs to, like `git rev-parse --show-toplevel` without running git:
/// the nearest folder at or above `path` (as written, made absolute, `..` removed) that holds a
/// `.git` folder or file (worktrees and submodules have a file), canonicalized. Outside a git
/// work tree: the working directory when `path` is below it, else `path` itself when it is a
/// real folder, else the folder it is in. A path that is a
/// symlink is judged from where it is written, not from where it points, so a link to `/` does
/// not make `/` the repository.
pub fn repository_of(path: &Path) -> PathBuf {
    let lexical = normalize(path);
    let found = lexical
        .ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok());
    let root = match found {
        Some(dir) => dir.to_path_buf(),
        None if std::env::current_dir()
            .ok()
            .map(|cwd| normalize(&cwd))
            .is_some_and(|cwd| lexical.starts_with(&cwd)) =>
        {
            normalize(&std::env::current_dir().unwrap_or_default())
        }
        None => {
            let is_real_dir = std::fs::symlink_metadata(&lexical).is_ok_and(|m| m.is_dir());
            if is_real_dir {
                lexical
            } else {
                lexical.parent().map(Path::to_path_buf).unwrap_or(lexical)
            }
        }
    };
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// Why a path is not opened.
#[derive(Debug)]
pub enum Refused {
    /// Symlinks followed, the path is at `real`, outside `root`.
    Outside {
        real: PathBuf,
        root: PathBuf,
    },
    /// A FIFO, socket, device or folder where a file was expected.
    NotRegular {
        what: &'static str,
    },
    /// Bigger than [`MAX_FILE_BYTES`].
    TooLarge {
        bytes: u64,
    },
    /// In `.git` (at any depth), or in the git folder a `.git` file names: the repository's own
    /// metadata, whose `config` may hold the checkout's credential.
    InGit,
    Io(std::io::Error),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Outside { real, root } => write!(
                f,
                "resolves to {}, outside the repository ({}): gpulint never reads it",
                real.display(),
                root.display()
            ),
            Refused::NotRegular { what } => write!(f, "not a regular file (a {what})"),
            Refused::InGit => write!(
                f,
                "is in `.git` (git's own folder, which may hold the checkout's credential): \
                 gpulint never reads it nor hands it to a renderer"
            ),
            Refused::TooLarge { bytes } => write!(
                f,
                "too large ({bytes} bytes; gpulint reads files of at most {} MiB)",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
            Refused::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Refused {}

impl From<Refused> for std::io::Error {
    fn from(r: Refused) -> std::io::Error {
        match r {
            Refused::Io(e) => e,
            Refused::Outside { .. } | Refused::InGit => {
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, r.to_string())
            }
            _ => std::io::Error::new(std::io::ErrorKind::InvalidInput, r.to_string()),
        }
    }
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    if t.is_dir() {
        "folder"
    } else {
        "special file"
    }
}

/// `path` with its symlinks resolved, required to be inside `root` and not in git's own folder
/// ([`in_git`]; `None`: anywhere, for paths only the command line names).
pub fn resolve_inside(path: &Path, root: Option<&Path>) -> Result<PathBuf, Refused> {
    let real = std::fs::canonicalize(path).map_err(Refused::Io)?;
    if let Some(root) = root {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        if !real.starts_with(&root) {
            return Err(Refused::Outside { real, root });
        }
        let written = normalize(path);
        let written_below = written.strip_prefix(&root).unwrap_or(Path::new(""));
        if names_git(written_below) || in_git(&real, &root) {
            return Err(Refused::InGit);
        }
    }
    Ok(real)
}

/// A path with a `.git` component (any case: a case-insensitive file system opens `.GIT` as
/// `.git`).
pub fn names_git(path: &Path) -> bool {
    path.components().any(|c| {
        c.as_os_str()
            .as_encoded_bytes()
            .eq_ignore_ascii_case(b".git")
    })
}

/// Whether `path` (below `root`, symlinks resolved or none on the way) is git's own: a `.git`
/// component at any depth, inside a folder git takes for a git folder ([`is_git_dir`]), or
/// inside the git folder that a `.git` file (a worktree's, a submodule's: `gitdir: …`) or a
/// `.git` symlink at `root` or a folder on the way names, or inside that folder's `commondir`
/// (a worktree's points at the main repository's folder, whose `config` holds the
/// credential). Outside `root`: whether it names `.git`.
pub fn in_git(path: &Path, root: &Path) -> bool {
    in_git_by(path, root, |folder| Arc::new(FolderGit::of(folder)))
}

/// What [`in_git`] asks of each folder on the way: whether git takes it for a git folder, and
/// the git folders its `.git` file or symlink names.
struct FolderGit {
    is_git_dir: bool,
    names: Vec<PathBuf>,
}

impl FolderGit {
    fn of(folder: &Path) -> FolderGit {
        FolderGit {
            is_git_dir: is_git_dir(folder),
            names: git_dirs_named_at(folder),
        }
    }
}

/// [`in_git`] with each folder's answer remembered: the thousands of kustomizations of a
/// monorepo share a few hundred folders, each asked several system calls.
#[derive(Default)]
struct GitFolders(Mutex<HashMap<PathBuf, Arc<FolderGit>>>);

impl GitFolders {
    fn in_git(&self, path: &Path, root: &Path) -> bool {
        in_git_by(path, root, |folder| {
            if let Some(known) = self.lock().get(folder) {
                return known.clone();
            }
            let answer = Arc::new(FolderGit::of(folder));
            self.lock().insert(folder.to_path_buf(), answer.clone());
            answer
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<FolderGit>>> {
        match self.0.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

fn in_git_by(path: &Path, root: &Path, folder_git: impl Fn(&Path) -> Arc<FolderGit>) -> bool {
    let Ok(below) = path.strip_prefix(root) else {
        return names_git(path);
    };
    if names_git(below) {
        return true;
    }
    let mut folder = root.to_path_buf();
    let mut parts = below.components().peekable();
    loop {
        let git = folder_git(&folder);
        if git.is_git_dir || git.names.iter().any(|dir| path.starts_with(dir)) {
            return true;
        }
        match parts.next() {
            // The last part is the file itself.
            Some(part) if parts.peek().is_some() => folder.push(part),
            _ => return false,
        }
    }
}

/// Whether git would take `folder` for a git folder (its `is_git_directory`): a `HEAD` file and
/// an `objects` folder or a `commondir` file. Finds the git folder of a worktree or submodule
/// whatever names it (a `--separate-git-dir`, `.git/modules/…`), and a bare repository.
fn is_git_dir(folder: &Path) -> bool {
    std::fs::symlink_metadata(folder.join("HEAD")).is_ok_and(|m| m.is_file())
        && (std::fs::symlink_metadata(folder.join("objects")).is_ok_and(|m| m.is_dir())
            || std::fs::symlink_metadata(folder.join("commondir")).is_ok_and(|m| m.is_file()))
}

/// The git folders `folder/.git` names when it is not a plain folder (see [`in_git`]), real.
fn git_dirs_named_at(folder: &Path) -> Vec<PathBuf> {
    let dot_git = folder.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return Vec::new(); // the common case: one `lstat`
    };
    let git_dir = if meta.is_dir() {
        return Vec::new(); // a `.git` component, refused by name
    } else if meta.is_file() {
        named_in(&dot_git)
    } else {
        Some(dot_git) // a symlink: to the folder, or to a `gitdir:` file
    };
    let Some(git_dir) = git_dir.and_then(|d| std::fs::canonicalize(d).ok()) else {
        return Vec::new();
    };
    let git_dir = if git_dir.is_file() {
        match named_in(&git_dir).and_then(|d| std::fs::canonicalize(d).ok()) {
            Some(dir) => dir,
            None => return vec![git_dir],
        }
    } else {
        git_dir
    };
    let common = named_in(&git_dir.join("commondir")).and_then(|d| std::fs::canonicalize(d).ok());
    std::iter::once(git_dir).chain(common).collect()
}

/// The folder a `gitdir: …` or `commondir` file names (relative to the file's folder).
fn named_in(file: &Path) -> Option<PathBuf> {
    let text = String::from_utf8(read_file(file, None).ok()?).ok()?;
    let line = text.lines().next()?.trim();
    let named = line.strip_prefix("gitdir:").unwrap_or(line).trim();
    Some(file.parent()?.join(named))
}

/// The first symlink under `dir` that leads outside `root` (or nowhere), with why: a folder
/// handed whole to another program (a chart to Helm, which follows symlinks) must not make it
/// read outside the repository. Nothing is followed while looking; more than
/// [`MAX_TREE_ENTRIES`] entries is refused too.
pub fn symlink_leaving(dir: &Path, root: &Path) -> Option<(PathBuf, Refused)> {
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(folder) = todo.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) => return Some((folder, Refused::Io(e))),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => return Some((folder, Refused::Io(e))),
            };
            seen += 1;
            if seen > MAX_TREE_ENTRIES {
                let too_many = std::io::Error::other(format!(
                    "more than {MAX_TREE_ENTRIES} files and folders"
                ));
                return Some((dir.to_path_buf(), Refused::Io(too_many)));
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_symlink() => {
                    if let Err(refused) = resolve_inside(&path, Some(root)) {
                        return Some((path, refused));
                    }
                }
                Ok(t) if t.is_dir() => todo.push(path),
                Ok(_) => {}
                Err(e) => return Some((path, Refused::Io(e))),
            }
        }
    }
    None
}

/// Files and folders [`symlink_leaving`] looks at before it gives up (a chart has tens).
pub const MAX_TREE_ENTRIES: usize = 10_000;

/// Whether `path` is, symlinks followed, a regular file inside `root` of at most
/// [`MAX_FILE_BYTES`]; its real path. Never opens it.
pub fn check_file(path: &Path, root: Option<&Path>) -> Result<PathBuf, Refused> {
    let real = resolve_inside(path, root)?;
    let meta = std::fs::metadata(&real).map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotRegular {
            what: kind_of(&meta),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Refused::TooLarge { bytes: meta.len() });
    }
    Ok(real)
}

/// The text of a file the repository itself names (a chart's template, a values file, a
/// kustomization read again): [`read_file`] inside the repository that holds it, as UTF-8.
/// Errors as `std::io::Error` (a refusal says why).
pub fn read_repo_text(path: &Path) -> std::io::Result<String> {
    let bytes = read_file(path, Some(&repository_of(path)))?;
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// The bytes of `path`, after [`check_file`]; at most [`MAX_FILE_BYTES`] even if it grows.
pub fn read_file(path: &Path, root: Option<&Path>) -> Result<Vec<u8>, Refused> {
    let real = check_file(path, root)?;
    read_capped(std::fs::File::open(&real).map_err(Refused::Io)?)
}

/// The bytes of an open file, when it is a regular one (checked on the open file: what was
/// checked by path may have been swapped), at most [`MAX_FILE_BYTES`] even if it grows.
fn read_capped(file: std::fs::File) -> Result<Vec<u8>, Refused> {
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.is_file() {
        return Err(Refused::NotRegular {
            what: kind_of(&meta),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Refused::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Refused::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// A folder of the repository opened once, beneath which files are then opened by their path
/// in one system call that refuses a symlink anywhere on the way and a `..` leaving the folder
/// (Linux `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`): what [`read_file`] checks by
/// resolving every folder of the path, at the cost of one open per file, for the thousands of
/// kustomizations of a monorepo. Elsewhere, or on a kernel without `openat2`, [`read_file`].
pub struct Beneath {
    root: PathBuf,
    git_folders: GitFolders,
    #[cfg(target_os = "linux")]
    fd: Option<rustix::fd::OwnedFd>,
}

impl Beneath {
    /// `root` (absolute, normalized) opened as a folder; never fails (see [`Beneath::read`]).
    pub fn open(root: &Path) -> Beneath {
        Beneath {
            root: root.to_path_buf(),
            git_folders: GitFolders::default(),
            #[cfg(target_os = "linux")]
            fd: {
                use rustix::fs::{Mode, OFlags};
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
                rustix::fs::open(root, flags, Mode::empty()).ok()
            },
        }
    }

    /// The bytes of `path` (below the root): only a regular file, reached through no symlink,
    /// at most [`MAX_FILE_BYTES`]. `Ok(None)`: there is no such file.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, Refused> {
        // Reached through no symlink: the path as written is the real one.
        if self.git_folders.in_git(&normalize(path), &self.root) {
            return Err(Refused::InGit);
        }
        #[cfg(target_os = "linux")]
        if let (Some(fd), Ok(relative)) = (&self.fd, path.strip_prefix(&self.root)) {
            use rustix::fs::{Mode, OFlags, ResolveFlags};
            use rustix::io::Errno;
            // Non-blocking: opening a FIFO for reading must not wait for a writer.
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(fd, relative, flags, Mode::empty(), resolve) {
                Ok(owned) => return read_capped(std::fs::File::from(owned)).map(Some),
                Err(Errno::NOENT | Errno::NOTDIR) => return Ok(None),
                Err(Errno::LOOP) => {
                    return Err(Refused::NotRegular {
                        what: "symbolic link",
                    })
                }
                // A `..` out of the root.
                Err(Errno::XDEV) => {
                    return Err(Refused::Outside {
                        real: normalize(path),
                        root: self.root.clone(),
                    })
                }
                // No `openat2` (before Linux 5.6, or a seccomp filter): resolve it the long way.
                Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::AGAIN) => {}
                Err(e) => return Err(Refused::Io(e.into())),
            }
        }
        match read_file(path, Some(&self.root)) {
            Err(Refused::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            read => read.map(Some),
        }
    }
}

/// The git repository holding `path`, found by libgit2 (every search for one goes through here;
/// a root found so is opened again by path only after it):
/// `None` outside one, and when a file libgit2 reads with a blocking `open` (`.git` itself when
/// it is a file, `config`, `commondir`, `HEAD`, `index`) is a FIFO, a device or a folder. A
/// `.git` folder is repository content when the tree is not a checkout (an unpacked archive): a
/// FIFO there would stop the run forever.
pub fn open_git(path: &Path) -> Option<git2::Repository> {
    // Every `.git` up the path: libgit2 passes over one that is no repository (an empty folder)
    // and opens the next.
    let safe = normalize(path)
        .ancestors()
        .map(|dir| dir.join(".git"))
        .filter(|dot_git| std::fs::symlink_metadata(dot_git).is_ok())
        .all(|dot_git| git_files_are_regular(&dot_git));
    if !safe {
        return None;
    }
    git2::Repository::discover(path).ok()
}

/// See [`open_git`]: whether the files libgit2 opens a repository with are regular or absent.
fn git_files_are_regular(dot_git: &Path) -> bool {
    let regular_or_absent = |path: &Path| match std::fs::metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    let git_dir = match std::fs::metadata(dot_git) {
        Ok(meta) if meta.is_dir() => dot_git.to_path_buf(),
        // A worktree's or a submodule's `.git` file.
        Ok(meta) if meta.is_file() => match named_in(dot_git) {
            Some(dir) => dir,
            None => return true, // not one: libgit2 refuses it without reading further
        },
        Ok(_) => return false,
        Err(_) => return true, // a dangling link: libgit2 finds no repository there
    };
    let files = ["config", "commondir", "HEAD", "index"];
    if !files
        .iter()
        .all(|name| regular_or_absent(&git_dir.join(name)))
    {
        return false;
    }
    let common = git_dir.join("commondir");
    match std::fs::metadata(&common) {
        Ok(_) => named_in(&common).is_none_or(|dir| regular_or_absent(&dir.join("config"))),
        Err(_) => true,
    }
}

/// The root of the git work tree holding `path` (found by git, canonicalized), if any; unlike
/// [`repository_of`], `None` outside a work tree.
pub fn git_work_tree(path: &Path) -> Option<PathBuf> {
    let repo = open_git(path)?;
    let workdir = repo.workdir()?;
    std::fs::canonicalize(workdir).ok()
}

/// A path relative to `root`, with `/` separators, as git writes it.
pub fn relative_to(path: &Path, root: &Path) -> Option<String> {
    // A file a fix creates does not exist yet: resolve its folder.
    let absolute = std::fs::canonicalize(path).ok().or_else(|| {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        Some(
            std::fs::canonicalize(dir.unwrap_or(Path::new(".")))
                .ok()?
                .join(path.file_name()?),
        )
    })?;
    let rel = absolute.strip_prefix(root).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

/// Where a GitOps declaration's repository-relative paths may be rooted, in the order they are
/// tried: the repository's root, then the folders between it and the declaring file, outermost
/// first (a GitOps tree kept in a folder of the repository, such as `deploy/clusters/prod`).
/// Paths are made absolute first: a path as walked is relative to the working directory.
/// Without a root, only the declaring file's folder.
pub fn declaration_bases(declared_in: &Path, root: Option<&Path>) -> Vec<PathBuf> {
    let absolute = |p: &Path| {
        crate::source::kustomize::normalize(&std::path::absolute(p).unwrap_or_else(|_| p.into()))
    };
    let declared_in = absolute(declared_in);
    // Without a repository root, nothing above the declaration's own folder is the
    // repository's: a repository file never sends a lookup (or the ApplicationSet git
    // generator's walk) up the file system.
    let Some(root) = root.map(absolute) else {
        return declared_in
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
    };
    let root = Some(root);
    let mut above: Vec<PathBuf> = declared_in
        .ancestors()
        .skip(1)
        .take_while(|a| root.as_deref().is_none_or(|r| a.starts_with(r) && *a != r))
        .map(Path::to_path_buf)
        .collect();
    above.reverse();
    root.into_iter().chain(above).collect()
}

#[cfg(test)]
mod declaration_bases_tests {
    use super::*;

    #[test]
    fn the_root_first_then_the_folders_down_to_the_declaration_never_above() {
        let bases = declaration_bases(
            Path::new("/r/deploy/clusters/prod/apps.yaml"),
            Some(Path::new("/r")),
        );
        let want: Vec<PathBuf> = [
            "/r",
            "/r/deploy",
            "/r/deploy/clusters",
            "/r/deploy/clusters/prod",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(bases, want);
        assert_eq!(
            declaration_bases(Path::new("/x/y/apps.yaml"), None),
            [PathBuf::from("/x/y")]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the kernel checks for [`Beneath`] (and `read_file` where there is no `openat2`):
    /// a file is read; a missing one is none; a symlink on the way (a folder a pull request
    /// swapped for a link out of the repository, or the file itself), a `..` out, a FIFO and a
    /// folder are refused, and the FIFO's open does not wait for a writer.
    #[cfg(unix)]
    #[test]
    fn beneath_reads_only_regular_files_reached_through_no_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(root.join("apps/one")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(root.join("apps/one/kustomization.yaml"), "resources: []\n").unwrap();
        std::fs::write(base.join("outside/kustomization.yaml"), "secret: 1\n").unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root.join("apps/two")).unwrap();
        std::os::unix::fs::symlink(
            base.join("outside/kustomization.yaml"),
            root.join("apps/one/kustomization.yml"),
        )
        .unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("apps/one/Kustomization"))
            .status()
            .unwrap();
        assert!(made.success());
        let beneath = Beneath::open(&root);
        let read = |rel: &str| beneath.read(&root.join(rel));
        assert_eq!(
            read("apps/one/kustomization.yaml").unwrap().as_deref(),
            Some(&b"resources: []\n"[..])
        );
        assert!(read("apps/three/kustomization.yaml").unwrap().is_none());
        for refused in [
            "apps/two/kustomization.yaml",
            "apps/one/kustomization.yml",
            "apps/../../outside/kustomization.yaml",
            "apps/one/Kustomization",
            "apps/one",
        ] {
            let outcome = read(refused);
            assert!(
                matches!(
                    outcome,
                    Err(Refused::NotRegular { .. } | Refused::Outside { .. })
                ),
                "{refused}: {outcome:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leaving_the_tree_is_found_one_inside_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let chart = root.join("charts/c");
        std::fs::create_dir_all(chart.join("templates")).unwrap();
        std::fs::write(root.join("shared.yaml"), "a: 1\n").unwrap();
        std::fs::write(tmp.path().join("outside.yaml"), "b: 2\n").unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, chart.join("templates").join(name)).unwrap()
        };
        // Inside the repository: Helm may follow it.
        link(&root.join("shared.yaml"), "shared.yaml");
        assert!(symlink_leaving(&chart, &root).is_none());
        // Outside, and dangling: refused, at the link.
        link(&tmp.path().join("outside.yaml"), "leak.yaml");
        let (at, why) = symlink_leaving(&chart, &root).unwrap();
        assert_eq!(at, chart.join("templates/leak.yaml"));
        assert!(matches!(why, Refused::Outside { .. }), "{why}");
        std::fs::remove_file(chart.join("templates/leak.yaml")).unwrap();
        link(&tmp.path().join("gone.yaml"), "gone.yaml");
        assert!(symlink_leaving(&chart, &root).is_some());
    }

    /// `.git` is outside the boundary: a `.git` component (any case), the git folder a `.git`
    /// file names and its `commondir`, any folder git would take for a git folder, also
    /// through a link; files beside them are read.
    #[cfg(unix)]
    #[test]
    fn git_s_own_folders_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for dir in [".git", "sub/.GIT", "meta", "common/objects", "wt", "plain"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            ".git/config",
            "sub/.GIT/config",
            "meta/config",
            "common/config",
            "wt/config",
            "plain/config",
            "plain/HEAD",
        ] {
            std::fs::write(root.join(file), "x\n").unwrap();
        }
        // A worktree's `.git` file naming `meta`, whose `commondir` names `common`.
        std::fs::write(root.join("wt/.git"), "gitdir: ../meta\n").unwrap();
        std::fs::write(root.join("meta/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join("meta/commondir"), "../common\n").unwrap();
        std::fs::write(root.join("common/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::os::unix::fs::symlink("meta", root.join("link")).unwrap();
        for refused in [
            ".git/config",
            "sub/.GIT/config",
            "link/config",
            "meta/config",
            "common/config",
            "wt/../meta/config",
        ] {
            let outcome = read_file(&root.join(refused), Some(&root));
            assert!(
                matches!(outcome, Err(Refused::InGit)),
                "{refused}: {outcome:?}"
            );
        }
        assert!(git_dirs_named_at(&root.join("wt")).contains(&root.join("common")));
        // A file beside a `.git` file, and a folder holding a `HEAD` but no `objects`.
        for read in ["wt/config", "plain/config"] {
            assert!(read_file(&root.join(read), Some(&root)).is_ok(), "{read}");
        }
        let beneath = Beneath::open(&root);
        for refused in [".git/config", "meta/config"] {
            let outcome = beneath.read(&root.join(refused));
            assert!(
                matches!(outcome, Err(Refused::InGit)),
                "{refused}: {outcome:?}"
            );
        }
        assert!(beneath.read(&root.join("wt/config")).unwrap().is_some());
    }

    #[test]
    fn the_repository_is_the_nearest_git_folder_else_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("repo/.git")).unwrap();
        std::fs::create_dir_all(base.join("repo/a/b")).unwrap();
        std::fs::write(base.join("repo/a/b/x.yaml"), "").unwrap();
        assert_eq!(
            repository_of(&base.join("repo/a/b/x.yaml")),
            base.join("repo")
        );
        assert_eq!(repository_of(&base.join("repo/a")), base.join("repo"));
        std::fs::create_dir_all(base.join("plain/sub")).unwrap();
        assert_eq!(
            repository_of(&base.join("plain/sub")),
            base.join("plain/sub")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_the_root_does_not_make_the_root_the_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::os::unix::fs::symlink("/", base.join("root")).unwrap();
        assert_eq!(repository_of(&base.join("root")), base);
        assert!(matches!(
            resolve_inside(&base.join("root"), Some(&base)),
            Err(Refused::Outside { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_folders_are_not_regular_files() {
        let e = read_file(Path::new("/dev/zero"), None).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("d.yaml")).unwrap();
        let e = read_file(&tmp.path().join("d.yaml"), None).unwrap_err();
        assert!(
            e.to_string().contains("not a regular file (a folder)"),
            "{e}"
        );
    }
}
