//! The metrics snapshot file, version 1: measured usage saved as JSON so that linting does
//! not need a live Prometheus.
//!
//! ```json
//! {"version": 1, "window": "14d", "collected_at": "2026-12-01T00:00:00Z",
//!  "source": "prometheus https://prom:9090",
//!  "containers": [{"namespace": "ml", "kind": "Deployment", "name": "llm", "container": "vllm",
//!    "samples": 20160, "history_seconds": 1209600,
//!    "memory_bytes": {"p50": 1.0e10, "p99": 3.1e10, "max": 3.3e10},
//!    "cpu_cores": {"p50": 1.2, "p99": 3.4, "max": 5.0},
//!    "gpu_memory_bytes": {"p99": 6.1e10, "max": 6.3e10, "capacity": 8.5e10},
//!    "gpu_utilization": {"avg": 0.22, "p99": 0.71},
//!    "oom_kills": 1, "memory_limit_bytes": 3.4359738368e10}]}
//! ```
//!
//! Rules (files are written by hand or by other tools, so [`parse`] checks all of them and
//! names the file, line, column and container of the first violation):
//!
//! - `version` (integer) and `containers` (array) are required; [`SUPPORTED_VERSIONS`] lists
//!   the versions this build reads. `window`, `collected_at` (RFC 3339) and `source` are
//!   optional strings.
//! - Each container needs non-empty `namespace`, `kind`, `name` and `container`; no two
//!   containers may share all four.
//! - Every series and `samples`, `history_seconds`, `oom_kills`, `memory_limit_bytes` is optional: a missing key (or
//!   `null`) means "not measured", never zero.
//! - Unknown keys are errors at every level (a typo would otherwise silently drop data).
//! - Numbers are finite and non-negative; `samples` and `oom_kills` are integers.
//! - Within a series `p50 <= p99 <= max`; for GPU memory `p99 <= max <= capacity`.
//! - GPU utilisation (`avg`, `p99`) is a fraction in `0..=1`, not a percentage.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use thiserror::Error;

use super::usage::{ContainerKey, GpuMemory, GpuUtilization, Stats, Usage, UsageSet};

/// The version [`write`] produces.
pub const VERSION: u64 = 1;

/// Versions [`parse`] accepts.
pub const SUPPORTED_VERSIONS: &[u64] = &[VERSION];

/// Nesting deeper than this is not scanned for positions (serde_json stops at 128 anyway).
const MAX_SCAN_DEPTH: usize = 200;

/// Why a snapshot could not be read. Displays as
/// `<file>[:<line>:<column>]: [<context>: ]<problem>`, for example
/// `metrics.json:7:30: containers[3] (ml/Deployment/llm/vllm): memory_bytes.p99 (3.1e10) is above max (3.0e10)`.
#[derive(Debug, Error)]
#[error("{}", self.render())]
#[non_exhaustive]
pub struct SnapshotError {
    /// The file name given to [`parse`] (or the path given to [`read`]).
    pub file: String,
    /// 1-based line of the offending value, when known.
    pub line: Option<usize>,
    /// Column of the offending value on that line, when known: for JSON errors the one
    /// serde_json reports, otherwise the 1-based column of the value's first character.
    pub column: Option<usize>,
    /// Where in the document: `containers[3] (ml/Deployment/llm/vllm)`, `containers[3]`, or
    /// `None` at the top level.
    pub context: Option<String>,
    /// What is wrong (boxed to keep `Result<_, SnapshotError>` small).
    pub kind: Box<SnapshotErrorKind>,
}

impl SnapshotError {
    fn render(&self) -> String {
        let mut s = self.file.clone();
        if let (Some(line), Some(column)) = (self.line, self.column) {
            s.push_str(&format!(":{line}:{column}"));
        }
        s.push_str(": ");
        if let Some(context) = &self.context {
            s.push_str(context);
            s.push_str(": ");
        }
        s.push_str(&self.kind.to_string());
        s
    }
}

/// The problem behind a [`SnapshotError`]. Values are quoted as written in the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SnapshotErrorKind {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("cannot read the file: {0}")]
    Io(std::io::Error),
    /// Not valid JSON, or not the expected shape: syntax errors, unknown keys, missing keys,
    /// wrong types, duplicate keys. The text is serde_json's, without its position suffix.
    #[error("{0}")]
    Json(String),
    /// The top-level object has no `version`.
    #[error("missing `version` (supported versions: {})", supported_versions())]
    MissingVersion,
    /// `version` is not one of [`SUPPORTED_VERSIONS`].
    #[error(
        "unsupported snapshot version {found} (supported versions: {})",
        supported_versions()
    )]
    UnsupportedVersion { found: String },
    /// A number below zero.
    #[error("{field} ({value}) is negative")]
    Negative { field: String, value: String },
    /// NaN or infinite (cannot come from JSON text, kept for completeness).
    #[error("{field} ({value}) is not a finite number")]
    NotFinite { field: String, value: String },
    /// An ordering violation such as `p99 > max`.
    #[error("{field} ({value}) is above {bound_field} ({bound})")]
    AboveBound {
        field: String,
        value: String,
        bound_field: String,
        bound: String,
    },
    /// GPU utilisation above 1.
    #[error("{field} ({value}) is outside 0..=1 (utilisation is a fraction: 0.71 means 71%)")]
    NotAFraction { field: String, value: String },
    /// Two entries for the same namespace/kind/name/container.
    #[error("duplicate container: the same namespace/kind/name/container is already at containers[{first}]")]
    DuplicateContainer { first: usize },
    /// An identity field is the empty string.
    #[error("`{field}` is empty")]
    EmptyField { field: &'static str },
    /// `collected_at` is not an RFC 3339 timestamp.
    #[error(
        "collected_at ({value}) is not an RFC 3339 timestamp such as \"2026-12-01T00:00:00Z\""
    )]
    InvalidTimestamp { value: String },
}

