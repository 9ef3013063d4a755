//! `gpulint inventory`: every workload and container with its GPU, CPU and memory figures.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::k8s::gpu::{GpuName, GpuNames};
use crate::k8s::quantity::Quantity;
use crate::k8s::workload::{objects, Container, ResourceList, Workload};
use crate::lint::{Linter, SourceFile};

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

fn container_json(file: &SourceFile, c: &Container) -> Value {
    let resources_line = c
        .resources
        .key
        .map(|k| file.stream.line_col(k.span.start()).0);
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
    json!({
        "name": c.name,
        "init": c.init,
        "path": c.path,
        "resources_line": resources_line,
        "requests": requests,
        "limits": limits,
    })
}

pub fn workloads(linter: &Linter, files: &[SourceFile]) -> Value {
    let mut out = Vec::new();
    for file in files {
        for doc in &file.stream.documents {
            for object in objects(doc) {
                let line = file.stream.line_col(object.node.span.start()).0;
                let Some(w) = Workload::of(object, &linter.catalog) else {
                    continue;
                };
                out.push(json!({
                    "file": file.name,
                    "line": line,
                    "api_version": w.object.id.api_version,
                    "kind": w.object.id.kind,
                    "namespace": w.object.id.namespace,
                    "name": w.object.id.name,
                    "containers": w.containers.iter().map(|c| container_json(file, c)).collect::<Vec<_>>(),
                }));
            }
        }
    }
    json!({ "workloads": out })
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
                    w["file"].as_str().unwrap_or_default(),
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
