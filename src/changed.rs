//! `--changed-since REF`: keep only the findings of objects whose source changed between REF and
//! the working tree, so a pull request is judged on what it touches.
//!
//! An object is identified by (apiVersion, kind, namespace, name) within its file; it "changed"
//! when it is new, or its content differs from the same object at REF. Files are compared
//! object by object, not line by line, so reformatting a neighbour does not drag it in.
//!
//! A render (a Kustomize overlay) whose files (a base, a patch, a kustomization) differ from
//! their blobs at REF is rendered again from REF's files, and its rendered objects are compared
//! the same way: a base change brings in the objects it changes in every overlay that uses it,
//! and the overlay's other objects stay out. When the render at REF fails (the root is new, or
//! needs features only an external kustomize has), all its objects count as changed. A Helm
//! release whose chart or values files changed is rendered again by the Helm engine from REF's
//! files (copied to a temporary folder) and compared the same way; when its declaring manifest
//! changed, it reads a file parameter, or it does not render at REF, all its objects count.
//!
//! Verdicts also read other objects: a ClusterQueue's quota, a ResourceFlavor's labels, a
//! LocalQueue, a ResourceClaimTemplate (whatever `RepoFacts` records), and the variables a Flux
//! Kustomization substitutes. When such an object changes (or is removed, or its file deleted),
//! the findings of the rules that read them (`rules::reads_repo_facts`) on every workload of the
//! clusters that apply it are in scope too, and a changed Flux Kustomization or ConfigMap brings
//! in every object of the renders its cluster substitutes variables in.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::{ObjectType, Oid, Repository};
use serde_json::Value as Json;

use crate::k8s::workload::{objects_in, ObjectRef};
use crate::lint::Run;
use crate::rules::{Origin, RepoFacts};
use crate::source::discover::Input;
use crate::source::document::plain;
use crate::source::helm::{HelmEngine, SetKind, ValuesSource};
use crate::source::kustomize::{self, normalize, Sources};
use crate::source::repo::{git_work_tree, relative_to};
use crate::source::units::{HelmUnit, RenderSettings};
use crate::source::yaml::Node;
use crate::source::yaml::Stream;

/// (file index, object identity) of every changed object, and the renders in scope.
pub struct ChangedScope {
    /// Clusters in which an object other verdicts read (a queue, a flavor, a claim template)
    /// changed; `None` in it: one no declaration places (or a deleted file), which any cluster
    /// may apply.
    facts_changed: std::collections::BTreeSet<Option<String>>,
    changed: HashSet<(usize, ObjectRef)>,
    /// Render units that read a changed file: the rendered objects that differ from the render
    /// at REF (`None`: it did not render at REF, every object counts).
    units: BTreeMap<usize, Option<HashSet<ObjectRef>>>,
    /// Helm releases whose chart, values or declaring manifest changed: the rendered objects
    /// that differ from the release rendered from REF's files (`None`: every object counts).
    releases: BTreeMap<usize, Option<HashSet<ObjectRef>>>,
    /// Files read from REF, for the summary line.
    pub files_compared: usize,
    /// Run files whose findings are all kept (the files a pre-commit run names).
    kept_files: HashSet<usize>,
}

/// Whether other objects' verdicts read this one: it adds to the repo facts (Kueue queues,
/// quotas and flavors, Namespaces, DRA claims).
fn is_fact(object: &crate::k8s::workload::Object) -> bool {
    let mut facts = RepoFacts::default();
    facts.add(object);
    facts != RepoFacts::default()
}

/// Whether a change of this object changes what Flux substitutes: a Flux Kustomization (its
/// `postBuild`) or a ConfigMap (a `substituteFrom` source).
fn is_substitution_source(id: &ObjectRef) -> bool {
    (id.kind == "Kustomization" && id.api_version.starts_with("kustomize.toolkit.fluxcd.io/"))
        || (id.kind == "ConfigMap" && id.api_version == "v1")
}

