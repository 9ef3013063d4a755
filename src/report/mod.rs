//! Output formats. Each reads a finished `Run`; none of them changes it.

pub mod github;
pub mod gitlab;
pub mod html;
pub mod human;
pub mod inventory;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod sarif;

use std::borrow::Cow;

use clap::ValueEnum;
use serde_json::ser::{Formatter, PrettyFormatter};

use crate::lint::Run;
use crate::rules::Finding;

// The output formats of `--format` and `--output-format FORMAT=FILE`, each written by a file of
// this module.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
    /// JUnit XML (Jenkins, GitLab, Azure DevOps test reports).
    Junit,
    /// GitLab Code Quality JSON.
    Gitlab,
    /// One self-contained HTML page with charts.
    Html,
    /// The sizing report in Markdown (a step summary, a pull request's body).
    Markdown,
}

/// A report of `format` as text: what `--format` prints, `-o` and `--output-format` write.
/// (The CLI streams json and sarif to stdout instead: at 10,000 manifests a string of the whole
/// report is the peak of the run's memory.)
pub fn render(format: Format, run: &Run, page: &html::Page, color: bool) -> String {
    let to_string = |write: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = write(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    };
    match format {
        Format::Human => human::render(run, color),
        Format::Json => to_string(&|out| json::write(run, out)),
        Format::Sarif => to_string(&|out| sarif::write(run, out)),
        Format::Github => github::render(run),
        Format::Junit => junit::render(run, page.fail_on),
        Format::Gitlab => gitlab::render(run),
        Format::Html => html::render(run, page),
        Format::Markdown => markdown::render(run, page),
    }
}

/// `secs` since the Unix epoch as RFC 3339 UTC (`2026-12-01T00:00:00Z`), without a date crate.
pub fn rfc3339(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The time a report says it was made: `SOURCE_DATE_EPOCH` when set (the reproducible-builds
/// convention: the same input gives the same file), else now.
pub fn report_time() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(now_secs);
    rfc3339(secs)
}

/// The current UTC time as RFC 3339 (`2026-12-01T00:00:00Z`), whatever `SOURCE_DATE_EPOCH`
/// says: when a snapshot was collected.
pub fn now_rfc3339() -> String {
    rfc3339(now_secs())
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What a report is about: the repository's folder name, and the paths when not the whole of it.
pub fn title(paths: &[std::path::PathBuf]) -> String {
    let first = paths
        .iter()
        .find(|p| p.as_os_str() != "-")
        .cloned()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let repo = crate::source::repo::repository_of(&first);
    let name = std::fs::canonicalize(&repo)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| repo.display().to_string());
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    if shown == ["."] {
        name
    } else {
        format!("{name} ({})", shown.join(" "))
    }
}

/// Where a finding is, in the terms every format uses: 1-based lines and columns, end exclusive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location<'a> {
    pub file: &'a str,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// The cluster a report names for a finding: its own, when the run has several clusters (one
/// cluster, or none declared, adds nothing to the outputs of a plain repository).
pub fn cluster_of<'a>(run: &Run, f: &'a Finding) -> Option<&'a str> {
    if run.placement.several() {
        f.cluster.as_deref()
    } else {
        None
    }
}

/// The measured container a finding is on, as the reports key it: with its cluster only when
/// the run has several (as the inventory names workloads).
pub fn container_key(run: &Run, f: &Finding) -> Option<crate::metrics::usage::ContainerKey> {
    let mut key = f.container_key()?;
    key.cluster = cluster_of(run, f).map(str::to_string);
    Some(key)
}

/// The columns of the "Will the model fit?" table (HTML and Markdown).
pub const FIT_COLUMNS: [&str; 8] = [
    "container",
    "rule",
    "model",
    "GPU",
    "weights a GPU",
    "KV of one sequence",
    "usable a GPU",
    "measured",
];

