//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it.
//!
//! The log is a borrowed, typed view of the run, serialized straight to the output like the JSON
//! report (`report::json`): no `serde_json::Value` tree and no string of the whole log (at 10,000
//! manifests those took the peak RSS from about 225 to 375 MiB). Field order is the order the log
//! has always had.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::location;
use crate::lint::Run;
use crate::rules::{Finding, RuleInfo, Severity, SuppressionKind, RULES};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A relative path as a URI reference; absolute paths become `file://` URIs.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for c in path.replace('\\', "/").chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '.' | '_' | '~' | '/' => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    if out.starts_with('/') {
        format!("file://{out}")
    } else {
        out
    }
}

/// FNV-1a: a stable fingerprint that does not depend on the line number, so a finding keeps its
/// identity when lines move above it.
/// A finding's identity across runs: rule, file, object, container, and the cluster when the
/// run has several (prod's and staging's findings on one base line are two).
pub(crate) fn finding_fingerprint(run: &Run, f: &Finding, file: &str, object: &str) -> String {
    let container = f.container.as_deref().unwrap_or_default();
    match super::cluster_of(run, f) {
        Some(cluster) => fingerprint(&[f.rule.id, file, object, container, cluster]),
        None => fingerprint(&[f.rule.id, file, object, container]),
    }
}

pub(crate) fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0u8]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [SarifRun<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifRun<'a> {
    tool: Tool,
    column_kind: &'static str,
    #[serde(serialize_with = "results")]
    results: &'a Run,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    information_uri: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    #[serde(serialize_with = "rules")]
    rules: &'static [RuleInfo],
}

#[derive(Serialize)]
struct Text<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    id: &'a str,
    name: &'a str,
    short_description: Text<'a>,
    full_description: Text<'a>,
    help: Help<'a>,
    help_uri: &'a str,
    default_configuration: Configuration,
    properties: Properties,
}

#[derive(Serialize)]
struct Help<'a> {
    text: &'a str,
    markdown: &'a str,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
    enabled: bool,
}

#[derive(Serialize)]
struct Properties {
    tags: [&'static str; 2],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text<'a>,
    locations: [Location<'a>; 1],
    partial_fingerprints: Fingerprints,
    #[serde(skip_serializing_if = "Option::is_none")]
    suppressions: Option<[Suppression<'a>; 1]>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    physical_location: PhysicalLocation,
    logical_locations: [LogicalLocation<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation<'a> {
    fully_qualified_name: &'a str,
    kind: &'static str,
}

#[derive(Serialize)]
struct Fingerprints {
    #[serde(rename = "gpulint/v1")]
    v1: String,
}

#[derive(Serialize)]
struct Suppression<'a> {
    kind: &'static str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    justification: Option<&'a str>,
}

/// The rules, as a sequence serialized one at a time (each with its two formatted strings).
fn rules<S: serde::Serializer>(rules: &&[RuleInfo], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(rules.len()))?;
    for r in rules.iter() {
        let full = format!("{}: {}.", r.name, r.summary);
        let help_uri = r.help_uri();
        seq.serialize_element(&Rule {
            id: r.id,
            name: r.name,
            short_description: Text { text: r.summary },
            full_description: Text { text: &full },
            help: Help {
                text: r.summary,
                markdown: r.doc,
            },
            help_uri: &help_uri,
            default_configuration: Configuration {
                level: level(r.severity),
                enabled: r.enabled_by_default,
            },
            properties: Properties {
                tags: ["kubernetes", "gpu"],
            },
        })?;
    }
    seq.end()
}

/// Every finding, suppressed ones included (with their suppression), serialized one at a time.
fn results<S: serde::Serializer>(run: &&Run, serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let run: &Run = run;
    let mut seq = serializer.serialize_seq(Some(run.findings.len()))?;
    for f in &run.findings {
        let at = location(run, f);
        let rule_index = RULES.iter().position(|r| r.id == f.rule.id).unwrap_or(0);
        let object = f.object.display_name();
        let v1 = finding_fingerprint(run, f, at.file, &object);
        let suppressions = f.suppression.as_ref().map(|s| {
            [Suppression {
                kind: match s.kind {
                    SuppressionKind::Comment | SuppressionKind::Annotation => "inSource",
                    SuppressionKind::Config => "external",
                },
                status: "accepted",
                justification: s.justification.as_deref(),
            }]
        });
        seq.serialize_element(&SarifResult {
            rule_id: f.rule.id,
            rule_index,
            level: level(f.severity),
            message: Text {
                text: &super::message(run, f),
            },
            locations: [Location {
                physical_location: PhysicalLocation {
                    artifact_location: ArtifactLocation { uri: uri(at.file) },
                    region: Region {
                        start_line: at.line,
                        start_column: at.column,
                        end_line: at.end_line,
                        end_column: at.end_column,
                    },
                },
                logical_locations: [LogicalLocation {
                    fully_qualified_name: &object,
                    kind: "object",
                }],
            }],
            partial_fingerprints: Fingerprints { v1 },
            suppressions,
        })?;
    }
    seq.end()
}

fn log(run: &Run) -> Log<'_> {
    Log {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: [SarifRun {
            tool: Tool {
                driver: Driver {
                    name: "gpulint",
                    information_uri: "https://github.com/gpulint/gpulint",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules: RULES,
                },
            },
            column_kind: "unicodeCodePoints",
            results: run,
        }],
    }
}

/// The log as a JSON value (for callers that inspect it; the CLI streams it with [`write`]).
pub fn render(run: &Run) -> Value {
    serde_json::to_value(log(run)).expect("the SARIF log serializes")
}

/// Writes the log, pretty-printed with two-space indents and a final newline, to `out`.
pub fn write(run: &Run, out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    super::write_json(&mut out, &log(run))?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Prints the log on stdout; a closed pipe (`gpulint | head`) is not an error worth a panic.
pub fn print(run: &Run) {
    let _ = write(run, io::stdout().lock());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_encoded() {
        assert_eq!(uri("a b/c.yaml"), "a%20b/c.yaml");
        assert_eq!(uri("/abs/x.yaml"), "file:///abs/x.yaml");
    }
}
