//! OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`.
//!
//! Series are kept per metric family and written one file per UTC day (promtool re-reads the
//! whole input once per block, so small daily files with 24h blocks backfill fastest), each
//! family's samples sorted by time, timestamps in seconds, `# EOF` at the end.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const DAY: i64 = 86_400;

/// Labels, in the order given.
pub type Labels = Vec<(String, String)>;

#[derive(Default)]
pub struct OpenMetrics {
    /// family -> series (label text) -> samples (unix seconds, value).
    families: BTreeMap<String, BTreeMap<String, Vec<(i64, f64)>>>,
    samples: usize,
}

pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn label_text(labels: &Labels) -> String {
    let mut s = String::new();
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let v = v
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        let _ = write!(s, "{k}=\"{v}\"");
    }
    s
}

impl OpenMetrics {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add samples of the series `name{labels}` (any order; duplicates are kept out).
    pub fn add(
        &mut self,
        name: &str,
        labels: &Labels,
        samples: impl IntoIterator<Item = (i64, f64)>,
    ) {
        let series = self
            .families
            .entry(name.to_string())
            .or_default()
            .entry(label_text(labels))
            .or_default();
        let before = series.len();
        series.extend(samples);
        self.samples += series.len() - before;
    }

    pub fn sample_count(&self) -> usize {
        self.samples
    }

    /// Write one file per UTC day into `dir`; returns the paths.
    pub fn write_daily(&mut self, dir: &Path) -> Vec<PathBuf> {
        let mut days: BTreeMap<i64, String> = BTreeMap::new();
        for (family, series) in &mut self.families {
            for samples in series.values_mut() {
                samples.sort_by_key(|s| s.0);
                samples.dedup_by_key(|s| s.0);
            }
            // Per day: `# TYPE` once, then each series' samples of that day in time order.
            let mut per_day: BTreeMap<i64, String> = BTreeMap::new();
            for (labels, samples) in series.iter() {
                for (t, v) in samples {
                    let text = per_day.entry(t.div_euclid(DAY)).or_default();
                    let _ = writeln!(text, "{family}{{{labels}}} {v} {t}");
                }
            }
            for (day, text) in per_day {
                let out = days.entry(day).or_default();
                let _ = writeln!(out, "# TYPE {family} gauge");
                out.push_str(&text);
            }
        }
        days.into_iter()
            .map(|(day, mut text)| {
                text.push_str("# EOF\n");
                let path = dir.join(format!("day-{day}.om"));
                std::fs::write(&path, text).expect("write OpenMetrics file");
                path
            })
            .collect()
    }
}
