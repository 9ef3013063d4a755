//! `gpulint inventory`: every workload and container with its GPU, CPU and memory figures.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::k8s::gpu::{GpuName, GpuNames};
use crate::k8s::quantity::Quantity;
use crate::k8s::workload::{objects_in, Container, ResourceList, Workload};
use crate::lint::{FileRole, Linter, SourceFile};
use crate::renders::{HelmUnit, RenderUnit};
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

/// Every workload linted: plain files as written, Kustomize roots and Helm releases as rendered
/// (each rendered object placed at its origin, with the render it belongs to).
pub fn workloads(
    linter: &Linter,
    files: &[SourceFile],
    units: &[RenderUnit],
    releases: &[HelmUnit],
) -> Value {
    let mut out = Vec::new();
    let mut push = |root: &Node, local: &SourceFile, render: Option<&str>| {
        for object in objects_in(root) {
            let (file, line) = place(files, local, object.node.span);
            let Some(w) = Workload::of(object, &linter.catalog) else {
                continue;
            };
            let mut entry = json!({
                "file": file,
                "line": line,
                "api_version": w.object.id.api_version,
                "kind": w.object.id.kind,
                "namespace": w.object.id.namespace,
                "name": w.object.id.name,
                "containers": w.containers.iter().map(|c| container_json(files, local, c)).collect::<Vec<_>>(),
            });
            if let Some(r) = render {
                entry["render"] = json!(r);
            }
            out.push(entry);
        }
    };
    for file in files.iter().filter(|f| f.role == FileRole::Plain) {
        for doc in &file.stream.documents {
            push(&doc.root, file, None);
        }
    }
    for unit in units {
        let Some(home) = files.get(unit.home) else {
            continue;
        };
        for object in &unit.objects {
            push(object, home, Some(&unit.name));
        }
    }
    for release in releases {
        let Some(chart) = files.get(release.chart_file) else {
            continue;
        };
        // Rendered Helm objects have no file of their own: listed at the chart's Chart.yaml.
        for doc in &release.rendered.stream.documents {
            let mut root = doc.root.clone();
            root.set_source(crate::source::yaml::SourceId::file(release.chart_file));
            zero_spans(&mut root);
            push(&root, chart, Some(&release.name));
        }
    }
    json!({ "workloads": out })
}

/// Points every node at the start of its file (for objects without a written origin).
fn zero_spans(node: &mut Node) {
    node.span.start = 0;
    node.span.end = 0;
    match &mut node.value {
        crate::source::yaml::Value::Scalar(_) => {}
        crate::source::yaml::Value::Seq(items) => items.iter_mut().for_each(zero_spans),
        crate::source::yaml::Value::Map(entries) => entries.iter_mut().for_each(|e| {
            zero_spans(&mut e.key);
            zero_spans(&mut e.value);
        }),
    }
}

/// Total GPUs a container asks for: the limit (or the request) of every GPU resource.
fn gpus(names: &GpuNames, c: &Value) -> i128 {
    let mut total: i128 = 0;
    let empty = serde_json::Map::new();
    let limits = c["limits"].as_object().unwrap_or(&empty);
    let requests = c["requests"].as_object().unwrap_or(&empty);
    let mut seen = Vec::new();
    for (name, v) in limits.iter().chain(requests) {
        // Only names a device plugin advertises count: a typo gets no GPU.
        if seen.contains(name) || names.classify(name) != GpuName::Known {
            continue;
        }
        seen.push(name.clone());
        if let Some(n) = v
            .as_str()
            .and_then(|s| s.parse::<Quantity>().ok())
            .and_then(|q| q.as_whole_i128())
        {
            total = total.saturating_add(n);
        }
    }
    total
}

pub fn table(linter: &Linter, inventory: &Value) -> String {
    let mut rows = vec![[
        "FILE:LINE".to_string(),
        "NAMESPACE".into(),
        "KIND/NAME".into(),
        "CONTAINER".into(),
        "GPU".into(),
        "CPU req/lim".into(),
        "MEMORY req/lim".into(),
    ]];
    let mut per_namespace: BTreeMap<String, i128> = BTreeMap::new();
    let none = Vec::new();
    for w in inventory["workloads"].as_array().unwrap_or(&none) {
        let ns = w["namespace"].as_str().unwrap_or("default").to_string();
        for c in w["containers"].as_array().unwrap_or(&none) {
            let g = gpus(&linter.gpu_names, c);
            let slot = per_namespace.entry(ns.clone()).or_default();
            *slot = slot.saturating_add(g);
            let gpu_names: Vec<String> = c["limits"]
                .as_object()
                .into_iter()
                .chain(c["requests"].as_object())
                .flat_map(|m| m.keys())
                .filter(|k| linter.gpu_names.is_gpu(k))
                .cloned()
                .collect();
            let gpu_text = match gpu_names.first() {
                Some(n) if g > 0 => format!("{g} {n}"),
                _ => "-".to_string(),
            };
            let pair = |r: &str| {
                let get = |side: &str| c[side][r].as_str().unwrap_or("-").to_string();
                format!("{}/{}", get("requests"), get("limits"))
            };
            let name = c["name"].as_str().unwrap_or("-");
            rows.push([
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
                format!(
                    "{}/{}",
                    w["kind"].as_str().unwrap_or_default(),
                    w["name"].as_str().unwrap_or("-")
                ),
                if c["init"].as_bool() == Some(true) {
                    format!("{name} (init)")
                } else {
                    name.to_string()
                },
                gpu_text,
                pair("cpu"),
                pair("memory"),
            ]);
        }
    }
    let widths: Vec<usize> = (0..7)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            // Padding by hand: a format width is capped at 65535 and a name may be longer.
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str("\nGPUs by namespace:\n");
    for (ns, total) in &per_namespace {
        out.push_str(&format!("  {ns:<20} {total}\n"));
    }
    let total = per_namespace
        .values()
        .fold(0i128, |a, b| a.saturating_add(*b));
    out.push_str(&format!("  {:<20} {total}\n", "total"));
    out
}
