//! `gpulint inventory`: every workload and container with its GPU, CPU and memory figures.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::k8s::dra::DraFacts;
use crate::k8s::gpu::{GpuName, GpuNames};
use crate::k8s::podsets::{pod_demand_with_dra, pod_sets, Demand, PodCount, PodSet};
use crate::k8s::workload::{objects_in, Container, ResourceList, Workload};
use crate::lint::Linter;
use crate::quantity::Quantity;
use crate::source::file::{display_path, FileRole, SourceFile};
use crate::source::units::{HelmUnit, RenderUnit};
use crate::source::yaml::Node;

/// One container row.
pub struct Row {
    pub file: String,
    pub line: usize,
    pub workload: Value,
    pub containers: Vec<Value>,
}

fn list(l: &ResourceList) -> Value {
    let map: serde_json::Map<String, Value> = l
        .entries
        .iter()
        .map(|q| {
            (
                q.name.to_string(),
                json!(q.value.text().unwrap_or_default()),
            )
        })
        .collect();
    Value::Object(map)
}

/// The file and 1-based line a span is at: its origin file for a rendered node.
fn place(
    files: &[SourceFile],
    local: &SourceFile,
    span: crate::source::yaml::Span,
) -> (String, usize) {
    let file = span
        .source
        .index()
        .and_then(|i| files.get(i))
        .unwrap_or(local);
    (file.name.clone(), file.stream.line_col(span.start).0)
}

fn container_json(files: &[SourceFile], file: &SourceFile, c: &Container) -> Value {
    let resources_at = c.resources.key.map(|k| place(files, file, k.span));
    let resources_line = resources_at.as_ref().map(|(_, line)| *line);
    let (mut requests, mut limits) = (list(&c.resources.requests), list(&c.resources.limits));
    if let Some(spark) = &c.spark {
        // Spark's own fields, shown under the names Kubernetes uses for them.
        let text =
            |n: Option<&crate::source::yaml::Node>| n.and_then(|n| n.text()).map(str::to_string);
        if let Some(v) = text(spark.cores) {
            requests["cpu"] = json!(v);
        }
        if let Some(v) = text(spark.core_limit) {
            limits["cpu"] = json!(v);
        }
        if let Some(v) = text(spark.memory) {
            requests["memory"] = json!(v);
        }
        if let (Some(name), Some(q)) = (text(spark.gpu_name), text(spark.gpu_quantity)) {
            limits[name] = json!(q);
        }
    }
    let mut out = json!({
        "name": c.name,
        "init": c.init,
        "path": c.path,
        "resources_line": resources_line,
        "requests": requests,
        "limits": limits,
    });
    // A rendered container's resources may be written in another file than its object (a patch).
    if let Some((name, _)) = resources_at.filter(|(name, _)| *name != file.name) {
        out["resources_file"] = json!(name);
    }
    out
}

/// Where a workload's rows point.
enum Placement<'a> {
    /// Nodes carry their origin: a plain file, or a Kustomize render (each node in the file that
    /// wrote it).
    Origins(&'a SourceFile),
    /// A rendered Helm object: at its template (`# Source:`), else the chart's Chart.yaml.
    Helm {
        chart: &'a std::path::Path,
        template: Option<&'a str>,
        chart_yaml: &'a SourceFile,
    },
}

/// A template file and the 1-based line of the first `key:` in it.
fn template_line(
    chart: &std::path::Path,
    template: Option<&str>,
    key: &str,
) -> Option<(String, usize)> {
    let (file, offset) = crate::source::helm::template_location(chart, template?, key)?;
    let text = crate::source::repo::read_repo_text(&file).ok()?;
    let line = text.get(..offset)?.matches('\n').count() + 1;
    Some((display_path(&file), line))
}

/// A count as JSON: the number, or null.
fn count_json(count: &PodCount) -> Value {
    count.known().map_or(Value::Null, |n| json!(n))
}

