//! Which kustomization roots may read a file, found from kustomization files alone.
//!
//! pre-commit names the changed files one by one; a changed base or patch belongs to every
//! overlay that reads it. Rendering every kustomization of a monorepo to learn that costs more
//! than linting the whole repository, so the kustomization files are parsed instead (small, and
//! nothing is built) and the references they name ([`super::kustomization::references`], the
//! one list of what a kustomization reads) are followed backwards from the named files.
//!
//! The answer may include a root that does not read the file (it is then rendered and dropped,
//! as before), never leave out one that does: a kustomization that cannot be read or parsed
//! counts as reading everything.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::kustomization::{is_remote, references};
use super::{kustomization_file, normalize};
use crate::source::repo::Beneath;
use crate::source::yaml::Stream;

/// More kustomizations than this are not indexed: every candidate is kept (rendered and
/// filtered as before), so a pathological tree costs what it did, not more.
const MAX_INDEXED: usize = 20_000;

/// What one kustomization folder reads directly.
#[derive(Default)]
struct Reads {
    /// Files named (and the kustomization file itself).
    files: Vec<PathBuf>,
    /// Folders named where a folder is allowed (other kustomizations).
    folders: Vec<PathBuf>,
    /// The kustomization could not be read or parsed: it may read anything.
    unknown: bool,
}

/// What the kustomization folders of a listing read, built once: a run asks it for the named
/// files' roots, and its fix plan for the roots reading its renders' files.
pub struct ReadersIndex {
    /// Each candidate, with its place in the listing (answers keep the listing's order).
    candidates: HashMap<PathBuf, usize>,
    /// The files the listing saw.
    listed: HashSet<PathBuf>,
    /// Where the listing started (the boundary).
    start: PathBuf,
    /// `None`: too many to index, every candidate is kept.
    graph: Option<Graph>,
}

/// The index backwards: who reads each file and folder.
struct Graph {
    /// Folders whose kustomization lists each file.
    by_file: HashMap<PathBuf, Vec<PathBuf>>,
    /// Folders naming each folder (as a base, a component, a resource folder).
    read_by: HashMap<PathBuf, Vec<PathBuf>>,
    /// Folders whose kustomization could not be read: they may read anything.
    unknown: Vec<PathBuf>,
    indexed: usize,
}

impl ReadersIndex {
    /// The index of `candidates` (absolute, normalized kustomization folders). `files` are the
    /// files the listing that found the candidates saw (the walk, or git's index: a path among
    /// them is no folder). Folders outside `boundary` are not read (the renderer refuses them).
    pub fn build(candidates: Vec<PathBuf>, files: HashSet<PathBuf>, boundary: &Path) -> Self {
        let graph = index(&candidates, &files, boundary).map(|reads| {
            let mut g = Graph {
                by_file: HashMap::new(),
                read_by: HashMap::new(),
                unknown: Vec::new(),
                indexed: reads.len(),
            };
            for (dir, r) in reads {
                if r.unknown {
                    g.unknown.push(dir.clone());
                }
                for f in r.files {
                    g.by_file.entry(f).or_default().push(dir.clone());
                }
                for folder in r.folders {
                    g.read_by.entry(folder).or_default().push(dir.clone());
                }
            }
            g
        });
        ReadersIndex {
            candidates: candidates
                .into_iter()
                .enumerate()
                .map(|(i, c)| (c, i))
                .collect(),
            listed: files,
            start: boundary.to_path_buf(),
            graph,
        }
    }

    /// Whether it answers for `files` below `start`: listed from there, and every one listed.
    pub fn covers(&self, start: &Path, files: &[PathBuf]) -> bool {
        self.start == start && files.iter().all(|f| self.listed.contains(f))
    }

    /// The candidates whose render may read one of `named` (absolute, normalized files), in
    /// the listing's order: a walk back from the folders listing them, not a pass over the
    /// whole index.
    pub fn roots_reading(&self, named: &[PathBuf]) -> Vec<PathBuf> {
        let in_order = |mut found: Vec<(&PathBuf, usize)>| {
            found.sort_by_key(|(_, i)| *i);
            found.into_iter().map(|(p, _)| p.clone()).collect()
        };
        let Some(graph) = &self.graph else {
            return in_order(self.candidates.iter().map(|(p, &i)| (p, i)).collect());
        };
        let mut reaching: HashSet<&Path> = HashSet::new();
        let mut todo: Vec<&Path> = graph.unknown.iter().map(PathBuf::as_path).collect();
        todo.extend(
            named
                .iter()
                .filter_map(|f| graph.by_file.get(f))
                .flatten()
                .map(PathBuf::as_path),
        );
        while let Some(dir) = todo.pop() {
            if reaching.insert(dir) {
                todo.extend(
                    graph
                        .read_by
                        .get(dir)
                        .into_iter()
                        .flatten()
                        .map(PathBuf::as_path),
                );
            }
        }
        in_order(
            reaching
                .into_iter()
                .filter_map(|d| self.candidates.get_key_value(d))
                .map(|(p, &i)| (p, i))
                .collect(),
        )
    }
}

