//! The two rule tables that document the registry: docs/rules.md's `## The rules` section and
//! `rules/README.md`. Read by the registry test (names, severities, defaults, fix availability)
//! and the fix-accounting test (which fixes, safe or unsafe, the fixtures show).

use std::collections::BTreeMap;
use std::path::Path;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file of the crate, by its path from the crate root.
pub fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The rows of the markdown table(s) in `text` whose first cell is a rule id (optionally a
/// link to its page, `[GPU001](<pages>GPU001.md)`, where `pages` is the path from `text`'s
/// folder to rules/): id → the other cells. A repeated id is an error.
pub fn rule_rows(text: &str, source: &str, pages: &str) -> BTreeMap<String, Vec<String>> {
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let first = cells[0].trim_start_matches('[');
        let id: String = first
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let is_id = id.len() == 6
            && id[..3].chars().all(|c| c.is_ascii_uppercase())
            && id[3..].chars().all(|c| c.is_ascii_digit());
        if !is_id {
            continue;
        }
        if cells[0].starts_with('[') {
            assert_eq!(
                cells[0],
                format!("[{id}]({pages}{id}.md)"),
                "{source}: link of {id}"
            );
        }
        let previous = rows.insert(id.clone(), cells[1..].to_vec());
        assert!(previous.is_none(), "{source}: {id} listed twice");
    }
    rows
}

/// The section of docs/rules.md under `## The rules`, up to the next `## ` heading.
pub fn docs_rules_section() -> String {
    let readme = read("docs/rules.md");
    let start = readme
        .find("\n## The rules\n")
        .expect("docs/rules.md has a `## The rules` section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_string()
}

/// Both rule tables: (where, id → cells after the id).
pub fn rule_tables() -> Vec<(&'static str, BTreeMap<String, Vec<String>>)> {
    vec![
        (
            "docs/rules.md",
            rule_rows(&docs_rules_section(), "docs/rules.md", "../rules/"),
        ),
        (
            "rules/README.md",
            rule_rows(&read("rules/README.md"), "rules/README.md", ""),
        ),
    ]
}

/// Which cell of a row (after the id) is the fix column: name, severity, default, fix.
pub const FIX_CELL: usize = 3;

/// A fix cell as the tables write it: `never`, or `always` / `sometimes`, a colon, and which
/// fixes (`safe`, `unsafe`, both) with notes: `sometimes: safe (not for a placeholder request)`.
#[derive(Debug, PartialEq, Eq)]
pub struct FixCell {
    /// `always`, `sometimes` or `never`, as `FixAvailability::as_str` spells it.
    pub availability: String,
    pub safe: bool,
    pub unsafe_: bool,
}

pub fn fix_cell(cell: &str) -> FixCell {
    let (availability, rest) = cell.split_once(':').unwrap_or((cell, ""));
    let (safe, unsafe_) = fix_kinds(rest);
    FixCell {
        availability: availability.trim().to_string(),
        safe,
        unsafe_,
    }
}

/// Whether `text` names a safe fix and an unsafe one, as whole words (`--unsafe-fixes` is
/// unsafe).
pub fn fix_kinds(text: &str) -> (bool, bool) {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    (words.contains(&"safe"), words.contains(&"unsafe"))
}

/// docs/fixing.md's fix table (`| rule | fix | applicability |`, a rule on one row per kind
/// of fix, under `## What is fixed`): id → the applicability cells of its rows.
pub fn docs_fix_table() -> BTreeMap<String, Vec<String>> {
    let text = read("docs/fixing.md");
    let start = text
        .find("\n## What is fixed\n")
        .expect("docs/fixing.md has a `## What is fixed` section");
    let section = &text[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut table = section
        .lines()
        .skip_while(|l| !l.starts_with("| rule | fix | applicability |"));
    assert!(table.next().is_some(), "docs/fixing.md has its fix table");
    let mut rows: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in table.skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 3, "docs/fixing.md: {line}");
        rows.entry(cells[0].to_string())
            .or_default()
            .push(cells[2].to_string());
    }
    rows
}
