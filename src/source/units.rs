//! Render units: lint what is applied, not only what is written.
//!
//! A Kustomize root is rendered by the built-in renderer and its objects are linted instead of
//! its files, so a partial patch is not judged on its own and an overlay's changes are seen. Every
//! rendered node keeps the file and bytes that wrote it (`SourceId` on its span), so a finding
//! lands in the base or patch that set the field and a fix edits that file.
//!
//! The run's file list is the index space of `SourceId`s: files the renderer reads that the walk
//! did not list (kustomization files, bases outside the linted folder) are appended to it.

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::source::discover::Input;
use crate::source::file::{display_path, file_index, find_file, FileRole, InputError, SourceFile};
use crate::source::helm;
use crate::source::kustomize::{self, normalize, LoadRestrictor, Options, Reorder, Sources};
use crate::source::yaml::{Entry, Node, ScalarKind, SourceId, Stream, Value};

/// One rendered Kustomize root.
#[derive(Clone, Debug)]
pub struct RenderUnit {
    /// The root folder as shown to people (`overlays/prod`).
    pub name: String,
    /// The root folder (absolute, normalized).
    pub dir: PathBuf,
    /// Run file index of the root's kustomization file.
    pub home: usize,
    /// Rendered objects; their nodes' spans name run files.
    pub objects: Vec<Node>,
    /// Run file indices of every file the render read.
    pub files: Vec<usize>,
    /// The kustomization folders of the bases and components it reached (not its own).
    pub bases: Vec<PathBuf>,
    /// The cluster that applies this render (`None`: no GitOps declaration reaches it).
    pub cluster: Option<String>,
    /// What the applier does on top of the root's own kustomization (Flux's `targetNamespace`,
    /// post-build substitution); empty when nothing declares the root.
    pub post: Arc<PostRender>,
    /// The objects (by index) whose values Flux's substitution changed.
    pub substituted: Arc<BTreeSet<usize>>,
}

/// What an applier does to a root's render before the cluster gets it: a Flux Kustomization's
/// `targetNamespace`, `namePrefix`/`nameSuffix` and `postBuild` substitution. The nodes carry
/// the span of the field in the declaring file (tagged with its run index).
#[derive(Clone, Debug, Default)]
pub struct PostRender {
    /// Patches and image rewrites (Flux's `spec.patches`, `spec.images`) as a mapping with
    /// those keys, in the declaring file (its path and parse), applied before the namespace.
    pub overlay: Option<Overlay>,
    pub namespace: Option<Node>,
    /// The namespace of the objects that name none (Argo CD's `destination.namespace`).
    pub default_namespace: Option<String>,
    pub name_prefix: Option<Node>,
    pub name_suffix: Option<Node>,
    pub substitute: Option<crate::source::substitute::Substitution>,
    /// Kustomize components the applier adds to the root's own kustomization (Flux's
    /// `spec.components`, paths relative to the root), as written in the declaring file. Unlike
    /// the rest, they change the render itself: see [`render_root_for`].
    pub components: Vec<Node>,
    /// For a folder without a kustomization of its own: the manifests Flux's generated
    /// kustomization lists (absolute), rendered as its root ([`kustomize::render_generated`]).
    pub generated: Vec<PathBuf>,
}

/// An applier's patches and image rewrites, and the file that writes them.
#[derive(Clone, Debug)]
pub struct Overlay {
    pub node: Node,
    pub file: PathBuf,
    pub stream: Arc<Stream>,
}

impl PostRender {
    pub fn is_empty(&self) -> bool {
        !self.transforms() && self.default_namespace.is_none()
    }

    /// Whether it changes objects beyond naming the namespace of those that name none (Argo
    /// CD's only transform): what Flux's Kustomization fields do.
    pub fn transforms(&self) -> bool {
        self.overlay.is_some()
            || self.namespace.is_some()
            || self.name_prefix.is_some()
            || self.name_suffix.is_some()
            || self.substitute.is_some()
            || !self.components.is_empty()
    }

    /// Why the overlay does not apply to a root's render, if it does not.
    pub fn overlay_error(&self, objects: &[Node]) -> Option<String> {
        let o = self.overlay.as_ref()?;
        let mut copy = objects.to_vec();
        kustomize::overlay_rendered(&mut copy, &o.node, &o.file, &o.stream)
            .err()
            .map(|e| e.message)
    }

    /// Applies it to a root's rendered objects, in Flux's order: the kustomize transforms, then
    /// the substitution of the built objects. Returns the indices of the objects the
    /// substitution changed (a fix must not write a literal over a variable there).
    pub fn apply(&self, objects: &mut Vec<Node>) -> BTreeSet<usize> {
        let mut substituted = BTreeSet::new();
        if self.is_empty() {
            return substituted;
        }
        if let Some(o) = &self.overlay {
            // A patch that matches nothing fails the applier's reconciliation; here the
            // objects keep what applied before it (`overlay_error` says why, once).
            let _ = kustomize::overlay_rendered(objects, &o.node, &o.file, &o.stream);
        }
        kustomize::transform_rendered(
            objects,
            self.namespace.as_ref(),
            self.name_prefix.as_ref(),
            self.name_suffix.as_ref(),
        );
        if let Some(ns) = &self.default_namespace {
            kustomize::default_namespace(objects, ns);
        }
        if let Some(sub) = &self.substitute {
            for (i, object) in objects.iter_mut().enumerate() {
                if sub.apply(object) {
                    substituted.insert(i);
                }
            }
        }
        substituted
    }
}

