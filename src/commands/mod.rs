//! The subcommands, one file each (as ruff's `crates/ruff/src/commands/`). A command reads its
//! arguments, drives the library, says what it has to say on stdout and stderr (its errors
//! included) and returns how the run ends. Domain logic lives in the library, not here.

pub mod explain;
mod fix;
pub mod inventory;
pub mod lint;
mod live;
pub mod render;
pub mod rules;
mod setup;
pub mod shell;
pub mod snapshot;

use std::io::Write;
use std::process::ExitCode;

/// How a run ends, and its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: no finding at or above `--fail-on` (or a listing printed).
    Clean,
    /// 1: findings at or above `--fail-on`.
    Findings,
    /// 2: usage, config or input errors, said on stderr.
    Error,
    /// 130: `--fix` stopped by SIGINT/SIGTERM.
    Interrupted,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(match exit {
            Exit::Clean => 0,
            Exit::Findings => 1,
            Exit::Error => 2,
            Exit::Interrupted => gpulint::interrupt::EXIT_INTERRUPTED,
        })
    }
}

/// Why a command stopped early, having said so on stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Usage, config, input or output error: exit 2.
    Error,
    /// `--fix` stopped by SIGINT/SIGTERM: exit 130.
    Interrupted,
}

impl From<Failure> for Exit {
    fn from(failure: Failure) -> Exit {
        match failure {
            Failure::Error => Exit::Error,
            Failure::Interrupted => Exit::Interrupted,
        }
    }
}

/// What a command returns: how it ended, or that it stopped early.
pub type Outcome = Result<Exit, Failure>;

/// Says `error: {e}` on stderr; the command then stops with exit 2.
fn error(e: impl std::fmt::Display) -> Failure {
    eprintln!("error: {e}");
    Failure::Error
}

/// Writes `text` to stdout.
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`gpulint | head`) is not an error worth a panic.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