/// The objects of `roots` that differ between two sides (new, changed or removed), by id.
fn differing<'a>(
    before: &'a HashMap<ObjectRef, Json>,
    now: &'a HashMap<ObjectRef, Json>,
) -> impl Iterator<Item = &'a ObjectRef> {
    let changed = now
        .iter()
        .filter(|(id, value)| before.get(*id) != Some(value))
        .map(|(id, _)| id);
    let removed = before.keys().filter(|id| !now.contains_key(*id));
    changed.chain(removed)
}

/// Ids of the objects of `roots` that are facts, and whether one is a substitution source.
fn dependencies<'a>(roots: impl Iterator<Item = &'a Node>) -> (HashSet<ObjectRef>, bool) {
    let mut facts = HashSet::new();
    let mut substitution = false;
    for root in roots {
        for object in objects_in(root) {
            if is_fact(&object) {
                facts.insert(object.id.clone());
            }
            substitution |= is_substitution_source(&object.id);
        }
    }
    (facts, substitution)
}

fn identities(stream: &Stream) -> HashMap<ObjectRef, Json> {
    rendered_identities(stream.documents.iter().map(|d| &d.root))
}

fn rendered_identities<'a>(roots: impl Iterator<Item = &'a Node>) -> HashMap<ObjectRef, Json> {
    let mut out = HashMap::new();
    for root in roots {
        for object in objects_in(root) {
            out.insert(object.id.clone(), plain(object.node));
        }
    }
    out
}

/// The repository's files as they were at REF, for rendering a Kustomize root as it was.
struct TreeSources {
    /// git2 handles are not `Sync`: one at a time.
    repo: Mutex<Repository>,
    tree: Oid,
    /// The work tree's root: paths below it are looked up in the tree.
    root: PathBuf,
}

impl TreeSources {
    fn entry_kind(&self, path: &Path) -> Option<ObjectType> {
        let rel = normalize(path).strip_prefix(&self.root).ok()?.to_path_buf();
        if rel.as_os_str().is_empty() {
            return Some(ObjectType::Tree);
        }
        let repo = self.repo.lock().ok()?;
        let tree = repo.find_tree(self.tree).ok()?;
        tree.get_path(&rel).ok()?.kind()
    }
}

impl Sources for TreeSources {
    fn load(&self, path: &Path) -> std::io::Result<Arc<Stream>> {
        let missing =
            || std::io::Error::new(std::io::ErrorKind::NotFound, "not in the tree at REF");
        let rel = normalize(path)
            .strip_prefix(&self.root)
            .map_err(|_| missing())?
            .to_path_buf();
        let repo = self.repo.lock().map_err(|_| missing())?;
        let tree = repo.find_tree(self.tree).map_err(|_| missing())?;
        let entry = tree.get_path(&rel).map_err(|_| missing())?;
        let blob = repo.find_blob(entry.id()).map_err(|_| missing())?;
        Ok(Arc::new(Stream::parse_bytes(blob.content())))
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.entry_kind(path) == Some(ObjectType::Tree)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.entry_kind(path) == Some(ObjectType::Blob)
    }
}

/// What a render changed since REF.
struct RenderChange {
    /// The objects that differ from the same root rendered from REF's files; `None` when it
    /// does not render there (every object counts).
    objects: Option<HashSet<ObjectRef>>,
    /// An object other verdicts read changed, appeared or went away.
    facts_changed: bool,
    /// A Flux Kustomization or ConfigMap did.
    substitution_changed: bool,
}

