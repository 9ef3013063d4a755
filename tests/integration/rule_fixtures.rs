//! One snapshot per rule, as ruff keeps one per rule fixture: every rule of the registry is run
//! alone on its fixtures (`testdata/rules/<ID>/`, with their `metrics.json` when there is one)
//! and `tests/integration/snapshots/integration__rule_fixtures__rule_<ID>.snap` holds, for each finding: its place,
//! severity, id and message; the source text at its span, underlined; and its fix: safe,
//! unsafe or none, and the diff that planning that fix alone writes. A rule without fixtures,
//! fixtures without a finding of their rule, or a missing snapshot fail (insta fails a missing
//! snapshot and, with `CI` set, writes no `.snap.new`).

use std::fmt::Write as _;
use std::path::Path;

use gpulint::edit::{apply, Applicability, Fix};
use gpulint::fix::patch::diff;
use gpulint::fix::plan::{FileFix, FixPlan};
use gpulint::lint::{Linter, Run};
use gpulint::report::location;
use gpulint::rules::{Finding, RuleInfo, RULES};

use crate::support::rule_fixtures::{lint, plan_one, Linted};

/// A long span (a whole object) shows this many of its first and last lines.
const SPAN_EDGE_LINES: usize = 3;

/// `name` relative to the fixture folder, so the snapshots read the same on every machine.
fn relative<'a>(name: &'a str, dir: &Path) -> &'a str {
    let prefix = format!("{}/", dir.display());
    name.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{name} is outside the fixtures {}", dir.display()))
}

/// `text` with the fixture folder taken out of the paths in it, written absolute or relative
/// to the working directory (a render's name in a message: `[render of smp]`).
fn without_fixture_dir(text: &str, dir: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| dir.strip_prefix(cwd).ok().map(Path::to_path_buf));
    let mut out = text.replace(&format!("{}/", dir.display()), "");
    if let Some(rel) = relative {
        out = out.replace(&format!("{}/", rel.display()), "");
    }
    out
}

/// The lines a finding's span covers, numbered, each with `^` under the part of it the span
/// covers (one `^` at its place for an empty span), and its label under the last.
fn snippet(run: &Run, f: &Finding) -> String {
    let text: &str = &run.files[f.file].stream.text;
    let (start, end) = (f.span.start(), f.span.end().max(f.span.start()));
    let loc = location(run, f);
    // A span ending at the start of a line does not cover that line.
    let last_line = if loc.end_line > loc.line && loc.end_column == 1 {
        loc.end_line - 1
    } else {
        loc.end_line
    };
    let lines: Vec<(usize, usize, &str)> = text
        .split_inclusive('\n')
        .scan(0, |offset, line| {
            let at = *offset;
            *offset += line.len();
            Some((at, line.trim_end_matches(['\n', '\r'])))
        })
        .enumerate()
        .map(|(i, (at, line))| (i + 1, at, line))
        .filter(|(n, _, _)| (loc.line..=last_line).contains(n))
        .collect();
    let width = last_line.to_string().len();
    let gutter = " ".repeat(width);
    let mut out = format!("{gutter} |\n");
    let shown = lines.len();
    for (k, (n, at, line)) in lines.iter().enumerate() {
        if shown > 2 * SPAN_EDGE_LINES && (SPAN_EDGE_LINES..shown - SPAN_EDGE_LINES).contains(&k) {
            if k == SPAN_EDGE_LINES {
                let _ = writeln!(
                    out,
                    "{gutter} | … {} more lines",
                    shown - 2 * SPAN_EDGE_LINES
                );
            }
            continue;
        }
        let _ = writeln!(out, "{n:>width$} | {line}");
        // The covered columns, in characters: the span's part of this line.
        let from = start.saturating_sub(*at).min(line.len());
        let to = end.saturating_sub(*at).min(line.len());
        let lead = line.get(..from).map_or(0, |s| s.chars().count());
        let marks = line.get(from..to).map_or(0, |s| s.chars().count()).max(1);
        let label = if k + 1 == shown && !f.label.is_empty() {
            format!(" {}", f.label)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{gutter} | {}{}{label}",
            " ".repeat(lead),
            "^".repeat(marks)
        );
    }
    out.push_str(&format!("{gutter} |\n"));
    out
}

/// The diff of `fix`'s own edits on the file they edit; `None` for a fix that edits no file
/// in place (an overlay patch, which only planning writes).
fn own_diff(run: &Run, f: &Finding, fix: &Fix, dir: &Path) -> Option<String> {
    if fix.edits.is_empty() {
        return None;
    }
    let file = &run.files[fix.source.index().unwrap_or(f.file)];
    let original = file.stream.text.to_string();
    let Some(fixed) = apply(&original, &fix.edits) else {
        return Some("its edits overlap: they do not apply\n".to_string());
    };
    let plan = FixPlan {
        files: vec![FileFix {
            path: dir.join(relative(&file.name, dir)),
            name: relative(&file.name, dir).to_string(),
            original,
            fixed,
            applied: Vec::new(),
            created: false,
        }],
        ..FixPlan::default()
    };
    Some(diff(&plan))
}

