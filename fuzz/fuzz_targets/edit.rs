//! libFuzzer target: the edit engine (`edit::apply` + `edit::verify`) and the fixer's
//! plan.
//!
//! Input layout: the first byte picks how many edits (0..=3) the fuzzer makes up; each takes
//! 5 bytes (start, end as 16-bit offsets into the text, and a pick among small replacement
//! texts); the rest is the YAML text. Invariants:
//! - a text that parses verifies against itself with no fixes (nothing changed);
//! - `apply` either refuses the edits or returns a text, and `verify` never panics on it; when it
//!   accepts a fix that claims no change, the documents are equal as data;
//! - every file the real fixer plans (`Linter::run` + `plan`) parses cleanly.

#![no_main]

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use gpulint::config::Config;
use gpulint::edit::{self, Applicability, Edit, Fix};
use gpulint::lint::{Linter, Selection};
use gpulint::source::document::plain;
use gpulint::source::yaml::{SourceId, Stream};
use libfuzzer_sys::fuzz_target;

const CONTENTS: [&str; 8] = ["", "1", "\"2\"", "a: b", "\n", "  x: 1\n", "&a 3", "*a"];

struct State {
    linter: Linter,
    dir: PathBuf,
    file: PathBuf,
}

impl State {
    fn new() -> State {
        let tmp = std::env::temp_dir();
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(pid) = name.strip_prefix("gpulint-fuzz-edit-") else {
                    continue;
                };
                if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = tmp.join(format!("gpulint-fuzz-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the fuzz temp folder");
        State {
            linter: Linter::new(Config::default(), Selection::default()),
            file: dir.join("case.yaml"),
            dir,
        }
    }
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

fn made_up_edits(data: &[u8]) -> (Vec<Edit>, &[u8]) {
    let Some((&count, mut rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let mut edits = Vec::new();
    for _ in 0..count % 4 {
        let Some((head, tail)) = rest.split_at_checked(5) else {
            break;
        };
        rest = tail;
        edits.push(Edit {
            start: u16::from_le_bytes([head[0], head[1]]) as usize,
            end: u16::from_le_bytes([head[2], head[3]]) as usize,
            content: CONTENTS[head[4] as usize % CONTENTS.len()].to_string(),
        });
    }
    (edits, rest)
}

fuzz_target!(|data: &[u8]| {
    let (edits, rest) = made_up_edits(data);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let original = Stream::parse(text);
    if original.error.is_some() {
        return;
    }
    assert!(
        edit::verify(&original, text, &[]).is_ok(),
        "an unchanged text failed verification"
    );
    let fix = Fix {
        edits,
        source: SourceId::LOCAL,
        applicability: Applicability::Safe,
        document: 0,
        changes: Vec::new(),
        description: String::new(),
        notes: Vec::new(),
    };
    if let Some(fixed) = edit::apply(text, &fix.edits) {
        if let Ok(after) = edit::verify(&original, &fixed, &[&fix]) {
            assert_eq!(after.documents.len(), original.documents.len());
            for (a, b) in original.documents.iter().zip(&after.documents) {
                assert_eq!(plain(&a.root), plain(&b.root));
            }
        }
    }

    STATE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let state = cell.get_or_insert_with(State::new);
        std::fs::write(&state.file, text).expect("write the case file");
        let run = state.linter.run(std::slice::from_ref(&state.dir));
        let plan = gpulint::fix::plan::plan(&state.linter, &run, true);
        for file in &plan.files {
            let fixed = Stream::parse(&file.fixed);
            assert!(
                fixed.error.is_none(),
                "the fixer planned an unparsable {}: {:?}\n{}",
                file.name,
                fixed.error,
                file.fixed
            );
        }
    });
});
