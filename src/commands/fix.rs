//! `gpulint --fix` (with `--diff`, `--patch FILE`, `--commit`): plan the fixes of a lint run,
//! then show them or write them, saying each fix as its file lands on disk.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use gpulint::cli::LintArgs;
use gpulint::fix::plan::{FileFix, FixPlan};
use gpulint::interrupt::StopRequest;
use gpulint::source::yaml::Stream;

use super::{error, print, Failure};

/// What `--fix` did.
pub enum FixOutcome {
    /// Manifests changed: lint again to report what remains. `changed`: the files the plan
    /// touched (written, or changed by someone else meanwhile). `left_as_is`: a file changed
    /// while gpulint ran and was not written (the run exits 2).
    Written {
        changed: Vec<PathBuf>,
        left_as_is: bool,
        /// The plan's parses of the fixed plain files (see [`FixPlan::parsed`]).
        parsed: HashMap<PathBuf, Arc<Stream>>,
    },
    /// --diff, --patch, or nothing to fix: the lint result stands.
    NothingWritten,
}

/// Shows or writes `plan`, the fix plan of `run`.
pub fn fix(args: &LintArgs, mut plan: FixPlan) -> Result<FixOutcome, Failure> {
    if plan.stdin_fixable > 0 {
        eprintln!(
            "note: {} fixable finding(s) in stdin: stdin can be linted but not fixed; run on the files",
            plan.stdin_fixable
        );
    }
    if plan.unsafe_skipped > 0 {
        eprintln!(
            "note: {} fix(es) are unsafe and were not applied (use --unsafe-fixes)",
            plan.unsafe_skipped
        );
    }
    // Each refusal once: two findings refused at one place, for one reason, are one line.
    let mut said = std::collections::HashSet::new();
    for r in &plan.rejected {
        let line = r.describe();
        if said.insert(line.clone()) {
            eprintln!("not fixed: {line}");
        }
    }
    if args.diff || args.patch.is_some() {
        // A diff of a linked or non-regular file is refused as writing it would be.
        gpulint::fix::write::check_sources(&plan).map_err(error)?;
    }
    if args.diff {
        let mut diff = gpulint::fix::patch::diff(&plan);
        // The summary (on stderr) starts a line of its own in a terminal showing both.
        if !diff.is_empty() && !diff.ends_with('\n') {
            diff.push('\n');
        }
        print(&diff);
        return Ok(FixOutcome::NothingWritten);
    }
    if let Some(path) = &args.patch {
        let text = gpulint::fix::patch::patch(&plan).map_err(error)?;
        gpulint::fix::write::write_output(path, &text).map_err(error)?;
        eprintln!("wrote {} ({} file(s))", path.display(), plan.files.len());
        return Ok(FixOutcome::NothingWritten);
    }
    if plan.files.is_empty() {
        eprintln!("nothing to fix");
        return Ok(FixOutcome::NothingWritten);
    }
    // From here a SIGINT/SIGTERM stops between two files instead of killing the run.
    let stop = StopRequest::catch();
    if args.commit {
        let committed = gpulint::fix::commit::commit(&plan, args.message.as_deref(), stop.flag())
            .map_err(|e| failed(&stop, e))?;
        stop.release();
        report_changes(&plan);
        if committed.fallback_author {
            eprintln!(
                "note: git has no user.name/user.email here; committed as gpulint <gpulint@localhost>"
            );
        }
        eprintln!("committed {}", committed.id);
        return Ok(FixOutcome::Written {
            changed: changed_paths(&plan),
            left_as_is: false,
            parsed: std::mem::take(&mut plan.parsed),
        });
    }
    // Each file's `fixed` lines are printed as it lands on disk: an interrupted run says what it did.
    let mut findings = 0;
    let written = gpulint::fix::write::write_each(&plan, stop.flag(), |f| {
        findings += report_file(f);
    });
    stop.release();
    let written = written.map_err(|e| failed(&stop, e))?;
    for left in &written.left {
        eprintln!("not fixed: {left}");
    }
    eprintln!("fixed {findings} finding(s) in {} file(s)", written.files);
    if written.not_reached > 0 || stop.requested() {
        eprintln!(
            "interrupted: {} file(s) not written; every file is either as it was or fully fixed",
            written.not_reached
        );
        return Err(Failure::Interrupted);
    }
    Ok(FixOutcome::Written {
        changed: changed_paths(&plan),
        left_as_is: !written.left.is_empty(),
        parsed: std::mem::take(&mut plan.parsed),
    })
}

/// Every file of the plan: each was written, or left as is because it changed meanwhile.
fn changed_paths(plan: &FixPlan) -> Vec<PathBuf> {
    plan.files.iter().map(|f| f.path.clone()).collect()
}

/// Says the error; a write stopped by SIGINT/SIGTERM exits 130, any other 2.
fn failed(stop: &StopRequest, e: impl std::fmt::Display) -> Failure {
    eprintln!("error: {e}");
    if stop.requested() {
        Failure::Interrupted
    } else {
        Failure::Error
    }
}

/// Prints the `fixed` lines of one file (in one write: stderr is unbuffered, and a line
/// printed piece by piece was eleven system calls); returns how many.
fn report_file(f: &FileFix) -> usize {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let mut lines = String::new();
    for a in &f.applied {
        let _ = writeln!(
            lines,
            "fixed {}:{}: {} {} ({})",
            f.name, a.line, a.rule, a.description, a.object
        );
    }
    // Like eprintln!, except that a closed stderr is not a panic.
    let _ = std::io::stderr().lock().write_all(lines.as_bytes());
    f.applied.len()
}

fn report_changes(plan: &FixPlan) {
    let count: usize = plan.files.iter().map(report_file).sum();
    eprintln!("fixed {count} finding(s) in {} file(s)", plan.files.len());
}