impl std::fmt::Debug for ReadersIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadersIndex")
            .field("start", &self.start)
            .field("candidates", &self.candidates.len())
            .field("indexed", &self.graph.as_ref().map(|g| g.indexed))
            .finish()
    }
}

/// What every folder reachable from `candidates` reads; `None` when there are too many.
fn index(
    candidates: &[PathBuf],
    files: &HashSet<PathBuf>,
    boundary: &Path,
) -> Option<HashMap<PathBuf, Reads>> {
    if candidates.len() >= MAX_INDEXED {
        return None;
    }
    // Listed by the walk or by git's index: their files are read beneath the boundary by a
    // relative path the kernel checks (no symlink, no `..` out), not by resolving each folder.
    let listed = Listed {
        folders: candidates.iter().collect(),
        files,
        beneath: Beneath::open(boundary),
    };
    // The listed kustomizations, read and parsed in parallel: one small file each, but a
    // monorepo has thousands, and they are most of the cost of linting one named file.
    let mut graph: HashMap<PathBuf, Reads> = candidates
        .par_iter()
        .map(|dir| (dir.clone(), reads_of(dir, boundary, &listed)))
        .collect();
    // Folders they name that the listing did not find (ignored, or beside the listed tree).
    let mut todo: Vec<PathBuf> = graph
        .values()
        .flat_map(|reads| &reads.folders)
        .filter(|f| !graph.contains_key(*f))
        .cloned()
        .collect();
    while let Some(dir) = todo.pop() {
        if graph.contains_key(&dir) {
            continue;
        }
        if graph.len() >= MAX_INDEXED {
            return None;
        }
        let reads = reads_of(&dir, boundary, &listed);
        todo.extend(
            reads
                .folders
                .iter()
                .filter(|f| !graph.contains_key(*f))
                .cloned(),
        );
        graph.insert(dir, reads);
    }
    Some(graph)
}

/// What the listing (the walk, or git's index) found: kustomization folders, and files.
struct Listed<'w> {
    folders: HashSet<&'w PathBuf>,
    files: &'w HashSet<PathBuf>,
    /// The boundary, opened once: listed kustomizations are read beneath it.
    beneath: Beneath,
}

fn reads_of(dir: &Path, boundary: &Path, listed: &Listed) -> Reads {
    let mut reads = Reads::default();
    if !dir.starts_with(boundary) {
        return reads;
    }
    let was_listed = listed.folders.contains(&dir.to_path_buf());
    let Some((file, bytes)) =
        read_kustomization(dir, boundary, was_listed.then_some(&listed.beneath))
    else {
        return reads; // not a kustomization: the render fails and reads nothing
    };
    let Ok(bytes) = bytes else {
        reads.unknown = true;
        return reads;
    };
    let stream = Stream::parse_bytes(&bytes);
    let root = match (&stream.error, stream.documents.first()) {
        (None, Some(doc)) => &doc.root,
        _ => {
            reads.unknown = true;
            return reads;
        }
    };
    reads.files.push(normalize(&file));
    for entry in root.as_map().unwrap_or_default() {
        let Some(key) = entry.key.text() else {
            continue;
        };
        for r in references(key, &entry.value) {
            if is_remote(r.written) {
                continue; // never fetched: the root fails to render
            }
            let path = normalize(&dir.join(r.written));
            // A listed kustomization folder is a folder, a listed file is none: no need to ask
            // the file system (thousands of `stat`s in a monorepo).
            let folder = r.folder_ok
                && (listed.folders.contains(&path)
                    || (!listed.files.contains(&path) && path.is_dir()));
            if folder {
                reads.folders.push(path);
            } else {
                reads.files.push(path);
            }
        }
    }
    reads
}

/// The kustomization file of `dir` and its bytes (or why it was not read); `None` when the
/// folder has none.
type Read = (PathBuf, Result<Vec<u8>, crate::source::repo::Refused>);

