//! Fixes on rendered Helm objects, written into the values that make them.
//!
//! Each field a fix changes is traced to its values leaf (`source::helm::values_origin`: the
//! one leaf whose change, rendered again, changes exactly that field). The leaf is edited in its
//! file (a values file, the chart's values.yaml, or the Application/HelmRelease that sets
//! inline values), keeping its quoting. A field with no unique leaf leaves the whole fix as a
//! suggestion. Before anything is written the release is rendered again with the edited values:
//! the fixed objects must equal the original render plus exactly the intended changes.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::error::FixError;
use super::plan::{place_in, AppliedFix, FileFix, FixPlan, Rejections, Target};
use crate::edit::{apply, apply_change, render_scalar, Edit, FieldChange};
use crate::lint::{Linter, Run};
use crate::rules::Finding;
use crate::source::document::plain;
use crate::source::helm::{self, HelmEngine, Release, ValuesSource};
use crate::source::kustomize::normalize;
use crate::source::repo::read_repo_text;
use crate::source::units::HelmUnit;
use crate::source::yaml::{ScalarStyle, Stream};

/// One Helm release being fixed: the values files its fixes edit.
pub(super) struct HelmTarget<'r> {
    engine: &'r HelmEngine,
    /// Where values files named by a release are looked up (the repository).
    repo_root: PathBuf,
    run: &'r Run,
    unit: &'r HelmUnit,
    /// The fixes that landed, with their values edits.
    taken: Vec<(Finding, Vec<LeafEdit>)>,
    /// (original, fixed) text of every values file they edit.
    outcome: BTreeMap<PathBuf, (String, String)>,
}

impl<'r> HelmTarget<'r> {
    pub(super) fn new(
        engine: &'r HelmEngine,
        linter: &Linter,
        run: &'r Run,
        unit: &'r HelmUnit,
    ) -> Self {
        HelmTarget {
            engine,
            repo_root: linter
                .render
                .boundary
                .clone()
                .unwrap_or_else(|| PathBuf::from(".")),
            run,
            unit,
            taken: Vec::new(),
            outcome: BTreeMap::new(),
        }
    }
}

/// An edit of a values leaf: the file, the byte range, the new text.
struct LeafEdit {
    file: PathBuf,
    edit: Edit,
}

/// The values edits one finding's fix needs, or why there are none.
fn leaf_edits(
    engine: &HelmEngine,
    unit: &HelmUnit,
    f: &Finding,
) -> Result<Vec<LeafEdit>, FixError> {
    let fix = f.fix.as_ref().ok_or(FixError::Inconsistent("no fix"))?;
    let mut edits = Vec::new();
    for change in &fix.changes {
        let (path, value) = match change {
            FieldChange::Set { path, value } => (path, value),
            FieldChange::Rename { path, to } => {
                edits.push(key_edit(engine, unit, fix.document, path, to)?);
                continue;
            }
        };
        let origin = unit
            .origin(engine, fix.document, path, helm::Purpose::Fix)
            .ok_or_else(|| FixError::NoValuesKey {
                field: display(path),
                suggested: fix.description.clone(),
            })?;
        let style = origin
            .node
            .as_scalar()
            .map_or(ScalarStyle::Plain, |s| s.style);
        edits.push(LeafEdit {
            file: origin.file.clone(),
            edit: Edit {
                start: origin.node.span.start(),
                end: origin.node.span.end(),
                content: render_scalar(value, style),
            },
        });
    }
    Ok(edits)
}

