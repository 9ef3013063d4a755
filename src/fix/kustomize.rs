//! Fixes on rendered Kustomize objects, written at their origin.
//!
//! A rendered field was written by one file: a base resource, a patch, or the kustomization.
//! The fix edits that file when only this render reads it (the overlay's own patch, a base no
//! other overlay uses); a file other renders also read (a shared base) is left alone and the fix
//! becomes a strategic-merge patch added to the overlay (a new file and its `patches:` entry, or
//! an entry more in the `gpulint-*.yaml` patch an earlier fix of this overlay wrote).
//!
//! Verification is by rendering again: the edited texts are rendered in memory and every
//! rendered object must equal the render before plus exactly the intended changes. Nothing is
//! written unless that holds. Like plain files, a unit is fixed in rounds (`plan.rs`): after a
//! verified round the new render is linted again and what is still fixable is fixed, so fixes
//! that clash in one round (two insertions in one mapping) or that a fix uncovers land too.
//! The patch texts themselves are `overlay_patch.rs`.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as Json;

use super::error::FixError;
use super::helm::ReleaseFix;
use super::overlay_patch::{
    add_patch_entries, extend_json_patch, extend_patch, json_target, new_json_patch, new_patch,
    patch_stem, PatchEntry,
};
use super::plan::{lands_with, place_in, AppliedFix, FileFix, FixPlan, Rejections, Target};
use crate::edit::{apply, apply_change, overlaps, Edit, FieldChange, Fix};
use crate::lint::{Linter, Run};
use crate::rules::Finding;
use crate::source::discover::{readers_index, Input};
use crate::source::document::{plain, Segment};
use crate::source::file::{display_path, FileRole, SourceFile};
use crate::source::kustomize::normalize;
use crate::source::units::{
    render_root, render_root_for, render_unit, RenderUnit, RunPaths, RunSources,
};
use crate::source::yaml::{Node, Stream};

/// How many renders in the repository read a file: this run's and those of every other root
/// of the repository, so a base that an overlay not linted in this run uses (`gpulint
/// overlays/prod`, pre-commit's file arguments) is not edited for one overlay. A root used as a
/// base by another is read through it, not counted on its own. Asked only for the files a fix
/// would edit in place, and answered by rendering only the roots outside the run whose
/// kustomization files may lead to that file (`ReadersIndex`): a named file's run in a
/// monorepo would otherwise render every root.
pub(super) struct RepoReaders<'r> {
    linter: &'r Linter,
    run: &'r Run,
    /// The run's roots.
    ours: BTreeSet<PathBuf>,
    /// The roots known: the run's, and those rendered so far.
    known: RefCell<Known>,
    /// What the run's renders read, for the index built when the run has none that covers it.
    read: Vec<PathBuf>,
    index: OnceCell<Option<crate::source::kustomize::ReadersIndex>>,
    counts: RefCell<HashMap<PathBuf, usize>>,
    /// Roots outside the run rendered (`PlanWork::reader_renders`).
    pub(super) renders: Cell<usize>,
}

/// Roots whose reads are known (a root that does not render reads nothing that can break).
#[derive(Default)]
struct Known {
    roots: BTreeSet<PathBuf>,
    /// The roots reading each file.
    readers: HashMap<PathBuf, Vec<PathBuf>>,
    /// Kustomization folders some known root uses as a base: read through that root.
    bases: BTreeSet<PathBuf>,
}

impl Known {
    fn add(&mut self, root: PathBuf, files: Vec<PathBuf>, bases: Vec<PathBuf>) {
        for f in files {
            self.readers.entry(f).or_default().push(root.clone());
        }
        self.bases.extend(bases);
        self.roots.insert(root);
    }
}

