//! `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it.

use serde_json::{json, Value};

use super::location;
use crate::lint::Run;
use crate::rules::{Severity, SuppressionKind, RULES};

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
fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0u8]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

pub fn render(run: &Run) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.name,
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": format!("{}: {}.", r.name, r.summary) },
                "help": { "text": r.summary, "markdown": r.doc },
                "helpUri": r.help_uri(),
                "defaultConfiguration": {
                    "level": level(r.severity),
                    "enabled": r.enabled_by_default,
                },
                "properties": { "tags": ["kubernetes", "gpu"] },
            })
        })
        .collect();
    let results: Vec<Value> = run
        .findings
        .iter()
        .map(|f| {
            let at = location(run, f);
            let rule_index = RULES.iter().position(|r| r.id == f.rule.id).unwrap_or(0);
            let object = f.object.display_name();
            let mut result = json!({
                "ruleId": f.rule.id,
                "ruleIndex": rule_index,
                "level": level(f.severity),
                "message": { "text": f.message },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri(at.file) },
                        "region": {
                            "startLine": at.line,
                            "startColumn": at.column,
                            "endLine": at.end_line,
                            "endColumn": at.end_column,
                        }
                    },
                    "logicalLocations": [{ "fullyQualifiedName": object, "kind": "object" }],
                }],
                "partialFingerprints": {
                    "gpulint/v1": fingerprint(&[
                        f.rule.id,
                        at.file,
                        &object,
                        f.container.as_deref().unwrap_or_default(),
                    ]),
                },
            });
            if let Some(s) = &f.suppression {
                let kind = match s.kind {
                    SuppressionKind::Comment | SuppressionKind::Annotation => "inSource",
                    SuppressionKind::Config => "external",
                };
                let mut suppression = json!({ "kind": kind, "status": "accepted" });
                if let Some(j) = &s.justification {
                    suppression["justification"] = json!(j);
                }
                result["suppressions"] = json!([suppression]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "gpulint",
                    "informationUri": "https://github.com/gpulint/gpulint",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
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