/// The run index of each of a run's files, by normalized path: built once and shared by every
/// `RunSources` over those files (the fix plan renders every unit again, several times; an
/// index of thousands of files per render made a whole-repository lint of a monorepo slow).
pub struct RunPaths {
    by_path: HashMap<PathBuf, usize>,
    /// How many files it was built from: files beyond (a fix's new patch files) are indexed
    /// by the `RunSources` that has them.
    len: usize,
    /// `Sources::outside`'s answers, by path: the same files are checked by every render.
    outside: Mutex<HashMap<PathBuf, Option<String>>>,
}

impl RunPaths {
    pub fn of<F: Borrow<SourceFile>>(files: &[F]) -> Arc<RunPaths> {
        let by_path = files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match &f.borrow().input {
                Input::File(p) => Some((normalize(p), i)),
                Input::Stdin => None,
            })
            .collect();
        Arc::new(RunPaths {
            by_path,
            len: files.len(),
            outside: Mutex::default(),
        })
    }
}

/// A run's files, as `RunSources` borrows them: the run's own, or a fix attempt's (each behind
/// an `Arc`, sharing the files it does not edit).
#[derive(Clone, Copy)]
pub enum FileSlice<'f> {
    Plain(&'f [SourceFile]),
    Shared(&'f [Arc<SourceFile>]),
}

impl<'f> FileSlice<'f> {
    fn get(self, index: usize) -> Option<&'f SourceFile> {
        match self {
            FileSlice::Plain(files) => files.get(index),
            FileSlice::Shared(files) => files.get(index).map(|f| &**f),
        }
    }

    fn len(self) -> usize {
        match self {
            FileSlice::Plain(files) => files.len(),
            FileSlice::Shared(files) => files.len(),
        }
    }
}

impl<'f> From<&'f [SourceFile]> for FileSlice<'f> {
    fn from(files: &'f [SourceFile]) -> Self {
        FileSlice::Plain(files)
    }
}

impl<'f> From<&'f Vec<SourceFile>> for FileSlice<'f> {
    fn from(files: &'f Vec<SourceFile>) -> Self {
        FileSlice::Plain(files)
    }
}

impl<'f> From<&'f Vec<Arc<SourceFile>>> for FileSlice<'f> {
    fn from(files: &'f Vec<Arc<SourceFile>>) -> Self {
        FileSlice::Shared(files)
    }
}

/// Where a render's files are in the run: the run's own by path (shared), then those beyond.
pub struct SourceIndex {
    paths: Arc<RunPaths>,
    extra: HashMap<PathBuf, usize>,
}

impl SourceIndex {
    /// The run index of a path, if the renderer read it.
    pub fn index_of(&self, path: &Path) -> Option<usize> {
        lookup(&self.paths, &self.extra, &normalize(path))
    }
}

fn lookup(paths: &RunPaths, extra: &HashMap<PathBuf, usize>, normalized: &Path) -> Option<usize> {
    paths
        .by_path
        .get(normalized)
        .or_else(|| extra.get(normalized))
        .copied()
}

/// The run's files as the renderer sees them: parsed once, nodes tagged with their run index
/// the first time a render reads them. Files the walk did not list are read on demand and
/// appended. Borrows the files: building one costs nothing per file, so the fix plan makes one
/// per verification render.
pub struct RunSources<'f> {
    files: FileSlice<'f>,
    paths: Arc<RunPaths>,
    state: Mutex<SourcesState>,
    /// Nothing outside this folder is read.
    boundary: Option<PathBuf>,
}

struct SourcesState {
    /// The files beyond the run's own (`paths`), by path.
    extra: HashMap<PathBuf, usize>,
    /// Files read on demand, at run index `files.len()` onwards.
    read: Vec<(PathBuf, Arc<Stream>)>,
    /// The copies tagged with their run index, by run index.
    tagged: HashMap<usize, Arc<Stream>>,
}