impl<'r> RepoReaders<'r> {
    pub(super) fn of(linter: &'r Linter, run: &'r Run) -> RepoReaders<'r> {
        let path = |i: &usize| match &run.files.get(*i)?.input {
            Input::File(p) => Some(normalize(p)),
            Input::Stdin => None,
        };
        let mut known = Known::default();
        let mut read = BTreeSet::new();
        for u in &run.units {
            if known.roots.contains(&u.dir) {
                continue;
            }
            let files: Vec<PathBuf> = u.files.iter().filter_map(path).collect();
            read.extend(files.iter().cloned());
            known.add(u.dir.clone(), files, u.bases.clone());
        }
        RepoReaders {
            linter,
            run,
            ours: known.roots.clone(),
            known: RefCell::new(known),
            read: read.into_iter().collect(),
            index: OnceCell::new(),
            counts: RefCell::default(),
            renders: Cell::new(0),
        }
    }

    /// The renders reading `file` (absolute, normalized).
    fn count(&self, file: &Path, shared: &SharedFiles) -> usize {
        if let Some(&n) = self.counts.borrow().get(file) {
            return n;
        }
        self.render_roots_reading(file, shared);
        let known = self.known.borrow();
        let n = known.readers.get(file).map_or(0, |roots| {
            roots
                .iter()
                .filter(|dir| !known.bases.contains(*dir) || self.ours.contains(*dir))
                .count()
        });
        self.counts.borrow_mut().insert(file.to_path_buf(), n);
        n
    }

    /// Renders the roots outside the run that may read `file` (a root reading it through a
    /// base that is also a root: both, so the base is known as one).
    fn render_roots_reading(&self, file: &Path, shared: &SharedFiles) {
        let settings = &self.linter.render;
        let Some(repo) = &settings.boundary else {
            return;
        };
        let index = self.index.get_or_init(|| match &self.run.readers {
            Some(index) if index.covers(repo, &self.read) => None,
            _ => Some(readers_index(repo, &self.linter.config, &self.read)),
        });
        let index = match (index, &self.run.readers) {
            (Some(built), _) => built,
            (None, Some(kept)) => kept.as_ref(),
            (None, None) => return,
        };
        let outside: Vec<PathBuf> = index
            .roots_reading(&[file.to_path_buf()])
            .into_iter()
            .filter(|root| !self.known.borrow().roots.contains(root))
            .collect();
        if outside.is_empty() {
            return;
        }
        let sources = RunSources::with_paths(
            &shared.files,
            shared.paths.clone(),
            settings.boundary.clone(),
        );
        for root in outside {
            self.renders.set(self.renders.get() + 1);
            let (files, bases) = match render_root(&root, &sources, settings) {
                Ok(r) => (
                    r.files.iter().map(|p| normalize(p)).collect(),
                    r.kustomizations
                        .iter()
                        .filter(|k| **k != r.kustomization)
                        .filter_map(|k| k.parent().map(normalize))
                        .collect(),
                ),
                Err(_) => (Vec::new(), Vec::new()),
            };
            self.known.borrow_mut().add(root, files, bases);
        }
    }
}

/// What every unit's fixes start from, built once per plan (per unit, or per attempt, it made
/// a whole-repository lint of a monorepo 15 times slower): the run's files, each behind an
/// `Arc` so a target and each of its attempts share the files they do not edit, their index
/// by path, and the clusters applying each root.
pub(super) struct SharedFiles {
    files: Vec<Arc<SourceFile>>,
    paths: Arc<RunPaths>,
    clusters: HashMap<PathBuf, BTreeSet<String>>,
}

impl SharedFiles {
    pub(super) fn of(run: &Run) -> SharedFiles {
        SharedFiles {
            files: run.files.iter().map(|f| Arc::new(copy(f))).collect(),
            paths: RunPaths::of(&run.files),
            clusters: clusters_applying(run),
        }
    }
}

/// The clusters whose renders of each root the run lints (a root applied by several clusters
/// is one unit each), by root folder.
fn clusters_applying(run: &Run) -> HashMap<PathBuf, BTreeSet<String>> {
    let mut by_dir: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    for u in &run.units {
        let cluster = u.cluster.clone().unwrap_or_else(|| "(none)".into());
        by_dir.entry(u.dir.clone()).or_default().insert(cluster);
    }
    by_dir
}

/// Where a fix is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Its edits, in the file that wrote the field.
    InPlace,
    /// Its changes, as a strategic-merge patch of the overlay.
    Patch,
    /// Its changes, as a JSON 6902 patch of the overlay: where strategic merge cannot say them
    /// (a list in a custom resource, which kustomize replaces whole; an element without a name).
    Json,
}

/// The texts a set of fixes produces: edited files by index, new files by path.
#[derive(Default)]
struct Outcome {
    edited: BTreeMap<usize, String>,
    created: BTreeMap<PathBuf, String>,
}

