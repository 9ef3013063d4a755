//! The measured containers of a [`UsageSet`](super::UsageSet), held compactly (issue 28): a
//! snapshot of a million small containers must fit in about twice its file's size, and a map
//! of [`ContainerKey`] to [`Usage`] took about 1 KiB a container (a 360-byte `Usage` that is
//! mostly empty GPU fields, a 120-byte key with four small heap strings, map nodes two thirds
//! full).
//!
//! Each container is one fixed [`Entry`]: the ids of its cluster, namespace, kind and
//! container in one table of distinct texts (they repeat: a few namespaces, `Deployment`,
//! `main`), its name in one string of all names, and the figures it has in one array of all
//! figures, with a mask saying which ones. Entries are sorted by key: a lookup is a binary
//! search, iteration is in key order. A [`Usage`] is made whenever one is asked for.

use std::collections::HashMap;
use std::fmt;

use super::{ContainerKey, Usage};

/// The measured containers, each key once, in key order.
#[derive(Clone, Default)]
pub struct Containers {
    /// Every distinct cluster, namespace, kind and container name, sorted: an id is a position,
    /// so ids compare as their texts do.
    texts: Vec<Box<str>>,
    /// The workload names and GPU models, one after another.
    strings: String,
    /// The figures there are, in [`walk`]'s order: counts as they are, floats as their bits
    /// (so every value reads back exactly), a text as its start and length in `strings`.
    figures: Vec<u64>,
    /// Sorted by key, no two equal.
    entries: Vec<Entry>,
}

/// One container. 64 bytes; what was measured is in `figures` (three for a memory series).
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Text id + 1; 0: the figures name no cluster (first, as `None` sorts).
    cluster: usize,
    namespace: usize,
    kind: usize,
    container: usize,
    /// The workload's name: where it starts in `strings`, and its length.
    name: usize,
    name_len: usize,
    /// Where its figures start.
    figures: usize,
    /// Which of [`walk`]'s slots are there, one bit each in its order.
    mask: u64,
}

impl Entry {
    /// The key's ids, in [`ContainerKey`]'s order except the name.
    fn ids(&self) -> [usize; 3] {
        [self.cluster, self.namespace, self.kind]
    }
}

impl Containers {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The figures of `key`, if measured.
    pub fn get(&self, key: &ContainerKey) -> Option<Usage> {
        self.usage_at(self.position(key)?)
    }

    pub fn contains_key(&self, key: &ContainerKey) -> bool {
        self.position(key).is_some()
    }

    /// Where `key` is in key order.
    pub(super) fn position(&self, key: &ContainerKey) -> Option<usize> {
        let id = |text: &str| self.texts.binary_search_by(|t| t.as_ref().cmp(text)).ok();
        let cluster = match key.cluster.as_deref() {
            None => 0,
            Some(c) => id(c)? + 1,
        };
        let ids = [cluster, id(&key.namespace)?, id(&key.kind)?];
        let container = id(&key.container)?;
        self.entries
            .binary_search_by(|e| {
                e.ids()
                    .cmp(&ids)
                    .then_with(|| self.name(e).cmp(&key.name))
                    .then(e.container.cmp(&container))
            })
            .ok()
    }

    /// The key at `position` in key order.
    pub fn key_at(&self, position: usize) -> Option<ContainerKey> {
        let e = self.entries.get(position)?;
        Some(ContainerKey {
            cluster: e.cluster.checked_sub(1).map(|c| self.text(c).to_string()),
            namespace: self.text(e.namespace).to_string(),
            kind: self.text(e.kind).to_string(),
            name: self.name(e).to_string(),
            container: self.text(e.container).to_string(),
        })
    }

    /// The figures at `position` in key order.
    pub fn usage_at(&self, position: usize) -> Option<Usage> {
        let e = self.entries.get(position)?;
        let mut usage = Usage::default();
        walk(
            &mut usage,
            &mut Decode {
                mask: e.mask,
                bit: 0,
                figures: self.figures.get(e.figures..).unwrap_or_default(),
                strings: &self.strings,
            },
        );
        Some(usage)
    }