impl<'f> RunSources<'f> {
    pub fn new(files: impl Into<FileSlice<'f>>, boundary: Option<PathBuf>) -> RunSources<'f> {
        let files = files.into();
        let paths = match files {
            FileSlice::Plain(f) => RunPaths::of(f),
            FileSlice::Shared(f) => RunPaths::of(f),
        };
        RunSources::with_paths(files, paths, boundary)
    }

    /// [`RunSources::new`] with the run's files already indexed: `files` are those `paths` was
    /// built from (some with other texts), in the same order, then any beyond them.
    pub fn with_paths(
        files: impl Into<FileSlice<'f>>,
        paths: Arc<RunPaths>,
        boundary: Option<PathBuf>,
    ) -> RunSources<'f> {
        let files = files.into();
        let mut extra = HashMap::new();
        for i in paths.len..files.len() {
            if let Some(Input::File(p)) = files.get(i).map(|f| &f.input) {
                extra.insert(normalize(p), i);
            }
        }
        RunSources {
            files,
            paths,
            state: Mutex::new(SourcesState {
                extra,
                read: Vec::new(),
                tagged: HashMap::new(),
            }),
            boundary,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SourcesState> {
        match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Done rendering: the files read beyond the run's own, in index order (to append to the
    /// run's files), and where each file read is.
    pub fn finish(self) -> (Vec<(PathBuf, Arc<Stream>)>, SourceIndex) {
        let state = match self.state.into_inner() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        let index = SourceIndex {
            paths: self.paths,
            extra: state.extra,
        };
        (state.read, index)
    }

    /// The run index of a path, if the renderer read it.
    pub fn index_of(&self, path: &Path) -> Option<usize> {
        lookup(&self.paths, &self.lock().extra, &normalize(path))
    }

    fn inside_boundary(&self, path: &Path) -> bool {
        self.boundary.as_ref().is_none_or(|b| path.starts_with(b))
    }
}

impl Sources for RunSources<'_> {
    fn load(&self, path: &Path) -> std::io::Result<Arc<Stream>> {
        let path = normalize(path);
        if !self.inside_boundary(&path) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "outside the repository: gpulint never reads it",
            ));
        }
        // With a boundary, `read_file` refuses git's folder (symlinks followed); without one,
        // a `.git` as written still is.
        if crate::source::repo::names_git(
            path.strip_prefix(self.boundary.as_deref().unwrap_or(Path::new("")))
                .unwrap_or(&path),
        ) {
            return Err(crate::source::repo::Refused::InGit.into());
        }
        let mut state = self.lock();
        let index = match lookup(&self.paths, &state.extra, &path) {
            Some(i) => i,
            None => {
                let parsed = Stream::parse_bytes(&crate::source::repo::read_file(
                    &path,
                    self.boundary.as_deref(),
                )?);
                let i = self.files.len() + state.read.len();
                state.read.push((path.clone(), Arc::new(parsed)));
                state.extra.insert(path, i);
                i
            }
        };
        if let Some(tagged) = state.tagged.get(&index) {
            return Ok(tagged.clone());
        }
        let parsed = match index.checked_sub(self.files.len()) {
            None => self.files.get(index).map(|f| &f.stream),
            Some(beyond) => state.read.get(beyond).map(|(_, s)| s),
        };
        let Some(parsed) = parsed else {
            return Err(std::io::Error::other("a file index out of range"));
        };
        let mut stream = (**parsed).clone();
        stream.set_source(SourceId::file(index));
        let stream = Arc::new(stream);
        state.tagged.insert(index, stream.clone());
        Ok(stream)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.inside_boundary(&normalize(path)) && path.is_dir()
    }

    fn is_file(&self, path: &Path) -> bool {
        let path = normalize(path);
        self.inside_boundary(&path)
            && (lookup(&self.paths, &self.lock().extra, &path).is_some() || path.is_file())
    }

    /// Remembered by path: a run has one boundary. The file system is asked outside the lock
    /// (roots render in parallel).
    fn outside(&self, path: &Path, boundary: &Path) -> Option<String> {
        let cache = || match self.paths.outside.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(answer) = cache().get(path) {
            return answer.clone();
        }
        let answer = kustomize::outside_boundary(path, boundary);
        cache().insert(path.to_path_buf(), answer.clone());
        answer
    }
}

/// How the run renders Kustomize roots.
#[derive(Clone, Debug)]
pub struct RenderSettings {
    pub load_restrictor: LoadRestrictor,
    /// The repository root: nothing outside it is read.
    pub boundary: Option<PathBuf>,
    /// The most objects one Kustomize render may hold (`--max-render-objects`).
    pub max_objects: usize,
    /// The run's time for renderer programs (`--render-budget`), shared with Helm.
    pub budget: Arc<crate::source::child::Budget>,
}

impl Default for RenderSettings {
    fn default() -> RenderSettings {
        RenderSettings {
            load_restrictor: LoadRestrictor::default(),
            boundary: None,
            max_objects: kustomize::MAX_RENDERED_OBJECTS,
            budget: Arc::default(),
        }
    }
}

impl RenderSettings {
    pub fn options(&self) -> Options {
        Options {
            load_restrictor: self.load_restrictor,
            reorder: Reorder::Legacy,
            boundary: self.boundary.clone(),
            max_objects: self.max_objects,
            budget: self.budget.clone(),
        }
    }
}

/// Renders one root against `sources`: the built-in renderer, or `kubectl kustomize` for the
/// features it does not implement (when a binary is on PATH).
pub fn render_root(
    dir: &Path,
    sources: &dyn Sources,
    settings: &RenderSettings,
) -> Result<kustomize::Rendered, kustomize::RenderError> {
    let options = settings.options();
    match kustomize::render(dir, sources, &options) {
        Err(e) if e.kind == kustomize::RenderErrorKind::Unsupported => {
            kustomize::render_external(dir, sources, &options).map_err(|external| {
                match external.kind {
                    // The checks before the external tool runs name their own file and line.
                    kustomize::RenderErrorKind::Remote
                    | kustomize::RenderErrorKind::LoadRestrictor => external,
                    _ => kustomize::RenderError {
                        message: format!("{} ({})", e.message, external.message),
                        ..e
                    },
                }
            })
        }
        other => other,
    }
}

