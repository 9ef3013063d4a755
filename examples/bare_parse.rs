//! The parse floor for `bench/run.sh`: everything gpulint does to get its YAML trees, and nothing
//! after that.
//!
//! ```text
//! cargo run --release --example bare_parse -- [--events-only] PATH...
//! ```
//!
//! It walks the given folders (recursively, `*.yaml` / `*.yml`, skipping `.git`, sorted like
//! the linter's walk), then reads and parses every file in parallel on rayon's global pool, the
//! way `gpulint::lint::Linter::load` does:
//!
//! * default (tree): `gpulint::source::yaml::Stream::parse_bytes`, the linter's own parser
//!   (granit-parser events -> span-aware tree, line index, comments). Every `Stream` is kept until
//!   the end, as the linter keeps its files, so memory and the final drop cost the same.
//! * `--events-only`: only drives `granit_parser::Parser` over the text with the same options
//!   (`emit_comments: true`) and counts the events: a second, lower floor without the tree.
//!
//! It prints how many files, documents (and events) it parsed, so none of the work can be
//! optimised away. Exit code 0, or 2 on a usage error or an unreadable path.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use granit_parser::{Event, Parser};
use rayon::prelude::*;

use gpulint::source::yaml::Stream;

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Recursive `read_dir` walk; entries sorted by file name in each folder.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if entry.file_name() != ".git" {
                walk(&path, out)?;
            }
        } else if kind.is_file() && is_yaml(&path) {
            out.push(path);
        }
    }
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct Counts {
    files: usize,
    documents: usize,
    events: usize,
    errors: usize,
    bytes: usize,
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            files: self.files + o.files,
            documents: self.documents + o.documents,
            events: self.events + o.events,
            errors: self.errors + o.errors,
            bytes: self.bytes + o.bytes,
        }
    }
}

/// Tree floor: the linter's own parse of one file.
fn parse_tree(path: &Path) -> (Stream, usize) {
    let bytes = std::fs::read(path).unwrap_or_default();
    (Stream::parse_bytes(&bytes), bytes.len())
}

/// Event floor: granit-parser's events only, stopping at the first error like the tree builder.
fn parse_events(path: &Path) -> Counts {
    let bytes = std::fs::read(path).unwrap_or_default();
    let mut counts = Counts {
        files: 1,
        bytes: bytes.len(),
        ..Counts::default()
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        counts.errors = 1;
        return counts;
    };
    let options = granit_parser::options! { emit_comments: true };
    for next in Parser::new_from_str_with_options(text, options) {
        match next {
            Ok((event, _span)) => {
                counts.events += 1;
                if matches!(event, Event::DocumentStart(..)) {
                    counts.documents += 1;
                }
            }
            Err(_) => {
                counts.errors = 1;
                break;
            }
        }
    }
    counts
}

fn main() -> ExitCode {
    let mut events_only = false;
    let mut roots = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("--events-only") => events_only = true,
            Some("-h" | "--help") => {
                println!("usage: bare_parse [--events-only] PATH...");
                return ExitCode::SUCCESS;
            }
            _ => roots.push(PathBuf::from(arg)),
        }
    }
    if roots.is_empty() {
        eprintln!("usage: bare_parse [--events-only] PATH...");
        return ExitCode::from(2);
    }

    let mut files = Vec::new();
    for root in &roots {
        let result = if root.is_file() {
            files.push(root.clone());
            Ok(())
        } else {
            walk(root, &mut files)
        };
        if let Err(e) = result {
            eprintln!("error: {}: {e}", root.display());
            return ExitCode::from(2);
        }
    }

    let threads = rayon::current_num_threads();
    if events_only {
        let total = files
            .par_iter()
            .map(|p| parse_events(p))
            .reduce(Counts::default, |a, b| a + b);
        println!(
            "mode=events threads={threads} files={} documents={} events={} parse_errors={} bytes={}",
            total.files, total.documents, total.events, total.errors, total.bytes
        );
    } else {
        // Collected and kept alive like `Linter::load` keeps its `SourceFile`s.
        let streams: Vec<(Stream, usize)> = files.par_iter().map(|p| parse_tree(p)).collect();
        let total = streams.iter().fold(Counts::default(), |acc, (s, bytes)| {
            acc + Counts {
                files: 1,
                documents: s.documents.len(),
                events: 0,
                errors: usize::from(s.error.is_some()),
                bytes: *bytes,
            }
        });
        println!(
            "mode=tree threads={threads} files={} documents={} comments={} parse_errors={} bytes={}",
            total.files,
            total.documents,
            streams.iter().map(|(s, _)| s.comments.len()).sum::<usize>(),
            total.errors,
            total.bytes
        );
    }
    ExitCode::SUCCESS
}