    /// Every key and its figures, in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { set: self, next: 0 }
    }

    /// Every key, in key order.
    pub fn keys(&self) -> impl Iterator<Item = ContainerKey> + '_ {
        (0..self.len()).filter_map(|i| self.key_at(i))
    }

    /// Every key's figures, in key order.
    pub fn values(&self) -> impl Iterator<Item = Usage> + '_ {
        (0..self.len()).filter_map(|i| self.usage_at(i))
    }

    /// Whether some figures name no cluster.
    pub fn any_without_cluster(&self) -> bool {
        self.entries.first().is_some_and(|e| e.cluster == 0)
    }

    /// The one cluster the figures name, if they name exactly one: keys sort by cluster first
    /// (none before any), so the first named and the last tell.
    pub fn only_named_cluster(&self) -> Option<&str> {
        let named = self.entries.partition_point(|e| e.cluster == 0);
        let first = self.entries.get(named)?.cluster;
        let last = self.entries.last()?.cluster;
        let id = first.checked_sub(1)?;
        (first == last).then(|| self.text(id))
    }

    /// Adds `key`'s figures, or replaces them. Builds the set again: for a few entries (tests);
    /// collect an iterator for many.
    pub fn insert(&mut self, key: ContainerKey, usage: Usage) {
        let old = std::mem::take(self);
        // The first of equal keys is kept: the new figures go first.
        *self = std::iter::once((key, usage)).chain(old.iter()).collect();
    }

    fn text(&self, id: usize) -> &str {
        self.texts.get(id).map_or("", |t| t)
    }

    fn name(&self, e: &Entry) -> &str {
        self.strings
            .get(e.name..e.name.saturating_add(e.name_len))
            .unwrap_or_default()
    }
}

/// [`Containers::iter`].
pub struct Iter<'a> {
    set: &'a Containers,
    next: usize,
}

impl Iterator for Iter<'_> {
    type Item = (ContainerKey, Usage);

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next;
        let item = (self.set.key_at(i)?, self.set.usage_at(i)?);
        self.next += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.set.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl<'a> IntoIterator for &'a Containers {
    type Item = (ContainerKey, Usage);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl PartialEq for Containers {
    fn eq(&self, other: &Containers) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for Containers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Of equal keys, the first is kept.
impl FromIterator<(ContainerKey, Usage)> for Containers {
    fn from_iter<I: IntoIterator<Item = (ContainerKey, Usage)>>(iter: I) -> Containers {
        let mut b = Builder::default();
        for (key, usage) in iter {
            b.push(key, usage);
        }
        b.build()
    }
}

/// Makes [`Containers`] from entries in any order (a snapshot's, as read).
#[derive(Default)]
pub struct Builder {
    /// The texts so far, with their ids in the order they came.
    ids: HashMap<Box<str>, usize>,
    strings: String,
    figures: Vec<u64>,
    /// In the order they came; ids not sorted yet.
    entries: Vec<Entry>,
}

impl Builder {
    pub fn push(&mut self, key: ContainerKey, mut usage: Usage) {
        let cluster = key.cluster.map_or(0, |c| self.id(c) + 1);
        let namespace = self.id(key.namespace);
        let kind = self.id(key.kind);
        let container = self.id(key.container);
        let name = self.strings.len();
        self.strings.push_str(&key.name);
        let figures = self.figures.len();
        let mut encode = Encode {
            mask: 0,
            bit: 0,
            figures: &mut self.figures,
            strings: &mut self.strings,
        };
        walk(&mut usage, &mut encode);
        let mask = encode.mask;
        self.entries.push(Entry {
            cluster,
            namespace,
            kind,
            container,
            name,
            name_len: key.name.len(),
            figures,
            mask,
        });
    }

    /// The index, in the order pushed, of the first entry with `key`. A pass over them all:
    /// for naming the first of two duplicates, once.
    pub fn position(&self, key: &ContainerKey) -> Option<usize> {
        let id = |text: &str| self.ids.get(text).copied();
        let cluster = match key.cluster.as_deref() {
            None => 0,
            Some(c) => id(c)? + 1,
        };
        let ids = [cluster, id(&key.namespace)?, id(&key.kind)?];
        let container = id(&key.container)?;
        self.entries.iter().position(|e| {
            e.ids() == ids
                && e.container == container
                && self.strings.get(e.name..e.name.saturating_add(e.name_len)) == Some(&key.name)
        })
    }

    fn id(&mut self, text: String) -> usize {
        if let Some(&id) = self.ids.get(text.as_str()) {
            return id;
        }
        let id = self.ids.len();
        self.ids.insert(text.into_boxed_str(), id);
        id
    }

    pub fn build(self) -> Containers {
        let Builder {
            ids,
            strings,
            figures,
            mut entries,
        } = self;
        // The texts sorted, and each entry's ids made positions in them.
        let mut texts: Vec<(Box<str>, usize)> = ids.into_iter().collect();
        texts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0; texts.len()];
        for (position, (_, id)) in texts.iter().enumerate() {
            if let Some(r) = rank.get_mut(*id) {
                *r = position;
            }
        }
        let rank = |id: usize| rank.get(id).copied().unwrap_or(id);
        for e in &mut entries {
            if e.cluster > 0 {
                e.cluster = rank(e.cluster - 1) + 1;
            }
            e.namespace = rank(e.namespace);
            e.kind = rank(e.kind);
            e.container = rank(e.container);
        }
        let mut set = Containers {
            texts: texts.into_iter().map(|(t, _)| t).collect(),
            strings,
            figures,
            entries: Vec::new(),
        };
        // Sorted through their positions (8 bytes an entry, not a stable sort's copy of half the
        // entries), equal keys in the order they came; then moved into place, and the later
        // of equal keys dropped.
        let mut order: Vec<usize> = (0..entries.len()).collect();
        let by_key = |a: &Entry, b: &Entry| {
            a.ids()
                .cmp(&b.ids())
                .then_with(|| set.name(a).cmp(set.name(b)))
                .then(a.container.cmp(&b.container))
        };
        order.sort_unstable_by(|&a, &b| match (entries.get(a), entries.get(b)) {
            (Some(x), Some(y)) => by_key(x, y).then(a.cmp(&b)),
            _ => a.cmp(&b),
        });
        permute(&mut entries, &mut order);
        entries.dedup_by(|later, first| by_key(later, first).is_eq());
        set.entries = entries;
        set
    }
}

/// Puts `items[order[i]]` at `i`, in place (`order` is a permutation; it is used up).
fn permute<T: Copy>(items: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let Some(&held) = items.get(start) else {
            return;
        };
        let mut at = start;
        loop {
            let Some(from) = order.get_mut(at).map(|o| std::mem::replace(o, at)) else {
                return;
            };
            if from == at {
                break;
            }
            let item = if from == start {
                held
            } else {
                match items.get(from) {
                    Some(&item) => item,
                    None => return,
                }
            };
            if let Some(slot) = items.get_mut(at) {
                *slot = item;
            }
            if from == start {
                break;
            }
            at = from;
        }
    }
}

