//! The deployment model: which cluster applies which render and which file.
//!
//! A GitOps repository declares what each cluster runs; prod's and staging's overlays of one base
//! are different workloads, with their own usage, nodes and fixes. This stage sits between the
//! renders (`source`) and the rules: it reads the repository's declarations and gives every Kustomize
//! render, Helm release and plain manifest the cluster that applies it, which is part of every
//! later identity: (cluster, namespace, kind, name, container).
//!
//! Clusters are named, first match wins, by:
//! 1. the config's `clusters:` entries (a name and the paths whose objects it applies);
//! 2. the Flux layout: a `kustomize.toolkit.fluxcd.io` Kustomization belongs to the cluster whose
//!    declarations reach the file it is in, else to `<name>` when that file is under
//!    `clusters/<name>/` or beside a `flux-system/gotk-sync.yaml` in a folder `<name>`; its
//!    `spec.path` is then applied by that cluster, with its `targetNamespace`,
//!    `namePrefix`/`nameSuffix` and `postBuild` substitution (`substitute`, and `substituteFrom`
//!    ConfigMaps the repository defines; a Secret is named, never read);
//! 3. an Argo CD Application's `destination.name` (else `destination.server`) for its Helm
//!    release.
//!
//! What no declaration reaches belongs to one implicit cluster (`None`), so a repository without
//! GitOps declarations is linted exactly as before.

mod argo;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::source::discover::Input;
use crate::source::file::{display_path, SourceFile};
use crate::source::kustomize::{kustomization_file, normalize};
use crate::source::repo::declaration_bases;
use crate::source::substitute::Substitution;
use crate::source::units::{HelmUnit, PostRender, RenderSettings, RenderUnit};
use crate::source::yaml::{Node, SourceId, Stream};

/// A `clusters:` entry of the config: a cluster and the paths (relative to the repository) whose
/// objects it applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterEntry {
    pub name: String,
    pub paths: Vec<PathBuf>,
}

/// One "this cluster applies this folder".
#[derive(Clone, Debug)]
pub struct Deployment {
    pub cluster: Option<String>,
    pub folder: Folder,
    pub post: Arc<PostRender>,
    /// For people: `Flux Kustomization flux-system/apps in clusters/prod/apps.yaml`.
    pub by: String,
}

/// Where the run's objects are applied.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// The clusters applying each plain manifest (by run index); a file not here is in no
    /// declared cluster.
    pub files: HashMap<usize, Vec<String>>,
    /// Every named cluster of the run.
    pub clusters: BTreeSet<String>,
    /// The namespace a cluster's applier gives a plain file's objects that name none (Argo CD's
    /// `destination.namespace`), by (file, cluster).
    file_namespaces: HashMap<(usize, Option<String>), String>,
    /// What the declarations apply, for the Helm releases placed after the renders.
    deployments: Vec<Deployment>,
    /// The config's clusters with their paths, resolved.
    config: Vec<(String, Vec<PathBuf>)>,
    /// Plain manifests linted through the render of their folder as Flux builds it (see
    /// `generated_units`), not as written.
    pub rendered: BTreeSet<usize>,
}

impl Placement {
    /// The clusters a plain file is linted for: each that applies it, or the implicit one.
    pub fn file_clusters(&self, index: usize) -> Vec<Option<String>> {
        match self.files.get(&index) {
            Some(names) if !names.is_empty() => names.iter().cloned().map(Some).collect(),
            _ => vec![None],
        }
    }

    /// The namespace the applier of `cluster` gives the objects of plain file `index` that name
    /// none, if it says one.
    pub fn file_namespace(&self, index: usize, cluster: Option<&str>) -> Option<&str> {
        self.file_namespaces
            .get(&(index, cluster.map(str::to_string)))
            .map(String::as_str)
    }

    /// More than one cluster: outputs name each finding's cluster.
    pub fn several(&self) -> bool {
        self.clusters.len() > 1
    }

    /// Every folder a declaration or the config's `clusters:` applies (absolute, normalized).
    pub fn applied_folders(&self) -> Vec<PathBuf> {
        let folders: BTreeSet<PathBuf> = self
            .deployments
            .iter()
            .map(|d| d.folder.path.clone())
            .chain(
                self.config
                    .iter()
                    .flat_map(|(_, paths)| paths.iter().cloned()),
            )
            .collect();
        folders.into_iter().collect()
    }
}