/// The fix of finding `index`: safe, unsafe or none, what it changes and the diff of its own
/// edits; then what `--fix --unsafe-fixes` does besides when planned from this finding alone: a
/// rejection (the fix fails verification), the fixes of later rounds (which re-lint the fixed
/// file and fix what they find), or, when neither explains it, the diff it writes instead.
fn fix_text(linter: &Linter, run: &mut Run, all: &[Finding], index: usize, dir: &Path) -> String {
    let f = &all[index];
    let mut plan = plan_one(linter, run, index, all, true);
    for file in &mut plan.files {
        file.name = relative(&file.name, dir).to_string();
    }
    let Some(fix) = &f.fix else {
        let mut out = "fix: none\n".to_string();
        if !plan.files.is_empty() {
            out.push_str("yet --fix writes:\n");
            out.push_str(&diff(&plan));
        }
        return out;
    };
    let kind = match fix.applicability {
        Applicability::Safe => "safe",
        Applicability::Unsafe => "unsafe",
    };
    let mut out = format!("fix ({kind}): {}\n", fix.description);
    let own = own_diff(run, f, fix, dir);
    match &own {
        Some(text) => out.push_str(text),
        None => out.push_str("(no edit in place: --fix plans it)\n"),
    }
    for r in &plan.rejected {
        let _ = writeln!(out, "--fix rejects it: {}", r.reason);
    }
    let others: Vec<String> = plan
        .files
        .iter()
        .flat_map(|file| file.applied.iter().map(move |a| (file.name.as_str(), a)))
        .filter(|(_, a)| {
            !(a.rule == f.rule.id
                && a.object == f.object.display_name()
                && a.description == fix.description)
        })
        .map(|(name, a)| format!("  {} on {} ({name}): {}", a.rule, a.object, a.description))
        .collect();
    if !others.is_empty() {
        let _ = writeln!(
            out,
            "--fix, re-linting after it, also applies:\n{}",
            others.join("\n")
        );
    } else if own.as_deref() != Some(diff(&plan).as_str()) {
        out.push_str("--fix writes instead:\n");
        out.push_str(&diff(&plan));
    }
    out
}

/// The snapshot text of rule `rule` on its fixtures.
fn rule_text(rule: &RuleInfo) -> String {
    let Linted {
        dir,
        linter,
        mut run,
        findings: all,
    } = lint(rule.id);
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_cached_key(|&i| {
        let loc = location(&run, &all[i]);
        (
            loc.file.to_string(),
            loc.line,
            loc.column,
            loc.end_line,
            loc.end_column,
            all[i].message.clone(),
        )
    });
    let mut out = format!(
        "{} {}: {} finding(s); registry: fix {}\n",
        rule.id,
        rule.name,
        all.len(),
        rule.fix.as_str()
    );
    for i in order {
        let f = &all[i];
        let loc = location(&run, f);
        let _ = writeln!(
            out,
            "\n{}:{}:{} {} {} {}",
            relative(loc.file, &dir),
            loc.line,
            loc.column,
            f.severity.as_str(),
            f.rule.id,
            // A render is named by its folder (`[render of smp]`), relative like the files.
            without_fixture_dir(&f.message, &dir)
        );
        out.push_str(&snippet(&run, f));
        if let Some(help) = &f.help {
            let _ = writeln!(out, "help: {help}");
        }
        out.push_str(&fix_text(&linter, &mut run, &all, i, &dir));
    }
    out
}

#[test]
fn every_rule_has_a_snapshot_of_its_fixtures() {
    for rule in RULES {
        insta::assert_snapshot!(format!("rule_{}", rule.id), rule_text(rule));
    }
}

/// Every fixture folder and every rule snapshot belongs to a rule of the registry: a renamed or
/// removed rule leaves none behind.
#[test]
fn every_fixture_folder_and_snapshot_names_a_rule() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let is_rule = |id: &str| RULES.iter().any(|r| r.id == id);
    let mut folders = 0;
    for entry in std::fs::read_dir(root.join("testdata/rules")).expect("testdata/rules") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        assert!(is_rule(&name), "testdata/rules/{name} is no rule");
        folders += 1;
    }
    assert_eq!(folders, RULES.len(), "one fixture folder per rule");
    let mut snapshots = 0;
    for entry in std::fs::read_dir(root.join("tests/integration/snapshots"))
        .expect("tests/integration/snapshots")
    {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        if let Some(id) = name
            .strip_prefix("integration__rule_fixtures__rule_")
            .and_then(|rest| rest.strip_suffix(".snap"))
        {
            assert!(
                is_rule(id),
                "tests/integration/snapshots/{name} is of no rule"
            );
            snapshots += 1;
        }
    }
    assert_eq!(snapshots, RULES.len(), "one snapshot per rule");
}
