//! `--format junit`: JUnit XML as Jenkins, GitLab and Azure DevOps read it.
//!
//! One `<testsuite>` per rule with findings, one `<testcase>` per finding; a finding at or above
//! `--fail-on` carries a `<failure>` (so the CI's test view fails exactly when gpulint exits 1),
//! one below it passes with its message in `<system-out>`. Input errors are `<error>` cases of a
//! `gpulint input errors` suite. A clean run still has one passing case: Jenkins' `junit` step
//! fails on a report without any test.
//!
//! Checked against the Jenkins xUnit plugin's JUnit schema (testdata/schemas/junit-10.xsd).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::location;
use crate::lint::Run;
use crate::rules::{Finding, Severity};

/// Text as XML 1.0 character data or attribute value: hostile characters made visible first
/// (XML 1.0 cannot carry most C0 controls even escaped), then the five markup characters, and
/// line breaks as references so an attribute keeps them.
pub(crate) fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in super::printable(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            // Not XML characters at all (not even as references).
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn suggested(f: &Finding) -> Option<String> {
    let r = f.recommended.as_ref()?;
    let parts: Vec<String> = [("memory", &r.memory), ("cpu", &r.cpu)]
        .into_iter()
        .filter_map(|(k, v)| Some(format!("{k}: {}", v.as_ref()?)))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

pub fn render(run: &Run, fail_on: Severity) -> String {
    let mut by_rule: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in run.findings.iter().filter(|f| f.suppression.is_none()) {
        by_rule.entry(f.rule.id).or_default().push(f);
    }
    let failing = |f: &Finding| f.severity >= fail_on;
    let findings: usize = by_rule.values().map(Vec::len).sum();
    let failures = by_rule.values().flatten().filter(|f| failing(f)).count();
    let errors = run.errors.len();
    let clean = findings == 0 && errors == 0;
    let tests = findings + errors + usize::from(clean);

    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"gpulint\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">"
    );
    for (id, list) in &by_rule {
        let rule = list[0].rule;
        let _ = writeln!(
            out,
            "  <testsuite name=\"{} {}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">",
            xml(id),
            xml(rule.name),
            list.len(),
            list.iter().filter(|f| failing(f)).count()
        );
        for f in list {
            let at = location(run, f);
            let object = f.object.display_name();
            let name = match &f.container {
                Some(c) => format!("{object} container {c} ({}:{})", at.file, at.line),
                None => format!("{object} ({}:{})", at.file, at.line),
            };
            let _ = writeln!(
                out,
                "    <testcase name=\"{}\" classname=\"gpulint.{}\" file=\"{}\" line=\"{}\">",
                xml(&name),
                xml(id),
                xml(at.file),
                at.line
            );
            let mut body = format!(
                "{}:{}:{}: {} {} {}",
                at.file,
                at.line,
                at.column,
                f.severity.as_str(),
                f.rule.id,
                super::message(run, f)
            );
            if let Some(s) = suggested(f) {
                let _ = write!(body, "\nsuggested: {s}");
            }
            if failing(f) {
                let _ = writeln!(
                    out,
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                    f.severity.as_str(),
                    xml(&super::message(run, f)),
                    xml(&body)
                );
            } else {
                let _ = writeln!(out, "      <system-out>{}</system-out>", xml(&body));
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    if errors > 0 {
        let _ = writeln!(
            out,
            "  <testsuite name=\"gpulint input errors\" tests=\"{errors}\" failures=\"0\" errors=\"{errors}\" skipped=\"0\">"
        );
        for e in &run.errors {
            let place = if e.file.is_empty() {
                "input".to_string()
            } else {
                format!("{}:{}:{}", e.file, e.line, e.column)
            };
            let _ = writeln!(
                out,
                "    <testcase name=\"{}\" classname=\"gpulint.input\" file=\"{}\" line=\"{}\">\n      <error type=\"input error\" message=\"{}\">{}: {}</error>\n    </testcase>",
                xml(&place),
                xml(&e.file),
                e.line,
                xml(&e.message),
                xml(&place),
                xml(&e.message)
            );
        }
        out.push_str("  </testsuite>\n");
    }
    if clean {
        out.push_str("  <testsuite name=\"gpulint\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\">\n    <testcase name=\"no findings\" classname=\"gpulint\"/>\n  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_controls_are_escaped() {
        assert_eq!(
            xml("a<b>&\"c'\n\u{1b}[2J\u{FFFE}"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;\\u{1b}[2J\u{FFFD}"
        );
    }
}