/// A verified set of fixes: the files with their texts, and the render they give.
struct Attempt {
    files: Vec<Arc<SourceFile>>,
    created: Vec<usize>,
    objects: Vec<Node>,
    reads: Vec<usize>,
}

/// One unit being fixed: its files and render as fixed by the rounds so far.
pub(super) struct KustomizeTarget<'r> {
    linter: &'r Linter,
    run: &'r Run,
    facts: &'r crate::lint::Facts,
    /// Renders of the repository reading each file.
    readers: &'r RepoReaders<'r>,
    /// The run's files and their index, shared by every render the fixes verify with.
    shared: &'r SharedFiles,
    /// Renders made to verify fixes (`PlanWork`).
    renders: Cell<usize>,
    index: usize,
    unit: &'r RenderUnit,
    /// The run's files with this unit's fixes so far; files the fixes create (and any the
    /// renders read beyond the run's) are appended, so `SourceId`s of new renders index it.
    files: Vec<Arc<SourceFile>>,
    /// Indices in `files` of the new files the fixes wrote.
    created: BTreeSet<usize>,
    objects: Vec<Node>,
    /// Indices of the files the current render reads.
    reads: Vec<usize>,
    applied: BTreeMap<usize, Vec<AppliedFix>>,
    /// Flux HelmReleases of this render whose values the fixes change: each chart is rendered
    /// again to check them (`helm.rs`).
    releases: Vec<ReleaseFix<'r>>,
}

fn copy(f: &SourceFile) -> SourceFile {
    SourceFile {
        input: f.input.clone(),
        name: f.name.clone(),
        stream: f.stream.clone(),
        role: f.role,
    }
}

impl<'r> KustomizeTarget<'r> {
    pub(super) fn new(
        linter: &'r Linter,
        run: &'r Run,
        facts: &'r crate::lint::Facts,
        readers: &'r RepoReaders<'r>,
        shared: &'r SharedFiles,
        index: usize,
        unit: &'r RenderUnit,
    ) -> Self {
        KustomizeTarget {
            linter,
            run,
            facts,
            readers,
            shared,
            renders: Cell::new(0),
            index,
            unit,
            files: shared.files.clone(),
            created: BTreeSet::new(),
            objects: unit.objects.clone(),
            reads: unit.files.clone(),
            applied: BTreeMap::new(),
            releases: Vec::new(),
        }
    }

    /// Also fixes the values of these HelmReleases of the render (their fixes are among the
    /// findings the rounds get).
    pub(super) fn with_releases(mut self, releases: Vec<ReleaseFix<'r>>) -> Self {
        self.releases = releases;
        self
    }

    fn path_of(&self, file: usize) -> Option<&Path> {
        match &self.files.get(file)?.input {
            Input::File(p) => Some(p),
            Input::Stdin => None,
        }
    }

    fn text_of(&self, file: usize) -> Option<&str> {
        self.files.get(file).map(|f| &*f.stream.text)
    }

    /// A file this render alone reads, that a fix may edit: a patch this unit's fixes wrote,
    /// or a run file no other render reads.
    fn editable(&self, file: usize) -> bool {
        if self.created.contains(&file) {
            return true;
        }
        // The count last: it may render roots outside the run.
        file < self.run.files.len()
            && self.reads.contains(&file)
            && self.files[file].role != FileRole::Plain
            && self
                .path_of(file)
                .is_some_and(|p| self.readers.count(&normalize(p), self.shared) == 1)
    }

    fn in_place_possible(&self, fix: &Fix) -> bool {
        !fix.edits.is_empty() && fix.source.index().is_some_and(|i| self.editable(i))
    }

