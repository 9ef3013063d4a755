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
//!    "gpu_model": "NVIDIA H100 80GB HBM3", "gpu_count": 1, "gpus_used": 1,
//!    "gpu_engine_active": {"avg": 0.12, "p99": 0.41}, "kv_cache_usage": {"p99": 0.35, "max": 0.5},
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
//! - GPU utilisation and engine activity (`avg`, `p99`) and KV-cache usage (`p99`, `max`) are
//!   fractions in `0..=1`, not percentages; `kv_cache_usage.p99 <= max`.
//! - `gpu_model` is a non-empty string; `gpu_count` and `gpus_used` are integers, and
//!   `gpus_used <= gpu_count`.
//! - `nodes` (optional, for cluster fit): `[{"name": "gpu-1", "labels": {…}, "allocatable":
//!   {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}}]`; names unique and non-empty,
//!   allocatable values non-negative Kubernetes quantities (strings).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::marker::PhantomData;
use std::path::Path;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use thiserror::Error;

use super::nodes::NodeInfo;
use super::usage::{ContainerKey, GpuMemory, GpuUtilization, KvCache, Stats, Usage, UsageSet};

/// The version [`write`] produces.
pub const VERSION: u64 = 1;

/// Versions [`parse`] accepts.
pub const SUPPORTED_VERSIONS: &[u64] = &[VERSION];

/// The largest snapshot [`read`] opens unless told otherwise (`--metrics-max-size`): a
/// snapshot a repository names is data from anyone, and reading costs memory.
pub const DEFAULT_MAX_BYTES: u64 = 512 * 1024 * 1024;

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
    /// Larger than the cap [`read`] was given.
    #[error("larger than {}, the most gpulint reads (raise it with --metrics-max-size)", show_size(*max))]
    TooLarge { max: u64 },
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
    /// A node's allocatable value is not a non-negative Kubernetes quantity.
    #[error("{field} ({value}) is not a non-negative Kubernetes quantity such as \"8\", \"500m\" or \"1Ti\"")]
    InvalidQuantity { field: String, value: String },
    /// Two nodes with one name, or a node without a name.
    #[error("node name {name:?} is empty or already used")]
    DuplicateNode { name: String },
    /// `collected_at` is not an RFC 3339 timestamp.
    #[error(
        "collected_at ({value}) is not an RFC 3339 timestamp such as \"2026-12-01T00:00:00Z\""
    )]
    InvalidTimestamp { value: String },
}

/// `512 MiB`, or bytes when not a whole number of MiB.
fn show_size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn supported_versions() -> String {
    SUPPORTED_VERSIONS
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads and validates a snapshot file of at most `max_bytes`; errors name the file by `path`.
///
/// The file is streamed: each container is checked and stored as it is read, so memory holds
/// the result, never the text. Only when the file is invalid is it read again whole, by
/// [`parse`], to name the line and column of the first problem.
pub fn read(path: &Path, max_bytes: u64) -> Result<UsageSet, SnapshotError> {
    let name = path.display().to_string();
    let fail = |kind: SnapshotErrorKind| SnapshotError {
        file: name.clone(),
        line: None,
        column: None,
        context: None,
        kind: Box::new(kind),
    };
    let too_large = || fail(SnapshotErrorKind::TooLarge { max: max_bytes });
    let file = std::fs::File::open(path).map_err(|e| fail(SnapshotErrorKind::Io(e)))?;
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > max_bytes)
    {
        return Err(too_large());
    }
    let mut reader = BufReader::with_capacity(1 << 20, Capped::new(file, max_bytes));
    let bom = reader
        .fill_buf()
        .map_err(|e| fail(SnapshotErrorKind::Io(e)))?
        .starts_with("\u{feff}".as_bytes());
    if bom {
        reader.consume(3);
    }
    let doc = Doc {
        text: None,
        name: &name,
    };
    let streamed = decode(serde_json::Deserializer::from_reader(&mut reader), &doc);
    if reader.get_ref().exceeded {
        return Err(too_large());
    }
    match streamed {
        Ok(set) => Ok(set),
        Err(e) if matches!(*e.kind, SnapshotErrorKind::Io(_)) => Err(e),
        // Invalid: read the text (within the cap) to say where.
        Err(streamed) => {
            let mut text = String::new();
            let read = std::fs::File::open(path)
                .and_then(|f| Capped::new(f, max_bytes).read_to_string(&mut text));
            match read {
                Ok(_) => parse(&text, &name).and(Err(streamed)),
                Err(_) => Err(streamed),
            }
        }
    }
}

