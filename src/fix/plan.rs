//! The plan of a `--fix` run: which findings' fixes land, where, and the fixed text of every
//! file, known before anything is written (`write.rs` writes them).
//!
//! One driver for every origin. The findings of a run are grouped by where their object was
//! read from (`rules::Origin`): a plain file, the render of a Kustomize root, a Helm release.
//! Each group is a [`Target`] (`file.rs`, `kustomize.rs`, `helm.rs`), fixed in rounds like ruff
//! does: the fixes that do not clash are applied together and verified, the target is linted
//! again, and what is still fixable (a fix that clashed, or one a fix uncovered) goes in the
//! next round, up to [`MAX_ROUNDS`]. A fix that fails verification is rejected once, with its
//! reason, and never retried.

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use super::error::FixError;
use super::file::FileTarget;
use super::helm::{as_release_object_fix, HelmTarget, ReleaseFix};
use super::kustomize::{KustomizeTarget, RepoReaders, SharedFiles};
use crate::edit::{Applicability, ChangeNote, Fix};
use crate::k8s::workload::ObjectRef;
use crate::lint::{Linter, Run};
use crate::rules::{Finding, FixStatus, Origin};
use crate::source::document::Segment;
use crate::source::file::SourceFile;
use crate::source::yaml::Stream;

/// Fix rounds per target: fixes that clash are applied one round after the other.
pub(super) const MAX_ROUNDS: usize = 10;

/// Everything `--fix` would do, before it does it.
#[derive(Clone, Debug, Default)]
pub struct FixPlan {
    pub files: Vec<FileFix>,
    pub rejected: Vec<RejectedFix>,
    /// Fixable findings in stdin, which cannot be fixed in place.
    pub stdin_fixable: usize,
    /// Fixable findings left out because their fix is unsafe and `--unsafe-fixes` was not given.
    pub unsafe_skipped: usize,
    /// Findings of a root several clusters apply whose fix the root's first unit writes: each
    /// key, with the key of the finding that writes it.
    pub covered: Vec<(FixKey, FixKey)>,
    /// What the plan did with each finding it was given (see [`set_status`]).
    pub outcomes: Outcomes,
    /// The parse of each fixed plain file's `fixed` text, by path (made when the fix was
    /// verified): the relint after the write takes it for a file that holds exactly that text
    /// instead of parsing the file again.
    pub parsed: HashMap<PathBuf, Arc<Stream>>,
    /// What planning cost: counted so tests can hold it to a bound (times are in `bench/`).
    pub work: PlanWork,
}

/// The work a plan did, in counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanWork {
    /// Renders of Kustomize units made to verify their fixes.
    pub kustomize_renders: usize,
    /// Renders of roots outside the run, made to learn whether another render reads a file a
    /// fix would edit: only those whose kustomization files lead to the run's files.
    pub reader_renders: usize,
    /// Times the run's files were shared out for the units' fixes: once per plan, however
    /// many units (per unit, or per render, it made a monorepo's lint 15 times slower).
    pub file_sets: usize,
}

/// Which finding a fix is for, across the rounds of its target: the origin it lands through,
/// the rule, the object and the container (a finding found again after a round has a new span
/// and may have a new value, but the same key).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FixKey {
    origin: Origin,
    /// The file of a plain file's finding (a render's findings are keyed by the render).
    file: Option<usize>,
    rule: &'static str,
    object: String,
    container: Option<String>,
}

impl FixKey {
    pub fn of(f: &Finding) -> FixKey {
        FixKey {
            origin: f.origin,
            file: (f.origin == Origin::File).then_some(f.file),
            rule: f.rule.id,
            object: f.object.display_name(),
            container: f.container.clone(),
        }
    }

    fn in_origin(mut self, origin: Origin) -> FixKey {
        self.origin = origin;
        self
    }
}