/// Renders a unit's root again (the fixer's verification): the root with its applier's
/// components, then what its applier does on top (`post`).
pub fn render_unit(
    dir: &Path,
    post: &PostRender,
    sources: &dyn Sources,
    settings: &RenderSettings,
) -> Result<kustomize::Rendered, kustomize::RenderError> {
    let mut rendered = render_root_for(dir, post, sources, settings)?;
    post.apply(&mut rendered.objects);
    Ok(rendered)
}

/// Renders `dir` as its applier builds it: with the components `post` adds to its
/// kustomization's own (as Flux's kustomize-controller appends `spec.components` to the
/// `components` of the kustomization at `spec.path`), before any other transform.
pub fn render_root_for(
    dir: &Path,
    post: &PostRender,
    sources: &dyn Sources,
    settings: &RenderSettings,
) -> Result<kustomize::Rendered, kustomize::RenderError> {
    if !post.generated.is_empty() && kustomize::kustomization_file(dir).is_none() {
        return kustomize::render_generated(dir, &post.generated, sources);
    }
    render_root(dir, &applier_sources(dir, post, sources), settings)
}

/// `sources` as the applier of `dir` presents them to Kustomize: its kustomization file with
/// the components `post` adds.
pub fn applier_sources<'a>(
    dir: &Path,
    post: &'a PostRender,
    sources: &'a dyn Sources,
) -> WithComponents<'a> {
    let kustomization = kustomize::kustomization_file(dir)
        .filter(|_| !post.components.is_empty())
        .map(|f| normalize(&f));
    WithComponents {
        inner: sources,
        kustomization,
        components: &post.components,
    }
}

/// `inner`, with `components` appended to the `components` of one kustomization file (none:
/// `inner` as it is).
pub struct WithComponents<'a> {
    inner: &'a dyn Sources,
    kustomization: Option<PathBuf>,
    components: &'a [Node],
}

impl Sources for WithComponents<'_> {
    fn load(&self, path: &Path) -> std::io::Result<Arc<Stream>> {
        let stream = self.inner.load(path)?;
        if self.kustomization.as_deref() != Some(normalize(path).as_path()) {
            return Ok(stream);
        }
        let mut stream = (*stream).clone();
        if let Some(root) = stream.documents.first_mut().map(|d| &mut d.root) {
            let span = root.span;
            if let Value::Map(entries) = &mut root.value {
                match entries
                    .iter_mut()
                    .find(|e| e.key.text() == Some("components"))
                {
                    Some(Entry {
                        value:
                            Node {
                                value: Value::Seq(list),
                                ..
                            },
                        ..
                    }) => list.extend(self.components.iter().cloned()),
                    Some(_) => {} // not a list: the renderer reports it
                    None => entries.push(Entry {
                        key: Node {
                            span,
                            ..Node::scalar("components", ScalarKind::Str)
                        },
                        value: Node {
                            value: Value::Seq(self.components.to_vec()),
                            span,
                            flow: false,
                            via_alias: false,
                        },
                    }),
                }
            }
        }
        Ok(Arc::new(stream))
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }

    fn is_file(&self, path: &Path) -> bool {
        self.inner.is_file(path)
    }
}

/// Renders again, with their components, the units whose applier adds Kustomize components
/// (they were rendered from their own kustomization before the declarations were read), then
/// applies the rest of what the applier does. A root that does not render so keeps its plain
/// render, with a note.
pub fn render_components(
    units: &mut [RenderUnit],
    files: &mut Vec<SourceFile>,
    settings: &RenderSettings,
    notes: &mut Vec<String>,
) {
    for unit in units.iter_mut().filter(|u| !u.post.components.is_empty()) {
        let sources = RunSources::new(&*files, settings.boundary.clone());
        let rendered = render_root_for(&unit.dir, &unit.post, &sources, settings);
        let (added, index) = sources.finish();
        match rendered {
            Ok(mut r) => {
                unit.substituted = Arc::new(unit.post.apply(&mut r.objects));
                unit.objects = r.objects;
                for (path, stream) in added {
                    files.push(SourceFile {
                        name: display_path(&path),
                        input: Input::File(path),
                        stream,
                        role: FileRole::Support,
                    });
                }
                unit.files = r.files.iter().filter_map(|p| index.index_of(p)).collect();
                // Linted through this render, not on their own.
                for &i in &unit.files {
                    if let Some(file) = files.get_mut(i).filter(|f| f.role == FileRole::Plain) {
                        file.role = FileRole::Rendered;
                    }
                }
            }
            Err(e) => notes.push(format!(
                "{}: the components its applier adds do not render ({}); linted without them",
                unit.name, e.message
            )),
        }
    }
}

