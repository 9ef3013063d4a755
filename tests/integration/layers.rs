//! Imports point down the layers: every `crate::<module>` (and `gpulint::<module>` in the binary)
//! reference in `src/` names a top-level module at or below the referring file's own. The layer
//! list lives in one place, ARCHITECTURE.md's "Layers" section, between the `<!-- layers -->`
//! markers; this test reads it there, so the docs and the check cannot disagree.
//!
//! References are found in code only: comments, doc comments and string literals are skipped.
//! `use` lines, grouped imports (`crate::{a::x, b::y}`) and inline paths all count, and so does a
//! `super::` chain that climbs to the crate root.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The layer list: the numbered items between `<!-- layers` and `<!-- /layers -->` in the
/// "Layers" section, lowest first. Each item's first backticked name is a top-level module
/// (`source/` or `lint.rs` both name their module).
fn layers(architecture: &str) -> Vec<String> {
    let section = architecture
        .split("\n## ")
        .find(|s| s.starts_with("Layers\n"))
        .expect("ARCHITECTURE.md has a `## Layers` section");
    let start = section
        .find("<!-- layers")
        .expect("the Layers section marks its list with `<!-- layers: lowest first -->`");
    let end = section
        .find("<!-- /layers -->")
        .expect("the Layers section ends its list with `<!-- /layers -->`");
    assert!(
        start < end,
        "the `<!-- /layers -->` marker comes before the list"
    );
    let mut names = Vec::new();
    for line in section[start..end].lines().skip(1) {
        let Some((number, item)) = line.split_once(". ") else {
            continue;
        };
        if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let name = item
            .split('`')
            .nth(1)
            .unwrap_or_else(|| panic!("layer item without a `module`: {line}"));
        let name = name.trim_end_matches('/').trim_end_matches(".rs");
        assert!(
            !names.iter().any(|n| n == name),
            "`{name}` is listed twice in the layers"
        );
        names.push(name.to_string());
    }
    assert!(
        !names.is_empty(),
        "the layer list in ARCHITECTURE.md is empty"
    );
    names
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules of `src/`: its folders and files, `lib.rs` (the crate root) aside.
fn top_level_modules(src: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .filter(|name| name != "lib")
        .collect();
    names.sort();
    names
}

/// `text` with comments and the contents of string and char literals blanked (newlines kept, so
/// line numbers stay right).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(&other) => {
                        out.push(blank(other));
                        j += 1;
                    }
                }
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&skipped) = chars.get(i) {
                    out.push(blank(skipped));
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{1F600}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A char literal such as '"' (a lifetime has no closing quote).
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ident_at(code: &[char], mut i: usize) -> (String, usize) {
    while code.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    let start = i;
    while code.get(i).is_some_and(|&c| is_ident(c)) {
        i += 1;
    }
    (code[start..i].iter().collect(), i)
}

fn starts_with(code: &[char], i: usize, word: &str) -> bool {
    word.chars()
        .enumerate()
        .all(|(k, w)| code.get(i + k) == Some(&w))
}

/// The top-level modules a path starting at the crate root names, at `i` (just after
/// `crate::`): one name, or the first name of each item of a group `{a::x, b::{y, z}}`.
fn names_after_root(code: &[char], i: usize) -> Vec<String> {
    if code.get(i) != Some(&'{') {
        let (name, _) = ident_at(code, i);
        return vec![name];
    }
    let mut names = Vec::new();
    let mut depth = 0;
    let mut expect_name = true;
    let mut j = i;
    while let Some(&c) = code.get(j) {
        match c {
            '{' => {
                depth += 1;
                expect_name = depth == 1;
                j += 1;
            }
            '}' => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    break;
                }
            }
            ',' => {
                expect_name = depth == 1;
                j += 1;
            }
            c if c.is_whitespace() => j += 1,
            _ => {
                if expect_name {
                    let (name, end) = ident_at(code, j);
                    if !name.is_empty() {
                        names.push(name);
                    }
                    j = end.max(j + 1);
                } else {
                    j += 1;
                }
                expect_name = false;
            }
        }
    }
    names
}