fn changed_in_render(
    unit: &crate::source::units::RenderUnit,
    sources: &TreeSources,
    settings: &RenderSettings,
) -> RenderChange {
    let now = rendered_identities(unit.objects.iter());
    // The built-in renderer only: an external kustomize would read today's files.
    let applied = crate::source::units::applier_sources(&unit.dir, &unit.post, sources);
    let Ok(mut before) = kustomize::render(&unit.dir, &applied, &settings.options()) else {
        let (facts, substitution) = dependencies(unit.objects.iter());
        return RenderChange {
            objects: None,
            facts_changed: !facts.is_empty(),
            substitution_changed: substitution,
        };
    };
    // As its cluster applies it, like `unit.objects` (the applier's own declaration changing,
    // a substitution value, is seen through the Flux Kustomization or ConfigMap that changed).
    unit.post.apply(&mut before.objects);
    let (facts, _) = dependencies(unit.objects.iter().chain(before.objects.iter()));
    let old = rendered_identities(before.objects.iter());
    let differ: Vec<&ObjectRef> = differing(&old, &now).collect();
    RenderChange {
        facts_changed: differ.iter().any(|id| facts.contains(*id)),
        substitution_changed: differ.iter().any(|id| is_substitution_source(id)),
        objects: Some(
            now.iter()
                .filter(|(id, value)| old.get(*id) != Some(value))
                .map(|(id, _)| id.clone())
                .collect(),
        ),
    }
}

/// Whether a YAML file deleted since REF declared an object other verdicts read.
fn deleted_facts(repo: &Repository, tree: &git2::Tree) -> bool {
    let Ok(diff) = repo.diff_tree_to_workdir_with_index(Some(tree), None) else {
        return false;
    };
    diff.deltas()
        .filter(|d| d.status() == git2::Delta::Deleted)
        .filter_map(|d| {
            let path = d.old_file().path()?;
            let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
            yaml.then(|| repo.find_blob(d.old_file().id()).ok())
                .flatten()
        })
        .any(|blob| {
            let stream = Stream::parse_bytes(blob.content());
            !dependencies(stream.documents.iter().map(|d| &d.root))
                .0
                .is_empty()
        })
}

/// The objects of a Helm release that differ from the release rendered from REF's chart and
/// values files; `None` when that cannot be told (see the module documentation).
/// What a release's render changed since REF, as [`RenderChange`] says it of a Kustomize root:
/// the objects that differ (`None`: it cannot be rendered from REF's files, every object
/// counts), and whether an object other verdicts read (a queue, a flavor, a claim template)
/// changed, appeared or went away.
fn changed_in_release(
    unit: &HelmUnit,
    repo: &Repository,
    tree: &git2::Tree,
    root: &Path,
    engine: Option<&HelmEngine>,
) -> (Option<HashSet<ObjectRef>>, bool) {
    let now_roots = || unit.rendered.stream.documents.iter().map(|d| &d.root);
    let Some((before, now)) = engine.and_then(|e| release_renders(unit, repo, tree, root, e))
    else {
        return (None, !dependencies(now_roots()).0.is_empty());
    };
    let (facts, _) =
        dependencies(now_roots().chain(before.stream.documents.iter().map(|d| &d.root)));
    let old = rendered_identities(before.stream.documents.iter().map(|d| &d.root));
    let facts_changed = differing(&old, &now).any(|id| facts.contains(id));
    let objects = now
        .into_iter()
        .filter(|(id, value)| old.get(id) != Some(value))
        .map(|(id, _)| id)
        .collect();
    (Some(objects), facts_changed)
}