/// Reads the declarations, gives every unit, release and plain file its cluster, and returns
/// the units to lint: a root applied by several clusters (or twice with different transforms)
/// becomes one unit each, with the applier's transforms on its objects.
#[allow(clippy::too_many_arguments)]
pub fn place(
    files: &[SourceFile],
    declarations: &[usize],
    rendered_applications: &[(PathBuf, Arc<Stream>)],
    mut units: Vec<RenderUnit>,
    settings: &RenderSettings,
    repo_root: Option<&Path>,
    config: &[ClusterEntry],
    notes: &mut Vec<String>,
) -> (Vec<RenderUnit>, Placement) {
    let root = repo_root.map(normalize);
    let config: Vec<(String, Vec<PathBuf>)> = config
        .iter()
        .map(|c| {
            let paths = c
                .paths
                .iter()
                .map(|p| match &root {
                    Some(r) => normalize(&r.join(p)),
                    None => normalize(p),
                })
                .collect();
            (c.name.clone(), paths)
        })
        .collect();
    let path_of = |i: usize| file_path(files, i);
    // Plain manifests, and the files read only for their declarations (a named file's run).
    let sources: Vec<usize> = files
        .iter()
        .enumerate()
        .filter(|(i, f)| f.role == crate::source::file::FileRole::Plain || declarations.contains(i))
        .map(|(i, _)| i)
        .collect();
    let flux = flux_kustomizations(files, &sources, &units);
    let generators = flux_objects(files, &sources, &units, is_artifact_generator);
    let config_maps = config_maps(files, &sources, &units);
    let mut deployments = flux_deployments(
        files,
        &flux,
        &generators,
        &config_maps,
        &config,
        root.as_deref(),
        notes,
    );
    deployments.extend(argo_deployments(
        files,
        &sources,
        &units,
        rendered_applications,
        root.as_deref(),
        notes,
    ));

    let mut placement = Placement::default();
    for (name, _) in &config {
        placement.clusters.insert(name.clone());
    }
    for d in &deployments {
        placement.clusters.extend(d.cluster.clone());
    }

    // Plain manifests a Flux Kustomization applies with transforms: rendered as Flux builds
    // their folder, one unit per deployment, and linted through it.
    let generated = generated_units(files, &mut deployments, &config, root.as_deref(), notes);
    placement.rendered = generated.iter().flat_map(|u| u.files.clone()).collect();

    // Plain files: every cluster whose applied folder holds them, and the config's paths.
    for (i, file) in files.iter().enumerate() {
        if file.role != crate::source::file::FileRole::Plain || placement.rendered.contains(&i) {
            continue;
        }
        let Some(path) = path_of(i) else { continue };
        let mut names: BTreeSet<String> = config
            .iter()
            .filter(|(_, paths)| paths.iter().any(|p| path.starts_with(p)))
            .map(|(n, _)| n.clone())
            .collect();
        if names.is_empty() {
            for d in deployments.iter().filter(|d| covers_plain(d, &path)) {
                if let Some(c) = &d.cluster {
                    names.insert(c.clone());
                }
                if let Some(ns) = &d.post.default_namespace {
                    placement
                        .file_namespaces
                        .insert((i, d.cluster.clone()), ns.clone());
                }
            }
        }
        if !names.is_empty() {
            placement.files.insert(i, names.into_iter().collect());
        }
    }

    units.extend(applied_bases(files, &deployments, &units, settings, notes));
    // Units: one per deployment of its root; the config's paths name a cluster of their own.
    let mut placed = Vec::with_capacity(units.len());
    for unit in units {
        let by_config: Vec<&String> = config
            .iter()
            .filter(|(_, paths)| paths.iter().any(|p| unit.dir.starts_with(p)))
            .map(|(n, _)| n)
            .collect();
        if !by_config.is_empty() {
            for name in by_config {
                placed.push(RenderUnit {
                    cluster: Some(name.clone()),
                    ..unit.clone()
                });
            }
            continue;
        }
        let mine: Vec<&Deployment> = deployments
            .iter()
            .filter(|d| covers_unit(d, &unit.dir))
            .collect();
        if mine.is_empty() {
            placed.push(unit);
            continue;
        }
        // The same cluster and transforms twice is one deployment.
        let mut seen: Vec<(Option<String>, *const PostRender)> = Vec::new();
        for d in mine {
            let key = (d.cluster.clone(), Arc::as_ptr(&d.post));
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if let Some(why) = d.post.overlay_error(&unit.objects) {
                notes.push(format!(
                    "{}: its patches do not apply to the render of {} ({why}); linted without them",
                    d.by, unit.name
                ));
            }
            let mut objects = unit.objects.clone();
            let substituted = d.post.apply(&mut objects);
            placed.push(RenderUnit {
                objects,
                cluster: d.cluster.clone(),
                post: d.post.clone(),
                substituted: Arc::new(substituted),
                ..unit.clone()
            });
        }
    }

    placed.extend(generated);
    placement.deployments = deployments;
    placement.config = config;
    (placed, placement)
}