/// Where [`walk`] reads or writes each slot of a [`Usage`].
trait Slots {
    /// A number that is there or not: a count, or a float's bits.
    fn number(&mut self, v: &mut Option<u64>);

    /// A text that is there or not.
    fn text(&mut self, v: &mut Option<String>);

    /// An object that is there or not (`{}` is there, with none of its figures); its figures
    /// follow when it is.
    fn object<'v, T: Default>(&mut self, v: &'v mut Option<T>) -> Option<&'v mut T>;

    fn float(&mut self, v: &mut Option<f64>) {
        let mut bits = v.map(f64::to_bits);
        self.number(&mut bits);
        *v = bits.map(f64::from_bits);
    }
}

/// Every slot of a [`Usage`], in one order: the one list that both writes an entry and reads
/// it back. Each slot is one bit of the mask. A new field of `Usage` does not compile until
/// it is here (the pattern names them all).
fn walk(u: &mut Usage, s: &mut impl Slots) {
    let Usage {
        samples,
        history_seconds,
        memory_bytes,
        cpu_cores,
        gpu_memory_bytes,
        gpu_utilization,
        oom_kills,
        memory_limit_bytes,
        gpu_model,
        gpu_count,
        gpus_used,
        gpu_engine_active,
        kv_cache_usage,
    } = u;
    s.number(samples);
    s.float(history_seconds);
    for stats in [memory_bytes, cpu_cores] {
        if let Some(super::Stats { p50, p99, max }) = s.object(stats) {
            s.float(p50);
            s.float(p99);
            s.float(max);
        }
    }
    if let Some(super::GpuMemory { p99, max, capacity }) = s.object(gpu_memory_bytes) {
        s.float(p99);
        s.float(max);
        s.float(capacity);
    }
    for utilization in [gpu_utilization, gpu_engine_active] {
        if let Some(super::GpuUtilization { avg, p99 }) = s.object(utilization) {
            s.float(avg);
            s.float(p99);
        }
    }
    s.number(oom_kills);
    s.float(memory_limit_bytes);
    s.text(gpu_model);
    s.number(gpu_count);
    s.number(gpus_used);
    if let Some(super::KvCache { p99, max }) = s.object(kv_cache_usage) {
        s.float(p99);
        s.float(max);
    }
}

/// How many slots [`walk`] has: one mask bit each.
#[cfg(test)]
const SLOTS: u32 = 28;
#[cfg(test)]
const _: () = assert!(SLOTS <= u64::BITS, "one mask bit a slot");

struct Encode<'b> {
    mask: u64,
    bit: u32,
    figures: &'b mut Vec<u64>,
    strings: &'b mut String,
}

