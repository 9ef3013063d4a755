//! Finding the inputs: files and folders named on the command line, walked honouring
//! `.gitignore` and the config's excludes, and `-` for stdin.

use std::path::{Path, PathBuf};

use crate::config::Config;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input {
    File(PathBuf),
    Stdin,
}

impl Input {
    /// The name shown in findings: the path as walked, or `-`.
    pub fn display(&self) -> String {
        match self {
            Input::File(p) => p.strip_prefix("./").unwrap_or(p).display().to_string(),
            Input::Stdin => "-".to_string(),
        }
    }
}

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Files to lint, in a deterministic order (command-line order, then sorted within a folder).
/// A missing path is an error message; the other inputs are still returned.
pub fn discover(paths: &[PathBuf], config: &Config) -> (Vec<Input>, Vec<String>) {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        if path.is_file() {
            // A file named explicitly is linted whatever its name, unless the config excludes it.
            if !config.is_excluded(path) {
                inputs.push(Input::File(path.clone()));
            }
            continue;
        }
        if !path.is_dir() {
            errors.push(format!("{}: no such file or directory", path.display()));
            continue;
        }
        // Hidden folders are walked (manifests live in `.github/…` or `.deploy/` too); `.git`
        // is not.
        let walker = ignore::WalkBuilder::new(path)
            .require_git(false)
            .hidden(false)
            .filter_entry(|e| e.file_name() != ".git")
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    let p = e.path();
                    // The config file is not a manifest.
                    if e.file_type().is_some_and(|t| t.is_file())
                        && is_yaml(p)
                        && e.file_name() != crate::config::FILE_NAME
                        && !config.is_excluded(p)
                    {
                        inputs.push(Input::File(p.to_path_buf()));
                    }
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    inputs.retain(|i| seen.insert(i.clone()));
    (inputs, errors)
}
