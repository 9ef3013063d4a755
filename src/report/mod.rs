//! Output formats. Each reads a finished `Run`; none of them changes it.

pub mod github;
pub mod human;
pub mod inventory;
pub mod json;
pub mod sarif;

use crate::lint::Run;
use crate::rules::Finding;

/// Where a finding is, in the terms every format uses: 1-based lines and columns, end exclusive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location<'a> {
    pub file: &'a str,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

pub fn location<'a>(run: &'a Run, f: &Finding) -> Location<'a> {
    let file = &run.files[f.file];
    let (line, column) = file.stream.line_col(f.span.start());
    let (end_line, end_column) = file.stream.line_col(f.span.end().max(f.span.start()));
    Location {
        file: &file.name,
        line,
        column,
        end_line,
        end_column,
    }
}
