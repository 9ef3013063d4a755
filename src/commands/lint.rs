//! `gpulint [PATHS]`: lint, judge against measurements (a snapshot file or a live Prometheus),
//! scope to `--changed-since`, drive `--fix`, and write the reports.

use std::cell::Cell;
use std::io::IsTerminal;

use gpulint::cli::{FailOn, LintArgs};
use gpulint::lint::{Linter, Loaded, Run, Selection};
use gpulint::report;
use gpulint::report::Format;
use gpulint::rules::{self, Rule, Severity};

use super::fix::{fix, FixOutcome};
use super::setup::{linter_for, load_config};
use super::{error, live, print, Exit, Failure, Outcome};

pub fn lint(args: &LintArgs) -> Outcome {
    let config = load_config(&args.common)?;
    let selection = Selection {
        select: rule_ids(&args.select, "--select")?,
        ignore: rule_ids(&args.ignore, "--ignore")?,
        measured_only: args.measured_only,
    };
    let mut linter = linter_for(config, selection, &args.common);
    let loaded = Cell::new(measurements(args, &mut linter)?);
    if linter.usage.is_none() && args.measured_only {
        return Err(error(
            "--measured-only needs measurements: pass --metrics FILE or --prometheus URL (or `metrics:` in .gpulint.yaml)",
        ));
    }
    if linter.usage.is_none() {
        for rule in &linter.selection.select {
            let id = rule.id();
            if rules::headroom::MEASURED_RULES.contains(&id) {
                eprintln!(
                    "note: {id} needs measurements: pass --metrics FILE or --prometheus URL (or `metrics:` in .gpulint.yaml); not checked in this run"
                );
            }
        }
    }
    // Files named one by one (pre-commit): what they hold and what their changes since HEAD
    // can change; folders and `--changed-since` runs are not narrowed so.
    let paths = &args.common.paths;
    let named_files = args.changed_since.is_none()
        && !paths.is_empty()
        && paths.iter().all(|p| p.as_os_str() != "-" && p.is_file());
    // `--changed-since REF`: only the findings on what changed since REF.
    let scoped = |mut run: Run, quiet: bool| -> Result<Run, Failure> {
        // A base folder (`apps/base`) was linted as its files named one by one: narrowed alike.
        let named: &[std::path::PathBuf] = if named_files { paths } else { &run.named };
        if !named.is_empty() && args.changed_since.is_none() {
            let scope =
                gpulint::changed::named_files(&run, named, &linter.render, linter.helm.as_ref());
            if let Some(scope) = scope {
                scope.retain(&mut run);
            }
        }
        if let Some(reference) = &args.changed_since {
            let scope =
                gpulint::changed::scope(&run, reference, &linter.render, linter.helm.as_ref())
                    .map_err(error)?;
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
    let first = match loaded.take() {
        Some(inputs) => linter.lint_loaded(inputs),
        None => linter.run(&args.common.paths),
    };
    let mut run = scoped(first, false)?;
    if let Some(note) = unlabelled_figures_note(&linter, &run) {
        run.notes.push(note);
    }
    for note in &run.notes {
        eprintln!("note: {note}");
    }
    let mut show_findings = true;
    let mut left_as_is = false;
    // "Fixable" is what this run's `--fix` writes: the fixes are planned to say so.
    let plan = plan_fixes(args, &linter, &mut run);
    if args.fix {
        match fix(args, plan.unwrap_or_default())? {
            FixOutcome::Written {
                changed,
                left_as_is: left,
                parsed,
            } => {
                left_as_is = left;
                let relinted = linter.relint_reusing(run, &changed, &parsed, &args.common.paths);
                run = scoped(relinted, true)?;
                // What is left: the refused fixes are not fixable.
                plan_fixes(args, &linter, &mut run);
            }
            FixOutcome::NothingWritten => {}
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
        repo: report::title(&args.common.paths),
        generated_at: report::report_time(),
        fail_on: level,
        linter: &linter,
    };
    let write_failed = !write_reports(args, &run, &page, show_findings);
    Ok(if !run.errors.is_empty() || left_as_is || write_failed {
        Exit::Error
    } else if run.count_at_or_above(level) > 0 {
        Exit::Findings
    } else {
        Exit::Clean
    })
}

/// Plans the fixes of `run`'s findings (when any carries one) and sets each finding's fix
/// status from the plan.
fn plan_fixes(
    args: &LintArgs,
    linter: &Linter,
    run: &mut Run,
) -> Option<gpulint::fix::plan::FixPlan> {
    if !run
        .findings
        .iter()
        .any(|f| f.suppression.is_none() && f.fix.is_some())
    {
        return None;
    }
    let plan = gpulint::fix::plan::plan(linter, run, args.unsafe_fixes);
    gpulint::fix::plan::set_status(&mut run.findings, &plan);
    Some(plan)
}

/// Figures that name no cluster are not used in a run of several clusters: say so once, with
/// how to name them.
fn unlabelled_figures_note(linter: &Linter, run: &Run) -> Option<String> {
    let usage = linter.usage.as_ref()?;
    let unlabelled = usage.containers.any_without_cluster();
    if !run.placement.several() || !unlabelled {
        return None;
    }
    let names: Vec<&str> = run.placement.clusters.iter().map(String::as_str).collect();
    Some(format!(
        "the repository declares {} clusters ({}); figures of {} that name no cluster are used for none of them: give each figure its `cluster`, or map a snapshot to each cluster (`metrics: {{{}: FILE, …}}` in .gpulint.yaml)",
        names.len(),
        names.join(", "),
        usage.source,
        names.first().copied().unwrap_or("prod")
    ))
}

/// The rule ids a `--select`/`--ignore` list names (`"GPU001, QOS002"`: spaces trimmed, empty
/// entries dropped); an unknown name is an error that names it.
fn rule_ids(names: &[String], flag: &str) -> Result<Vec<Rule>, Failure> {
    let mut ids = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        match Rule::parse_or_suggest(n) {
            Ok(r) => ids.push(r),
            Err(message) => {
                eprintln!("error: {flag}: {message}; `gpulint rules` lists them");
                return Err(Failure::Error);
            }
        }
    }
    Ok(ids)
}

/// Sets the linter's measurements: `--metrics FILE`, else a live Prometheus, else the snapshot
/// the config names. Live mode reads and renders the inputs once, for the queries and then for
/// the lint: those inputs are returned.
fn measurements(args: &LintArgs, linter: &mut Linter) -> Result<Option<Loaded>, Failure> {
    let live_url = live::url(&args.prometheus);
    // The flags (and GPULINT_PROMETHEUS_URL) win over a snapshot the config names.
    let configured_snapshot = match (&args.metrics, &live_url) {
        (None, None) => linter.config.metrics.clone(),
        _ => None,
    };
    let max_bytes = args
        .metrics_max_mib
        .map_or(gpulint::metrics::snapshot::DEFAULT_MAX_BYTES, |mib| {
            mib.saturating_mul(1024 * 1024)
        });
    if let Some(path) = args.metrics.as_ref().or(configured_snapshot.as_ref()) {
        linter.usage = Some(gpulint::metrics::snapshot::read(path, max_bytes).map_err(error)?);
    }
    // `metrics: {prod: …, staging: …}`: one snapshot per cluster, each figure named with its
    // cluster (a figure the file already names keeps its own).
    if args.metrics.is_none() && live_url.is_none() {
        for (cluster, path, _) in linter.config.cluster_metrics.clone() {
            let mut set = gpulint::metrics::snapshot::read(&path, max_bytes).map_err(error)?;
            set.label(&cluster);
            match linter.usage.as_mut() {
                Some(usage) => usage.merge(set),
                None => linter.usage = Some(set),
            }
        }
    }
    if linter.usage.is_none() && live_url.is_some() {
        let inputs = linter.load(&args.common.paths);
        linter.usage = Some(live::measure(&args.prometheus, linter, &inputs)?);
        return Ok(Some(inputs));
    }
    Ok(None)
}

/// Writes the `--format` report (stdout, or `--output FILE`) and each `--output-format`; false
/// when a file could not be written (after saying why).
fn write_reports(
    args: &LintArgs,
    run: &Run,
    page: &report::html::Page<'_>,
    show_findings: bool,
) -> bool {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut written = true;
    // The human summary says it; any other report on stdout or in a file has it in its data.
    let summary_on_terminal =
        args.output.is_none() && (!show_findings || args.format == Format::Human);
    if let Some(w) = run.coverage.as_ref().and_then(|c| c.warning()) {
        if !summary_on_terminal {
            eprintln!("warning: {w}");
        }
    }
    match (args.format, &args.output) {
        // A file is not stdout: --diff and --patch leave it as asked.
        (format, Some(path)) => {
            written &= write_report(path, &report::render(format, run, page, false));
        }
        _ if !show_findings => eprint!("{}", report::human::summary(run)),
        (Format::Json, None) => report::json::print(run),
        (Format::Sarif, None) => report::sarif::print(run),
        (format, None) => print(&report::render(format, run, page, color)),
    }
    for (format, path) in &args.output_formats {
        written &= write_report(path, &report::render(*format, run, page, false));
    }
    written
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
