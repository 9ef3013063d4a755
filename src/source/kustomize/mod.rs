//! A built-in Kustomize renderer that keeps field origins.
//!
//! `kustomize build` loses where a value came from; a linter needs it, because a finding on a
//! rendered Deployment must land on the line of the base file, patch or kustomization that wrote
//! the offending value, and a fix must edit that file. So this renderer works on our span-aware
//! YAML tree: nodes copied from a file keep their span (tagged with the file's [`SourceId`]),
//! patches bring their own nodes, and values the renderer makes up (namespace, labels, image
//! rewrites, replicas, prefixed names) point at the kustomization field that asked for them.
//!
//! Layout: [`kustomization`] parses the kustomization file, [`load`] reads files (load
//! restrictor, cycles) and accumulates resources level by level, [`smp`] and [`json6902`] are the
//! two patch kinds, [`select`] finds patch targets, [`transform`] holds the field transformers
//! (namespace, names, labels, annotations, images, replicas, name references), [`order`] is the
//! CLI's legacy sort, [`replace`] is `replacements`, [`emit`] writes YAML, [`external`] is the `kustomize`/`kubectl` fallback.
//!
//! Unsupported features (generators, helmCharts, replacements, plugins, remote resources, ...)
//! make [`render`] fail with [`RenderErrorKind::Unsupported`] naming the feature and pointing at
//! its entry; [`unsupported_features`] lists them all up front without rendering.

mod budget;
mod emit;
mod external;
mod json6902;
mod kustomization;
mod load;
mod order;
mod readers;
mod replace;
mod select;
mod smp;
mod transform;
mod vet;

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::source::yaml::{Node, SourceId, Span, Stream};

pub use budget::MAX_RENDERED_OBJECTS;
pub use emit::to_yaml;
pub use external::render_external;
pub use kustomization::{unsupported_features, Unsupported};
pub use readers::ReadersIndex;

pub const KUSTOMIZATION_FILE_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether the kustomization in `dir` is a `kind: Component`: a piece other kustomizations
/// include, never built (or applied) on its own.
pub fn is_component(dir: &Path, sources: &dyn Sources) -> bool {
    let Some(file) = load::find_kustomization(dir, sources) else {
        return false;
    };
    sources
        .load(&file)
        .ok()
        .and_then(|stream| kustomization::parse(&stream, &file).ok())
        .is_some_and(|k| k.is_component)
}

/// The kustomization file of `dir` on disk, if it has one.
pub fn kustomization_file(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// The folders the kustomization in `dir` lists under `resources` or `bases` (its bases, not
/// its components), normalized; nothing when it has no kustomization or does not parse.
pub fn listed_bases(dir: &Path, sources: &dyn Sources) -> Vec<PathBuf> {
    let dir = normalize(dir);
    let Some(file) = load::find_kustomization(&dir, sources) else {
        return Vec::new();
    };
    let Ok(stream) = sources.load(&file) else {
        return Vec::new();
    };
    let Some(root) = stream.documents.first().map(|d| &d.root) else {
        return Vec::new();
    };
    ["resources", "bases"]
        .iter()
        .filter_map(|key| root.get(key).and_then(Node::as_seq))
        .flatten()
        .filter_map(Node::text)
        .filter(|t| !kustomization::is_remote(t))
        .map(|t| normalize(&dir.join(t)))
        .filter(|p| sources.is_dir(p))
        .collect()
}

/// Which files a kustomization may read (kustomize's `--load-restrictor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LoadRestrictor {
    /// Files must be in or below the kustomization's directory (bases may be anywhere).
    #[default]
    RootOnly,
    /// Any file (still never outside [`Options::boundary`]).
    None,
}