    /// How a fix can be written on its own: at its origin when this render alone reads that
    /// file, else (or when the edit there does not verify) as an overlay patch.
    /// With the attempt that verified it alone (a round of one fix takes it as it is).
    fn mode_for(&self, f: &Finding) -> Result<(Mode, Attempt), FixError> {
        let fix = f.fix.as_ref().ok_or(FixError::Inconsistent("no fix"))?;
        if self.unit.substituted.contains(&fix.document) && self.writes_over_variables(fix) {
            return Err(FixError::FluxVariables);
        }
        // A value the applier's own patches set (a Flux Kustomization's `spec.patches`) is
        // applied after anything a fix could write in the folder: only that patch can change it.
        if let Some(overlay) = &self.unit.post.overlay {
            // The finding is shown where its value was written.
            let in_applier = self
                .path_of(f.file)
                .is_some_and(|p| normalize(p) == normalize(&overlay.file));
            if in_applier {
                return Err(FixError::SetByApplierPatch {
                    file: display_path(&overlay.file),
                });
            }
        }
        // A root several clusters apply has no file one cluster reads alone.
        let clusters = self.shared.clusters.get(&self.unit.dir);
        if clusters.is_some_and(|c| c.len() > 1) && f.is_measured() {
            let names: Vec<&str> = clusters.into_iter().flatten().map(String::as_str).collect();
            return Err(FixError::SharedByClusters {
                clusters: names.join(", "),
            });
        }
        let mut first = None;
        if self.in_place_possible(fix) {
            match self.attempt(&[(f, Mode::InPlace)]) {
                Ok(a) => return Ok((Mode::InPlace, a)),
                Err(e) => first = Some(e),
            }
        }
        if let Ok(a) = self.attempt(&[(f, Mode::Patch)]) {
            return Ok((Mode::Patch, a));
        }
        // What strategic merge cannot say, a JSON patch may: its reason is the one to give.
        match self.attempt(&[(f, Mode::Json)]) {
            Ok(a) => Ok((Mode::Json, a)),
            Err(e) => Err(first.unwrap_or(e)),
        }
    }

    /// Whether a fix on an object Flux substitutes would write a literal where a variable is
    /// (an edit over `${…}`) or copy a substituted value (a GPU limit set to the request that
    /// `${GPUS}` gave): every cluster reading the file would get this cluster's value.
    fn writes_over_variables(&self, fix: &crate::edit::Fix) -> bool {
        use crate::edit::FieldChange;
        use crate::source::substitute::has_variable;
        let over_variable = fix.source.index().is_some_and(|i| {
            let text = self
                .files
                .get(i)
                .map(|f| &*f.stream.text)
                .unwrap_or_default();
            fix.edits
                .iter()
                .any(|e| text.get(e.start..e.end).is_some_and(has_variable))
        });
        let values: Vec<&str> = self
            .unit
            .post
            .substitute
            .iter()
            .flat_map(|s| s.vars.values())
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .collect();
        let copies_value = fix.changes.iter().any(|c| match c {
            FieldChange::Set { value, .. } => values.contains(&value.trim()),
            FieldChange::Rename { .. } => false,
        });
        over_variable || copies_value
    }

    /// The object an overlay patch addresses: as the root renders it, before what its applier
    /// adds (Flux's target namespace and name prefix, Argo CD's namespace), which the patch,
    /// applied inside the root, never sees. The applier changes no object's place in the list.
    fn addressed(&self, document: usize) -> Result<Node, FixError> {
        if self.unit.post.is_empty() {
            return self
                .objects
                .get(document)
                .cloned()
                .ok_or(FixError::Inconsistent("object not found"));
        }
        let settings = &self.linter.render;
        let sources = RunSources::with_paths(
            &self.files,
            self.shared.paths.clone(),
            settings.boundary.clone(),
        );
        self.renders.set(self.renders.get() + 1);
        let rendered = render_root_for(&self.unit.dir, &self.unit.post, &sources, settings)
            .map_err(|e| FixError::OverlayDoesNotRender(e.message))?;
        rendered
            .objects
            .into_iter()
            .nth(document)
            .ok_or(FixError::Inconsistent("object not found"))
    }

    fn attempt(&self, fixes: &[(&Finding, Mode)]) -> Result<Attempt, FixError> {
        let outcome = self.outcome(fixes)?;
        self.verify(fixes, outcome)
    }

    /// Takes a verified round: its texts and render become the state; each fix is reported at
    /// the line of the field it set, in the file that now sets it.
    fn commit(&mut self, used: &[&Finding], attempt: Attempt) {
        self.files = attempt.files;
        self.created.extend(attempt.created);
        self.objects = attempt.objects;
        self.reads = attempt.reads;
        for f in used {
            let Some(fix) = &f.fix else { continue };
            let set = fix.changes.first().and_then(|c| {
                self.objects
                    .get(fix.document)
                    .and_then(|o| changed_node(o, c))
            });
            let (file, line) = match set.and_then(|n| n.span.source.index().map(|i| (i, n))) {
                Some((i, node)) => (i, self.files[i].stream.line_col(node.span.start()).0),
                None => (self.unit.home, 0),
            };
            self.applied.entry(file).or_default().push(AppliedFix::of(
                f,
                line,
                format!("{} (render of {})", f.object.display_name(), self.unit.name),
            ));
        }
    }