/// Kustomize roots a declaration applies that discovery linted only through the roots using
/// them as a base (`units::build`: a base is linted through its overlays). Applied on their
/// own, they are workloads of their own (Argo CD's `kustomize-guestbook`, which another
/// example's overlay also uses as a base): each gets its unit, rendered as it is, with the
/// files the overlays' renders already read.
fn applied_bases(
    files: &[SourceFile],
    deployments: &[Deployment],
    units: &[RenderUnit],
    settings: &RenderSettings,
    notes: &mut Vec<String>,
) -> Vec<RenderUnit> {
    let used_as_base: BTreeSet<PathBuf> = units
        .iter()
        .flat_map(|u| u.bases.iter().map(|b| normalize(b)))
        .collect();
    let wanted: Vec<&Deployment> = deployments
        .iter()
        .filter(|d| !d.folder.whole_tree && used_as_base.contains(&d.folder.path))
        .filter(|d| !units.iter().any(|u| u.dir == d.folder.path))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let index: HashMap<PathBuf, usize> = (0..files.len())
        .filter_map(|i| Some((file_path(files, i)?, i)))
        .collect();
    let sources = crate::source::units::RunSources::new(files, settings.boundary.clone());
    let mut out: Vec<RenderUnit> = Vec::new();
    for d in wanted {
        let dir = &d.folder.path;
        if out.iter().any(|u| u.dir == *dir) {
            continue;
        }
        let rendered = match crate::source::units::render_root(dir, &sources, settings) {
            Ok(r) => r,
            Err(e) => {
                notes.push(format!(
                    "{}: its folder does not render ({e}); not linted",
                    d.by
                ));
                continue;
            }
        };
        // Every file it reads was read by a render of this run (it is a base of one).
        let read: Option<Vec<usize>> = rendered
            .files
            .iter()
            .map(|f| index.get(&normalize(f)).copied())
            .collect();
        let (Some(read), Some(&home)) = (read, index.get(&normalize(&rendered.kustomization)))
        else {
            continue;
        };
        out.push(RenderUnit {
            name: display_path(dir),
            dir: dir.clone(),
            home,
            files: read,
            bases: rendered
                .kustomizations
                .iter()
                .filter(|k| **k != rendered.kustomization)
                .filter_map(|k| k.parent().map(Path::to_path_buf))
                .collect(),
            objects: rendered.objects,
            cluster: None,
            post: Arc::default(),
            substituted: Arc::default(),
        });
    }
    out
}

/// Flux generates a kustomization for a folder that has none, listing every manifest in its
/// tree, and builds it with the Kustomization's transforms (target namespace, name prefix,
/// substitution, patches). Where a deployment transforms a folder's plain manifests, each
/// deployment of them gets a unit of that render (`units::render_generated`), so they are
/// judged, totalled and fixed as their cluster runs them, not as written. The deployments'
/// `post` then names the manifests, for the fixer's renders.
fn generated_units(
    files: &[SourceFile],
    deployments: &mut [Deployment],
    config: &[(String, Vec<PathBuf>)],
    repo_root: Option<&Path>,
    notes: &mut Vec<String>,
) -> Vec<RenderUnit> {
    let transforming: Vec<&Deployment> = deployments
        .iter()
        .filter(|d| d.folder.whole_tree && d.post.transforms())
        .collect();
    if transforming.is_empty() {
        return Vec::new();
    }
    // Plain manifests a transforming deployment applies (the config's paths name clusters of
    // their own, without transforms).
    let manifests: Vec<(usize, PathBuf)> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.role == crate::source::file::FileRole::Plain)
        .filter_map(|(i, f)| Some((i, file_path(files, i)?, f)))
        .filter(|(_, path, _)| {
            !config
                .iter()
                .any(|(_, ps)| ps.iter().any(|p| path.starts_with(p)))
        })
        .filter(|(_, path, _)| transforming.iter().any(|d| covers_plain(d, path)))
        .filter(|(_, path, f)| crate::source::kustomize::is_manifest(&f.stream, path))
        .map(|(i, path, _)| (i, path))
        .collect();
    let sources = crate::source::units::RunSources::new(files, repo_root.map(Path::to_path_buf));
    let mut units = Vec::new();
    for d in deployments.iter_mut() {
        let (indices, paths): (Vec<usize>, Vec<PathBuf>) = manifests
            .iter()
            .filter(|(_, path)| covers_plain(d, path))
            .cloned()
            .unzip();
        let Some(&home) = indices.first() else {
            continue;
        };
        d.post = Arc::new(PostRender {
            generated: paths,
            ..(*d.post).clone()
        });
        let rendered =
            crate::source::kustomize::render_generated(&d.folder.path, &d.post.generated, &sources);
        let mut rendered = match rendered {
            Ok(r) => r,
            Err(e) => {
                notes.push(format!(
                    "{}: its folder does not render ({e}); its manifests are linted as written",
                    d.by
                ));
                continue;
            }
        };
        if let Some(why) = d.post.overlay_error(&rendered.objects) {
            notes.push(format!(
                "{}: its patches do not apply to its folder's manifests ({why}); linted without them",
                d.by
            ));
        }
        let substituted = d.post.apply(&mut rendered.objects);
        units.push(RenderUnit {
            name: display_path(&d.folder.path),
            dir: d.folder.path.clone(),
            home,
            objects: rendered.objects,
            files: indices,
            bases: Vec::new(),
            cluster: d.cluster.clone(),
            post: d.post.clone(),
            substituted: Arc::new(substituted),
        });
    }
    units
}

