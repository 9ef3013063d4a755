//! Finding the inputs: files and folders named on the command line, walked honouring
//! `.gitignore` and the config's excludes, and `-` for stdin.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::source::kustomize::{normalize, ReadersIndex, KUSTOMIZATION_FILE_NAMES};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    File(PathBuf),
    Stdin,
}

impl Input {
    /// The name shown in findings: the path as walked, or `-`.
    pub fn display(&self) -> String {
        match self {
            Input::File(p) => p.strip_prefix("./").unwrap_or(p).display().to_string(),
            Input::Stdin => "-".to_string(),
        }
    }
}

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The config file's name (`.gpulint.yaml`): `config.rs` looks for it, the walk never lints it.
pub const CONFIG_FILE_NAME: &str = ".gpulint.yaml";

/// What the walk leaves out: the config's `exclude:` globs. A trait so that the walk stays below
/// the config in the layers (`Config` implements it).
pub trait Excludes: Sync {
    fn is_excluded(&self, path: &Path) -> bool;
}

/// What a run lints.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Manifest files (kustomization files are not manifests: they are rendered).
    pub inputs: Vec<Input>,
    /// Kustomization roots (absolute, normalized), in walk order.
    pub roots: Vec<PathBuf>,
    /// Roots found for files named on the command line: rendered, and kept only when their
    /// render reads one of `explicit` (pre-commit passes the changed files one by one).
    pub conditional: BTreeSet<PathBuf>,
    /// Files named on the command line (absolute, normalized), kustomization files included.
    pub explicit: Vec<PathBuf>,
    /// Helm charts (folders with a `Chart.yaml`, absolute, normalized). Their files are not
    /// manifests (templates do not parse as YAML; values files are not objects): charts are
    /// rendered with their releases instead.
    pub charts: Vec<PathBuf>,
    pub errors: Vec<String>,
    /// What the walk skipped and why (symlinks leaving the repository, FIFOs named `*.yaml`).
    pub notes: Vec<String>,
    /// The index that found the roots of the named files, kept for the fix plan's question of
    /// which roots read its files (`None`: no file was named).
    pub readers: Option<Arc<ReadersIndex>>,
}

fn is_kustomization(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| KUSTOMIZATION_FILE_NAMES.contains(&n))
}

/// A walk of `dir` as gpulint walks: honouring `.gitignore` (in a git checkout or not), into
/// hidden folders (manifests live in `.github/…` or `.deploy/` too), in a stable order.
fn walk(dir: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder
        .require_git(false)
        .hidden(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    builder
}

/// Every kustomization root under `dir` (walked like the manifests), and every file the walk
/// saw (so the index of what kustomizations read need not ask the file system whether a path
/// they name is a folder).
fn roots_under(dir: &Path, config: &dyn Excludes) -> (Vec<PathBuf>, HashSet<PathBuf>) {
    // In parallel (a monorepo's walk is thousands of folders of system calls), then sorted:
    // the order of roots stays the walk's sorted order.
    let found = std::sync::Mutex::new((Vec::new(), HashSet::new()));
    walk(dir)
        .filter_entry(|e| e.file_name() != ".git")
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                let Ok(e) = entry else {
                    return ignore::WalkState::Continue;
                };
                if !e.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                let p = e.path();
                let root = (is_kustomization(p) && !config.is_excluded(p))
                    .then(|| p.parent().map(normalize))
                    .flatten();
                if let Ok(mut found) = found.lock() {
                    found.0.extend(root);
                    // The walk's paths are `dir` (normalized) joined with names: normalized.
                    found.1.insert(p.to_path_buf());
                }
                ignore::WalkState::Continue
            })
        });
    let (mut roots, files) = found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    roots.sort();
    (roots, files)
}

/// What [`roots_under`] finds, from git's index instead of a walk: the kustomization roots
/// under `dir` that git tracks (committed or staged, as pre-commit commits them), and the
/// tracked files there. One file read, where the walk costs five system calls per folder (most
/// of the time of linting one named file in a monorepo). An untracked overlay is not among
/// them (the caller walks when a named file is untracked itself). A file git lists but the
/// work tree lacks (deleted, or skip-worktree in a sparse checkout) is simply not read. `None`
/// (walk instead) outside a git work tree, when `dir` is not inside it as written, when git
/// tracks nothing there yet, when libgit2 cannot read the index (a sparse index), or when a
/// submodule is there (its files are in its own index).
fn tracked_under(dir: &Path, config: &dyn Excludes) -> Option<(Vec<PathBuf>, HashSet<PathBuf>)> {
    let index = git_index(dir)?.ok()?;
    let below = dir.strip_prefix(&index.workdir).ok()?;
    let mut roots = Vec::new();
    let mut files = HashSet::new();
    for (relative, mode) in index.entries {
        let Ok(relative) = relative.strip_prefix(below) else {
            continue;
        };
        if mode == MODE_GITLINK {
            return None;
        }
        if mode != MODE_FILE {
            continue; // a symlink: the walk does not follow one either
        }
        let path = dir.join(relative);
        if is_kustomization(&path) && !config.is_excluded(&path) {
            roots.extend(path.parent().map(Path::to_path_buf));
        }
        files.insert(path);
    }
    if files.is_empty() {
        return None; // nothing added yet (`git init` on a tree): the walk sees what is there
    }
    roots.sort();
    roots.dedup();
    Some((roots, files))
}

