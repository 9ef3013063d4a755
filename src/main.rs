//! CLI entry: parse arguments, run, map the outcome to an exit code
//! (0 clean, 1 findings at or above --fail-on, 2 usage, config or input errors).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use gpulint::cli::{Cli, Command, CommonArgs, FailOn, Format, InventoryFormat, LintArgs};
use gpulint::config::Config;
use gpulint::lint::{Linter, Selection};
use gpulint::report;
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
        let fix = if r.fixable { " [fixable]" } else { "" };
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
    match rules::rule(id) {
        Some(r) => {
            print(r.doc);
            0
        }
        None => {
            eprintln!("error: unknown rule {id:?}; `gpulint rules` lists them");
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

fn validate_rule_names(names: &[String], flag: &str) -> Result<(), u8> {
    for n in names {
        if rules::rule(n).is_none() {
            eprintln!("error: {flag}: unknown rule {n:?}; `gpulint rules` lists them");
            return Err(EXIT_ERROR);
        }
    }
    Ok(())
}

fn lint(args: &LintArgs) -> u8 {
    let config = match load_config(&args.common) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Err(code) = validate_rule_names(&args.select, "--select")
        .and_then(|()| validate_rule_names(&args.ignore, "--ignore"))
    {
        return code;
    }
    let resolve = |names: &[String]| -> Vec<String> {
        names
            .iter()
            .filter_map(|n| rules::rule(n).map(|r| r.id.to_string()))
            .collect()
    };
    let selection = Selection {
        select: resolve(&args.select),
        ignore: resolve(&args.ignore),
    };
    let mut linter = Linter::new(config, selection);
    if let Some(path) = &args.metrics {
        match gpulint::metrics::snapshot::read(path) {
            Ok(usage) => linter.usage = Some(usage),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_ERROR;
            }
        }
    }
    let mut run = linter.run(&args.common.paths);
    let mut show_findings = true;
    if args.fix {
        match fix(args, &linter, &run) {
            Err(code) => return code,
            Ok(FixOutcome::Written) => run = linter.run(&args.common.paths),
            Ok(FixOutcome::NothingWritten) => {}
        }
        // --diff and --patch print (or write) the change only, like `ruff --diff`.
        show_findings = !args.diff && args.patch.is_none();
    }
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    match args.format {
        _ if !show_findings => eprint!("{}", report::human::summary(&run)),
        Format::Human => print(&report::human::render(&run, color)),
        Format::Json => print(&format!("{:#}\n", report::json::render(&run))),
        Format::Sarif => print(&format!("{:#}\n", report::sarif::render(&run))),
        Format::Github => print(&report::github::render(&run)),
    }
    let level = match args.fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Info => Severity::Info,
    };
    if !run.errors.is_empty() {
        EXIT_ERROR
    } else if run.count_at_or_above(level) > 0 {
        EXIT_FINDINGS
    } else {
        0
    }
}

enum FixOutcome {
    /// Manifests changed: lint again to report what remains.
    Written,
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
    if args.diff {
        print(&gpulint::fix::patch::diff(&plan));
        return Ok(FixOutcome::NothingWritten);
    }
    if let Some(path) = &args.patch {
        let text = gpulint::fix::patch::patch(&plan).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_ERROR
        })?;
        std::fs::write(path, text).map_err(|e| {
            eprintln!("error: {}: cannot write the patch: {e}", path.display());
            EXIT_ERROR
        })?;
        eprintln!("wrote {} ({} file(s))", path.display(), plan.files.len());
        return Ok(FixOutcome::NothingWritten);
    }
    if plan.files.is_empty() {
        eprintln!("nothing to fix");
        return Ok(FixOutcome::NothingWritten);
    }
    if args.commit {
        let committed =
            gpulint::fix::commit::commit(&plan, args.message.as_deref()).map_err(|e| {
                eprintln!("error: {e}");
                EXIT_ERROR
            })?;
        report_changes(&plan);
        if committed.fallback_author {
            eprintln!(
                "note: git has no user.name/user.email here; committed as gpulint <gpulint@localhost>"
            );
        }
        eprintln!("committed {}", committed.id);
        println!("{}", committed.id);
    } else {
        gpulint::fix::apply::write(&plan).map_err(|e| {
            eprintln!("error: {e}");
            EXIT_ERROR
        })?;
        report_changes(&plan);
    }
    Ok(FixOutcome::Written)
}

fn report_changes(plan: &gpulint::fix::apply::FixPlan) {
    let mut count = 0;
    for f in &plan.files {
        for a in &f.applied {
            eprintln!(
                "fixed {}:{}: {} {} ({})",
                f.name, a.line, a.rule, a.description, a.object
            );
            count += 1;
        }
    }
    eprintln!("fixed {count} finding(s) in {} file(s)", plan.files.len());
}

fn inventory(common: &CommonArgs, format: InventoryFormat) -> u8 {
    let config = match load_config(common) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let linter = Linter::new(config, Selection::default());
    let (files, errors) = linter.load(&common.paths);
    let inventory = report::inventory::workloads(&linter, &files);
    match format {
        InventoryFormat::Json => print(&format!("{inventory:#}\n")),
        InventoryFormat::Table => print(&report::inventory::table(&linter, &inventory)),
    }
    for e in &errors {
        eprintln!("error: {}:{}:{}: {}", e.file, e.line, e.column, e.message);
    }
    if errors.is_empty() {
        0
    } else {
        EXIT_ERROR
    }
}