/// A fixed file, not written yet.
#[derive(Clone, Debug)]
pub struct FileFix {
    pub path: PathBuf,
    pub name: String,
    pub original: String,
    pub fixed: String,
    pub applied: Vec<AppliedFix>,
    /// A new file (an overlay patch the fix adds): it must not exist when written.
    pub created: bool,
}

/// A fix that landed in a file.
#[derive(Clone, Debug)]
pub struct AppliedFix {
    pub rule: &'static str,
    /// 1-based line (in the text as fixed by the rounds before).
    pub line: usize,
    pub object: String,
    pub description: String,
    /// The value changes behind `description` (folded into net changes by [`net_changes`]).
    pub notes: Vec<ChangeNote>,
    /// The finding it fixes.
    pub key: FixKey,
}

impl AppliedFix {
    /// The fix of finding `f`, applied at `line` of its file, on `object` (as shown).
    pub(super) fn of(f: &Finding, line: usize, object: String) -> AppliedFix {
        AppliedFix {
            rule: f.rule.id,
            line,
            object,
            description: f
                .fix
                .as_ref()
                .map(|x| x.description.clone())
                .unwrap_or_default(),
            notes: f.fix.as_ref().map(|x| x.notes.clone()).unwrap_or_default(),
            key: FixKey::of(f),
        }
    }
}

/// A fix that was dropped because it could not be written or verified.
#[derive(Clone, Debug)]
pub struct RejectedFix {
    pub file: String,
    pub line: usize,
    pub rule: &'static str,
    pub reason: FixError,
    /// The render (Kustomize root, Helm release) whose fix it is; `None` for a plain file.
    pub render: Option<String>,
    /// The finding it is for.
    pub key: FixKey,
}

impl RejectedFix {
    /// Its `not fixed:` line, without the prefix: `FILE:LINE: RULE: reason [render of R]`.
    pub fn describe(&self) -> String {
        let render = self
            .render
            .as_ref()
            .map(|r| format!(" [render of {r}]"))
            .unwrap_or_default();
        format!(
            "{}:{}: {}: {}{render}",
            self.file, self.line, self.rule, self.reason
        )
    }
}

/// The fixes that could not be written, and which fixes are therefore never tried again.
#[derive(Default)]
pub(super) struct Rejections {
    list: Vec<RejectedFix>,
    dropped: HashSet<FixId>,
}

impl Rejections {
    /// Rejects `f`'s fix, shown at `line` of `file`.
    pub(super) fn reject(&mut self, f: &Finding, (file, line): (String, usize), why: FixError) {
        self.list.push(RejectedFix {
            file,
            line,
            rule: f.rule.id,
            reason: why,
            render: None,
            key: FixKey::of(f),
        });
        self.dropped.insert(FixId::of(f));
    }

    fn dropped(&self, f: &Finding) -> bool {
        self.dropped.contains(&FixId::of(f))
    }
}

/// Where a rejection of `f` is shown: the line of its span in `files` (the texts as fixed so far).
pub(super) fn place_in<F: Borrow<SourceFile>>(files: &[F], f: &Finding) -> (String, usize) {
    let file = files.get(f.file).map(Borrow::borrow);
    (
        file.map(|x| x.name.clone()).unwrap_or_default(),
        file.map_or(0, |x| x.stream.line_col(f.span.start()).0),
    )
}

/// A fix across rounds: a finding found again after a round has a new span, but the same rule,
/// object and fix.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FixId {
    rule: &'static str,
    fix: String,
}

impl FixId {
    fn of(f: &Finding) -> FixId {
        let description = f.fix.as_ref().map_or("", |x| x.description.as_str());
        FixId {
            rule: f.rule.id,
            fix: format!("{}:{description}", f.object.display_name()),
        }
    }
}