/// Output order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reorder {
    /// The CLI's default: kustomize's legacy sort (Namespace, ResourceQuota, StorageClass, CRDs,
    /// ServiceAccount, ... first, webhook configurations last, the rest by kind then name).
    #[default]
    Legacy,
    /// Input order (depth-first, as resources were listed).
    None,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub load_restrictor: LoadRestrictor,
    pub reorder: Reorder,
    /// Nothing outside this directory is ever read (the repository root).
    pub boundary: Option<PathBuf>,
    /// The most objects one render may hold ([`MAX_RENDERED_OBJECTS`] unless the command line
    /// raises it with `--max-render-objects`).
    pub max_objects: usize,
    /// The run's time for renderer programs, shared with Helm (`--render-budget`): the external
    /// tool gets what is left of it, at most its own timeout.
    pub budget: Arc<crate::source::child::Budget>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            load_restrictor: LoadRestrictor::default(),
            reorder: Reorder::default(),
            boundary: None,
            max_objects: MAX_RENDERED_OBJECTS,
            budget: Arc::default(),
        }
    }
}

/// Where the renderer reads files. Paths given are absolute and lexically normalized.
pub trait Sources: Sync {
    /// The file parsed, nodes tagged with its SourceId. A parse error is in `stream.error`.
    fn load(&self, path: &Path) -> std::io::Result<Arc<Stream>>;
    fn is_dir(&self, path: &Path) -> bool;
    fn is_file(&self, path: &Path) -> bool;
    /// Why `path`, symlinks followed, is outside `boundary`, if it is. Asked for every file a
    /// render reads: sources shared by many renders remember the answers.
    fn outside(&self, path: &Path, boundary: &Path) -> Option<String> {
        outside_boundary(path, boundary)
    }
}

/// Why `path`, symlinks followed, is outside `boundary`, if it is (a path that cannot be
/// resolved is not: reading it fails on its own).
pub fn outside_boundary(path: &Path, boundary: &Path) -> Option<String> {
    match crate::source::repo::resolve_inside(path, Some(boundary)) {
        Err(refused @ crate::source::repo::Refused::Outside { .. }) => Some(refused.to_string()),
        _ => None,
    }
}

/// Reads the real filesystem and caches what it read; the i-th file loaded gets
/// `SourceId::file(i)`. `overrides` replace a file's text (to re-render edited texts before
/// writing them).
#[derive(Default)]
pub struct FsSources {
    overrides: HashMap<PathBuf, String>,
    state: Mutex<FsState>,
}

#[derive(Default)]
struct FsState {
    files: Vec<(PathBuf, Arc<Stream>)>,
    index: HashMap<PathBuf, usize>,
}

impl FsSources {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_overrides(overrides: HashMap<PathBuf, String>) -> Self {
        let overrides = overrides
            .into_iter()
            .map(|(p, t)| (normalize(&p), t))
            .collect();
        FsSources {
            overrides,
            state: Mutex::default(),
        }
    }

    /// Every file loaded so far; the index is the file's `SourceId` index.
    pub fn files(&self) -> Vec<(PathBuf, Arc<Stream>)> {
        match self.state.lock() {
            Ok(s) => s.files.clone(),
            Err(poisoned) => poisoned.into_inner().files.clone(),
        }
    }
}

impl Sources for FsSources {
    fn load(&self, path: &Path) -> std::io::Result<Arc<Stream>> {
        let path = normalize(path);
        let mut state = match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&i) = state.index.get(&path) {
            return Ok(state.files[i].1.clone());
        }
        let mut stream = match self.overrides.get(&path) {
            Some(text) => Stream::parse(text),
            None => Stream::parse_bytes(&crate::source::repo::read_file(&path, None)?),
        };
        let i = state.files.len();
        stream.set_source(SourceId::file(i));
        let stream = Arc::new(stream);
        state.files.push((path.clone(), stream.clone()));
        state.index.insert(path, i);
        Ok(stream)
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn is_file(&self, path: &Path) -> bool {
        self.overrides.contains_key(&normalize(path)) || path.is_file()
    }
}