/// The GPUs (known GPU resources only: a typo gets no GPU; DRA claims' GPUs under their device
/// class) of a demand, and the GPU resources whose quantity is not known.
fn gpu_demand(names: &GpuNames, d: &Demand) -> (BTreeMap<String, i64>, Vec<String>) {
    let is_gpu =
        |name: &str| names.classify(name) == GpuName::Known || names.is_gpu_device_class(name);
    // A count beyond i64 is no count either: it is listed as unknown.
    let count = |q: &Quantity| q.as_whole_i128().and_then(|n| i64::try_from(n).ok());
    let known = d
        .resources
        .iter()
        .filter(|(name, _)| is_gpu(name))
        .filter_map(|(name, q)| Some((name.clone(), count(q)?)))
        .filter(|(_, n)| *n != 0)
        .collect();
    let unknown = d
        .unknown
        .iter()
        .chain(
            // A fractional GPU count is no count (GPU003 says so).
            d.resources
                .iter()
                .filter(|(_, q)| count(q).is_none())
                .map(|(name, _)| name),
        )
        .filter(|name| is_gpu(name))
        .cloned()
        .collect();
    (known, unknown)
}

/// The pod sets of a workload as JSON, and the workload's GPU total (null when a set with GPUs
/// has an unknown count or quantity; null for templates, which run no pods).
fn pod_sets_json(
    names: &GpuNames,
    dra: &DraFacts,
    namespace: &str,
    w: &Workload,
    sets: &[PodSet],
) -> (Vec<Value>, Value) {
    let mut out = Vec::new();
    let mut total: Option<i64> = Some(0);
    let mut template = false;
    for set in sets {
        let is_class = |c: &str| names.is_gpu_device_class(c);
        let demand = pod_demand_with_dra(w, set, dra, &is_class, namespace);
        let (per_pod, unknown) = gpu_demand(names, &demand);
        let per_pod_sum = per_pod.values().fold(0i64, |a, b| a.saturating_add(*b));
        let set_total = match (&set.count, unknown.is_empty()) {
            (PodCount::Template, _) => {
                template = true;
                None
            }
            _ if per_pod_sum == 0 && unknown.is_empty() => Some(0),
            (PodCount::Known(n), true) => {
                Some(per_pod_sum.saturating_mul(i64::try_from(*n).unwrap_or(i64::MAX)))
            }
            _ => None,
        };
        total = match (total, set_total) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            _ => None,
        };
        let containers: Vec<Option<&str>> = set
            .containers
            .iter()
            .filter_map(|&i| w.containers.get(i))
            .map(|c| c.name)
            .collect();
        let mut entry = json!({
            "name": set.name,
            "path": set.path,
            "pods": count_json(&set.count),
            "containers": containers,
            "gpus_per_pod": per_pod,
            "gpus": set_total,
        });
        match &set.count {
            PodCount::Unknown(reason) => entry["pods_unknown"] = json!(reason),
            PodCount::Template => entry["template"] = json!(true),
            PodCount::Known(_) => {}
        }
        if !unknown.is_empty() {
            entry["gpus_unknown"] = json!(unknown);
        }
        out.push(entry);
    }
    let total = match total {
        Some(t) if !template => json!(t),
        _ => Value::Null,
    };
    (out, total)
}

/// [`workloads`] of a run's inputs.
pub fn of_run(linter: &Linter, run: &crate::lint::Run) -> Value {
    workloads(
        linter,
        &run.files,
        &run.units,
        &run.releases,
        &run.placement,
    )
}