/// Where a group of findings' fixes land: a plain file, a Kustomize unit or a Helm release.
pub(super) trait Target {
    /// Applies what it can of `findings` (this round's fixable ones) together, verified, and
    /// rejects (with their place in the text as fixed so far) the fixes that cannot land.
    /// Returns how many fixes landed; none ends the rounds.
    fn round(&mut self, findings: &[Finding], rejections: &mut Rejections) -> usize;
    /// The target's findings as fixed so far: what the next round may fix.
    fn relint(&self) -> Vec<Finding>;
    /// Puts the files the rounds changed into the plan.
    fn finish(self, plan: &mut FixPlan);
}

/// Whether `--fix` may apply `f`'s fix: it has one, it is not suppressed, and it is safe (or
/// `--unsafe-fixes` was given).
pub(super) fn allowed(f: &Finding, unsafe_fixes: bool) -> bool {
    f.suppression.is_none()
        && f.fix
            .as_ref()
            .is_some_and(|fix| unsafe_fixes || fix.applicability == Applicability::Safe)
}

/// Fixes `target` in rounds, then hands its files and rejections to the plan.
fn fix_in_rounds(
    mut target: impl Target,
    mut findings: Vec<Finding>,
    unsafe_fixes: bool,
    narrowed: bool,
    render: Option<&str>,
    plan: &mut FixPlan,
) {
    let mut rejections = Rejections::default();
    // A narrowed run (named files, a base folder, --changed-since) reports some findings of a
    // render: its later rounds fix those only (by rule, object and container), never the
    // render's other findings behind the report's back. A whole run fixes what each round finds.
    let scope: Option<Vec<(&'static str, ObjectRef, Option<String>)>> = narrowed.then(|| {
        findings
            .iter()
            .map(|f| (f.rule.id, f.object.clone(), f.container.clone()))
            .collect()
    });
    let in_scope = |f: &Finding| {
        scope.as_ref().is_none_or(|s| {
            s.iter()
                .any(|(r, o, c)| *r == f.rule.id && *o == f.object && *c == f.container)
        })
    };
    for _ in 0..MAX_ROUNDS {
        findings.retain(|f| allowed(f, unsafe_fixes) && !rejections.dropped(f) && in_scope(f));
        if findings.is_empty() || target.round(&findings, &mut rejections) == 0 {
            break;
        }
        findings = target.relint();
    }
    for r in &mut rejections.list {
        r.render = render.map(str::to_string);
    }
    plan.rejected.extend(rejections.list);
    target.finish(plan);
}

/// The fixable findings of one origin; counts those left out for being unsafe.
fn fixable_of(findings: &[&Finding], unsafe_fixes: bool, plan: &mut FixPlan) -> Vec<Finding> {
    let mut fixable = Vec::new();
    for f in findings {
        if allowed(f, unsafe_fixes) {
            fixable.push((*f).clone());
        } else if f.suppression.is_none()
            && f.fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Unsafe)
        {
            plan.unsafe_skipped += 1;
        }
    }
    fixable
}

/// The run's findings by origin: per plain file, per Kustomize unit, per Helm release (one
/// pass, so a run with thousands of files does not scan every finding once per file).
struct ByOrigin<'r> {
    files: Vec<Vec<&'r Finding>>,
    units: Vec<Vec<&'r Finding>>,
    releases: Vec<Vec<&'r Finding>>,
}

impl<'r> ByOrigin<'r> {
    fn of(run: &'r Run) -> Self {
        let mut by = ByOrigin {
            files: vec![Vec::new(); run.files.len()],
            units: vec![Vec::new(); run.units.len()],
            releases: vec![Vec::new(); run.releases.len()],
        };
        for f in &run.findings {
            let slot = match f.origin {
                Origin::File => by.files.get_mut(f.file),
                Origin::Kustomize(i) => by.units.get_mut(i),
                Origin::Helm(i) => by.releases.get_mut(i),
            };
            if let Some(slot) = slot {
                slot.push(f);
            }
        }
        by
    }
}

