//! `--changed-since REF`: keep only the findings of objects whose source changed between REF and
//! the working tree, so a pull request is judged on what it touches.
//!
//! An object is identified by (apiVersion, kind, namespace, name) within its file; it "changed"
//! when it is new, or its content differs from the same object at REF. Files are compared
//! object by object, not line by line, so reformatting a neighbour does not drag it in.
//!
//! A render (a Kustomize overlay) is judged whole: it is in scope when any file it reads (a
//! base, a patch, a kustomization) differs from its blob at REF, so a base change brings in
//! every overlay that uses it, and an overlay's patch change that overlay only.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use git2::{ObjectType, Oid, Repository};
use serde_json::Value as Json;

use crate::fix::edit::plain;
use crate::fix::patch::{relative_to, repo_root};
use crate::k8s::workload::{objects, ObjectRef};
use crate::lint::Run;
use crate::source::discover::Input;
use crate::source::yaml::Stream;

/// (file index, object identity) of every changed object, and the renders in scope.
pub struct ChangedScope {
    changed: HashSet<(usize, ObjectRef)>,
    /// Indices of the render units that read a changed file.
    units: BTreeSet<usize>,
    /// Indices of the Helm releases whose chart, values or declaring manifest changed.
    releases: BTreeSet<usize>,
    /// Files read from REF, for the summary line.
    pub files_compared: usize,
}

fn identities(stream: &Stream) -> HashMap<ObjectRef, Json> {
    let mut out = HashMap::new();
    for doc in &stream.documents {
        for object in objects(doc) {
            out.insert(object.id.clone(), plain(object.node));
        }
    }
    out
}

/// Compares every linted file with its version at `reference`.
pub fn scope(run: &Run, reference: &str) -> Result<ChangedScope, String> {
    let first = run
        .files
        .iter()
        .find_map(|f| match &f.input {
            Input::File(p) => Some(p.clone()),
            Input::Stdin => None,
        })
        .unwrap_or_else(|| Path::new(".").to_path_buf());
    let root = repo_root(&first).ok_or_else(|| {
        format!(
            "--changed-since: {} is not inside a git repository",
            first.display()
        )
    })?;
    let repo = Repository::open(&root).map_err(|e| format!("--changed-since: {e}"))?;
    let tree = repo
        .revparse_single(reference)
        .and_then(|o| o.peel_to_tree())
        .map_err(|e| format!("--changed-since {reference}: {}", e.message()))?;
    let mut changed = HashSet::new();
    // Files whose bytes differ from their blob at REF (or that are new there).
    let mut changed_files = HashSet::new();
    let mut files_compared = 0;
    for (index, file) in run.files.iter().enumerate() {
        let now = identities(&file.stream);
        let Input::File(path) = &file.input else {
            // Stdin has no history: everything in it is new.
            changed.extend(now.into_keys().map(|id| (index, id)));
            changed_files.insert(index);
            continue;
        };
        let entry = blob_at(&tree, &root, path);
        if differs(entry.as_ref(), path) {
            changed_files.insert(index);
        }
        let old_text = entry
            .and_then(|entry| repo.find_blob(entry.id()).ok())
            .map(|blob| blob.content().to_vec());
        let before = match old_text {
            Some(bytes) => {
                files_compared += 1;
                identities(&Stream::parse_bytes(&bytes))
            }
            None => HashMap::new(),
        };
        for (id, value) in now {
            if before.get(&id) != Some(&value) {
                changed.insert((index, id));
            }
        }
    }
    let units = run
        .units
        .iter()
        .enumerate()
        .filter(|(_, unit)| unit.files.iter().any(|f| changed_files.contains(f)))
        .map(|(i, _)| i)
        .collect();
    let releases = run
        .releases
        .iter()
        .enumerate()
        .filter(|(_, unit)| {
            let release = &unit.release;
            let mut inputs = files_under(&release.chart);
            for source in &release.values {
                inputs.push(source.file().to_path_buf());
            }
            inputs.extend(release.declared_in.clone());
            inputs
                .iter()
                .any(|p| differs(blob_at(&tree, &root, p).as_ref(), p))
        })
        .map(|(i, _)| i)
        .collect();
    Ok(ChangedScope {
        changed,
        units,
        releases,
        files_compared,
    })
}

/// The file's blob in the reference tree, if it has one.
fn blob_at<'t>(tree: &'t git2::Tree, root: &Path, path: &Path) -> Option<git2::TreeEntry<'t>> {
    relative_to(path, root)
        .and_then(|rel| tree.get_path(Path::new(&rel)).ok())
        .filter(|entry| entry.kind() == Some(ObjectType::Blob))
}

/// Whether a file's bytes differ from its blob at the reference (or it has none): the blob ids
/// compare the bytes without reading the old blob.
fn differs(blob: Option<&git2::TreeEntry>, path: &Path) -> bool {
    let now = std::fs::read(path)
        .ok()
        .and_then(|bytes| Oid::hash_object(ObjectType::Blob, &bytes).ok());
    now.is_none() || blob.map(|e| e.id()) != now
}

/// Every file below a folder (a chart: templates, helpers, values, subcharts).
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

impl ChangedScope {
    /// Drops the findings of unchanged objects, and of renders that read no changed file.
    pub fn retain(&self, run: &mut Run) {
        run.findings.retain(|f| match (f.unit, f.release) {
            (Some(unit), _) => self.units.contains(&unit),
            (None, Some(release)) => self.releases.contains(&release),
            (None, None) => self.changed.contains(&(f.file, f.object.clone())),
        });
    }

    pub fn changed_objects(&self) -> usize {
        self.changed.len()
    }

    /// Renders (Kustomize roots, Helm releases) that read a changed file.
    pub fn changed_renders(&self) -> usize {
        self.units.len() + self.releases.len()
    }
}
