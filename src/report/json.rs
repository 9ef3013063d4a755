//! `--format json`: the stable machine contract (version 1, documented in the README).

use serde_json::{json, Value};

use super::location;
use crate::lint::Run;

pub fn render(run: &Run) -> Value {
    let findings: Vec<Value> = run
        .findings
        .iter()
        .filter(|f| f.suppression.is_none())
        .map(|f| {
            let at = location(run, f);
            let mut finding = json!({
                "rule": f.rule.id,
                "name": f.rule.name,
                "severity": f.severity,
                "message": f.message,
                "file": at.file,
                "line": at.line,
                "column": at.column,
                "end_line": at.end_line,
                "end_column": at.end_column,
                "object": {
                    "api_version": f.object.api_version,
                    "kind": f.object.kind,
                    "namespace": f.object.namespace,
                    "name": f.object.name,
                },
                "container": f.container,
                "fixable": f.fixable,
            });
            if let Some(unit) = f.unit.and_then(|u| run.units.get(u)) {
                finding["render"] = json!(unit.name);
            }
            if let Some(r) = &f.recommended {
                finding["recommended"] = json!(r);
            }
            finding
        })
        .collect();
    json!({ "version": 1, "findings": findings, "errors": run.errors })
}