/// The result of a render.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// The kustomization root rendered (absolute, normalized).
    pub dir: PathBuf,
    /// Its kustomization file.
    pub kustomization: PathBuf,
    /// Rendered resources, in the requested order.
    pub objects: Vec<Node>,
    /// Every file read (kustomization files, resources, patches, components), once, read order.
    pub files: Vec<PathBuf>,
    /// The kustomization files of the root and every base/component reached.
    pub kustomizations: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct RenderError {
    /// The kustomization (or other) file the error is about.
    pub file: PathBuf,
    /// Where in `file`, when known.
    pub span: Option<Span>,
    pub message: String,
    pub kind: RenderErrorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenderErrorKind {
    Parse,
    MissingKustomization,
    MissingResource,
    LoadRestrictor,
    Cycle,
    PatchTargetNotFound,
    PatchTargetAmbiguous,
    /// A kustomize feature the built-in renderer does not implement (named in the message).
    Unsupported,
    Invalid,
    Io,
    /// The external `kustomize`/`kubectl` failed or is missing.
    External,
    /// A remote resource (URL, git repository): never fetched, the root is not rendered.
    Remote,
    /// The render grew past [`MAX_RENDERED_OBJECTS`].
    TooLarge,
    /// Two resources with one id (kustomize: "may not add resource with an already registered
    /// id").
    DuplicateId,
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for RenderError {}

impl RenderError {
    pub(crate) fn new(
        kind: RenderErrorKind,
        file: &Path,
        span: Option<Span>,
        message: impl Into<String>,
    ) -> Self {
        RenderError {
            file: file.to_path_buf(),
            span,
            message: message.into(),
            kind,
        }
    }
}

/// Renders the kustomization in `dir`, like `kustomize build dir`.
pub fn render(
    dir: &Path,
    sources: &dyn Sources,
    options: &Options,
) -> Result<Rendered, RenderError> {
    load::render(dir, sources, options)
}

/// A folder without a kustomization of its own, as Flux builds it: kustomize-controller
/// generates a kustomization listing every Kubernetes manifest in the folder's tree
/// (`manifests`, absolute, see [`is_manifest`]) and renders it; the Kustomization's own
/// transforms come after, as for any root.
pub fn render_generated(
    dir: &Path,
    manifests: &[PathBuf],
    sources: &dyn Sources,
) -> Result<Rendered, RenderError> {
    let kustomization = dir.join(KUSTOMIZATION_FILE_NAMES[0]);
    let mut accumulated = Vec::new();
    let mut registered = load::Registered::default();
    for path in manifests {
        let stream = sources.load(path).map_err(|e| {
            RenderError::new(
                RenderErrorKind::Io,
                path,
                None,
                format!("cannot read it: {e}"),
            )
        })?;
        let batch = load::resources_of(&stream, path)?;
        // The generated kustomization lists the file relative to the folder. With no
        // kustomization to point into, the error points at the refused object.
        let listed = path.strip_prefix(dir).unwrap_or(path).display().to_string();
        let refuse = |brought, refused: &load::Duplicate| {
            load::already_registered(refused, brought, &listed, path, Some(refused.span))
        };
        if let Some(refused) = load::duplicate_within(&batch) {
            return Err(refuse(load::Brought::WithinFile, &refused));
        }
        registered
            .append(&mut accumulated, batch)
            .map_err(|refused| refuse(load::Brought::File, &refused))?;
    }
    Ok(Rendered {
        dir: dir.to_path_buf(),
        kustomization,
        objects: accumulated.into_iter().map(|r| r.node).collect(),
        files: manifests.to_vec(),
        kustomizations: Vec::new(),
    })
}

/// Whether Flux's generated kustomization lists this file: it holds Kubernetes objects only.
pub fn is_manifest(stream: &Stream, path: &Path) -> bool {
    !stream.documents.is_empty() && load::resources_of(stream, path).is_ok()
}

/// The namespace and name transforms of a kustomization, applied on top of objects already
/// rendered: what an applier adds to a root's own kustomization (Flux's `targetNamespace`,
/// `namePrefix` and `nameSuffix`), with name references (a pod's ConfigMap, a claim template)
/// following the new names as kustomize does. The value nodes carry the span of the field that
/// asked for them, so a made-up namespace points at it.
pub fn transform_rendered(
    objects: &mut Vec<Node>,
    namespace: Option<&Node>,
    prefix: Option<&Node>,
    suffix: Option<&Node>,
) {
    let as_str = |n: &Node| {
        n.text().map(|t| kustomization::Str {
            text: t.to_string(),
            node: n.clone(),
        })
    };
    let (namespace, prefix, suffix) = (
        namespace.and_then(as_str),
        prefix.and_then(as_str),
        suffix.and_then(as_str),
    );
    if namespace.is_none() && prefix.is_none() && suffix.is_none() {
        return;
    }
    let mut acc: Vec<load::Res> = std::mem::take(objects)
        .into_iter()
        .map(load::Res::new)
        .collect();
    if prefix.is_some() || suffix.is_some() {
        transform::prefix_suffix(&mut acc, prefix.as_ref(), suffix.as_ref());
    }
    if let Some(ns) = &namespace {
        transform::namespace(&mut acc, ns);
    }
    transform::fix_name_references(&mut acc);
    *objects = acc.into_iter().map(|r| r.node).collect();
}

/// The patches and image rewrites an applier adds on top of a root's render (Flux's
/// `spec.patches` and `spec.images`), applied to the objects already rendered as kustomize
/// applies a kustomization's own. `overlay` is a mapping with those two keys, its nodes in
/// `stream` (the declaring file: inline patches are placed in it, so a finding on a patched
/// value lands on the patch's line there).
pub fn overlay_rendered(
    objects: &mut Vec<Node>,
    overlay: &Node,
    file: &Path,
    stream: &Stream,
) -> Result<(), RenderError> {
    let mut doc = stream.clone();
    doc.documents = vec![crate::source::yaml::Document {
        root: overlay.clone(),
    }];
    doc.error = None;
    let k = kustomization::parse(&doc, file)?;
    let mut acc: Vec<load::Res> = std::mem::take(objects)
        .into_iter()
        .map(load::Res::new)
        .collect();
    let result = (|| {
        for p in &k.patches {
            // Flux's patches are inline; a `path:` names nothing it would read.
            let Some(inline) = &p.inline else { continue };
            let parsed = kustomization::parse_inline(inline, &doc.text);
            let docs: Vec<Node> = parsed.documents.into_iter().map(|d| d.root).collect();
            select::apply_patch(&mut acc, p, &docs, file)?;
        }
        for i in &k.images {
            transform::image(&mut acc, i);
        }
        Ok(())
    })();
    *objects = acc.into_iter().map(|r| r.node).collect();
    result
}

/// Puts `namespace` on the namespaced objects that name none, as an applier does with the
/// objects it is given (Argo CD's `destination.namespace`); the node is made up (no file).
pub fn default_namespace(objects: &mut [Node], namespace: &str) {
    use crate::source::yaml::{Entry, ScalarKind, Value};
    for object in objects.iter_mut() {
        if transform::cluster_scoped(object) {
            continue;
        }
        let Some(Entry {
            value: metadata, ..
        }) = (match &mut object.value {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|e| e.key.text() == Some("metadata")),
            _ => None,
        })
        else {
            continue;
        };
        if let Value::Map(fields) = &mut metadata.value {
            if !fields.iter().any(|e| e.key.text() == Some("namespace")) {
                fields.push(Entry {
                    key: Node::scalar("namespace", ScalarKind::Str),
                    value: Node::scalar(namespace, ScalarKind::Str),
                });
            }
        }
    }
}

/// Absolute (via `std::path::absolute`) with `.` and `..` removed lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                // `..` at the root stays at the root, like the OS does.
                if !matches!(
                    out.components().next_back(),
                    Some(Component::RootDir) | None
                ) {
                    out.pop();
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests;
