//! Robustness: no input makes the loader, the rules, the config parser or the reports panic, and
//! whatever they report stays inside the file they read.
//!
//! Inputs come from a small deterministic xorshift generator (no extra dependencies):
//!   (a) random bytes,
//!   (b) random YAML-ish token soup,
//!   (c) mutations of the real manifests under `testdata/corpus/raw` (and the files unchanged),
//!   (d) hand-written adversarial inputs: alias bombs, 10k-deep nesting, huge scalars, invalid
//!       UTF-8, BOMs, CRLF, NUL bytes, ...,
//!   (e) generated GPU workloads with odd quantities, resource names and suppressions,
//!   (f) generated `.gpulint.yaml` configs (random globs, rule settings and JSONPaths), which
//!       are then used to lint real manifests.
//!
//! Every input goes through the whole pipeline twice: in process (`Stream::parse_bytes`,
//! `objects`, `Workload::of` with the built-in catalogue, `rules::check_workload`,
//! `Config::parse`) and from a file in a temp folder (`Linter::run`, then every report
//! renderer). Besides "no panic" it checks that
//!   * every node span, error offset and finding span is inside its file and on char
//!     boundaries, and single-line plain scalars' spans hold exactly their text,
//!   * every line and column (errors, findings, reports, inventory) is >= 1 and within the file,
//!   * `Linter::run` finds exactly what the in-process pipeline finds,
//!   * the JSON, SARIF and GitHub outputs have one entry per finding / error, and GitHub
//!     workflow commands stay one per line whatever the messages contain.
//!
//! Scale it with `GPULINT_FUZZ_ITERATIONS=<cases per generator>` (default 300) and vary it with
//! `GPULINT_FUZZ_SEED=<u64>`. A failing input is shrunk (for up to `GPULINT_FUZZ_SHRINK_SECS`,
//! default 10), written to `<target>/tmp/no_panic-failures/`, and printed escaped with the panic
//! message and a backtrace.

use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use gpulint::config::Config;
use gpulint::k8s::catalog::Catalog;
use gpulint::k8s::workload::objects;
use gpulint::lint::{Linter, Run, Selection};
use gpulint::quantity::{
    format_bytes_binary, format_millicores, round_up_bytes_readable, Quantity,
};
use gpulint::report::{self, github, human, inventory, json, sarif};
use gpulint::rules::{self, RepoFacts, RULES};
use gpulint::source::yaml::{Node, ScalarKind, ScalarStyle, Span, Stream, Value};
use serde_json::Value as Json;

use crate::support::common::Rng;

// ------------------------------------------------------------------------------------------
// Deterministic randomness

/// The shared RNG (tests/integration/support/common.rs) plus the length picker only the fuzzer needs.
impl Rng {
    /// A length that is usually small but sometimes large.
    fn len(&mut self, max: usize) -> usize {
        match self.below(10) {
            0..=5 => self.below(max / 16 + 1),
            6..=8 => self.below(max / 4 + 1),
            _ => self.below(max + 1),
        }
    }
}

fn seed() -> u64 {
    std::env::var("GPULINT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0x0067_7075_6c69_6e74) // "gpulint"
}

fn iterations() -> usize {
    std::env::var("GPULINT_FUZZ_ITERATIONS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(300)
}

// ------------------------------------------------------------------------------------------
// Panic capture: the message, the location and a backtrace of every panic inside a case.

struct PanicReport {
    message: String,
    location: String,
    backtrace: String,
}

thread_local! {
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<PanicReport>> = const { RefCell::new(None) };
}

/// Panics on threads that are not running a case (rayon workers inside `Linter::run`).
static OTHER_PANIC: Mutex<Option<PanicReport>> = Mutex::new(None);

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".to_string());
            let report = PanicReport {
                message,
                location: info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default(),
                backtrace: short_backtrace(&Backtrace::force_capture().to_string()),
            };
            if IN_CASE.with(Cell::get) {
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(report));
            } else if std::thread::current().name().is_none() {
                // A pool thread of Linter::run: keep it for the case that is waiting on it.
                *OTHER_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
                default(info);
            } else {
                default(info);
            }
        }));
    });
}

/// The frames that matter: from the panic up to the harness, without std and rayon plumbing.
fn short_backtrace(full: &str) -> String {
    let mut frames: Vec<(String, String)> = Vec::new();
    for line in full.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("at ") {
            if let Some(last) = frames.last_mut() {
                last.1 = trimmed.to_string();
            }
        } else if let Some((_, symbol)) = trimmed.split_once(": ") {
            frames.push((symbol.to_string(), String::new()));
        }
    }
    let plumbing = [
        "std::",
        "core::",
        "alloc::",
        "__rust",
        "<alloc::",
        "<core::",
        "<std::",
        "rayon::",
        "rayon_core::",
        "<rayon",
        "test::",
        "no_panic::install_panic_hook",
    ];
    let mut out = String::new();
    for (symbol, at) in frames {
        if symbol.contains("Harness::guarded") {
            break;
        }
        if plumbing.iter().any(|p| symbol.starts_with(p)) {
            continue;
        }
        let _ = writeln!(out, "    {symbol}\n        {at}");
    }
    out
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "<non-string panic payload>".to_string())
}

/// Prints bytes as a Rust byte-string literal body, cut after `max` bytes.
fn escaped(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    for &b in bytes.iter().take(max) {
        out.extend(std::ascii::escape_default(b).map(char::from));
    }
    if bytes.len() > max {
        let _ = write!(out, "... ({} more bytes)", bytes.len() - max);
    }
    out
}

// ------------------------------------------------------------------------------------------
// Temp folders

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "gpulint-no-panic-{}-{tag}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create the temp folder");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ------------------------------------------------------------------------------------------
// The corpus

struct Corpus {
    files: Vec<(PathBuf, Vec<u8>)>,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

impl Corpus {
    fn load() -> Corpus {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/raw");
        let mut paths = Vec::new();
        walk(&root, &mut paths);
        // The model-fit manifests too (Kaito Workspaces, NIM services and their operators'
        // shapes), so their mutations reach those readers.
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fit"),
            &mut paths,
        );
        paths.sort();
        let files: Vec<_> = paths
            .into_iter()
            .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
            .collect();
        assert!(
            files.len() >= 10,
            "expected the corpus under {}, found {} files",
            root.display(),
            files.len()
        );
        Corpus { files }
    }

    fn yaml(&self) -> impl Iterator<Item = &(PathBuf, Vec<u8>)> {
        self.files.iter().filter(|(p, _)| is_yaml(p))
    }

    fn pick_yaml(&self, rng: &mut Rng) -> &(PathBuf, Vec<u8>) {
        let yaml: Vec<_> = self.yaml().collect();
        yaml[rng.below(yaml.len())]
    }

    fn pick_any(&self, rng: &mut Rng) -> &(PathBuf, Vec<u8>) {
        if rng.chance(90) {
            self.pick_yaml(rng)
        } else {
            rng.pick(&self.files)
        }
    }
}

fn is_yaml(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e == "yaml" || e == "yml")
}

// ------------------------------------------------------------------------------------------
// Invariants

fn check_span(text: &str, span: Span, what: &dyn std::fmt::Display) {
    assert!(
        span.start() <= span.end() && span.end() <= text.len(),
        "{what}: span {}..{} outside the text ({} bytes)",
        span.start(),
        span.end(),
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start()) && text.is_char_boundary(span.end()),
        "{what}: span {}..{} is not on char boundaries",
        span.start(),
        span.end()
    );
}

fn check_line_col(stream: &Stream, (line, column): (usize, usize), what: &dyn std::fmt::Display) {
    let lines = stream.lines.line_count();
    assert!(
        line >= 1 && column >= 1 && line <= lines,
        "{what}: line {line} column {column} (the file has {lines} lines)"
    );
}

fn check_node(text: &str, node: &Node, depth: usize) {
    assert!(depth <= 1000, "a tree deeper than any bound");
    check_span(text, node.span, &"node");
    let children: Vec<&Node> = match &node.value {
        Value::Scalar(s) => {
            // Findings and fixes point at node spans: they must hold the written scalar.
            // (An implicit null, `a:`, is an empty span holding `~`.)
            let implicit_null = s.kind == ScalarKind::Null && node.span.start() == node.span.end();
            if !node.via_alias && !s.text.is_empty() && !implicit_null {
                let written = &text[node.span.start()..node.span.end()];
                match s.style {
                    ScalarStyle::Plain if !written.contains(['\n', '\r']) => assert_eq!(
                        written,
                        s.text,
                        "a plain scalar's span {}..{} does not hold its text",
                        node.span.start(),
                        node.span.end()
                    ),
                    ScalarStyle::DoubleQuoted => assert!(
                        written.len() >= 2 && written.starts_with('"') && written.ends_with('"'),
                        "a double-quoted scalar's span {}..{} is {written:?}",
                        node.span.start(),
                        node.span.end()
                    ),
                    ScalarStyle::SingleQuoted => assert!(
                        written.len() >= 2 && written.starts_with('\'') && written.ends_with('\''),
                        "a single-quoted scalar's span {}..{} is {written:?}",
                        node.span.start(),
                        node.span.end()
                    ),
                    _ => {}
                }
            }
            Vec::new()
        }
        Value::Seq(items) => items.iter().collect(),
        Value::Map(entries) => entries.iter().flat_map(|e| [&e.key, &e.value]).collect(),
    };
    for child in children {
        check_node(text, child, depth + 1);
        if !node.via_alias && !child.via_alias && !node.flow {
            // A child written in the file sits inside its parent.
            assert!(
                node.span.start() <= child.span.start() && child.span.end() <= node.span.end(),
                "child span {}..{} outside its parent {}..{}",
                child.span.start(),
                child.span.end(),
                node.span.start(),
                node.span.end()
            );
        }
    }
}