impl Encode<'_> {
    fn mark(&mut self, there: bool) {
        if there {
            self.mask |= 1u64.checked_shl(self.bit).unwrap_or(0);
        }
        self.bit += 1;
    }
}

impl Slots for Encode<'_> {
    fn number(&mut self, v: &mut Option<u64>) {
        self.mark(v.is_some());
        self.figures.extend(*v);
    }

    fn text(&mut self, v: &mut Option<String>) {
        self.mark(v.is_some());
        if let Some(t) = v {
            self.figures.push(self.strings.len() as u64);
            self.figures.push(t.len() as u64);
            self.strings.push_str(t);
        }
    }

    fn object<'v, T: Default>(&mut self, v: &'v mut Option<T>) -> Option<&'v mut T> {
        self.mark(v.is_some());
        v.as_mut()
    }
}

struct Decode<'c> {
    mask: u64,
    bit: u32,
    /// The entry's figures not read yet.
    figures: &'c [u64],
    strings: &'c str,
}

impl Decode<'_> {
    fn there(&mut self) -> bool {
        let there = self.mask.checked_shr(self.bit).unwrap_or(0) & 1 == 1;
        self.bit += 1;
        there
    }

    fn next(&mut self) -> Option<u64> {
        let (first, rest) = self.figures.split_first()?;
        self.figures = rest;
        Some(*first)
    }
}