fn read_kustomization(dir: &Path, boundary: &Path, listed: Option<&Beneath>) -> Option<Read> {
    if let Some(beneath) = listed {
        for name in super::KUSTOMIZATION_FILE_NAMES {
            let file = dir.join(name);
            match beneath.read(&file) {
                Ok(None) => continue,
                Ok(Some(bytes)) => return Some((file, Ok(bytes))),
                Err(refused) => return Some((file, Err(refused))),
            }
        }
        return None;
    }
    let file = kustomization_file(dir)?;
    let bytes = crate::source::repo::read_file(&file, Some(boundary));
    Some((file, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roots among `candidates` whose render may read one of `named`.
    fn roots_reading(
        candidates: &[PathBuf],
        files: &HashSet<PathBuf>,
        named: &[PathBuf],
        boundary: &Path,
    ) -> Vec<PathBuf> {
        ReadersIndex::build(candidates.to_vec(), files.clone(), boundary).roots_reading(named)
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Two bases, three overlays (two over `a`, one over `b`, one of them with a component).
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = normalize(tmp.path());
        write(
            &root,
            "bases/a/kustomization.yaml",
            "resources: [deploy.yaml]\n",
        );
        write(&root, "bases/a/deploy.yaml", "kind: Deployment\n");
        write(&root, "bases/a/stray.yaml", "kind: ConfigMap\n");
        write(
            &root,
            "bases/b/kustomization.yml",
            "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: c\n  files: [conf=app.conf]\n",
        );
        write(&root, "bases/b/deploy.yaml", "kind: Deployment\n");
        write(&root, "bases/b/app.conf", "x\n");
        write(
            &root,
            "components/gpu/kustomization.yaml",
            "kind: Component\npatches:\n- path: gpu.yaml\n",
        );
        write(&root, "components/gpu/gpu.yaml", "kind: Deployment\n");
        write(
            &root,
            "apps/one/kustomization.yaml",
            "resources: [../../bases/a]\npatches:\n- path: patch.yaml\n",
        );
        write(&root, "apps/one/patch.yaml", "kind: Deployment\n");
        write(&root, "apps/two/kustomization.yaml", "resources: [../../bases/a]\ncomponents: [../../components/gpu]\npatchesStrategicMerge:\n- |\n  kind: Deployment\n");
        write(
            &root,
            "apps/three/kustomization.yaml",
            "resources:\n- ../../bases/b\n- https://github.com/x/y//z?ref=v1\n",
        );
        (tmp, root)
    }

    fn candidates(root: &Path) -> Vec<PathBuf> {
        [
            "bases/a",
            "bases/b",
            "components/gpu",
            "apps/one",
            "apps/two",
            "apps/three",
        ]
        .iter()
        .map(|d| root.join(d))
        .collect()
    }

    /// Every file under `dir`, as the walk reports them.
    fn files_under(dir: &Path, out: &mut HashSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files_under(&path, out);
            } else {
                out.insert(path);
            }
        }
    }

    /// The roots reading `named`, with the walk's files known and, as a check that knowing them
    /// changes nothing, without.
    fn reading(root: &Path, named: &[&str]) -> Vec<String> {
        let named: Vec<PathBuf> = named.iter().map(|n| root.join(n)).collect();
        let mut files = HashSet::new();
        files_under(root, &mut files);
        let found = roots_reading(&candidates(root), &files, &named, root);
        assert_eq!(
            found,
            roots_reading(&candidates(root), &HashSet::new(), &named, root)
        );
        found
            .iter()
            .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
            .collect()
    }

    #[test]
    fn a_file_is_read_by_the_roots_that_reach_it() {
        let (_tmp, root) = tree();
        assert_eq!(reading(&root, &["apps/one/patch.yaml"]), ["apps/one"]);
        assert_eq!(
            reading(&root, &["bases/a/deploy.yaml"]),
            ["bases/a", "apps/one", "apps/two"]
        );
        assert_eq!(
            reading(&root, &["components/gpu/gpu.yaml"]),
            ["components/gpu", "apps/two"]
        );
        // Generator files, and a kustomization file itself.
        assert_eq!(
            reading(&root, &["bases/b/app.conf"]),
            ["bases/b", "apps/three"]
        );
        assert_eq!(
            reading(&root, &["bases/b/kustomization.yml"]),
            ["bases/b", "apps/three"]
        );
        // A file no kustomization names is read by none: it is linted as a plain file.
        assert!(reading(&root, &["bases/a/stray.yaml"]).is_empty());
        assert!(reading(&root, &["elsewhere.yaml"]).is_empty());
    }

    #[test]
    fn a_kustomization_that_does_not_parse_may_read_anything() {
        let (_tmp, root) = tree();
        write(
            &root,
            "bases/a/kustomization.yaml",
            "resources: [deploy.yaml\n",
        );
        assert_eq!(
            reading(&root, &["apps/one/patch.yaml"]),
            ["bases/a", "apps/one", "apps/two"]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_kustomization_that_is_a_symlink_is_not_followed_and_may_read_anything() {
        let (tmp, root) = tree();
        let outside = tmp.path().join("outside.yaml");
        std::fs::write(&outside, "resources: [x.yaml]\n").unwrap_or_else(|e| panic!("{e}"));
        let link = root.join("bases/b/kustomization.yml");
        std::fs::remove_file(&link).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&outside, &link).unwrap_or_else(|e| panic!("{e}"));
        // Unread, so it counts as reading every file: kept (its render then refuses the link).
        assert_eq!(
            reading(&root, &["apps/one/patch.yaml"]),
            ["bases/b", "apps/one", "apps/three"]
        );
    }

    #[test]
    fn nothing_outside_the_boundary_is_read() {
        let (_tmp, root) = tree();
        // The boundary is `apps`: the bases are not read, so nothing reaches their files.
        let named = [root.join("bases/a/deploy.yaml")];
        let found = roots_reading(
            &candidates(&root),
            &HashSet::new(),
            &named,
            &root.join("apps"),
        );
        assert!(found.is_empty(), "{found:?}");
    }
}
