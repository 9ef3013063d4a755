//! CLI entry: parse arguments, run, map the outcome to an exit code
//! (0 clean, 1 findings at or above --fail-on, 2 usage, config or input errors, 130 --fix
//! stopped by SIGINT/SIGTERM).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use gpulint::cli::{
    Cli, Command, CommonArgs, FailOn, InventoryFormat, LintArgs, LoadRestrictorArg, PrometheusArgs,
    RenderArgs, SnapshotArgs,
};
use gpulint::config::Config;
use gpulint::lint::{Linter, Selection};
use gpulint::metrics::prometheus::{redact_url, PrometheusOptions};
use gpulint::report::{self, Format};
use gpulint::rules::{self, Severity, RULES};

const EXIT_FINDINGS: u8 = 1;
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let code = match cli.command {
        Some(Command::Rules) => list_rules(),
        Some(Command::Explain { rule }) => explain(&rule),
        Some(Command::Inventory(args)) => inventory(&args.common, args.format),
        Some(Command::Snapshot(args)) => snapshot(&args),
        Some(Command::Render(args)) => render(&args),
        None => lint(&cli.lint),
    };
    ExitCode::from(code)
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`gpulint | head`) is not an error worth a panic.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn list_rules() -> u8 {
    let mut text = String::new();
    for r in RULES {
        let default = if r.enabled_by_default {
            ""
        } else {
            " (off by default)"
        };
        let fix = match r.fix {
            rules::FixAvailability::Always => " [fixable]",
            rules::FixAvailability::Sometimes => " [sometimes fixable]",
            rules::FixAvailability::Never => "",
        };
        text.push_str(&format!(
            "{}  {:<38} {:<8} {}{}{}\n",
            r.id,
            r.name,
            r.severity.as_str(),
            r.summary,
            fix,
            default
        ));
    }
    print(&text);
    0
}

fn explain(id: &str) -> u8 {
    match rules::Rule::parse_or_suggest(id) {
        Ok(r) => {
            print(r.info().doc);
            0
        }
        Err(message) => {
            eprintln!("error: {message}; `gpulint rules` lists them");
            EXIT_ERROR
        }
    }
}

fn load_config(common: &CommonArgs) -> Result<Config, u8> {
    let path = match &common.config {
        Some(p) => Some(p.clone()),
        None => {
            let first = common
                .paths
                .iter()
                .find(|p| p.as_os_str() != "-")
                .cloned()
                .unwrap_or_else(|| PathBuf::from("."));
            Config::discover(&first)
        }
    };
    match path {
        None => Ok(Config::default()),
        Some(p) => Config::load(&p).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_ERROR
        }),
    }
}

/// A linter with the config's settings, the command line's load restrictor, and the repository
/// as the boundary of what renders may read.
fn linter_for(config: Config, selection: Selection, common: &CommonArgs) -> Linter {
    let restrictor = common.load_restrictor;
    let mut linter = Linter::new(config, selection);
    linter.render = render_settings(&linter.config, restrictor, &common.paths);
    // Only the command line and the environment name the program (never a repository file).
    linter.helm = gpulint::source::helm::HelmEngine::find(common.helm.as_deref());
    linter
}

fn render_settings(
    config: &Config,
    flag: Option<LoadRestrictorArg>,
    paths: &[PathBuf],
) -> gpulint::source::units::RenderSettings {
    use gpulint::source::kustomize::{normalize, LoadRestrictor};
    let load_restrictor = match flag {
        Some(LoadRestrictorArg::RootOnly) => LoadRestrictor::RootOnly,
        Some(LoadRestrictorArg::None) => LoadRestrictor::None,
        None => config.load_restrictor.unwrap_or_default(),
    };
    // The repository of the first path bounds every read.
    let first = paths
        .iter()
        .find(|p| p.as_os_str() != "-")
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    let boundary = Some(normalize(&gpulint::source::repo::repository_of(&first)));
    gpulint::source::units::RenderSettings {
        load_restrictor,
        boundary,
    }
}