fn supported_versions() -> String {
    SUPPORTED_VERSIONS
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads and validates a snapshot file; errors name the file by `path`.
pub fn read(path: &Path) -> Result<UsageSet, SnapshotError> {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &name),
        Err(e) => Err(SnapshotError {
            file: name,
            line: None,
            column: None,
            context: None,
            kind: Box::new(SnapshotErrorKind::Io(e)),
        }),
    }
}

/// Parses and validates snapshot text; `name` is the file name used in errors.
///
/// The returned set's `source` is the file's `source` when present (so that [`write`] then
/// `parse` round-trips), else `snapshot <name>`. `collected_at` is checked, then dropped.
pub fn parse(text: &str, name: &str) -> Result<UsageSet, SnapshotError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc = Doc {
        text,
        name,
        index: OnceCell::new(),
    };

    // First only the version, so that a future format is reported as such rather than as
    // a pile of unknown keys.
    let probe: Probe = serde_json::from_str(text).map_err(|e| doc.json_error(&e))?;
    match &probe.version {
        None => return Err(doc.error("", None, SnapshotErrorKind::MissingVersion)),
        Some(v) if v.as_u64().is_some_and(|v| SUPPORTED_VERSIONS.contains(&v)) => {}
        Some(v) => {
            let found = doc.literal("version").unwrap_or_else(|| v.to_string());
            return Err(doc.error(
                "version",
                None,
                SnapshotErrorKind::UnsupportedVersion { found },
            ));
        }
    }

    doc.check_shapes()?;
    let file: FileV1 = serde_json::from_str(text).map_err(|e| doc.json_error(&e))?;
    if let Some(ts) = &file.collected_at {
        if !is_rfc3339(ts) {
            let value = doc
                .literal("collected_at")
                .unwrap_or_else(|| format!("{ts:?}"));
            return Err(doc.error(
                "collected_at",
                None,
                SnapshotErrorKind::InvalidTimestamp { value },
            ));
        }
    }

    let mut containers = BTreeMap::new();
    let mut first_index: BTreeMap<ContainerKey, usize> = BTreeMap::new();
    for (i, c) in file.containers.into_iter().enumerate() {
        let (key, usage) = doc.check_container(i, c)?;
        if let Some(&first) = first_index.get(&key) {
            let path = format!("containers[{i}]");
            let context = container_context(i, &key);
            return Err(doc.error(
                &path,
                Some(context),
                SnapshotErrorKind::DuplicateContainer { first },
            ));
        }
        first_index.insert(key.clone(), i);
        containers.insert(key, usage);
    }

    Ok(UsageSet {
        window: file.window,
        source: file.source.unwrap_or_else(|| format!("snapshot {name}")),
        containers,
    })
}

/// Serialises `set` as a version-1 snapshot: pretty JSON with a trailing newline, containers
/// sorted by namespace/kind/name/container, keys in the documented order. Deterministic:
/// the same set gives the same bytes.
///
/// `collected_at` should be RFC 3339 (`2026-12-01T00:00:00Z`); an empty string omits it, as
/// an empty `set.source` omits `source`. Non-finite numbers (which JSON cannot represent)
/// are omitted, i.e. written as "not measured". Nothing else is validated: a set that
/// [`parse`] would reject (negative values, `p99 > max`…) is written as is and fails to read
/// back with an error naming the value. A valid set round-trips: `parse(&write(s, t), n)`
/// returns `s`.
pub fn write(set: &UsageSet, collected_at: &str) -> String {
    let file = FileV1 {
        version: VERSION,
        window: set.window.clone(),
        collected_at: (!collected_at.is_empty()).then(|| collected_at.to_owned()),
        source: (!set.source.is_empty()).then(|| set.source.clone()),
        containers: set
            .containers
            .iter()
            .map(|(key, usage)| FileContainer::new(key, usage))
            .collect(),
    };
    // Cannot fail: plain structs with string keys and no custom serialisers.
    let mut out = serde_json::to_string_pretty(&file).unwrap_or_default();
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------------------
// File structs. Separate from `usage.rs` so that the file format is fixed independently of
// the in-memory types, and so that `deny_unknown_fields` applies at every level.

const EXPECT_FILE: &str = "a metrics snapshot (a JSON object with `version` and `containers`)";
const EXPECT_CONTAINER: &str =
    "a container object (namespace, kind, name, container and optional series)";
const EXPECT_STATS: &str = "an object with optional numbers p50, p99 and max";
const EXPECT_GPU_MEMORY: &str = "an object with optional numbers p99, max and capacity";
const EXPECT_GPU_UTILIZATION: &str = "an object with optional fractions avg and p99";

/// Only the top-level `version`; the rest is skipped (but its syntax is checked).
struct Probe {
    /// `Some(Null)` for `"version": null`, `None` when the key is missing.
    version: Option<serde_json::Value>,
}

impl<'de> Deserialize<'de> for Probe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A map, never a sequence: derived structs would also accept `[1, ...]`.
        d.deserialize_map(ProbeVisitor)
    }
}