/// The edit that renames the values key behind the rendered key at `path` (GPU013 renames
/// `nvidia.com/gpu` in a `resources` map the chart renders whole, `toYaml .Values.resources`):
/// only when the values key is that same key, written in a values file, right before its value.
fn key_edit(
    engine: &HelmEngine,
    unit: &HelmUnit,
    document: usize,
    path: &[crate::source::document::Segment],
    to: &str,
) -> Result<LeafEdit, FixError> {
    let by_hand = || FixError::RenameInTemplate {
        field: display(path),
        to: to.to_string(),
    };
    let Some(crate::source::document::Segment::Key(from)) = path.last() else {
        return Err(by_hand());
    };
    let origin = unit
        .origin(engine, document, path, helm::Purpose::Fix)
        .ok_or_else(by_hand)?;
    if origin.key_path.last() != path.last() {
        return Err(by_hand());
    }
    let text = read_repo_text(&origin.file).map_err(|e| FixError::io(&origin.file, e))?;
    let (start, end, quote) =
        key_before(&text, origin.node.span.start(), from).ok_or_else(by_hand)?;
    Ok(LeafEdit {
        file: origin.file.clone(),
        edit: Edit {
            start,
            end,
            content: format!("{quote}{to}{quote}"),
        },
    })
}

/// The byte range of the mapping key `key` written right before the value at `value_start`
/// (`key: value`, `"key": value`), and its quote character (empty when plain).
fn key_before(text: &str, value_start: usize, key: &str) -> Option<(usize, usize, &'static str)> {
    let before = text.get(..value_start)?.trim_end();
    let before = before.strip_suffix(':')?.trim_end_matches(' ');
    for quote in ["", "\"", "'"] {
        let written = format!("{quote}{key}{quote}");
        if let Some(head) = before.strip_suffix(written.as_str()) {
            // The key must start its token: after indentation, `{` or `,`.
            if head.is_empty() || head.ends_with([' ', '\n', '{', ',', '\t']) {
                return Some((head.len(), before.len(), quote));
            }
        }
    }
    None
}

