//! Human output: rustc/ruff-style diagnostics with the source snippet (miette).

use std::fmt;
use std::sync::Arc;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceSpan};

use crate::lint::Run;
use crate::rules::{Finding, Severity};

struct Rendered<'a> {
    finding: &'a Finding,
    header: String,
    source: Window,
}

/// Snippets longer than this per line are not drawn (miette cannot place a label past column
/// 65535, and a minified 100 KB line helps nobody): the finding is printed on one line.
const MAX_SNIPPET_LINE: usize = 2_000;

/// The source as miette sees it: the whole file, but read from a few lines above the span, so
/// rendering N findings costs O(N) and not O(N × file size).
struct Window {
    name: String,
    text: Arc<str>,
    /// Byte offset and 0-based line number where reading starts.
    start: usize,
    first_line: usize,
}

impl Window {
    fn new(file: &crate::source::file::SourceFile, offset: usize) -> Window {
        let (line, _) = file.stream.line_col(offset);
        let first = line.saturating_sub(4).max(1);
        Window {
            name: super::printable(&file.name).into_owned(),
            text: match super::printable_same_width(&file.stream.text) {
                std::borrow::Cow::Borrowed(_) => file.stream.text.clone(),
                std::borrow::Cow::Owned(escaped) => escaped.into(),
            },
            start: file.stream.lines.line_start(first).unwrap_or(0),
            first_line: first - 1,
        }
    }
}

impl miette::SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let rest = self
            .text
            .get(self.start..)
            .ok_or(miette::MietteError::OutOfBounds)?;
        let offset = span
            .offset()
            .checked_sub(self.start)
            .ok_or(miette::MietteError::OutOfBounds)?;
        let local = SourceSpan::new(offset.into(), span.len());
        let inner = rest.read_span(&local, before, after)?;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            SourceSpan::new(
                (inner.span().offset() + self.start).into(),
                inner.span().len(),
            ),
            inner.line() + self.first_line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// Whether the line holding `offset` is short enough to draw.
fn drawable(file: &crate::source::file::SourceFile, offset: usize) -> bool {
    let (line, _) = file.stream.line_col(offset);
    let lines = &file.stream.lines;
    let start = lines.line_start(line).unwrap_or(0);
    let end = lines.line_start(line + 1).unwrap_or(file.stream.text.len());
    end.saturating_sub(start) <= MAX_SNIPPET_LINE
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
        let len = span.end().saturating_sub(span.start());
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(self.finding.label.clone()),
            SourceSpan::new(span.start().into(), len),
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
        let header = super::printable(&super::message(run, finding)).into_owned();
        if !drawable(file, finding.span.start()) {
            let at = super::location(run, finding);
            out.push_str(&format!(
                "{}[{}] {}: {}:{}:{}: {}\n\n",
                finding.severity.as_str(),
                finding.rule.id,
                finding.rule.name,
                super::printable(at.file),
                at.line,
                at.column,
                header
            ));
            continue;
        }
        let rendered = Rendered {
            finding,
            header,
            source: Window::new(file, finding.span.start()),
        };
        if handler.render_report(&mut out, &rendered).is_err() {
            out.push_str(&rendered.header);
        }
        out.push('\n');
    }
    for e in &run.errors {
        if let Some((index, offset)) = e.source.filter(|(i, o)| drawable(&run.files[*i], *o)) {
            let file = &run.files[index];
            let diagnostic = miette::MietteDiagnostic::new(super::printable(&e.message))
                .with_code(if e.message.starts_with("kustomize:") {
                    "error[input] kustomize render failed"
                } else {
                    "error[input] invalid YAML"
                })
                .with_label(LabeledSpan::at_offset(offset, "here"));
            let report =
                miette::Report::new(diagnostic).with_source_code(Window::new(file, offset));
            if handler.render_report(&mut out, report.as_ref()).is_ok() {
                out.push('\n');
                continue;
            }
        }
        if e.file.is_empty() {
            out.push_str(&format!("error: {}\n", super::printable(&e.message)));
        } else {
            out.push_str(&format!(
                "error: {}:{}:{}: {}\n",
                super::printable(&e.file),
                e.line,
                e.column,
                super::printable(&e.message)
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
    let fixable = active.iter().filter(|f| f.fixable()).count();
    let unsafe_fixable = active.iter().filter(|f| f.unsafe_fixable()).count();
    let with_findings: std::collections::BTreeSet<usize> = active.iter().map(|f| f.file).collect();
    let mut line = if run.file_count() == 0 && active.is_empty() {
        "No manifests found: nothing was linted".to_string()
    } else if active.is_empty() {
        format!("No findings in {} file(s)", run.file_count())
    } else {
        format!(
            "Found {} finding(s) in {} of {} file(s) read: {} error(s), {} warning(s), {} info",
            active.len(),
            with_findings.len(),
            run.file_count(),
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info)
        )
    };
    if fixable > 0 {
        line.push_str(&format!("; {fixable} fixable"));
    }
    if unsafe_fixable > 0 {
        line.push_str(&format!("; {unsafe_fixable} fixable with --unsafe-fixes"));
    }
    if suppressed > 0 {
        line.push_str(&format!("; {suppressed} suppressed"));
    }
    if !run.errors.is_empty() {
        line.push_str(&format!("; {} input error(s)", run.errors.len()));
    }
    line.push('\n');
    if let Some(c) = &run.coverage {
        line.push_str(&format!("Metrics: {}\n", super::printable(&c.describe())));
        if let Some(w) = c.warning() {
            line.push_str(&format!("warning: {w}\n"));
        }
    }
    let savings = crate::rules::savings::total(&run.findings, run.placement.several());
    if !savings.is_empty() {
        line.push_str(&format!("GPU savings: {}\n", savings.describe()));
    }
    line
}