/// `gpulint render DIR`: the rendered stream, as linted.
fn render(args: &RenderArgs) -> u8 {
    let common = CommonArgs {
        paths: vec![args.dir.clone()],
        config: args.config.clone(),
        load_restrictor: args.load_restrictor,
        helm: args.helm.clone(),
    };
    let config = match load_config(&common) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let settings = render_settings(&config, args.load_restrictor, &common.paths);
    if gpulint::source::helm::is_chart(&args.dir) {
        return render_chart(&args.dir, config, &common, &settings);
    }
    let sources =
        gpulint::source::units::RunSources::new(&[], Default::default(), settings.boundary.clone());
    if gpulint::source::kustomize::kustomization_file(&args.dir).is_none() {
        eprintln!(
            "error: {}: no kustomization.yaml, kustomization.yml or Kustomization in this folder",
            args.dir.display()
        );
        return EXIT_ERROR;
    }
    match gpulint::source::units::render_root(&args.dir, &sources, &settings) {
        Ok(rendered) => {
            print(&gpulint::source::kustomize::to_yaml(&rendered.objects));
            0
        }
        Err(e) => {
            let at = e
                .span
                .and_then(|span| {
                    use gpulint::source::kustomize::Sources;
                    let stream = sources.load(&e.file).ok()?;
                    let (line, column) = stream.line_col(span.start);
                    Some(format!(":{line}:{column}"))
                })
                .unwrap_or_default();
            eprintln!(
                "error: {}{at}: {}",
                gpulint::source::file::display_path(&e.file),
                e.message
            );
            EXIT_ERROR
        }
    }
}

/// `gpulint render CHART`: the chart's releases as Helm renders them.
fn render_chart(
    dir: &std::path::Path,
    config: Config,
    common: &CommonArgs,
    settings: &gpulint::source::units::RenderSettings,
) -> u8 {
    let linter = linter_for(config, Selection::default(), common);
    let Some(engine) = &linter.helm else {
        eprintln!(
            "error: {}: a Helm chart, and no helm binary (install helm, or pass --helm PATH or set GPULINT_HELM)",
            dir.display()
        );
        return EXIT_ERROR;
    };
    let root = settings
        .boundary
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    match gpulint::source::units::render_chart(dir, &linter.config.charts, &root, engine) {
        Ok(text) => {
            print(&text);
            0
        }
        Err(e) => {
            eprintln!("error: {}: helm: {e}", dir.display());
            EXIT_ERROR
        }
    }
}

/// The rule ids a `--select`/`--ignore` list names (`"GPU001, QOS002"`: spaces trimmed, empty
/// entries dropped); an unknown name is an error that names it.
fn rule_ids(names: &[String], flag: &str) -> Result<Vec<String>, u8> {
    let mut ids = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        match rules::Rule::parse_or_suggest(n) {
            Ok(r) => ids.push(r.id().to_string()),
            Err(message) => {
                eprintln!("error: {flag}: {message}; `gpulint rules` lists them");
                return Err(EXIT_ERROR);
            }
        }
    }
    Ok(ids)
}