    /// The texts the fixes produce: edits at their origins, the rest as overlay patches.
    fn outcome(&self, fixes: &[(&Finding, Mode)]) -> Result<Outcome, FixError> {
        let mut out = Outcome::default();
        let mut by_file: BTreeMap<usize, Vec<Edit>> = BTreeMap::new();
        let mut patched: BTreeMap<usize, Vec<&FieldChange>> = BTreeMap::new();
        let mut json: BTreeMap<usize, Vec<&FieldChange>> = BTreeMap::new();
        for (f, mode) in fixes {
            let Some(fix) = &f.fix else { continue };
            match (mode, fix.source.index()) {
                (Mode::InPlace, Some(file)) => by_file
                    .entry(file)
                    .or_default()
                    .extend(fix.edits.iter().cloned()),
                (Mode::InPlace, None) => return Err(FixError::NoFileToEdit),
                (Mode::Patch, _) => patched
                    .entry(fix.document)
                    .or_default()
                    .extend(fix.changes.iter()),
                (Mode::Json, _) => json
                    .entry(fix.document)
                    .or_default()
                    .extend(fix.changes.iter()),
            }
        }
        for (file, edits) in by_file {
            let text = self
                .text_of(file)
                .ok_or(FixError::Inconsistent("file not found"))?;
            let fixed = apply(text, &edits).ok_or(FixError::EditsOverlap)?;
            out.edited.insert(file, fixed);
        }
        if !patched.is_empty() || !json.is_empty() {
            self.overlay_patches(&patched, &json, &mut out)?;
        }
        Ok(out)
    }

