//! Checks with positions: what `parse`/`read` verify beyond the JSON shape (ranges, order,
//! identity, timestamps, nodes), and errors that name the line and column of the bad value.

use super::format::FileContainer;
use super::scan::{line_column, line_start, scan_values, Span};
use super::{SnapshotError, SnapshotErrorKind};
use crate::metrics::nodes::NodeInfo;
use crate::metrics::usage::{ContainerKey, GpuMemory, GpuUtilization, KvCache, Stats, Usage};

/// Node names unique and non-empty, allocatable values non-negative quantities.
pub(super) fn check_nodes(doc: &Doc, nodes: &[NodeInfo]) -> Result<(), SnapshotError> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        if node.name.is_empty() || !seen.insert((node.cluster.as_deref(), node.name.as_str())) {
            let path = format!("nodes[{i}].name");
            let kind = SnapshotErrorKind::DuplicateNode {
                name: node.name.clone(),
            };
            return Err(doc.error(&path, Some(format!("nodes[{i}]")), kind));
        }
        for (resource, value) in &node.allocatable {
            let ok = value
                .trim()
                .parse::<crate::quantity::Quantity>()
                .is_ok_and(|q| !q.is_negative());
            if !ok {
                let path = format!("nodes[{i}].allocatable.{resource}");
                let kind = SnapshotErrorKind::InvalidQuantity {
                    field: format!("allocatable.{resource}"),
                    value: format!("{value:?}"),
                };
                return Err(doc.error(&path, Some(format!("nodes[{i}] ({})", node.name)), kind));
            }
        }
    }
    Ok(())
}

pub(super) fn container_context(index: usize, key: &ContainerKey) -> String {
    format!(
        "containers[{index}] ({}/{}/{}/{})",
        key.namespace, key.kind, key.name, key.container
    )
}

/// The document being decoded: its name and, when [`parse`](super::parse) has it, its text, which is
/// scanned again only to position an error (a streamed [`read`](super::read) has no text: no positions).
pub(super) struct Doc<'a> {
    pub(super) text: Option<&'a str>,
    pub(super) name: &'a str,
}

/// Checks for one container, all reporting with the same context.
struct ContainerCheck<'d, 'a> {
    pub(super) doc: &'d Doc<'a>,
    base: String,
    context: String,
}