/// The release rendered from REF's chart and values files, and its objects today.
fn release_renders(
    unit: &HelmUnit,
    repo: &Repository,
    tree: &git2::Tree,
    root: &Path,
    engine: &HelmEngine,
) -> Option<(
    crate::source::helm::RenderedRelease,
    HashMap<ObjectRef, Json>,
)> {
    let release = &unit.release;
    if let Some(declared) = &release.declared_in {
        if differs(blob_at(tree, root, declared).as_ref(), declared) {
            return None; // inline values and parameters are today's
        }
    }
    let reads_a_file_parameter = release.values.iter().any(|v| match v {
        ValuesSource::Parameters { params, .. } => {
            params.iter().any(|p| matches!(p.kind, SetKind::SetFile))
        }
        _ => false,
    });
    if reads_a_file_parameter {
        return None;
    }
    // REF's chart and values files, at the same paths below a temporary root.
    let tmp = crate::source::helm::TempDir::new().ok()?;
    let at_ref = |path: &Path| -> Option<PathBuf> {
        let rel = relative_to(path, root)?;
        let blob = repo.find_blob(blob_at(tree, root, path)?.id()).ok()?;
        let copy = tmp.path().join(rel);
        std::fs::create_dir_all(copy.parent()?).ok()?;
        std::fs::write(&copy, blob.content()).ok()?;
        Some(copy)
    };
    let chart_files = files_under(&release.chart);
    // A file new since REF is simply absent there; the chart itself must have existed.
    let copied: Vec<_> = chart_files.iter().filter_map(|f| at_ref(f)).collect();
    if copied.is_empty() {
        return None;
    }
    let mut before = release.clone();
    before.chart = tmp.path().join(relative_to(&release.chart, root)?);
    for source in &mut before.values {
        if let ValuesSource::File(path) = source {
            *path = at_ref(path)?;
        }
    }
    let rendered = engine.template(&before, None).ok()?;
    let now = rendered_identities(unit.rendered.stream.documents.iter().map(|d| &d.root));
    Some((rendered, now))
}

