//! Plans fixes for a run and writes them: non-overlapping fixes are applied together, verified
//! (re-parsed, only the intended fields changed), and the file is linted again until nothing
//! changes (bounded, like ruff). Nothing is written until every file's fixed text is known;
//! `write.rs` writes them.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::edit::{apply, overlaps, verify, Applicability, ChangeNote, Fix, Rejected};
use crate::lint::{repo_facts, Linter, Run};
use crate::rules::Finding;
use crate::source::discover::Input;
use crate::source::document::Segment;
use crate::source::file::SourceFile;
use crate::source::yaml::Stream;

/// Re-lint rounds per file: overlapping fixes are applied one round after the other.
const MAX_ROUNDS: usize = 10;

#[derive(Clone, Debug)]
pub struct AppliedFix {
    pub rule: &'static str,
    /// 1-based line (in the text as fixed by the rounds before).
    pub line: usize,
    pub object: String,
    pub description: String,
    /// The value changes behind `description` (folded into net changes by [`net_changes`]).
    pub notes: Vec<ChangeNote>,
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
        }
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

/// A fix that was dropped because verification failed.
#[derive(Clone, Debug)]
pub struct RejectedFix {
    pub file: String,
    pub line: usize,
    pub rule: &'static str,
    pub reason: String,
}

