//! What a Helm render sees: never the chart folder itself, but a private copy of it (a folder
//! only this user can open, mode 0700) holding regular files only. Helm's `.Files` reads every
//! file of the folder it is given and follows its symlinks, so a chart at the repository root
//! would read `.git/config` (the checkout's credential), a `.Files.Glob` the credential files
//! other CI steps left untracked in the work tree, a link `dot -> ../../.git` the same.
//!
//! The copy holds, from the chart folder (symlinks inside the repository followed, their
//! targets copied as files and folders):
//! - in a git work tree, only the files git's index lists (tracked or staged): an untracked
//!   file is not copied, and neither is a link git does not track, nor a file a tracked link
//!   points at that git does not track;
//! - outside one (no index, or an index with no entry yet), every regular file;
//! - never anything in `.git` (any depth, any case) or in the git folder a `.git` file names
//!   (`repo::in_git`), never a FIFO, device or socket, never a file over
//!   `repo::MAX_FILE_BYTES`, and at most [`MAX_COPY_BYTES`] and `repo::MAX_TREE_ENTRIES` in all.
//!
//! A link that leaves the repository or enters `.git`, or a git index libgit2 cannot read, makes
//! the chart refused (a clear error), not copied without it.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::source::discover::{git_index, MODE_FILE, MODE_SYMLINK};
use crate::source::repo::{names_git, read_file, repository_of, resolve_inside, MAX_TREE_ENTRIES};

/// The most a chart's copy holds (a chart is kilobytes; packed subcharts megabytes).
pub const MAX_COPY_BYTES: u64 = 256 * 1024 * 1024;

/// Links to folders followed one inside another before the copy gives up (a loop).
const MAX_LINK_DEPTH: usize = 16;

/// A chart's private copy, removed on drop.
#[derive(Debug)]
pub struct Staged {
    _dir: tempfile::TempDir,
    /// The copy of the chart folder, handed to Helm.
    pub chart: PathBuf,
}

/// Why a chart is not copied: the file or link it is about, and why.
#[derive(Debug)]
pub struct NotStaged {
    pub file: PathBuf,
    pub message: String,
}

/// What git tracks in the work tree holding the chart, as real paths.
struct Tracked {
    files: HashSet<PathBuf>,
    /// Every folder on the way to a tracked path.
    folders: HashSet<PathBuf>,
}

struct Copier {
    root: PathBuf,
    tracked: Option<Tracked>,
    entries: usize,
    bytes: u64,
}