impl Placement {
    /// Gives each Helm release its cluster: the one its declaration names (an Argo CD
    /// destination, the render a HelmRelease is part of), else the config's paths or the
    /// deployment that applies the manifest declaring it.
    pub fn place_releases(&mut self, releases: &mut [HelmUnit]) {
        for release in releases.iter_mut() {
            if release.cluster.is_none() {
                release.cluster = self.cluster_of_declaration(release);
            }
            self.clusters.extend(release.cluster.clone());
        }
    }

    fn cluster_of_declaration(&self, release: &HelmUnit) -> Option<String> {
        let declared = normalize(release.release.declared_in.as_deref()?);
        let by_config = self
            .config
            .iter()
            .find(|(_, paths)| paths.iter().any(|p| declared.starts_with(p)))
            .map(|(n, _)| n.clone());
        by_config.or_else(|| {
            self.deployments
                .iter()
                .filter(|d| covers_plain(d, &declared))
                .find_map(|d| d.cluster.clone())
        })
    }
}

/// The run file's path (absolute, normalized); `None` for stdin.
fn file_path(files: &[SourceFile], index: usize) -> Option<PathBuf> {
    match &files.get(index)?.input {
        Input::File(p) => Some(normalize(p)),
        Input::Stdin => None,
    }
}

/// A folder an applier applies (absolute, normalized): a Kustomize root, which is applied
/// alone, or a folder without a kustomization, whose every manifest and root below it is
/// applied (Flux generates the kustomization; Argo CD applies the folder).
#[derive(Clone, Debug)]
pub struct Folder {
    pub path: PathBuf,
    /// No kustomization of its own: the whole tree below it is applied. Read once, here.
    whole_tree: bool,
}

impl Folder {
    fn new(path: PathBuf) -> Folder {
        Folder {
            whole_tree: kustomization_file(&path).is_none(),
            path,
        }
    }

    /// Whether it applies the plain manifest at `file`.
    fn covers_file(&self, file: &Path) -> bool {
        self.whole_tree && file.starts_with(&self.path)
    }

    /// Whether it applies the Kustomize root at `dir`.
    fn covers_root(&self, dir: &Path) -> bool {
        dir == self.path || (self.whole_tree && dir.starts_with(&self.path))
    }
}

fn covers_plain(d: &Deployment, file: &Path) -> bool {
    d.folder.covers_file(file)
}

fn covers_unit(d: &Deployment, dir: &Path) -> bool {
    d.folder.covers_root(dir)
}

/// A Flux object (a Kustomization, an ArtifactGenerator) and the file it is written in.
struct FluxObject<'a> {
    object: &'a Node,
    /// Run index of the file that declares it.
    file: usize,
    file_path: PathBuf,
}

fn is_flux_kustomization(object: &Node) -> bool {
    object.get_str("kind") == Some("Kustomization")
        && object
            .get_str("apiVersion")
            .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"))
}

/// Every Flux Kustomization of the run: in plain files as written, in renders as rendered (the
/// `flux-system` root renders `gotk-sync.yaml`).
fn flux_kustomizations<'a>(
    files: &'a [SourceFile],
    sources: &[usize],
    units: &'a [RenderUnit],
) -> Vec<FluxObject<'a>> {
    flux_objects(files, sources, units, is_flux_kustomization)
}

fn is_artifact_generator(object: &Node) -> bool {
    object.get_str("kind") == Some("ArtifactGenerator")
        && object
            .get_str("apiVersion")
            .is_some_and(|a| a.starts_with("source.extensions.fluxcd.io/"))
}

/// The Flux objects `is` picks among the run's declarations: in plain files as written, in
/// renders as rendered.
fn flux_objects<'a>(
    files: &'a [SourceFile],
    sources: &[usize],
    units: &'a [RenderUnit],
    is: fn(&Node) -> bool,
) -> Vec<FluxObject<'a>> {
    let path_of = |i: usize| file_path(files, i);
    let mut out = Vec::new();
    for &i in sources {
        let Some(file) = files.get(i) else { continue };
        let Some(file_path) = path_of(i) else {
            continue;
        };
        for doc in &file.stream.documents {
            if is(&doc.root) {
                out.push(FluxObject {
                    object: &doc.root,
                    file: i,
                    file_path: file_path.clone(),
                });
            }
        }
    }
    let mut seen = BTreeSet::new();
    for unit in units {
        for object in unit.objects.iter().filter(|o| is(o)) {
            let Some(file) = object
                .get("kind")
                .and_then(|k| k.span.source.index())
                .filter(|i| seen.insert((*i, object.span.start)))
            else {
                continue;
            };
            let Some(file_path) = path_of(file) else {
                continue;
            };
            out.push(FluxObject {
                object,
                file,
                file_path,
            });
        }
    }
    out
}