/// Computes the fixed text of every file the run's fixable findings touch: plain files first,
/// then Kustomize units, then Helm releases, each fixed in rounds.
pub fn plan(linter: &Linter, run: &Run, unsafe_fixes: bool) -> FixPlan {
    let facts = &run.facts;
    let by_origin = ByOrigin::of(run);
    // Plain files are independent of each other: planned on every core, merged in file order.
    let per_file: Vec<FixPlan> = run
        .files
        .par_iter()
        .enumerate()
        .map(|(index, file)| {
            let mut part = FixPlan::default();
            let mut fixable = fixable_of(&by_origin.files[index], unsafe_fixes, &mut part);
            // A file several clusters apply cannot take one cluster's measured value.
            let clusters = run.placement.files.get(&index).filter(|c| c.len() > 1);
            if let Some(clusters) = clusters {
                let mut rejections = Rejections::default();
                fixable.retain(|f| {
                    let measured = f.is_measured();
                    if measured {
                        let line = file.stream.line_col(f.span.start()).0;
                        let why = FixError::SharedByClusters {
                            clusters: clusters.join(", "),
                        };
                        rejections.reject(f, (file.name.clone(), line), why);
                    }
                    !measured
                });
                part.rejected.extend(rejections.list);
            }
            if fixable.is_empty() {
                return part;
            }
            match FileTarget::new(linter, facts, &run.placement, index, file) {
                Some(target) => {
                    fix_in_rounds(target, fixable, unsafe_fixes, run.narrowed, None, &mut part)
                }
                None => part.stdin_fixable += fixable.len(),
            }
            part
        })
        .collect();
    let mut plan = FixPlan::default();
    for part in per_file {
        plan.files.extend(part.files);
        plan.parsed.extend(part.parsed);
        plan.rejected.extend(part.rejected);
        plan.stdin_fixable += part.stdin_fixable;
        plan.unsafe_skipped += part.unsafe_skipped;
    }
    // A release that a Flux HelmRelease inside a render declares is fixed through that
    // HelmRelease object, by its render's target: its values are the object's `spec.values`.
    let mut release_fixes: Vec<Vec<ReleaseFix>> =
        (0..run.units.len()).map(|_| Vec::new()).collect();
    if let Some(engine) = &linter.helm {
        for (index, unit) in run.releases.iter().enumerate() {
            let Some((render, document)) = unit.release.rendered_from else {
                continue;
            };
            let fixable = fixable_of(&by_origin.releases[index], unsafe_fixes, &mut plan);
            let mut rejections = Rejections::default();
            let fixes = fixable
                .into_iter()
                .filter_map(
                    |f| match as_release_object_fix(engine, unit, document, &f) {
                        Ok(as_object) => Some((as_object, f)),
                        Err(why) => {
                            rejections.reject(&f, place_in(&run.files, &f), why);
                            None
                        }
                    },
                )
                .collect::<Vec<_>>();
            plan.rejected.extend(rejections.list);
            if let (false, Some(slot)) = (fixes.is_empty(), release_fixes.get_mut(render)) {
                slot.push(ReleaseFix {
                    engine,
                    unit,
                    document,
                    fixes,
                });
            }
        }
    }
    // The run's files, shared out once and only when a unit has fixes, with which renders read
    // a file a fix would edit (asked file by file).
    let mut shared: Option<(SharedFiles, RepoReaders)> = None;
    for (index, unit) in run.units.iter().enumerate() {
        let releases = std::mem::take(&mut release_fixes[index]);
        let mut fixable = fixable_of(&by_origin.units[index], unsafe_fixes, &mut plan);
        fixable.extend(
            releases
                .iter()
                .flat_map(|r| r.fixes.iter().map(|(as_object, _)| as_object.clone())),
        );
        // A root several clusters apply is one unit each: the first takes the fixes that do
        // not depend on the cluster; each says why its measured ones are not written.
        let first = run.units.iter().position(|u| u.dir == unit.dir);
        if let Some(first) = first.filter(|&i| i != index) {
            fixable.retain(|f| {
                let measured = f.is_measured();
                if !measured {
                    let key = FixKey::of(f);
                    let by = key.clone().in_origin(Origin::Kustomize(first));
                    plan.covered.push((key, by));
                }
                measured
            });
        }
        if fixable.is_empty() {
            continue;
        }
        let (files, readers) = shared.get_or_insert_with(|| {
            plan.work.file_sets += 1;
            (SharedFiles::of(run), RepoReaders::of(linter, run))
        });
        let target = KustomizeTarget::new(linter, run, facts, readers, files, index, unit)
            .with_releases(releases);
        fix_in_rounds(
            target,
            fixable,
            unsafe_fixes,
            run.narrowed,
            Some(&unit.name),
            &mut plan,
        );
    }
    if let Some((_, readers)) = &shared {
        plan.work.reader_renders += readers.renders.get();
    }
    if let Some(engine) = &linter.helm {
        for (index, unit) in run.releases.iter().enumerate() {
            if unit.release.rendered_from.is_some() {
                continue;
            }
            let fixable = fixable_of(&by_origin.releases[index], unsafe_fixes, &mut plan);
            if fixable.is_empty() {
                continue;
            }
            let target = HelmTarget::new(engine, linter, run, unit);
            fix_in_rounds(
                target,
                fixable,
                unsafe_fixes,
                run.narrowed,
                Some(&unit.name),
                &mut plan,
            );
        }
    }
    mark(run, &mut plan, unsafe_fixes);
    for f in &mut plan.files {
        f.applied = net_changes(std::mem::take(&mut f.applied));
    }
    plan
}

