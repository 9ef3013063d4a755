//! File access (load restrictor, boundary, cycles) and the accumulation of resources, one
//! kustomization level at a time, in kustomize's order: resources (and bases), components, then
//! the builtin transformers in kustomize's fixed order.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::budget::{check_count, Budget, MAX_RENDERED_OBJECTS};
use super::kustomization::{self, is_remote, Kustomization, Patch};
use super::{
    normalize, order, replace, select, transform, Options, RenderError, RenderErrorKind, Rendered,
    Reorder, Sources, KUSTOMIZATION_FILE_NAMES,
};
use crate::source::yaml::{offset32, Node, Span, Stream};

/// A resource's identity (kustomize's ResId).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ResId {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl ResId {
    pub fn of(node: &Node) -> ResId {
        let api = node.get_str("apiVersion").unwrap_or_default();
        let (group, version) = match api.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api.to_string()),
        };
        ResId {
            group,
            version,
            kind: node.get_str("kind").unwrap_or_default().to_string(),
            name: node
                .get_path(&["metadata", "name"])
                .and_then(Node::text)
                .unwrap_or_default()
                .to_string(),
            namespace: node
                .get_path(&["metadata", "namespace"])
                .and_then(Node::text)
                .unwrap_or_default()
                .to_string(),
        }
    }

    /// `Deployment.v1.apps/banana.[noNs]`, `ConfigMap.v1.[noGrp]/x.prod`: as kustomize prints
    /// ids (`resid.ResId.String`), so an error reads as the one Flux or Argo CD reports.
    pub fn display(&self) -> String {
        let or = |s: &str, none: &'static str| -> String {
            if s.is_empty() {
                none.to_string()
            } else {
                s.to_string()
            }
        };
        format!(
            "{}.{}.{}/{}.{}",
            or(&self.kind, "[noKind]"),
            or(&self.version, "[noVer]"),
            or(&self.group, "[noGrp]"),
            self.name,
            or(&self.namespace, "[noNs]")
        )
    }

    /// Empty and `default` namespaces are the same place.
    pub fn effective_namespace(&self) -> &str {
        if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    pub fn same_gvk(&self, other: &ResId) -> bool {
        self.group == other.group && self.version == other.version && self.kind == other.kind
    }
}

/// A resource being rendered, with the ids it had before (kustomize's original and previous
/// ids), which patches and name references may still use.
#[derive(Clone, Debug)]
pub(crate) struct Res {
    pub node: Node,
    /// Earlier ids, oldest first (the first is the original id).
    pub prev: Vec<ResId>,
}

impl Res {
    pub fn new(node: Node) -> Res {
        Res {
            node,
            prev: Vec::new(),
        }
    }

    pub fn id(&self) -> ResId {
        ResId::of(&self.node)
    }

    pub fn org_id(&self) -> ResId {
        self.prev.first().cloned().unwrap_or_else(|| self.id())
    }

    /// Records the current id before a transformer changes it.
    pub fn remember(&mut self) {
        let id = self.id();
        if self.prev.last() != Some(&id) {
            self.prev.push(id);
        }
    }

    /// Current, original and previous ids.
    pub fn all_ids(&self) -> Vec<ResId> {
        let mut v = vec![self.id()];
        for p in &self.prev {
            if !v.contains(p) {
                v.push(p.clone());
            }
        }
        v
    }
}

/// The ids accumulated at one kustomization level. Kustomize refuses a resource whose id is
/// already there (`resWrangler.Append`: "may not add resource with an already registered id"),
/// so a root Flux or Argo CD cannot build is not linted as if it could. Ids are compared as
/// kustomize compares them (`ResId.Equals`): group, version, kind and name exactly, and the
/// namespace where an empty one is `default` and a cluster-scoped kind has none.
#[derive(Default)]
pub(crate) struct Registered {
    /// Hashes of the accumulated ids; a hit is confirmed against the resources themselves.
    hashes: HashSet<u64>,
}

impl Registered {
    pub fn of(accumulated: &[Res]) -> Registered {
        Registered {
            hashes: accumulated.iter().map(|r| id_hash(&r.node)).collect(),
        }
    }

