//! The rule registry (`gpulint::rules::RULES`) against what documents it: docs/rules.md's rule
//! table, `rules/README.md` and one `rules/<ID>.md` per rule; and unknown rule ids, which are
//! errors that suggest the closest id or name.

use std::collections::BTreeMap;
use std::path::Path;

use gpulint::rules::{FixAvailability, RuleInfo, RULES};

use crate::support::common::{gpulint, output};
use crate::support::rule_docs::{
    docs_fix_table, docs_rules_section, fix_cell, read, root, rule_rows, FIX_CELL,
};

/// `on`/`off` as the tables write it (`on*`: on, with measurements only).
fn default_of(r: &RuleInfo) -> &'static str {
    if r.enabled_by_default {
        "on"
    } else {
        "off"
    }
}

/// Checks a table (id → name, severity, default, …) against the registry, both ways.
fn check_table(rows: &BTreeMap<String, Vec<String>>, source: &str) {
    for r in RULES {
        let row = rows
            .get(r.id)
            .unwrap_or_else(|| panic!("{source}: no row for {} ({})", r.id, r.name));
        assert!(
            row.len() > FIX_CELL,
            "{source}: {}: too few cells {row:?}",
            r.id
        );
        assert_eq!(row[0], r.name, "{source}: name of {}", r.id);
        assert_eq!(
            row[1],
            r.severity.as_str(),
            "{source}: severity of {}",
            r.id
        );
        assert_eq!(
            row[2].trim_end_matches('*'),
            default_of(r),
            "{source}: default of {}",
            r.id
        );
        check_fix_cell(r, row, source);
    }
    for id in rows.keys() {
        assert!(
            RULES.iter().any(|r| r.id == id),
            "{source}: {id} is not a rule of the registry"
        );
    }
    assert_eq!(rows.len(), RULES.len(), "{source}: one row per rule");
}

/// The fix column says the registry's `FixAvailability` first; a rule with fixes then says
/// which (safe, unsafe: `tests/integration/rules_fixable.rs` holds that to the fixtures), one without says
/// nothing more.
fn check_fix_cell(r: &RuleInfo, row: &[String], source: &str) {
    let cell = &row[FIX_CELL];
    let fix = fix_cell(cell);
    assert_eq!(
        fix.availability,
        r.fix.as_str(),
        "{source}: fix of {} is `{cell}`, the registry says {:?}",
        r.id,
        r.fix
    );
    match r.fix {
        FixAvailability::Never => assert_eq!(cell, "never", "{source}: fix of {}", r.id),
        FixAvailability::Always | FixAvailability::Sometimes => assert!(
            fix.safe || fix.unsafe_,
            "{source}: fix of {} (`{cell}`) says neither safe nor unsafe",
            r.id
        ),
    }
}

#[test]
fn the_docs_rule_table_matches_the_registry() {
    let section = docs_rules_section();
    check_table(
        &rule_rows(&section, "docs/rules.md", "../rules/"),
        "docs/rules.md",
    );
}

#[test]
fn the_rules_readme_table_matches_the_registry() {
    let text = read("rules/README.md");
    check_table(&rule_rows(&text, "rules/README.md", ""), "rules/README.md");
}

/// docs/fixing.md's fix table lists exactly the rules whose findings may carry a fix
/// (which kinds, safe or unsafe, `tests/integration/rules_fixable.rs` holds to the fixtures).
#[test]
fn the_docs_fix_table_lists_the_rules_with_fixes() {
    let table = docs_fix_table();
    for id in table.keys() {
        assert!(
            RULES.iter().any(|r| r.id == id),
            "docs/fixing.md: {id} is not a rule of the registry"
        );
    }
    for r in RULES {
        assert_eq!(
            table.contains_key(r.id),
            r.fix != FixAvailability::Never,
            "docs/fixing.md: {} (fix {:?}) listed or not",
            r.id,
            r.fix
        );
    }
}

