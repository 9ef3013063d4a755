//! `--format markdown`: the sizing report in GitHub-flavoured Markdown, for a step summary or
//! the body of a right-sizing pull request (the Action uses it for both).
//!
//! GPUs by namespace as a table; for the containers with measured findings a Mermaid
//! `xychart-beta` block (memory: bars at the measured P99, a line at the limit; GitHub renders
//! Mermaid in Markdown, and `xychart-beta` since Mermaid 10.5) and the same figures as a table,
//! so a viewer without the chart loses nothing; then every finding with its suggested value.
//! Text from the repository is escaped by [`cell`]; chart labels keep only safe characters.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::html::{namespace_gpus, Page};
use super::location;
use crate::lint::Run;
use crate::metrics::usage::ContainerKey;
use crate::rules::Finding;

/// At most this many containers in the chart and its table: a summary is read, not searched.
const CHART_CONTAINERS: usize = 20;

/// A table cell: characters that would start Markdown escaped (CommonMark allows a backslash
/// before any ASCII punctuation), `<`, `>` and `&` as entities, autolinks broken, `|` kept
/// inside the cell, line breaks as `<br>`. Code spans (`` `x` ``) from the messages are kept,
/// only their `|` escaped (nothing inside a code span is markup, nor linked).
///
/// Why entities and not a backslash for `<`: GitHub's extended autolink takes `http://a\` with
/// the backslash meant to escape the `<` after it, and the `<img …>` that follows is then raw
/// HTML (a beacon per view of the summary). An entity is text whatever precedes it. Autolinks
/// are broken by writing the `:` of `://` as `&#58;` and the `.` of `www.` as `&#46;`: GitHub
/// renders the same characters, but its autolink extension looks for `://` and `www.` in the
/// source, where they no longer are, so no text of the repository becomes a link.
pub(crate) fn cell(s: &str) -> String {
    let s = super::printable(s);
    // Backticks pair up as code spans, in order, only when every run of them is one backtick
    // long and there is an even number: CommonMark closes a span only with a run of the same
    // length, so "```<img>`" has no code span at all (its `<img>` would be raw HTML).
    let paired = s.matches('`').count() % 2 == 0 && !s.contains("``");
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        // Odd parts are inside a code span when the backticks pair up.
        let in_code = i % 2 == 1 && paired && !part.contains('\n');
        let mut text = String::with_capacity(part.len());
        for c in part.chars() {
            match c {
                '|' => text.push_str("\\|"),
                '\n' => text.push_str("<br>"),
                '\r' => {}
                '<' if !in_code => text.push_str("&lt;"),
                '>' if !in_code => text.push_str("&gt;"),
                '&' if !in_code => text.push_str("&amp;"),
                c if !in_code && "\\*_[]~#!".contains(c) => {
                    text.push('\\');
                    text.push(c);
                }
                c => text.push(c),
            }
        }
        if in_code {
            out.push_str(&text);
        } else {
            out.push_str(&break_autolinks(&text));
        }
    }
    if !paired {
        // An unpaired backtick would open a code span that swallows the rest of the row.
        out = out.replace('`', "\\`");
    }
    let trimmed = out.trim();
    if trimmed.is_empty() {
        "-".into()
    } else {
        trimmed.to_string()
    }
}