/// The type bits of an index entry's mode: a regular file (executable or not), a symlink, a
/// submodule.
pub(crate) const MODE_TYPE: u32 = 0o170000;
pub(crate) const MODE_FILE: u32 = 0o100000;
pub(crate) const MODE_SYMLINK: u32 = 0o120000;
pub(crate) const MODE_GITLINK: u32 = 0o160000;

/// What git's index lists: every tracked path of the work tree.
pub(crate) struct GitIndex {
    /// The work tree, as libgit2 found it (normalized).
    pub workdir: PathBuf,
    /// Each path relative to `workdir`, with its type ([`MODE_TYPE`] bits of its mode).
    pub entries: Vec<(PathBuf, u32)>,
}

/// git's index of the work tree holding `dir` (found through [`crate::source::repo::open_git`]):
/// `None` outside a work tree, an error when libgit2 cannot read the index (a sparse index).
/// Paths git itself would not write (empty, `.`, `..` parts) are left out.
pub(crate) fn git_index(dir: &Path) -> Option<Result<GitIndex, git2::Error>> {
    let repo = crate::source::repo::open_git(dir)?;
    let workdir = normalize(repo.workdir()?);
    // `.git/index`, also under `git commit -a`, whose hooks get a temporary index in
    // GIT_INDEX_FILE (libgit2 does not read it): the same paths but for deletions, which can
    // only add a root that is then rendered and dropped.
    let index = match repo.index() {
        Ok(index) => index,
        Err(e) => return Some(Err(e)),
    };
    let entries = index
        .iter()
        .filter_map(|entry| Some((git_path(&entry.path)?, entry.mode & MODE_TYPE)))
        .collect();
    Some(Ok(GitIndex { workdir, entries }))
}

/// A path as git's index writes it (bytes, `/`-separated) as a relative path; `None` for one
/// git itself refuses to write (empty, `.` or `..` parts: an index is not trusted to be git's).
fn git_path(bytes: &[u8]) -> Option<PathBuf> {
    if bytes
        .split(|b| *b == b'/')
        .any(|part| part.is_empty() || part == b"." || part == b"..")
    {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes).ok().map(PathBuf::from)
    }
}

/// The index of what the Kustomize roots below `start` read, found without rendering
/// ([`ReadersIndex::roots_reading`]: never one root too few). Listed from git's index when it
/// tracks every one of `files` (absolute, normalized), else by a walk (a file git does not
/// track yet may be read by kustomizations it does not track either).
pub fn readers_index(start: &Path, config: &dyn Excludes, files: &[PathBuf]) -> ReadersIndex {
    let (candidates, listed) = tracked_under(start, config)
        .filter(|(_, tracked)| files.iter().all(|f| tracked.contains(f)))
        .unwrap_or_else(|| roots_under(start, config));
    ReadersIndex::build(candidates, listed, start)
}