    /// Writes the changes of each object as a strategic-merge patch of the overlay (`patched`)
    /// or a JSON 6902 patch (`json`): into the `gpulint-<kind>-<name>.yaml` (or
    /// `gpulint-<kind>-<name>-json6902.yaml`) this overlay already applies when there is one,
    /// else into a new file listed under the kustomization's `patches:` (with its `target:`
    /// for a JSON 6902 patch).
    fn overlay_patches(
        &self,
        patched: &BTreeMap<usize, Vec<&FieldChange>>,
        json: &BTreeMap<usize, Vec<&FieldChange>>,
        out: &mut Outcome,
    ) -> Result<(), FixError> {
        let home = self.unit.home;
        if !self.editable(home) {
            return Err(FixError::KustomizationShared);
        }
        let kustomization = self.path_of(home).ok_or(FixError::NoKustomizationFile)?;
        let dir = kustomization.parent().unwrap_or(Path::new("."));
        let root = self.files[home]
            .stream
            .documents
            .first()
            .map(|d| d.root.clone())
            .ok_or(FixError::KustomizationEmpty)?;
        let mut entries = Vec::new();
        let all = patched
            .iter()
            .map(|(d, c)| (d, c, false))
            .chain(json.iter().map(|(d, c)| (d, c, true)));
        for (&document, changes, is_json) in all {
            let object = &self.addressed(document)?;
            let (base, kind, name) = patch_stem(object, &root)?;
            let base = if is_json {
                format!("{base}-json6902")
            } else {
                base
            };
            // An earlier fix's patch of this object, applied by this overlay: extend it.
            let own = dir.join(format!("{base}.yaml"));
            let ours = self
                .reads
                .iter()
                .copied()
                .filter(|&i| self.editable(i))
                .find(|&i| self.path_of(i).map(normalize) == Some(normalize(&own)));
            if let Some(i) = ours {
                let text = out
                    .edited
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| self.files[i].stream.text.to_string());
                let extended = if is_json {
                    extend_json_patch(&text, object, changes)?
                } else {
                    extend_patch(&text, object, changes, &kind, &name)?
                };
                out.edited.insert(i, extended);
                continue;
            }
            let mut file = format!("{base}.yaml");
            let mut n = 2;
            // `symlink_metadata`: a dangling link there counts as taken.
            while std::fs::symlink_metadata(dir.join(&file)).is_ok()
                || out.created.contains_key(&dir.join(&file))
            {
                file = format!("{base}-{n}.yaml");
                n += 1;
            }
            if is_json {
                out.created
                    .insert(dir.join(&file), new_json_patch(object, changes)?);
                entries.push(PatchEntry {
                    file,
                    target: json_target(object, &root)?,
                });
            } else {
                out.created
                    .insert(dir.join(&file), new_patch(object, &root, changes)?);
                entries.push(PatchEntry::strategic(file));
            }
        }
        if !entries.is_empty() {
            let text = out
                .edited
                .get(&home)
                .cloned()
                .unwrap_or_else(|| self.files[home].stream.text.to_string());
            out.edited.insert(home, add_patch_entries(&text, &entries)?);
        }
        Ok(())
    }

    /// Renders the fixed texts in memory: every object must equal the current render plus
    /// exactly the intended changes.
    fn verify(&self, fixes: &[(&Finding, Mode)], outcome: Outcome) -> Result<Attempt, FixError> {
        let mut files = self.files.clone();
        for (file, text) in outcome.edited {
            let f = files
                .get_mut(file)
                .ok_or(FixError::Inconsistent("file not found"))?;
            *f = Arc::new(SourceFile {
                stream: Arc::new(Stream::parse(&text)),
                ..copy(f)
            });
        }
        let mut created = Vec::new();
        for (path, text) in outcome.created {
            created.push(files.len());
            files.push(Arc::new(SourceFile {
                name: display_path(&path),
                input: Input::File(path),
                stream: Arc::new(Stream::parse(&text)),
                role: FileRole::Rendered,
            }));
        }
        let settings = &self.linter.render;
        let sources =
            RunSources::with_paths(&files, self.shared.paths.clone(), settings.boundary.clone());
        self.renders.set(self.renders.get() + 1);
        let rendered = render_unit(&self.unit.dir, &self.unit.post, &sources, settings)
            .map_err(|e| FixError::OverlayDoesNotRender(e.message))?;
        let mut expected: Vec<Json> = self.objects.iter().map(plain).collect();
        for (f, _) in fixes {
            let Some(fix) = &f.fix else { continue };
            let doc = expected
                .get_mut(fix.document)
                .ok_or(FixError::Inconsistent("object not found"))?;
            for change in &fix.changes {
                apply_change(doc, change)
                    .ok_or(FixError::Inconsistent("the change does not apply"))?;
            }
        }
        let actual: Vec<Json> = rendered.objects.iter().map(plain).collect();
        if actual != expected {
            return Err(FixError::RenderDiffers);
        }
        let taken: Vec<&Finding> = fixes.iter().map(|(f, _)| *f).collect();
        for release in &self.releases {
            release.check(&taken, &rendered.objects)?;
        }
        // Files the render read beyond these (none expected) keep the indices it gave them.
        let (added, index) = sources.finish();
        for (path, stream) in added {
            files.push(Arc::new(SourceFile {
                name: display_path(&path),
                input: Input::File(path),
                stream,
                role: FileRole::Support,
            }));
        }
        let reads = rendered
            .files
            .iter()
            .filter_map(|p| index.index_of(p))
            .collect();
        Ok(Attempt {
            files,
            created,
            objects: rendered.objects,
            reads,
        })
    }
}