/// Compares every linted file with its version at `reference`, and every render reading a
/// changed file with its render from `reference`'s files.
pub fn scope(
    run: &Run,
    reference: &str,
    settings: &RenderSettings,
    helm: Option<&HelmEngine>,
) -> Result<ChangedScope, String> {
    let first = run
        .files
        .iter()
        .find_map(|f| match &f.input {
            Input::File(p) => Some(p.clone()),
            Input::Stdin => None,
        })
        .unwrap_or_else(|| Path::new(".").to_path_buf());
    let root = git_work_tree(&first).ok_or_else(|| {
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
    let mut facts_changed = std::collections::BTreeSet::new();
    let mut substitutions_changed = std::collections::BTreeSet::new();
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
        let old = old_text.map(|bytes| {
            files_compared += 1;
            Stream::parse_bytes(&bytes)
        });
        let before = old.as_ref().map(identities).unwrap_or_default();
        // Objects other verdicts read, changed or removed here: in the clusters applying it.
        if file.role == crate::source::file::FileRole::Plain {
            let old_roots = old.iter().flat_map(|s| s.documents.iter().map(|d| &d.root));
            let now_roots = file.stream.documents.iter().map(|d| &d.root);
            let (facts, _) = dependencies(now_roots.chain(old_roots));
            let clusters = run.placement.file_clusters(index);
            for id in differing(&before, &now) {
                if facts.contains(id) {
                    facts_changed.extend(clusters.iter().cloned());
                }
                if is_substitution_source(id) {
                    substitutions_changed.extend(clusters.iter().cloned());
                }
            }
        }
        for (id, value) in now {
            if before.get(&id) != Some(&value) {
                changed.insert((index, id));
            }
        }
    }
    // Files deleted since REF: what they declared may be read by any cluster. Asked only when
    // a finding reads such objects (the diff walks the whole work tree: most of a named file's
    // run in a monorepo).
    let reads_facts = run
        .findings
        .iter()
        .any(|f| crate::rules::reads_repo_facts(f.rule.rule));
    if reads_facts && deleted_facts(&repo, &tree) {
        facts_changed.insert(None);
    }
    let sources = TreeSources {
        repo: Mutex::new(Repository::open(&root).map_err(|e| format!("--changed-since: {e}"))?),
        tree: tree.id(),
        root: normalize(&root),
    };
    let mut units: BTreeMap<usize, Option<HashSet<ObjectRef>>> = BTreeMap::new();
    for (i, unit) in run.units.iter().enumerate() {
        if !unit.files.iter().any(|f| changed_files.contains(f)) {
            continue;
        }
        let render = changed_in_render(unit, &sources, settings);
        if render.facts_changed {
            facts_changed.insert(unit.cluster.clone());
        }
        if render.substitution_changed {
            substitutions_changed.insert(unit.cluster.clone());
        }
        units.insert(i, render.objects);
    }
    // New variables: every object of the renders the cluster substitutes in may differ.
    for (i, unit) in run.units.iter().enumerate() {
        let substituted = unit.post.substitute.is_some();
        let touched =
            substitutions_changed.contains(&unit.cluster) || substitutions_changed.contains(&None);
        if substituted && touched {
            units.insert(i, None);
        }
    }
    let changed_releases: Vec<(usize, &HelmUnit)> = run
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
        .collect();
    let mut releases = BTreeMap::new();
    for (i, unit) in changed_releases {
        let (objects, facts) = changed_in_release(unit, &repo, &tree, &root, helm);
        if facts {
            facts_changed.insert(unit.cluster.clone());
        }
        releases.insert(i, objects);
    }
    Ok(ChangedScope {
        kept_files: HashSet::new(),
        facts_changed,
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

/// The scope of a run that names files (as pre-commit does): the findings located in them,
/// and those their changes since HEAD can cause (`--changed-since HEAD`: objects of renders
/// that read them, workloads that read a changed queue). `None` when the files are not in a
/// git work tree with a commit: then every finding of the run is reported, as before.
pub fn named_files(
    run: &Run,
    named: &[PathBuf],
    settings: &RenderSettings,
    helm: Option<&HelmEngine>,
) -> Option<ChangedScope> {
    let first = named.first()?;
    let root = git_work_tree(first)?;
    let repo = crate::source::repo::open_git(&root)?;
    repo.head().ok()?.peel_to_commit().ok()?;
    let mut scope = scope(run, "HEAD", settings, helm).ok()?;
    let wanted: HashSet<PathBuf> = named.iter().map(|p| normalize(p)).collect();
    scope.kept_files = run
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(&f.input, Input::File(p) if wanted.contains(&normalize(p))))
        .map(|(i, _)| i)
        .collect();
    Some(scope)
}

impl ChangedScope {
    /// Drops the findings of unchanged objects, and of renders that read no changed file; keeps
    /// those of rules that read other objects when such an object changed in their cluster.
    pub fn retain(&self, run: &mut Run) {
        run.narrowed = true;
        let facts_changed = |cluster: &Option<String>| {
            self.facts_changed.contains(cluster)
                || self.facts_changed.contains(&None)
                || (cluster.is_none() && !self.facts_changed.is_empty())
        };
        run.findings.retain(|f| {
            if self.kept_files.contains(&f.file) {
                return true;
            }
            if crate::rules::reads_repo_facts(f.rule.rule) && facts_changed(&f.cluster) {
                return true;
            }
            match f.origin {
                Origin::Kustomize(unit) => match self.units.get(&unit) {
                    Some(Some(objects)) => objects.contains(&f.object),
                    Some(None) => true,
                    None => false,
                },
                Origin::Helm(release) => match self.releases.get(&release) {
                    Some(Some(objects)) => objects.contains(&f.object),
                    Some(None) => true,
                    None => false,
                },
                Origin::File => self.changed.contains(&(f.file, f.object.clone())),
            }
        });
    }

    /// Changed objects: in plain files, and in renders that also rendered at REF.
    pub fn changed_objects(&self) -> usize {
        let rendered: usize = self
            .units
            .values()
            .chain(self.releases.values())
            .flatten()
            .map(HashSet::len)
            .sum();
        self.changed.len() + rendered
    }

    /// Renders (Kustomize roots, Helm releases) that read a changed file.
    pub fn changed_renders(&self) -> usize {
        self.units.len() + self.releases.len()
    }
}