/// A ConfigMap of the run (a `substituteFrom` source) and where it is written.
struct ConfigMap {
    /// `None`: written without one (it lands where its applier puts it).
    namespace: Option<String>,
    name: String,
    data: BTreeMap<String, String>,
    /// The plain file it is in, or the root whose render holds it.
    at: PathBuf,
    rendered: bool,
}

/// Every ConfigMap of the run: plain files as written, renders as rendered.
fn config_maps(files: &[SourceFile], sources: &[usize], units: &[RenderUnit]) -> Vec<ConfigMap> {
    let mut out = Vec::new();
    let mut add = |object: &Node, at: &Path, rendered: bool| {
        if object.get_str("kind") != Some("ConfigMap") || object.get_str("apiVersion") != Some("v1")
        {
            return;
        }
        let Some(name) = object.get_path(&["metadata", "name"]).and_then(Node::text) else {
            return;
        };
        let namespace = object
            .get_path(&["metadata", "namespace"])
            .and_then(Node::text)
            .map(str::to_string);
        let data: BTreeMap<String, String> = object
            .get("data")
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| Some((e.key.text()?.to_string(), e.value.text()?.to_string())))
            .collect();
        out.push(ConfigMap {
            namespace,
            name: name.to_string(),
            data,
            at: at.to_path_buf(),
            rendered,
        });
    };
    for file in sources.iter().filter_map(|&i| files.get(i)) {
        let Input::File(path) = &file.input else {
            continue;
        };
        let path = normalize(path);
        for doc in &file.stream.documents {
            add(&doc.root, &path, false);
        }
    }
    for unit in units {
        for object in &unit.objects {
            add(object, &unit.dir, true);
        }
    }
    out
}

/// The folder `clusters/<name>/…` or a folder holding `flux-system/gotk-sync.yaml` names the
/// cluster of a file below it.
fn layout_cluster(file: &Path, root: Option<&Path>) -> Option<String> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if root.is_some_and(|r| !d.starts_with(r) || d == r) {
            return None;
        }
        let name = d.file_name()?.to_string_lossy().to_string();
        let parent_is_clusters = d
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "clusters");
        if parent_is_clusters || d.join("flux-system").join("gotk-sync.yaml").is_file() {
            return Some(name);
        }
        dir = d.parent();
    }
    None
}

/// The folders Argo CD Applications (and the Applications ApplicationSets generate) send to
/// their destination cluster; a Helm chart's folder is a release instead (`source::helm`).
fn argo_deployments(
    files: &[SourceFile],
    sources: &[usize],
    units: &[RenderUnit],
    rendered_applications: &[(PathBuf, Arc<Stream>)],
    root: Option<&Path>,
    notes: &mut Vec<String>,
) -> Vec<Deployment> {
    let path_of = |i: usize| file_path(files, i);
    let mut declared: Vec<(&Node, PathBuf)> = Vec::new();
    for &i in sources {
        let (Some(file), Some(path)) = (files.get(i), path_of(i)) else {
            continue;
        };
        declared.extend(
            file.stream
                .documents
                .iter()
                .map(|d| (&d.root, path.clone())),
        );
    }
    for unit in units {
        for object in &unit.objects {
            let file = object.get("kind").and_then(|k| k.span.source.index());
            if let Some(path) = file.and_then(path_of) {
                declared.push((object, path));
            }
        }
    }
    // Applications a chart renders (app-of-apps), under the render's pseudo path in the chart.
    for (path, stream) in rendered_applications {
        declared.extend(stream.documents.iter().map(|d| (&d.root, path.clone())));
    }
    let mut out = Vec::new();
    for (object, file) in declared {
        let roots = declaration_bases(&file, root);
        for app in argo::applications(object, &roots, notes) {
            let Some(path) = source_folder(&file, &app.path, root) else {
                notes.push(format!(
                    "{} in {}: path {:?} is not a folder of this repository: not followed",
                    app.by,
                    display_path(&file),
                    app.path
                ));
                continue;
            };
            if crate::source::helm::is_chart(&path) {
                continue;
            }
            out.push(Deployment {
                cluster: app.cluster,
                folder: Folder::new(path),
                post: Arc::new(PostRender {
                    default_namespace: app.namespace,
                    ..PostRender::default()
                }),
                by: app.by,
            });
        }
    }
    out
}