/// Renders every root, appends the files the renders read to `files`, marks the files that are
/// linted through a render, and returns the units to lint: roots that another rendered root
/// uses as a base are linted through it, not on their own. Roots in `conditional` (found for
/// files named on the command line, as pre-commit passes them) are kept only when they read one
/// of `explicit`.
pub fn build(
    roots: &[PathBuf],
    conditional: &BTreeSet<PathBuf>,
    explicit: &[PathBuf],
    files: &mut Vec<SourceFile>,
    settings: &RenderSettings,
    errors: &mut Vec<InputError>,
) -> Vec<RenderUnit> {
    let sources = RunSources::new(&*files, settings.boundary.clone());
    let mut rendered = Vec::new();
    let mut failed = Vec::new();
    let mut failed_roots = Vec::new();
    // A root that another root lists as a base is linted through it (see below): it is rendered
    // after the roots nobody lists, and not at all when a render that succeeded already built
    // it (its own render holds the same objects and would be dropped). A chain of roots is then
    // rendered once, not once from each of its roots. Results keep the roots' order.
    let listed: BTreeSet<PathBuf> = roots
        .iter()
        .flat_map(|r| kustomize::listed_bases(r, &sources))
        .collect();
    let is_listed = |i: &usize| listed.contains(&normalize(&roots[*i]));
    let order: Vec<usize> = (0..roots.len())
        .filter(|i| !is_listed(i))
        .chain((0..roots.len()).filter(is_listed))
        .collect();
    let mut results: Vec<Option<Result<kustomize::Rendered, kustomize::RenderError>>> =
        roots.iter().map(|_| None).collect();
    let mut built: BTreeSet<PathBuf> = BTreeSet::new();
    let mut components: Vec<PathBuf> = Vec::new();
    for i in order {
        let root = &roots[i];
        if is_listed(&i) && built.contains(&normalize(root)) {
            continue;
        }
        // A Component is only ever included by other kustomizations (its patches are partial
        // objects, linted through the renders that include it).
        if kustomize::is_component(root, &sources) {
            components.push(root.clone());
            continue;
        }
        let result = render_root(root, &sources, settings);
        if let Ok(r) = &result {
            built.extend(
                r.kustomizations
                    .iter()
                    .filter_map(|k| k.parent().map(normalize)),
            );
        }
        results[i] = Some(result);
    }
    for (root, result) in roots.iter().zip(results) {
        match result {
            None => {}
            Some(Ok(r)) => rendered.push((r, conditional.contains(root))),
            // A root looked at only because it might read a named file is not the user's
            // concern when it does not render.
            Some(Err(_)) if conditional.contains(root) => {}
            Some(Err(e)) => {
                failed.push(e);
                failed_roots.push(root.clone());
            }
        }
    }
    let (added, index) = sources.finish();
    for (path, stream) in added {
        files.push(SourceFile {
            name: display_path(&path),
            input: Input::File(path),
            stream,
            role: FileRole::Support,
        });
    }
    errors.extend(failed.iter().map(|e| render_error(e, &index, files)));
    let index_of = |p: &Path| index.index_of(p);
    let wanted: BTreeSet<usize> = explicit.iter().filter_map(|p| index_of(p)).collect();
    let mut units: Vec<RenderUnit> = rendered
        .into_iter()
        .filter(|(r, conditional)| {
            !conditional
                || r.files
                    .iter()
                    .chain(&r.kustomizations)
                    .any(|p| index_of(p).is_some_and(|i| wanted.contains(&i)))
        })
        .filter_map(|(r, _)| {
            let home = index_of(&r.kustomization)?;
            let bases = r
                .kustomizations
                .iter()
                .filter(|k| **k != r.kustomization)
                .filter_map(|k| k.parent().map(Path::to_path_buf))
                .collect();
            Some(RenderUnit {
                name: display_path(&r.dir),
                files: r.files.iter().filter_map(|p| index_of(p)).collect(),
                dir: r.dir,
                home,
                objects: r.objects,
                bases,
                cluster: None,
                post: Arc::default(),
                substituted: Arc::default(),
            })
        })
        .collect();
    let used_as_base: BTreeSet<PathBuf> =
        units.iter().flat_map(|u| u.bases.iter().cloned()).collect();
    units.retain(|u| !used_as_base.contains(&u.dir));
    let mut through_renders: BTreeSet<usize> = units.iter().flat_map(|u| u.files.clone()).collect();
    // The patches of a root that failed to render are partial objects: linted raw they would
    // only add false positives next to the render error.
    for root in failed_roots.iter().chain(&components) {
        through_renders.extend(patch_files(root).iter().filter_map(|p| index_of(p)));
    }
    for f in through_renders {
        if let Some(file) = files.get_mut(f) {
            if file.role == FileRole::Plain {
                file.role = FileRole::Rendered;
            }
        }
    }
    units
}

/// The patch files a kustomization names (`patches[].path`, `patchesStrategicMerge`,
/// `patchesJson6902[].path`), read from its file without rendering.
fn patch_files(root: &Path) -> Vec<PathBuf> {
    let Some(file) = kustomize::kustomization_file(root) else {
        return Vec::new();
    };
    let Ok(text) = crate::source::repo::read_repo_text(&file) else {
        return Vec::new();
    };
    let stream = Stream::parse(&text);
    let Some(doc) = stream.documents.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for key in ["patches", "patchesJson6902"] {
        for entry in doc.root.get(key).and_then(Node::as_seq).unwrap_or_default() {
            out.extend(entry.get_str("path").map(|p| normalize(&root.join(p))));
        }
    }
    let strategic = doc.root.get("patchesStrategicMerge").and_then(Node::as_seq);
    for entry in strategic.unwrap_or_default() {
        // An inline patch is YAML text, not a path.
        out.extend(
            entry
                .text()
                .filter(|t| !t.contains('\n'))
                .map(|p| normalize(&root.join(p))),
        );
    }
    out
}

