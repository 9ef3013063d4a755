//! Human output: rustc/ruff-style diagnostics with the source snippet (miette).

use std::fmt;
use std::sync::Arc;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan,
};

use crate::lint::Run;
use crate::rules::{Finding, Severity};

struct Rendered<'a> {
    finding: &'a Finding,
    header: String,
    source: NamedSource<Arc<str>>,
}

impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.header)
    }
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.header)
    }
}

impl std::error::Error for Rendered<'_> {}

impl Diagnostic for Rendered<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(format!(
            "{}[{}] {}",
            self.finding.severity.as_str(),
            self.finding.rule.id,
            self.finding.rule.name
        )))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let help = self.finding.help.as_ref()?;
        Some(Box::new(help))
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.finding.span;
        let len = span.end.saturating_sub(span.start);
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(self.finding.label.clone()),
            SourceSpan::new(span.start.into(), len),
        ))))
    }
}

/// Renders every unsuppressed finding, then the input errors and a summary line.
pub fn render(run: &Run, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_width(100);
    let mut out = String::new();
    for finding in run.findings.iter().filter(|f| f.suppression.is_none()) {
        let file = &run.files[finding.file];
        // miette prints `file:line:col` above the snippet, so the header is just the message.
        let header = finding.message.clone();
        let rendered = Rendered {
            finding,
            header,
            source: NamedSource::new(&file.name, file.stream.text.clone()),
        };
        if handler.render_report(&mut out, &rendered).is_err() {
            out.push_str(&rendered.header);
        }
        out.push('\n');
    }
    for e in &run.errors {
        if let Some((index, offset)) = e.source {
            let file = &run.files[index];
            let diagnostic = miette::MietteDiagnostic::new(e.message.clone())
                .with_code("error[input] invalid YAML")
                .with_label(LabeledSpan::at_offset(offset, "here"));
            let report = miette::Report::new(diagnostic)
                .with_source_code(NamedSource::new(&file.name, file.stream.text.clone()));
            if handler.render_report(&mut out, report.as_ref()).is_ok() {
                out.push('\n');
                continue;
            }
        }
        if e.file.is_empty() {
            out.push_str(&format!("error: {}\n", e.message));
        } else {
            out.push_str(&format!(
                "error: {}:{}:{}: {}\n",
                e.file, e.line, e.column, e.message
            ));
        }
    }
    out.push_str(&summary(run));
    out
}

pub fn summary(run: &Run) -> String {
    let active: Vec<_> = run
        .findings
        .iter()
        .filter(|f| f.suppression.is_none())
        .collect();
    let count = |s: Severity| active.iter().filter(|f| f.severity == s).count();
    let suppressed = run.findings.len() - active.len();
    let fixable = active.iter().filter(|f| f.fixable).count();
    let mut line = if active.is_empty() {
        format!("No findings in {} file(s)", run.files.len())
    } else {
        format!(
            "Found {} finding(s) in {} file(s): {} error(s), {} warning(s), {} info",
            active.len(),
            run.files.len(),
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info)
        )
    };
    if fixable > 0 {
        line.push_str(&format!("; {fixable} fixable"));
    }
    if suppressed > 0 {
        line.push_str(&format!("; {suppressed} suppressed"));
    }
    if !run.errors.is_empty() {
        line.push_str(&format!("; {} input error(s)", run.errors.len()));
    }
    line.push('\n');
    line
}