/// Every workload linted: plain files as written, Kustomize roots and Helm releases as rendered
/// (each rendered object placed at its origin, with the render it belongs to), with its pod
/// sets and GPU totals, and the totals per namespace.
pub fn workloads(
    linter: &Linter,
    files: &[SourceFile],
    units: &[RenderUnit],
    releases: &[HelmUnit],
    deployed: &crate::deploy::Placement,
) -> Value {
    let mut out = Vec::new();
    // DRA claims are resolved against every ResourceClaimTemplate and ResourceClaim of the input.
    let facts = crate::lint::Facts::of_run(files, units, releases, deployed);
    // The cluster is named only when the run has several: one cluster adds nothing.
    let several = deployed.several();
    let mut push = |root: &Node,
                    placement: Placement,
                    namespace: &str,
                    render: Option<&str>,
                    cluster: Option<&str>| {
        for object in objects_in(root) {
            let (file, line) = match &placement {
                Placement::Origins(local) => place(files, local, object.node.span),
                Placement::Helm {
                    chart,
                    template,
                    chart_yaml,
                } => template_line(chart, *template, "kind")
                    .unwrap_or_else(|| (chart_yaml.name.clone(), 1)),
            };
            let Some(w) = Workload::of(object, &linter.catalog) else {
                continue;
            };
            let sets = pod_sets(&w);
            let mut containers: Vec<Value> = w
                .containers
                .iter()
                .map(|c| match &placement {
                    Placement::Origins(local) => container_json(files, local, c),
                    Placement::Helm {
                        chart,
                        template,
                        chart_yaml,
                    } => {
                        // Rendered spans point into the render, not a file: place at the
                        // template that writes `resources:`.
                        let mut v = container_json(&[], chart_yaml, c);
                        let at = template_line(chart, *template, "resources");
                        v["resources_line"] = json!(at.as_ref().map(|(_, l)| *l));
                        if let Some((name, _)) = at {
                            v["resources_file"] = json!(name);
                        }
                        v
                    }
                })
                .collect();
            for (index, set) in sets.iter().enumerate() {
                for &c in &set.containers {
                    if let Some(v) = containers.get_mut(c) {
                        v["pod_set"] = json!(index);
                    }
                }
            }
            let ns = w
                .object
                .id
                .effective_namespace(namespace)
                .unwrap_or_default();
            let dra = &facts.of(cluster).dra;
            let (pod_sets, gpus) = pod_sets_json(&linter.gpu_names, dra, &ns, &w, &sets);
            let mut entry = json!({
                "file": file,
                "line": line,
                "api_version": w.object.id.api_version,
                "kind": w.object.id.kind,
                "namespace": w.object.id.effective_namespace(namespace),
                "cluster_scoped": w.object.id.is_cluster_scoped(),
                "name": w.object.id.name,
                "containers": containers,
                "pod_sets": pod_sets,
                "gpus": gpus,
            });
            // A `generateName` object has its name made when it is created (`pi-x7k2p`).
            if let (None, Some(prefix)) = (
                &w.object.id.name,
                w.object.metadata().and_then(|m| m.get_str("generateName")),
            ) {
                entry["generate_name"] = json!(prefix);
            }
            if let Some(r) = render {
                entry["render"] = json!(r);
            }
            if let Some(c) = cluster.filter(|_| several) {
                entry["cluster"] = json!(c);
            }
            out.push(entry);
        }
    };
    for (index, file) in files.iter().enumerate() {
        if file.role != FileRole::Plain {
            continue;
        }
        for cluster in deployed.file_clusters(index) {
            let namespace = linter.plain_namespace(deployed, index, file, cluster.as_deref());
            for doc in &file.stream.documents {
                let placement = Placement::Origins(file);
                push(&doc.root, placement, namespace, None, cluster.as_deref());
            }
        }
    }
    for unit in units {
        let Some(home) = files.get(unit.home) else {
            continue;
        };
        let namespace = linter.unit_namespace(unit);
        for object in &unit.objects {
            push(
                object,
                Placement::Origins(home),
                namespace,
                Some(&unit.name),
                unit.cluster.as_deref(),
            );
        }
    }
    for release in releases {
        let Some(chart_yaml) = files.get(release.chart_file) else {
            continue;
        };
        let rendered = &release.rendered;
        for (index, doc) in rendered.stream.documents.iter().enumerate() {
            let template = rendered.templates.get(index).and_then(|t| t.as_deref());
            let placement = Placement::Helm {
                chart: &release.release.chart,
                template,
                chart_yaml,
            };
            let namespace = &release.release.namespace;
            push(
                &doc.root,
                placement,
                namespace,
                Some(&release.name),
                release.cluster.as_deref(),
            );
        }
    }
    let namespaces = namespace_totals(&out);
    json!({ "workloads": out, "namespaces": namespaces })
}