fn lint(args: &LintArgs) -> u8 {
    let config = match load_config(&args.common) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let selection = match rule_ids(&args.select, "--select")
        .and_then(|select| Ok((select, rule_ids(&args.ignore, "--ignore")?)))
    {
        Ok((select, ignore)) => Selection { select, ignore },
        Err(code) => return code,
    };
    let mut linter = linter_for(config, selection, &args.common);
    let live_url = prometheus_url(&args.prometheus);
    // The flags (and GPULINT_PROMETHEUS_URL) win over a snapshot the config names.
    let configured_snapshot = match (&args.metrics, &live_url) {
        (None, None) => linter.config.metrics.clone(),
        _ => None,
    };
    if let Some(path) = args.metrics.as_ref().or(configured_snapshot.as_ref()) {
        let max_bytes = args
            .metrics_max_mib
            .map_or(gpulint::metrics::snapshot::DEFAULT_MAX_BYTES, |mib| {
                mib.saturating_mul(1024 * 1024)
            });
        match gpulint::metrics::snapshot::read(path, max_bytes) {
            Ok(usage) => linter.usage = Some(usage),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_ERROR;
            }
        }
    }
    // Live mode reads and renders the inputs once: for the queries, then for the lint.
    let mut loaded = None;
    if linter.usage.is_none() && live_url.is_some() {
        let inputs = linter.load(&args.common.paths);
        match query_prometheus(&args.prometheus, &linter, &inputs) {
            Ok(usage) => linter.usage = Some(usage),
            Err(code) => return code,
        }
        loaded = Some(inputs);
    }
    if linter.usage.is_none() {
        for id in &linter.selection.select {
            if gpulint::rules::headroom::MEASURED_RULES.contains(&id.as_str()) {
                eprintln!(
                    "note: {id} needs measurements: pass --metrics FILE or --prometheus URL (or `metrics:` in .gpulint.yaml); not checked in this run"
                );
            }
        }
    }
    let loaded = std::cell::Cell::new(loaded);
    let scoped_run = |quiet: bool| -> Result<gpulint::lint::Run, u8> {
        let mut run = match loaded.take() {
            Some(inputs) => linter.lint_loaded(inputs),
            None => linter.run(&args.common.paths),
        };
        if let Some(reference) = &args.changed_since {
            let scope =
                gpulint::changed::scope(&run, reference, &linter.render, linter.helm.as_ref())
                    .map_err(|e| {
                        eprintln!("error: {e}");
                        EXIT_ERROR
                    })?;
            scope.retain(&mut run);
            if !quiet {
                eprintln!(
                    "{} object(s) and {} render(s) changed since {reference} ({} file(s) compared)",
                    scope.changed_objects(),
                    scope.changed_renders(),
                    scope.files_compared
                );
            }
        }
        Ok(run)
    };
    let mut run = match scoped_run(false) {
        Ok(run) => run,
        Err(code) => return code,
    };
    for note in &run.notes {
        eprintln!("note: {note}");
    }
    let mut show_findings = true;
    let mut left_as_is = false;
    if args.fix {
        match fix(args, &linter, &run) {
            Err(code) => return code,
            Ok(FixOutcome::Written { left_as_is: left }) => {
                left_as_is = left;
                match scoped_run(true) {
                    Ok(again) => run = again,
                    Err(code) => return code,
                }
            }
            Ok(FixOutcome::NothingWritten) => {}
        }
        // --diff and --patch print (or write) the change only, like `ruff --diff`.
        show_findings = !args.diff && args.patch.is_none();
    }
    let level = match args.fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Info => Severity::Info,
    };
    let page = report::html::Page {
        repo: report_title(&args.common.paths),
        generated_at: report::report_time(),
        fail_on: level,
        linter: &linter,
    };
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut write_failed = false;
    match (args.format, &args.output) {
        // A file is not stdout: --diff and --patch leave it as asked.
        (format, Some(path)) => {
            write_failed |= !write_report(path, &report::render(format, &run, &page, false));
        }
        _ if !show_findings => eprint!("{}", report::human::summary(&run)),
        (Format::Json, None) => report::json::print(&run),
        (Format::Sarif, None) => report::sarif::print(&run),
        (format, None) => print(&report::render(format, &run, &page, color)),
    }
    for (format, path) in &args.output_formats {
        write_failed |= !write_report(path, &report::render(*format, &run, &page, false));
    }
    if !run.errors.is_empty() || left_as_is || write_failed {
        EXIT_ERROR
    } else if run.count_at_or_above(level) > 0 {
        EXIT_FINDINGS
    } else {
        0
    }
}