/// The rows of that table, one a FIT finding, as plain text (each format escapes its cells):
/// the figures the finding's message prints, from its `Fit`.
pub fn fit_rows(findings: &[&Finding]) -> Vec<[String; 8]> {
    findings
        .iter()
        .filter_map(|f| {
            let fit = f.fit.as_ref()?;
            Some([
                format!(
                    "{}/{} · {}",
                    f.object.kind,
                    f.object.name.as_deref().unwrap_or("-"),
                    f.container.as_deref().unwrap_or("-")
                ),
                f.rule.id.to_string(),
                format!("{} ({})", fit.model, fit.dtype),
                fit.gpu.clone(),
                format!("{:.1} GiB", fit.weights_gib),
                if fit.weights_only {
                    "not judged".to_string()
                } else {
                    format!("{:.1} GiB at {}", fit.kv_gib, fit.context_label())
                },
                format!("{:.1} GiB", fit.usable_gib),
                fit.measured
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |m| m.describe()),
            ])
        })
        .collect()
}

/// A finding's message as the text outputs show it: with its cluster when the run has several
/// (prod's and staging's findings on one base line differ only there).
pub fn message<'a>(run: &Run, f: &'a Finding) -> Cow<'a, str> {
    match cluster_of(run, f) {
        Some(c) => Cow::Owned(format!("{} [cluster {c}]", f.message)),
        None => Cow::Borrowed(&f.message),
    }
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

/// Characters a terminal or a code viewer acts on instead of showing: C0 and C1 controls and
/// DEL (escape sequences), and the bidi overrides that reorder text ("Trojan Source").
/// Line feeds and tabs are layout, not attacks.
fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Text from the repository (names, messages quoting it) as it may be printed: every hostile
/// character written as a visible escape (`\u{1b}`). The one place every output format
/// escapes through.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_hostile(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A source text for a code snippet: hostile characters replaced by a visible one of the same
/// UTF-8 length, so byte offsets and spans stay valid. Line breaks (`\r` too) are kept.
pub fn printable_same_width(s: &str) -> Cow<'_, str> {
    let hostile = |c: char| is_hostile(c) && c != '\r';
    if !s.chars().any(hostile) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| match c {
                c if !hostile(c) => c,
                c if c.len_utf8() == 1 => '?',
                c if c.len_utf8() == 2 => '\u{BF}',
                _ => '\u{FFFD}',
            })
            .collect(),
    )
}

/// Writes JSON (pretty) with every hostile character in strings as a `\uXXXX` escape: the data is
/// the same for a JSON reader, and nothing raw reaches a terminal (`serde_json` escapes only C0).
pub fn write_json(out: impl std::io::Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, SafeJson(PrettyFormatter::new()));
    value.serialize(&mut ser).map_err(std::io::Error::other)
}

struct SafeJson(PrettyFormatter<'static>);

impl Formatter for SafeJson {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        match printable(fragment) {
            Cow::Borrowed(s) => w.write_all(s.as_bytes()),
            Cow::Owned(_) => {
                for c in fragment.chars() {
                    if is_hostile(c) {
                        write!(w, "\\u{:04x}", c as u32)?;
                    } else {
                        w.write_all(c.encode_utf8(&mut [0; 4]).as_bytes())?;
                    }
                }
                Ok(())
            }
        }
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_characters_are_escaped_visibly() {
        assert_eq!(printable("gpu"), Cow::Borrowed("gpu"));
        assert_eq!(
            printable("a\u{1b}[31mred\u{9b}x\u{202E}\r"),
            "a\\u{1b}[31mred\\u{9b}x\\u{202e}\\u{d}"
        );
        let text = "name: \u{1b}]0;x\u{7}\u{85}\u{2066}\r\n";
        let same = printable_same_width(text);
        assert_eq!(same.len(), text.len());
        assert_eq!(same, "name: ?]0;x?\u{BF}\u{FFFD}\r\n");
        let value = serde_json::json!({"name": "a\u{1b}b\u{9b}c\u{202e}"});
        let mut out = Vec::new();
        write_json(&mut out, &value).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "{\n  \"name\": \"a\\u001bb\\u009bc\\u202e\"\n}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }
}