impl Doc<'_> {
    /// Where the value at `path` is, by a scan of the text (errors only: a few per run).
    fn span(&self, path: &str) -> Option<Span> {
        let mut found = None;
        scan_values(self.text?, &mut |span| {
            if span.path == path {
                found = Some(span);
                true
            } else {
                false
            }
        });
        found
    }

    /// The value at `path` exactly as written in the file.
    pub(super) fn literal(&self, path: &str) -> Option<String> {
        let span = self.span(path)?;
        self.text?
            .get(span.start..span.end)
            .map(|s| s.trim().to_owned())
    }

    /// An error located at the value at `path` (`""` is the whole document: no position).
    pub(super) fn error(
        &self,
        path: &str,
        context: Option<String>,
        kind: SnapshotErrorKind,
    ) -> SnapshotError {
        let position = match self.text {
            Some(text) if !path.is_empty() => self.span(path).map(|s| line_column(text, s.start)),
            _ => None,
        };
        SnapshotError {
            file: self.name.to_owned(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            context,
            kind: Box::new(kind),
        }
    }

    /// A serde_json error, keeping its position and adding the path of the value it is in.
    pub(super) fn json_error(&self, e: &serde_json::Error) -> SnapshotError {
        let full = e.to_string();
        let (line, column, message) = if e.line() == 0 {
            (None, None, full)
        } else {
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
            // Column 0 (nothing consumed on the line yet) is shown as 1 for editors.
            (Some(e.line()), Some(e.column().max(1)), message)
        };
        let context = line.and_then(|line| {
            // serde_json's column counts the bytes consumed on the line, so the byte at
            // `line_start + column - 1` is the last one it read.
            let offset = line_start(self.text?, line)?.checked_add(e.column())?;
            self.path_at(offset.saturating_sub(1))
        });
        SnapshotError {
            file: self.name.to_owned(),
            line,
            column,
            context,
            kind: Box::new(SnapshotErrorKind::Json(message)),
        }
    }

    /// Path of the innermost value containing byte `offset`, if it is not the document.
    fn path_at(&self, offset: usize) -> Option<String> {
        let mut innermost: Option<Span> = None;
        scan_values(self.text?, &mut |span| {
            let inside = span.start <= offset && offset < span.end;
            if inside
                && innermost
                    .as_ref()
                    .is_none_or(|i| span.end - span.start < i.end - i.start)
            {
                innermost = Some(span);
            }
            false
        });
        innermost.map(|s| s.path).filter(|p| !p.is_empty())
    }

    pub(super) fn check_container(
        &self,
        index: usize,
        c: FileContainer,
    ) -> Result<(ContainerKey, Usage), SnapshotError> {
        let key = ContainerKey {
            cluster: c.cluster,
            namespace: c.namespace,
            kind: c.kind,
            name: c.name,
            container: c.container,
        };
        let check = ContainerCheck {
            doc: self,
            base: format!("containers[{index}]"),
            context: container_context(index, &key),
        };
        for (field, value) in [
            ("namespace", &key.namespace),
            ("kind", &key.kind),
            ("name", &key.name),
            ("container", &key.container),
        ] {
            if value.is_empty() {
                return Err(check.error(field, SnapshotErrorKind::EmptyField { field }));
            }
        }
        if key.cluster.as_deref() == Some("") {
            return Err(check.error(
                "cluster",
                SnapshotErrorKind::EmptyField { field: "cluster" },
            ));
        }
        if let Some(h) = c.history_seconds {
            check.number("history_seconds", h)?;
        }
        if let Some(l) = c.memory_limit_bytes {
            check.number("memory_limit_bytes", l)?;
        }
        if let Some(s) = c.memory_bytes {
            check.ordered(
                "memory_bytes",
                &[("p50", s.p50), ("p99", s.p99), ("max", s.max)],
            )?;
        }
        if let Some(s) = c.cpu_cores {
            check.ordered(
                "cpu_cores",
                &[("p50", s.p50), ("p99", s.p99), ("max", s.max)],
            )?;
        }
        if let Some(g) = c.gpu_memory_bytes {
            check.ordered(
                "gpu_memory_bytes",
                &[("p99", g.p99), ("max", g.max), ("capacity", g.capacity)],
            )?;
        }
        if c.gpu_model.as_deref() == Some("") {
            return Err(check.error(
                "gpu_model",
                SnapshotErrorKind::EmptyField { field: "gpu_model" },
            ));
        }
        if let (Some(used), Some(count)) = (c.gpus_used, c.gpu_count) {
            if used > count {
                return Err(check.error(
                    "gpus_used",
                    SnapshotErrorKind::AboveBound {
                        field: "gpus_used".into(),
                        value: used.to_string(),
                        bound_field: "gpu_count".into(),
                        bound: count.to_string(),
                    },
                ));
            }
        }
        if let Some(k) = c.kv_cache_usage {
            check.ordered("kv_cache_usage", &[("p99", k.p99), ("max", k.max)])?;
        }
        // Fractions in 0..=1: utilisation, engine activity, KV cache.
        let fractions = [
            (
                "gpu_utilization",
                c.gpu_utilization.map(|g| [g.avg, g.p99]),
                ["avg", "p99"],
            ),
            (
                "gpu_engine_active",
                c.gpu_engine_active.map(|g| [g.avg, g.p99]),
                ["avg", "p99"],
            ),
            (
                "kv_cache_usage",
                c.kv_cache_usage.map(|k| [k.p99, k.max]),
                ["p99", "max"],
            ),
        ];
        for (series, values, names) in fractions {
            let Some(values) = values else { continue };
            for (field, value) in names.into_iter().zip(values) {
                if let Some(v) = value {
                    let path = format!("{series}.{field}");
                    check.number(&path, v)?;
                    if v > 1.0 {
                        let value = check.literal(&path, v);
                        return Err(check.error(
                            &path,
                            SnapshotErrorKind::NotAFraction {
                                field: path.clone(),
                                value,
                            },
                        ));
                    }
                }
            }
        }
        let usage = Usage {
            samples: c.samples,
            history_seconds: c.history_seconds,
            memory_bytes: c.memory_bytes.map(Stats::from),
            cpu_cores: c.cpu_cores.map(Stats::from),
            gpu_memory_bytes: c.gpu_memory_bytes.map(|g| GpuMemory {
                p99: g.p99,
                max: g.max,
                capacity: g.capacity,
            }),
            gpu_utilization: c.gpu_utilization.map(|g| GpuUtilization {
                avg: g.avg,
                p99: g.p99,
            }),
            oom_kills: c.oom_kills,
            memory_limit_bytes: c.memory_limit_bytes,
            gpu_model: c.gpu_model,
            gpu_count: c.gpu_count,
            gpus_used: c.gpus_used,
            gpu_engine_active: c.gpu_engine_active.map(|g| GpuUtilization {
                avg: g.avg,
                p99: g.p99,
            }),
            kv_cache_usage: c.kv_cache_usage.map(|k| KvCache {
                p99: k.p99,
                max: k.max,
            }),
        };
        Ok((key, usage))
    }
}