#[test]
fn every_rule_has_its_doc_file_and_every_doc_file_a_rule() {
    for r in RULES {
        let path = format!("rules/{}.md", r.id);
        let doc = read(&path);
        assert_eq!(doc, r.doc, "{path} is the text `gpulint explain` prints");
        assert!(
            doc.starts_with(&format!("# {} {}", r.id, r.name)),
            "{path} starts with its title"
        );
    }
    let mut docs = 0;
    for entry in std::fs::read_dir(root().join("rules")).expect("rules/") {
        let name = entry.expect("rules/ entry").file_name();
        let name = name.to_string_lossy();
        let Some(stem) = name.strip_suffix(".md") else {
            continue;
        };
        if stem == "README" {
            continue;
        }
        assert!(
            RULES.iter().any(|r| r.id == stem),
            "rules/{name} documents no rule of the registry"
        );
        docs += 1;
    }
    assert_eq!(docs, RULES.len());
}

/// Runs the binary in `dir`; returns (exit code, stderr).
fn gpulint_in(dir: &Path, args: &[&str]) -> (i32, String) {
    let (code, _, stderr) = output(gpulint().current_dir(dir).env("NO_COLOR", "1").args(args));
    (code, stderr)
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x\n";

fn repo(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("pod.yaml"), POD).expect("write pod");
    std::fs::write(dir.path().join(".gpulint.yaml"), config).expect("write config");
    dir
}

#[test]
fn an_unknown_rule_in_the_config_is_an_error_at_its_place_with_a_suggestion() {
    let cases = [
        // A severity for a misspelt id.
        (
            "rules:\n  GPU01: error\n",
            ".gpulint.yaml:2:3: unknown rule \"GPU01\"; did you mean `GPU001`? (see `gpulint rules`)",
        ),
        // Enabling a misspelt name.
        (
            "rules:\n  GPU001: warning\n  gpu-toleration-mising: on\n",
            ".gpulint.yaml:3:3: unknown rule \"gpu-toleration-mising\"; did you mean `gpu-toleration-missing`? (see `gpulint rules`)",
        ),
        // Disabling ids that are no rule: one digit away, and nothing near.
        (
            "rules:\n  SCH009: off\n",
            ".gpulint.yaml:2:3: unknown rule \"SCH009\"; did you mean `SCH001`? (see `gpulint rules`)",
        ),
        (
            "rules:\n  ZZZ999: off\n",
            ".gpulint.yaml:2:3: unknown rule \"ZZZ999\" (see `gpulint rules`)",
        ),
        // A path-scoped ignore.
        (
            "ignore:\n- path: \"*.yaml\"\n  rules: [GPU002, qos02]\n",
            ".gpulint.yaml:3:19: unknown rule \"qos02\"; did you mean `QOS002`? (see `gpulint rules`)",
        ),
    ];
    for (config, expected) in cases {
        let dir = repo(config);
        let (code, stderr) = gpulint_in(dir.path(), &["."]);
        assert_eq!(code, 2, "{config}: {stderr}");
        let line = stderr
            .lines()
            .find(|l| l.contains("unknown rule"))
            .unwrap_or_else(|| panic!("{config}: no error in {stderr}"));
        assert!(line.ends_with(expected), "{config}: {line}");
    }
}

#[test]
fn an_unknown_rule_in_select_or_ignore_is_an_error_with_a_suggestion() {
    let dir = repo("{}\n");
    for flag in ["--select", "--ignore"] {
        let (code, stderr) = gpulint_in(dir.path(), &[".", flag, "GPU002, GPU0002"]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("error: {flag}: unknown rule \"GPU0002\"; did you mean `GPU002`?; `gpulint rules` lists them")
        );
        let (code, stderr) = gpulint_in(dir.path(), &[".", flag, "gpu-burstable"]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("error: {flag}: unknown rule \"gpu-burstable\"; did you mean `gpu-burstable-qos`?; `gpulint rules` lists them")
        );
        let (code, stderr) = gpulint_in(dir.path(), &[".", flag, "banana"]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!("error: {flag}: unknown rule \"banana\"; `gpulint rules` lists them")
        );
        // Known ids and names in any case still work.
        let (code, stderr) = gpulint_in(dir.path(), &[".", flag, "qos002, gpu-limit-missing"]);
        assert_eq!(code, 0, "{stderr}");
    }
}
