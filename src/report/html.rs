//! `--format html`: one self-contained page for people who do not read a terminal.
//!
//! Everything is in the file: the style, the SVG charts (drawn here, no chart library), and a few
//! lines of script that sort and filter the findings table. A Content-Security-Policy of
//! `default-src 'none'` keeps the page from loading anything at all, even if a browser were
//! tricked into it; without script the table is a plain, complete table. Every text from the
//! repository is escaped through [`esc`].
//!
//! Sections: a header (repository, time, metrics source and window), GPUs by namespace (a bar
//! chart and a table), one small chart per measured container (request and limit against the
//! measured P50/P99/max), and every finding.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use super::location;
use crate::lint::{Linter, Run};
use crate::metrics::usage::{ContainerKey, Usage};
use crate::quantity::Quantity;
use crate::rules::{Finding, Severity};

/// What the page says about its run besides the findings.
pub struct Page<'a> {
    /// The repository or paths linted, as shown in the header.
    pub repo: String,
    /// RFC 3339 time of the run.
    pub generated_at: String,
    pub fail_on: Severity,
    pub linter: &'a Linter,
}

/// The render a finding's object came from (a Kustomize root's folder, a Helm release), `None`
/// for a file as written.
fn render_of<'r>(run: &'r Run, f: &Finding) -> Option<&'r str> {
    match f.origin {
        crate::rules::Origin::File => None,
        crate::rules::Origin::Kustomize(i) => run.units.get(i).map(|u| u.name.as_str()),
        crate::rules::Origin::Helm(i) => run.releases.get(i).map(|u| u.name.as_str()),
    }
}

/// Text for HTML element content and quoted attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in super::printable(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px 40px;color:#1b1f24}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa}th[aria-sort]{background:#dde4ec}td.n{text-align:right}
.meta{color:#57606a;margin:0}.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;width:500px;box-sizing:border-box}.card h3{font-size:14px;margin:2px 0}
.legend{color:#57606a;font-size:12px;margin:0}.error{color:#b42318}.warning{color:#9a6700}.info{color:#0969da}
#filters{margin:6px 0}code{font-size:12px}
#findings{table-layout:fixed}#findings td{overflow-wrap:anywhere}";

/// Sorts and filters the findings table (by rule, severity and render: `r:<name>` a Kustomize
/// root or Helm release, `files` the files as written); the state lives in the URL fragment
/// (`#rule=GPU002&severity=error&render=r%3Aoverlays%2Fprod&sort=2`) so a view can be linked. Without script none of it
/// runs: the filters stay hidden and the table shows every finding.
const SCRIPT: &str = "(function(){
var t=document.getElementById('findings');if(!t){document.documentElement.setAttribute('data-ready','1');return;}
var body=t.tBodies[0],rows=[].slice.call(body.rows),heads=t.tHead.rows[0].cells;
var rule=document.getElementById('f-rule'),sev=document.getElementById('f-severity'),ren=document.getElementById('f-render'),count=document.getElementById('f-count');
var state={rule:'',severity:'',render:'',sort:''};
location.hash.slice(1).split('&').forEach(function(p){var kv=p.split('=');if(kv[0] in state)state[kv[0]]=decodeURIComponent(kv[1]||'');});
function key(r,i){var c=r.cells[i];return c.getAttribute('data-key')||c.textContent;}
function inRender(r){if(!state.render)return true;if(state.render==='files')return !r.hasAttribute('data-render');return r.getAttribute('data-render')===state.render.slice(2);}
function apply(){
rule.value=state.rule;sev.value=state.severity;if(ren)ren.value=state.render;var n=0;
rows.forEach(function(r){var ok=(!state.rule||r.getAttribute('data-rule')===state.rule)&&(!state.severity||r.getAttribute('data-severity')===state.severity)&&inRender(r);r.hidden=!ok;if(ok)n++;});
count.textContent=n+' of '+rows.length+' findings shown';
[].forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
var m=/^(-?)(\\d+)$/.exec(state.sort);
if(m&&heads[+m[2]]){var i=+m[2],dir=m[1]?-1:1;heads[i].setAttribute('aria-sort',dir>0?'ascending':'descending');
rows.slice().sort(function(a,b){return dir*key(a,i).localeCompare(key(b,i),undefined,{numeric:true});}).forEach(function(r){body.appendChild(r);});}
var h=['rule','severity','render','sort'].filter(function(k){return state[k];}).map(function(k){return k+'='+encodeURIComponent(state[k]);}).join('&');
if(h!==location.hash.slice(1))history.replaceState(null,'',h?'#'+h:location.pathname);}
rule.onchange=function(){state.rule=rule.value;apply();};sev.onchange=function(){state.severity=sev.value;apply();};
if(ren)ren.onchange=function(){state.render=ren.value;apply();};
[].forEach.call(heads,function(th,i){th.tabIndex=0;th.style.cursor='pointer';th.onclick=function(){state.sort=(state.sort===String(i)?'-':'')+i;apply();};});
document.getElementById('filters').hidden=false;apply();
document.documentElement.setAttribute('data-ready','1');
})();";