impl ContainerCheck<'_, '_> {
    /// `field` is relative to the container, e.g. `memory_bytes.p99`.
    pub(super) fn error(&self, field: &str, kind: SnapshotErrorKind) -> SnapshotError {
        let path = format!("{}.{field}", self.base);
        self.doc.error(&path, Some(self.context.clone()), kind)
    }

    pub(super) fn literal(&self, field: &str, value: f64) -> String {
        self.doc
            .literal(&format!("{}.{field}", self.base))
            .unwrap_or_else(|| value.to_string())
    }

    /// Finite and non-negative.
    fn number(&self, field: &str, value: f64) -> Result<(), SnapshotError> {
        let kind = if !value.is_finite() {
            SnapshotErrorKind::NotFinite {
                field: field.to_owned(),
                value: self.literal(field, value),
            }
        } else if value < 0.0 {
            SnapshotErrorKind::Negative {
                field: field.to_owned(),
                value: self.literal(field, value),
            }
        } else {
            return Ok(());
        };
        Err(self.error(field, kind))
    }

    /// Each present value is a valid number and at most every present value after it.
    fn ordered(&self, series: &str, values: &[(&str, Option<f64>)]) -> Result<(), SnapshotError> {
        for (name, value) in values {
            if let Some(v) = value {
                self.number(&format!("{series}.{name}"), *v)?;
            }
        }
        for (i, (name, value)) in values.iter().enumerate() {
            let Some(v) = value else { continue };
            // The nearest present bound above it (p50 against max when p99 is missing).
            let bound = values
                .get(i + 1..)
                .unwrap_or(&[])
                .iter()
                .find_map(|(n, b)| b.map(|b| (*n, b)));
            if let Some((bound_name, b)) = bound {
                if *v > b {
                    let field = format!("{series}.{name}");
                    let kind = SnapshotErrorKind::AboveBound {
                        value: self.literal(&field, *v),
                        bound: self.literal(&format!("{series}.{bound_name}"), b),
                        bound_field: bound_name.to_owned(),
                        field: field.clone(),
                    };
                    return Err(self.error(&field, kind));
                }
            }
        }
        Ok(())
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, as RFC 3339 section 5.6 (`t`/`z` allowed).
pub(super) fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = b.get(range)?;
        if digits.iter().all(u8::is_ascii_digit) {
            Some(
                digits
                    .iter()
                    .fold(0, |acc, d| acc * 10 + u32::from(d - b'0')),
            )
        } else {
            None
        }
    };
    let sep = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    let date_time_ok = num(0..4).is_some()
        && sep(4, b"-")
        && num(5..7).is_some_and(|m| (1..=12).contains(&m))
        && sep(7, b"-")
        && num(8..10).is_some_and(|d| (1..=31).contains(&d))
        && sep(10, b"Tt")
        && num(11..13).is_some_and(|h| h <= 23)
        && sep(13, b":")
        && num(14..16).is_some_and(|m| m <= 59)
        && sep(16, b":")
        && num(17..19).is_some_and(|s| s <= 60);
    if !date_time_ok {
        return false;
    }
    let mut i = 19;
    if sep(i, b".") {
        let digits = b
            .get(i + 1..)
            .unwrap_or(&[])
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return false;
        }
        i += 1 + digits;
    }
    match b.get(i) {
        Some(b'Z' | b'z') => b.len() == i + 1,
        Some(b'+' | b'-') => {
            b.len() == i + 6
                && num(i + 1..i + 3).is_some_and(|h| h <= 23)
                && sep(i + 3, b":")
                && num(i + 4..i + 6).is_some_and(|m| m <= 59)
        }
        _ => false,
    }
}