impl Slots for Decode<'_> {
    fn number(&mut self, v: &mut Option<u64>) {
        *v = if self.there() { self.next() } else { None };
    }

    fn text(&mut self, v: &mut Option<String>) {
        *v = None;
        if self.there() {
            let (start, len) = (self.next(), self.next());
            let start = start.and_then(|s| usize::try_from(s).ok());
            let len = len.and_then(|l| usize::try_from(l).ok());
            if let (Some(start), Some(len)) = (start, len) {
                *v = self
                    .strings
                    .get(start..start.saturating_add(len))
                    .map(str::to_string);
            }
        }
    }

    fn object<'v, T: Default>(&mut self, v: &'v mut Option<T>) -> Option<&'v mut T> {
        *v = self.there().then(T::default);
        v.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{GpuMemory, GpuUtilization, KvCache, Stats};
    use super::*;

    fn key(cluster: Option<&str>, ns: &str, name: &str, container: &str) -> ContainerKey {
        ContainerKey {
            cluster: cluster.map(str::to_string),
            namespace: ns.into(),
            kind: "Deployment".into(),
            name: name.into(),
            container: container.into(),
        }
    }

    /// Every field set, each to a different value (a struct literal without `..`: a new field
    /// must be added here).
    fn full() -> Usage {
        Usage {
            samples: Some(20160),
            history_seconds: Some(1209600.5),
            memory_bytes: Some(Stats {
                p50: Some(1.0),
                p99: Some(2.0),
                max: Some(3.0),
            }),
            cpu_cores: Some(Stats {
                p50: Some(0.1),
                p99: Some(0.2),
                max: Some(0.3),
            }),
            gpu_memory_bytes: Some(GpuMemory {
                p99: Some(4.0),
                max: Some(5.0),
                capacity: Some(6.0),
            }),
            gpu_utilization: Some(GpuUtilization {
                avg: Some(0.4),
                p99: Some(0.5),
            }),
            oom_kills: Some(3),
            memory_limit_bytes: Some(7.0),
            gpu_model: Some("NVIDIA H100 80GB HBM3".into()),
            gpu_count: Some(8),
            gpus_used: Some(7),
            gpu_engine_active: Some(GpuUtilization {
                avg: Some(0.6),
                p99: Some(0.7),
            }),
            kv_cache_usage: Some(KvCache {
                p99: Some(0.8),
                max: Some(0.9),
            }),
        }
    }

    /// `full()` with every number and text but one cleared, for each slot: each figure alone
    /// (the objects stay, so with an object's slot each is there and empty).
    fn one_slot_each() -> Vec<Usage> {
        struct Keep {
            only: u32,
            bit: u32,
        }
        impl Keep {
            fn keep(&mut self) -> bool {
                let keep = self.bit == self.only;
                self.bit += 1;
                keep
            }
        }
        impl Slots for Keep {
            fn number(&mut self, v: &mut Option<u64>) {
                if !self.keep() {
                    *v = None;
                }
            }
            fn text(&mut self, v: &mut Option<String>) {
                if !self.keep() {
                    *v = None;
                }
            }
            fn object<'v, T: Default>(&mut self, v: &'v mut Option<T>) -> Option<&'v mut T> {
                self.keep();
                v.as_mut()
            }
        }
        (0..SLOTS)
            .map(|only| {
                let mut u = full();
                walk(&mut u, &mut Keep { only, bit: 0 });
                u
            })
            .collect()
    }

    #[test]
    fn every_figure_reads_back_exactly() {
        let mut usages = vec![Usage::default(), full()];
        usages.extend(one_slot_each());
        // An object with no figures is not a missing one; odd floats keep their bits.
        usages.push(Usage {
            memory_bytes: Some(Stats::default()),
            kv_cache_usage: Some(KvCache::default()),
            history_seconds: Some(f64::NAN),
            memory_limit_bytes: Some(-0.0),
            gpu_model: Some(String::new()),
            ..Usage::default()
        });
        let set: Containers = usages
            .iter()
            .enumerate()
            .map(|(i, u)| (key(None, "ml", &format!("w{i:03}"), "c"), u.clone()))
            .collect();
        assert_eq!(set.len(), usages.len());
        for (i, (k, got)) in set.iter().enumerate() {
            assert_eq!(k.name, format!("w{i:03}"));
            let want = &usages[i];
            // NaN is not equal to itself: compare the debug text, which shows every field.
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "entry {i}");
        }
        let mut walked = Encode {
            mask: 0,
            bit: 0,
            figures: &mut Vec::new(),
            strings: &mut String::new(),
        };
        walk(&mut full(), &mut walked);
        assert_eq!(walked.bit, SLOTS, "SLOTS is walk's count");
    }

    #[test]
    fn sorted_as_keys_sort_and_the_first_of_equal_keys_kept() {
        let with = |samples: u64| Usage {
            samples: Some(samples),
            ..Usage::default()
        };
        let input = [
            (key(Some("prod"), "ml", "b", "main"), with(1)),
            (key(None, "zz", "a", "main"), with(2)),
            (key(Some("prod"), "ml", "a", "side"), with(3)),
            (key(Some("prod"), "ml", "a", "main"), with(4)),
            (key(Some("dev"), "ml", "a", "main"), with(5)),
            (key(Some("prod"), "ml", "b", "main"), with(6)),
            (key(None, "a", "a", "main"), with(7)),
        ];
        let set: Containers = input.iter().cloned().collect();
        let mut want: std::collections::BTreeMap<ContainerKey, Usage> = Default::default();
        for (k, u) in input.iter().cloned() {
            want.entry(k).or_insert(u);
        }
        let got: Vec<_> = set.iter().collect();
        let want: Vec<_> = want.into_iter().collect();
        assert_eq!(got, want);
        for (k, u) in &want {
            assert_eq!(set.get(k).as_ref(), Some(u), "{k:?}");
        }
        assert_eq!(set.get(&key(Some("prod"), "ml", "c", "main")), None);
        assert_eq!(set.get(&key(Some("qa"), "ml", "a", "main")), None);
        assert!(set.any_without_cluster());
        assert_eq!(set.only_named_cluster(), None);
        let prod: Containers = set
            .iter()
            .filter(|(k, _)| k.cluster.as_deref() == Some("prod"))
            .collect();
        assert_eq!(prod.only_named_cluster(), Some("prod"));
        assert!(!prod.any_without_cluster());
    }

    #[test]
    fn permute_puts_each_item_where_the_order_says() {
        for n in 0..8usize {
            // Every rotation and the reversal of 0..n.
            let mut orders: Vec<Vec<usize>> = (0..n)
                .map(|r| (0..n).map(|i| (i + r) % n).collect())
                .collect();
            orders.push((0..n).rev().collect());
            for order in orders {
                let mut items: Vec<usize> = (0..n).map(|i| i * 10).collect();
                let want: Vec<usize> = order.iter().map(|&i| i * 10).collect();
                permute(&mut items, &mut order.clone());
                assert_eq!(items, want, "{order:?}");
            }
        }
    }

    /// What each container costs is what bounds a snapshot's memory (issue 28,
    /// `bench/snapshot.sh --small`): a small container is one entry and three figures, about
    /// 90 bytes with its name, where a map of keys to `Usage` took about 1 KiB. A bigger entry
    /// (a key of `String`s, figures inline) fails here before it fails the bench.
    #[test]
    fn an_entry_stays_small() {
        assert!(std::mem::size_of::<Entry>() <= 64);
        let mut set = Builder::default();
        set.push(
            key(None, "team-1", "workload-1", "main"),
            Usage {
                memory_bytes: Some(Stats {
                    p50: Some(1.0),
                    p99: Some(2.0),
                    max: Some(3.0),
                }),
                ..Usage::default()
            },
        );
        assert_eq!(set.figures.len(), 3, "a memory series is three figures");
    }
}