struct ProbeVisitor;

impl<'de> Visitor<'de> for ProbeVisitor {
    type Value = Probe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECT_FILE)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe, A::Error> {
        let mut version = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "version" {
                if version.is_some() {
                    return Err(de::Error::duplicate_field("version"));
                }
                version = Some(map.next_value::<serde_json::Value>()?);
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(Probe { version })
    }
}

/// What the value at `path` must be an object of, for paths where serde would also accept
/// an array (derived structs read `[a, b, c]` positionally).
fn object_expected(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("containers[")?;
    let close = rest.find(']')?;
    if close == 0 || !rest[..close].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match &rest[close + 1..] {
        "" => Some(EXPECT_CONTAINER),
        ".memory_bytes" | ".cpu_cores" => Some(EXPECT_STATS),
        ".gpu_memory_bytes" => Some(EXPECT_GPU_MEMORY),
        ".gpu_utilization" => Some(EXPECT_GPU_UTILIZATION),
        _ => None,
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV1 {
    version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    collected_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    containers: Vec<FileContainer>,
}

#[derive(Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a container object (namespace, kind, name, container and optional series)"
)]
struct FileContainer {
    namespace: String,
    kind: String,
    name: String,
    container: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    samples: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    history_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory_bytes: Option<FileStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpu_cores: Option<FileStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpu_memory_bytes: Option<FileGpuMemory>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpu_utilization: Option<FileGpuUtilization>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oom_kills: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory_limit_bytes: Option<f64>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional numbers p50, p99 and max"
)]
struct FileStats {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional numbers p99, max and capacity"
)]
struct FileGpuMemory {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    capacity: Option<f64>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional fractions avg and p99"
)]
struct FileGpuUtilization {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    avg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p99: Option<f64>,
}

/// JSON has no NaN or infinity; such values are written as "not measured".
fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

impl FileContainer {
    fn new(key: &ContainerKey, u: &Usage) -> FileContainer {
        FileContainer {
            namespace: key.namespace.clone(),
            kind: key.kind.clone(),
            name: key.name.clone(),
            container: key.container.clone(),
            samples: u.samples,
            history_seconds: finite(u.history_seconds),
            memory_bytes: u.memory_bytes.map(FileStats::from),
            cpu_cores: u.cpu_cores.map(FileStats::from),
            gpu_memory_bytes: u.gpu_memory_bytes.map(|g| FileGpuMemory {
                p99: finite(g.p99),
                max: finite(g.max),
                capacity: finite(g.capacity),
            }),
            gpu_utilization: u.gpu_utilization.map(|g| FileGpuUtilization {
                avg: finite(g.avg),
                p99: finite(g.p99),
            }),
            oom_kills: u.oom_kills,
            memory_limit_bytes: finite(u.memory_limit_bytes),
        }
    }
}

impl From<Stats> for FileStats {
    fn from(s: Stats) -> Self {
        FileStats {
            p50: finite(s.p50),
            p99: finite(s.p99),
            max: finite(s.max),
        }
    }
}

impl From<FileStats> for Stats {
    fn from(s: FileStats) -> Self {
        Stats {
            p50: s.p50,
            p99: s.p99,
            max: s.max,
        }
    }
}

fn container_context(index: usize, key: &ContainerKey) -> String {
    format!(
        "containers[{index}] ({}/{}/{}/{})",
        key.namespace, key.kind, key.name, key.container
    )
}

// ---------------------------------------------------------------------------------------
// Validation with positions.

/// The text being parsed, with a lazily built index of where each value is.
struct Doc<'a> {
    text: &'a str,
    name: &'a str,
    index: OnceCell<Index>,
}

/// Where every value is, by position and by path.
struct Index {
    spans: Vec<Span>,
    by_path: HashMap<String, usize>,
}

/// Checks for one container, all reporting with the same context.
struct ContainerCheck<'d, 'a> {
    doc: &'d Doc<'a>,
    base: String,
    context: String,
}

