//! `--format gitlab`: a GitLab Code Quality report (`artifacts:reports:codequality`).
//!
//! The fields GitLab documents (docs.gitlab.com/ci/testing/code_quality/, "Code Quality report
//! format"): `description`, `check_name`, `fingerprint`, `severity`, `location.path`,
//! `location.lines.begin`. GitLab compares a merge request's report with the target branch's by
//! fingerprint, so the fingerprint leaves the line out (a finding keeps its identity when lines
//! move above it) and numbers repeats of the same rule on the same container apart (two findings
//! with one fingerprint would show as one).

use std::collections::HashMap;

use serde::Serialize;

use super::location;
use super::sarif::fingerprint;
use crate::lint::Run;
use crate::rules::Severity;

#[derive(Serialize)]
struct Issue {
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
}

/// GitLab's scale is info, minor, major, critical, blocker; as ESLint's GitLab formatter does,
/// an error is major and a warning minor.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

fn issues(run: &Run) -> Vec<Issue> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut unique = |base: String| {
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            fingerprint(&[&base, &n.to_string()])
        }
    };
    let mut out = Vec::new();
    for f in run.findings.iter().filter(|f| f.suppression.is_none()) {
        let at = location(run, f);
        let object = f.object.display_name();
        let base = super::sarif::finding_fingerprint(run, f, at.file, &object);
        out.push(Issue {
            description: format!("{}: {}", f.rule.id, super::message(run, f)),
            check_name: format!("gpulint/{}", f.rule.id),
            fingerprint: unique(base),
            severity: severity(f.severity),
            location: Location {
                path: at.file.to_string(),
                lines: Lines {
                    begin: at.line.max(1),
                },
            },
        });
    }
    for e in &run.errors {
        let base = fingerprint(&["input-error", &e.file, &e.message]);
        out.push(Issue {
            description: format!("input error: {}", e.message),
            check_name: "gpulint/input-error".into(),
            fingerprint: unique(base),
            severity: "major",
            location: Location {
                path: if e.file.is_empty() {
                    ".".into()
                } else {
                    e.file.clone()
                },
                lines: Lines {
                    begin: e.line.max(1),
                },
            },
        });
    }
    out
}

pub fn render(run: &Run) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = super::write_json(&mut out, &issues(run));
    out.push(b'\n');
    String::from_utf8_lossy(&out).into_owned()
}