/// GPUs per namespace (cluster-scoped workloads under null), within each cluster when the
/// workloads name one (never summed across clusters): the known total, and how many pod sets
/// with GPUs have a count or quantity that is not known. Templates run no pods.
fn namespace_totals(workloads: &[Value]) -> Vec<Value> {
    let mut totals: BTreeMap<(Option<String>, Option<String>), (i64, usize)> = BTreeMap::new();
    for w in workloads {
        let ns = w["namespace"].as_str().map(str::to_string);
        let cluster = w["cluster"].as_str().map(str::to_string);
        let slot = totals.entry((cluster, ns)).or_default();
        for set in w["pod_sets"].as_array().into_iter().flatten() {
            if set["template"] == true {
                continue;
            }
            match set["gpus"].as_i64() {
                Some(n) => slot.0 = slot.0.saturating_add(n),
                None => slot.1 += 1,
            }
        }
    }
    totals
        .into_iter()
        .map(|((cluster, ns), (gpus, unknown))| {
            let mut entry = json!({"namespace": ns, "gpus": gpus, "unknown_pod_sets": unknown});
            if let Some(c) = cluster {
                entry["cluster"] = json!(c);
            }
            entry
        })
        .collect()
}

/// The namespace column: cluster-scoped objects under `(cluster)`.
fn namespace_label(ns: &Value) -> String {
    ns.as_str().unwrap_or("(cluster)").to_string()
}

/// A pod count for people: the number, `?` when not known, `template` for templates.
fn pods_label(set: &Value) -> String {
    if set["template"] == true {
        "template".into()
    } else {
        set["pods"]
            .as_u64()
            .map_or_else(|| "?".to_string(), |n| n.to_string())
    }
}

/// A container's GPUs per pod: per known GPU resource, its request, else its limit.
fn container_gpus(names: &GpuNames, c: &Value) -> String {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for side in ["requests", "limits"] {
        for (name, v) in c[side].as_object().into_iter().flatten() {
            if seen.contains(name) || names.classify(name) != GpuName::Known {
                continue;
            }
            seen.push(name.clone());
            let n = v
                .as_str()
                .and_then(|s| s.parse::<Quantity>().ok())
                .and_then(|q| q.as_whole_i128());
            match n {
                Some(0) => {}
                Some(n) => out.push(format!("{n} {name}")),
                None => out.push(format!("? {name}")),
            }
        }
    }
    if out.is_empty() {
        "-".into()
    } else {
        out.join(", ")
    }
}

/// Rows padded to their columns, two spaces apart.
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            // Padding by hand: a format width is capped at 65535 and a name may be longer.
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