/// Files to lint, in a deterministic order (command-line order, then sorted within a folder),
/// and the Kustomize roots to render. A missing path is an error message; the other inputs are
/// still returned. `repo_root` is where roots are looked for when files are named one by one.
pub fn discover(paths: &[PathBuf], config: &dyn Excludes, repo_root: Option<&Path>) -> Discovered {
    let mut found = Discovered::default();
    for path in paths {
        if path.as_os_str() == "-" {
            found.inputs.push(Input::Stdin);
            continue;
        }
        // The command line may name a path, but not make gpulint follow a link in it out of
        // the repository the path is in (pre-commit passes files a pull request may add).
        let repository = crate::source::repo::repository_of(path);
        match crate::source::repo::resolve_inside(path, Some(&repository)) {
            Ok(_) => {}
            Err(crate::source::repo::Refused::Io(e))
                if e.kind() == std::io::ErrorKind::NotFound =>
            {
                found
                    .errors
                    .push(format!("{}: no such file or directory", path.display()));
                continue;
            }
            Err(refused) => {
                found.errors.push(format!("{}: {refused}", path.display()));
                continue;
            }
        }
        if !path.is_file() && !path.is_dir() {
            let refused = crate::source::repo::check_file(path, None)
                .err()
                .map_or_else(|| "not a regular file".to_string(), |r| r.to_string());
            found.errors.push(format!("{}: {refused}", path.display()));
            continue;
        }
        if path.is_file() {
            // A chart's file (values, template, Chart.yaml): lint the chart's releases.
            if let Some(chart) = enclosing_chart(path) {
                found.charts.push(chart);
                continue;
            }
            if is_kustomization(path) {
                if let Some(parent) = path.parent() {
                    let dir = if parent.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        parent
                    };
                    found.roots.push(normalize(dir));
                }
                // Named: the overlays over it are rendered too (a changed base changes them).
                found.explicit.push(normalize(path));
                continue;
            }
            // A file named explicitly is linted whatever its name, unless the config excludes it.
            if !config.is_excluded(path) {
                found.inputs.push(Input::File(path.clone()));
                found.explicit.push(normalize(path));
            }
            continue;
        }
        // A chart folder (or a folder inside one, like its templates/) is rendered as a chart,
        // never linted as raw templates.
        let boundary = repo_root.map(normalize);
        if let Some(chart) = normalize(path)
            .ancestors()
            .take_while(|dir| boundary.as_ref().is_none_or(|b| dir.starts_with(b)))
            .find(|dir| crate::source::helm::is_chart(dir))
        {
            found.charts.push(chart.to_path_buf());
            continue;
        }
        // `.git` is not walked; chart folders are recorded and not descended into.
        let charts = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen_charts = charts.clone();
        let walker = walk(path)
            .filter_entry(move |e| {
                if e.file_name() == ".git" {
                    return false;
                }
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if is_dir && crate::source::helm::is_chart(e.path()) {
                    if let Ok(mut c) = seen_charts.lock() {
                        c.push(normalize(e.path()));
                    }
                    return false;
                }
                true
            })
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    let p = e.path();
                    let is_file = e.file_type().is_some_and(|t| t.is_file());
                    if let Some(note) = skipped(&e, &repository, config) {
                        found.notes.push(note);
                        continue;
                    }
                    if is_file && is_kustomization(p) {
                        if !config.is_excluded(p) {
                            if let Some(parent) = p.parent() {
                                found.roots.push(normalize(parent));
                            }
                        }
                        continue;
                    }
                    // The config file is not a manifest.
                    if is_file
                        && is_yaml(p)
                        && e.file_name() != CONFIG_FILE_NAME
                        && !config.is_excluded(p)
                    {
                        found.inputs.push(Input::File(p.to_path_buf()));
                    }
                }
                Err(e) => found.errors.push(e.to_string()),
            }
        }
        let walked: Vec<PathBuf> = match charts.lock() {
            Ok(mut c) => std::mem::take(&mut *c),
            Err(_) => Vec::new(),
        };
        found.charts.extend(walked);
    }
    // Files named one by one may belong to a kustomization anywhere in the repository (a base
    // file changed in a commit belongs to every overlay using it).
    let start = repo_root
        .map(normalize)
        .or_else(|| std::env::current_dir().ok().map(|d| normalize(&d)));
    let inside: Vec<PathBuf> = match &start {
        Some(root) => found
            .explicit
            .iter()
            .filter(|f| f.starts_with(root))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    if let (Some(start), false) = (start, inside.is_empty() || all_git_ignored(&inside)) {
        let index = readers_index(&start, config, &inside);
        let candidates = index.roots_reading(&inside);
        found.readers = Some(Arc::new(index));
        for root in candidates {
            if !found.roots.contains(&root) {
                found.conditional.insert(root.clone());
                found.roots.push(root);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    found.inputs.retain(|i| seen.insert(i.clone()));
    let mut seen_roots = std::collections::HashSet::new();
    found.roots.retain(|r| seen_roots.insert(r.clone()));
    let mut seen_charts = std::collections::HashSet::new();
    found.charts.retain(|c| seen_charts.insert(c.clone()));
    found
}

/// Why the walk skips an entry that is neither a file nor a folder, when a person should know:
/// a symlink that leaves the repository (never followed), a FIFO or device with a manifest's
/// name (never opened: a FIFO blocks a read forever). Symlinks inside are not followed either
/// (what they point at is walked where it is).
fn skipped(entry: &ignore::DirEntry, repository: &Path, config: &dyn Excludes) -> Option<String> {
    let kind = entry.file_type()?;
    if kind.is_file() || kind.is_dir() {
        return None;
    }
    let p = entry.path();
    if config.is_excluded(p) {
        return None;
    }
    if kind.is_symlink() {
        return match crate::source::repo::resolve_inside(p, Some(repository)) {
            Err(refused @ crate::source::repo::Refused::Outside { .. }) => Some(format!(
                "{}: symbolic link skipped: it {refused}",
                p.display()
            )),
            _ => None,
        };
    }
    if is_yaml(p) {
        let refused = crate::source::repo::check_file(p, None).err()?;
        return Some(format!("{}: skipped: {refused}", p.display()));
    }
    None
}

/// Whether every file is ignored by git (a scratch file no kustomization in the repo reads:
/// looking for the roots that might read it would render the whole repository for nothing).
fn all_git_ignored(files: &[PathBuf]) -> bool {
    files.iter().all(|f| {
        let Some(repo) = crate::source::repo::open_git(f.parent().unwrap_or(Path::new("."))) else {
            return false;
        };
        let Some(workdir) = repo.workdir().map(normalize) else {
            return false;
        };
        f.strip_prefix(&workdir)
            .ok()
            .is_some_and(|rel| repo.is_path_ignored(rel).unwrap_or(false))
    })
}

/// The chart folder a file belongs to: the nearest folder above it with a `Chart.yaml`.
fn enclosing_chart(file: &Path) -> Option<PathBuf> {
    let file = normalize(file);
    file.ancestors()
        .skip(1)
        .find(|dir| crate::source::helm::is_chart(dir))
        .map(Path::to_path_buf)
}
