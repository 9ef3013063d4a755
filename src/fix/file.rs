//! Fixes in a plain file: the rule's edits, applied to the file's text together when they do not
//! overlap, and verified by parsing the result again (only the intended fields may change).

use std::sync::Arc;

use crate::edit::{apply, overlaps, verify, Fix};
use crate::lint::Linter;
use crate::rules::Finding;
use crate::source::discover::Input;
use crate::source::file::SourceFile;
use crate::source::yaml::Stream;

use super::error::FixError;
use super::plan::{lands_with, AppliedFix, FileFix, FixPlan, Rejections, Target};

/// One plain file being fixed: its text as fixed by the rounds so far.
pub(super) struct FileTarget<'f> {
    linter: &'f Linter,
    facts: &'f crate::lint::Facts,
    placement: &'f crate::deploy::Placement,
    index: usize,
    file: &'f SourceFile,
    text: String,
    /// The parse of `text` (shared with the relint, not copied).
    stream: Arc<Stream>,
    applied: Vec<AppliedFix>,
}

impl<'f> FileTarget<'f> {
    /// The target for the run's file `index`; `None` for stdin, which cannot be fixed in place.
    pub(super) fn new(
        linter: &'f Linter,
        facts: &'f crate::lint::Facts,
        placement: &'f crate::deploy::Placement,
        index: usize,
        file: &'f SourceFile,
    ) -> Option<Self> {
        let Input::File(_) = &file.input else {
            return None;
        };
        Some(FileTarget {
            linter,
            facts,
            placement,
            index,
            file,
            text: file.stream.text.to_string(),
            stream: file.stream.clone(),
            applied: Vec::new(),
        })
    }

    fn line_of(&self, f: &Finding) -> usize {
        self.stream.line_col(f.span.start()).0
    }

    fn place(&self, f: &Finding) -> (String, usize) {
        (self.file.name.clone(), self.line_of(f))
    }

    fn try_apply(&self, picked: &[&Finding]) -> Result<(String, Stream), FixError> {
        let fixes: Vec<&Fix> = picked.iter().filter_map(|f| f.fix.as_ref()).collect();
        let edits: Vec<_> = fixes.iter().flat_map(|f| f.edits.iter().cloned()).collect();
        let fixed = apply(&self.text, &edits).ok_or(FixError::Unintended)?;
        let stream = verify(&self.stream, &fixed, &fixes)?;
        Ok((fixed, stream))
    }
}

impl Target for FileTarget<'_> {
    fn round(&mut self, findings: &[Finding], rejections: &mut Rejections) -> usize {
        // In text order, each fix whose edits do not overlap those taken before it; at one
        // place the fix with more edits first, so that a fix whose every edit it makes too
        // (RES001's limit inside MEM001's requests = limits) lands with it, not a round later
        // as another rule's finding.
        let mut sorted: Vec<&Finding> = findings.iter().collect();
        sorted.sort_by_key(|f| {
            f.fix.as_ref().map(|x| {
                (
                    x.edits.first().map(|e| e.start),
                    std::cmp::Reverse(x.edits.len()),
                )
            })
        });
        let mut picked: Vec<&Finding> = Vec::new();
        let mut within: Vec<&Finding> = Vec::new();
        for f in sorted {
            let Some(x) = f.fix.as_ref() else { continue };
            if picked
                .iter()
                .all(|p| p.fix.as_ref().is_none_or(|y| !overlaps(x, y)))
            {
                picked.push(f);
            } else if lands_with(x, &picked) {
                within.push(f);
            }
        }
        if picked.is_empty() {
            return 0;
        }
        let outcome = match self.try_apply(&picked) {
            Ok(done) => Some((done, picked)),
            Err(_) => {
                // Find the culprits: keep the fixes that verify on their own.
                let mut good = Vec::new();
                for f in picked {
                    match self.try_apply(&[f]) {
                        Ok(_) => good.push(f),
                        Err(why) => rejections.reject(f, self.place(f), why),
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
            return 0;
        };
        let landed_within = within
            .into_iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| lands_with(x, &used)));
        for f in used.iter().copied().chain(landed_within) {
            let line = self.line_of(f);
            self.applied
                .push(AppliedFix::of(f, line, f.object.display_name()));
        }
        self.text = fixed;
        self.stream = Arc::new(stream);
        used.len()
    }

    fn relint(&self) -> Vec<Finding> {
        let relinted = SourceFile {
            input: self.file.input.clone(),
            name: self.file.name.clone(),
            stream: self.stream.clone(),
            role: self.file.role,
        };
        self.linter
            .lint_file(self.facts, self.placement, self.index, &relinted)
    }

    fn finish(self, plan: &mut FixPlan) {
        let Input::File(path) = &self.file.input else {
            return;
        };
        if self.text.as_str() != &*self.file.stream.text {
            plan.parsed.insert(path.clone(), self.stream);
            plan.files.push(FileFix {
                path: path.clone(),
                name: self.file.name.clone(),
                original: self.file.stream.text.to_string(),
                fixed: self.text,
                applied: self.applied,
                created: false,
            });
        }
    }
}