pub fn table(linter: &Linter, inventory: &Value) -> String {
    let header = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let mut rows = vec![header(&[
        "FILE:LINE",
        "NAMESPACE",
        "KIND/NAME",
        "CONTAINER",
        "GPU",
        "PODS",
        "CPU req/lim",
        "MEMORY req/lim",
    ])];
    let mut sets = vec![header(&[
        "NAMESPACE",
        "KIND/NAME",
        "POD SET",
        "PODS",
        "GPU/POD",
        "GPU TOTAL",
        "NOTE",
    ])];
    let none = Vec::new();
    for w in inventory["workloads"].as_array().unwrap_or(&none) {
        // `prod/ml` when the run has several clusters (the inventory names them then).
        let ns = cluster_namespace_label(&w["cluster"], &w["namespace"]);
        let name = match (w["name"].as_str(), w["generate_name"].as_str()) {
            (Some(name), _) => name.to_string(),
            (None, Some(prefix)) => format!("{prefix}*"),
            (None, None) => "-".to_string(),
        };
        let kind_name = format!("{}/{name}", w["kind"].as_str().unwrap_or_default());
        let pod_sets = w["pod_sets"].as_array().unwrap_or(&none);
        for c in w["containers"].as_array().unwrap_or(&none) {
            let pair = |r: &str| {
                let get = |side: &str| c[side][r].as_str().unwrap_or("-").to_string();
                format!("{}/{}", get("requests"), get("limits"))
            };
            let name = c["name"].as_str().unwrap_or("-");
            let pods = c["pod_set"]
                .as_u64()
                .and_then(|i| pod_sets.get(usize::try_from(i).ok()?))
                .map_or_else(|| "?".to_string(), pods_label);
            rows.push(vec![
                format!(
                    "{}:{}",
                    c["resources_file"]
                        .as_str()
                        .or(w["file"].as_str())
                        .unwrap_or_default(),
                    c["resources_line"]
                        .as_u64()
                        .or(w["line"].as_u64())
                        .unwrap_or(0)
                ),
                ns.clone(),
                kind_name.clone(),
                if c["init"].as_bool() == Some(true) {
                    format!("{name} (init)")
                } else {
                    name.to_string()
                },
                container_gpus(&linter.gpu_names, c),
                pods,
                pair("cpu"),
                pair("memory"),
            ]);
        }
        for set in pod_sets {
            let per_pod = set["gpus_per_pod"].as_object();
            let unknown = set["gpus_unknown"].as_array();
            if per_pod.is_none_or(|m| m.is_empty()) && unknown.is_none_or(|u| u.is_empty()) {
                continue;
            }
            let mut gpu: Vec<String> = per_pod
                .into_iter()
                .flatten()
                .map(|(name, n)| format!("{n} {name}"))
                .collect();
            gpu.extend(
                unknown
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|name| format!("? {name}")),
            );
            let note = if set["template"] == true {
                "template: runs no pods itself".to_string()
            } else if let Some(reason) = set["pods_unknown"].as_str() {
                reason.to_string()
            } else if unknown.is_some() {
                "GPU quantity not a whole number, or not rendered".to_string()
            } else {
                String::new()
            };
            sets.push(vec![
                ns.clone(),
                kind_name.clone(),
                set["name"].as_str().unwrap_or("-").to_string(),
                pods_label(set),
                gpu.join(", "),
                set["gpus"]
                    .as_i64()
                    .map_or_else(|| "?".to_string(), |n| n.to_string()),
                note,
            ]);
        }
    }
    let mut out = super::printable(&columns(&rows)).into_owned();
    if sets.len() > 1 {
        out.push_str("\nGPUs by pod set:\n");
        out.push_str(&super::printable(&columns(&sets)));
    }
    // Totals per cluster (a run without several clusters has one, unnamed): GPUs of two
    // clusters are never added up, each cluster has its own pool.
    let mut by_cluster: BTreeMap<Option<&str>, Vec<&Value>> = BTreeMap::new();
    for entry in inventory["namespaces"].as_array().unwrap_or(&none) {
        by_cluster
            .entry(entry["cluster"].as_str())
            .or_default()
            .push(entry);
    }
    if by_cluster.is_empty() {
        by_cluster.insert(None, Vec::new());
    }
    for (cluster, entries) in by_cluster {
        match cluster {
            Some(c) => out.push_str(&format!("\nGPUs by namespace in cluster {c}:\n")),
            None => out.push_str("\nGPUs by namespace:\n"),
        }
        let mut total = 0i128;
        let mut unknown_total = 0u64;
        for entry in entries {
            let gpus = entry["gpus"].as_i64().map_or(0, i128::from);
            let unknown = entry["unknown_pod_sets"].as_u64().unwrap_or(0);
            total = total.saturating_add(gpus);
            unknown_total += unknown;
            if gpus == 0 && unknown == 0 {
                continue;
            }
            out.push_str(&format!(
                "  {:<20} {gpus}{}\n",
                namespace_label(&entry["namespace"]),
                unknown_note(unknown)
            ));
        }
        out.push_str(&format!(
            "  {:<20} {total}{}\n",
            "total",
            unknown_note(unknown_total)
        ));
    }
    out
}