/// A reader that fails once more than `max` bytes have been read: a file that grows, or a
/// FIFO, never makes [`read`] hold more than the cap.
struct Capped<R> {
    inner: R,
    left: u64,
    exceeded: bool,
}

impl<R> Capped<R> {
    fn new(inner: R, max: u64) -> Capped<R> {
        Capped {
            inner,
            left: max,
            exceeded: false,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the cap tells "exactly max" from "more".
        let want = buf
            .len()
            .min(usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX));
        let n = self.inner.read(buf.get_mut(..want).unwrap_or_default())?;
        if n as u64 > self.left {
            self.exceeded = true;
            return Err(std::io::Error::other("the snapshot is larger than the cap"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Parses and validates snapshot text; `name` is the file name used in errors.
///
/// The returned set's `source` is the file's `source` when present (so that [`write`] then
/// `parse` round-trips), else `snapshot <name>`. `collected_at` is checked, then dropped.
pub fn parse(text: &str, name: &str) -> Result<UsageSet, SnapshotError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc = Doc {
        text: Some(text),
        name,
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
    decode(serde_json::Deserializer::from_str(text), &doc)
}

/// Reads a version-1 document from `de`, checking each container as it comes: the one
/// decoder of [`read`] (streamed, no text) and [`parse`] (text, for positions).
fn decode<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    doc: &Doc<'_>,
) -> Result<UsageSet, SnapshotError> {
    let failure = RefCell::new(None);
    let decoded = FileSeed {
        doc,
        failure: &failure,
    }
    .deserialize(&mut de)
    .and_then(|set| de.end().map(|()| set));
    match decoded {
        Ok(set) => Ok(set),
        Err(e) => Err(match failure.into_inner() {
            Some(checked) => checked,
            None if e.is_io() => {
                doc.error("", None, SnapshotErrorKind::Io(std::io::Error::other(e)))
            }
            None => doc.json_error(&e),
        }),
    }
}

/// The top-level object: `version`, `window`, `collected_at`, `source`, `containers`.
struct FileSeed<'d, 'a> {
    doc: &'d Doc<'a>,
    /// A check that failed inside the decoder (serde errors cannot carry it).
    failure: &'d RefCell<Option<SnapshotError>>,
}

const FILE_FIELDS: &[&str] = &[
    "version",
    "window",
    "collected_at",
    "source",
    "containers",
    "nodes",
];

impl<'de> DeserializeSeed<'de> for FileSeed<'_, '_> {
    type Value = UsageSet;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<UsageSet, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FileSeed<'_, '_> {
    type Value = UsageSet;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECT_FILE)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UsageSet, A::Error> {
        let mut version: Option<u64> = None;
        let mut window: Option<Option<String>> = None;
        let mut collected_at: Option<Option<String>> = None;
        let mut source: Option<Option<String>> = None;
        let mut containers: Option<BTreeMap<ContainerKey, Usage>> = None;
        let mut nodes: Option<Vec<NodeInfo>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" if version.is_some() => {
                    return Err(de::Error::duplicate_field("version"))
                }
                "version" => {
                    let v: u64 = map.next_value()?;
                    if !SUPPORTED_VERSIONS.contains(&v) {
                        return Err(de::Error::custom(format!(
                            "unsupported snapshot version {v}"
                        )));
                    }
                    version = Some(v);
                }
                "window" if window.is_some() => return Err(de::Error::duplicate_field("window")),
                "window" => window = Some(map.next_value()?),
                "collected_at" if collected_at.is_some() => {
                    return Err(de::Error::duplicate_field("collected_at"))
                }
                "collected_at" => {
                    let ts: Option<String> = map.next_value()?;
                    if let Some(ts) = ts.as_deref().filter(|ts| !is_rfc3339(ts)) {
                        let value = self
                            .doc
                            .literal("collected_at")
                            .unwrap_or_else(|| format!("{ts:?}"));
                        return Err(self.fail(self.doc.error(
                            "collected_at",
                            None,
                            SnapshotErrorKind::InvalidTimestamp { value },
                        )));
                    }
                    collected_at = Some(ts);
                }
                "source" if source.is_some() => return Err(de::Error::duplicate_field("source")),
                "source" => source = Some(map.next_value()?),
                "containers" if containers.is_some() => {
                    return Err(de::Error::duplicate_field("containers"))
                }
                "containers" => {
                    containers = Some(map.next_value_seed(ContainersSeed {
                        doc: self.doc,
                        failure: self.failure,
                    })?)
                }
                "nodes" if nodes.is_some() => return Err(de::Error::duplicate_field("nodes")),
                "nodes" => {
                    let list: Option<Vec<NodeInfo>> = map.next_value()?;
                    let list = list.unwrap_or_default();
                    check_nodes(self.doc, &list).map_err(|e| self.fail(e))?;
                    nodes = Some(list);
                }
                other => return Err(de::Error::unknown_field(other, FILE_FIELDS)),
            }
        }
        if version.is_none() {
            return Err(de::Error::missing_field("version"));
        }
        let containers = containers.ok_or_else(|| de::Error::missing_field("containers"))?;
        Ok(UsageSet {
            window: window.flatten(),
            source: source
                .flatten()
                .unwrap_or_else(|| format!("snapshot {}", self.doc.name)),
            containers,
            nodes: nodes.unwrap_or_default(),
        })
    }
}

impl FileSeed<'_, '_> {
    /// Keeps `checked` for [`decode`] and stops the decoder.
    fn fail<E: de::Error>(&self, checked: SnapshotError) -> E {
        *self.failure.borrow_mut() = Some(checked);
        E::custom("invalid snapshot")
    }
}

/// Node names unique and non-empty, allocatable values non-negative quantities.
fn check_nodes(doc: &Doc, nodes: &[NodeInfo]) -> Result<(), SnapshotError> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        if node.name.is_empty() || !seen.insert(node.name.as_str()) {
            let path = format!("nodes[{i}].name");
            let kind = SnapshotErrorKind::DuplicateNode {
                name: node.name.clone(),
            };
            return Err(doc.error(&path, Some(format!("nodes[{i}]")), kind));
        }
        for (resource, value) in &node.allocatable {
            let ok = value
                .trim()
                .parse::<crate::k8s::quantity::Quantity>()
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

/// The `containers` array, each entry checked and stored as soon as it is read.
struct ContainersSeed<'d, 'a> {
    doc: &'d Doc<'a>,
    failure: &'d RefCell<Option<SnapshotError>>,
}

impl<'de> DeserializeSeed<'de> for ContainersSeed<'_, '_> {
    type Value = BTreeMap<ContainerKey, Usage>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ContainersSeed<'_, '_> {
    type Value = BTreeMap<ContainerKey, Usage>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of container objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let seed = FileSeed {
            doc: self.doc,
            failure: self.failure,
        };
        // Each key with the index of its entry, to name the first of two duplicates.
        let mut containers: BTreeMap<ContainerKey, (usize, Usage)> = BTreeMap::new();
        let mut i = 0usize;
        while let Some(c) = seq.next_element_seed(ObjectSeed::<FileContainer>::REQUIRED)? {
            let Some(c) = c else {
                return Err(de::Error::invalid_type(
                    de::Unexpected::Unit,
                    &EXPECT_CONTAINER,
                ));
            };
            let (key, usage) = self.doc.check_container(i, c).map_err(|e| seed.fail(e))?;
            if let Some(&(first, _)) = containers.get(&key) {
                let path = format!("containers[{i}]");
                let context = container_context(i, &key);
                return Err(seed.fail(self.doc.error(
                    &path,
                    Some(context),
                    SnapshotErrorKind::DuplicateContainer { first },
                )));
            }
            containers.insert(key, (i, usage));
            i += 1;
        }
        Ok(containers.into_iter().map(|(k, (_, u))| (k, u)).collect())
    }
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
        nodes: set.nodes.clone(),
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

/// The format's objects, each with what an error says was expected.
trait ObjectShape {
    const EXPECTED: &'static str;
}

/// An object of the format, never an array: serde's derived structs would also read
/// `[a, b, c]` positionally, which the format does not allow. `null` is "not measured" where
/// the value is optional.
struct ObjectSeed<T> {
    nullable: bool,
    shape: PhantomData<T>,
}

impl<T> ObjectSeed<T> {
    const REQUIRED: ObjectSeed<T> = ObjectSeed {
        nullable: false,
        shape: PhantomData,
    };
    const OPTIONAL: ObjectSeed<T> = ObjectSeed {
        nullable: true,
        shape: PhantomData,
    };
}

impl<'de, T: Deserialize<'de> + ObjectShape> DeserializeSeed<'de> for ObjectSeed<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: Deserialize<'de> + ObjectShape> Visitor<'de> for ObjectSeed<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTED)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Option<T>, A::Error> {
        Err(de::Error::invalid_type(
            de::Unexpected::Other("array"),
            &self,
        ))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        if self.nullable {
            Ok(None)
        } else {
            Err(E::invalid_type(de::Unexpected::Unit, &self))
        }
    }
}

/// `deserialize_with` for the optional objects inside a container.
fn optional_object<'de, D: Deserializer<'de>, T: Deserialize<'de> + ObjectShape>(
    d: D,
) -> Result<Option<T>, D::Error> {
    ObjectSeed::<T>::OPTIONAL.deserialize(d)
}