/// The Prometheus URL: `--prometheus`, else GPULINT_PROMETHEUS_URL. Never a repository file's:
/// the host named here receives the token and the headers.
fn prometheus_url(args: &PrometheusArgs) -> Option<String> {
    args.prometheus.clone().or_else(|| {
        std::env::var("GPULINT_PROMETHEUS_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
    })
}

/// Prometheus options from the flags and the environment, falling back to the config's
/// `prometheus:` section for how to query (window, headers, CA, timeout, selectors) but never
/// for where (the URL) or with what secret (the token): those come from the command line or the
/// environment only.
fn prometheus_options(args: &PrometheusArgs, config: &Config) -> Result<PrometheusOptions, u8> {
    let file = config.prometheus.clone().unwrap_or_default();
    let Some(url) = prometheus_url(args) else {
        eprintln!("error: --prometheus URL (or GPULINT_PROMETHEUS_URL) is required");
        return Err(EXIT_ERROR);
    };
    let window = args
        .window
        .clone()
        .or(file.window)
        .unwrap_or_else(|| "14d".into());
    let mut opts = PrometheusOptions::new(url, window);
    opts.headers = file.headers;
    for h in &args.headers {
        let Some((k, v)) = h.split_once(':') else {
            eprintln!("error: --prometheus-header {h:?}: expected `Name: value`");
            return Err(EXIT_ERROR);
        };
        opts.headers
            .push((k.trim().to_string(), v.trim().to_string()));
    }
    opts.bearer_token = match &args.token_file {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => Some(t.trim().to_string()),
            Err(e) => {
                eprintln!("error: prometheus token file {}: {e}", path.display());
                return Err(EXIT_ERROR);
            }
        },
        None => std::env::var("GPULINT_PROMETHEUS_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
    };
    opts.ca_file = args.ca.clone().or(file.ca);
    let timeout = args.timeout.or(file.timeout_seconds).unwrap_or(60);
    opts.timeout = std::time::Duration::from_secs(timeout.max(1));
    opts.selector = args.selector.clone().or(file.selector);
    if let Some(mib) = args.max_body_mib {
        opts.max_body_bytes = mib.max(1).saturating_mul(1024 * 1024);
    }
    Ok(opts)
}

/// Queries Prometheus for the workloads `loaded` holds (files, renders and Helm releases),
/// once per distinct selector (the config's per-path selectors split a multi-cluster repo);
/// prints one summary line on stderr.
fn query_prometheus(
    args: &PrometheusArgs,
    linter: &Linter,
    loaded: &gpulint::lint::Loaded,
) -> Result<gpulint::metrics::usage::UsageSet, u8> {
    let opts = prometheus_options(args, &linter.config)?;
    let mut groups: std::collections::BTreeMap<Option<String>, Vec<_>> = Default::default();
    let mut group = |path: Option<&std::path::Path>, keys| {
        let selector = path
            .and_then(|p| linter.config.path_selector(p))
            .map(str::to_string)
            .or_else(|| opts.selector.clone());
        groups.entry(selector).or_default().extend(keys);
    };
    for file in &loaded.files {
        let path = match &file.input {
            gpulint::source::discover::Input::File(p) => Some(p.as_path()),
            gpulint::source::discover::Input::Stdin => None,
        };
        group(path, linter.file_keys(file));
    }
    for unit in &loaded.units {
        group(Some(unit.dir.as_path()), linter.unit_keys(unit));
    }
    // Helm releases, under the selector of the manifest that declares them.
    for release in &loaded.releases {
        let declared = release.release.declared_in.as_deref();
        group(
            Some(declared.unwrap_or(&release.release.chart)),
            linter.release_keys(release),
        );
    }
    let wanted: usize = groups.values().map(Vec::len).sum();
    let progress = std::io::stderr().is_terminal();
    if progress {
        eprint!(
            "querying {} for {wanted} container(s)…",
            redact_url(&opts.url)
        );
    }
    let mut usage: Option<gpulint::metrics::usage::UsageSet> = None;
    let (mut missing, mut requests) = (0, 0);
    for (selector, keys) in groups {
        let mut group_opts = opts.clone();
        group_opts.selector = selector;
        let collected = match gpulint::metrics::prometheus::collect(&group_opts, &keys) {
            Ok(c) => c,
            Err(e) => {
                if progress {
                    eprint!("\r\x1b[2K");
                }
                eprintln!("error: {e}");
                return Err(EXIT_ERROR);
            }
        };
        for w in &collected.warnings {
            eprintln!("warning: prometheus: {w}");
        }
        missing += collected.missing.len();
        requests += collected.requests;
        match &mut usage {
            None => usage = Some(collected.usage),
            Some(all) => all.containers.extend(collected.usage.containers),
        }
    }
    if progress {
        eprint!("\r\x1b[2K");
    }
    let usage = usage.unwrap_or_default();
    eprintln!(
        "prometheus {}, window {}: {} container(s) with data, {missing} without, {} node(s) ({requests} request(s))",
        redact_url(&opts.url),
        opts.window,
        usage.containers.len(),
        usage.nodes.len()
    );
    Ok(usage)
}

fn snapshot(args: &SnapshotArgs) -> u8 {
    let config = match load_config(&args.common) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let linter = linter_for(config, Selection::default(), &args.common);
    let loaded = linter.load(&args.common.paths);
    let usage = match query_prometheus(&args.prometheus, &linter, &loaded) {
        Ok(u) => u,
        Err(code) => return code,
    };
    let text = gpulint::metrics::snapshot::write(&usage, &now_rfc3339());
    // What is written must read back: check it as `--metrics` will.
    if let Err(e) = gpulint::metrics::snapshot::parse(&text, "the collected snapshot") {
        eprintln!("error: Prometheus returned figures the snapshot format rejects: {e}");
        return EXIT_ERROR;
    }
    match &args.output {
        None => print(&text),
        Some(path) => {
            // Atomic, never through a link: a reader never sees half a snapshot.
            if let Err(e) = gpulint::fix::write::write_output(path, &text) {
                eprintln!("error: {e}");
                return EXIT_ERROR;
            }
            eprintln!("wrote {}", path.display());
        }
    }
    0
}

/// The current UTC time as RFC 3339 (`2026-12-01T00:00:00Z`).
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    report::rfc3339(secs)
}

