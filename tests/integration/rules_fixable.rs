//! Honest fix accounting, checked for every rule on its fixtures (as ruff checks in every rule
//! test). `testdata/rules/<ID>/` holds manifests (and, for measured rules, a `metrics.json`
//! snapshot) on which rule `<ID>` reports; every rule of the registry must have such a folder.
//!
//! * A finding carries a fix exactly when planning that one finding writes an edit: a fix that
//!   writes nothing, or is rejected, fails; `fixable` (what `--fix` writes) is a safe fix, and an
//!   unsafe fix is written only with `--unsafe-fixes`.
//! * The registry's `FixAvailability` matches: `Always` rules fix every fixture finding, `Never`
//!   rules none, `Sometimes` rules some and not others; and the fix column of both rule tables
//!   (docs/rules.md, rules/README.md) and docs/fixing.md's fix table name exactly the kinds of
//!   fix (safe, unsafe) the fixtures show.
//! * Through the binary: the JSON `fixable`/`unsafe_fix` flags agree with what `--fix --diff`
//!   (and `--unsafe-fixes`) print, so "N fixable" never stands next to "nothing to fix".

use gpulint::rules::{FixAvailability, RULES};

use crate::support::common::{gpulint, output};
use crate::support::rule_docs::{docs_fix_table, fix_cell, fix_kinds, rule_tables, FIX_CELL};
use crate::support::rule_fixtures::{edits_of, fixtures, lint, plan_one, snapshot, Linted};

#[test]
fn every_fixable_finding_is_fixed_and_no_other_is() {
    let mut failures = Vec::new();
    let tables = rule_tables();
    let fix_table = docs_fix_table();
    for rule in RULES {
        let Linted {
            linter,
            mut run,
            findings: all,
            ..
        } = lint(rule.id);
        let (mut with_fix, mut without) = (0, 0);
        let (mut safe_seen, mut unsafe_seen) = (false, false);
        for (i, f) in all.iter().enumerate() {
            let at = format!(
                "{} on {} ({})",
                f.rule.id,
                f.object.display_name(),
                f.message
            );
            assert_eq!(f.rule.id, rule.id, "only the selected rule runs");
            assert!(f.suppression.is_none(), "{at}: fixtures suppress nothing");
            let written = plan_one(&linter, &mut run, i, &all, true);
            let safe_only = plan_one(&linter, &mut run, i, &all, false);
            if !written.rejected.is_empty() {
                failures.push(format!("{at}: its fix is rejected: {:?}", written.rejected));
            }
            match &f.fix {
                Some(_) => {
                    with_fix += 1;
                    safe_seen |= f.fixable();
                    unsafe_seen |= f.unsafe_fixable();
                    if edits_of(&written) == 0 {
                        failures.push(format!("{at}: marked fixable, but --fix writes nothing"));
                    }
                    let applied: Vec<&str> = written
                        .files
                        .iter()
                        .flat_map(|x| &x.applied)
                        .map(|a| a.rule)
                        .collect();
                    if !applied.contains(&rule.id) {
                        failures.push(format!("{at}: the fix written is not its own: {applied:?}"));
                    }
                    // `fixable` is what plain `--fix` writes; an unsafe fix waits for the flag.
                    if f.fixable() != (edits_of(&safe_only) > 0) {
                        failures.push(format!(
                            "{at}: fixable = {} but plain --fix writes {} file(s)",
                            f.fixable(),
                            edits_of(&safe_only)
                        ));
                    }
                    if f.fixable() == f.unsafe_fixable() {
                        failures.push(format!("{at}: a fix is either safe or unsafe"));
                    }
                }
                None => {
                    without += 1;
                    if f.fixable() || f.unsafe_fixable() || edits_of(&written) > 0 {
                        failures.push(format!("{at}: not fixable, but an edit appears"));
                    }
                }
            }
        }
        let honest = match rule.fix {
            FixAvailability::Always => without == 0,
            FixAvailability::Never => with_fix == 0,
            FixAvailability::Sometimes => with_fix > 0 && without > 0,
        };
        if !honest {
            failures.push(format!(
                "{}: registry says fix {:?}, fixtures give {with_fix} finding(s) with a fix and {without} without",
                rule.id, rule.fix
            ));
        }
        for (source, rows) in &tables {
            let Some(cell) = rows.get(rule.id).and_then(|row| row.get(FIX_CELL)) else {
                failures.push(format!("{source}: no fix cell for {}", rule.id));
                continue;
            };
            let said = fix_cell(cell);
            if (said.safe, said.unsafe_) != (safe_seen, unsafe_seen) {
                failures.push(format!(
                    "{source}: {} says fix `{cell}`, the fixtures show safe fixes: {safe_seen}, unsafe: {unsafe_seen}",
                    rule.id
                ));
            }
        }
        let listed = fix_table.get(rule.id).map(|cells| cells.join(", "));
        let listed_kinds = listed.as_deref().map_or((false, false), fix_kinds);
        if listed_kinds != (safe_seen, unsafe_seen) {
            failures.push(format!(
                "docs/fixing.md: {} is listed as {listed:?}, the fixtures show safe fixes: {safe_seen}, unsafe: {unsafe_seen}",
                rule.id
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_reported_flags_match_what_fix_writes() {
    for rule in RULES {
        let dir = fixtures(rule.id);
        let dir_arg = dir.to_string_lossy().into_owned();
        let mut args = vec![dir_arg.as_str(), "--select", rule.id];
        let metrics = snapshot(&dir).map(|p| p.to_string_lossy().into_owned());
        if let Some(m) = &metrics {
            args.extend(["--metrics", m.as_str()]);
        }
        let run = |extra: &[&str]| output(gpulint().args(&args).args(extra));
        let (json_code, json, json_err) = run(&["--format", "json"]);
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        // Exit 1 when a finding at or above `--fail-on warning` (the default) is there; `--diff`
        // writes nothing, so every run below exits the same way.
        let fails = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["severity"] == "error" || f["severity"] == "warning");
        let expected_code = i32::from(fails);
        assert_eq!(json_code, expected_code, "{}: {json_err}", rule.id);
        let count = |flag: &str| {
            report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f[flag] == serde_json::Value::Bool(true))
                .count()
        };
        let (fixable, unsafe_fix) = (count("fixable"), count("unsafe_fix"));
        let (diff_code, diff, stderr) = run(&["--fix", "--diff"]);
        assert_eq!(diff_code, expected_code, "{}: {stderr}", rule.id);
        assert_eq!(
            fixable > 0,
            !diff.is_empty(),
            "{}: {fixable} fixable, diff:\n{diff}{stderr}",
            rule.id
        );
        let (human_code, human, human_err) = run(&[]);
        assert_eq!(human_code, expected_code, "{}: {human_err}", rule.id);
        assert_eq!(
            human.contains(&format!("; {fixable} fixable")),
            fixable > 0,
            "{}: {human}",
            rule.id
        );
        let (unsafe_code, unsafe_diff, unsafe_err) = run(&["--fix", "--diff", "--unsafe-fixes"]);
        assert_eq!(unsafe_code, expected_code, "{}: {unsafe_err}", rule.id);
        if unsafe_fix > 0 {
            assert_ne!(unsafe_diff, diff, "{}: unsafe fixes write more", rule.id);
            assert!(
                human.contains(&format!("; {unsafe_fix} fixable with --unsafe-fixes")),
                "{}: {human}",
                rule.id
            );
        } else {
            assert_eq!(
                unsafe_diff, diff,
                "{}: no unsafe fix, nothing more",
                rule.id
            );
        }
    }
}