impl ObjectShape for FileContainer {
    const EXPECTED: &'static str = EXPECT_CONTAINER;
}
impl ObjectShape for FileStats {
    const EXPECTED: &'static str = EXPECT_STATS;
}
impl ObjectShape for FileGpuMemory {
    const EXPECTED: &'static str = EXPECT_GPU_MEMORY;
}
impl ObjectShape for FileGpuUtilization {
    const EXPECTED: &'static str = EXPECT_GPU_UTILIZATION;
}
impl ObjectShape for FileKvCache {
    const EXPECTED: &'static str = "an object with optional fractions p99 and max";
}

/// The document as [`write`] writes it ([`decode`] reads it entry by entry).
#[derive(Serialize)]
struct FileV1 {
    version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    collected_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    containers: Vec<FileContainer>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    nodes: Vec<NodeInfo>,
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
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    memory_bytes: Option<FileStats>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    cpu_cores: Option<FileStats>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    gpu_memory_bytes: Option<FileGpuMemory>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    gpu_utilization: Option<FileGpuUtilization>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oom_kills: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory_limit_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpu_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpu_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpus_used: Option<u64>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    gpu_engine_active: Option<FileGpuUtilization>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    kv_cache_usage: Option<FileKvCache>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional fractions p99 and max"
)]
struct FileKvCache {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
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
            gpu_model: u.gpu_model.clone(),
            gpu_count: u.gpu_count,
            gpus_used: u.gpus_used,
            gpu_engine_active: u.gpu_engine_active.map(|g| FileGpuUtilization {
                avg: finite(g.avg),
                p99: finite(g.p99),
            }),
            kv_cache_usage: u.kv_cache_usage.map(|k| FileKvCache {
                p99: finite(k.p99),
                max: finite(k.max),
            }),
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

/// The document being decoded: its name and, when [`parse`] has it, its text, which is
/// scanned again only to position an error (a streamed [`read`] has no text: no positions).
struct Doc<'a> {
    text: Option<&'a str>,
    name: &'a str,
}