fn display(path: &[crate::source::document::Segment]) -> String {
    path.iter()
        .map(|s| match s {
            crate::source::document::Segment::Key(k) => format!(".{k}"),
            crate::source::document::Segment::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// A release is fixed in one round: linting it again would cost another `helm template`, and a
/// second `--fix` run picks up what a fix uncovers.
impl Target for HelmTarget<'_> {
    fn round(&mut self, findings: &[Finding], rejections: &mut Rejections) -> usize {
        let run = self.run;
        // Findings whose edits do not clash with those already taken (two rules asking for the
        // same value are one edit).
        let mut taken: Vec<(Finding, Vec<LeafEdit>)> = Vec::new();
        for f in findings {
            match leaf_edits(self.engine, self.unit, f) {
                Err(why) => rejections.reject(f, place_in(&run.files, f), why),
                Ok(edits) => {
                    let clash = taken.iter().flat_map(|(_, e)| e).any(|a| {
                        edits.iter().any(|b| {
                            a.file == b.file
                                && a.edit.start < b.edit.end.max(b.edit.start + 1)
                                && b.edit.start < a.edit.end.max(a.edit.start + 1)
                                && a.edit != b.edit
                        })
                    });
                    if clash {
                        rejections.reject(f, place_in(&run.files, f), FixError::SameValuesKey);
                    } else {
                        taken.push((f.clone(), edits));
                    }
                }
            }
        }
        if taken.is_empty() {
            return 0;
        }
        let verified = texts_after(&taken).and_then(|outcome| {
            let picked: Vec<&Finding> = taken.iter().map(|(f, _)| f).collect();
            verify(self.engine, &self.repo_root, self.unit, &picked, &outcome)?;
            Ok(outcome)
        });
        match verified {
            Ok(outcome) => {
                self.outcome = outcome;
                self.taken = taken;
                self.taken.len()
            }
            Err(why) => {
                for (f, _) in &taken {
                    rejections.reject(f, place_in(&run.files, f), why.clone());
                }
                0
            }
        }
    }

    fn relint(&self) -> Vec<Finding> {
        Vec::new()
    }

    fn finish(self, plan: &mut FixPlan) {
        let HelmTarget {
            run,
            unit,
            taken,
            outcome,
            ..
        } = self;
        for (path, (original, fixed)) in outcome {
            let name = crate::source::file::find_file(&run.files, &path).map_or_else(
                || crate::source::file::display_path(&path),
                |i| run.files[i].name.clone(),
            );
            let line_in = |f: &Finding| Stream::parse(&original).line_col(f.span.start()).0;
            let applied = taken
                .iter()
                .filter(|(_, edits)| edits.iter().any(|e| normalize(&e.file) == path))
                .map(|(f, _)| {
                    AppliedFix::of(
                        f,
                        line_in(f),
                        format!("{} ({})", f.object.display_name(), unit.name),
                    )
                })
                .collect();
            plan.files.push(FileFix {
                path,
                name,
                original,
                fixed,
                applied,
                created: false,
            });
        }
    }
}

/// (original, fixed) text of every edited file.
fn texts_after(
    taken: &[(Finding, Vec<LeafEdit>)],
) -> Result<BTreeMap<PathBuf, (String, String)>, FixError> {
    let mut by_file: BTreeMap<PathBuf, Vec<Edit>> = BTreeMap::new();
    for (_, edits) in taken {
        for e in edits {
            let list = by_file.entry(normalize(&e.file)).or_default();
            if !list.contains(&e.edit) {
                list.push(e.edit.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    for (path, edits) in by_file {
        let original = read_repo_text(&path).map_err(|e| FixError::io(&path, e))?;
        let fixed = apply(&original, &edits).ok_or(FixError::ValuesEditsOverlap)?;
        out.insert(path, (original, fixed));
    }
    Ok(out)
}

/// The release with its values files replaced by the edited texts (written to `tmp`).
fn edited_release(
    release: &Release,
    repo_root: &Path,
    outcome: &BTreeMap<PathBuf, (String, String)>,
    tmp: &Path,
) -> Result<Release, FixError> {
    let mut edited = release.clone();
    let write = |name: &str, text: &str| -> Result<PathBuf, FixError> {
        let p = tmp.join(name);
        std::fs::write(&p, text).map_err(|e| FixError::io(&p, e))?;
        Ok(p)
    };
    let chart_values = normalize(&release.chart.join("values.yaml"));
    let mut extra_first = None;
    if let Some((_, fixed)) = outcome.get(&chart_values) {
        // The chart's own defaults, edited: given first, so user values still win over them.
        extra_first = Some(ValuesSource::File(write("chart-values.yaml", fixed)?));
    }
    for i in 0..edited.values.len() {
        let declaring = normalize(edited.values[i].file());
        let Some((_, fixed)) = outcome.get(&declaring) else {
            continue;
        };
        match &edited.values[i] {
            ValuesSource::File(_) => {
                edited.values[i] = ValuesSource::File(write(&format!("values-{i}.yaml"), fixed)?);
            }
            ValuesSource::Inline { file, .. } | ValuesSource::Parameters { file, .. } => {
                // Read the manifest's values again from its edited text: the same release
                // declares the same sources, in the same order.
                let stream = Stream::parse(fixed);
                let again = helm::releases(
                    std::slice::from_ref(&release.chart),
                    &[(file.clone(), &stream)],
                    &[],
                    repo_root,
                );
                let same = again
                    .into_iter()
                    .find(|r| r.name == release.name && r.values.len() == release.values.len())
                    .and_then(|r| r.values.into_iter().nth(i))
                    .ok_or(FixError::ReleaseNotDeclared)?;
                edited.values[i] = same;
            }
        }
    }
    if let Some(first) = extra_first {
        edited.values.insert(0, first);
    }
    Ok(edited)
}

/// Renders the release with the edited values: every object must equal the original plus
/// exactly the intended changes (objects that differ between two plain renders, e.g. a
/// timestamp, are compared only where the fixes change them; the second plain render is made
/// only when an object the fixes do not touch came out different).
fn verify(
    engine: &HelmEngine,
    repo_root: &Path,
    unit: &HelmUnit,
    findings: &[&Finding],
    outcome: &BTreeMap<PathBuf, (String, String)>,
) -> Result<(), FixError> {
    // A fresh private folder (not a name another user could plant a symlink at), removed on drop.
    let tmp = tempfile::Builder::new()
        .prefix("gpulint-helm-fix-")
        .tempdir()
        .map_err(|e| FixError::io(&std::env::temp_dir(), e))?;
    let release = edited_release(&unit.release, repo_root, outcome, tmp.path())?;
    renders_as_intended(engine, unit, findings, &release)
}

/// Renders `release` (the unit's release with edited values): every object must equal the
/// unit's render plus exactly the intended changes of `findings`.
pub(super) fn renders_as_intended(
    engine: &HelmEngine,
    unit: &HelmUnit,
    findings: &[&Finding],
    release: &Release,
) -> Result<(), FixError> {
    let fixed = engine
        .template(release, None)
        .map_err(|e| FixError::ValuesDoNotRender(e.to_string()))?;
    let original: Vec<Json> = unit
        .rendered
        .stream
        .documents
        .iter()
        .map(|d| plain(&d.root))
        .collect();
    let mut expected = original.clone();
    let mut changed: HashSet<usize> = HashSet::new();
    for f in findings {
        let Some(fix) = &f.fix else { continue };
        let doc = expected
            .get_mut(fix.document)
            .ok_or(FixError::Inconsistent("object not found"))?;
        for change in &fix.changes {
            apply_change(doc, change).ok_or(FixError::Inconsistent("the change does not apply"))?;
        }
        changed.insert(fix.document);
    }
    let actual: Vec<Json> = fixed
        .stream
        .documents
        .iter()
        .map(|d| plain(&d.root))
        .collect();
    if actual.len() != expected.len() {
        return Err(FixError::DifferentObjects);
    }
    let differs: Vec<usize> = (0..actual.len())
        .filter(|&i| actual[i] != expected[i])
        .collect();
    if differs.iter().any(|i| changed.contains(i)) {
        return Err(FixError::ValuesRenderDiffers);
    }
    if differs.is_empty() {
        return Ok(());
    }
    // Objects the fixes do not touch differ: that is allowed only where two plain renders differ
    // too (a timestamp, a random name), which a second plain render shows.
    let control = engine
        .template(&unit.release, None)
        .map_err(|e| FixError::ReleaseDoesNotRender(e.to_string()))?;
    let noisy = |i: usize| {
        control
            .stream
            .documents
            .get(i)
            .is_some_and(|d| plain(&d.root) != original[i])
    };
    if control.stream.documents.len() != original.len() || !differs.into_iter().all(noisy) {
        return Err(FixError::ValuesRenderDiffers);
    }
    Ok(())
}

/// A fix of a release that a Flux HelmRelease inside a Kustomize render declares, as a fix of
/// that HelmRelease object (document `document` of the render): each rendered field's values
/// leaf becomes `spec.values.<leaf>` of the object. Where the HelmRelease's own values write
/// the leaf (in the base or an overlay's patch), the fix carries the edit there; otherwise (a
/// chart default, a values file) it carries none and the Kustomize target sets the key, as an
/// overlay patch where the base is shared. Whether the chart then renders exactly the intended
/// fields is checked with the Kustomize render ([`ReleaseFix`]).
pub(super) fn as_release_object_fix(
    engine: &HelmEngine,
    unit: &HelmUnit,
    document: usize,
    f: &Finding,
) -> Result<Finding, FixError> {
    use crate::source::document::Segment;
    use crate::source::helm::ValuesLayer;
    let fix = f.fix.as_ref().ok_or(FixError::Inconsistent("no fix"))?;
    // The HelmRelease's own `spec.values` among the release's values sources.
    let inline = unit
        .release
        .values
        .iter()
        .rposition(|v| matches!(v, ValuesSource::Inline { .. }));
    let mut changes: Vec<FieldChange> = Vec::new();
    let mut edits = Vec::new();
    let mut source = None;
    let mut in_place = true;
    for change in &fix.changes {
        let (path, value) = match change {
            FieldChange::Set { path, value } => (path, value),
            FieldChange::Rename { path, to } => {
                return Err(FixError::RenameInTemplate {
                    field: display(path),
                    to: to.clone(),
                })
            }
        };
        let origin = unit
            .origin(engine, fix.document, path, helm::Purpose::Fix)
            .ok_or_else(|| FixError::NoValuesKey {
                field: display(path),
                suggested: fix.description.clone(),
            })?;
        let mut at = vec![Segment::Key("spec".into()), Segment::Key("values".into())];
        at.extend(origin.key_path.iter().cloned());
        match changes
            .iter()
            .find(|c| matches!(c, FieldChange::Set { path, .. } if *path == at))
        {
            // The twin of a requests/limits pair: one leaf writes both.
            Some(FieldChange::Set { value: v, .. }) if v == value => continue,
            Some(_) => return Err(FixError::SameValuesKey),
            None => {}
        }
        changes.push(FieldChange::Set {
            path: at,
            value: value.clone(),
        });
        let written = origin.node.span.source;
        let own_values = inline.is_some_and(|i| origin.values == ValuesLayer::Release(i));
        if own_values && written.index().is_some() && source.is_none_or(|s| s == written) {
            source = Some(written);
            let style = origin
                .node
                .as_scalar()
                .map_or(ScalarStyle::Plain, |s| s.style);
            edits.push(Edit {
                start: origin.node.span.start(),
                end: origin.node.span.end(),
                content: render_scalar(value, style),
            });
        } else {
            in_place = false;
        }
    }
    if !in_place {
        edits.clear();
    }
    let mut g = f.clone();
    g.fix = Some(crate::edit::Fix {
        edits,
        source: source.unwrap_or_default(),
        document,
        changes,
        ..fix.clone()
    });
    Ok(g)
}

/// The Helm side of fixes written into a Flux HelmRelease inside a Kustomize render: the
/// release, where the HelmRelease sits in the render, and each fix as the HelmRelease's
/// (`as_release_object_fix`) with the finding on the chart's objects it comes from.
pub(super) struct ReleaseFix<'r> {
    pub engine: &'r HelmEngine,
    pub unit: &'r HelmUnit,
    pub document: usize,
    pub fixes: Vec<(Finding, Finding)>,
}

impl ReleaseFix<'_> {
    /// With the render `objects` the Kustomize fixes give: the chart, rendered with the
    /// HelmRelease's values as they are now, must give exactly the intended fields of the
    /// findings among `taken` (HelmRelease fixes).
    pub(super) fn check(
        &self,
        taken: &[&Finding],
        objects: &[crate::source::yaml::Node],
    ) -> Result<(), FixError> {
        let same = |a: &Finding, b: &Finding| {
            a.rule.id == b.rule.id
                && a.fix.as_ref().map(|x| (&x.changes, x.document))
                    == b.fix.as_ref().map(|x| (&x.changes, x.document))
        };
        let originals: Vec<&Finding> = self
            .fixes
            .iter()
            .filter(|(as_object, _)| taken.iter().any(|t| same(t, as_object)))
            .map(|(_, original)| original)
            .collect();
        if originals.is_empty() {
            return Ok(());
        }
        let object = objects
            .get(self.document)
            .ok_or(FixError::Inconsistent("object not found"))?;
        let values = object
            .get_path(&["spec", "values"])
            .ok_or(FixError::ReleaseNotDeclared)?;
        let mut release = self.unit.release.clone();
        let file = release
            .declared_in
            .clone()
            .ok_or(FixError::ReleaseNotDeclared)?;
        let inline = ValuesSource::Inline {
            file,
            node: values.clone(),
        };
        // Flux merges `spec.values` last, over `valuesFiles`.
        match release
            .values
            .iter()
            .rposition(|v| matches!(v, ValuesSource::Inline { .. }))
        {
            Some(i) => release.values[i] = inline,
            None => release.values.push(inline),
        }
        renders_as_intended(self.engine, self.unit, &originals, &release)
    }
}