fn gib(bytes: f64) -> String {
    crate::quantity::gib(bytes)
}

fn cores(c: f64) -> String {
    if c < 1.0 {
        format!("{:.0}m", c * 1000.0)
    } else {
        format!("{c:.2}")
    }
}

/// One chart: what was asked (request, limit, a suggested value) against what was measured.
struct Gauge {
    title: &'static str,
    format: fn(f64) -> String,
    request: Option<f64>,
    limit: Option<f64>,
    /// The value a finding on this container recommends, as its message says it.
    suggested: Option<(f64, String)>,
    p50: Option<f64>,
    p99: Option<f64>,
    max: Option<f64>,
    /// For GPU memory: the device's capacity, drawn like a limit.
    capacity: Option<f64>,
}

impl Gauge {
    fn measured(&self) -> bool {
        self.p50.or(self.p99).or(self.max).is_some()
    }

    /// An SVG of 480x74: the measured P50/P99/max as nested bars, request, limit, capacity and
    /// the suggestion as vertical marks, on one scale from 0.
    fn svg(&self) -> String {
        let (w, left, right) = (480.0, 8.0, 472.0);
        let top = [
            self.request,
            self.limit,
            self.suggested.as_ref().map(|s| s.0),
            self.max,
            self.p99,
            self.p50,
            self.capacity,
        ]
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
        if top <= 0.0 {
            return String::new();
        }
        let scale = top * 1.08;
        let x = |v: f64| left + (right - left) * (v / scale).clamp(0.0, 1.0);
        let mut svg = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"74\" viewBox=\"0 0 {w} 74\" role=\"img\" aria-label=\"{}\">",
            esc(self.title)
        );
        svg.push_str(&format!(
            "<rect x=\"{left}\" y=\"20\" width=\"{}\" height=\"22\" fill=\"#f6f8fa\" stroke=\"#d0d7de\"/>",
            right - left
        ));
        for (value, color, label) in [
            (self.max, "#b6d4fe", "max"),
            (self.p99, "#6ea8fe", "P99"),
            (self.p50, "#0d6efd", "P50"),
        ] {
            if let Some(v) = value {
                let _ = write!(
                    svg,
                    "<rect x=\"{left}\" y=\"22\" width=\"{:.1}\" height=\"18\" fill=\"{color}\"><title>{label} {}</title></rect>",
                    x(v) - left,
                    esc(&(self.format)(v))
                );
            }
        }
        let mut marks: Vec<(f64, &str, String)> = Vec::new();
        let mut mark = |v: f64, color: &'static str, name: &str, text: String| {
            // Marks at one value share one line and one label (`request = limit 8.0Gi`).
            match marks
                .iter_mut()
                .find(|m| (m.0 - v).abs() <= f64::EPSILON * v.abs())
            {
                Some(m) => {
                    m.2 = format!(
                        "{} = {name} {text}",
                        m.2.rsplit_once(' ').map_or("", |p| p.0)
                    )
                }
                None => marks.push((v, color, format!("{name} {text}"))),
            }
        };
        if let Some(v) = self.request {
            mark(v, "#1b1f24", "request", (self.format)(v));
        }
        if let Some(v) = self.limit {
            mark(v, "#b42318", "limit", (self.format)(v));
        }
        if let Some(v) = self.capacity {
            mark(v, "#b42318", "capacity", (self.format)(v));
        }
        if let Some((v, text)) = &self.suggested {
            mark(*v, "#1a7f37", "suggested", text.clone());
        }
        marks.sort_by(|a, b| a.0.total_cmp(&b.0));
        // A label goes above the bar, else below, where it does not run into the previous one
        // on that side; with no room on either side the line keeps only its tooltip.
        let mut free_from = [f64::MIN, f64::MIN];
        for (v, color, label) in &marks {
            let px = x(*v);
            let width = label.chars().count() as f64 * 6.2;
            let end_anchored = px + width > w;
            let (from, to) = if end_anchored {
                (px - width, px)
            } else {
                (px, px + width)
            };
            let _ = write!(
                svg,
                "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"16\" y2=\"46\" stroke=\"{color}\" stroke-width=\"2\"><title>{}</title></line>",
                esc(label)
            );
            let Some(side) = (0..2).find(|&s| free_from[s] <= from) else {
                continue;
            };
            free_from[side] = to + 4.0;
            let _ = write!(
                svg,
                "<text x=\"{px:.1}\" y=\"{}\" font-size=\"11\" fill=\"{color}\" text-anchor=\"{}\">{}</text>",
                if side == 0 { 13 } else { 57 },
                if end_anchored { "end" } else { "start" },
                esc(label)
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{left}\" y=\"70\" font-size=\"10\" fill=\"#57606a\">0</text><text x=\"{right}\" y=\"70\" font-size=\"10\" fill=\"#57606a\" text-anchor=\"end\">{}</text></svg>",
            esc(&(self.format)(scale))
        );
        svg
    }

    fn legend(&self) -> String {
        let mut parts = Vec::new();
        let mut add = |name: &str, v: Option<f64>| {
            if let Some(v) = v {
                parts.push(format!("{name} {}", (self.format)(v)));
            }
        };
        add("request", self.request);
        add("limit", self.limit);
        add("capacity", self.capacity);
        add("P50", self.p50);
        add("P99", self.p99);
        add("max", self.max);
        if let Some((_, s)) = &self.suggested {
            parts.push(format!("suggested {s}"));
        }
        format!("{}: {}", self.title, parts.join(" · "))
    }
}