/// Checks for one container, all reporting with the same context.
struct ContainerCheck<'d, 'a> {
    doc: &'d Doc<'a>,
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
    fn literal(&self, path: &str) -> Option<String> {
        let span = self.span(path)?;
        self.text?
            .get(span.start..span.end)
            .map(|s| s.trim().to_owned())
    }

    /// An error located at the value at `path` (`""` is the whole document: no position).
    fn error(&self, path: &str, context: Option<String>, kind: SnapshotErrorKind) -> SnapshotError {
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

    fn check_container(
        &self,
        index: usize,
        c: FileContainer,
    ) -> Result<(ContainerKey, Usage), SnapshotError> {
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

/// Calls `visit` with each value of `text`, innermost first, until it returns true.
fn scan_values(text: &str, visit: &mut dyn FnMut(Span) -> bool) {
    let mut scanner = Scanner {
        b: text.as_bytes(),
        pos: 0,
        visit,
        stopped: false,
    };
    scanner.value(String::new(), 0);
}

struct Scanner<'a, 'v> {
    b: &'a [u8],
    pos: usize,
    visit: &'v mut dyn FnMut(Span) -> bool,
    /// `visit` asked to stop: every level unwinds.
    stopped: bool,
}

impl Scanner<'_, '_> {
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
        if self.stopped {
            return false;
        }
        let end = if complete { self.pos } else { self.b.len() };
        self.stopped = (self.visit)(Span { path, start, end });
        complete && !self.stopped
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
        let set = match read(&fixture("example.json"), DEFAULT_MAX_BYTES) {
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
    fn nodes_round_trip_and_bad_ones_are_errors_with_their_place() {
        let text = "{\"version\": 1, \"containers\": [],\n \"nodes\": [{\"name\": \"h100-1\", \"labels\": {\"nvidia.com/gpu.product\": \"NVIDIA-H100-80GB-HBM3\"},\n   \"allocatable\": {\"cpu\": \"191500m\", \"memory\": \"2Ti\", \"nvidia.com/gpu\": \"8\"}}]}";
        let set = ok(text);
        assert_eq!(set.nodes.len(), 1);
        assert_eq!(set.nodes[0].allocatable["nvidia.com/gpu"], "8");
        assert_eq!(ok(&write(&set, "")), set, "round trip");
        let bad = text.replace("\"8\"", "\"eight\"");
        let e = parse(&bad, "m.json").expect_err("not a quantity");
        assert_eq!((e.line, e.column), (Some(3), Some(73)), "{e}");
        assert!(e.to_string().contains("nodes[0] (h100-1): allocatable.nvidia.com/gpu (\"eight\") is not a non-negative Kubernetes quantity"), "{e}");
        let twice = text.replace("}}]}", "}}, {\"name\": \"h100-1\"}]}");
        let e = parse(&twice, "m.json").expect_err("duplicate");
        assert!(
            e.to_string()
                .contains("node name \"h100-1\" is empty or already used"),
            "{e}"
        );
        let unknown = text.replace("\"labels\"", "\"label\"");
        assert!(parse(&unknown, "m.json").is_err());
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
                nodes: Vec::new(),
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

    /// Writes `text` to a file and reads it back both ways: [`read`] (streamed) and [`parse`]
    /// (whole text) must agree on the verdict and, word for word, on the message.
    fn assert_read_agrees_with_parse(dir: &Path, n: usize, text: &str) {
        let path = dir.join(format!("m{n}.json"));
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        let name = path.display().to_string();
        let show = |r: Result<UsageSet, SnapshotError>| match r {
            Ok(set) => format!("ok {set:?}"),
            Err(e) => format!("error {e}"),
        };
        let streamed = show(read(&path, DEFAULT_MAX_BYTES));
        let whole = show(parse(text, &name));
        assert_eq!(streamed, whole, "for the text:\n{text}");
    }

    #[test]
    fn read_streams_to_the_same_verdict_as_parse() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut n = 0;
        for entry in std::fs::read_dir(fixture("")).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_read_agrees_with_parse(dir.path(), n, &text);
            assert_read_agrees_with_parse(dir.path(), n + 1, &format!("\u{feff}{text}"));
            n += 2;
        }
        assert!(n >= 20, "the snapshot fixtures are missing: {n}");
        // Errors in every position, in document order: a JSON error after a semantic one
        // and the other way round, keys out of order, `version` last.
        for text in [
            r#"{"containers": [{"namespace": "a", "kind": "Job", "name": "", "container": "c"}], "version": 1} x"#,
            r#"{"containers": [], "version": 2}"#,
            r#"{"containers": [], "version": 1, "containers": []}"#,
            r#"{"version": 1, "containers": [null]}"#,
            r#"{"version": 1, "containers": [{"namespace": "a", "kind": "Job", "name": "n", "container": "c", "memory_bytes": null}], "window": "7d"}"#,
            r#"{"version": 1}"#,
            "",
        ] {
            assert_read_agrees_with_parse(dir.path(), n, text);
            n += 1;
        }
        let base = read_fixture("example.json");
        let mut rng = Rng(0x005E_ED0F_5AFE);
        for _ in 0..400 {
            let mut text = base.clone();
            let mut at = rng.below(text.len() as u64) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let insert = ["\"", "{", "]", ",", "-1", "null", "[]", "\"p95\": 1,", "7"];
            text.insert_str(at, insert[rng.below(insert.len() as u64) as usize]);
            assert_read_agrees_with_parse(dir.path(), n, &text);
            n += 1;
        }
    }

    #[test]
    fn read_refuses_more_than_its_cap() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("m.json");
        let text = read_fixture("example.json");
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        let size = text.len() as u64;
        assert!(read(&path, size).is_ok(), "exactly the cap is read");
        let e = read(&path, size - 1).err().map(|e| e.to_string());
        assert_eq!(
            e,
            Some(format!(
                "{}: larger than {} bytes, the most gpulint reads (raise it with --metrics-max-size)",
                path.display(),
                size - 1
            ))
        );
        // A FIFO has no size to check first: the read itself stops at the cap, although the
        // writer never ends (a valid start, then blanks forever).
        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "mkfifo failed");
        let writer_path = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write as _;
            let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(writer_path) else {
                return;
            };
            let _ = w.write_all(br#"{"version": 1, "containers": []"#);
            let blanks = [b' '; 4096];
            while w.write_all(&blanks).is_ok() {}
        });
        let e = read(&fifo, 1 << 20).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| matches!(*e.kind, SnapshotErrorKind::TooLarge { max: 1_048_576 })),
            "{e:?}"
        );
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
            (r#"{"version": 1, "containers": [], "extra": 1}"#, "metrics.json:1:40: unknown field `extra`, expected one of `version`, `window`, `collected_at`, `source`, `containers`, `nodes`"),
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
    fn gpu_sizing_fields_round_trip_and_are_checked() {
        let text = doc(
            r#""gpu_model": "NVIDIA H100 80GB HBM3", "gpu_count": 8, "gpus_used": 4, "gpu_engine_active": {"avg": 0.12, "p99": 0.41}, "kv_cache_usage": {"p99": 0.35, "max": 0.5}"#,
        );
        let set = ok(&text);
        let u = set.containers.values().next().cloned().unwrap_or_default();
        assert_eq!(u.gpu_model.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!((u.gpu_count, u.gpus_used), (Some(8), Some(4)));
        assert_eq!(u.gpu_engine_active.and_then(|g| g.p99), Some(0.41));
        assert_eq!(u.kv_cache_usage.and_then(|k| k.max), Some(0.5));
        assert_eq!(ok(&write(&set, "")), set);
        for (body, want) in [
            (
                r#""gpu_count": 2, "gpus_used": 3"#,
                "gpus_used (3) is above gpu_count (2)",
            ),
            (
                r#""kv_cache_usage": {"p99": 0.6, "max": 0.5}"#,
                "kv_cache_usage.p99 (0.6) is above max (0.5)",
            ),
            (
                r#""kv_cache_usage": {"max": 35}"#,
                "kv_cache_usage.max (35) is outside 0..=1",
            ),
            (
                r#""gpu_engine_active": {"avg": 1.5}"#,
                "gpu_engine_active.avg (1.5) is outside 0..=1",
            ),
            ("\"gpu_model\": \"\"", "`gpu_model` is empty"),
            (r#""gpu_count": 1.5"#, "invalid type"),
            (r#""kv_cache_usage": {"p50": 0.1}"#, "unknown field `p50`"),
        ] {
            let e = err(&doc(body)).to_string();
            assert!(e.contains(want), "{body}: {e}");
            assert!(e.starts_with("metrics.json:2:"), "{e}");
        }
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
        let e = match read(&fixture("does-not-exist.json"), DEFAULT_MAX_BYTES) {
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

    fn index_values(text: &str) -> Vec<Span> {
        let mut spans = Vec::new();
        scan_values(text, &mut |span| {
            spans.push(span);
            false
        });
        spans
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
