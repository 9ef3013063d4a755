//! CLI entry: parse arguments, run the subcommand, map the outcome to an exit code
//! (0 clean, 1 findings at or above --fail-on, 2 usage, config or input errors, 130 --fix
//! stopped by SIGINT/SIGTERM). The subcommands are in `commands/`, one file each.

mod commands;

use std::process::ExitCode;

use clap::Parser;

use commands::Exit;
use gpulint::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print on stdout and exit 0; a usage error exits 2.
            let exit = if e.use_stderr() {
                Exit::Error
            } else {
                Exit::Clean
            };
            let _ = e.print();
            return exit.into();
        }
    };
    let outcome = match cli.command {
        Some(Command::Rules) => commands::rules::list(),
        Some(Command::Explain { rule }) => commands::explain::explain(&rule),
        Some(Command::Inventory(args)) => commands::inventory::inventory(&args),
        Some(Command::Snapshot(args)) => commands::snapshot::snapshot(&args),
        Some(Command::Render(args)) => commands::render::render(&args),
        Some(Command::Completions { shell }) => commands::shell::completions(shell),
        Some(Command::Man) => commands::shell::man(),
        None => commands::lint::lint(&cli.lint),
    };
    outcome.unwrap_or_else(Exit::from).into()
}