fn check_stream(stream: &Stream, bytes: &[u8]) {
    let text: &str = &stream.text;
    match std::str::from_utf8(bytes) {
        Ok(s) => assert_eq!(text, s, "the stream keeps the text as read"),
        Err(e) => {
            let error = stream.error.as_ref().expect("invalid UTF-8 is an error");
            assert_eq!(error.offset, e.valid_up_to(), "invalid UTF-8 offset");
            assert!(stream.documents.is_empty(), "documents from invalid UTF-8");
        }
    }
    // Lines break at `\n` and at a lone `\r`, as YAML (and the parser's comment lines) count.
    let lone_cr = text.matches('\r').count() - text.matches("\r\n").count();
    assert_eq!(
        stream.lines.line_count(),
        text.matches('\n').count() + lone_cr + 1,
        "line count"
    );
    if let Some(e) = &stream.error {
        assert!(
            e.offset <= text.len(),
            "error offset {} past the end ({} bytes): {}",
            e.offset,
            text.len(),
            e.message
        );
        assert!(
            text.is_char_boundary(e.offset),
            "error offset {} not on a char boundary: {}",
            e.offset,
            e.message
        );
        assert!(!e.message.is_empty(), "an empty error message");
        check_line_col(stream, stream.line_col(e.offset), &"the parse error");
    }
    for doc in &stream.documents {
        assert!(!doc.root.is_null(), "a null document is kept");
        check_node(text, &doc.root, 0);
    }
}

/// Every scalar through the quantity parser and its arithmetic.
fn exercise_quantities(stream: &Stream) {
    fn visit(node: &Node, budget: &mut usize) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        match &node.value {
            Value::Scalar(s) => quantity(&s.text),
            Value::Seq(items) => items.iter().for_each(|n| visit(n, budget)),
            Value::Map(entries) => entries.iter().for_each(|e| {
                visit(&e.key, budget);
                visit(&e.value, budget);
            }),
        }
    }
    let mut budget = 20_000;
    for doc in &stream.documents {
        visit(&doc.root, &mut budget);
    }
}