/// (line, top-level module) for every reference to a module from the crate root in `text`, a
/// file at `depth` (`src/lint.rs` and `src/fix/mod.rs` are 1, `src/fix/helm.rs` is 2).
fn references(text: &str, depth: usize) -> Vec<(usize, String)> {
    let code: Vec<char> = code_only(text).chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    // The brace depths at which inline `mod name {` blocks opened: each is one level deeper.
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut braces = 0;
    let mut pending_mod = false;
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        let boundary = i == 0 || !is_ident(code[i - 1]);
        if c == '\n' {
            line += 1;
        } else if c == '{' {
            braces += 1;
            if pending_mod {
                inline_mods.push(braces);
                pending_mod = false;
            }
        } else if c == '}' {
            if inline_mods.last() == Some(&braces) {
                inline_mods.pop();
            }
            braces -= 1;
        } else if c == ';' {
            pending_mod = false;
        } else if boundary && starts_with(&code, i, "mod ") {
            pending_mod = true;
        } else if boundary
            && (starts_with(&code, i, "crate::") || starts_with(&code, i, "gpulint::"))
        {
            let after = i + if code[i] == 'c' { 7 } else { 9 };
            for name in names_after_root(&code, after) {
                found.push((line, name));
            }
            i = after;
            continue;
        } else if boundary && starts_with(&code, i, "super::") {
            let mut climbs = 0;
            let mut j = i;
            while starts_with(&code, j, "super::") {
                climbs += 1;
                j += 7;
            }
            if climbs >= depth + inline_mods.len() {
                for name in names_after_root(&code, j) {
                    found.push((line, name));
                }
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

#[test]
fn imports_point_down_the_layers() {
    let layers = layers(&read(&root().join("ARCHITECTURE.md")));
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let src = root().join("src");
    let modules = top_level_modules(&src);

    let unlisted: Vec<&String> = modules
        .iter()
        .filter(|m| !rank.contains_key(m.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "top-level modules of src/ missing from the layer list in ARCHITECTURE.md: {unlisted:?}"
    );
    let absent: Vec<&String> = layers.iter().filter(|l| !modules.contains(l)).collect();
    assert!(
        absent.is_empty(),
        "the layer list in ARCHITECTURE.md names modules src/ does not have: {absent:?}"
    );

    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&src).expect("a file under src/");
        let parts: Vec<&str> = relative
            .iter()
            .map(|p| p.to_str().expect("a UTF-8 path"))
            .collect();
        if parts == ["lib.rs"] {
            continue;
        }
        let module = parts[0].trim_end_matches(".rs");
        let depth = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
        let from = rank[module];
        for (line, target) in references(&read(file), depth) {
            checked += 1;
            // A name that is not a top-level module (a macro, `crate::Foo` at the root) is not
            // a layer.
            let Some(&to) = rank.get(target.as_str()) else {
                continue;
            };
            if to > from {
                upward.push(format!(
                    "src/{}:{line}: `{module}` (layer {}) imports `{target}` (layer {})",
                    relative.display(),
                    from + 1,
                    to + 1
                ));
            }
        }
    }
    // A parser that finds nothing would pass vacuously.
    assert!(
        checked > 100,
        "found only {checked} crate references in src/"
    );
    assert!(
        upward.is_empty(),
        "imports that point up the layers of ARCHITECTURE.md ({}):\n{}",
        layers.join(" < "),
        upward.join("\n")
    );
}

#[test]
fn the_reference_finder_sees_code_only() {
    let text = r#####"
//! `crate::report` in a doc comment
use crate::{config::Config, fix::{apply, patch}};
use super::x; // crate::report in a comment
/* crate::report in /* a nested */ block comment */
fn f() {
    let s = "crate::report in a string";
    let r = r#"crate::report in a raw string"#;
    let q = '"';
    let p = crate::lint::Run::default();
}
mod tests {
    use super::super::changed;
}
"#####;
    let found = references(text, 1);
    assert_eq!(
        found,
        [
            (3, "config".to_string()),
            (3, "fix".to_string()),
            // From a top-level file, `super::` is the crate root.
            (4, "x".to_string()),
            (10, "lint".to_string()),
            (13, "changed".to_string()),
        ]
    );
}

#[test]
fn the_layer_list_is_read_from_its_markers() {
    let doc = "# x\n\n## Layers\n\nIntro `ignored`.\n\n<!-- layers: lowest first -->\n1. `source/`: files.\n2. `lint.rs`: the run.\n<!-- /layers -->\n\n10. `after`: not in the list.\n\n## Next\n";
    assert_eq!(layers(doc), ["source", "lint"]);
}