    /// Appends `batch` (whose ids are unique among themselves) to `acc`; `Err` with the id of
    /// the first resource whose id `acc` already holds, and `acc` unchanged.
    pub fn append(&mut self, acc: &mut Vec<Res>, batch: Vec<Res>) -> Result<(), Box<Duplicate>> {
        for r in &batch {
            if self.hashes.contains(&id_hash(&r.node))
                && acc.iter().any(|a| same_id(&a.node, &r.node))
            {
                return Err(Box::new(Duplicate::of(r)));
            }
        }
        self.hashes.extend(batch.iter().map(|r| id_hash(&r.node)));
        acc.extend(batch);
        Ok(())
    }
}

/// The id of the first resource of `batch` (one file's documents) whose id an earlier one has.
pub(crate) fn duplicate_within(batch: &[Res]) -> Option<Duplicate> {
    let mut seen: HashMap<u64, Vec<&Node>> = HashMap::new();
    for r in batch {
        let bucket = seen.entry(id_hash(&r.node)).or_default();
        if bucket.iter().any(|held| same_id(held, &r.node)) {
            return Some(Duplicate::of(r));
        }
        bucket.push(&r.node);
    }
    None
}

/// A resource refused because its id was registered before: kustomize names its id.
pub(crate) struct Duplicate {
    pub id: ResId,
    /// Where it is written.
    pub span: Span,
}

impl Duplicate {
    fn of(r: &Res) -> Duplicate {
        Duplicate {
            id: r.id(),
            span: r.node.span,
        }
    }
}

/// Kustomize's `ResId.Equals` on two resources' current ids.
fn same_id(a: &Node, b: &Node) -> bool {
    id_parts(a) == id_parts(b)
}

fn id_hash(node: &Node) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id_parts(node).hash(&mut h);
    h.finish()
}

/// apiVersion, kind, name and the namespace as `ResId.Equals` compares it, borrowed.
fn id_parts(node: &Node) -> (&str, &str, &str, &str) {
    let text = |path: &[&str]| node.get_path(path).and_then(Node::text).unwrap_or_default();
    let namespace = if transform::cluster_scoped(node) {
        ""
    } else {
        match text(&["metadata", "namespace"]) {
            "" => "default",
            ns => ns,
        }
    };
    (
        node.get_str("apiVersion").unwrap_or_default(),
        node.get_str("kind").unwrap_or_default(),
        text(&["metadata", "name"]),
        namespace,
    )
}

/// Where the second resource of an id came from, for kustomize's wording of the error.
#[derive(Clone, Copy)]
pub(crate) enum Brought {
    /// A file holding the id twice ("accumulating resources from 'a.yaml'").
    WithinFile,
    /// A file, when an earlier entry holds the id ("merging resources from 'b.yaml'").
    File,
    /// A base (a folder), when an earlier entry holds the id.
    Base,
}

/// The error kustomize gives for an id registered twice; `from` is the entry of `resources`
/// that brought the second one, as written.
pub(crate) fn already_registered(
    refused: &Duplicate,
    brought: Brought,
    from: &str,
    kfile: &Path,
    span: Option<Span>,
) -> RenderError {
    let id = refused.id.display();
    let what = format!("may not add resource with an already registered id: {id}");
    let message = match brought {
        Brought::WithinFile => format!(
            "accumulating resources: accumulation err='accumulating resources from '{from}': {what}'"
        ),
        Brought::File => {
            format!("accumulating resources: accumulation err='merging resources from '{from}': {what}'")
        }
        Brought::Base => format!("accumulating resources: recursed merging from path '{from}': {what}"),
    };
    RenderError::new(RenderErrorKind::DuplicateId, kfile, span, message)
}

pub(crate) fn find_kustomization(dir: &Path, sources: &dyn Sources) -> Option<PathBuf> {
    KUSTOMIZATION_FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| sources.is_file(p))
}

pub(crate) struct Ctx<'a> {
    pub sources: &'a dyn Sources,
    pub options: &'a Options,
    pub files: Vec<PathBuf>,
    pub kustomizations: Vec<PathBuf>,
    /// Directories being built, outermost first (cycle detection).
    stack: Vec<PathBuf>,
    budget: Budget,
}