/// The namespace column of the tables: `prod/ml` when the workload names its cluster.
fn cluster_namespace_label(cluster: &Value, ns: &Value) -> String {
    match cluster.as_str() {
        Some(c) => format!("{c}/{}", namespace_label(ns)),
        None => namespace_label(ns),
    }
}

/// `+ N pod set(s) of unknown size` after a total that leaves them out.
fn unknown_note(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" + {n} pod set(s) not counted (size or GPU quantity unknown)")
    }
}

/// The first characters OWASP lists as formula triggers (CSV injection): a spreadsheet may run
/// a field starting with `=`, `+`, `-`, `@`, or with a TAB or CR before one of them.
const FORMULA_TRIGGERS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. A field a
/// spreadsheet would run as a formula (one of [`FORMULA_TRIGGERS`] first: names come from the
/// repository) gets a leading `'`, as OWASP advises against CSV injection.
fn csv_field(raw: &str) -> String {
    let s = super::printable(raw);
    let s = if s.starts_with(FORMULA_TRIGGERS) || raw.starts_with(FORMULA_TRIGGERS) {
        format!("'{s}")
    } else {
        s.into_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// `inventory --format csv`: one row per container, the columns of the table split so a
/// spreadsheet can sum them (GPUs per pod, pods, the workload's GPU total).
pub fn csv(linter: &Linter, inventory: &Value) -> String {
    let none = Vec::new();
    let workloads = inventory["workloads"].as_array().unwrap_or(&none);
    // A `cluster` column first when the run has several clusters (the inventory names them).
    let clusters = workloads.iter().any(|w| w["cluster"].is_string());
    let mut out = String::from(if clusters { "cluster," } else { "" });
    out.push_str(
        "file,line,namespace,kind,name,render,container,init,gpus_per_pod,pods,workload_gpus,cpu_request,cpu_limit,memory_request,memory_limit\r\n",
    );
    for w in workloads {
        let pod_sets = w["pod_sets"].as_array().unwrap_or(&none);
        for c in w["containers"].as_array().unwrap_or(&none) {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            if clusters {
                out.push_str(&csv_field(&text(&w["cluster"])));
                out.push(',');
            }
            let pods = c["pod_set"]
                .as_u64()
                .and_then(|i| pod_sets.get(usize::try_from(i).ok()?))
                .map_or_else(String::new, pods_label);
            let gpus = container_gpus(&linter.gpu_names, c);
            let row = [
                c["resources_file"]
                    .as_str()
                    .or(w["file"].as_str())
                    .unwrap_or_default()
                    .to_string(),
                c["resources_line"]
                    .as_u64()
                    .or(w["line"].as_u64())
                    .map_or_else(String::new, |n| n.to_string()),
                text(&w["namespace"]),
                text(&w["kind"]),
                text(&w["name"]),
                text(&w["render"]),
                text(&c["name"]),
                (c["init"].as_bool() == Some(true)).to_string(),
                if gpus == "-" { String::new() } else { gpus },
                pods,
                w["gpus"]
                    .as_i64()
                    .map_or_else(String::new, |n| n.to_string()),
                text(&c["requests"]["cpu"]),
                text(&c["limits"]["cpu"]),
                text(&c["requests"]["memory"]),
                text(&c["limits"]["memory"]),
            ];
            let fields: Vec<String> = row.iter().map(|f| csv_field(f)).collect();
            out.push_str(&fields.join(","));
            out.push_str("\r\n");
        }
    }
    out
}

#[cfg(test)]
mod csv_tests {
    use super::csv_field;

    #[test]
    fn fields_are_quoted_and_formulas_defused() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("@cmd"), "'@cmd");
        assert_eq!(csv_field("a\u{1b}b"), "a\\u{1b}b");
        // Issue 24: TAB and CR first are formula triggers too (OWASP).
        assert_eq!(csv_field("\t=1+1"), "'\t=1+1");
        assert_eq!(csv_field("\r=1+1"), "'\\u{d}=1+1");
        assert_eq!(csv_field("\tplain"), "'\tplain");
        assert_eq!(csv_field("a\t=b"), "a\t=b");
    }
}
