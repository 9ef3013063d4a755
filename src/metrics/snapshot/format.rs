//! The snapshot file's shape: the serde structs of version 1 (written by `write`) and the
//! seeds that decode a document container by container, refusing arrays where objects belong.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::validate::{check_nodes, container_context, is_rfc3339, Doc};
use super::{SnapshotError, SnapshotErrorKind, SUPPORTED_VERSIONS};
use crate::metrics::nodes::NodeInfo;
use crate::metrics::usage::{Builder, ContainerKey, Containers, Stats, Usage, UsageSet};

/// The top-level object: `version`, `window`, `collected_at`, `source`, `containers`.
pub(super) struct FileSeed<'d, 'a> {
    pub(super) doc: &'d Doc<'a>,
    /// A check that failed inside the decoder (serde errors cannot carry it).
    pub(super) failure: &'d RefCell<Option<SnapshotError>>,
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
        let mut containers: Option<Containers> = None;
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
            several_clusters: Default::default(),
        })
    }
}

impl FileSeed<'_, '_> {
    /// Keeps `checked` for [`decode`](super::decode) and stops the decoder.
    fn fail<E: de::Error>(&self, checked: SnapshotError) -> E {
        *self.failure.borrow_mut() = Some(checked);
        E::custom("invalid snapshot")
    }
}

/// The `containers` array, each entry checked and stored as soon as it is read.
struct ContainersSeed<'d, 'a> {
    pub(super) doc: &'d Doc<'a>,
    pub(super) failure: &'d RefCell<Option<SnapshotError>>,
}

impl<'de> DeserializeSeed<'de> for ContainersSeed<'_, '_> {
    type Value = Containers;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ContainersSeed<'_, '_> {
    type Value = Containers;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of container objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let seed = FileSeed {
            doc: self.doc,
            failure: self.failure,
        };
        // The entries as read, kept compactly, and each key's hash to find a duplicate as it
        // comes (9 bytes an entry, dropped at the end). A hash seen before is a duplicate only
        // if an entry has the same key; finding it is a pass over them, done once: a duplicate
        // is an error, and two keys with one 64-bit hash do not happen.
        let mut containers = Builder::default();
        let mut hashes: HashSet<u64> = HashSet::new();
        let mut i = 0usize;
        while let Some(c) = seq.next_element_seed(ObjectSeed::<FileContainer>::REQUIRED)? {
            let Some(c) = c else {
                return Err(de::Error::invalid_type(
                    de::Unexpected::Unit,
                    &EXPECT_CONTAINER,
                ));
            };
            let (key, usage) = self.doc.check_container(i, c).map_err(|e| seed.fail(e))?;
            if !hashes.insert(key_hash(&key)) {
                if let Some(first) = containers.position(&key) {
                    let path = format!("containers[{i}]");
                    let context = container_context(i, &key);
                    return Err(seed.fail(self.doc.error(
                        &path,
                        Some(context),
                        SnapshotErrorKind::DuplicateContainer { first },
                    )));
                }
            }
            containers.push(key, usage);
            i += 1;
        }
        drop(hashes);
        Ok(containers.build())
    }
}

/// A hash of `key`, the same for equal keys.
fn key_hash(key: &ContainerKey) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
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
pub(super) struct Probe {
    /// `Some(Null)` for `"version": null`, `None` when the key is missing.
    pub(super) version: Option<serde_json::Value>,
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

/// The document as [`write`](super::write) writes it ([`decode`](super::decode) reads it entry by entry).
#[derive(Serialize)]
pub(super) struct FileV1 {
    pub(super) version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) window: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) collected_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) source: Option<String>,
    pub(super) containers: Vec<FileContainer>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) nodes: Vec<NodeInfo>,
}

#[derive(Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a container object (namespace, kind, name, container and optional series)"
)]
pub(super) struct FileContainer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cluster: Option<String>,
    pub(super) namespace: String,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) container: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) samples: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) history_seconds: Option<f64>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) memory_bytes: Option<FileStats>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) cpu_cores: Option<FileStats>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) gpu_memory_bytes: Option<FileGpuMemory>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) gpu_utilization: Option<FileGpuUtilization>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) oom_kills: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) memory_limit_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) gpu_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) gpu_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) gpus_used: Option<u64>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) gpu_engine_active: Option<FileGpuUtilization>,
    #[serde(
        default,
        deserialize_with = "optional_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) kv_cache_usage: Option<FileKvCache>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional fractions p99 and max"
)]
pub(super) struct FileKvCache {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max: Option<f64>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional numbers p50, p99 and max"
)]
pub(super) struct FileStats {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max: Option<f64>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional numbers p99, max and capacity"
)]
pub(super) struct FileGpuMemory {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) capacity: Option<f64>,
}

#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with optional fractions avg and p99"
)]
pub(super) struct FileGpuUtilization {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) avg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) p99: Option<f64>,
}

/// JSON has no NaN or infinity; such values are written as "not measured".
fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

impl FileContainer {
    pub(super) fn new(key: &ContainerKey, u: &Usage) -> FileContainer {
        FileContainer {
            cluster: key.cluster.clone(),
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