fn quantity(text: &str) {
    let q = match text.trim().parse::<Quantity>() {
        Ok(q) => q,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert_eq!(q.cmp(&q), std::cmp::Ordering::Equal);
    assert!(
        !(q.is_zero() && q.is_negative()),
        "{text:?}: zero and negative"
    );
    assert_eq!(q.is_zero(), q == Quantity::ZERO, "{text:?}");
    assert_eq!(q.is_negative(), q < Quantity::ZERO, "{text:?}");
    if let Some(n) = q.as_whole_i128() {
        assert!(q.is_whole());
        assert_eq!(q.ceil_bytes(), Some(n), "{text:?}: ceil of a whole number");
    }
    if let Some(bytes) = q.ceil_bytes() {
        let _ = format_bytes_binary(bytes);
        let rounded = round_up_bytes_readable(bytes);
        if bytes > 0 && bytes < i128::MAX / 2 {
            assert!(
                rounded >= bytes,
                "{text:?}: rounding {bytes} up gave {rounded}"
            );
        }
    }
    if let Some(m) = q.millis_ceil() {
        let _ = format_millicores(m);
    }
}

// ------------------------------------------------------------------------------------------
// The harness

type Key = (usize, usize, &'static str);

#[derive(Default)]
struct Stats {
    cases: usize,
    parse_errors: usize,
    documents: usize,
    workloads: usize,
    hits: usize,
    findings: usize,
    configs_ok: usize,
    bytes: usize,
    /// Time in `Linter::run`, the renderers and the fix planner.
    linter_time: Duration,
    fix_time: Duration,
}

struct Harness {
    phase: &'static str,
    catalog: Catalog,
    /// `Config::default()`, `Selection::default()`.
    plain: Linter,
    /// Every rule forced on with `--select`, and `kueue: {required: true}`.
    everything: Linter,
    dir: TempDir,
    file: PathBuf,
    stats: Stats,
    /// The report of the first failure at each panic location.
    failures: Vec<String>,
    /// How many cases failed at each location (message of the first one).
    by_location: Vec<(String, String, usize)>,
    failed: usize,
    started: Instant,
}

impl Harness {
    fn new(phase: &'static str) -> Harness {
        install_panic_hook();
        // Failures of an earlier run of this phase would be mistaken for this run's.
        if let Ok(old) = std::fs::read_dir(failure_dir()) {
            for entry in old.flatten() {
                if entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{phase}-"))
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let dir = TempDir::new(phase);
        let file = dir.0.join("case.yaml");
        let mut config = Config::default();
        config.kueue_required = true;
        let select_all = Selection {
            select: RULES.iter().map(|r| r.rule).collect(),
            ignore: Vec::new(),
            measured_only: false,
        };
        Harness {
            phase,
            catalog: Catalog::builtin(),
            plain: Linter::new(Config::default(), Selection::default()),
            everything: Linter::new(config, select_all),
            dir,
            file,
            stats: Stats::default(),
            failures: Vec::new(),
            by_location: Vec::new(),
            failed: 0,
            started: Instant::now(),
        }
    }

    /// Runs one input through everything; a panic or a broken invariant is recorded.
    fn case(&mut self, label: &str, bytes: &[u8]) {
        self.stats.cases += 1;
        self.stats.bytes += bytes.len();
        let everything = self.stats.cases % 4 == 0;
        match self.attempt(bytes, everything) {
            Ok(stats) => {
                self.stats.parse_errors += stats.parse_errors;
                self.stats.documents += stats.documents;
                self.stats.workloads += stats.workloads;
                self.stats.hits += stats.hits;
                self.stats.findings += stats.findings;
                self.stats.configs_ok += stats.configs_ok;
                self.stats.linter_time += stats.linter_time;
                self.stats.fix_time += stats.fix_time;
            }
            Err(report) => self.record(label, bytes, everything, report),
        }
    }

    /// Like `case`, then lints `extra` corpus files with the input as the config, if it is one.
    fn config_case(&mut self, label: &str, bytes: &[u8], extra: &[PathBuf]) {
        self.case(label, bytes);
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut inputs = extra.to_vec();
        inputs.push(self.file.clone());
        let outcome = self.guarded(|_| {
            let Ok(config) = Config::parse(&text, Path::new(".gpulint.yaml")) else {
                return Stats::default();
            };
            let mut rng = Rng::new(text.len() as u64);
            let pick = |rng: &mut Rng| rng.pick(RULES).rule;
            let selection = Selection {
                select: (0..rng.below(3)).map(|_| pick(&mut rng)).collect(),
                ignore: (0..rng.below(2)).map(|_| pick(&mut rng)).collect(),
                measured_only: false,
            };
            let linter = Linter::new(config, selection);
            let run = linter.run(&inputs);
            check_run(&run);
            render(&run, &linter);
            Stats {
                configs_ok: 1,
                findings: run.findings.len(),
                ..Stats::default()
            }
        });
        match outcome {
            Ok(s) => {
                self.stats.configs_ok += s.configs_ok;
                self.stats.findings += s.findings;
            }
            Err(report) => self.record(&format!("{label} (as the config)"), bytes, false, report),
        }
    }

    fn guarded<T>(&self, f: impl FnOnce(&Harness) -> T) -> Result<T, PanicReport> {
        IN_CASE.with(|c| c.set(true));
        LAST_PANIC.with(|p| p.borrow_mut().take());
        let result = panic::catch_unwind(AssertUnwindSafe(|| f(self)));
        IN_CASE.with(|c| c.set(false));
        result.map_err(|payload| {
            LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .or_else(|| OTHER_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take())
                .unwrap_or_else(|| PanicReport {
                    message: payload_message(&*payload),
                    location: String::new(),
                    backtrace: String::new(),
                })
        })
    }

    fn attempt(&self, bytes: &[u8], everything: bool) -> Result<Stats, PanicReport> {
        self.guarded(|h| h.pipeline(bytes, everything))
    }

    fn pipeline(&self, bytes: &[u8], everything: bool) -> Stats {
        let mut stats = Stats::default();

        // In process: the loader, the workload view and the rules.
        let stream = Stream::parse_bytes(bytes);
        check_stream(&stream, bytes);
        stats.parse_errors = usize::from(stream.error.is_some());
        stats.documents = stream.documents.len();
        let mut expected = self.in_process(&stream, everything, &mut stats);
        exercise_quantities(&stream);

        // The config parser, on the same text.
        let text = String::from_utf8_lossy(bytes);
        match Config::parse(&text, Path::new("fuzz/.gpulint.yaml")) {
            Err(e) => {
                let lone_cr = text.matches('\r').count() - text.matches("\r\n").count();
                let lines = text.matches('\n').count() + lone_cr + 1;
                assert!(
                    e.line >= 1 && e.column >= 1 && e.line <= lines,
                    "config error at {}:{} ({lines} lines): {}",
                    e.line,
                    e.column,
                    e.message
                );
                assert!(e.to_string().starts_with("fuzz/.gpulint.yaml:"), "{e}");
            }
            Ok(config) => {
                stats.configs_ok = 1;
                for r in RULES {
                    let _ = (config.rule_enabled(r), config.severity(r));
                    let _ = config.ignored(Path::new("fuzz/charts/a.yaml"), r.id);
                }
                let _ = config.is_excluded(Path::new("fuzz/vendor/x/a.yaml"));
            }
        }

        // From a file: Linter::run and every report.
        let from_file = Instant::now();
        std::fs::write(&self.file, bytes).expect("write the case file");
        let linter = if everything {
            &self.everything
        } else {
            &self.plain
        };
        let run = linter.run(std::slice::from_ref(&self.dir.0));
        assert_eq!(run.files.len(), 1, "Linter::run reads the one case file");
        assert_eq!(&*run.files[0].stream.text, &*stream.text, "same text read");
        assert_eq!(
            run.errors.len(),
            usize::from(stream.error.is_some()),
            "one input error per parse error: {:?}",
            run.errors
        );
        if let (Some(e), Some(reported)) = (&stream.error, run.errors.first()) {
            assert_eq!(
                (reported.line, reported.column),
                stream.line_col(e.offset),
                "input error position"
            );
        }
        check_run(&run);
        let mut found: Vec<Key> = run
            .findings
            .iter()
            // Without `kueue.required`, KUE001 depends on the LocalQueues of the whole input.
            .filter(|f| everything || f.rule.id != "KUE001")
            .map(|f| (f.span.start(), f.span.end(), f.rule.id))
            .collect();
        found.sort_unstable();
        expected.sort_unstable();
        assert_eq!(
            found, expected,
            "Linter::run and the in-process pipeline disagree (left: Linter::run)"
        );
        stats.findings = run.findings.len();
        let fixing = Instant::now();
        plan_fixes(&run, linter);
        stats.fix_time = fixing.elapsed();
        render(&run, linter);
        stats.linter_time = from_file.elapsed();

        // Last, so that inputs failing it still get every other check: suppression comments are
        // matched to findings by line, so comments must count lines as the line index does.
        for c in &stream.comments {
            assert!(
                c.line >= 1 && c.line <= stream.lines.line_count(),
                "comment on line {} of a {}-line text: the parser and the line index count \
                 lines differently (a lone CR?)",
                c.line,
                stream.lines.line_count()
            );
        }
        stats
    }

    fn in_process(&self, stream: &Stream, everything: bool, stats: &mut Stats) -> Vec<Key> {
        let text: &str = &stream.text;
        // Cross-object facts (queues, quotas) of the one case file, as `Linter::run` has them.
        let mut facts = RepoFacts::default();
        for doc in &stream.documents {
            for object in objects(doc) {
                facts.add(&object);
            }
        }
        // The rules' inputs as the Linter under comparison has them (no measured usage).
        let linter = if everything {
            &self.everything
        } else {
            &self.plain
        };
        let mut expected = Vec::new();
        for (document, doc) in stream.documents.iter().enumerate() {
            let cx = linter.context(&facts, text, document, "default", None);
            for object in objects(doc) {
                check_span(text, object.node.span, &"object");
                assert!(object.path.starts_with('$'), "object path {}", object.path);
                let _ = object.id.display_name();
                // A LocalQueue is checked on its own, a Kaito Workspace without a pod
                // template too, as `Linter::run` does.
                let Some(w) = rules::view(object, &self.catalog) else {
                    continue;
                };
                stats.workloads += 1;
                for p in &w.pods {
                    check_span(text, p.spec.span, &"pod spec");
                    assert!(p.path.starts_with(&w.object.path), "pod path {}", p.path);
                }
                for c in &w.containers {
                    check_span(text, c.node.span, &"container");
                    assert!(c.path.starts_with(&w.object.path), "container {}", c.path);
                    assert!(c.pod.is_none_or(|i| i < w.pods.len()), "pod index");
                    let r = &c.resources;
                    for q in r.requests.entries.iter().chain(&r.limits.entries) {
                        check_span(text, q.key.span, &"resource name");
                        check_span(text, q.value.span, &"quantity");
                    }
                    let _ = r.names();
                }
                let _ = w.annotations(gpulint::lint::IGNORE_ANNOTATION);
                for hit in rules::check_workload(&cx, &w) {
                    let info = rules::rule(hit.rule)
                        .unwrap_or_else(|| panic!("a hit of an unknown rule {}", hit.rule));
                    check_span(text, hit.span, &format_args!("{} hit", hit.rule));
                    assert!(!hit.message.is_empty(), "{} without a message", hit.rule);
                    stats.hits += 1;
                    if everything || (info.enabled_by_default && info.id != "KUE001") {
                        expected.push((hit.span.start(), hit.span.end(), info.id));
                    }
                }
            }
        }
        expected
    }

    /// Shrinks a failing input (same panic location) by deleting chunks, within a time budget.
    fn shrink(&self, bytes: &[u8], everything: bool, location: &str) -> Vec<u8> {
        let mut best = bytes.to_vec();
        let secs = std::env::var("GPULINT_FUZZ_SHRINK_SECS")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(10);
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut chunk = (best.len() / 2).max(1);
        let mut attempts = 0;
        while attempts < 3000 && Instant::now() < deadline {
            let mut progress = false;
            let mut i = 0;
            while i < best.len() && attempts < 3000 && Instant::now() < deadline {
                let mut candidate = best.clone();
                candidate.drain(i..(i + chunk).min(best.len()));
                attempts += 1;
                let same = self
                    .attempt(&candidate, everything)
                    .err()
                    .is_some_and(|r| r.location == location);
                if same {
                    best = candidate;
                    progress = true;
                } else {
                    i += chunk;
                }
            }
            if !progress {
                if chunk == 1 {
                    break;
                }
                chunk /= 2;
            }
        }
        best
    }

    fn record(&mut self, label: &str, bytes: &[u8], everything: bool, report: PanicReport) {
        self.failed += 1;
        // Only the first failure at each location is shrunk and reported; the rest are counted.
        if let Some(entry) = self
            .by_location
            .iter_mut()
            .find(|(l, _, _)| *l == report.location)
        {
            entry.2 += 1;
            return;
        }
        self.by_location
            .push((report.location.clone(), report.message.clone(), 1));
        if self.failures.len() >= 10 {
            return;
        }
        let minimal = if report.location.is_empty() {
            bytes.to_vec()
        } else {
            self.shrink(bytes, everything, &report.location)
        };
        let out = failure_dir();
        let _ = std::fs::create_dir_all(&out);
        let n = self.failures.len();
        let full = out.join(format!("{}-{n}.input", self.phase));
        let small = out.join(format!("{}-{n}.min.input", self.phase));
        let _ = std::fs::write(&full, bytes);
        let _ = std::fs::write(&small, &minimal);
        let mut text = String::new();
        let _ = writeln!(
            text,
            "[{}] case {} ({label}, {} linter): {}\n  at {}\n  input: {} bytes in {}\n  shrunk: {} bytes in {}\n  shrunk input: b\"{}\"",
            self.phase,
            self.stats.cases,
            if everything { "select-all + kueue.required" } else { "default" },
            report.message,
            report.location,
            bytes.len(),
            full.display(),
            minimal.len(),
            small.display(),
            escaped(&minimal, 2000),
        );
        let _ = writeln!(text, "  backtrace:\n{}", report.backtrace);
        eprintln!("{text}");
        self.failures.push(text);
    }

    fn finish(self) -> Stats {
        let s = &self.stats;
        eprintln!(
            "[{}] {} cases ({} bytes) in {:.1?}: {} parse errors, {} documents, {} workloads, \
             {} rule hits, {} findings, {} valid configs, {} failures; {:.1?} in Linter::run, \
             reports and fixes, {:.1?} of it planning fixes",
            self.phase,
            s.cases,
            s.bytes,
            self.started.elapsed(),
            s.parse_errors,
            s.documents,
            s.workloads,
            s.hits,
            s.findings,
            s.configs_ok,
            self.failed,
            s.linter_time,
            s.fix_time
        );
        if self.failed > 0 {
            let counts: String = self
                .by_location
                .iter()
                .map(|(at, message, n)| format!("  {n:5} at {at}: {message}\n"))
                .collect();
            panic!(
                "[{}] {} of {} cases failed, by location:\n{counts}\nthe first failure at each:\n{}",
                self.phase,
                self.failed,
                s.cases,
                self.failures.join("\n")
            );
        }
        Stats { ..self.stats }
    }
}

fn failure_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("no_panic-failures")
}

/// Invariants of a finished run: findings, errors and their positions.
fn check_run(run: &Run) {
    for f in &run.findings {
        assert!(f.file < run.files.len(), "finding in file {}", f.file);
        let file = &run.files[f.file];
        check_span(
            &file.stream.text,
            f.span,
            &format_args!("{} finding", f.rule.id),
        );
        let at = report::location(run, f);
        let what = format_args!("{} finding", f.rule.id);
        check_line_col(&file.stream, (at.line, at.column), &what);
        check_line_col(&file.stream, (at.end_line, at.end_column), &what);
        assert!(
            (at.end_line, at.end_column) >= (at.line, at.column),
            "{} finding ends before it starts",
            f.rule.id
        );
    }
    for e in &run.errors {
        if let Some(file) = run.files.iter().find(|f| f.name == e.file) {
            check_line_col(&file.stream, (e.line, e.column), &"input error");
        }
        if let Some((index, offset)) = e.source {
            assert!(index < run.files.len(), "input error in file {index}");
            let text = &run.files[index].stream.text;
            check_span(text, Span::new(offset, offset), &"input error source");
        }
    }
}

/// The fixer's plan (nothing is written): fixed texts must still parse.
fn plan_fixes(run: &Run, linter: &Linter) {
    let plan = gpulint::fix::plan::plan(linter, run, true);
    for f in &plan.files {
        let original = run
            .files
            .iter()
            .find(|s| s.name == f.name)
            .expect("a fixed file is an input");
        assert_eq!(f.original, &*original.stream.text, "fix of another text");
        if original.stream.error.is_none() {
            let fixed = Stream::parse(&f.fixed);
            assert!(
                fixed.error.is_none(),
                "a fix broke the YAML: {:?}\nfixed text:\n{}",
                fixed.error,
                f.fixed
            );
        }
        for a in &f.applied {
            assert!(a.line >= 1, "{} fix on line {}", a.rule, a.line);
        }
    }
    let _ = gpulint::fix::patch::diff(&plan);
}

/// Every renderer, with checks of what the machine-readable ones say.
fn render(run: &Run, linter: &Linter) {
    let active = run
        .findings
        .iter()
        .filter(|f| f.suppression.is_none())
        .count();
    for color in [false, true] {
        let out = human::render(run, color);
        assert!(out.ends_with('\n'), "human output ends with a newline");
    }
    let _ = human::summary(run);

    let j = json::render(run);
    let findings = j["findings"].as_array().expect("json findings");
    assert_eq!(findings.len(), active, "json: one entry per finding");
    assert_eq!(
        j["errors"].as_array().map(Vec::len),
        Some(run.errors.len()),
        "json: one entry per error"
    );
    for f in findings {
        for key in ["line", "column", "end_line", "end_column"] {
            assert!(f[key].as_u64().is_some_and(|n| n >= 1), "json {key}: {f}");
        }
    }
    let reparsed: Json = serde_json::from_str(&j.to_string()).expect("json output parses");
    assert_eq!(reparsed, j);

    let s = sarif::render(run);
    let results = s["runs"][0]["results"].as_array().expect("sarif results");
    assert_eq!(
        results.len(),
        run.findings.len(),
        "sarif: one result per finding"
    );
    for r in results {
        let region = &r["locations"][0]["physicalLocation"]["region"];
        for key in ["startLine", "startColumn", "endLine", "endColumn"] {
            assert!(region[key].as_u64().is_some_and(|n| n >= 1), "sarif {key}");
        }
    }
    let _ = s.to_string();

    let g = github::render(run);
    assert_eq!(
        g.lines().count(),
        active + run.errors.len(),
        "github: one workflow command per finding and error"
    );
    assert!(
        g.lines().all(|l| l.starts_with("::")),
        "github: a message broke out of its workflow command:\n{g}"
    );

    let inv = inventory::of_run(linter, run);
    for w in inv["workloads"].as_array().expect("inventory workloads") {
        assert!(
            w["line"].as_u64().is_some_and(|n| n >= 1),
            "inventory line: {w}"
        );
    }
    let table = inventory::table(linter, &inv);
    assert!(table.contains("GPUs by namespace"));
}

// ------------------------------------------------------------------------------------------
// Generators

const YAMLISH: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "-",
    "#",
    "&",
    "*",
    "!",
    "|",
    ">",
    "'",
    "\"",
    "\n",
    "\t",
    " ",
    " ",
    " ",
    "  ",
    "\n",
    "\n  ",
    "\n- ",
    ": ",
    ", ",
    "---",
    "...",
    "---\n",
    "a",
    "b",
    "x",
    "Z",
    "0",
    "1",
    "2",
    "9",
    ".",
    "e",
    "Gi",
    "m",
    "nvidia.com/gpu",
    "resources",
    "limits",
    "requests",
    "containers",
    "kind: Pod",
    "kind: Job",
    "kind: Deployment",
    "apiVersion: v1",
    "apiVersion: batch/v1",
    "spec",
    "template",
    "name",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "<<",
    "? ",
    "!!str ",
    "!custom ",
    "%YAML 1.2\n",
    "~",
    "null",
    "true",
    "\\",
    "\\n",
    "\\x",
    "\\u",
    "emptyDir",
    "medium: Memory",
    "sizeLimit",
    "volumes",
    "volumeMounts",
    "memory",
    "cpu",
    "# gpulint: ignore[GPU001]",
    "gpulint.io/ignore",
    "${GPUS}",
    "{{ .Values.gpu }}",
    "é",
    "🚀",
    "\u{feff}",
    "\r\n",
    "\0",
];

fn token_soup(rng: &mut Rng) -> Vec<u8> {
    let n = rng.len(400);
    let mut out = String::new();
    for _ in 0..n {
        out.push_str(rng.one(YAMLISH));
    }
    out.into_bytes()
}

fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    let n = rng.len(4096);
    let mode = rng.below(3);
    (0..n)
        .map(|_| match mode {
            0 => rng.next() as u8,
            1 => {
                const ALPHABET: &[u8] = b" \n\t:-[]{},#&*!|>'\"abcxyz0123456789";
                ALPHABET[rng.below(ALPHABET.len())]
            }
            _ => {
                if rng.chance(90) {
                    (0x20 + rng.below(0x5f)) as u8
                } else {
                    rng.next() as u8
                }
            }
        })
        .collect()
}

/// Odd quantities, the kind that break parsers and comparisons.
fn weird_quantity(rng: &mut Rng) -> String {
    const FIXED: &[&str] = &[
        "1",
        "0",
        "-1",
        "2",
        "8",
        "0.5",
        "500m",
        "1000m",
        "1e3",
        "1E3",
        "1e-3",
        "1e400",
        "1e9223372036854775807",
        "1e-9223372036854775808",
        "1e99999999999999999999",
        "1Ei",
        "8Ei",
        "99999999999999999999999999999999999999999",
        "170141183460469231731687303715884105727",
        "-170141183460469231731687303715884105728",
        "170141183460469231731687303715884105728",
        "0.0000000001",
        "1n",
        "1u",
        "1k",
        "1Ki",
        "1.5Gi",
        "16Gi",
        "16G",
        "16GB",
        ".5",
        "5.",
        ".",
        "-",
        "+",
        "+1",
        "--1",
        "1..2",
        "0x10",
        "0o7",
        "1_000",
        " 1",
        "1 ",
        "${GPUS}",
        "{{ .Values.gpu }}",
        "'1'",
        "\"2\"",
        "~",
        "null",
        "true",
        "[]",
        "{}",
        "一",
        "١",
        "∞",
        ".nan",
        ".inf",
        "-.inf",
        "1e",
        "1e+",
        "1E--1",
        "1e1.5",
        "8192Mi",
        "8Gi",
        "4",
        "4000m",
        "4.0",
        "-0",
        "0.0",
        "1Mi",
        "64Mi",
        "1e18Ei",
        "1e-18",
        "9.999999999e-10",
        "100Ti",
        "1e30",
        "1Pi",
        "\"\"",
    ];
    match rng.below(10) {
        0 => {
            let digits: String = (0..rng.range(1, 200))
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect();
            let suffix = rng.one(&["", "Ei", "m", "n", "e-30", "e30", "Gi", ".5"]);
            format!("{digits}{suffix}")
        }
        1 => format!("{}e{}", rng.below(1000), rng.next() as i64),
        2 => format!("{}.{}", rng.below(100), rng.below(1_000_000_000)),
        _ => rng.one(FIXED).to_string(),
    }
}

fn weird_resource_name(rng: &mut Rng) -> String {
    const NAMES: &[&str] = &[
        "nvidia.com/gpu",
        "nvidia.com/gpu",
        "nvidia.com/gpu",
        "cpu",
        "memory",
        "amd.com/gpu",
        "nvidia.com/gpus",
        "nvidia.com/GPU",
        "NVIDIA.com/gpu",
        "nvidia.com/mig-1g.5gb",
        "nvidia.com/mig-3g.20gb",
        "nvidia.com/mig-",
        "mig-1g.5gb",
        "gpu.intel.com/i915",
        "gpu.intel.com/xe",
        "nvidia.com/gpu.shared",
        "nvidia.com/gpumem",
        "gpu",
        "nvidia",
        "ephemeral-storage",
        "hugepages-2Mi",
        "example.com/gpu",
        "nvidia.com/gpu\n::error::x",
        "nvidia.com/gpü",
        "nvidia.com/🚀gpu",
        "",
        "nvidia.com/gpu,x:y%z",
    ];
    rng.one(NAMES).to_string()
}

/// A scalar: plain when it looks safe, else quoted (sometimes left plain anyway).
fn scalar(rng: &mut Rng, s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || "./-_$".contains(c))
        && !s.starts_with(['-', '.']);
    if (safe && rng.chance(85)) || rng.chance(3) {
        return s.to_string();
    }
    if rng.chance(20) && !s.contains(['\'', '\n']) {
        return format!("'{s}'");
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A tiny tree, emitted in block or flow style.
enum G {
    S(String),
    M(Vec<(String, G)>),
    L(Vec<G>),
}

fn m(entries: Vec<(&str, G)>) -> G {
    G::M(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn s(v: &str) -> G {
    G::S(v.to_string())
}

fn emit_flow(rng: &mut Rng, g: &G, out: &mut String) {
    match g {
        G::S(v) => out.push_str(&scalar(rng, v)),
        G::L(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                emit_flow(rng, item, out);
            }
            out.push(']');
        }
        G::M(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&scalar(rng, k));
                out.push_str(": ");
                emit_flow(rng, v, out);
            }
            out.push('}');
        }
    }
}

/// Block style at `indent`; a collection may switch to flow style at random.
fn emit_block(rng: &mut Rng, g: &G, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match g {
        G::S(_) => {
            out.push(' ');
            emit_flow(rng, g, out);
            out.push('\n');
        }
        G::L(items) if items.is_empty() || rng.chance(15) => {
            out.push(' ');
            emit_flow(rng, g, out);
            out.push('\n');
        }
        G::M(entries) if entries.is_empty() || rng.chance(15) => {
            out.push(' ');
            emit_flow(rng, g, out);
            out.push('\n');
        }
        G::L(items) => {
            out.push('\n');
            for item in items {
                out.push_str(&pad);
                out.push('-');
                emit_block(rng, item, indent + 2, out);
            }
        }
        G::M(entries) => {
            out.push('\n');
            for (k, v) in entries {
                if rng.chance(3) {
                    let rule = rng.pick(RULES);
                    let _ = writeln!(out, "{pad}# gpulint: ignore[{}] generated", rule.id);
                }
                out.push_str(&pad);
                out.push_str(&scalar(rng, k));
                out.push(':');
                emit_block(rng, v, indent + 2, out);
            }
        }
    }
}

fn emit_document(rng: &mut Rng, g: &G) -> String {
    let mut out = String::new();
    let G::M(entries) = g else {
        emit_flow(rng, g, &mut out);
        out.push('\n');
        return out;
    };
    for (k, v) in entries {
        out.push_str(&scalar(rng, k));
        out.push(':');
        emit_block(rng, v, 2, &mut out);
    }
    out
}

fn resource_map(rng: &mut Rng) -> G {
    G::M(
        (0..rng.below(5))
            .map(|_| (weird_resource_name(rng), G::S(weird_quantity(rng))))
            .collect(),
    )
}

fn container(rng: &mut Rng, i: usize) -> G {
    let mut entries = vec![("name".to_string(), G::S(format!("c{i}")))];
    if rng.chance(90) {
        let mut res = Vec::new();
        if rng.chance(70) {
            res.push(("requests".to_string(), resource_map(rng)));
        }
        if rng.chance(80) {
            res.push(("limits".to_string(), resource_map(rng)));
        }
        if rng.chance(5) {
            res.push((
                "claims".to_string(),
                G::L(vec![m(vec![("name", s("gpu"))])]),
            ));
        }
        entries.push(("resources".to_string(), G::M(res)));
    }
    if rng.chance(40) {
        entries.push((
            "volumeMounts".to_string(),
            G::L(vec![m(vec![
                ("name", s("shm")),
                ("mountPath", s("/dev/shm")),
            ])]),
        ));
    }
    G::M(entries)
}

fn pod_spec(rng: &mut Rng) -> G {
    let mut entries = Vec::new();
    if rng.chance(20) {
        entries.push((
            "initContainers".to_string(),
            G::L(
                (0..rng.range(1, 2))
                    .map(|i| container(rng, 100 + i))
                    .collect(),
            ),
        ));
    }
    entries.push((
        "containers".to_string(),
        G::L((0..rng.range(1, 3)).map(|i| container(rng, i)).collect()),
    ));
    if rng.chance(50) {
        let mut dir = vec![("medium".to_string(), s(rng.one(&["Memory", "", "memory"])))];
        if rng.chance(60) {
            dir.push(("sizeLimit".to_string(), G::S(weird_quantity(rng))));
        }
        entries.push((
            "volumes".to_string(),
            G::L(vec![G::M(vec![
                ("name".to_string(), s("shm")),
                ("emptyDir".to_string(), G::M(dir)),
            ])]),
        ));
    }
    if rng.chance(30) {
        entries.push((
            "tolerations".to_string(),
            G::L(vec![m(vec![
                ("key", s(rng.one(&["nvidia.com/gpu", "other", ""]))),
                ("operator", s(rng.one(&["Exists", "Equal"]))),
            ])]),
        ));
    }
    if rng.chance(30) {
        entries.push((
            "nodeSelector".to_string(),
            m(vec![(
                rng.one(&["nvidia.com/gpu.product", "zone"]),
                s("A100"),
            )]),
        ));
    }
    G::M(entries)
}

fn template(rng: &mut Rng) -> G {
    let mut t = Vec::new();
    if rng.chance(30) {
        t.push((
            "metadata".to_string(),
            m(vec![(
                "annotations",
                m(vec![("gpulint.io/ignore", s("GPU001, QOS002,bogus"))]),
            )]),
        ));
    }
    t.push(("spec".to_string(), pod_spec(rng)));
    G::M(t)
}

fn workload(rng: &mut Rng, depth: usize) -> G {
    const KINDS: &[(&str, &str)] = &[
        ("v1", "Pod"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("ray.io/v1", "RayCluster"),
        ("serving.kserve.io/v1beta1", "InferenceService"),
        ("sparkoperator.k8s.io/v1beta2", "SparkApplication"),
        ("kueue.x-k8s.io/v1beta1", "LocalQueue"),
        ("v1", "List"),
        ("workload.codeflare.dev/v1beta2", "AppWrapper"),
        ("production-stack.vllm.ai/v1alpha1", "VLLMRuntime"),
        ("example.com/v1", "Trainer"),
        ("v1", "ConfigMap"),
    ];
    let (api, kind) = *rng.pick(KINDS);
    let mut meta = vec![("name".to_string(), s(rng.one(&["w", "llm", "", "x y"])))];
    if rng.chance(50) {
        meta.push(("namespace".to_string(), s(rng.one(&["ml", "default"]))));
    }
    if rng.chance(20) {
        meta.push((
            "labels".to_string(),
            m(vec![("kueue.x-k8s.io/queue-name", s("team-a"))]),
        ));
    }
    if rng.chance(15) {
        let rule = rng.pick(RULES).name;
        meta.push((
            "annotations".to_string(),
            m(vec![("gpulint.io/ignore", s(rule))]),
        ));
    }
    let spec = match kind {
        "Pod" => pod_spec(rng),
        "CronJob" => m(vec![(
            "jobTemplate",
            m(vec![("spec", m(vec![("template", template(rng))]))]),
        )]),
        "PyTorchJob" => m(vec![(
            "pytorchReplicaSpecs",
            m(vec![
                (
                    "Master",
                    m(vec![("replicas", s("1")), ("template", template(rng))]),
                ),
                ("Worker", m(vec![("template", template(rng))])),
            ]),
        )]),
        "RayCluster" => m(vec![
            ("headGroupSpec", m(vec![("template", template(rng))])),
            (
                "workerGroupSpecs",
                G::L(vec![m(vec![("template", template(rng))])]),
            ),
        ]),
        "InferenceService" => m(vec![(
            "predictor",
            m(vec![(
                "model",
                m(vec![
                    ("modelFormat", m(vec![("name", s("pytorch"))])),
                    (
                        "resources",
                        m(vec![
                            ("limits", resource_map(rng)),
                            ("requests", resource_map(rng)),
                        ]),
                    ),
                ]),
            )]),
        )]),
        "SparkApplication" => {
            let side = |rng: &mut Rng| {
                m(vec![
                    ("cores", G::S(weird_quantity(rng))),
                    ("coreLimit", G::S(weird_quantity(rng))),
                    ("memory", G::S(weird_quantity(rng))),
                    (
                        "gpu",
                        G::M(vec![
                            ("name".to_string(), G::S(weird_resource_name(rng))),
                            ("quantity".to_string(), G::S(weird_quantity(rng))),
                        ]),
                    ),
                ])
            };
            m(vec![("driver", side(rng)), ("executor", side(rng))])
        }
        "LocalQueue" => m(vec![("clusterQueue", s("cq"))]),
        "AppWrapper" if depth < 3 => m(vec![(
            "components",
            G::L(vec![m(vec![("template", workload(rng, depth + 1))])]),
        )]),
        "VLLMRuntime" => m(vec![(
            "resources",
            m(vec![
                ("cpu", G::S(weird_quantity(rng))),
                ("gpu", G::S(weird_quantity(rng))),
            ]),
        )]),
        "Trainer" | "ConfigMap" => m(vec![
            (
                "runner",
                m(vec![("resources", m(vec![("limits", resource_map(rng))]))]),
            ),
            ("pool", pod_spec(rng)),
        ]),
        _ => m(vec![("template", template(rng))]),
    };
    let mut entries = vec![
        ("apiVersion".to_string(), s(api)),
        ("kind".to_string(), s(kind)),
        ("metadata".to_string(), G::M(meta)),
    ];
    if kind == "List" && depth < 2 {
        entries.push((
            "items".to_string(),
            G::L(
                (0..rng.range(1, 3))
                    .map(|_| workload(rng, depth + 1))
                    .collect(),
            ),
        ));
    } else {
        entries.push(("spec".to_string(), spec));
    }
    G::M(entries)
}

fn generated_workloads(rng: &mut Rng) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..rng.range(1, 3) {
        if i > 0 || rng.chance(20) {
            out.push_str("---\n");
        }
        let w = workload(rng, 0);
        out.push_str(&emit_document(rng, &w));
    }
    let bytes = out.into_bytes();
    if rng.chance(20) {
        mutate(rng, &bytes, &[])
    } else {
        bytes
    }
}

fn random_jsonpath(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &[
        ".spec",
        ".template",
        ".containers",
        "[*]",
        "..",
        "..*",
        ".*",
        "['spec']",
        "[0]",
        "[-1]",
        "[1:3]",
        "[::-1]",
        "[?(@.name == 'x')]",
        "[?@.name]",
        "[?length(@) > 1]",
        "[?",
        "]",
        "[",
        "'",
        "\"",
        "@",
        "$",
        "()",
        "length()",
        "[0,1]",
        "['a','b']",
        ".a.b.c",
        " ",
        "[?(@.x)]",
        "[?@ == 1]",
        "[9999999999999999999999]",
        "[1:2:0]",
        "[?match(@, 'a.*')]",
        "🚀",
        "\\",
    ];
    let mut out = String::from(if rng.chance(90) { "$" } else { "" });
    for _ in 0..rng.below(6) {
        out.push_str(rng.one(PARTS));
    }
    out
}

fn random_glob(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &[
        "vendor/", "**", "*", "?", "[", "]", "[!a]", "{a,b}", "{", "}", "\\", "charts/", "a",
        ".yaml", "/", "[a-", "**/", "é",
    ];
    (0..rng.range(1, 4)).map(|_| rng.one(PARTS)).collect()
}

fn generated_config(rng: &mut Rng) -> Vec<u8> {
    let mut entries = Vec::new();
    let rule_name = |rng: &mut Rng| {
        if rng.chance(85) {
            let r = rng.pick(RULES);
            if rng.chance(50) { r.id } else { r.name }.to_string()
        } else {
            rng.one(&["GPU999", "gpu001", "", "x"]).to_string()
        }
    };
    if rng.chance(60) {
        let settings = (0..rng.below(4))
            .map(|_| {
                let setting = match rng.below(6) {
                    0 => s(rng.one(&["off", "on", "error", "warning", "info", "false", "true"])),
                    1 => m(vec![("enabled", s(rng.one(&["true", "false", "maybe"])))]),
                    2 => m(vec![("severity", s(rng.one(&["error", "fatal", ""])))]),
                    3 => G::L(vec![]),
                    _ => s(rng.one(&["error", "off", "warning"])),
                };
                (rule_name(rng), setting)
            })
            .collect();
        entries.push(("rules".to_string(), G::M(settings)));
    }
    if rng.chance(40) {
        entries.push((
            "exclude".to_string(),
            G::L((0..rng.below(3)).map(|_| G::S(random_glob(rng))).collect()),
        ));
    }
    if rng.chance(30) {
        entries.push((
            "gpu_resources".to_string(),
            G::L(vec![G::S(weird_resource_name(rng))]),
        ));
    }
    if rng.chance(30) {
        entries.push((
            "kueue".to_string(),
            m(vec![("required", s(rng.one(&["true", "false", "yes"])))]),
        ));
    }
    if rng.chance(40) {
        let items = (0..rng.below(3))
            .map(|_| {
                let mut e = vec![("path".to_string(), G::S(random_glob(rng)))];
                if rng.chance(50) {
                    e.push(("rules".to_string(), G::L(vec![G::S(rule_name(rng))])));
                }
                G::M(e)
            })
            .collect();
        entries.push(("ignore".to_string(), G::L(items)));
    }
    if rng.chance(70) {
        let kinds = (0..rng.range(1, 3))
            .map(|_| {
                let mut e = vec![(
                    "kind".to_string(),
                    s(rng.one(&["Deployment", "Trainer", "Pod", "InferenceService", "List"])),
                )];
                if rng.chance(50) {
                    e.push((
                        "group".to_string(),
                        s(rng.one(&["apps", "", "example.com"])),
                    ));
                }
                for key in [
                    "pod_templates",
                    "pod_specs",
                    "containers",
                    "embedded_objects",
                ] {
                    if rng.chance(40) {
                        let paths = (0..rng.range(1, 2))
                            .map(|_| G::S(random_jsonpath(rng)))
                            .collect();
                        e.push((key.to_string(), G::L(paths)));
                    }
                }
                if rng.chance(30) {
                    e.push((
                        "shape".to_string(),
                        s(rng.one(&["k8s", "spark", "vllm-runtime", "other"])),
                    ));
                }
                if rng.chance(20) {
                    e.push(("resources_key".to_string(), s("resourcesPerNode")));
                }
                if rng.chance(30) {
                    e.push(("batch".to_string(), s(rng.one(&["true", "false"]))));
                }
                G::M(e)
            })
            .collect();
        entries.push(("workloads".to_string(), G::L(kinds)));
    }
    if rng.chance(5) {
        entries.push(("unknown_key".to_string(), s("1")));
    }
    let bytes = emit_document(rng, &G::M(entries)).into_bytes();
    if rng.chance(10) {
        mutate(rng, &bytes, &[])
    } else {
        bytes
    }
}

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|&c| c == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// Byte offsets just after `: ` (where a value starts).
fn value_starts(b: &[u8]) -> Vec<usize> {
    b.windows(2)
        .enumerate()
        .filter(|(_, w)| w == b": ")
        .map(|(i, _)| i + 2)
        .collect()
}

/// Applies one to four random mutations.
fn mutate(rng: &mut Rng, base: &[u8], others: &[(PathBuf, Vec<u8>)]) -> Vec<u8> {
    let mut b = base.to_vec();
    for _ in 0..rng.range(1, 4) {
        let len = b.len();
        let at = rng.below(len + 1);
        match rng.below(17) {
            0 if len > 0 => {
                let end = (at + rng.len(64).max(1)).min(len);
                b.drain(at..end);
            }
            1 => {
                let junk: Vec<u8> = (0..rng.range(1, 16)).map(|_| rng.next() as u8).collect();
                b.splice(at..at, junk);
            }
            2 => {
                let tok: String = (0..rng.range(1, 6)).map(|_| rng.one(YAMLISH)).collect();
                b.splice(at..at, tok.into_bytes());
            }
            3 if len > 0 => {
                let start = rng.below(len);
                let end = (start + rng.len(256).max(1)).min(len);
                let copy = b[start..end].to_vec();
                let to = rng.below(b.len() + 1);
                b.splice(to..to, copy);
            }
            4 => {
                let mut l = lines(&b);
                if l.len() >= 2 {
                    let (i, j) = (rng.below(l.len()), rng.below(l.len()));
                    l.swap(i, j);
                    b = l.concat();
                }
            }
            5 => b.truncate(at),
            6 => {
                let mut l = lines(&b);
                for line in l.iter_mut() {
                    if rng.chance(20) {
                        if line.starts_with(b"  ") && rng.chance(50) {
                            line.splice(0..2, *b"\t");
                        } else {
                            line.insert(0, b'\t');
                        }
                    }
                }
                b = l.concat();
            }
            7 => {
                let starts = value_starts(&b);
                if starts.len() >= 2 {
                    let name = rng.one(&["a", "b", "x1"]);
                    let first = *rng.pick(&starts);
                    let second = *rng.pick(&starts);
                    let (lo, hi) = (first.min(second), first.max(second));
                    let alias = format!("*{name}");
                    if rng.chance(50) {
                        // Replace the later value by the alias (up to the end of its line).
                        let end = b[hi..]
                            .iter()
                            .position(|&c| c == b'\n')
                            .map_or(b.len(), |p| hi + p);
                        b.splice(hi..end, alias.into_bytes());
                    } else {
                        b.splice(hi..hi, format!("{alias} ").into_bytes());
                    }
                    b.splice(lo..lo, format!("&{name} ").into_bytes());
                }
            }
            8 => {
                let k = rng.range(1, 300);
                let starts = value_starts(&b);
                if let Some(&p) = starts.get(rng.below(starts.len().max(1))) {
                    let end = b[p..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |q| p + q);
                    b.splice(end..end, "]".repeat(k).into_bytes());
                    b.splice(p..p, "[".repeat(k).into_bytes());
                } else {
                    b.splice(at..at, "[".repeat(k).into_bytes());
                }
            }
            9 => {
                let starts = value_starts(&b);
                if !starts.is_empty() {
                    let p = *rng.pick(&starts);
                    let end = b[p..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |q| p + q);
                    let q = weird_quantity(rng);
                    b.splice(p..end, q.into_bytes());
                }
            }
            10 => {
                let text = String::from_utf8_lossy(&b).into_owned();
                if let Some(pos) = text.find("nvidia.com/gpu") {
                    let name = weird_resource_name(rng);
                    let mut t = text;
                    t.replace_range(pos..pos + "nvidia.com/gpu".len(), &name);
                    b = t.into_bytes();
                }
            }
            11 => {
                let mut out = Vec::with_capacity(b.len() * 2);
                let crlf = rng.chance(70);
                for &c in &b {
                    if c == b'\n' {
                        out.extend_from_slice(if crlf { b"\r\n" } else { b"\r" });
                    } else {
                        out.push(c);
                    }
                }
                b = out;
            }
            12 if !others.is_empty() => {
                let (_, other) = rng.pick(others);
                let l = lines(other);
                if !l.is_empty() {
                    let from = rng.below(l.len());
                    let to = (from + rng.range(1, 20)).min(l.len());
                    let mut mine = lines(&b);
                    let pos = rng.below(mine.len() + 1);
                    mine.splice(pos..pos, l[from..to].iter().cloned());
                    b = mine.concat();
                }
            }
            13 => {
                let what: &[u8] = rng.pick::<&[u8]>(&[
                    &b"\xff"[..],
                    b"\xc3",
                    b"\xed\xa0\x80",
                    b"\xc0\x80",
                    b"\xef\xbb\xbf",
                    b"\0",
                    b"\x1b[31m",
                    b"\xe2\x80\xa8",
                    b"\xc2\x85",
                ]);
                b.splice(at..at, what.iter().copied());
            }
            14 => {
                let l = lines(&b);
                if !l.is_empty() {
                    let i = rng.below(l.len());
                    let mut all = l.clone();
                    all.insert(i, l[i].clone());
                    b = all.concat();
                }
            }
            15 => {
                let mut l = lines(&b);
                if !l.is_empty() {
                    let i = rng.below(l.len());
                    if rng.chance(50) {
                        l[i].splice(0..0, b"  ".iter().copied());
                    } else {
                        let n = l[i].iter().take_while(|&&c| c == b' ').count().min(2);
                        l[i].drain(..n);
                    }
                    b = l.concat();
                }
            }
            _ => {
                // Deep block nesting: indent every following line under a new key, many times.
                let mut l = lines(&b);
                if !l.is_empty() {
                    let i = rng.below(l.len());
                    let depth = rng.range(1, 80);
                    let mut nest = String::new();
                    for d in 0..depth {
                        let _ = writeln!(nest, "{}k{d}:", " ".repeat(d));
                    }
                    let pad = " ".repeat(depth);
                    for line in &mut l[i..] {
                        line.splice(0..0, pad.bytes());
                    }
                    l.insert(i, nest.into_bytes());
                    b = l.concat();
                }
            }
        }
    }
    b
}

// ------------------------------------------------------------------------------------------
// Adversarial inputs

fn billion_laughs(seq: bool) -> String {
    let mut text = String::new();
    if seq {
        text.push_str("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..10 {
            let p = i - 1;
            let refs = vec![format!("*a{p}"); 9].join(", ");
            let _ = writeln!(text, "a{i}: &a{i} [{refs}]");
        }
    } else {
        text.push_str("a0: &a0 {k: lol}\n");
        for i in 1..10 {
            let p = i - 1;
            let refs: Vec<String> = (0..9).map(|j| format!("k{j}: *a{p}")).collect();
            let _ = writeln!(text, "a{i}: &a{i} {{{}}}", refs.join(", "));
        }
    }
    text
}

fn adversarial() -> Vec<(String, Vec<u8>)> {
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| cases.push((name.to_string(), bytes));
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}\n";

    add(
        "billion laughs (sequences)",
        billion_laughs(true).into_bytes(),
    );
    add(
        "billion laughs (mappings)",
        billion_laughs(false).into_bytes(),
    );
    add(
        "alias bomb in a pod's resources",
        format!(
            "{}---\n{}",
            billion_laughs(true),
            format_args!(
                "{}a9: &r {{nvidia.com/gpu: 1}}\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    resources: {{limits: *r, requests: *r}}\n",
                billion_laughs(true).replace("a9: &a9", "b9: &b9")
            )
        )
        .into_bytes(),
    );
    let shared = "r: &r {limits: {nvidia.com/gpu: 2}, requests: {nvidia.com/gpu: 1}}\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n".to_string()
        + &(0..200).map(|i| format!("  - {{name: c{i}, resources: *r}}\n")).collect::<String>();
    add("one anchor used by 200 containers", shared.into_bytes());
    add("self alias", b"a: &a [*a]\n".to_vec());
    add("alias before its anchor", b"a: *x\nb: &x 1\n".to_vec());
    add("alias as a key", b"a: &k key\n*k : v\n? *k\n: w\n".to_vec());
    add(
        "merge keys",
        b"base: &b {cpu: 1}\nx:\n  <<: *b\n  <<: [*b, *b]\n".to_vec(),
    );
    add("alias across documents", b"a: &a 1\n---\nb: *a\n".to_vec());
    add("redefined anchor", b"a: &a 1\nb: &a [2]\nc: *a\n".to_vec());

    add("10k nested [", "[".repeat(10_000).into_bytes());
    add("10k nested {", "{".repeat(10_000).into_bytes());
    add(
        "10k nested [ closed",
        ("[".repeat(10_000) + &"]".repeat(10_000)).into_bytes(),
    );
    add(
        "10k nested {a: closed",
        ("{a: ".repeat(10_000) + &"}".repeat(10_000)).into_bytes(),
    );
    add(
        "10k nested block sequences",
        ("- ".repeat(10_000) + "x\n").into_bytes(),
    );
    add(
        "10k nested explicit keys",
        ("? ".repeat(10_000) + "x\n").into_bytes(),
    );
    let mut nested = String::new();
    for d in 0..10_000 {
        nested.push_str(&" ".repeat(d));
        nested.push_str("a:\n");
    }
    add("10k nested block mappings", nested.into_bytes());
    for depth in [63, 64, 65, 66, 198, 199, 200, 201] {
        // A pod spec at the edge of the generic search depth and of the nesting bound.
        let mut t = String::from("apiVersion: example.com/v1\nkind: Deep\nspec:\n");
        for d in 0..depth {
            let _ = writeln!(t, "{}k{d}:", " ".repeat(2 + d));
        }
        let pad = " ".repeat(2 + depth);
        let _ = write!(
            t,
            "{pad}containers:\n{pad}- name: c\n{pad}  resources: {{requests: {{nvidia.com/gpu: 1}}}}\n"
        );
        add(&format!("pod spec nested {depth} deep"), t.into_bytes());
        let flow = format!(
            "apiVersion: v1\nkind: Pod\nspec: {{containers: [{{name: c, resources: {{limits: {}1{}}}}}]}}\n",
            "{a: ".repeat(depth),
            "}".repeat(depth)
        );
        add(
            &format!("flow value nested {depth} deep"),
            flow.into_bytes(),
        );
    }

    add(
        "huge plain scalar",
        format!("a: {}\n", "x".repeat(2 << 20)).into_bytes(),
    );
    add(
        "huge double-quoted scalar with escapes",
        format!("a: \"{}\"\n", "\\u00e9\\n\\t".repeat(300_000)).into_bytes(),
    );
    add(
        "huge literal block",
        format!("a: |\n{}", "  line of text\n".repeat(100_000)).into_bytes(),
    );
    add(
        "huge key",
        format!("{}: 1\n", "k".repeat(100_000)).into_bytes(),
    );
    for q in [
        "1".repeat(1 << 18),
        format!("{}Ei", "9".repeat(100_000)),
        format!("0.{}1", "0".repeat(1 << 18)),
        format!("{}e-1000000", "7".repeat(100_000)),
        "1e-99999999999999999".to_string(),
        format!("1{}", "0".repeat(38)),
    ] {
        let text = pod.replace("nvidia.com/gpu: 1", &format!("nvidia.com/gpu: {q}"));
        let text = text.replace("memory: 1Gi", &format!("memory: {q}"));
        add(
            &format!("huge quantity ({} bytes)", q.len()),
            text.into_bytes(),
        );
    }
    add(
        "20k mapping entries",
        (0..20_000)
            .map(|i| format!("k{i}: v\n"))
            .collect::<String>()
            .into_bytes(),
    );
    add(
        "a List of 300 pods",
        (String::from("apiVersion: v1\nkind: List\nitems:\n")
            + &(0..300)
                .map(|i| format!("- {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: 1}}}}}}]}}}}\n"))
                .collect::<String>())
        .into_bytes(),
    );
    add(
        "100 GPU pods (renderers)",
        (0..100)
            .map(|i| {
                pod.replace("name: p", &format!("name: p{i}"))
                    .replace("limits:", "requests:")
                    + "---\n"
            })
            .collect::<String>()
            .into_bytes(),
    );
    add("30k empty documents", "---\n".repeat(30_000).into_bytes());
    add("AppWrapper nested 10 deep", {
        let mut inner = pod.replace('\n', "\n    ");
        for _ in 0..10 {
            inner = format!(
                    "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nspec:\n  components:\n  - template:\n      {}\n",
                    inner.replace('\n', "\n      ")
                );
        }
        inner.into_bytes()
    });

    add("NUL only", vec![0]);
    add("NUL in a key", b"a\0b: 1\n".to_vec());
    add("NUL escape", b"a: \"\\0\"\n".to_vec());
    add("BOM only", b"\xef\xbb\xbf".to_vec());
    add(
        "BOM between documents",
        b"a: 1\n---\n\xef\xbb\xbfb: 2\n".to_vec(),
    );
    add("UTF-16 BOM", b"\xff\xfea\0:\0 \x001\0".to_vec());
    for small in [
        "", "\n", "---", "...", "--- |", "--- >\n  x", "#", "- ", "? ", ":", "::", "[", "]", "{",
        "}", "'", "\"", "|", ">", "&", "*", "!", "%", "@", "`", "a: b: c", "- - -", "? - : -",
        "%YAML 1.2\n---\na: 1", "%TAG ! tag:x,2000:\n--- !a b", "a: !!binary aGVsbG8=",
        "a: !<tag:x> 1", "\t", "a:\n\t- b", "kind: Pod\nspec: {containers: [{}]}",
        "kind: Pod\nspec: {containers: [[]]}", "kind: Pod\nspec: {containers: x}",
        "kind: [Pod]", "kind: Pod\nmetadata: [x]", "kind: List\nitems: [1, [], {kind: Pod}]",
        "kind:\n", "? [kind]\n: Pod", "kind: Pod\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 1}}\n  - resources: {limits: {nvidia.com/gpu: 1}}",
        "kind: Pod\nspec:\n  containers:\n  - &c {name: a, resources: {requests: {nvidia.com/gpu: 1}}}\n  - *c\n  - *c",
        "é: ü\n🚀: 1\n", "kind: Pod\nspec:\n  containers:\n  - name: \"é🚀\"\n    resources: {requests: {\"nvidia.com/gpü\": \"١\"}}\n",
        "# gpulint: ignore[", "# gpulint: ignore[GPU001", "# gpulint: ignore[]]", "a: 1 # \0 \x1b",
    ] {
        add(&format!("small {small:?}"), small.as_bytes().to_vec());
    }
    cases
}