/// A quantity of a container's inventory entry (`requests`/`limits`), in bytes or cores.
fn quantity(c: &Value, side: &str, resource: &str, bytes: bool) -> Option<f64> {
    let q: Quantity = c[side][resource].as_str()?.parse().ok()?;
    if bytes {
        q.ceil_bytes().map(|b| b as f64)
    } else {
        q.millis_ceil().map(|m| m as f64 / 1000.0)
    }
}

/// A finding's recommended value as a number, and as the finding writes it.
fn recommended(findings: &[&Finding], memory: bool) -> Option<(f64, String)> {
    findings.iter().find_map(|f| {
        let r = f.recommended.as_ref()?;
        let text = if memory {
            r.memory.as_ref()
        } else {
            r.cpu.as_ref()
        }?;
        let q: Quantity = text.parse().ok()?;
        let value = if memory {
            q.ceil_bytes()? as f64
        } else {
            q.millis_ceil()? as f64 / 1000.0
        };
        Some((value, text.clone()))
    })
}

fn gauges(c: &Value, usage: &Usage, findings: &[&Finding]) -> Vec<Gauge> {
    let mut out = Vec::new();
    if let Some(m) = usage.memory_bytes {
        out.push(Gauge {
            title: "memory",
            format: gib,
            request: quantity(c, "requests", "memory", true),
            limit: quantity(c, "limits", "memory", true),
            suggested: recommended(findings, true),
            p50: m.p50,
            p99: m.p99,
            max: m.max,
            capacity: None,
        });
    }
    if let Some(m) = usage.cpu_cores {
        out.push(Gauge {
            title: "CPU",
            format: cores,
            request: quantity(c, "requests", "cpu", false),
            limit: quantity(c, "limits", "cpu", false),
            suggested: recommended(findings, false),
            p50: m.p50,
            p99: m.p99,
            max: m.max,
            capacity: None,
        });
    }
    if let Some(g) = usage.gpu_memory_bytes {
        out.push(Gauge {
            title: "GPU memory",
            format: gib,
            request: None,
            limit: None,
            suggested: None,
            p50: None,
            p99: g.p99,
            max: g.max,
            capacity: g.capacity,
        });
    }
    out.retain(Gauge::measured);
    out
}