/// The folder a Kustomization's `spec.path` names: relative to the root of its source (this
/// repository). The repository linted may hold the GitOps tree in a folder of its own
/// (`deploy/` with `deploy/clusters/prod/…`), so the outermost folder above the declaring file
/// where the path exists is taken, the repository's root first. `None` when the path leaves
/// the repository or exists nowhere.
fn source_folder(declared_in: &Path, path: &str, root: Option<&Path>) -> Option<PathBuf> {
    let relative = path.trim_start_matches('/');
    declaration_bases(declared_in, root)
        .into_iter()
        .find_map(|base| {
            let dir = normalize(&base.join(relative));
            let inside = root.is_none_or(|r| dir.starts_with(r)) && dir.starts_with(&base);
            (inside && dir.is_dir()).then_some(dir)
        })
}

fn source_kind<'a>(f: &FluxObject<'a>) -> &'a str {
    f.object
        .get_path(&["spec", "sourceRef", "kind"])
        .and_then(Node::text)
        .unwrap_or("GitRepository")
}

/// The folder of this repository that a Kustomization whose source is a Flux
/// `ExternalArtifact` reads at `path`. Flux 2.7's ArtifactGenerator builds the artifact by
/// copying folders of its sources; the generator of the Kustomization's own cluster (prod's and
/// staging's `apps` artifacts copy different overlays) that builds it is read, and `path` is
/// mapped back through the copy whose destination holds it. A GitRepository source is this
/// repository (as for Kustomizations); only whole-folder copies (`@src/dir/**` to
/// `@artifact/dest/`) are followed. The artifact keeps the copied folders' relative layout in
/// the upstream examples, so the folder renders in place as it does in the artifact.
fn artifact_folder<'a>(
    f: &FluxObject,
    path: &str,
    generators: impl Iterator<Item = (&'a FluxObject<'a>, &'a Option<String>)>,
    cluster: &Option<String>,
    root: Option<&Path>,
) -> Result<PathBuf, String> {
    let sref = f.object.get_path(&["spec", "sourceRef"]);
    let name = sref.and_then(|r| r.get_str("name")).unwrap_or("?");
    let own_ns = f
        .object
        .get_path(&["metadata", "namespace"])
        .and_then(Node::text)
        .unwrap_or("flux-system");
    let ns = sref.and_then(|r| r.get_str("namespace")).unwrap_or(own_ns);
    let builds = |g: &'a FluxObject<'a>| -> Option<&'a Node> {
        let g_ns = g
            .object
            .get_path(&["metadata", "namespace"])
            .and_then(Node::text)
            .unwrap_or("flux-system");
        let artifact = g
            .object
            .get_path(&["spec", "artifacts"])
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .find(|a| a.get_str("name") == Some(name));
        artifact.filter(|_| g_ns == ns)
    };
    let mut candidates: Vec<(&FluxObject, &Node, bool)> = generators
        .filter_map(|(g, c)| builds(g).map(|a| (g, a, c == cluster)))
        .collect();
    // The cluster's own generator first.
    candidates.sort_by_key(|(_, _, same)| !same);
    let Some(&(generator, artifact, _)) = candidates.first() else {
        return Err(format!(
            "its ExternalArtifact {ns}/{name} is built by no ArtifactGenerator of this repository"
        ));
    };
    let kinds: HashMap<&str, &str> = generator
        .object
        .get_path(&["spec", "sources"])
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| Some((s.get_str("alias")?, s.get_str("kind").unwrap_or("?"))))
        .collect();
    // Paths inside an artifact: relative, `..` refused (it cannot leave the artifact).
    let inside_artifact = |p: &str| -> Option<PathBuf> {
        let parts: Vec<&str> = p
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        (!parts.contains(&"..")).then(|| parts.iter().collect())
    };
    let Some(wanted) = inside_artifact(path) else {
        return Err(format!("{path:?} leaves the artifact"));
    };
    let mut best: Option<(usize, PathBuf)> = None;
    let mut other_source = None;
    for copy in artifact
        .get("copy")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let (Some(from), Some(to)) = (copy.get_str("from"), copy.get_str("to")) else {
            continue;
        };
        let Some(to_dir) = to.strip_prefix("@artifact") else {
            continue;
        };
        let Some(to_dir) = inside_artifact(to_dir) else {
            continue;
        };
        let Some((alias, rest)) = from.trim_start_matches('@').split_once('/') else {
            continue;
        };
        let Some(from_dir) = rest.strip_suffix("**").and_then(inside_artifact) else {
            continue;
        };
        let Ok(inside) = wanted.strip_prefix(&to_dir) else {
            continue;
        };
        match kinds.get(alias).copied() {
            Some("GitRepository") => {}
            kind => {
                other_source = Some(format!(
                    "the copy into {to} comes from {}, not this repository",
                    kind.unwrap_or("an undeclared source")
                ));
                continue;
            }
        }
        let depth = to_dir.components().count();
        if best.as_ref().is_none_or(|(d, _)| depth > *d) {
            let dir = from_dir.join(inside);
            best = Some((depth, dir));
        }
    }
    let Some((_, dir)) = best else {
        return Err(other_source.unwrap_or_else(|| {
            format!(
                "no whole-folder copy of ArtifactGenerator {} puts {path:?} in its artifact {name}",
                display_path(&generator.file_path)
            )
        }));
    };
    source_folder(&f.file_path, &dir.to_string_lossy(), root).ok_or_else(|| {
        format!(
            "its ExternalArtifact {name} maps {path:?} to {}, not a folder of this repository",
            dir.display()
        )
    })
}

