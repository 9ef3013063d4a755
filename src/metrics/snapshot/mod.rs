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
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::DeserializeSeed;
use thiserror::Error;

use super::usage::UsageSet;

mod format;
mod scan;
mod validate;

use format::{FileContainer, FileSeed, FileV1, Probe};
use validate::Doc;

/// The version [`write`] produces.
pub const VERSION: u64 = 1;

/// Versions [`parse`] accepts.
pub const SUPPORTED_VERSIONS: &[u64] = &[VERSION];

/// The largest snapshot [`read`] opens unless told otherwise (`--metrics-max-size`): a
/// snapshot a repository names is data from anyone, and reading costs memory.
pub const DEFAULT_MAX_BYTES: u64 = 512 * 1024 * 1024;

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
            .map(|(key, usage)| FileContainer::new(&key, &usage))
            .collect(),
        nodes: set.nodes.clone(),
    };
    // Cannot fail: plain structs with string keys and no custom serialisers.
    let mut out = serde_json::to_string_pretty(&file).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::usage::{ContainerKey, GpuMemory, GpuUtilization, Stats, Usage};

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
            cluster: None,
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
        let u = back.containers.values().next().unwrap_or_default();
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
                several_clusters: Default::default(),
                window: Some("7d".into()),
                source: "test".into(),
                containers: Default::default(),
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
        let u = set.containers.values().next().unwrap_or_default();
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
        let u = set.containers.values().next().unwrap_or_default();
        assert_eq!(u.memory_bytes.and_then(|s| s.p99), Some(v));
        let set = ok(&doc(
            r#""memory_bytes": {"p99": 3.1E+10}, "history_seconds": 10800"#,
        ));
        let u = set.containers.values().next().unwrap_or_default();
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
        let u = set.containers.values().next().unwrap_or_default();
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