impl Target for KustomizeTarget<'_> {
    fn round(&mut self, findings: &[Finding], rejections: &mut Rejections) -> usize {
        // One fix per field, and no two in-place edits on one spot: the rest wait a round,
        // but a fix whose every field another sets to the same value lands with it (the one
        // setting more fields is taken first).
        let mut sorted: Vec<&Finding> = findings.iter().collect();
        sorted.sort_by_key(|f| std::cmp::Reverse(f.fix.as_ref().map_or(0, |x| x.changes.len())));
        let mut picked: Vec<&Finding> = Vec::new();
        let mut within: Vec<&Finding> = Vec::new();
        for f in sorted {
            let Some(fix) = &f.fix else { continue };
            let clashes = picked.iter().filter_map(|p| p.fix.as_ref()).any(|q| {
                (fix.document == q.document && touches_same(fix, q))
                    || (fix.source == q.source && overlaps(fix, q))
            });
            if !clashes {
                picked.push(f);
            } else if lands_with(fix, &picked) {
                within.push(f);
            }
        }
        let mut good: Vec<(&Finding, Mode)> = Vec::new();
        let mut alone = None;
        for f in picked {
            match self.mode_for(f) {
                Ok((mode, attempt)) => {
                    good.push((f, mode));
                    alone = Some(attempt);
                }
                Err(why) => rejections.reject(f, place_in(&self.files, f), why),
            }
        }
        if good.is_empty() {
            return 0;
        }
        // Together; when they interfere, keep each that still verifies with those before
        // it, and leave the others to the next round. One alone was verified already.
        let together = match alone {
            Some(attempt) if good.len() == 1 => Ok(attempt),
            _ => self.attempt(&good),
        };
        let (used, attempt) = match together {
            Ok(a) => (good, a),
            Err(_) => {
                let mut used: Vec<(&Finding, Mode)> = Vec::new();
                let mut last = None;
                for g in good {
                    let mut trial = used.clone();
                    trial.push(g);
                    if let Ok(a) = self.attempt(&trial) {
                        used = trial;
                        last = Some(a);
                    }
                }
                match last {
                    Some(a) => (used, a),
                    None => return 0,
                }
            }
        };
        let mut used: Vec<&Finding> = used.into_iter().map(|(f, _)| f).collect();
        let landed: Vec<&Finding> = within
            .into_iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| lands_with(x, &used)))
            .collect();
        used.extend(landed);
        self.commit(&used, attempt);
        used.len()
    }

    /// Lints the current render again: its fixable findings are the next round's.
    fn relint(&self) -> Vec<Finding> {
        let texts: Vec<Arc<str>> = self.files.iter().map(|f| f.stream.text.clone()).collect();
        let unit = RenderUnit {
            objects: self.objects.clone(),
            files: self.reads.clone(),
            ..self.unit.clone()
        };
        self.linter
            .lint_unit(self.facts, &self.files, &texts, self.index, &unit)
    }

    /// The files changed by the rounds, as the plan's file fixes.
    fn finish(self, plan: &mut FixPlan) {
        let KustomizeTarget {
            run,
            files,
            created,
            mut applied,
            renders,
            ..
        } = self;
        plan.work.kustomize_renders += renders.get();
        let first = plan.files.len();
        for (i, file) in files.iter().enumerate() {
            let Input::File(path) = &file.input else {
                continue;
            };
            let is_new = created.contains(&i);
            let original = match run.files.get(i) {
                // Untouched: still the run's own text (most of a monorepo's files).
                Some(f) if Arc::ptr_eq(&f.stream, &file.stream) => continue,
                Some(f) => f.stream.text.to_string(),
                None if is_new => String::new(),
                None => continue,
            };
            if *file.stream.text == *original {
                continue;
            }
            plan.files.push(FileFix {
                name: if is_new {
                    display_path(path)
                } else {
                    file.name.clone()
                },
                path: path.clone(),
                original,
                fixed: file.stream.text.to_string(),
                applied: applied.remove(&i).unwrap_or_default(),
                created: is_new,
            });
        }
        // A fix whose field could not be found again still counts: with the unit's first file.
        if let Some(f) = plan.files.get_mut(first) {
            f.applied.extend(applied.into_values().flatten());
        }
    }
}

/// The node a change set, in the object after the change.
fn changed_node<'n>(object: &'n Node, change: &FieldChange) -> Option<&'n Node> {
    let path: Vec<Segment> = match change {
        FieldChange::Set { path, .. } => path.clone(),
        FieldChange::Rename { path, to } => {
            let mut p = path.clone();
            *p.last_mut()? = Segment::Key(to.clone());
            p
        }
    };
    let mut node = object;
    for seg in &path {
        node = match seg {
            Segment::Key(k) => node.get(k)?,
            Segment::Index(i) => node.as_seq()?.get(*i)?,
        };
    }
    Some(node)
}

/// Whether two fixes write the same field.
fn touches_same(a: &Fix, b: &Fix) -> bool {
    let paths = |f: &Fix| -> Vec<Vec<Segment>> {
        f.changes
            .iter()
            .map(|c| match c {
                FieldChange::Set { path, .. } | FieldChange::Rename { path, .. } => path.clone(),
            })
            .collect()
    };
    let pb = paths(b);
    paths(a).iter().any(|p| pb.contains(p))
}