/// The deployments the Flux Kustomizations declare. A Kustomization's cluster is that of the
/// deployments reaching its own file (so `clusters/prod/apps.yaml`'s `./apps/prod` is prod's
/// even when `apps/prod` holds more Kustomizations), else the config's or the layout's.
fn flux_deployments(
    files: &[SourceFile],
    flux: &[FluxObject],
    generators: &[FluxObject],
    config_maps: &[ConfigMap],
    config: &[(String, Vec<PathBuf>)],
    root: Option<&Path>,
    notes: &mut Vec<String>,
) -> Vec<Deployment> {
    // Cluster of each Kustomization, settled over passes: one that applies the folder of another
    // names it (at most one pass per Kustomization).
    let placed = |f: &FluxObject| {
        config
            .iter()
            .find(|(_, paths)| paths.iter().any(|p| f.file_path.starts_with(p)))
            .map(|(n, _)| n.clone())
            .or_else(|| layout_cluster(&f.file_path, root))
    };
    let mut clusters: Vec<Option<String>> = flux.iter().map(placed).collect();
    let generator_clusters: Vec<Option<String>> = generators.iter().map(placed).collect();
    // Why an ExternalArtifact's path was not followed, by Kustomization.
    let mut unfollowed: Vec<Option<String>> = vec![None; flux.len()];
    let targets: Vec<Option<Folder>> = flux
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let path = f.object.get_path(&["spec", "path"]).and_then(Node::text)?;
            if source_kind(f) == "ExternalArtifact" {
                let generators = generators.iter().zip(&generator_clusters);
                return match artifact_folder(f, path, generators, &clusters[i], root) {
                    Ok(dir) => Some(Folder::new(dir)),
                    Err(why) => {
                        unfollowed[i] = Some(why);
                        None
                    }
                };
            }
            source_folder(&f.file_path, path, root).map(Folder::new)
        })
        .collect();
    for _ in 0..flux.len() {
        let mut changed = false;
        for (i, f) in flux.iter().enumerate() {
            let reached = flux.iter().enumerate().find_map(|(j, _)| {
                let dir = &targets[j].as_ref()?.path;
                let applies = f.file_path.starts_with(dir) && j != i;
                applies.then(|| clusters[j].clone()).flatten()
            });
            if let Some(c) = reached {
                if clusters[i].as_ref() != Some(&c) {
                    clusters[i] = Some(c);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // The clusters each ConfigMap is in: those whose Kustomizations apply it, else the
    // config's or the layout's (a `substituteFrom` names a ConfigMap of its own cluster: prod's
    // and staging's `cluster-settings` are two).
    let config_map_clusters: Vec<BTreeSet<Option<String>>> = config_maps
        .iter()
        .map(|cm| {
            let mut names: BTreeSet<Option<String>> = flux
                .iter()
                .enumerate()
                .filter(|(j, _)| {
                    targets[*j].as_ref().is_some_and(|folder| {
                        if cm.rendered {
                            folder.covers_root(&cm.at)
                        } else {
                            folder.covers_file(&cm.at)
                        }
                    })
                })
                .map(|(j, _)| clusters[j].clone())
                .collect();
            if names.is_empty() {
                let by_config = config
                    .iter()
                    .find(|(_, paths)| paths.iter().any(|p| cm.at.starts_with(p)))
                    .map(|(n, _)| n.clone());
                names.insert(by_config.or_else(|| layout_cluster(&cm.at, root)));
            }
            names
        })
        .collect();
    let mut out = Vec::new();
    for (i, f) in flux.iter().enumerate() {
        let ns = f
            .object
            .get_path(&["metadata", "namespace"])
            .and_then(Node::text)
            .unwrap_or("flux-system");
        let name = f
            .object
            .get_path(&["metadata", "name"])
            .and_then(Node::text)
            .unwrap_or("?");
        let by = format!(
            "Flux Kustomization {ns}/{name} in {}",
            display_path(&f.file_path)
        );
        match source_kind(f) {
            "GitRepository" => {}
            "ExternalArtifact" => {
                if let Some(why) = &unfollowed[i] {
                    notes.push(format!("{by}: {why}: not followed"));
                    continue;
                }
            }
            other => {
                notes.push(format!(
                    "{by}: its source is a {other}, not this repository: not followed"
                ));
                continue;
            }
        }
        let Some(folder) = targets[i].clone() else {
            if let Some(p) = f.object.get_path(&["spec", "path"]).and_then(Node::text) {
                notes.push(format!(
                    "{by}: spec.path {p:?} is not a folder of this repository: not followed"
                ));
            }
            continue;
        };
        let tagged = |keys: &[&str]| {
            f.object.get_path(keys).cloned().map(|mut n| {
                if n.span.source.index().is_none() {
                    n.set_source(SourceId::file(f.file));
                }
                n
            })
        };
        // The ConfigMaps this Kustomization's cluster has (and those placed in none).
        let cluster = clusters[i].clone();
        let visible: Vec<&ConfigMap> = config_maps
            .iter()
            .zip(&config_map_clusters)
            .filter(|(_, cs)| cs.contains(&cluster) || cs.contains(&None))
            .map(|(cm, _)| cm)
            .collect();
        let substitute = substitution(f.object, ns, &visible, &by, notes);
        // `spec.patches` and `spec.images`, as a kustomization of their own.
        let entries: Vec<crate::source::yaml::Entry> = ["patches", "images"]
            .iter()
            .filter_map(|key| {
                let spec = f.object.get("spec")?.as_map()?;
                let entry = spec.iter().find(|e| e.key.text() == Some(*key))?;
                let mut entry = entry.clone();
                if entry.value.span.source.index().is_none() {
                    entry.key.set_source(SourceId::file(f.file));
                    entry.value.set_source(SourceId::file(f.file));
                }
                Some(entry)
            })
            .collect();
        let overlay = (!entries.is_empty())
            .then(|| files.get(f.file))
            .flatten()
            .map(|file| crate::source::units::Overlay {
                node: Node {
                    value: crate::source::yaml::Value::Map(entries),
                    ..f.object.clone()
                },
                file: f.file_path.clone(),
                stream: file.stream.clone(),
            });
        // `spec.components`: added to the root's kustomization, relative to `spec.path`. A
        // folder without a kustomization of its own has none to add them to.
        let mut components: Vec<Node> = tagged(&["spec", "components"])
            .and_then(|n| n.as_seq().map(<[Node]>::to_vec))
            .unwrap_or_default();
        if !components.is_empty() && folder.whole_tree {
            notes.push(format!(
                "{by}: spec.components on a folder without a kustomization.yaml is not applied by gpulint; linted without them"
            ));
            components.clear();
        }
        let post = PostRender {
            overlay,
            namespace: tagged(&["spec", "targetNamespace"]),
            default_namespace: None,
            name_prefix: tagged(&["spec", "namePrefix"]),
            name_suffix: tagged(&["spec", "nameSuffix"]),
            substitute,
            components,
            generated: Vec::new(),
        };
        out.push(Deployment {
            cluster: clusters[i].clone(),
            folder,
            post: Arc::new(post),
            by,
        });
    }
    out
}

/// A Kustomization's `postBuild` variables: `substituteFrom` ConfigMaps of the repository in
/// order, then `substitute` (which wins, as in Flux). A Secret is never read: named in a note.
fn substitution(
    object: &Node,
    namespace: &str,
    config_maps: &[&ConfigMap],
    by: &str,
    notes: &mut Vec<String>,
) -> Option<Substitution> {
    let post_build = object.get_path(&["spec", "postBuild"])?;
    let mut vars = BTreeMap::new();
    for from in post_build
        .get("substituteFrom")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let kind = from.get_str("kind").unwrap_or("ConfigMap");
        let name = from.get_str("name").unwrap_or_default();
        let optional = from.get("optional").and_then(Node::text) == Some("true");
        match kind {
            "ConfigMap" => match config_maps
                .iter()
                .find(|cm| {
                    cm.name == name && cm.namespace.as_deref().is_none_or(|n| n == namespace)
                })
            {
                Some(cm) => vars.extend(cm.data.clone()),
                None if optional => {}
                None => notes.push(format!(
                    "{by}: substituteFrom ConfigMap {namespace}/{name} is not in the repository; its variables are not set"
                )),
            },
            _ => notes.push(format!(
                "{by}: substituteFrom {kind} {namespace}/{name} is not read (gpulint never reads secrets); its variables are not set"
            )),
        }
    }
    for e in post_build
        .get("substitute")
        .and_then(Node::as_map)
        .unwrap_or_default()
    {
        if let (Some(k), Some(v)) = (e.key.text(), e.value.text()) {
            vars.insert(k.to_string(), v.to_string());
        }
    }
    Some(Substitution { vars })
}