/// A render error placed in its file.
fn render_error(
    e: &kustomize::RenderError,
    index: &SourceIndex,
    files: &[SourceFile],
) -> InputError {
    let index = index.index_of(&e.file).filter(|&i| i < files.len());
    let at = index.zip(e.span.map(|s| s.start()));
    let (line, column) = match at {
        Some((i, offset)) => files[i].stream.line_col(offset),
        None => (0, 0),
    };
    InputError {
        source: at,
        file: display_path(&e.file),
        line,
        column,
        message: format!("kustomize: {}", e.message),
    }
}

/// One rendered Helm release: linted as rendered, reported where its values or templates are.
pub struct HelmUnit {
    /// For people: `release vllm of charts/vllm-stack`.
    pub name: String,
    pub release: helm::Release,
    pub rendered: helm::RenderedRelease,
    /// Run file index of the chart's `Chart.yaml`: where a finding goes that has no better place.
    pub chart_file: usize,
    /// Values origins already found, by `document:path`.
    pub origins: Mutex<HashMap<String, Option<helm::ValuesOrigin>>>,
    /// The renders every origin question shares (two per release), made at the first question;
    /// `None` inside when they failed (every question then has no answer).
    pub shared: std::sync::OnceLock<Option<helm::SharedProbe>>,
    /// The cluster that applies the release (its Argo CD destination, or the cluster whose
    /// declarations reach the manifest declaring it); `None`: the implicit one.
    pub cluster: Option<String>,
}

impl HelmUnit {
    /// The values leaf that makes the field at `path` of document `document`, cached.
    pub fn origin(
        &self,
        engine: &helm::HelmEngine,
        document: usize,
        path: &[crate::source::document::Segment],
        purpose: helm::Purpose,
    ) -> Option<helm::ValuesOrigin> {
        let key = format!("{document}:{path:?}:{purpose:?}");
        if let Ok(cache) = self.origins.lock() {
            if let Some(hit) = cache.get(&key) {
                return hit.clone();
            }
        }
        let shared = self
            .shared
            .get_or_init(|| helm::shared_probe(engine, &self.release, &self.rendered).ok())
            .as_ref()?;
        let found = helm::values_origin(
            engine,
            &self.release,
            &self.rendered,
            Some(shared),
            document,
            path,
            purpose,
        )
        .ok()
        .flatten();
        if let Ok(mut cache) = self.origins.lock() {
            cache.insert(key, found.clone());
        }
        found
    }
}

impl HelmUnit {
    /// Where a finding on the rendered field at `field` of document `document` is shown: on
    /// the values leaf (a values file, inline values, an Argo CD parameter's `value:`) behind
    /// the first of `fix_fields` that has one, else behind `field` itself; else on the
    /// template line that writes the field (its deepest key the template writes literally, or
    /// the template's first line); else, for a template gpulint cannot read (a packed
    /// subchart), on the chart's `Chart.yaml`.
    pub fn location(
        &self,
        engine: Option<&helm::HelmEngine>,
        document: usize,
        fix_fields: &[&[crate::source::document::Segment]],
        field: &[crate::source::document::Segment],
        files: &[SourceFile],
    ) -> (usize, crate::source::yaml::Span) {
        use crate::source::yaml::Span;
        if let Some(engine) = engine {
            // The fix's fields are asked as the fix asks them (it verifies what it edits).
            let questions = fix_fields
                .iter()
                .map(|p| (*p, helm::Purpose::Fix))
                .chain([(field, helm::Purpose::Show)]);
            for (path, purpose) in questions {
                if path.is_empty() {
                    continue;
                }
                let Some(origin) = self.origin(engine, document, path, purpose) else {
                    continue;
                };
                // A leaf of a rendered HelmRelease names the file that wrote it (the base, or
                // an overlay's patch); other leaves are in `origin.file`.
                let written_in = origin.node.span.source.index().filter(|&i| i < files.len());
                if let Some(i) = written_in.or_else(|| find_file(files, &origin.file)) {
                    return (
                        i,
                        Span::new(origin.node.span.start(), origin.node.span.end()),
                    );
                }
            }
        }
        let template = self.rendered.templates.get(document).cloned().flatten();
        if let Some((file, offset, len)) =
            template.and_then(|t| helm::template_field_location(&self.release.chart, &t, field))
        {
            if let Some(i) = find_file(files, &file) {
                return (i, Span::new(offset, offset + len));
            }
        }
        (self.chart_file, Span::new(0, 0))
    }
}

/// `gpulint render CHART`: every release of the chart at `chart` (the config's `charts:`
/// entries for it, else its defaults), rendered and joined.
pub fn render_chart(
    chart: &Path,
    config_charts: &[helm::ChartEntry],
    repo_root: &Path,
    engine: &helm::HelmEngine,
) -> Result<String, helm::HelmError> {
    let chart = normalize(chart);
    let declared = helm::declared_releases(
        std::slice::from_ref(&chart),
        &[],
        &[],
        config_charts,
        repo_root,
    );
    // No manifest declares it here: an error is about the chart itself (a symlink leaving the
    // repository), and nothing of it is rendered.
    if let Some(e) = declared.errors.into_iter().next() {
        return Err(helm::HelmError::Refused {
            file: e.file,
            message: e.message,
        });
    }
    let mut out = String::new();
    for release in declared
        .releases
        .iter()
        .filter(|r| normalize(&r.chart) == chart)
    {
        out.push_str(&engine.template(release, None)?.text);
    }
    Ok(out)
}