/// What the plan does with each finding it was given, by key: written, or refused (why).
#[derive(Clone, Debug, Default)]
pub struct Outcomes {
    landed: HashSet<FixKey>,
    refused: HashMap<FixKey, String>,
    /// The keys `--fix` considered (those it may apply).
    planned: HashSet<FixKey>,
}

/// Whether the fixes of `others` set every field `fix` sets, to the same value, in the same
/// document: it lands with them (RES001 raising a limit that MEM001's requests = limits sets
/// too), and is fixed, not left for a later round another rule's finding would take.
pub(super) fn lands_with(fix: &Fix, others: &[&Finding]) -> bool {
    !fix.changes.is_empty()
        && fix.changes.iter().all(|c| {
            others
                .iter()
                .filter_map(|o| o.fix.as_ref())
                .any(|o| o.document == fix.document && o.changes.contains(c))
        })
}

/// Records the plan's outcome per finding key, before `net_changes` folds fixes away.
fn mark(run: &Run, plan: &mut FixPlan, unsafe_fixes: bool) {
    let mut out = Outcomes::default();
    for a in plan.files.iter().flat_map(|f| &f.applied) {
        out.landed.insert(a.key.clone());
    }
    for (key, by) in &plan.covered {
        if out.landed.contains(by) {
            out.landed.insert(key.clone());
        }
    }
    for r in &plan.rejected {
        out.refused
            .entry(r.key.clone())
            .or_insert_with(|| r.reason.to_string());
    }
    for f in &run.findings {
        if allowed(f, unsafe_fixes) {
            out.planned.insert(FixKey::of(f));
        }
    }
    plan.outcomes = out;
}

/// Sets each finding's `fix_status` from the plan of this run (the same findings): a fix is
/// fixable when this run's `--fix` writes it, not because the rule attached one.
pub fn set_status(findings: &mut [Finding], plan: &FixPlan) {
    let out = &plan.outcomes;
    for f in findings {
        let key = FixKey::of(f);
        if !out.planned.contains(&key) {
            continue;
        }
        f.fix_status = Some(if out.landed.contains(&key) {
            FixStatus::Lands
        } else if let Some(why) = out.refused.get(&key) {
            FixStatus::Refused(why.clone())
        } else {
            FixStatus::NotWritten
        });
    }
}