/// Copies `chart` (a folder inside the repository holding it) into a new private folder.
pub fn stage(chart: &Path) -> Result<Staged, NotStaged> {
    let refused = |file: &Path, message: String| NotStaged {
        file: file.to_path_buf(),
        message,
    };
    let root = repository_of(chart);
    let real = resolve_inside(chart, Some(&root))
        .map_err(|why| refused(chart, format!("the chart is not rendered: it {why}")))?;
    let tracked = match git_index(&real) {
        None => None,
        Some(Err(e)) => {
            return Err(refused(
                chart,
                format!(
                    "the chart is not rendered: git's index cannot be read ({e}), so which of its \
                     files git tracks is not known (a render sees tracked files only)"
                ),
            ))
        }
        Some(Ok(index)) if index.entries.is_empty() => None,
        Some(Ok(index)) => {
            let workdir = std::fs::canonicalize(&index.workdir).unwrap_or(index.workdir);
            let mut files = HashSet::new();
            let mut folders = HashSet::new();
            for (relative, mode) in index.entries {
                if mode != MODE_FILE && mode != MODE_SYMLINK {
                    continue;
                }
                let path = workdir.join(relative);
                folders.extend(
                    path.ancestors()
                        .skip(1)
                        .take_while(|dir| dir.starts_with(&workdir))
                        .map(Path::to_path_buf),
                );
                files.insert(path);
            }
            if !folders.contains(&real) {
                return Err(refused(
                    chart,
                    "the chart is not rendered: git tracks none of its files (a render sees only \
                     the files git tracks: `git add` them)"
                        .to_string(),
                ));
            }
            Some(Tracked { files, folders })
        }
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix("gpulint-chart-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = builder
        .tempdir()
        .map_err(|e| refused(chart, format!("the chart is not rendered: {e}")))?;
    let name = real
        .file_name()
        .map_or_else(|| "chart".into(), |n| n.to_os_string());
    let copy = dir.path().join(name);
    let mut copier = Copier {
        root,
        tracked,
        entries: 0,
        bytes: 0,
    };
    copier.folder(&real, &copy, 0)?;
    Ok(Staged {
        _dir: dir,
        chart: copy,
    })
}

impl Copier {
    fn is_tracked(&self, path: &Path) -> bool {
        self.tracked.as_ref().is_none_or(|t| t.files.contains(path))
    }

    fn holds_tracked(&self, folder: &Path) -> bool {
        self.tracked
            .as_ref()
            .is_none_or(|t| t.folders.contains(folder))
    }

    /// Copies the real folder `from` to `to` (created, mode 0700).
    fn folder(&mut self, from: &Path, to: &Path, links: usize) -> Result<(), NotStaged> {
        let failed = |file: &Path, e: &dyn std::fmt::Display| NotStaged {
            file: file.to_path_buf(),
            message: format!("the chart is not rendered: {e}"),
        };
        make_private_dir(to).map_err(|e| failed(to, &e))?;
        let entries = std::fs::read_dir(from).map_err(|e| failed(from, &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| failed(from, &e))?;
            let name = entry.file_name();
            if names_git(Path::new(&name)) {
                continue; // git's own, never copied
            }
            self.entries += 1;
            if self.entries > MAX_TREE_ENTRIES {
                return Err(failed(
                    from,
                    &format!("more than {MAX_TREE_ENTRIES} files and folders"),
                ));
            }
            let path = from.join(&name);
            let target = to.join(&name);
            let kind = entry.file_type().map_err(|e| failed(&path, &e))?;
            if kind.is_dir() {
                if self.holds_tracked(&path) {
                    self.folder(&path, &target, links)?;
                }
            } else if kind.is_symlink() {
                if !self.is_tracked(&path) {
                    continue;
                }
                let real = resolve_inside(&path, Some(&self.root)).map_err(|why| NotStaged {
                    file: path.clone(),
                    message: format!(
                        "the chart is not rendered: this link {why} (Helm would follow it)"
                    ),
                })?;
                if real.is_dir() {
                    if links >= MAX_LINK_DEPTH {
                        return Err(failed(
                            &path,
                            &format!("more than {MAX_LINK_DEPTH} links to folders, one in another"),
                        ));
                    }
                    self.folder(&real, &target, links + 1)?;
                } else if self.is_tracked(&real) {
                    self.file(&real, &target)?;
                }
            } else if kind.is_file() && self.is_tracked(&path) {
                self.file(&path, &target)?;
            }
            // A FIFO, socket or device: never opened, never copied.
        }
        Ok(())
    }

    /// Copies the regular file `from` (real) to `to` (created exclusively, mode 0600).
    fn file(&mut self, from: &Path, to: &Path) -> Result<(), NotStaged> {
        let bytes = read_file(from, Some(&self.root)).map_err(|why| NotStaged {
            file: from.to_path_buf(),
            message: format!("the chart is not rendered: {why}"),
        })?;
        self.bytes += bytes.len() as u64;
        if self.bytes > MAX_COPY_BYTES {
            return Err(NotStaged {
                file: from.to_path_buf(),
                message: format!(
                    "the chart is not rendered: its files are more than {} MiB",
                    MAX_COPY_BYTES >> 20
                ),
            });
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options
            .open(to)
            .and_then(|mut f| f.write_all(&bytes))
            .map_err(|e| NotStaged {
                file: to.to_path_buf(),
                message: format!("the chart is not rendered: copying it: {e}"),
            })
    }
}

fn make_private_dir(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Outside a git work tree: every regular file but `.git`'s, links inside the repository
    /// copied as what they point at; a link into `.git` refuses the chart.
    #[cfg(unix)]
    #[test]
    fn a_copy_has_no_git_folder_and_no_link() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let chart = base.join("repo");
        write(&chart.join("Chart.yaml"), "name: c\n");
        write(&chart.join("templates/a.yaml"), "a\n");
        write(&chart.join(".git/config"), "secret\n");
        write(&chart.join("sub/.GIT/config"), "secret\n");
        write(&chart.join("shared/b.yaml"), "b\n");
        std::os::unix::fs::symlink("../shared", chart.join("templates/shared")).unwrap();
        let staged = stage(&chart).unwrap();
        let copy = &staged.chart;
        assert_eq!(
            std::fs::read_to_string(copy.join("templates/a.yaml")).unwrap(),
            "a\n"
        );
        assert_eq!(
            std::fs::read_to_string(copy.join("templates/shared/b.yaml")).unwrap(),
            "b\n"
        );
        assert!(!copy.join(".git").exists());
        assert!(!copy.join("sub/.GIT").exists());
        assert!(!std::fs::symlink_metadata(copy.join("templates/shared"))
            .unwrap()
            .file_type()
            .is_symlink());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(copy.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        std::os::unix::fs::symlink(".git", chart.join("dot")).unwrap();
        let refused = stage(&chart).unwrap_err();
        assert_eq!(refused.file, chart.join("dot"));
        assert!(refused.message.contains("`.git`"), "{}", refused.message);
    }
}
