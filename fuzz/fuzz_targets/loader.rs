//! libFuzzer target: arbitrary bytes through the whole gpulint pipeline.
//!
//! In process: `Stream::parse_bytes`, `objects`, `Workload::of` with the built-in catalogue,
//! `rules::check_workload` and `Config::parse`; then from a file: `Linter::run` and every report
//! renderer (human, JSON, SARIF, GitHub, inventory) and the fixer's plan. Any panic is a crash; so is a span, offset,
//! line or column outside the file (the same invariants as `tests/integration/no_panic.rs`).

#![no_main]

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use gpulint::config::Config;
use gpulint::k8s::catalog::Catalog;
use gpulint::k8s::workload::{objects, Workload};
use gpulint::lint::{Linter, Run, Selection};
use gpulint::report::{self, github, human, inventory, json, sarif};
use gpulint::rules::{self, RepoFacts};
use gpulint::source::yaml::{Node, Span, Stream, Value};
use libfuzzer_sys::fuzz_target;

struct State {
    catalog: Catalog,
    linter: Linter,
    dir: PathBuf,
    file: PathBuf,
}

impl State {
    fn new() -> State {
        // One folder per fuzzing process (`-fork`/`-jobs` run several). Processes end by being
        // killed, so each new one removes the folders of processes that are gone.
        let tmp = std::env::temp_dir();
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(pid) = name.strip_prefix("gpulint-fuzz-") else {
                    continue;
                };
                if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = tmp.join(format!("gpulint-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the fuzz temp folder");
        State {
            catalog: Catalog::builtin(),
            linter: Linter::new(Config::default(), Selection::default()),
            file: dir.join("case.yaml"),
            dir,
        }
    }
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

fn check_span(text: &str, span: Span, what: &str) {
    let (start, end) = (span.start as usize, span.end as usize);
    assert!(
        start <= end && end <= text.len(),
        "{what}: span {}..{} outside the text ({} bytes)",
        span.start,
        span.end,
        text.len()
    );
    assert!(
        text.is_char_boundary(start) && text.is_char_boundary(end),
        "{what}: span {}..{} not on char boundaries",
        span.start,
        span.end
    );
}

fn check_line_col(stream: &Stream, (line, column): (usize, usize), what: &str) {
    assert!(
        line >= 1 && column >= 1 && line <= stream.lines.line_count(),
        "{what}: line {line} column {column} of {} lines",
        stream.lines.line_count()
    );
}

fn check_node(text: &str, node: &Node) {
    check_span(text, node.span, "node");
    match &node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter().for_each(|n| check_node(text, n)),
        Value::Map(entries) => entries.iter().for_each(|e| {
            check_node(text, &e.key);
            check_node(text, &e.value);
        }),
    }
}

fn in_process(state: &State, stream: &Stream) {
    let text: &str = &stream.text;
    if let Some(e) = &stream.error {
        assert!(e.offset <= text.len(), "error offset past the end");
        check_line_col(stream, stream.line_col(e.offset), "parse error");
    }
    let facts = RepoFacts::default();
    for (document, doc) in stream.documents.iter().enumerate() {
        let cx = state
            .linter
            .context(&facts, text, document, "default", None);
        check_node(text, &doc.root);
        for object in objects(doc) {
            let Some(w) = Workload::of(object, &state.catalog) else {
                continue;
            };
            for hit in rules::check_workload(&cx, &w) {
                assert!(rules::rule(hit.rule).is_some(), "unknown rule {}", hit.rule);
                check_span(text, hit.span, hit.rule.id());
            }
        }
    }
}

fn check_run(run: &Run) {
    for f in &run.findings {
        let file = &run.files[f.file];
        check_span(&file.stream.text, f.span, f.rule.id);
        let at = report::location(run, f);
        check_line_col(&file.stream, (at.line, at.column), f.rule.id);
        check_line_col(&file.stream, (at.end_line, at.end_column), f.rule.id);
    }
    for e in &run.errors {
        if let Some(file) = run.files.iter().find(|f| f.name == e.file) {
            check_line_col(&file.stream, (e.line, e.column), "input error");
        }
    }
}

fn render(run: &Run, linter: &Linter) {
    let _ = human::render(run, false);
    let _ = json::render(run).to_string();
    let _ = sarif::render(run).to_string();
    let g = github::render(run);
    assert!(
        g.lines().all(|l| l.starts_with("::")),
        "github output broken:\n{g}"
    );
    let inv = inventory::of_run(linter, run);
    let _ = inventory::table(linter, &inv);
}

fuzz_target!(|data: &[u8]| {
    STATE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let state = cell.get_or_insert_with(State::new);

        let stream = Stream::parse_bytes(data);
        in_process(state, &stream);

        let text = String::from_utf8_lossy(data);
        if let Err(e) = Config::parse(&text, Path::new(".gpulint.yaml")) {
            assert!(
                e.line >= 1 && e.column >= 1,
                "config error at {}:{}",
                e.line,
                e.column
            );
        }

        std::fs::write(&state.file, data).expect("write the case file");
        let run = state.linter.run(std::slice::from_ref(&state.dir));
        check_run(&run);
        render(&run, &state.linter);
        // The fixer's plan (nothing is written).
        let plan = gpulint::fix::plan::plan(&state.linter, &run, true);
        let _ = gpulint::fix::patch::diff(&plan);
    });
});
