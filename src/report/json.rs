//! `--format json`: the stable machine contract (version 1, documented in docs/reports.md).
//!
//! The report is a borrowed, typed view of the run, serialized straight to the output: no
//! `serde_json::Value` tree and no string of the whole report (at 10,000 manifests those held
//! about 100 MiB at the peak). Field order is the contract's order.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use super::location;
use crate::k8s::workload::ObjectRef;
use crate::lint::Run;
use crate::metrics::usage::Coverage;
use crate::rules::headroom::Recommended;
use crate::rules::savings::{self, Frees, Savings};
use crate::rules::{FixStatus, Origin, Severity};
use crate::source::file::InputError;

#[derive(Serialize)]
struct Report<'a> {
    version: u32,
    #[serde(serialize_with = "findings")]
    findings: &'a Run,
    errors: &'a [InputError],
    /// What the GPU verdicts free, added up (absent when nothing).
    #[serde(skip_serializing_if = "Savings::is_empty")]
    savings: Savings,
    /// How much of the repository the measurements cover (absent without measurements).
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<JsonMetrics<'a>>,
}

#[derive(Serialize)]
struct JsonMetrics<'a> {
    #[serde(flatten)]
    coverage: &'a Coverage,
    /// How many measured entries match no container of the repository, and the first few.
    unmatched: usize,
    unmatched_first: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<String>,
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    rule: &'a str,
    name: &'a str,
    severity: Severity,
    message: &'a str,
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    object: ObjectRef,
    container: &'a Option<String>,
    /// The cluster that applies the object, when the run has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'a str>,
    /// `--fix` writes a fix for it.
    fixable: bool,
    /// Only `--fix --unsafe-fixes` writes its fix.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unsafe_fix: bool,
    /// Why `--fix` refuses the fix it carries (the `not fixed:` reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    not_fixed: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    render: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recommended: Option<&'a Recommended>,
    /// What following the finding frees (GPU verdicts).
    #[serde(skip_serializing_if = "Option::is_none")]
    frees: Option<JsonFrees<'a>>,
    /// The model-fit arithmetic (FIT002-FIT004).
    #[serde(skip_serializing_if = "Option::is_none")]
    fit: Option<&'a crate::rules::Fit>,
}

#[derive(Serialize)]
struct JsonFrees<'a> {
    #[serde(flatten)]
    frees: &'a Frees,
    gpus: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu_hours_per_week: Option<f64>,
}

/// The unsuppressed findings, as a sequence serialized one at a time.
fn findings<S: serde::Serializer>(run: &&Run, serializer: S) -> Result<S::Ok, S::Error> {
    let run: &Run = run;
    serializer.collect_seq(
        run.findings
            .iter()
            .filter(|f| f.suppression.is_none())
            .map(|f| {
                let at = location(run, f);
                JsonFinding {
                    rule: f.rule.id,
                    name: f.rule.name,
                    severity: f.severity,
                    message: &f.message,
                    cluster: super::cluster_of(run, f),
                    file: at.file,
                    line: at.line,
                    column: at.column,
                    end_line: at.end_line,
                    end_column: at.end_column,
                    // The namespace the object lands in, never null when one applies.
                    object: ObjectRef {
                        namespace: f.namespace.clone(),
                        ..f.object.clone()
                    },
                    container: &f.container,
                    fixable: f.fixable(),
                    unsafe_fix: f.unsafe_fixable(),
                    not_fixed: match &f.fix_status {
                        Some(FixStatus::Refused(why)) => Some(why.as_str()),
                        _ => None,
                    },
                    render: match f.origin {
                        Origin::Kustomize(u) => run.units.get(u).map(|u| u.name.as_str()),
                        Origin::File | Origin::Helm(_) => None,
                    },
                    recommended: f.recommended.as_ref(),
                    frees: f.frees.as_ref().map(|frees| JsonFrees {
                        frees,
                        gpus: frees.gpus(),
                        gpu_hours_per_week: frees.gpu_hours_per_week(),
                    }),
                    fit: f.fit.as_ref(),
                }
            }),
    )
}

fn report(run: &Run) -> Report<'_> {
    Report {
        version: 1,
        findings: run,
        errors: &run.errors,
        savings: savings::total(&run.findings, run.placement.several()),
        metrics: run.coverage.as_ref().map(|coverage| JsonMetrics {
            coverage,
            unmatched: coverage.unmatched,
            unmatched_first: coverage.unmatched_named(),
            warning: coverage.warning(),
        }),
    }
}

/// The report as a JSON value (for callers that inspect it; the CLI streams it with [`write`]).
pub fn render(run: &Run) -> Value {
    serde_json::to_value(report(run)).expect("the JSON report serializes")
}

/// Writes the report, pretty-printed with two-space indents and a final newline, to `out`.
pub fn write(run: &Run, out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    super::write_json(&mut out, &report(run))?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Prints the report on stdout; a closed pipe (`gpulint | head`) is not an error worth a panic.
pub fn print(run: &Run) {
    let _ = write(run, io::stdout().lock());
}