/// Findings keyed by the container (namespace, kind, name, container) they are on.
fn findings_by_container(run: &Run) -> BTreeMap<ContainerKey, Vec<&Finding>> {
    let mut out: BTreeMap<ContainerKey, Vec<&Finding>> = BTreeMap::new();
    for f in run.findings.iter().filter(|f| f.suppression.is_none()) {
        if let Some(key) = super::container_key(run, f) {
            out.entry(key).or_default().push(f);
        }
    }
    out
}

/// GPUs per namespace: requested (the inventory's totals), pod sets of unknown size, and the
/// GPUs of workloads GPU010 finds underused (what right-sizing or sharing would free).
pub struct NamespaceGpus {
    pub namespace: String,
    pub requested: i64,
    pub underused: i64,
    pub unknown_pod_sets: u64,
}

/// A namespace as the reports label it: `prod/ml` in a run of several clusters, else `ml`.
pub fn namespace_in_cluster(cluster: Option<&str>, namespace: &str) -> String {
    match cluster {
        Some(c) => format!("{c}/{namespace}"),
        None => namespace.to_string(),
    }
}

pub fn namespace_gpus(run: &Run, inventory: &Value) -> Vec<NamespaceGpus> {
    // (cluster, namespace, kind, name): the cluster only when the run has several.
    type Id = (Option<String>, String, String, String);
    let underused_workloads: BTreeSet<Id> = run
        .findings
        .iter()
        .filter(|f| f.suppression.is_none() && f.rule.rule == crate::rules::Rule::GpuUnderused)
        .filter_map(|f| {
            Some((
                super::cluster_of(run, f).map(str::to_string),
                f.namespace.clone().unwrap_or_default(),
                f.object.kind.clone(),
                f.object.name.clone()?,
            ))
        })
        .collect();
    let mut underused: BTreeMap<String, i64> = BTreeMap::new();
    for w in inventory["workloads"].as_array().into_iter().flatten() {
        let ns = w["namespace"].as_str().unwrap_or_default().to_string();
        let cluster = w["cluster"].as_str().map(str::to_string);
        let label = namespace_in_cluster(cluster.as_deref(), &ns);
        let id = (
            cluster,
            ns,
            w["kind"].as_str().unwrap_or_default().to_string(),
            w["name"].as_str().unwrap_or_default().to_string(),
        );
        if underused_workloads.contains(&id) {
            let slot = underused.entry(label).or_default();
            *slot = slot.saturating_add(w["gpus"].as_i64().unwrap_or(0));
        }
    }
    inventory["namespaces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| {
            let namespace = namespace_in_cluster(
                n["cluster"].as_str(),
                n["namespace"].as_str().unwrap_or("(cluster)"),
            );
            NamespaceGpus {
                requested: n["gpus"].as_i64().unwrap_or(0),
                underused: underused.get(&namespace).copied().unwrap_or(0),
                unknown_pod_sets: n["unknown_pod_sets"].as_u64().unwrap_or(0),
                namespace,
            }
        })
        .filter(|n| n.requested != 0 || n.unknown_pod_sets != 0)
        .collect()
}

fn namespace_chart(rows: &[NamespaceGpus]) -> String {
    let top = rows.iter().map(|r| r.requested).max().unwrap_or(0).max(1) as f64;
    let (label_w, bar_w, row_h) = (170.0, 420.0, 26.0);
    let height = row_h * rows.len() as f64 + 24.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" viewBox=\"0 0 {} {height}\" role=\"img\" aria-label=\"GPUs by namespace\">",
        label_w + bar_w + 60.0,
        label_w + bar_w + 60.0
    );
    for (i, r) in rows.iter().enumerate() {
        let y = i as f64 * row_h + 4.0;
        let width = bar_w * r.requested as f64 / top;
        let freed = bar_w * r.underused as f64 / top;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text><rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"18\" fill=\"#0d6efd\"><title>{} GPUs requested</title></rect>",
            label_w - 6.0,
            y + 13.0,
            esc(&r.namespace),
            r.requested
        );
        if r.underused > 0 {
            let _ = write!(
                svg,
                "<rect x=\"{label_w}\" y=\"{:.1}\" width=\"{freed:.1}\" height=\"8\" fill=\"#fd7e14\"><title>{} GPUs on underused workloads (GPU010)</title></rect>",
                y + 10.0,
                r.underused
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
            label_w + width + 6.0,
            y + 13.0,
            r.requested
        );
    }
    let _ = write!(
        svg,
        "<rect x=\"{label_w}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"#0d6efd\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"11\">requested</text><rect x=\"{}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"#fd7e14\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"11\">on underused workloads (GPU010)</text></svg>",
        height - 14.0,
        label_w + 14.0,
        height - 5.0,
        label_w + 90.0,
        height - 14.0,
        label_w + 104.0,
        height - 5.0
    );
    svg
}

fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

pub fn render(run: &Run, page: &Page) -> String {
    let linter = page.linter;
    let inventory = super::inventory::of_run(linter, run);
    let findings: Vec<&Finding> = run
        .findings
        .iter()
        .filter(|f| f.suppression.is_none())
        .collect();
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // No request of any kind: not a font, not an image, not a fetch.
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(h, "<title>gpulint report: {}</title>", esc(&page.repo));
    let _ = writeln!(h, "<style>{STYLE}</style>\n</head>\n<body>");

    // Header.
    let _ = writeln!(h, "<h1>gpulint report: {}</h1>", esc(&page.repo));
    let metrics = match (&linter.usage, &run.coverage) {
        (Some(u), Some(c)) => format!(
            "{}, window {}: {}",
            u.source,
            u.window.as_deref().unwrap_or("unknown"),
            c.describe()
        ),
        _ => "none (pass --metrics FILE or --prometheus URL for the measured rules)".into(),
    };
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let _ = writeln!(
        h,
        "<p class=\"meta\">Generated {} by gpulint {} · metrics: {}</p>",
        esc(&page.generated_at),
        env!("CARGO_PKG_VERSION"),
        esc(&metrics)
    );
    if let Some(w) = run.coverage.as_ref().and_then(|c| c.warning()) {
        let _ = writeln!(
            h,
            "<p class=\"meta\" id=\"coverage\">warning: {}</p>",
            esc(&w)
        );
    }
    let _ = writeln!(
        h,
        "<p class=\"meta\" id=\"totals\">{} finding(s): {} error(s), {} warning(s), {} info · {} input error(s) · {} file(s) · fail-on {}</p>",
        findings.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
        run.errors.len(),
        run.file_count(),
        page.fail_on.as_str()
    );

    // GPUs by namespace.
    let namespaces = namespace_gpus(run, &inventory);
    h.push_str("<h2>GPUs by namespace</h2>\n");
    if namespaces.is_empty() {
        h.push_str("<p>No workload requests a GPU.</p>\n");
    } else {
        h.push_str(&namespace_chart(&namespaces));
        h.push_str("\n<table id=\"namespaces\"><thead><tr><th>namespace</th><th>GPUs requested</th><th>GPUs on underused workloads (GPU010)</th><th>pod sets not counted</th></tr></thead><tbody>\n");
        let (mut total, mut under, mut unknown) = (0i64, 0i64, 0u64);
        for n in &namespaces {
            total = total.saturating_add(n.requested);
            under = under.saturating_add(n.underused);
            unknown = unknown.saturating_add(n.unknown_pod_sets);
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&n.namespace),
                n.requested,
                n.underused,
                n.unknown_pod_sets
            );
        }
        let _ = writeln!(
            h,
            "</tbody><tfoot><tr><th>total</th><th class=\"n\">{total}</th><th class=\"n\">{under}</th><th class=\"n\">{unknown}</th></tr></tfoot></table>"
        );
        h.push_str("<p class=\"legend\">Requested: whole GPUs of every pod set whose size is known (replicas × GPUs per pod). Pod sets whose size or GPU quantity is not known are counted apart.</p>\n");
    }

    // Measured containers.
    if let Some(usage) = &linter.usage {
        let by_container = findings_by_container(run);
        let mut cards = String::new();
        let mut shown = 0;
        let mut drawn: BTreeSet<ContainerKey> = BTreeSet::new();
        for w in inventory["workloads"].as_array().into_iter().flatten() {
            let (Some(ns), Some(kind), Some(name)) = (
                w["namespace"].as_str(),
                w["kind"].as_str(),
                w["name"].as_str(),
            ) else {
                continue;
            };
            // The containers the measured rules judge (as counted in the header): not init ones.
            let judged = w["containers"].as_array().into_iter().flatten();
            for c in judged.filter(|c| c["init"].as_bool() != Some(true)) {
                let Some(container) = c["name"].as_str() else {
                    continue;
                };
                let key = ContainerKey {
                    cluster: w["cluster"].as_str().map(str::to_string),
                    namespace: ns.into(),
                    kind: kind.into(),
                    name: name.into(),
                    container: container.into(),
                };
                // Measurements are per workload container: a container name that two pod sets
                // share (a PyTorchJob's master and worker) is one series, shown once.
                if !drawn.insert(key.clone()) {
                    continue;
                }
                let Some(u) = usage.get(&key) else {
                    continue;
                };
                let on_it = by_container.get(&key).map(Vec::as_slice).unwrap_or(&[]);
                // A card even without a chart (GPU utilisation alone): the count is the header's.
                let charts = gauges(c, &u, on_it);
                shown += 1;
                let _ = writeln!(
                    cards,
                    "<div class=\"card\"><h3>{ns}/{kind}/{name} · {container}</h3>",
                    ns = esc(ns),
                    kind = esc(kind),
                    name = esc(name),
                    container = esc(container)
                );
                for g in &charts {
                    cards.push_str(&g.svg());
                    let _ = writeln!(cards, "<p class=\"legend\">{}</p>", esc(&g.legend()));
                }
                if let Some(util) = u.gpu_utilization {
                    let pct = |v: Option<f64>| {
                        v.map_or_else(|| "-".to_string(), |v| format!("{:.0}%", v * 100.0))
                    };
                    let _ = writeln!(
                        cards,
                        "<p class=\"legend\">GPU engine activity: average {} · P99 {}</p>",
                        pct(util.avg),
                        pct(util.p99)
                    );
                }
                for fit in on_it.iter().filter_map(|f| f.fit.as_ref()).take(1) {
                    let _ = writeln!(
                        cards,
                        "<p class=\"legend\">fit: {}</p>",
                        esc(&fit.summary())
                    );
                }
                if !on_it.is_empty() {
                    let ids: BTreeSet<&str> = on_it.iter().map(|f| f.rule.id).collect();
                    let _ = writeln!(
                        cards,
                        "<p class=\"legend\">findings: {}</p>",
                        esc(&ids.into_iter().collect::<Vec<_>>().join(", "))
                    );
                }
                cards.push_str("</div>\n");
            }
        }
        let _ = writeln!(h, "<h2>Measured containers ({shown})</h2>");
        h.push_str("<p class=\"legend\">Bars: measured P50 (dark), P99, max (light) over the window. Marks: request (black), limit or device capacity (red), the value a finding suggests (green).</p>\n");
        let _ = writeln!(h, "<div class=\"cards\">\n{cards}</div>");
    }

    // The model-fit arithmetic, one row a FIT finding (measured or not).
    let fits = super::fit_rows(&findings);
    if !fits.is_empty() {
        let _ = writeln!(h, "<h2>Will the model fit? ({})</h2>", fits.len());
        h.push_str("<table id=\"fits\"><thead><tr>");
        for c in super::FIT_COLUMNS {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr></thead><tbody>\n");
        for row in fits {
            h.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                // The three figures right-aligned, as the other tables' numbers.
                let class = if (4..=6).contains(&i) {
                    " class=\"n\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{class}>{}</td>", esc(cell));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table>\n");
    }

    // Findings.
    let _ = writeln!(h, "<h2>Findings ({})</h2>", findings.len());
    if findings.is_empty() {
        h.push_str("<p>No findings.</p>\n");
    } else {
        let rules: BTreeSet<&str> = findings.iter().map(|f| f.rule.id).collect();
        h.push_str("<div id=\"filters\" hidden><label>rule <select id=\"f-rule\"><option value=\"\">all</option>");
        for r in &rules {
            let _ = write!(h, "<option>{}</option>", esc(r));
        }
        h.push_str("</select></label> <label>severity <select id=\"f-severity\"><option value=\"\">all</option><option>error</option><option>warning</option><option>info</option></select></label>");
        // The renders findings came from: a Kustomize root's overlays share a base, and one
        // overlay's findings are what its owner reads.
        let renders: BTreeSet<&str> = findings.iter().filter_map(|f| render_of(run, f)).collect();
        if !renders.is_empty() {
            h.push_str(" <label>render <select id=\"f-render\"><option value=\"\">all</option><option value=\"files\">files as written</option>");
            for r in &renders {
                let _ = write!(h, "<option value=\"r:{r}\">{r}</option>", r = esc(r));
            }
            h.push_str("</select></label>");
        }
        h.push_str(" <span id=\"f-count\"></span></div>\n");
        // Fixed widths, long paths and messages wrapped: the table stays in its column.
        h.push_str("<table id=\"findings\"><colgroup><col style=\"width:19%\"><col style=\"width:7%\"><col style=\"width:7%\"><col style=\"width:17%\"><col style=\"width:38%\"><col style=\"width:12%\"></colgroup><thead><tr><th>location</th><th>severity</th><th>rule</th><th>object</th><th>message</th><th>suggested</th></tr></thead>\n<tbody>\n");
        let mut rows: Vec<(&Finding, super::Location)> =
            findings.iter().map(|f| (*f, location(run, f))).collect();
        // Grouped by file, in line order.
        rows.sort_by(|a, b| (a.1.file, a.1.line).cmp(&(b.1.file, b.1.line)));
        for (f, at) in rows {
            let object = match &f.container {
                Some(c) => format!("{} · {c}", f.object.display_name()),
                None => f.object.display_name(),
            };
            let suggested = f
                .recommended
                .as_ref()
                .map(|r| {
                    [("memory", &r.memory), ("cpu", &r.cpu)]
                        .into_iter()
                        .filter_map(|(k, v)| Some(format!("{k}: {}", v.as_ref()?)))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "-".into());
            let severity = f.severity.as_str();
            let render = render_of(run, f)
                .map(|r| format!(" data-render=\"{}\"", esc(r)))
                .unwrap_or_default();
            let _ = writeln!(
                h,
                "<tr data-rule=\"{rule}\" data-severity=\"{severity}\"{render}><td data-key=\"{file}:{line:08}\">{file}:{line}:{column}</td><td class=\"{severity}\" data-key=\"{rank}\">{severity}</td><td>{rule}</td><td>{object}</td><td>{message}</td><td>{suggested}</td></tr>",
                rule = esc(f.rule.id),
                file = esc(at.file),
                line = at.line,
                column = at.column,
                rank = severity_rank(f.severity),
                object = esc(&object),
                message = esc(&super::message(run, f)),
                suggested = esc(&suggested),
            );
        }
        h.push_str("</tbody></table>\n");
    }
    if !run.errors.is_empty() {
        let _ = writeln!(h, "<h2>Input errors ({})</h2>", run.errors.len());
        h.push_str("<table id=\"input-errors\"><thead><tr><th>location</th><th>error</th></tr></thead><tbody>\n");
        for e in &run.errors {
            let _ = writeln!(
                h,
                "<tr><td>{}:{}:{}</td><td>{}</td></tr>",
                esc(&e.file),
                e.line,
                e.column,
                esc(&e.message)
            );
        }
        h.push_str("</tbody></table>\n");
    }
    let _ = writeln!(h, "<script>{SCRIPT}</script>\n</body>\n</html>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_text_cannot_open_markup() {
        assert_eq!(
            esc("<script>alert('x')</script>&\"\u{1b}"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;\\u{1b}"
        );
    }

    #[test]
    fn a_gauge_puts_its_marks_on_one_scale() {
        let g = Gauge {
            title: "memory",
            format: gib,
            request: Some(4.0 * (1u64 << 30) as f64),
            limit: Some(8.0 * (1u64 << 30) as f64),
            suggested: None,
            p50: Some(1.0 * (1u64 << 30) as f64),
            p99: Some(2.0 * (1u64 << 30) as f64),
            max: Some(3.0 * (1u64 << 30) as f64),
            capacity: None,
        };
        let svg = g.svg();
        // The limit is the top of the scale (8Gi x 1.08): at 464 / 1.08 + 8 = 437.6.
        assert!(svg.contains("x1=\"437.6\""), "{svg}");
        // The request, half of it: 8 + 464 * 4 / 8.64 = 222.8.
        assert!(svg.contains("x1=\"222.8\""), "{svg}");
        assert_eq!(
            g.legend(),
            "memory: request 4.0Gi · limit 8.0Gi · P50 1.0Gi · P99 2.0Gi · max 3.0Gi"
        );
    }
}