/// Folds the fixes of all rounds into one net change per field: a field set in round 1
/// (`48Gi -> 64Gi`) and again in round 2 (`64Gi -> 22Gi`) is reported once, `48Gi -> 22Gi`, at
/// the fix that set its final value; a field set back to its original value is dropped, and so
/// is a fix left with nothing to report. Fixes without notes (renames) stay as they are.
pub fn net_changes(applied: Vec<AppliedFix>) -> Vec<AppliedFix> {
    // Per fix: whether it had notes, and its notes; a note is taken out of an earlier fix
    // (None) when a later fix sets the field again.
    let mut entries: Vec<(AppliedFix, bool, Vec<Option<ChangeNote>>)> = Vec::new();
    // (object, field) -> (entry, note)
    let mut last: HashMap<(String, Vec<Segment>), (usize, usize)> = HashMap::new();
    for mut a in applied {
        let notes = std::mem::take(&mut a.notes);
        let had_notes = !notes.is_empty();
        let i = entries.len();
        let mut kept: Vec<Option<ChangeNote>> = Vec::new();
        for mut n in notes {
            let key = (a.object.clone(), n.path.clone());
            if let Some((pi, pj)) = last.insert(key, (i, kept.len())) {
                if let Some(earlier) = entries[pi].2[pj].take() {
                    n.from = earlier.from;
                }
            }
            kept.push(Some(n));
        }
        entries.push((a, had_notes, kept));
    }
    entries
        .into_iter()
        .filter_map(|(mut a, had_notes, notes)| {
            if !had_notes {
                return Some(a); // a rename: as it was
            }
            a.notes = notes
                .into_iter()
                .flatten()
                .filter(|n| n.from != n.to)
                .collect();
            a.description = a
                .notes
                .iter()
                .map(ChangeNote::describe)
                .collect::<Vec<_>>()
                .join(", ");
            (!a.notes.is_empty()).then_some(a)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(field: &str, from: &str, to: &str) -> ChangeNote {
        ChangeNote {
            path: vec![Segment::Key(field.into())],
            label: field.into(),
            from: from.into(),
            to: to.into(),
        }
    }

    fn applied(rule: &'static str, object: &str, notes: Vec<ChangeNote>) -> AppliedFix {
        AppliedFix {
            rule,
            line: 1,
            object: object.into(),
            description: "as planned".into(),
            notes,
            key: FixKey {
                origin: Origin::File,
                file: Some(0),
                rule,
                object: object.into(),
                container: None,
            },
        }
    }

    #[test]
    fn each_field_is_reported_once_with_its_net_change() {
        let rounds = vec![
            applied(
                "QOS002",
                "llm",
                vec![note("requests.memory", "48Gi", "64Gi")],
            ),
            applied("GPU002", "llm", vec![note("requests.gpu", "2", "1")]),
            applied(
                "MEM002",
                "llm",
                vec![
                    note("requests.memory", "64Gi", "22Gi"),
                    note("limits.memory", "64Gi", "22Gi"),
                ],
            ),
            // The same field of another object is another change.
            applied(
                "MEM002",
                "other",
                vec![note("requests.memory", "8Gi", "4Gi")],
            ),
            // Set and set back: no net change, nothing to report.
            applied("CPU001", "llm", vec![note("requests.cpu", "4", "2")]),
            applied("CPU001", "llm", vec![note("requests.cpu", "2", "4")]),
            // A rename has no notes and stays.
            applied("GPU004", "llm", Vec::new()),
        ];
        let net = net_changes(rounds);
        let got: Vec<(&str, &str, &str)> = net
            .iter()
            .map(|a| (a.rule, a.object.as_str(), a.description.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("GPU002", "llm", "requests.gpu: 2 -> 1"),
                (
                    "MEM002",
                    "llm",
                    "requests.memory: 48Gi -> 22Gi, limits.memory: 64Gi -> 22Gi"
                ),
                ("MEM002", "other", "requests.memory: 8Gi -> 4Gi"),
                ("GPU004", "llm", "as planned"),
            ]
        );
    }
}
