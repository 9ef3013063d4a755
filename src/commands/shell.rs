//! `gpulint completions SHELL` and `gpulint man`: generated from the clap definition of
//! `cli.rs`, so every flag and subcommand is in them as soon as it exists.

use clap::CommandFactory;
use clap_complete::Shell;
use gpulint::cli::{Cli, CompletionShell};

use super::{error, print, Exit, Outcome};

pub fn completions(shell: CompletionShell) -> Outcome {
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
        CompletionShell::Elvish => Shell::Elvish,
        CompletionShell::Powershell => Shell::PowerShell,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "gpulint", &mut script);
    write(&script)
}

pub fn man() -> Outcome {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(error)?;
    write(&page)
}

fn write(bytes: &[u8]) -> Outcome {
    // clap writes UTF-8 (it comes from Rust strings); lossy all the same, never a panic.
    print(&String::from_utf8_lossy(bytes));
    Ok(Exit::Clean)
}