/// Writes a report file (atomically, never through a link); false after saying why not.
fn write_report(path: &std::path::Path, text: &str) -> bool {
    match gpulint::fix::write::write_output(path, text) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}

/// What a report is about: the repository's folder name, and the paths when not the whole of it.
fn report_title(paths: &[PathBuf]) -> String {
    let first = paths
        .iter()
        .find(|p| p.as_os_str() != "-")
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    let repo = gpulint::source::repo::repository_of(&first);
    let name = std::fs::canonicalize(&repo)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| repo.display().to_string());
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    if shown == ["."] {
        name
    } else {
        format!("{name} ({})", shown.join(" "))
    }
}

enum FixOutcome {
    /// Manifests changed: lint again to report what remains. `left_as_is`: a file changed while
    /// gpulint ran and was not written (the run exits 2).
    Written { left_as_is: bool },
    /// --diff, --patch, or nothing to fix: the lint result stands.
    NothingWritten,
}

fn fix(args: &LintArgs, linter: &Linter, run: &gpulint::lint::Run) -> Result<FixOutcome, u8> {
    let plan = gpulint::fix::apply::plan(linter, run, args.unsafe_fixes);
    if plan.stdin_fixable > 0 {
        eprintln!(
            "note: {} fixable finding(s) in stdin: stdin can be linted but not fixed; run on the files",
            plan.stdin_fixable
        );
    }
    if plan.unsafe_skipped > 0 {
        eprintln!(
            "note: {} fix(es) are unsafe and were not applied (use --unsafe-fixes)",
            plan.unsafe_skipped
        );
    }
    for r in &plan.rejected {
        eprintln!("not fixed: {}:{}: {}: {}", r.file, r.line, r.rule, r.reason);
    }
    if args.diff || args.patch.is_some() {
        // A diff of a linked or non-regular file is refused as writing it would be.
        gpulint::fix::write::check_sources(&plan).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_ERROR
        })?;
    }
    if args.diff {
        print(&gpulint::fix::patch::diff(&plan));
        return Ok(FixOutcome::NothingWritten);
    }
    if let Some(path) = &args.patch {
        let text = gpulint::fix::patch::patch(&plan).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_ERROR
        })?;
        gpulint::fix::write::write_output(path, &text).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_ERROR
        })?;
        eprintln!("wrote {} ({} file(s))", path.display(), plan.files.len());
        return Ok(FixOutcome::NothingWritten);
    }
    if plan.files.is_empty() {
        eprintln!("nothing to fix");
        return Ok(FixOutcome::NothingWritten);
    }
    // From here a SIGINT/SIGTERM stops between two files instead of killing the run.
    let stop = gpulint::interrupt::StopRequest::catch();
    let code_on_error = |stop: &gpulint::interrupt::StopRequest| {
        if stop.requested() {
            gpulint::interrupt::EXIT_INTERRUPTED
        } else {
            EXIT_ERROR
        }
    };
    if args.commit {
        let committed = gpulint::fix::commit::commit(&plan, args.message.as_deref(), stop.flag())
            .map_err(|e| {
            eprintln!("error: {e}");
            code_on_error(&stop)
        })?;
        stop.release();
        report_changes(&plan);
        if committed.fallback_author {
            eprintln!(
                "note: git has no user.name/user.email here; committed as gpulint <gpulint@localhost>"
            );
        }
        eprintln!("committed {}", committed.id);
        return Ok(FixOutcome::Written { left_as_is: false });
    }
    // Each file's `fixed` lines are printed as it lands on disk: an interrupted run says what it did.
    let mut findings = 0;
    let written = gpulint::fix::write::write_each(&plan, stop.flag(), |f| {
        findings += report_file(f);
    });
    stop.release();
    let written = written.map_err(|e| {
        eprintln!("error: {e}");
        code_on_error(&stop)
    })?;
    for left in &written.left {
        eprintln!("not fixed: {left}");
    }
    eprintln!("fixed {findings} finding(s) in {} file(s)", written.files);
    if written.not_reached > 0 || stop.requested() {
        eprintln!(
            "interrupted: {} file(s) not written; every file is either as it was or fully fixed",
            written.not_reached
        );
        return Err(gpulint::interrupt::EXIT_INTERRUPTED);
    }
    Ok(FixOutcome::Written {
        left_as_is: !written.left.is_empty(),
    })
}