impl RejectedFix {
    /// A dropped fix, placed at its finding.
    pub(super) fn at(files: &[SourceFile], f: &Finding, reason: String) -> RejectedFix {
        let file = files.get(f.file);
        RejectedFix {
            file: file.map(|x| x.name.clone()).unwrap_or_default(),
            line: file.map_or(0, |x| x.stream.line_col(f.span.start()).0),
            rule: f.rule.id,
            reason,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct FixPlan {
    pub files: Vec<FileFix>,
    pub rejected: Vec<RejectedFix>,
    /// Fixable findings in stdin, which cannot be fixed in place.
    pub stdin_fixable: usize,
    /// Fixable findings left out because their fix is unsafe and `--unsafe-fixes` was not given.
    pub unsafe_skipped: usize,
}

/// Findings whose fix is unsafe and left out because `--unsafe-fixes` was not given.
pub(super) fn skipped_unsafe(findings: &[&Finding], unsafe_fixes: bool) -> usize {
    if unsafe_fixes {
        return 0;
    }
    findings
        .iter()
        .filter(|f| f.suppression.is_none())
        .filter(|f| {
            f.fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Unsafe)
        })
        .count()
}

pub(super) fn allowed(f: &Finding, unsafe_fixes: bool) -> bool {
    f.suppression.is_none()
        && f.fix
            .as_ref()
            .is_some_and(|fix| unsafe_fixes || fix.applicability == Applicability::Safe)
}

fn fix_id(f: &Finding) -> (&'static str, String) {
    let desc = f
        .fix
        .as_ref()
        .map(|x| x.description.clone())
        .unwrap_or_default();
    (f.rule.id, format!("{}:{desc}", f.object.display_name()))
}

/// Computes the fixed text of every file with fixable findings.
pub fn plan(linter: &Linter, run: &Run, unsafe_fixes: bool) -> FixPlan {
    let facts = repo_facts(&run.files, &run.units, &run.releases);
    let mut plan = FixPlan::default();
    for (index, file) in run.files.iter().enumerate() {
        let findings: Vec<&Finding> = run
            .findings
            .iter()
            .filter(|f| f.file == index && f.unit.is_none() && f.release.is_none())
            .collect();
        plan.unsafe_skipped += skipped_unsafe(&findings, unsafe_fixes);
        let fixable: Vec<Finding> = findings
            .into_iter()
            .filter(|f| allowed(f, unsafe_fixes))
            .cloned()
            .collect();
        if fixable.is_empty() {
            continue;
        }
        let Input::File(path) = &file.input else {
            plan.stdin_fixable += fixable.len();
            continue;
        };
        let mut state = FileState::new(file);
        state.run(linter, &facts, index, fixable, unsafe_fixes);
        plan.rejected.extend(state.rejected);
        if state.text.as_str() != &*file.stream.text {
            plan.files.push(FileFix {
                path: path.clone(),
                name: file.name.clone(),
                original: file.stream.text.to_string(),
                fixed: state.text,
                applied: state.applied,
                created: false,
            });
        }
    }
    super::kustomize::plan_units(linter, run, unsafe_fixes, &mut plan);
    super::helm::plan_releases(linter, run, unsafe_fixes, &mut plan);
    for f in &mut plan.files {
        f.applied = net_changes(std::mem::take(&mut f.applied));
    }
    plan
}

struct FileState<'f> {
    file: &'f SourceFile,
    text: String,
    stream: Stream,
    applied: Vec<AppliedFix>,
    rejected: Vec<RejectedFix>,
    /// Fixes that failed verification once: never retried.
    dropped: HashSet<(&'static str, String)>,
}

impl<'f> FileState<'f> {
    fn new(file: &'f SourceFile) -> Self {
        FileState {
            file,
            text: file.stream.text.to_string(),
            stream: (*file.stream).clone(),
            applied: Vec::new(),
            rejected: Vec::new(),
            dropped: HashSet::new(),
        }
    }

    fn line_of(&self, f: &Finding) -> usize {
        self.stream.line_col(f.span.start()).0
    }

    fn reject(&mut self, f: &Finding, why: Rejected) {
        let reason = match why {
            Rejected::Unparsable(e) => format!("the fixed file would not parse: {e}"),
            Rejected::Unintended => {
                "the edit would change more than the intended field (an anchor/alias or an \
                 unusual layout); fix it by hand"
                    .to_string()
            }
        };
        self.rejected.push(RejectedFix {
            file: self.file.name.clone(),
            line: self.line_of(f),
            rule: f.rule.id,
            reason,
        });
        self.dropped.insert(fix_id(f));
    }

    fn try_apply(&self, picked: &[&Finding]) -> Result<(String, Stream), Rejected> {
        let fixes: Vec<&Fix> = picked.iter().filter_map(|f| f.fix.as_ref()).collect();
        let edits: Vec<_> = fixes.iter().flat_map(|f| f.edits.iter().cloned()).collect();
        let fixed = apply(&self.text, &edits).ok_or(Rejected::Unintended)?;
        let stream = verify(&self.stream, &fixed, &fixes)?;
        Ok((fixed, stream))
    }

    fn run(
        &mut self,
        linter: &Linter,
        facts: &crate::rules::RepoFacts,
        index: usize,
        mut findings: Vec<Finding>,
        unsafe_fixes: bool,
    ) {
        for _ in 0..MAX_ROUNDS {
            findings.retain(|f| allowed(f, unsafe_fixes) && !self.dropped.contains(&fix_id(f)));
            findings.sort_by_key(|f| {
                f.fix
                    .as_ref()
                    .and_then(|x| x.edits.first())
                    .map(|e| e.start)
            });
            let mut picked: Vec<&Finding> = Vec::new();
            for f in &findings {
                let fix = f.fix.as_ref();
                if fix.is_some_and(|x| {
                    picked
                        .iter()
                        .all(|p| p.fix.as_ref().is_none_or(|y| !overlaps(x, y)))
                }) {
                    picked.push(f);
                }
            }
            if picked.is_empty() {
                return;
            }
            let outcome = match self.try_apply(&picked) {
                Ok(done) => Some((done, picked.clone())),
                Err(_) => {
                    // Find the culprits: keep the fixes that verify on their own.
                    let mut good = Vec::new();
                    for f in &picked {
                        match self.try_apply(&[f]) {
                            Ok(_) => good.push(*f),
                            Err(why) => self.reject(f, why),
                        }
                    }
                    match self.try_apply(&good) {
                        Ok(done) => Some((done, good)),
                        Err(_) => good
                            .first()
                            .and_then(|f| self.try_apply(&[f]).ok().map(|d| (d, vec![*f]))),
                    }
                }
            };
            let Some(((fixed, stream), used)) = outcome else {
                return;
            };
            for f in &used {
                let line = self.line_of(f);
                self.applied
                    .push(AppliedFix::of(f, line, f.object.display_name()));
            }
            self.text = fixed;
            self.stream = stream;
            let relinted = SourceFile {
                input: self.file.input.clone(),
                name: self.file.name.clone(),
                stream: std::sync::Arc::new(self.stream.clone()),
                role: self.file.role,
            };
            findings = linter.lint_file(facts, index, &relinted);
        }
    }
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
