//! `--format github`: workflow commands that GitHub Actions turns into annotations.

use super::location;
use crate::lint::Run;
use crate::rules::Severity;

/// Escaping for the message part of a workflow command.
fn escape_data(s: &str) -> String {
    let data = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    super::printable(&data).into_owned()
}

/// Escaping for a property value: the data escapes plus `:` and `,`.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    for f in run.findings.iter().filter(|f| f.suppression.is_none()) {
        let at = location(run, f);
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        out.push_str(&format!(
            "::{command} file={},line={},endLine={},col={},endColumn={},title={}::{}\n",
            escape_property(at.file),
            at.line,
            at.end_line,
            at.column,
            at.end_column,
            escape_property(&format!("{} {}", f.rule.id, f.rule.name)),
            escape_data(&super::message(run, f))
        ));
    }
    for e in &run.errors {
        if e.file.is_empty() {
            out.push_str(&format!("::error::{}\n", escape_data(&e.message)));
        } else {
            out.push_str(&format!(
                "::error file={},line={},col={},title=gpulint input error::{}\n",
                escape_property(&e.file),
                e.line.max(1),
                e.column.max(1),
                escape_data(&e.message)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_github_documents() {
        assert_eq!(escape_data("50% a\nb\r"), "50%25 a%0Ab%0D");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
        assert_eq!(escape_data("x\u{1b}[2J"), "x\\u{1b}[2J");
    }
}