/// Prints the `fixed` lines of one file; returns how many.
fn report_file(f: &gpulint::fix::apply::FileFix) -> usize {
    for a in &f.applied {
        eprintln!(
            "fixed {}:{}: {} {} ({})",
            f.name, a.line, a.rule, a.description, a.object
        );
    }
    f.applied.len()
}

fn report_changes(plan: &gpulint::fix::apply::FixPlan) {
    let count: usize = plan.files.iter().map(report_file).sum();
    eprintln!("fixed {count} finding(s) in {} file(s)", plan.files.len());
}

fn inventory(common: &CommonArgs, format: InventoryFormat) -> u8 {
    let config = match load_config(common) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let linter = linter_for(config, Selection::default(), common);
    let loaded = linter.load(&common.paths);
    let inventory =
        report::inventory::workloads(&linter, &loaded.files, &loaded.units, &loaded.releases);
    let errors = &loaded.errors;
    match format {
        InventoryFormat::Json => print(&format!("{inventory:#}\n")),
        InventoryFormat::Table => print(&report::inventory::table(&linter, &inventory)),
        InventoryFormat::Csv => print(&report::inventory::csv(&linter, &inventory)),
    }
    for e in errors {
        if e.file.is_empty() {
            // A path that could not be walked: the message names it.
            eprintln!("error: {}", e.message);
        } else {
            eprintln!("error: {}:{}:{}: {}", e.file, e.line, e.column, e.message);
        }
    }
    if errors.is_empty() {
        0
    } else {
        EXIT_ERROR
    }
}