/// Real manifests with invalid UTF-8, BOMs, CRLF / CR line ends, a NUL, tabs.
fn corpus_variants(corpus: &Corpus) -> Vec<(String, Vec<u8>)> {
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| cases.push((name.to_string(), bytes));
    for (path, bytes) in corpus.yaml().step_by(9).take(12) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let mid = bytes.len() / 2;
        for (what, bad) in [
            ("0xff", &b"\xff"[..]),
            ("a truncated sequence", b"\xc3"),
            ("a surrogate", b"\xed\xa0\x80"),
            ("an overlong NUL", b"\xc0\x80"),
        ] {
            let mut b = bytes.clone();
            b.splice(mid..mid, bad.iter().copied());
            add(&format!("{name} with {what} in the middle"), b);
        }
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend_from_slice(bytes);
        add(&format!("{name} with a BOM"), bom.clone());
        let mut two = bom.clone();
        two.splice(0..0, b"\xef\xbb\xbf".iter().copied());
        add(&format!("{name} with two BOMs"), two);
        let mut inner = bytes.clone();
        inner.splice(mid..mid, b"\xef\xbb\xbf".iter().copied());
        add(&format!("{name} with a BOM in the middle"), inner);
        let crlf: Vec<u8> = bytes
            .iter()
            .flat_map(|&c| {
                if c == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![c]
                }
            })
            .collect();
        add(&format!("{name} with CRLF"), crlf.clone());
        let mut bom_crlf = b"\xef\xbb\xbf".to_vec();
        bom_crlf.extend_from_slice(&crlf);
        add(&format!("{name} with a BOM and CRLF"), bom_crlf);
        let cr: Vec<u8> = bytes
            .iter()
            .map(|&c| if c == b'\n' { b'\r' } else { c })
            .collect();
        add(&format!("{name} with CR only"), cr);
        let mut nul = bytes.clone();
        nul.insert(mid, 0);
        add(&format!("{name} with a NUL"), nul);
        let tabs: Vec<u8> = String::from_utf8_lossy(bytes)
            .replace("  ", "\t")
            .into_bytes();
        add(&format!("{name} indented with tabs"), tabs);
    }
    cases
}