/// How deep Applications rendered by charts that Applications render are followed (an
/// app-of-apps of app-of-apps): a chain that loops renders this many times, no more.
pub const APP_OF_APPS_DEPTH: usize = 4;

/// The Argo CD Applications (and ApplicationSets) that Helm charts render: the app-of-apps
/// pattern, where a root Application points at a chart whose templates are Applications
/// (Argo CD's "cluster bootstrapping"). They declare folders and releases as if written in a
/// file, so the folders and charts they name are linted as their destination cluster applies
/// them, not as undeclared. Only charts whose templates mention `argoproj.io` are rendered
/// here; each rendered chain is followed [`APP_OF_APPS_DEPTH`] deep.
///
/// Their renders are kept, so linting the app-of-apps chart's release renders it no second
/// time.
pub fn rendered_applications(
    charts: &[PathBuf],
    files: &[SourceFile],
    config_charts: &[helm::ChartEntry],
    repo_root: &Path,
    engine: &helm::HelmEngine,
) -> RenderedApplications {
    let plain = plain_manifests(files);
    let mut out = RenderedApplications::default();
    let mut templates_mention: HashMap<PathBuf, bool> = HashMap::new();
    for _ in 0..APP_OF_APPS_DEPTH {
        let refs: Vec<(PathBuf, &Stream)> = plain
            .iter()
            .chain(&out.declarations)
            .map(|(p, s)| (p.clone(), &**s))
            .collect();
        let declared = helm::declared_releases(charts, &refs, &[], config_charts, repo_root);
        let mut found = Vec::new();
        for release in declared.releases {
            let chart = normalize(&release.chart);
            let mentions = *templates_mention
                .entry(chart.clone())
                .or_insert_with(|| templates_mention_argo(&chart, repo_root));
            let key = RenderedApplications::key(&release);
            if !mentions || out.renders.contains_key(&key) {
                continue;
            }
            // A failing render is reported where the release is rendered for linting.
            let Ok(rendered) = engine.template(&release, None) else {
                continue;
            };
            let mut stream = rendered.stream.clone();
            stream.documents.retain(|d| is_argo_application(&d.root));
            if !stream.documents.is_empty() {
                let pseudo = release
                    .chart
                    .join(format!("{}.rendered.yaml", release.name));
                found.push((pseudo, Arc::new(stream)));
            }
            out.renders.insert(key, rendered);
        }
        if found.is_empty() {
            break;
        }
        out.declarations.extend(found);
    }
    out
}

/// What [`rendered_applications`] found.
#[derive(Default)]
pub struct RenderedApplications {
    /// A pseudo path per render (`<chart>/<release>.rendered.yaml`: no file of the
    /// repository, so nothing is ever written there and an error names the chart) and the
    /// Argo CD documents of that render.
    pub declarations: Vec<(PathBuf, Arc<Stream>)>,
    /// Every render made, by [`RenderedApplications::key`].
    renders: HashMap<String, helm::RenderedRelease>,
}

impl RenderedApplications {
    /// A release as declared: the same declaration read twice gives the same key.
    fn key(release: &helm::Release) -> String {
        format!("{release:?}")
    }

    /// The render of `release` made while looking for Applications, taken (each is linted once).
    fn take(&mut self, release: &helm::Release) -> Option<helm::RenderedRelease> {
        self.renders.remove(&Self::key(release))
    }
}

/// The run's plain manifests and their paths: where Helm releases are declared.
fn plain_manifests(files: &[SourceFile]) -> Vec<(PathBuf, Arc<Stream>)> {
    files
        .iter()
        .filter(|f| f.role == FileRole::Plain)
        .filter_map(|f| match &f.input {
            Input::File(p) => Some((p.clone(), f.stream.clone())),
            _ => None,
        })
        .collect()
}

/// An Argo CD Application or ApplicationSet.
fn is_argo_application(object: &Node) -> bool {
    object
        .get_str("apiVersion")
        .is_some_and(|a| a.starts_with("argoproj.io/"))
        && matches!(
            object.get_str("kind"),
            Some("Application" | "ApplicationSet")
        )
}