impl Doc<'_> {
    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let spans = index_values(self.text);
            let by_path = spans
                .iter()
                .enumerate()
                .map(|(i, s)| (s.path.clone(), i))
                .collect();
            Index { spans, by_path }
        })
    }

    fn span(&self, path: &str) -> Option<&Span> {
        let index = self.index();
        index.by_path.get(path).and_then(|&i| index.spans.get(i))
    }

    /// The number at `path` read from its literal with the standard library, which rounds
    /// correctly (serde_json without its `float_roundtrip` feature can be one ulp off, which
    /// would break `write` then `parse`). Falls back to serde_json's value.
    fn exact(&self, path: &str, value: Option<f64>) -> Option<f64> {
        let v = value?;
        Some(
            self.literal(path)
                .and_then(|s| s.parse::<f64>().ok())
                .unwrap_or(v),
        )
    }

    /// Arrays where the format has objects (which serde would read positionally).
    fn check_shapes(&self) -> Result<(), SnapshotError> {
        for span in &self.index().spans {
            let Some(expected) = object_expected(&span.path) else {
                continue;
            };
            if self.text.as_bytes().get(span.start) == Some(&b'[') {
                let (line, column) = line_column(self.text, span.start);
                return Err(SnapshotError {
                    file: self.name.to_owned(),
                    line: Some(line),
                    column: Some(column),
                    context: Some(span.path.clone()),
                    kind: Box::new(SnapshotErrorKind::Json(format!(
                        "invalid type: array, expected {expected}"
                    ))),
                });
            }
        }
        Ok(())
    }

    /// The value at `path` exactly as written in the file.
    fn literal(&self, path: &str) -> Option<String> {
        let span = self.span(path)?;
        self.text
            .get(span.start..span.end)
            .map(|s| s.trim().to_owned())
    }

    /// An error located at the value at `path` (`""` is the whole document: no position).
    fn error(&self, path: &str, context: Option<String>, kind: SnapshotErrorKind) -> SnapshotError {
        let position = if path.is_empty() {
            None
        } else {
            self.span(path).map(|s| line_column(self.text, s.start))
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
    fn json_error(&self, e: &serde_json::Error) -> SnapshotError {
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
            let offset = line_start(self.text, line)?.checked_add(e.column())?;
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
        self.index()
            .spans
            .iter()
            .filter(|s| s.start <= offset && offset < s.end)
            .min_by_key(|s| s.end - s.start)
            .map(|s| s.path.clone())
            .filter(|p| !p.is_empty())
    }

    fn check_container(
        &self,
        index: usize,
        mut c: FileContainer,
    ) -> Result<(ContainerKey, Usage), SnapshotError> {
        let exact =
            |field: &str, v: Option<f64>| self.exact(&format!("containers[{index}].{field}"), v);
        c.history_seconds = exact("history_seconds", c.history_seconds);
        c.memory_limit_bytes = exact("memory_limit_bytes", c.memory_limit_bytes);
        for (series, stats) in [
            ("memory_bytes", &mut c.memory_bytes),
            ("cpu_cores", &mut c.cpu_cores),
        ] {
            if let Some(s) = stats {
                s.p50 = exact(&format!("{series}.p50"), s.p50);
                s.p99 = exact(&format!("{series}.p99"), s.p99);
                s.max = exact(&format!("{series}.max"), s.max);
            }
        }
        if let Some(g) = &mut c.gpu_memory_bytes {
            g.p99 = exact("gpu_memory_bytes.p99", g.p99);
            g.max = exact("gpu_memory_bytes.max", g.max);
            g.capacity = exact("gpu_memory_bytes.capacity", g.capacity);
        }
        if let Some(g) = &mut c.gpu_utilization {
            g.avg = exact("gpu_utilization.avg", g.avg);
            g.p99 = exact("gpu_utilization.p99", g.p99);
        }
        let key = ContainerKey {
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
        if let Some(g) = c.gpu_utilization {
            for (field, value) in [("avg", g.avg), ("p99", g.p99)] {
                if let Some(v) = value {
                    let path = format!("gpu_utilization.{field}");
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
            ..Usage::default()
        };
        Ok((key, usage))
    }
}

impl ContainerCheck<'_, '_> {
    /// `field` is relative to the container, e.g. `memory_bytes.p99`.
    fn error(&self, field: &str, kind: SnapshotErrorKind) -> SnapshotError {
        let path = format!("{}.{field}", self.base);
        self.doc.error(&path, Some(self.context.clone()), kind)
    }

    fn literal(&self, field: &str, value: f64) -> String {
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
fn is_rfc3339(s: &str) -> bool {
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

// ---------------------------------------------------------------------------------------
// A tolerant JSON scanner that records where each value is, by path
// (`containers[3].memory_bytes.p99`). Used only to position errors, so it stops quietly at
// malformed text; a value left unfinished extends to the end of the text.

struct Span {
    path: String,
    /// Byte offset of the value's first character.
    start: usize,
    /// Byte offset just past the value.
    end: usize,
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}..{}", self.path, self.start, self.end)
    }
}

fn index_values(text: &str) -> Vec<Span> {
    let mut scanner = Scanner {
        b: text.as_bytes(),
        pos: 0,
        out: Vec::new(),
    };
    scanner.value(String::new(), 0);
    scanner.out
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    out: Vec<Span>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Scans one value; false if the text is malformed or ends before the value does.
    fn value(&mut self, path: String, depth: usize) -> bool {
        self.skip_ws();
        let start = self.pos;
        let complete = match self.peek() {
            _ if depth > MAX_SCAN_DEPTH => false,
            Some(b'{') => self.object(&path, depth),
            Some(b'[') => self.array(&path, depth),
            Some(b'"') => self.string().is_some(),
            Some(_) => self.scalar(),
            None => false,
        };
        let end = if complete { self.pos } else { self.b.len() };
        self.out.push(Span { path, start, end });
        complete
    }

    fn object(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return true;
        }
        loop {
            self.skip_ws();
            let Some(key) = self.string() else {
                return false;
            };
            self.skip_ws();
            if self.peek() != Some(b':') {
                return false;
            }
            self.pos += 1;
            let child = if path.is_empty() {
                key
            } else {
                format!("{path}.{key}")
            };
            if !self.value(child, depth + 1) {
                return false;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return true;
        }
        let mut index = 0usize;
        loop {
            if !self.value(format!("{path}[{index}]"), depth + 1) {
                return false;
            }
            index += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    /// A string at `pos`: its raw contents (escapes kept), with `pos` moved past it.
    fn string(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut i = start;
        loop {
            match self.b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
                None => {
                    self.pos = self.b.len();
                    return None;
                }
            }
        }
        let raw = String::from_utf8_lossy(self.b.get(start..i)?).into_owned();
        self.pos = i + 1;
        Some(raw)
    }

    /// A number, `true`, `false` or `null` (or any other run of non-structural bytes).
    fn scalar(&mut self) -> bool {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if matches!(
                c,
                b',' | b']' | b'}' | b'[' | b'{' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
            ) {
                break;
            }
            self.pos += 1;
        }
        self.pos > start
    }
}

/// Byte offset where 1-based `line` starts.
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .nth(line - 2)
        .map(|(i, _)| i + 1)
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = text
        .get(start..offset)
        .map_or(offset - start, |s| s.chars().count())
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/snapshots")
            .join(name)
    }

    fn read_fixture(name: &str) -> String {
        match std::fs::read_to_string(fixture(name)) {
            Ok(s) => s,
            Err(e) => panic!("fixture {name}: {e}"),
        }
    }

    fn ok(text: &str) -> UsageSet {
        match parse(text, "metrics.json") {
            Ok(set) => set,
            Err(e) => panic!("should parse: {e}"),
        }
    }

    fn err(text: &str) -> SnapshotError {
        match parse(text, "metrics.json") {
            Ok(set) => panic!("should be rejected, got {set:?}"),
            Err(e) => e,
        }
    }

    fn key(ns: &str, kind: &str, name: &str, container: &str) -> ContainerKey {
        ContainerKey {
            namespace: ns.into(),
            kind: kind.into(),
            name: name.into(),
            container: container.into(),
        }
    }

    /// A one-container document whose container body is `body`.
    fn doc(body: &str) -> String {
        format!(
            "{{\"version\": 1, \"containers\": [\n  {{\"namespace\": \"ml\", \"kind\": \"Deployment\", \"name\": \"llm\", \"container\": \"vllm\", {body}}}\n]}}"
        )
    }

    #[test]
    fn reads_the_documented_example() {
        let set = match read(&fixture("example.json")) {
            Ok(set) => set,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(set.window.as_deref(), Some("14d"));
        assert_eq!(set.source, "prometheus https://prom.example:9090");
        assert_eq!(set.containers.len(), 2);
        let u = set
            .get(&key("ml", "Deployment", "llm", "vllm"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(u.samples, Some(20160));
        assert_eq!(u.history_seconds, Some(1_209_600.0));
        assert_eq!(
            u.memory_bytes,
            Some(Stats {
                p50: Some(1.0e10),
                p99: Some(3.1e10),
                max: Some(3.3e10)
            })
        );
        assert_eq!(u.cpu_cores.and_then(|s| s.p99), Some(3.4));
        assert_eq!(
            u.gpu_memory_bytes,
            Some(GpuMemory {
                p99: Some(6.1e10),
                max: Some(6.3e10),
                capacity: Some(8.5e10)
            })
        );
        assert_eq!(
            u.gpu_utilization,
            Some(GpuUtilization {
                avg: Some(0.22),
                p99: Some(0.71)
            })
        );
        assert_eq!(u.oom_kills, Some(1));
        // Missing series stay missing, never zero.
        let sidecar = set
            .get(&key("ml", "Deployment", "llm", "log-shipper"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(sidecar.history_seconds, None);
        assert_eq!(sidecar.gpu_memory_bytes, None);
        assert_eq!(sidecar.oom_kills, None);
        assert_eq!(sidecar.memory_bytes.and_then(|s| s.p50), None);
        assert_eq!(sidecar.memory_bytes.and_then(|s| s.p99), Some(2.0e8));
    }

    #[test]
    fn write_is_deterministic_and_round_trips() {
        let set = ok(&read_fixture("example.json"));
        let written = write(&set, "2026-12-01T00:00:00Z");
        assert_eq!(written, write(&set, "2026-12-01T00:00:00Z"));
        // The canonical fixture is exactly what `write` produces.
        assert_eq!(written, read_fixture("canonical.json"));
        assert_eq!(ok(&written), set);
        // Without a source, the file name stands in.
        let bare = UsageSet {
            source: String::new(),
            ..set.clone()
        };
        let again = ok(&write(&bare, ""));
        assert_eq!(again.source, "snapshot metrics.json");
        assert_eq!(again.containers, set.containers);
        assert!(!write(&bare, "").contains("collected_at"));
    }

    #[test]
    fn write_omits_non_finite_values() {
        let mut set = UsageSet::default();
        set.containers.insert(
            key("a", "Job", "j", "c"),
            Usage {
                history_seconds: Some(f64::NAN),
                memory_bytes: Some(Stats {
                    p50: None,
                    p99: Some(f64::INFINITY),
                    max: Some(5.0),
                }),
                ..Usage::default()
            },
        );
        let back = ok(&write(&set, "2026-01-01T00:00:00Z"));
        let u = back.containers.values().next().cloned().unwrap_or_default();
        assert_eq!(u.history_seconds, None);
        assert_eq!(
            u.memory_bytes,
            Some(Stats {
                p50: None,
                p99: None,
                max: Some(5.0)
            })
        );
    }

    #[test]
    fn random_sets_round_trip() {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        for _ in 0..200 {
            let mut set = UsageSet {
                window: Some("7d".into()),
                source: "test".into(),
                containers: BTreeMap::new(),
            };
            for i in 0..rng.below(5) {
                let mut sorted = [rng.float(), rng.float(), rng.float()];
                sorted.sort_by(f64::total_cmp);
                let frac = (rng.below(1001) as f64) / 1000.0;
                let (history, kills) = (rng.float(), rng.below(4));
                let usage = Usage {
                    samples: Some(rng.next()),
                    history_seconds: rng.maybe(history),
                    memory_bytes: Some(Stats {
                        p50: Some(sorted[0]),
                        p99: rng.maybe(sorted[1]),
                        max: Some(sorted[2]),
                    }),
                    cpu_cores: rng.maybe(Stats {
                        p50: None,
                        p99: Some(sorted[0] / 1e9),
                        max: None,
                    }),
                    gpu_memory_bytes: Some(GpuMemory {
                        p99: Some(sorted[0]),
                        max: rng.maybe(sorted[1]),
                        capacity: Some(sorted[2]),
                    }),
                    gpu_utilization: Some(GpuUtilization {
                        avg: Some(frac),
                        p99: rng.maybe(1.0),
                    }),
                    oom_kills: rng.maybe(kills),
                    memory_limit_bytes: rng.maybe(sorted[2]),
                    ..Usage::default()
                };
                set.containers
                    .insert(key("ns", "Deployment", &format!("w{i}"), "c\"é"), usage);
            }
            let text = write(&set, "2026-12-01T00:00:00.5+01:00");
            assert_eq!(ok(&text), set, "{text}");
        }
    }

    #[test]
    fn error_fixtures() {
        let cases = [
            (
                "p99_above_max.json",
                "p99_above_max.json:9:45: containers[1] (ml/Deployment/llm/vllm): memory_bytes.p99 (3.1e10) is above max (3.0e10)",
            ),
            (
                "unsupported_version.json",
                "unsupported_version.json:1:13: unsupported snapshot version 2 (supported versions: 1)",
            ),
            (
                "unknown_key.json",
                "unknown_key.json:9:28: containers[0].memory_bytes: unknown field `p95`, expected one of `p50`, `p99`, `max`",
            ),
            (
                "wrong_type.json",
                "wrong_type.json:8:24: containers[0].samples: invalid type: string \"20160\", expected u64",
            ),
            (
                "negative.json",
                "negative.json:9:28: containers[0] (ml/Deployment/llm/vllm): cpu_cores.p50 (-0.5) is negative",
            ),
            (
                "utilisation_percent.json",
                "utilisation_percent.json:9:34: containers[0] (ml/Deployment/llm/vllm): gpu_utilization.avg (22) is outside 0..=1 (utilisation is a fraction: 0.71 means 71%)",
            ),
            (
                "duplicate_container.json",
                "duplicate_container.json:8:5: containers[2] (ml/Deployment/llm/vllm): duplicate container: the same namespace/kind/name/container is already at containers[0]",
            ),
            (
                "syntax_error.json",
                "syntax_error.json:10:3: containers[1]: expected value",
            ),
        ];
        let mut wrong = Vec::new();
        for (name, expected) in cases {
            let got = match parse(&read_fixture(name), name) {
                Ok(_) => format!("{name} was accepted"),
                Err(e) => e.to_string(),
            };
            if got != expected {
                wrong.push(format!("{name}:\n  got      {got}\n  expected {expected}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn version_errors() {
        let e = err(r#"{"containers": []}"#);
        assert!(matches!(*e.kind, SnapshotErrorKind::MissingVersion));
        assert_eq!(
            e.to_string(),
            "metrics.json: missing `version` (supported versions: 1)"
        );
        for (v, shown) in [
            ("\"1\"", "\"1\""),
            ("null", "null"),
            ("1.0", "1.0"),
            ("0", "0"),
            ("-1", "-1"),
        ] {
            let e = err(&format!(r#"{{"version": {v}, "containers": []}}"#));
            assert_eq!(
                e.to_string(),
                format!(
                    "metrics.json:1:13: unsupported snapshot version {shown} (supported versions: 1)"
                )
            );
        }
        // A future version is reported as such, not as unknown keys.
        let e = err(r#"{"version": 2, "series": {}}"#);
        assert!(matches!(
            *e.kind,
            SnapshotErrorKind::UnsupportedVersion { .. }
        ));
        // `containers` is required; an empty list is fine.
        let e = err(r#"{"version": 1}"#);
        assert_eq!(
            e.to_string(),
            "metrics.json:1:14: missing field `containers`"
        );
        assert!(ok(r#"{"version": 1, "containers": []}"#)
            .containers
            .is_empty());
    }

    #[test]
    fn json_shape_errors_name_the_path() {
        let cases = [
            ("[]", "metrics.json:1:1: invalid type: sequence, expected a metrics snapshot (a JSON object with `version` and `containers`)"),
            ("", "metrics.json:1:1: EOF while parsing a value"),
            (r#"{"version": 1, "containers": [], "extra": 1}"#, "metrics.json:1:40: unknown field `extra`, expected one of `version`, `window`, `collected_at`, `source`, `containers`"),
            (r#"{"version": 1, "containers": [7]}"#, "metrics.json:1:31: containers[0]: invalid type: integer `7`, expected a container object (namespace, kind, name, container and optional series)"),
            (r#"{"version": 1, "containers": [{"namespace": "a"}]}"#, "metrics.json:1:48: containers[0]: missing field `kind`"),
            (r#"{"version": 1, "version": 1, "containers": []}"#, "metrics.json:1:24: duplicate field `version`"),
            (r#"{"version": 1, "window": 14, "containers": []}"#, "metrics.json:1:27: window: invalid type: integer `14`, expected a string"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .map(|(text, expected)| (text, err(text).to_string(), expected))
            .filter(|(_, got, expected)| got != *expected)
            .map(|(text, got, expected)| format!("{text}\n  got      {got}\n  expected {expected}"))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        let e = err(&doc(r#""memory_bytes": {"p99": "31G"}"#));
        assert_eq!(
            e.to_string(),
            "metrics.json:2:109: containers[0].memory_bytes.p99: invalid type: string \"31G\", expected f64"
        );
        let e = err(&doc(r#""oom_kills": 1.5"#));
        assert!(
            e.to_string().starts_with(
                "metrics.json:2:96: containers[0].oom_kills: invalid type: floating point `1.5`"
            ),
            "{e}"
        );
        let e = err(&doc(r#""memory_bytes": {"p99": 1e400}"#));
        assert!(e.to_string().contains("number out of range"), "{e}");
        assert_eq!(e.line, Some(2));
        let e = err(&doc(r#""samples": -3"#));
        assert!(
            e.to_string()
                .contains("containers[0].samples: invalid value: integer `-3`, expected u64"),
            "{e}"
        );
    }

    #[test]
    fn arrays_are_not_read_positionally() {
        // serde's derived structs would read these as (p50, p99, max) or as the container's
        // fields in order; the format has objects only.
        let cases = [
            (
                r#"[1, null, null, null, []]"#,
                "metrics.json:1:1: invalid type: sequence, expected a metrics snapshot (a JSON object with `version` and `containers`)",
            ),
            (
                r#"{"version": 1, "containers": [["ml", "Deployment", "llm", "vllm"]]}"#,
                "metrics.json:1:31: containers[0]: invalid type: array, expected a container object (namespace, kind, name, container and optional series)",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(err(text).to_string(), expected);
        }
        let e = err(&doc(r#""memory_bytes": [1e10, 3.1e10, 3.3e10]"#));
        assert_eq!(
            e.to_string(),
            "metrics.json:2:97: containers[0].memory_bytes: invalid type: array, expected an object with optional numbers p50, p99 and max"
        );
        let e = err(&doc(r#""gpu_utilization": [0.2]"#));
        assert!(e
            .to_string()
            .contains("expected an object with optional fractions avg and p99"));
        let e = err(&doc(r#""gpu_memory_bytes": []"#));
        assert!(e
            .to_string()
            .contains("expected an object with optional numbers p99, max and capacity"));
    }

    #[test]
    fn numbers_are_read_exactly() {
        // serde_json's fast float parser (no `float_roundtrip` feature) reads this one ulp
        // low; the literal is re-read with the standard library.
        let v = 963_421.720_266_869_3_f64;
        let set = ok(&doc(&format!(r#""memory_bytes": {{"p99": {v:?}}}"#)));
        let u = set.containers.values().next().cloned().unwrap_or_default();
        assert_eq!(u.memory_bytes.and_then(|s| s.p99), Some(v));
        let set = ok(&doc(
            r#""memory_bytes": {"p99": 3.1E+10}, "history_seconds": 10800"#,
        ));
        let u = set.containers.values().next().cloned().unwrap_or_default();
        assert_eq!(u.memory_bytes.and_then(|s| s.p99), Some(3.1e10));
        assert_eq!(u.history_seconds, Some(10_800.0));
    }

    #[test]
    fn many_containers() {
        let body: Vec<String> = (0..3000)
            .map(|i| format!(r#"{{"namespace": "ns{}", "kind": "Deployment", "name": "w{i}", "container": "c", "memory_bytes": {{"p99": {i}.5, "max": {i}.75}}}}"#, i % 7))
            .collect();
        let text = format!(r#"{{"version": 1, "containers": [{}]}}"#, body.join(",\n"));
        let set = ok(&text);
        assert_eq!(set.containers.len(), 3000);
        assert_eq!(ok(&write(&set, "")), set);
    }

    #[test]
    fn semantic_errors() {
        let ctx = "containers[0] (ml/Deployment/llm/vllm)";
        let cases = [
            (r#""memory_bytes": {"p50": 5, "p99": 4}"#, "memory_bytes.p50 (5) is above p99 (4)"),
            // p50 is compared with max when p99 is missing.
            (r#""memory_bytes": {"p50": 5e9, "max": 4.5e9}"#, "memory_bytes.p50 (5e9) is above max (4.5e9)"),
            (r#""cpu_cores": {"p99": 3.5, "max": 3.4}"#, "cpu_cores.p99 (3.5) is above max (3.4)"),
            (r#""gpu_memory_bytes": {"p99": 6.1e10, "max": 9e10, "capacity": 8.5e10}"#, "gpu_memory_bytes.max (9e10) is above capacity (8.5e10)"),
            (r#""gpu_memory_bytes": {"p99": 9e10, "capacity": 8.5e10}"#, "gpu_memory_bytes.p99 (9e10) is above capacity (8.5e10)"),
            (r#""gpu_utilization": {"p99": 1.01}"#, "gpu_utilization.p99 (1.01) is outside 0..=1 (utilisation is a fraction: 0.71 means 71%)"),
            (r#""gpu_utilization": {"avg": -0.1}"#, "gpu_utilization.avg (-0.1) is negative"),
            (r#""history_seconds": -1"#, "history_seconds (-1) is negative"),
            (r#""gpu_memory_bytes": {"capacity": -8.5e10}"#, "gpu_memory_bytes.capacity (-8.5e10) is negative"),
        ];
        for (body, expected) in cases {
            let e = err(&doc(body));
            assert_eq!(e.context.as_deref(), Some(ctx), "{body}");
            assert_eq!(e.kind.to_string(), expected, "{body}");
            assert_eq!(e.line, Some(2), "{body}");
        }
        // Boundaries are allowed.
        ok(&doc(
            r#""memory_bytes": {"p50": 4, "p99": 4, "max": 4}, "gpu_utilization": {"avg": 0, "p99": 1}, "gpu_memory_bytes": {"max": 1, "capacity": 1}"#,
        ));
        // Explicit null means not measured.
        let set = ok(&doc(
            r#""memory_bytes": {"p50": null, "p99": 3}, "oom_kills": null"#,
        ));
        let u = set.containers.values().next().cloned().unwrap_or_default();
        assert_eq!(u.memory_bytes.and_then(|s| s.p50), None);
        assert_eq!(u.oom_kills, None);
    }

    #[test]
    fn identity_and_timestamp_errors() {
        let e = err(
            r#"{"version": 1, "containers": [{"namespace": "ml", "kind": "Deployment", "name": "", "container": "c"}]}"#,
        );
        assert_eq!(
            e.to_string(),
            "metrics.json:1:81: containers[0] (ml/Deployment//c): `name` is empty"
        );
        for ts in [
            "2026-12-01",
            "2026-13-01T00:00:00Z",
            "2026-12-01T00:00:00",
            "2026-12-01 00:00:00Z",
            "2026-12-01T00:00:00.Z",
            "2026-12-01T00:00:00+0100",
            "yesterday",
        ] {
            let e = err(&format!(
                r#"{{"version": 1, "collected_at": "{ts}", "containers": []}}"#
            ));
            assert_eq!(
                e.to_string(),
                format!("metrics.json:1:32: collected_at (\"{ts}\") is not an RFC 3339 timestamp such as \"2026-12-01T00:00:00Z\""),
            );
        }
        for ts in [
            "2026-12-01T00:00:00Z",
            "2026-12-01t23:59:60.123456789z",
            "2026-12-01T00:00:00-07:30",
        ] {
            ok(&format!(
                r#"{{"version": 1, "collected_at": "{ts}", "containers": []}}"#
            ));
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = match read(&fixture("does-not-exist.json")) {
            Ok(_) => panic!("should fail"),
            Err(e) => e,
        };
        assert!(matches!(*e.kind, SnapshotErrorKind::Io(_)));
        let msg = e.to_string();
        assert!(
            msg.contains("does-not-exist.json: cannot read the file: "),
            "{msg}"
        );
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        ok("\u{feff}{\"version\": 1, \"containers\": []}");
    }

    #[test]
    fn scanner_positions() {
        let text = "{\"a\": [1, {\"b\": \"x\\\"y\"}],\n \"c\": null}";
        let spans = index_values(text);
        let get = |p: &str| {
            spans
                .iter()
                .find(|s| s.path == p)
                .map(|s| &text[s.start..s.end])
        };
        assert_eq!(get("a[0]"), Some("1"));
        assert_eq!(get("a[1].b"), Some("\"x\\\"y\""));
        assert_eq!(get("c"), Some("null"));
        assert_eq!(get(""), Some(text));
        let c = spans.iter().find(|s| s.path == "c").map(|s| s.start);
        assert_eq!(c.map(|o| line_column(text, o)), Some((2, 7)));
        // Unfinished values extend to the end and never panic.
        for cut in 0..text.len() {
            let _ = index_values(&text[..cut]);
        }
        let deep = "[".repeat(10_000);
        assert!(index_values(&deep).len() <= MAX_SCAN_DEPTH + 2);
    }

    #[test]
    fn random_mutations_never_panic() {
        let base = read_fixture("example.json");
        const INSERTS: &[&str] = &[
            "\"", "{", "}", "[", "]", ",", ":", "-", "1e400", "null", "\"p95\"", "é", "\n", "\\",
            "0.5", "2", "true",
        ];
        let mut rng = Rng(0xC0FF_EE00_DEAD_BEEF);
        let mut rejected = 0;
        for _ in 0..3_000 {
            let mut text = base.clone();
            for _ in 0..=rng.below(3) {
                let mut at = rng.below(text.len() as u64 + 1) as usize;
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if rng.below(2) == 0 {
                    let mut end = at + 1 + rng.below(4) as usize;
                    while end < text.len() && !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end.min(text.len()), "");
                } else {
                    text.insert_str(at, INSERTS[rng.below(INSERTS.len() as u64) as usize]);
                }
            }
            match parse(&text, "m.json") {
                Ok(set) => {
                    // Whatever was accepted writes back to something equivalent.
                    assert_eq!(ok(&write(&set, "")).containers, set.containers);
                }
                Err(e) => {
                    rejected += 1;
                    let msg = e.to_string();
                    assert!(msg.starts_with("m.json"), "{msg}");
                    if let Some(line) = e.line {
                        assert!(line <= text.lines().count() + 1, "{msg}");
                    }
                }
            }
        }
        assert!(rejected > 1_000, "mutations too weak: {rejected}");
    }

    /// Deterministic xorshift64 generator for std-only property tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// A non-negative float with a wide range of magnitudes.
        fn float(&mut self) -> f64 {
            let mantissa = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
            mantissa * 10f64.powi(self.below(14) as i32)
        }

        fn maybe<T>(&mut self, v: T) -> Option<T> {
            (self.below(4) != 0).then_some(v)
        }
    }
}
