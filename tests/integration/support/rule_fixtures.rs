//! Each rule's fixtures (`testdata/rules/<ID>/`: manifests and, for measured rules, a
//! `metrics.json` snapshot), linted with that rule alone, and the plan of `--fix` for one of
//! their findings. Shared by the fix-accounting test and the per-rule snapshots.

use std::path::{Path, PathBuf};

use gpulint::config::Config;
use gpulint::fix::plan::{plan, FixPlan};
use gpulint::lint::{Linter, Run, Selection};
use gpulint::rules::{Finding, Rule};

/// The fixture folder of rule `id`.
pub fn fixtures(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/rules")
        .join(id)
}

/// The measured-usage snapshot of a fixture folder, when it has one.
pub fn snapshot(dir: &Path) -> Option<PathBuf> {
    Some(dir.join("metrics.json")).filter(|p| p.exists())
}

/// A linter running rule `id` alone, with the folder's usage snapshot if any.
pub fn linter(id: &str, dir: &Path) -> Linter {
    let select = Selection {
        select: vec![Rule::parse(id).unwrap_or_else(|| panic!("no rule {id}"))],
        ignore: Vec::new(),
        measured_only: false,
    };
    let mut linter = Linter::new(Config::default(), select);
    if let Some(path) = snapshot(dir) {
        let usage =
            gpulint::metrics::snapshot::read(&path, gpulint::metrics::snapshot::DEFAULT_MAX_BYTES);
        linter.usage = Some(usage.unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    }
    linter
}

/// The plan of `--fix` for finding `index` of `all` alone (`run.findings` is replaced by it).
pub fn plan_one(
    linter: &Linter,
    run: &mut Run,
    index: usize,
    all: &[Finding],
    unsafe_fixes: bool,
) -> FixPlan {
    run.findings = vec![all[index].clone()];
    plan(linter, run, unsafe_fixes)
}

/// How many files the plan changes.
pub fn edits_of(p: &FixPlan) -> usize {
    p.files.iter().filter(|f| f.fixed != f.original).count()
}

/// A rule's fixtures linted with that rule alone; the findings taken out of the run, so a
/// test can plan them one at a time.
pub struct Linted {
    pub dir: PathBuf,
    pub linter: Linter,
    pub run: Run,
    pub findings: Vec<Finding>,
}

/// Lints the fixtures of rule `id`; fails when the rule has no fixture folder, an input does
/// not load, or the fixtures give no finding of the rule.
pub fn lint(id: &str) -> Linted {
    let dir = fixtures(id);
    assert!(
        dir.is_dir(),
        "{id}: no fixtures in {}: every rule needs some",
        dir.display()
    );
    let linter = linter(id, &dir);
    let mut run = linter.run(std::slice::from_ref(&dir));
    assert!(run.errors.is_empty(), "{id}: {:?}", run.errors);
    let findings = std::mem::take(&mut run.findings);
    assert!(
        findings.iter().any(|f| f.rule.id == id),
        "{id}: its fixtures give no finding"
    );
    Linted {
        dir,
        linter,
        run,
        findings,
    }
}