/// How deep bases and components may nest in one render: each level is a frame of the
/// recursive build, and a chain of thousands would overflow the stack. Real trees nest a few.
pub(crate) const MAX_DEPTH: usize = 100;

pub(crate) fn render(
    dir: &Path,
    sources: &dyn Sources,
    options: &Options,
) -> Result<Rendered, RenderError> {
    let dir = normalize(dir);
    let mut ctx = Ctx {
        sources,
        options,
        files: Vec::new(),
        kustomizations: Vec::new(),
        stack: Vec::new(),
        budget: Budget::with_uses(base_uses(&dir, sources)),
    };
    if let Some(b) = &options.boundary {
        if !dir.starts_with(normalize(b)) {
            return Err(RenderError::new(
                RenderErrorKind::LoadRestrictor,
                &dir,
                None,
                format!(
                    "security; directory '{}' is outside the boundary '{}'",
                    dir.display(),
                    normalize(b).display()
                ),
            ));
        }
    }
    let Some(kfile) = find_kustomization(&dir, sources) else {
        return Err(missing_kustomization(&dir, &dir, None));
    };
    let resources = ctx.build(&dir, Vec::new(), None)?;
    let mut objects: Vec<Node> = resources.into_iter().map(|r| r.node).collect();
    if options.reorder == Reorder::Legacy {
        order::legacy_sort(&mut objects);
    }
    Ok(Rendered {
        dir,
        kustomization: kfile,
        objects,
        files: ctx.files,
        kustomizations: ctx.kustomizations,
    })
}

/// How many times each base folder will be asked for in a render of `root`: once per mention
/// in each distinct kustomization reached, since a base built once does not ask for its own
/// bases again. `None` when that cannot be known (a component, which is built at every
/// inclusion, or a kustomization that does not parse): every base is then kept.
fn base_uses(root: &Path, sources: &dyn Sources) -> Option<HashMap<PathBuf, usize>> {
    let mut uses: HashMap<PathBuf, usize> = HashMap::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    // With its depth: deeper than a render may nest, the render fails anyway (and a chain of
    // thousands would be walked again from each of its roots).
    let mut todo = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = todo.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        if seen.len() > MAX_RENDERED_OBJECTS || depth > MAX_DEPTH {
            return None;
        }
        let kfile = find_kustomization(&dir, sources)?;
        let stream = sources.load(&kfile).ok()?;
        let k = kustomization::parse(&stream, &kfile).ok()?;
        if k.is_component || !k.components.is_empty() {
            return None;
        }
        for r in &k.resources {
            if is_remote(&r.text) {
                continue;
            }
            let path = normalize(&dir.join(&r.text));
            if sources.is_dir(&path) {
                *uses.entry(path.clone()).or_default() += 1;
                todo.push((path, depth + 1));
            }
        }
    }
    Some(uses)
}

fn missing_kustomization(dir: &Path, file: &Path, span: Option<Span>) -> RenderError {
    RenderError::new(
        RenderErrorKind::MissingKustomization,
        file,
        span,
        format!(
            "accumulating resources: unable to find one of 'kustomization.yaml', \
             'kustomization.yml' or 'Kustomization' in directory '{}'",
            dir.display()
        ),
    )
}