// ------------------------------------------------------------------------------------------
// The tests

#[test]
fn adversarial_inputs_do_not_panic() {
    run_named("adversarial", adversarial());
}

#[test]
fn corpus_files_with_odd_encodings_do_not_panic() {
    run_named("encodings", corpus_variants(&Corpus::load()));
}

fn run_named(phase: &'static str, cases: Vec<(String, Vec<u8>)>) {
    let mut h = Harness::new(phase);
    for (name, bytes) in cases {
        let started = Instant::now();
        h.case(&name, &bytes);
        let took = started.elapsed();
        if took > Duration::from_millis(500) {
            eprintln!(
                "[{phase}] slow case: {name} ({} bytes) took {took:.1?}",
                bytes.len()
            );
        }
    }
    h.finish();
}

#[test]
fn random_bytes_do_not_panic() {
    let mut rng = Rng::new(seed() ^ 1);
    let mut h = Harness::new("bytes");
    for i in 0..iterations() {
        let bytes = random_bytes(&mut rng);
        h.case(&format!("random bytes #{i}"), &bytes);
    }
    h.finish();
}

#[test]
fn yaml_token_soup_does_not_panic() {
    let mut rng = Rng::new(seed() ^ 2);
    let mut h = Harness::new("soup");
    for i in 0..iterations() * 2 {
        let bytes = token_soup(&mut rng);
        h.case(&format!("token soup #{i}"), &bytes);
    }
    h.finish();
}