/// Whether a template of the chart at `chart` names Argo CD's API group (read inside the
/// repository only; a chart is small, and its templates are read by Helm anyway).
fn templates_mention_argo(chart: &Path, repo_root: &Path) -> bool {
    let mut todo = vec![chart.join("templates")];
    let mut seen = 0usize;
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > 10_000 {
                return false;
            }
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => todo.push(path),
                Ok(t) if t.is_file() => {
                    let text = crate::source::repo::read_file(&path, Some(repo_root));
                    if text.is_ok_and(|b| b.windows(12).any(|w| w == b"argoproj.io/")) {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    false
}

/// Renders every release of `charts` (declared by Argo CD Applications, Flux HelmReleases or the
/// config; an undeclared chart with its defaults) with `engine`. Files findings may point at
/// (Chart.yaml, templates, values files) are added to `files`.
#[allow(clippy::too_many_arguments)]
pub fn build_helm(
    charts: &[PathBuf],
    rendered_units: &[RenderUnit],
    rendered_applications: &mut RenderedApplications,
    files: &mut Vec<SourceFile>,
    config_charts: &[helm::ChartEntry],
    repo_root: &Path,
    engine: Option<&helm::HelmEngine>,
    errors: &mut Vec<InputError>,
    notes: &mut Vec<String>,
) -> Vec<HelmUnit> {
    let manifests = plain_manifests(files);
    let manifest_refs: Vec<(PathBuf, &Stream)> = manifests
        .iter()
        .chain(&rendered_applications.declarations)
        .map(|(p, s)| (p.clone(), &**s))
        .collect();
    // HelmReleases that Kustomize renders hold (the base's, patched by an overlay), in the
    // render's cluster.
    let is_helm_release = |o: &&Node| {
        o.get_str("kind") == Some("HelmRelease")
            && o.get_str("apiVersion")
                .is_some_and(|a| a.starts_with("helm.toolkit.fluxcd.io/"))
    };
    let rendered: Vec<helm::RenderedDeclaration> = rendered_units
        .iter()
        .enumerate()
        .flat_map(|(u, unit)| {
            unit.objects
                .iter()
                .enumerate()
                .filter(|(_, o)| is_helm_release(o))
                .map(move |(i, o)| (u, unit, i, o))
        })
        .filter_map(|(u, unit, i, object)| {
            let index = object.get("kind")?.span.source.index()?;
            let file = files.get(index)?;
            let Input::File(path) = &file.input else {
                return None;
            };
            Some(helm::RenderedDeclaration {
                file: path.clone(),
                stream: &file.stream,
                object,
                cluster: unit.cluster.clone(),
                rendered_from: (u, i),
                // The render's ConfigMaps, each placed in the file that writes it.
                config_maps: unit
                    .objects
                    .iter()
                    .filter(|o| o.get_str("kind") == Some("ConfigMap"))
                    .filter_map(|o| {
                        let index = o.get("kind")?.span.source.index()?;
                        match &files.get(index)?.input {
                            Input::File(path) => Some((path.clone(), o)),
                            _ => None,
                        }
                    })
                    .collect(),
            })
        })
        .collect();
    let declared =
        helm::declared_releases(charts, &manifest_refs, &rendered, config_charts, repo_root);
    notes.extend(declared.notes);
    for e in declared.errors {
        // An Application a chart rendered has no line in any file: the error is the chart's,
        // naming the release whose render declared it.
        if rendered_applications
            .declarations
            .iter()
            .any(|(p, _)| *p == e.file)
        {
            let chart = e.file.parent().unwrap_or(&e.file);
            let release = e.file.file_name().map(|n| n.to_string_lossy().into_owned());
            let release = release
                .as_deref()
                .and_then(|n| n.strip_suffix(".rendered.yaml"));
            errors.push(InputError {
                source: None,
                file: display_path(&chart.join("Chart.yaml")),
                line: 0,
                column: 0,
                message: format!(
                    "helm: an Application that release {} of this chart renders: {}",
                    release.unwrap_or("?"),
                    e.message
                ),
            });
            continue;
        }
        let source = find_file(files, &e.file).map(|i| (i, e.offset));
        errors.push(InputError {
            source,
            file: source.map_or_else(|| display_path(&e.file), |(i, _)| files[i].name.clone()),
            line: e.line,
            column: e.column,
            message: format!("helm: {}", e.message),
        });
    }
    let releases = declared.releases;
    // Without an engine the declarations are still read: a chart that is not in the
    // repository is named above, and what would be rendered is counted here.
    let Some(engine) = engine else {
        let charts = charts.len().max(
            releases
                .iter()
                .map(|r| &r.chart)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
        );
        if charts > 0 {
            notes.push(format!(
                "{charts} Helm chart(s) not linted: no helm binary (install helm, or pass --helm PATH or set GPULINT_HELM)"
            ));
        }
        return Vec::new();
    };
    let mut units = Vec::new();
    for release in releases {
        let name = format!(
            "release {} of {}",
            release.name,
            display_path(&normalize(&release.chart))
        );
        let made = rendered_applications.take(&release).map(Ok);
        let rendered = match made.unwrap_or_else(|| engine.template(&release, None)) {
            Ok(r) => r,
            Err(e) => {
                errors.push(InputError {
                    source: None,
                    file: display_path(&release.chart.join("Chart.yaml")),
                    line: 0,
                    column: 0,
                    message: format!("helm: {e}"),
                });
                continue;
            }
        };
        let Some(chart_file) = file_index(files, &release.chart.join("Chart.yaml"), repo_root)
        else {
            continue;
        };
        // Templates and values files: findings are placed in them.
        for template in rendered.templates.iter().flatten() {
            if let Some((_, rest)) = template.split_once('/') {
                file_index(files, &release.chart.join(rest), repo_root);
            }
        }
        file_index(files, &release.chart.join("values.yaml"), repo_root);
        for source in &release.values {
            file_index(files, source.file(), repo_root);
        }
        units.push(HelmUnit {
            name,
            cluster: release.cluster.clone(),
            release,
            rendered,
            chart_file,
            origins: Mutex::default(),
            shared: std::sync::OnceLock::new(),
        });
    }
    units
}