impl Ctx<'_> {
    /// Reads a file, recording it once in `files`.
    fn load(
        &mut self,
        path: &Path,
        from: &Path,
        span: Option<Span>,
    ) -> Result<Arc<Stream>, RenderError> {
        let stream = self.sources.load(path).map_err(|e| {
            RenderError::new(
                RenderErrorKind::Io,
                from,
                span,
                format!("reading '{}': {e}", path.display()),
            )
        })?;
        if !self.files.iter().any(|f| f == path) {
            self.files.push(path.to_path_buf());
        }
        Ok(stream)
    }

    fn check_boundary(&self, path: &Path, from: &Path, span: Span) -> Result<(), RenderError> {
        if let Some(b) = &self.options.boundary {
            let b = normalize(b);
            // Symlinks followed: `link.yaml -> ../../outside/x.yaml` is outside.
            if let Some(refused) = self.sources.outside(path, &b) {
                return Err(RenderError::new(
                    RenderErrorKind::LoadRestrictor,
                    from,
                    Some(span),
                    format!("security; '{}' {refused}", path.display()),
                ));
            }
            if !path.starts_with(&b) {
                return Err(RenderError::new(
                    RenderErrorKind::LoadRestrictor,
                    from,
                    Some(span),
                    format!(
                        "security; '{}' is outside the repository '{}': gpulint reads nothing \
                         outside it (the repository is the git work tree of the path linted, \
                         else the working folder when that path is below it)",
                        path.display(),
                        b.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A file a kustomization in `root` reads (resource file, patch).
    fn check_file(
        &self,
        path: &Path,
        root: &Path,
        from: &Path,
        span: Span,
    ) -> Result<(), RenderError> {
        self.check_boundary(path, from, span)?;
        // Judged on real paths too, as kustomize does: a link in the root may point elsewhere.
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if self.options.load_restrictor == super::LoadRestrictor::RootOnly
            && (!path.starts_with(root) || !real(path).starts_with(real(root)))
        {
            return Err(RenderError::new(
                RenderErrorKind::LoadRestrictor,
                from,
                Some(span),
                format!(
                    "security; file '{}' is not in or below '{}'",
                    path.display(),
                    root.display()
                ),
            ));
        }
        Ok(())
    }

    /// Builds the kustomization in `dir` on top of `acc` (empty for a base, the including
    /// kustomization's resources for a component).
    pub fn build(
        &mut self,
        dir: &Path,
        acc: Vec<super::load::Res>,
        from: Option<(&Path, Span)>,
    ) -> Result<Vec<Res>, RenderError> {
        let Some(kfile) = find_kustomization(dir, self.sources) else {
            let (f, s) = from.map_or((dir, None), |(f, s)| (f, Some(s)));
            return Err(missing_kustomization(dir, f, s));
        };
        if self.stack.len() >= MAX_DEPTH {
            let (f, s) = from.map_or((kfile.as_path(), None), |(f, s)| (f, Some(s)));
            return Err(RenderError::new(
                RenderErrorKind::TooLarge,
                f,
                s,
                format!(
                    "more than {MAX_DEPTH} nested kustomizations (a base of a base of ...): not rendered"
                ),
            ));
        }
        let stream = self.load(&kfile, &kfile, None)?;
        if !self.kustomizations.contains(&kfile) {
            self.kustomizations.push(kfile.clone());
        }
        let k = kustomization::parse(&stream, &kfile)?;
        self.stack.push(dir.to_path_buf());
        let result = self.build_parsed(dir, &kfile, &stream, &k, acc);
        self.stack.pop();
        result
    }

    /// A base (a directory in `resources`), built once per render.
    fn build_base(
        &mut self,
        dir: &Path,
        kfile: &Path,
        span: Span,
    ) -> Result<Vec<Res>, RenderError> {
        if let Some(resources) = self.budget.base(dir) {
            return Ok(resources);
        }
        let resources = self.build(dir, Vec::new(), Some((kfile, span)))?;
        self.budget.remember_base(dir, &resources);
        Ok(resources)
    }

    fn enter_dir(&self, sub: &Path, kfile: &Path, span: Span) -> Result<(), RenderError> {
        self.check_boundary(sub, kfile, span)?;
        for visited in &self.stack {
            if visited.starts_with(sub) {
                return Err(RenderError::new(
                    RenderErrorKind::Cycle,
                    kfile,
                    Some(span),
                    format!(
                        "cycle detected: candidate root '{}' contains visited root '{}'",
                        sub.display(),
                        visited.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `; did you mean `x.yaml`?` when the missing `x.yml` exists as `.yaml` (or the other way
    /// round): the commonest reason a listed resource is not found.
    fn other_extension(&self, path: &Path, written: &str) -> String {
        let swapped =
            |from: &str, to: &str| written.strip_suffix(from).map(|stem| format!("{stem}{to}"));
        let other = swapped(".yml", ".yaml").or_else(|| swapped(".yaml", ".yml"));
        match other {
            Some(other)
                if self.sources.is_file(
                    &path.with_file_name(Path::new(&other).file_name().unwrap_or_default()),
                ) =>
            {
                format!("; did you mean `{other}`?")
            }
            _ => String::new(),
        }
    }

    fn build_parsed(
        &mut self,
        dir: &Path,
        kfile: &Path,
        stream: &Stream,
        k: &Kustomization,
        mut acc: Vec<Res>,
    ) -> Result<Vec<Res>, RenderError> {
        let mut registered = Registered::of(&acc);
        for r in &k.resources {
            let span = r.node.span;
            if is_remote(&r.text) {
                return Err(kustomization::remote_not_rendered(
                    kfile,
                    &r.node,
                    "resources",
                    &r.text,
                ));
            }
            let path = normalize(&dir.join(&r.text));
            // Outside the repository, a base must not read as "no such file": say why.
            self.check_boundary(&path, kfile, span)?;
            if self.sources.is_dir(&path) {
                self.enter_dir(&path, kfile, span)?;
                if find_kustomization(&path, self.sources).is_none() {
                    return Err(RenderError::new(
                        RenderErrorKind::MissingKustomization,
                        kfile,
                        Some(span),
                        format!(
                            "accumulating resources: accumulation err='accumulating resources from '{}': \
                             '{}' must resolve to a file': couldn't make target for path '{}': unable to \
                             find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in \
                             directory '{}'",
                            r.text,
                            path.display(),
                            path.display(),
                            path.display()
                        ),
                    ));
                }
                let sub = self.build_base(&path, kfile, span)?;
                registered.append(&mut acc, sub).map_err(|refused| {
                    // The entry as written: kustomize's absolute path would name the machine.
                    already_registered(&refused, Brought::Base, &r.text, kfile, Some(span))
                })?;
                check_count(acc.len(), self.options.max_objects, kfile, Some(span))?;
            } else if self.sources.is_file(&path) {
                self.check_file(&path, dir, kfile, span)?;
                let s = self.load(&path, kfile, Some(span))?;
                let batch = resources_of(&s, &path)?;
                if let Some(refused) = duplicate_within(&batch) {
                    let within = Brought::WithinFile;
                    return Err(already_registered(
                        &refused,
                        within,
                        &r.text,
                        kfile,
                        Some(span),
                    ));
                }
                registered.append(&mut acc, batch).map_err(|refused| {
                    already_registered(&refused, Brought::File, &r.text, kfile, Some(span))
                })?;
                check_count(acc.len(), self.options.max_objects, kfile, Some(span))?;
            } else {
                return Err(RenderError::new(
                    RenderErrorKind::MissingResource,
                    kfile,
                    Some(span),
                    format!(
                        "accumulating resources: accumulation err='accumulating resources from '{}': \
                         open {}: no such file or directory'{}",
                        r.text,
                        path.display(),
                        self.other_extension(&path, &r.text)
                    ),
                ));
            }
        }
        for c in &k.components {
            let span = c.node.span;
            if is_remote(&c.text) {
                return Err(kustomization::remote_not_rendered(
                    kfile,
                    &c.node,
                    "components",
                    &c.text,
                ));
            }
            let path = normalize(&dir.join(&c.text));
            if !self.sources.is_dir(&path) {
                return Err(RenderError::new(
                    RenderErrorKind::MissingResource,
                    kfile,
                    Some(span),
                    format!("component '{}' is not a directory", c.text),
                ));
            }
            self.enter_dir(&path, kfile, span)?;
            acc = self.build(&path, acc, Some((kfile, span)))?;
            check_count(acc.len(), self.options.max_objects, kfile, Some(span))?;
        }
        // The builtin transformers, in kustomize's order.
        for p in &k.patches_strategic_merge {
            let docs = self.patch_docs(p, dir, kfile, stream)?;
            for d in docs {
                select::apply_smp_by_id(&mut acc, &d, kfile, p.span)?;
            }
        }
        for p in &k.patches {
            let docs = self.patch_docs(p, dir, kfile, stream)?;
            select::apply_patch(&mut acc, p, &docs, kfile)?;
        }
        if let Some(ns) = &k.namespace {
            transform::namespace(&mut acc, ns);
        }
        if k.name_prefix.is_some() || k.name_suffix.is_some() {
            transform::prefix_suffix(&mut acc, k.name_prefix.as_ref(), k.name_suffix.as_ref());
        }
        if !k.common_labels.is_empty() {
            transform::labels(&mut acc, &k.common_labels, true, true, true);
        }
        for set in &k.labels {
            transform::labels(
                &mut acc,
                &set.pairs,
                set.include_selectors,
                set.include_templates || set.include_selectors,
                set.include_volume_claim_templates || set.include_selectors,
            );
        }
        if !k.common_annotations.is_empty() {
            transform::annotations(&mut acc, &k.common_annotations);
        }
        for p in &k.patches_json6902 {
            let docs = self.patch_docs(p, dir, kfile, stream)?;
            select::apply_patch(&mut acc, p, &docs, kfile)?;
        }
        for r in &k.replicas {
            transform::replicas(&mut acc, r);
        }
        for i in &k.images {
            transform::image(&mut acc, i);
        }
        replace::apply(&mut acc, &k.replacements, kfile)?;
        transform::fix_name_references(&mut acc);
        Ok(acc)
    }

    /// The documents of a patch: its file's, or the inline string parsed.
    fn patch_docs(
        &mut self,
        p: &Patch,
        dir: &Path,
        kfile: &Path,
        kstream: &Stream,
    ) -> Result<Vec<Node>, RenderError> {
        let stream: Arc<Stream> = if let Some(path) = &p.path {
            let full = normalize(&dir.join(&path.text));
            self.check_boundary(&full, kfile, path.node.span)?;
            if !self.sources.is_file(&full) {
                return Err(RenderError::new(
                    RenderErrorKind::MissingResource,
                    kfile,
                    Some(path.node.span),
                    format!("patch file '{}' not found", path.text),
                ));
            }
            self.check_file(&full, dir, kfile, path.node.span)?;
            self.load(&full, kfile, Some(path.node.span))?
        } else if let Some(inline) = &p.inline {
            Arc::new(kustomization::parse_inline(inline, &kstream.text))
        } else {
            return Ok(Vec::new());
        };
        if let Some(e) = &stream.error {
            return Err(RenderError::new(
                RenderErrorKind::Parse,
                kfile,
                Some(p.span),
                format!("invalid patch: {}", e.message),
            ));
        }
        Ok(stream.documents.iter().map(|d| d.root.clone()).collect())
    }
}

/// The resources of a file: every document, `List` items expanded, empty documents skipped.
pub(crate) fn resources_of(stream: &Stream, path: &Path) -> Result<Vec<Res>, RenderError> {
    if let Some(e) = &stream.error {
        let source = stream
            .documents
            .first()
            .map(|d| d.root.span.source)
            .unwrap_or_default();
        return Err(RenderError::new(
            RenderErrorKind::Parse,
            path,
            Some(Span {
                start: offset32(e.offset),
                end: offset32(e.offset),
                source,
            }),
            format!("invalid YAML: {}", e.message),
        ));
    }
    let mut out = Vec::new();
    for doc in &stream.documents {
        let root = &doc.root;
        if root.as_map().is_none() {
            return Err(RenderError::new(
                RenderErrorKind::Invalid,
                path,
                Some(root.span),
                "a resource must be a mapping",
            ));
        }
        let kind = root.get_str("kind").unwrap_or_default();
        if kind.ends_with("List") && root.get("items").is_some() {
            for item in root.get("items").and_then(Node::as_seq).unwrap_or_default() {
                check_resource(item, path)?;
                out.push(Res::new(item.clone()));
            }
            continue;
        }
        check_resource(root, path)?;
        out.push(Res::new(root.clone()));
    }
    Ok(out)
}

fn check_resource(node: &Node, path: &Path) -> Result<(), RenderError> {
    if node.as_map().is_none() || node.get_str("kind").is_none() {
        return Err(RenderError::new(
            RenderErrorKind::Invalid,
            path,
            Some(node.span),
            "missing Resource metadata: a resource needs a kind",
        ));
    }
    Ok(())
}