#[test]
fn corpus_files_and_their_mutations_do_not_panic() {
    let corpus = Corpus::load();
    let mut rng = Rng::new(seed() ^ 3);
    let mut h = Harness::new("corpus");
    for (path, bytes) in &corpus.files {
        h.case(&format!("{} unchanged", path.display()), bytes);
    }
    let unchanged = std::mem::take(&mut h.stats);
    assert!(
        unchanged.workloads > 50 && unchanged.findings > 50,
        "the corpus should hold GPU workloads with findings: {} workloads, {} findings",
        unchanged.workloads,
        unchanged.findings
    );
    for i in 0..iterations() * 3 {
        let (path, base) = corpus.pick_any(&mut rng);
        let bytes = mutate(&mut rng, base, &corpus.files);
        h.case(&format!("mutation #{i} of {}", path.display()), &bytes);
    }
    let s = h.finish();
    assert!(
        s.workloads > 0 && s.findings > 0,
        "mutations should still reach the rules"
    );
}

#[test]
fn generated_workloads_do_not_panic() {
    let mut rng = Rng::new(seed() ^ 4);
    let mut h = Harness::new("workloads");
    for i in 0..iterations() * 2 {
        let bytes = generated_workloads(&mut rng);
        h.case(&format!("generated workload #{i}"), &bytes);
    }
    let s = h.finish();
    assert!(
        s.hits > 0 && s.findings > 0,
        "generated workloads reach the rules"
    );
}

#[test]
fn generated_configs_do_not_panic() {
    let corpus = Corpus::load();
    let mut rng = Rng::new(seed() ^ 5);
    let mut h = Harness::new("configs");
    for i in 0..iterations() {
        let bytes = generated_config(&mut rng);
        let extra: Vec<PathBuf> = (0..2)
            .map(|_| corpus.pick_yaml(&mut rng).0.clone())
            .collect();
        h.config_case(&format!("generated config #{i}"), &bytes, &extra);
    }
    let s = h.finish();
    assert!(s.configs_ok > 0, "some generated configs are valid");
}