/// `://` as `&#58;//` and `www.` as `www&#46;` (any case): GitHub shows the same text and links
/// none of it (see [`cell`]).
pub(crate) fn break_autolinks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("://") {
            out.push_str("&#58;//");
            rest = &rest[3..];
        } else if rest
            .get(..4)
            .is_some_and(|w| w.eq_ignore_ascii_case("www."))
        {
            out.push_str(&rest[..3]);
            out.push_str("&#46;");
            rest = &rest[4..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// A Mermaid label: letters, digits and `/._-` only (no quote can end it early).
fn label(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "/._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn gib(bytes: f64) -> String {
    format!("{:.1}", bytes / (1u64 << 30) as f64)
}

fn suggested(f: &Finding) -> String {
    f.recommended
        .as_ref()
        .map(|r| {
            [("memory", &r.memory), ("cpu", &r.cpu)]
                .into_iter()
                .filter_map(|(k, v)| Some(format!("{k}: {}", v.as_ref()?)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "-".into())
}

pub fn render(run: &Run, page: &Page) -> String {
    let linter = page.linter;
    let inventory = super::inventory::of_run(linter, run);
    let mut md = String::new();
    let _ = writeln!(md, "## gpulint sizing report: {}\n", cell(&page.repo));
    let metrics = match (&linter.usage, &run.coverage) {
        (Some(u), Some(c)) => format!(
            "{}, window {}: {}",
            u.source,
            u.window.as_deref().unwrap_or("unknown"),
            c.describe()
        ),
        _ => "none".into(),
    };
    let _ = writeln!(
        md,
        "Generated {} · metrics: {}\n",
        cell(&page.generated_at),
        cell(&metrics)
    );
    if let Some(w) = run.coverage.as_ref().and_then(|c| c.warning()) {
        let _ = writeln!(md, "> **Warning:** {}\n", cell(&w));
    }

    md.push_str("### GPUs by namespace\n\n");
    let namespaces = namespace_gpus(run, &inventory);
    if namespaces.is_empty() {
        md.push_str("No workload requests a GPU.\n\n");
    } else {
        md.push_str("| namespace | GPUs requested | on underused workloads (GPU010) | pod sets not counted |\n|---|--:|--:|--:|\n");
        let (mut total, mut under, mut unknown) = (0i64, 0i64, 0u64);
        for n in &namespaces {
            total = total.saturating_add(n.requested);
            under = under.saturating_add(n.underused);
            unknown = unknown.saturating_add(n.unknown_pod_sets);
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                cell(&n.namespace),
                n.requested,
                n.underused,
                n.unknown_pod_sets
            );
        }
        let _ = writeln!(
            md,
            "| **total** | **{total}** | **{under}** | **{unknown}** |\n"
        );
    }

    // Containers with measured findings, and what was measured for them.
    let findings: Vec<&Finding> = run
        .findings
        .iter()
        .filter(|f| f.suppression.is_none())
        .collect();
    let measured_rules = crate::rules::headroom::MEASURED_RULES;
    if let Some(usage) = &linter.usage {
        let mut keys: std::collections::BTreeMap<ContainerKey, Vec<&Finding>> = Default::default();
        for f in findings
            .iter()
            .filter(|f| measured_rules.contains(&f.rule.id))
        {
            if let Some(key) = super::container_key(run, f) {
                keys.entry(key).or_default().push(f);
            }
        }
        let rows: Vec<_> = keys
            .iter()
            .filter_map(|(k, fs)| Some((k, fs, usage.get(k)?.memory_bytes?)))
            .collect();
        if !rows.is_empty() {
            let shown = &rows[..rows.len().min(CHART_CONTAINERS)];
            let limits: Vec<Option<f64>> = shown
                .iter()
                .map(|(k, _, _)| container_limit(&inventory, k))
                .collect();
            md.push_str("### Memory of the containers with measured findings\n\n");
            // One axis per order of magnitude: a 2.9Gi bar beside a 1124Gi one is a flat line.
            let scale = |i: usize| {
                let (_, _, m) = &shown[i];
                m.p99.or(m.max).unwrap_or(0.0).max(limits[i].unwrap_or(0.0))
            };
            // Containers without a memory limit get charts of their own, with no limit line:
            // a Mermaid line has no gaps, and a 0 would draw a limit that is not there.
            let limited = |i: usize| limits[i].is_some();
            let mut order: Vec<usize> = (0..shown.len()).collect();
            order.sort_by(|&a, &b| {
                limited(b)
                    .cmp(&limited(a))
                    .then(scale(a).total_cmp(&scale(b)))
            });
            let mut charts: Vec<Vec<usize>> = Vec::new();
            for i in order {
                match charts.last_mut() {
                    Some(chart)
                        if chart.first().is_some_and(|&low| {
                            limited(low) == limited(i) && scale(i) <= 10.0 * scale(low).max(1.0)
                        }) =>
                    {
                        chart.push(i)
                    }
                    _ => charts.push(vec![i]),
                }
            }
            for chart in &charts {
                let top = chart.last().map_or(0.0, |&i| scale(i));
                let with_limits = chart.first().is_some_and(|&i| limited(i));
                let _ = write!(
                    md,
                    "```mermaid\nxychart-beta\n    title \"Memory (GiB), up to {}: {}\"\n    x-axis [",
                    gib(top),
                    if with_limits {
                        "bars = measured P99, line = limit"
                    } else {
                        "bars = measured P99, no memory limit set"
                    }
                );
                let names: Vec<String> = chart
                    .iter()
                    .map(|&i| {
                        let (k, _, _) = &shown[i];
                        format!("\"{}\"", label(&format!("{}/{}", k.name, k.container)))
                    })
                    .collect();
                md.push_str(&names.join(", "));
                md.push_str("]\n    y-axis \"GiB\"\n    bar [");
                let p99: Vec<String> = chart
                    .iter()
                    .map(|&i| gib(shown[i].2.p99.or(shown[i].2.max).unwrap_or(0.0)))
                    .collect();
                md.push_str(&p99.join(", "));
                md.push(']');
                let lim: Vec<String> = chart.iter().filter_map(|&i| limits[i].map(gib)).collect();
                if with_limits {
                    let _ = write!(md, "\n    line [{}]", lim.join(", "));
                }
                md.push_str("\n```\n\n");
            }
            md.push_str("| container | memory request | limit | P50 | P99 | max | suggested | findings |\n|---|--:|--:|--:|--:|--:|---|---|\n");
            for ((k, fs, m), limit) in shown.iter().zip(&limits) {
                let request = container_quantity(&inventory, k, "requests");
                let fmt =
                    |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{}Gi", gib(v)));
                let ids: BTreeSet<&str> = fs.iter().map(|f| f.rule.id).collect();
                let suggestion = fs
                    .iter()
                    .find_map(|f| f.recommended.as_ref()?.memory.clone())
                    .unwrap_or_else(|| "-".into());
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    cell(&format!(
                        "{}/{}/{} · {}",
                        k.namespace, k.kind, k.name, k.container
                    )),
                    fmt(request),
                    fmt(*limit),
                    fmt(m.p50),
                    fmt(m.p99),
                    fmt(m.max),
                    cell(&suggestion),
                    ids.into_iter().collect::<Vec<_>>().join(", ")
                );
            }
            if rows.len() > shown.len() {
                let _ = writeln!(
                    md,
                    "\n{} more container(s) with measured findings: see the findings below.",
                    rows.len() - shown.len()
                );
            }
            md.push('\n');
        }
    }

    // The model-fit arithmetic, one row a FIT finding: what the message judged by.
    let fits = super::fit_rows(&findings);
    if !fits.is_empty() {
        let _ = writeln!(md, "### Will the model fit? ({})\n", fits.len());
        let _ = writeln!(md, "| {} |", super::FIT_COLUMNS.join(" | "));
        md.push_str("|---|---|---|---|--:|--:|--:|---|\n");
        for row in fits {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        md.push('\n');
    }

    let _ = writeln!(md, "### Findings ({})\n", findings.len());
    if findings.is_empty() {
        md.push_str("No findings.\n");
    } else {
        md.push_str("| file:line | rule | message | suggested value |\n|---|---|---|---|\n");
        for f in &findings {
            let at = location(run, f);
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                cell(&format!("{}:{}", at.file, at.line)),
                cell(&format!("{} ({})", f.rule.id, f.severity.as_str())),
                cell(&super::message(run, f)),
                cell(&suggested(f))
            );
        }
    }
    md
}

/// The workload container `key` in the inventory.
fn inventory_container<'a>(
    inventory: &'a serde_json::Value,
    key: &ContainerKey,
) -> Option<&'a serde_json::Value> {
    inventory["workloads"]
        .as_array()?
        .iter()
        .filter(|w| {
            w["namespace"].as_str() == Some(key.namespace.as_str())
                && w["cluster"]
                    .as_str()
                    .is_none_or(|c| key.cluster.as_deref() == Some(c))
                && w["kind"].as_str() == Some(key.kind.as_str())
                && w["name"].as_str() == Some(key.name.as_str())
        })
        .flat_map(|w| w["containers"].as_array().into_iter().flatten())
        .find(|c| c["name"].as_str() == Some(key.container.as_str()))
}

fn container_quantity(
    inventory: &serde_json::Value,
    key: &ContainerKey,
    side: &str,
) -> Option<f64> {
    let text = inventory_container(inventory, key)?[side]["memory"].as_str()?;
    let q: crate::quantity::Quantity = text.parse().ok()?;
    q.ceil_bytes().map(|b| b as f64)
}

fn container_limit(inventory: &serde_json::Value, key: &ContainerKey) -> Option<f64> {
    container_quantity(inventory, key, "limits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_markup_and_keep_code_spans() {
        assert_eq!(cell("a | b"), "a \\| b");
        assert_eq!(cell("`x|y` <b>*"), "`x\\|y` &lt;b&gt;\\*");
        assert_eq!(cell("one `tick"), "one \\`tick");
        // Issue 24: entities, not backslashes, for `<`, `>`, `&` (an autolink takes the
        // backslash), no autolink, and no code span CommonMark would not see.
        assert_eq!(
            cell("a http://h/x<img src=http://h/b.png?> & www.h.io"),
            "a http&#58;//h/x&lt;img src=http&#58;//h/b.png?&gt; &amp; www&#46;h.io"
        );
        assert_eq!(cell("```<img>`"), "\\`\\`\\`&lt;img&gt;\\`");
        assert_eq!(cell("`a<b>` c"), "`a<b>` c");
        assert_eq!(cell("line\nnext"), "line<br>next");
        assert_eq!(cell(""), "-");
        assert_eq!(label("ns/\"evil\" ]x"), "ns/_evil___x");
    }
}
