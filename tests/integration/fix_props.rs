//! Property tests for the fix engine (`gpulint::fix`), on generated manifests.
//!
//! A small deterministic xorshift generator (no extra dependencies) writes valid Kubernetes-like
//! YAML: Pods, Deployments and Jobs with 1–3 containers (and sometimes init containers) whose
//! `resources` carry GPU mistakes (a GPU request that differs from its limit, a GPU request
//! without a limit, CPU/memory requests that differ from their limits). Every case varies the
//! layout: block or flow mappings (single- or multi-line), plain/single/double quoted values and
//! keys, comments on the same line and between keys, blank lines, CRLF or LF, with or without a
//! final newline, a BOM, a `%YAML` directive, multi-document streams with `---`/`...` and
//! comment-only documents, `key : value`, tabs and extra spaces after colons, values on the next
//! line, literal block scalars, `!!str` tags, flow mappings with trailing commas,
//! anchors and aliases (shared resources blocks, shared `limits`, shared quantities, anchors that
//! nothing refers to), random extra keys, indentation widths 2 and 4 (sometimes mixed in one
//! file), sequences indented or not, sequence items whose mapping starts on the next line.
//! Not generated: lone-CR line endings (the edit helpers only know `\n` line breaks).
//!
//! Next to the text, the generator keeps a model of every container's resources, so each case
//! knows which findings the linter must report, which of them must be fixed, which have no fix
//! (an alias cannot be edited) and which fixes must be refused (an edit through an anchor that an
//! alias repeats changes more than the field).
//!
//! `planned_fixes_change_only_their_fields` runs the real pipeline in process (`Linter::run` on a
//! temp file, `fix::plan::plan`) and checks, for the planned file:
//!   * the findings are the predicted ones, and so are the applied and the refused fixes;
//!   * the fixed text parses, and its documents (`source::document::plain`) equal the original ones with
//!     exactly the predicted fields set (requests == limits for the fixed names), key order kept;
//!   * every comment survives (same text, same order), every anchor and alias too;
//!   * every line that no fix touches is still there byte for byte, and the only other lines are
//!     the inserted ones (as many as predicted);
//!   * the line endings (CRLF/LF), the final newline and a BOM are kept;
//!   * linting the fixed file reports none of the fixed findings, exactly the predicted leftovers,
//!     and a second plan changes nothing (idempotence).
//!
//! `verify_rejects_edits_it_was_not_told_about` drives `edit::apply` + `verify` directly:
//! `set_quantity`/`rename_resource` fixes on random containers, sides and names, and random
//! scalar edits, must verify with their own `changes` (unless they edit through a shared anchor)
//! and must be refused with any wrong `changes` (nothing, another value, name, side, container or
//! document); random garbage insertions are accepted exactly when the documents are unchanged.
//!
//! Scale with `GPULINT_PROP_CASES` (default 2000), vary with `GPULINT_PROP_SEED`, rerun one case
//! with `GPULINT_PROP_ONLY=<case index>` (`GPULINT_PROP_SHOW=1` prints its input and fixed text).
//! Failing inputs are written to `<target>/tmp/fix_props-failures/` and printed escaped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gpulint::config::Config;
use gpulint::edit::resources::{rename_resource, set_quantity, Side, Target};
use gpulint::edit::{
    apply, render_scalar, verify, Applicability, Edit, FieldChange, Fix, Rejected,
};
use gpulint::fix::plan::plan;
use gpulint::k8s::catalog::Catalog;
use gpulint::k8s::workload::{objects, Container, Workload};
use gpulint::lint::{Linter, Selection};
use gpulint::rules::{Finding, Rule};
use gpulint::source::document::{parse_path, plain, Segment};
use gpulint::source::yaml::{Node, ScalarStyle, SourceId, Stream, Value};
use serde_json::{Map, Value as Json};

use crate::support::common::Rng;

// ------------------------------------------------------------------------------------------
// Deterministic randomness

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

fn base_seed() -> u64 {
    env_u64("GPULINT_PROP_SEED").unwrap_or(0x6669_7870_726f_7073) // "fixprops"
}

fn case_count() -> usize {
    env_u64("GPULINT_PROP_CASES").map_or(2000, |n| n as usize)
}

/// The case indices to run: all of them, or the one `GPULINT_PROP_ONLY` names.
fn case_indices() -> Vec<usize> {
    match env_u64("GPULINT_PROP_ONLY") {
        Some(i) => vec![i as usize],
        None => (0..case_count()).collect(),
    }
}

fn case_seed(index: usize) -> u64 {
    base_seed() ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

// ------------------------------------------------------------------------------------------
// A YAML tree with layout, and its renderer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Q {
    Plain,
    Single,
    Double,
}

impl Q {
    fn write(self, text: &str) -> String {
        match self {
            Q::Plain => text.to_string(),
            Q::Single => format!("'{text}'"),
            Q::Double => format!("\"{text}\""),
        }
    }
}

#[derive(Clone, Debug)]
struct Key {
    text: String,
    q: Q,
}

#[derive(Clone, Debug)]
enum Y {
    S {
        text: String,
        q: Q,
        anchor: Option<String>,
    },
    Alias(String),
    Null,
    /// A literal block scalar (`|`), its lines.
    Lit(Vec<String>),
    M {
        entries: Vec<(Key, Y)>,
        flow: bool,
        anchor: Option<String>,
    },
    L {
        items: Vec<Y>,
        flow: bool,
    },
}

fn k(text: &str) -> Key {
    Key {
        text: text.to_string(),
        q: Q::Plain,
    }
}

fn s(text: &str) -> Y {
    sq(text, Q::Plain)
}

fn sq(text: &str, q: Q) -> Y {
    Y::S {
        text: text.to_string(),
        q,
        anchor: None,
    }
}

fn map(entries: Vec<(&str, Y)>, flow: bool) -> Y {
    Y::M {
        entries: entries.into_iter().map(|(a, b)| (k(a), b)).collect(),
        flow,
        anchor: None,
    }
}

fn seq(items: Vec<Y>, flow: bool) -> Y {
    Y::L { items, flow }
}

/// Plain data of a tree, aliases resolved (what `source::document::plain` must give for its text).
fn to_json(y: &Y, anchors: &mut HashMap<String, Json>) -> Json {
    let (value, anchor) = match y {
        Y::S { text, anchor, .. } => (Json::String(text.clone()), anchor),
        Y::Null => return Json::Null,
        Y::Lit(lines) => return Json::String(lines.iter().map(|l| format!("{l}\n")).collect()),
        Y::Alias(name) => return anchors.get(name).cloned().unwrap_or(Json::Null),
        Y::M {
            entries, anchor, ..
        } => {
            let mut m = Map::new();
            for (key, v) in entries {
                let v = to_json(v, anchors);
                m.insert(key.text.clone(), v);
            }
            (Json::Object(m), anchor)
        }
        Y::L { items, .. } => (
            Json::Array(items.iter().map(|i| to_json(i, anchors)).collect()),
            &None,
        ),
    };
    if let Some(a) = anchor {
        anchors.insert(a.clone(), value.clone());
    }
    value
}

fn aliases_in(y: &Y, out: &mut HashSet<String>) {
    match y {
        Y::Alias(a) => {
            out.insert(a.clone());
        }
        Y::M { entries, .. } => entries.iter().for_each(|(_, v)| aliases_in(v, out)),
        Y::L { items, .. } => items.iter().for_each(|v| aliases_in(v, out)),
        Y::S { .. } | Y::Null | Y::Lit(_) => {}
    }
}

const WORDS: &[&str] = &[
    "sized for the 8B model",
    "TODO: check with infra",
    "keep in sync with the node pool",
    "gpu: 3 was too many",
    "see runbook",
    "limits: {nvidia.com/gpu: 9}",
    "requests == limits please",
    "'quoted' \"text\" here",
];

struct Out<'r> {
    text: String,
    nl: &'static str,
    w: usize,
    seq_indent: bool,
    rng: &'r mut Rng,
    /// Anchors that some alias of the document being written repeats.
    shared: HashSet<String>,
    /// Byte ranges of anchored nodes that some alias repeats.
    shared_spans: Vec<(usize, usize)>,
    comments: usize,
    /// A literal block scalar just ended: a deeper comment or blank line would join it.
    after_literal: bool,
}

impl Out<'_> {
    fn pad(&mut self, n: usize) {
        self.text.extend(std::iter::repeat_n(' ', n));
    }

    fn comment(&mut self) -> String {
        self.comments += 1;
        format!("c{} {}", self.comments, self.rng.one(WORDS))
    }

    /// Ends a content line, sometimes with a comment.
    fn eol(&mut self) {
        if self.rng.chance(8) {
            let c = self.comment();
            let gap = if self.rng.chance(20) { "   " } else { " " };
            let _ = write!(self.text, "{gap}# {c}");
        }
        self.text.push_str(self.nl);
    }

    /// Between two entries: sometimes a blank line or a comment line.
    fn gap(&mut self, pad: usize) {
        if std::mem::take(&mut self.after_literal) {
            return;
        }
        match self.rng.below(40) {
            0 => self.text.push_str(self.nl),
            1 => {
                let n = self.rng.below(6);
                self.pad(n);
                self.text.push_str(self.nl);
            }
            6 => {
                self.pad(pad + 2);
                let c = self.comment();
                let _ = write!(self.text, "# {c}{}", self.nl);
            }
            2..=4 => {
                self.pad(pad);
                let c = self.comment();
                let _ = write!(self.text, "# {c}{}", self.nl);
            }
            5 => {
                let c = self.comment();
                let _ = write!(self.text, "#{c}{}", self.nl);
            }
            _ => {}
        }
    }

    fn key(&mut self, key: &Key) {
        let t = key.q.write(&key.text);
        self.text.push_str(&t);
    }

    fn mark(&mut self, anchor: &Option<String>, start: usize) {
        if anchor.as_ref().is_some_and(|a| self.shared.contains(a)) {
            self.shared_spans.push((start, self.text.len()));
        }
    }

    /// A node in flow style, on the current line.
    fn inline(&mut self, y: &Y) {
        let start = self.text.len();
        match y {
            Y::S { text, q, anchor } => {
                if let Some(a) = anchor {
                    let _ = write!(self.text, "&{a} ");
                }
                if self.rng.chance(2) {
                    // A tag changes nothing here: every value is a string to `plain`.
                    self.text.push_str("!!str ");
                }
                let t = q.write(text);
                self.text.push_str(&t);
                self.mark(anchor, start);
            }
            Y::Alias(a) => {
                let _ = write!(self.text, "*{a}");
            }
            Y::Null => self.text.push('~'),
            Y::Lit(lines) => {
                let body: String = lines.iter().map(|l| format!("{l}\\n")).collect();
                let _ = write!(self.text, "\"{body}\"");
            }
            Y::M {
                entries, anchor, ..
            } => {
                if let Some(a) = anchor {
                    let _ = write!(self.text, "&{a} ");
                }
                let (open, sep, close) = match self.rng.below(6) {
                    0 => ("{ ", ", ", " }"),
                    1 => ("{", ",", "}"),
                    _ => ("{", ", ", "}"),
                };
                if entries.is_empty() {
                    self.text.push_str("{}");
                } else {
                    self.text.push_str(open);
                    for (i, (key, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            self.text.push_str(sep);
                        }
                        self.key(key);
                        self.text
                            .push_str(if self.rng.chance(2) { " : " } else { ": " });
                        self.inline(v);
                    }
                    if self.rng.chance(5) {
                        self.text.push(',');
                    }
                    self.text.push_str(close);
                }
                self.mark(anchor, start);
            }
            Y::L { items, .. } => {
                self.text.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.inline(v);
                }
                self.text.push(']');
            }
        }
    }

    fn block_map(&mut self, entries: &[(Key, Y)], pad: usize, first_inline: bool) {
        for (i, (key, v)) in entries.iter().enumerate() {
            if !(i == 0 && first_inline) {
                self.gap(pad);
                self.pad(pad);
            }
            self.key(key);
            if self.rng.chance(2) {
                // `key : value` is the same key.
                self.text.push(' ');
            }
            self.text.push(':');
            self.value(v, pad);
        }
    }

    /// The indentation of a nested block: the file's width, sometimes the other one.
    fn width(&mut self) -> usize {
        if self.rng.chance(10) {
            6 - self.w
        } else {
            self.w
        }
    }

    /// The space after `key:`: one, more, or a tab.
    fn after_colon(&mut self) -> &'static str {
        match self.rng.below(40) {
            0 => "\t",
            1 => "   ",
            _ => " ",
        }
    }

    /// The value of a block mapping entry whose key (at column `pad`) was just written.
    fn value(&mut self, v: &Y, pad: usize) {
        match v {
            Y::M {
                entries,
                flow: false,
                anchor,
            } if !entries.is_empty() => {
                let start = self.text.len();
                if let Some(a) = anchor {
                    let _ = write!(self.text, " &{a}");
                }
                self.eol();
                let w = self.width();
                self.block_map(entries, pad + w, false);
                self.mark(anchor, start);
            }
            Y::M {
                entries,
                flow: true,
                anchor: None,
            } if !entries.is_empty()
                && entries.iter().all(|(_, v)| matches!(v, Y::S { .. }))
                && self.rng.chance(10) =>
            {
                // A flow mapping over several lines.
                self.text.push_str(" {");
                self.text.push_str(self.nl);
                for (i, (key, v)) in entries.iter().enumerate() {
                    self.pad(pad + self.w);
                    self.key(key);
                    self.text.push_str(": ");
                    self.inline(v);
                    if i + 1 < entries.len() {
                        self.text.push(',');
                    }
                    self.text.push_str(self.nl);
                }
                self.pad(pad + self.w);
                self.text.push('}');
                self.eol();
            }
            Y::L { items, flow: false } if !items.is_empty() => {
                self.eol();
                let dash = pad + if self.seq_indent { self.width() } else { 0 };
                for item in items {
                    self.gap(dash);
                    self.pad(dash);
                    self.text.push('-');
                    match item {
                        Y::M {
                            entries,
                            flow: false,
                            anchor: None,
                        } if !entries.is_empty() && self.rng.chance(4) => {
                            // The item's mapping starts on the next line.
                            self.eol();
                            let w = self.width();
                            self.block_map(entries, dash + w, false);
                        }
                        Y::M {
                            entries,
                            flow: false,
                            anchor: None,
                        } if !entries.is_empty() => {
                            let width = if self.rng.chance(25) { self.w } else { 2 };
                            self.pad(width - 1);
                            self.block_map(entries, dash + width, true);
                        }
                        other => {
                            self.text.push(' ');
                            self.inline(other);
                            self.eol();
                        }
                    }
                }
            }
            Y::Lit(lines) => {
                self.text.push_str(" |");
                self.text.push_str(self.nl);
                for l in lines {
                    self.pad(pad + self.w);
                    self.text.push_str(l);
                    self.text.push_str(self.nl);
                }
                self.after_literal = true;
            }
            Y::Null => {
                if self.rng.chance(40) {
                    self.text.push_str(" ~");
                }
                self.eol();
            }
            Y::S { .. } if self.rng.chance(3) => {
                // The value on the next line, indented.
                self.eol();
                self.pad(pad + self.w);
                self.inline(v);
                self.eol();
            }
            Y::S { .. } | Y::Alias(_) => {
                let gap = self.after_colon();
                self.text.push_str(gap);
                self.inline(v);
                if self.rng.chance(3) {
                    self.text.push_str("  ");
                }
                self.eol();
            }
            other => {
                self.text.push(' ');
                self.inline(other);
                self.eol();
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// The model of a container's resources

const GPU_PRIMARY: &[&str] = &[
    "nvidia.com/gpu",
    "nvidia.com/gpu",
    "nvidia.com/gpu",
    "amd.com/gpu",
];
const GPU_SECOND: &[&str] = &["nvidia.com/mig-1g.5gb", "gpu.intel.com/i915"];
const GPU_VALUES: &[(&str, u64)] = &[("1", 1), ("2", 2), ("4", 4), ("8", 8), ("1", 1), ("0", 0)];
const CPU_VALUES: &[(&str, u64)] = &[
    ("500m", 500),
    ("1", 1000),
    ("1000m", 1000),
    ("2", 2000),
    ("1.5", 1500),
    ("4", 4000),
    ("4000m", 4000),
    ("8", 8000),
];
const MEM_VALUES: &[(&str, u64)] = &[
    ("512Mi", 512 << 20),
    ("8Gi", 8 << 30),
    ("8192Mi", 8 << 30),
    ("16Gi", 16 << 30),
    ("24Gi", 24 << 30),
    ("1G", 1_000_000_000),
    ("1000M", 1_000_000_000),
    ("32Gi", 32 << 30),
];

fn is_known_gpu(name: &str) -> bool {
    GPU_PRIMARY.contains(&name) || GPU_SECOND.contains(&name)
}

#[derive(Clone, Debug)]
struct Ent {
    name: String,
    kq: Q,
    text: String,
    canon: u64,
    q: Q,
    anchor: Option<String>,
    alias_of: Option<String>,
    /// A copy made by an alias (the entry itself or one of its parents is an alias).
    va: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Absent,
    /// `limits:` with no value (or `~`).
    Null,
    Map,
}

#[derive(Clone, Debug)]
struct SideM {
    state: State,
    flow: bool,
    anchor: Option<String>,
    alias_of: Option<String>,
    va: bool,
    entries: Vec<Ent>,
}

impl SideM {
    fn get(&self, name: &str) -> Option<&Ent> {
        if self.state != State::Map {
            return None;
        }
        self.entries.iter().find(|e| e.name == name)
    }
}

#[derive(Clone, Debug)]
struct ResM {
    flow: bool,
    /// How the `requests`/`limits` keys are quoted.
    side_q: Q,
    limits_first: bool,
    anchor: Option<String>,
    alias_of: Option<String>,
    va: bool,
    requests: SideM,
    limits: SideM,
}

impl ResM {
    fn side(&self, side: Side) -> &SideM {
        match side {
            Side::Requests => &self.requests,
            Side::Limits => &self.limits,
        }
    }

    fn side_mut(&mut self, side: Side) -> &mut SideM {
        match side {
            Side::Requests => &mut self.requests,
            Side::Limits => &mut self.limits,
        }
    }

    /// Names in requests then limits, first appearance (the linter's `Resources::names`).
    fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for side in [&self.requests, &self.limits] {
            if side.state != State::Map {
                continue;
            }
            for e in &side.entries {
                if !out.contains(&e.name) {
                    out.push(e.name.clone());
                }
            }
        }
        out
    }

    fn has_anchor(&self) -> bool {
        self.anchor.is_some()
            || [&self.requests, &self.limits]
                .iter()
                .any(|s| s.anchor.is_some() || s.entries.iter().any(|e| e.anchor.is_some()))
    }

    fn mark_copy(&mut self) {
        self.va = true;
        self.anchor = None;
        for side in [&mut self.requests, &mut self.limits] {
            side.mark_copy();
        }
    }
}

impl SideM {
    fn mark_copy(&mut self) {
        self.va = true;
        self.anchor = None;
        for e in &mut self.entries {
            e.va = true;
            e.anchor = None;
        }
    }
}

#[derive(Clone, Debug)]
struct CM {
    /// Path of the container in its document.
    path: Vec<Segment>,
    name: String,
    res: Option<ResM>,
    flow: bool,
    extra: Vec<(Key, Y)>,
    res_at: usize,
    res_q: Q,
}

fn side_key(side: Side) -> &'static str {
    side.key()
}

fn random_q(rng: &mut Rng) -> Q {
    match rng.below(20) {
        0..=12 => Q::Plain,
        13..=17 => Q::Double,
        _ => Q::Single,
    }
}

fn random_kq(rng: &mut Rng) -> Q {
    match rng.below(25) {
        0 => Q::Double,
        1 => Q::Single,
        _ => Q::Plain,
    }
}

fn ent(rng: &mut Rng, name: &str, (text, canon): (&str, u64)) -> Ent {
    Ent {
        name: name.to_string(),
        kq: random_kq(rng),
        text: text.to_string(),
        canon,
        q: random_q(rng),
        anchor: None,
        alias_of: None,
        va: false,
    }
}

fn empty_side(rng: &mut Rng, flow: bool) -> SideM {
    let state = match rng.below(10) {
        0 => State::Null,
        1 | 2 => State::Map,
        _ => State::Absent,
    };
    SideM {
        state,
        flow: flow || state == State::Map,
        anchor: None,
        alias_of: None,
        va: false,
        entries: Vec::new(),
    }
}

fn gen_res(rng: &mut Rng, container_flow: bool) -> Option<ResM> {
    let mut names: Vec<(&str, &[(&str, u64)])> = Vec::new();
    if rng.chance(88) {
        names.push((rng.one(GPU_PRIMARY), GPU_VALUES));
        if rng.chance(10) {
            names.push((rng.one(GPU_SECOND), GPU_VALUES));
        }
    }
    names.push(("cpu", CPU_VALUES));
    names.push(("memory", MEM_VALUES));
    let (mut req, mut lim) = (Vec::new(), Vec::new());
    for (name, values) in names {
        let gpu = is_known_gpu(name);
        let case = rng.below(100);
        let (absent, req_only, lim_only, eq) = if gpu {
            (3, 33, 50, 68)
        } else {
            (15, 30, 45, 70)
        };
        let v = rng.one(values);
        if case < absent {
            continue;
        } else if case < req_only {
            req.push(ent(rng, name, v));
        } else if case < lim_only {
            lim.push(ent(rng, name, v));
        } else if case < eq {
            let same: Vec<(&str, u64)> = values.iter().copied().filter(|x| x.1 == v.1).collect();
            let w = rng.one(&same);
            req.push(ent(rng, name, v));
            lim.push(ent(rng, name, w));
        } else {
            let other: Vec<(&str, u64)> = values.iter().copied().filter(|x| x.1 != v.1).collect();
            let w = rng.one(&other);
            req.push(ent(rng, name, v));
            lim.push(ent(rng, name, w));
        }
    }
    if req.is_empty() && lim.is_empty() {
        return None;
    }
    rng.shuffle(&mut req);
    rng.shuffle(&mut lim);
    let flow = container_flow || rng.chance(8);
    let side = |rng: &mut Rng, entries: Vec<Ent>| {
        if entries.is_empty() {
            empty_side(rng, flow)
        } else {
            SideM {
                state: State::Map,
                flow: flow || rng.chance(30),
                anchor: None,
                alias_of: None,
                va: false,
                entries,
            }
        }
    };
    let requests = side(rng, req);
    let limits = side(rng, lim);
    Some(ResM {
        flow,
        side_q: random_kq(rng),
        limits_first: rng.chance(35),
        anchor: None,
        alias_of: None,
        va: false,
        requests,
        limits,
    })
}

fn side_to_y(s: &SideM, res_flow: bool) -> Y {
    if let Some(a) = &s.alias_of {
        return Y::Alias(a.clone());
    }
    match s.state {
        State::Null => Y::Null,
        _ => Y::M {
            entries: s
                .entries
                .iter()
                .map(|e| {
                    let v = match &e.alias_of {
                        Some(a) => Y::Alias(a.clone()),
                        None => Y::S {
                            text: e.text.clone(),
                            q: e.q,
                            anchor: e.anchor.clone(),
                        },
                    };
                    (
                        Key {
                            text: e.name.clone(),
                            q: e.kq,
                        },
                        v,
                    )
                })
                .collect(),
            flow: s.flow || res_flow || s.entries.is_empty(),
            anchor: s.anchor.clone(),
        },
    }
}

fn res_to_y(r: &ResM) -> Y {
    if let Some(a) = &r.alias_of {
        return Y::Alias(a.clone());
    }
    let mut entries = Vec::new();
    let order = if r.limits_first {
        [Side::Limits, Side::Requests]
    } else {
        [Side::Requests, Side::Limits]
    };
    for side in order {
        let sm = r.side(side);
        if sm.state != State::Absent || sm.alias_of.is_some() {
            let key = Key {
                text: side_key(side).to_string(),
                q: r.side_q,
            };
            entries.push((key, side_to_y(sm, r.flow)));
        }
    }
    Y::M {
        entries,
        flow: r.flow,
        anchor: r.anchor.clone(),
    }
}

fn container_to_y(c: &CM) -> Y {
    let mut entries = c.extra.clone();
    if let Some(r) = &c.res {
        let key = Key {
            text: "resources".into(),
            q: c.res_q,
        };
        entries.insert(c.res_at.min(entries.len()), (key, res_to_y(r)));
    }
    Y::M {
        entries,
        flow: c.flow,
        anchor: None,
    }
}

// ------------------------------------------------------------------------------------------
// Documents and cases

struct DocModel {
    object: String,
    containers: Vec<CM>,
    json: Json,
    /// Anchors that some alias repeats.
    referenced: HashSet<String>,
}

struct Case {
    text: String,
    docs: Vec<DocModel>,
    /// Byte ranges of anchored nodes that an alias repeats (edits there change the aliases).
    shared_spans: Vec<(usize, usize)>,
}

struct Anchors(usize);

impl Anchors {
    fn fresh(&mut self, prefix: &str) -> String {
        self.0 += 1;
        format!("{prefix}{}", self.0)
    }
}

fn gen_container(rng: &mut Rng, name: &str, path: Vec<Segment>) -> CM {
    let flow = rng.chance(5);
    let mut extra: Vec<(Key, Y)> = vec![(k("name"), sq(name, random_q(rng)))];
    let image = rng.one(&["vllm/vllm-openai", "nvcr.io/nvidia/pytorch", "busybox"]);
    extra.push((k("image"), sq(image, random_q(rng))));
    if rng.chance(40) {
        let args = vec![sq("--model", Q::Double), sq("meta/llama", random_q(rng))];
        let block = !flow && rng.chance(50);
        extra.push((k("args"), seq(args, !block)));
    }
    if rng.chance(30) {
        let env = map(
            vec![("name", s("HF_HOME")), ("value", sq("/cache", Q::Double))],
            flow || rng.chance(30),
        );
        extra.push((k("env"), seq(vec![env], flow)));
    }
    if rng.chance(25) {
        let port = map(vec![("containerPort", s("8000"))], true);
        extra.push((k("ports"), seq(vec![port], flow)));
    }
    if !rng.chance(85) {
        rng.shuffle(&mut extra);
    }
    let res_at = rng.below(extra.len() + 1);
    CM {
        path,
        name: name.to_string(),
        res: gen_res(rng, flow),
        flow,
        extra,
        res_at,
        res_q: random_kq(rng),
    }
}

/// Anchors and aliases: shared quantities, shared `requests`/`limits`, shared resources blocks,
/// and anchors nothing refers to.
fn add_anchors(rng: &mut Rng, cs: &mut [CM], names: &mut Anchors) {
    let n = cs.len();
    let editable = |c: &CM| c.res.as_ref().is_some_and(|r| !r.va);
    // A quantity written once, repeated by a later container.
    if n >= 2 && rng.chance(15) {
        let i = rng.below(n - 1);
        let j = i + 1 + rng.below(n - 1 - i);
        if editable(&cs[i]) && editable(&cs[j]) {
            let r = cs[i].res.as_mut().unwrap();
            let side = rng.one(&[Side::Requests, Side::Limits]);
            let sm = r.side_mut(side);
            if sm.state == State::Map && !sm.entries.is_empty() {
                let at = rng.below(sm.entries.len());
                let anchor = names.fresh("q");
                sm.entries[at].anchor = Some(anchor.clone());
                let mut copy = sm.entries[at].clone();
                copy.anchor = None;
                copy.alias_of = Some(anchor);
                copy.va = true;
                copy.kq = Q::Plain;
                let rj = cs[j].res.as_mut().unwrap();
                let res_flow = rj.flow;
                let tj = rj.side_mut(rng.one(&[Side::Requests, Side::Limits]));
                if tj.state != State::Null {
                    if tj.state == State::Absent {
                        tj.state = State::Map;
                        tj.flow = res_flow || rng.chance(40);
                    }
                    match tj.entries.iter().position(|e| e.name == copy.name) {
                        Some(p) => tj.entries[p] = copy,
                        None => {
                            let p = rng.below(tj.entries.len() + 1);
                            tj.entries.insert(p, copy);
                        }
                    }
                }
            }
        }
    }
    // `limits: *l` / `requests: *r` repeating an earlier container's mapping.
    if n >= 2 && rng.chance(10) {
        let i = rng.below(n - 1);
        let j = i + 1 + rng.below(n - 1 - i);
        let side = rng.one(&[Side::Requests, Side::Limits]);
        let ok_i = cs[i].res.as_ref().is_some_and(|r| {
            !r.va
                && r.side(side).state == State::Map
                && !r.side(side).entries.is_empty()
                && r.side(side).alias_of.is_none()
        });
        // The other side must exist: `create_list` takes the new mapping's indentation from its
        // sibling's first key, and an alias copy's keys are where the anchor is written, so
        // with another indentation there it gives up (a fix missed, not a wrong edit).
        let other = match side {
            Side::Requests => Side::Limits,
            Side::Limits => Side::Requests,
        };
        let ok_j = cs[j].res.as_ref().is_some_and(|r| {
            let sm = r.side(side);
            !r.va
                && sm.anchor.is_none()
                && sm.entries.iter().all(|e| e.anchor.is_none())
                && r.side(other).state != State::Absent
        });
        if ok_i && ok_j {
            let anchor = names.fresh("side");
            let sm = cs[i].res.as_mut().unwrap().side_mut(side);
            sm.anchor = Some(anchor.clone());
            let mut copy = sm.clone();
            copy.mark_copy();
            copy.alias_of = Some(anchor);
            *cs[j].res.as_mut().unwrap().side_mut(side) = copy;
        }
    }
    // `resources: *r` repeating an earlier container's block.
    if n >= 2 && rng.chance(10) {
        let i = rng.below(n - 1);
        let j = i + 1 + rng.below(n - 1 - i);
        let ok_i = cs[i]
            .res
            .as_ref()
            .is_some_and(|r| !r.va && r.alias_of.is_none() && r.anchor.is_none());
        let ok_j = cs[j].res.as_ref().is_none_or(|r| !r.has_anchor());
        if ok_i && ok_j {
            let anchor = names.fresh("res");
            let r = cs[i].res.as_mut().unwrap();
            r.anchor = Some(anchor.clone());
            let mut copy = r.clone();
            copy.mark_copy();
            copy.alias_of = Some(anchor);
            cs[j].res = Some(copy);
        }
    }
    // Anchors that nothing refers to: edits through them are fine.
    if rng.chance(15) {
        let i = rng.below(n);
        if let Some(r) = cs[i].res.as_mut().filter(|r| !r.va && r.alias_of.is_none()) {
            match rng.below(3) {
                0 if r.anchor.is_none() => r.anchor = Some(names.fresh("lone")),
                1 => {
                    let sm = r.side_mut(rng.one(&[Side::Requests, Side::Limits]));
                    if sm.state == State::Map
                        && !sm.entries.is_empty()
                        && sm.anchor.is_none()
                        && sm.alias_of.is_none()
                    {
                        sm.anchor = Some(names.fresh("lone"));
                    }
                }
                _ => {
                    let sm = r.side_mut(rng.one(&[Side::Requests, Side::Limits]));
                    if sm.state == State::Map && sm.alias_of.is_none() && !sm.entries.is_empty() {
                        let at = rng.below(sm.entries.len());
                        let e = &mut sm.entries[at];
                        if e.anchor.is_none() && e.alias_of.is_none() {
                            e.anchor = Some(names.fresh("lone"));
                        }
                    }
                }
            }
        }
    }
}

fn gen_workload(rng: &mut Rng, index: usize) -> (Y, DocModel) {
    let kind = rng.one(&["Pod", "Deployment", "Job", "Deployment"]);
    let api = match kind {
        "Pod" => "v1",
        "Job" => "batch/v1",
        _ => "apps/v1",
    };
    let name = format!("{}-{index}", rng.one(&["llm", "trainer", "embed", "infer"]));
    let namespace = rng.chance(40).then_some("ml");
    let mut names = Anchors(0);
    let pod_path: Vec<Segment> = match kind {
        "Pod" => vec![Segment::Key("spec".into())],
        _ => ["spec", "template", "spec"]
            .iter()
            .map(|s| Segment::Key(s.to_string()))
            .collect(),
    };
    let n = 1 + rng.below(3);
    let n_init = usize::from(rng.chance(12));
    let mut cs = Vec::new();
    for (field, count) in [("initContainers", n_init), ("containers", n)] {
        for i in 0..count {
            let mut path = pod_path.clone();
            path.push(Segment::Key(field.into()));
            path.push(Segment::Index(i));
            let cname = if field == "initContainers" {
                format!("init-{i}")
            } else {
                rng.one(&["vllm", "worker", "sidecar", "main"]).to_string() + &format!("-{i}")
            };
            cs.push(gen_container(rng, &cname, path));
        }
    }
    add_anchors(rng, &mut cs, &mut names);
    let init: Vec<Y> = cs[..n_init].iter().map(container_to_y).collect();
    let main: Vec<Y> = cs[n_init..].iter().map(container_to_y).collect();
    let mut pod: Vec<(&str, Y)> = Vec::new();
    if kind == "Job" || rng.chance(20) {
        pod.push((
            "restartPolicy",
            s(if kind == "Job" { "Never" } else { "Always" }),
        ));
    }
    if !init.is_empty() {
        pod.push(("initContainers", seq(init, false)));
    }
    let all_flow = cs[n_init..].iter().all(|c| c.flow);
    pod.push(("containers", seq(main, all_flow && rng.chance(50))));
    if rng.chance(20) {
        pod.push((
            "nodeSelector",
            map(
                vec![("pool", sq("gpu-a100", random_q(rng)))],
                rng.chance(50),
            ),
        ));
    }
    if rng.chance(20) {
        let t = map(
            vec![
                ("key", s("nvidia.com/gpu")),
                ("operator", s("Exists")),
                ("effect", s("NoSchedule")),
            ],
            rng.chance(60),
        );
        pod.push(("tolerations", seq(vec![t], false)));
    }
    if rng.chance(15) {
        rng.shuffle(&mut pod);
        // Anchors come before their aliases: init containers stay before containers.
        let at = |pod: &[(&str, Y)], key| pod.iter().position(|(k, _)| *k == key);
        if let (Some(i), Some(c)) = (at(&pod, "initContainers"), at(&pod, "containers")) {
            if c < i {
                pod.swap(i, c);
            }
        }
    }
    let pod = map(pod, false);
    // Metadata, sometimes with the name anchored and repeated in labels.
    let name_anchor = rng.chance(12).then(|| names.fresh("nm"));
    let app = || match &name_anchor {
        Some(a) => Y::Alias(a.clone()),
        None => s(&name),
    };
    let mut meta: Vec<(&str, Y)> = vec![(
        "name",
        Y::S {
            text: name.clone(),
            q: random_q(rng),
            anchor: name_anchor.clone(),
        },
    )];
    if let Some(ns) = namespace {
        meta.push(("namespace", s(ns)));
    }
    if rng.chance(50) {
        meta.push(("labels", map(vec![("app", app())], rng.chance(50))));
    }
    if rng.chance(15) {
        meta.push((
            "annotations",
            map(
                vec![
                    // Never last in the file: it keeps its final line break.
                    (
                        "description",
                        Y::Lit(vec!["serves the model".into(), "limits: {cpu: 1}".into()]),
                    ),
                    ("team", sq("ml platform", Q::Double)),
                ],
                false,
            ),
        ));
    }
    let meta_flow = rng.chance(25);
    let mut top: Vec<(&str, Y)> = vec![
        ("apiVersion", s(api)),
        ("kind", s(kind)),
        ("metadata", map(meta, meta_flow)),
    ];
    let spec = match kind {
        "Pod" => pod,
        _ => {
            let mut spec: Vec<(&str, Y)> = Vec::new();
            if kind == "Deployment" {
                spec.push(("replicas", s("1")));
                spec.push((
                    "selector",
                    map(
                        vec![("matchLabels", map(vec![("app", app())], true))],
                        false,
                    ),
                ));
            } else if rng.chance(50) {
                spec.push(("backoffLimit", s("0")));
            }
            let tmeta = map(
                vec![("labels", map(vec![("app", app())], rng.chance(50)))],
                false,
            );
            spec.push((
                "template",
                map(vec![("metadata", tmeta), ("spec", pod)], false),
            ));
            map(spec, false)
        }
    };
    top.push(("spec", spec));
    if rng.chance(10) {
        top.swap(0, 1);
    }
    if name_anchor.is_none() && rng.chance(5) {
        rng.shuffle(&mut top);
    }
    let y = map(top, false);
    let object = match namespace {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    };
    let mut referenced = HashSet::new();
    aliases_in(&y, &mut referenced);
    let json = to_json(&y, &mut HashMap::new());
    (
        y,
        DocModel {
            object,
            containers: cs,
            json,
            referenced,
        },
    )
}

fn gen_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let nl = if rng.chance(30) { "\r\n" } else { "\n" };
    let w = if rng.chance(30) { 4 } else { 2 };
    let seq_indent = rng.chance(50);
    let n_docs = match rng.below(10) {
        0..=5 => 1,
        6..=8 => 2,
        _ => 3,
    };
    let mut docs_y = Vec::new();
    let mut docs = Vec::new();
    for i in 0..n_docs {
        if rng.chance(8) {
            // A document that runs no pods: nothing to fix there.
            let y = map(
                vec![
                    ("apiVersion", s("v1")),
                    ("kind", s("Service")),
                    ("metadata", map(vec![("name", s("svc"))], true)),
                    (
                        "spec",
                        map(
                            vec![(
                                "ports",
                                seq(vec![map(vec![("port", s("80"))], true)], false),
                            )],
                            false,
                        ),
                    ),
                ],
                false,
            );
            let json = to_json(&y, &mut HashMap::new());
            docs_y.push(y);
            docs.push(DocModel {
                object: "Service/svc".into(),
                containers: Vec::new(),
                json,
                referenced: HashSet::new(),
            });
        }
        let (y, d) = gen_workload(&mut rng, i);
        docs_y.push(y);
        docs.push(d);
    }
    let bom = rng.chance(3);
    let final_newline = !rng.chance(25);
    let mut out = Out {
        text: String::new(),
        nl,
        w,
        seq_indent,
        rng: &mut rng,
        shared: HashSet::new(),
        shared_spans: Vec::new(),
        comments: 0,
        after_literal: false,
    };
    if bom {
        out.text.push('\u{feff}');
    }
    let directive = out.rng.chance(3);
    if directive {
        let _ = write!(out.text, "%YAML 1.2{nl}");
    }
    if out.rng.chance(20) {
        let c = out.comment();
        let _ = write!(out.text, "# {c}{nl}");
    }
    for (i, y) in docs_y.iter().enumerate() {
        // Anchors are per document: the same name may be shared in one and alone in another.
        out.shared = docs[i].referenced.clone();
        if i > 0 || directive || out.rng.chance(30) {
            out.text.push_str("---");
            out.eol();
        }
        if i > 0 && out.rng.chance(8) {
            // A document holding only a comment: not a document for the linter.
            let c = out.comment();
            let _ = write!(out.text, "# {c}{nl}---{nl}");
        }
        let Y::M { entries, .. } = y else {
            unreachable!()
        };
        out.block_map(entries, 0, false);
        if out.rng.chance(10) {
            out.text.push_str("...");
            out.text.push_str(nl);
        }
    }
    if out.rng.chance(15) {
        let c = out.comment();
        let _ = write!(out.text, "# {c}{nl}");
    }
    let mut text = out.text;
    let shared_spans = out.shared_spans;
    if !final_newline {
        while text.ends_with('\n') {
            text.pop();
            if text.ends_with('\r') {
                text.pop();
            }
        }
    }
    Case {
        text,
        docs,
        shared_spans,
    }
}

// ------------------------------------------------------------------------------------------
// What the linter must report and fix

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Applied,
    /// The finding has no fix (an alias, or a `limits:` without a mapping).
    NoFix,
    /// The fix exists but must be refused: it edits through a shared anchor.
    Rejected,
    /// The finding carries an unsafe fix: plain `--fix` leaves it.
    Unsafe,
}

#[derive(Clone, Debug)]
struct Pred {
    rule: &'static str,
    doc: usize,
    container: usize,
    resource: String,
    /// The fix: side, value, description.
    fix: Option<(Side, String, String)>,
    outcome: Outcome,
}

/// What `set_quantity` on `side`/`name` must do: nothing, an edit that verifies, or an edit
/// that changes an alias too.
fn fix_outcome(r: &ResM, referenced: &HashSet<String>, side: Side, name: &str) -> Outcome {
    let shared = |a: &Option<String>| a.as_ref().is_some_and(|a| referenced.contains(a));
    if r.va {
        return Outcome::NoFix;
    }
    let sm = r.side(side);
    if let Some(e) = sm.get(name) {
        if e.va {
            return Outcome::NoFix;
        }
        return if shared(&e.anchor) || shared(&sm.anchor) || shared(&r.anchor) {
            Outcome::Rejected
        } else {
            Outcome::Applied
        };
    }
    match sm.state {
        State::Map if sm.va && !sm.entries.is_empty() => Outcome::NoFix,
        State::Map if shared(&sm.anchor) || shared(&r.anchor) => Outcome::Rejected,
        State::Map => Outcome::Applied,
        // `limits:` or `limits: ~` is filled in place.
        State::Null if shared(&r.anchor) => Outcome::Rejected,
        State::Null => Outcome::Applied,
        State::Absent if shared(&r.anchor) => Outcome::Rejected,
        State::Absent => Outcome::Applied,
    }
}

fn predict(docs: &[DocModel]) -> Vec<Pred> {
    let mut preds = Vec::new();
    let is_gpu = |r: &ResM| {
        [&r.requests, &r.limits].iter().any(|s| {
            s.state == State::Map
                && s.entries
                    .iter()
                    .any(|e| is_known_gpu(&e.name) && e.text.trim() != "0")
        })
    };
    for (di, d) in docs.iter().enumerate() {
        // QoS is the pod's: every container of a pod with a GPU container counts.
        let gpu_pod = d
            .containers
            .iter()
            .any(|c| c.res.as_ref().is_some_and(is_gpu));
        for (ci, c) in d.containers.iter().enumerate() {
            let r = c.res.as_ref();
            let mut push =
                |rule, resource: &str, fix: Option<(Side, String, String)>, safe: bool| {
                    let outcome = match (&fix, r) {
                        (Some((side, _, _)), Some(r)) => {
                            match fix_outcome(r, &d.referenced, *side, resource) {
                                Outcome::NoFix => Outcome::NoFix,
                                _ if !safe => Outcome::Unsafe,
                                other => other,
                            }
                        }
                        _ => Outcome::NoFix,
                    };
                    preds.push(Pred {
                        rule,
                        doc: di,
                        container: ci,
                        resource: resource.to_string(),
                        fix: fix.filter(|_| outcome != Outcome::NoFix),
                        outcome,
                    });
                };
            if let Some(r) = r {
                for name in r.names().iter().filter(|n| is_known_gpu(n)) {
                    match (r.requests.get(name), r.limits.get(name)) {
                        (Some(q), None) => push(
                            "GPU001",
                            name,
                            Some((
                                Side::Limits,
                                q.text.clone(),
                                format!("limits.{name}: (none) -> {}", q.text),
                            )),
                            true,
                        ),
                        (Some(q), Some(l)) if q.canon != l.canon => push(
                            "GPU002",
                            name,
                            Some((
                                Side::Requests,
                                l.text.clone(),
                                format!("requests.{name}: {} -> {}", q.text, l.text),
                            )),
                            true,
                        ),
                        _ => {}
                    }
                }
            }
            if !gpu_pod {
                continue;
            }
            let gpu = r.is_some_and(is_gpu);
            let mut missing = Vec::new();
            for name in ["cpu", "memory"] {
                let (q, l) = r.map_or((None, None), |r| (r.requests.get(name), r.limits.get(name)));
                match (q, l) {
                    // Above the limit is RES001's (not selected here), not a QoS matter.
                    (Some(q), Some(l)) if q.canon < l.canon => push(
                        "QOS002",
                        name,
                        Some((
                            Side::Requests,
                            l.text.clone(),
                            format!("requests.{name}: {} -> {}", q.text, l.text),
                        )),
                        true,
                    ),
                    // The limit added equal to the request is an unsafe fix.
                    (Some(q), None) => push(
                        "QOS002",
                        name,
                        Some((
                            Side::Limits,
                            q.text.clone(),
                            format!("limits.{name}: (none) -> {}", q.text),
                        )),
                        false,
                    ),
                    (None, None) if !gpu => missing.push(name),
                    _ => {}
                }
            }
            if !missing.is_empty() {
                push("QOS002", &missing.join(" or "), None, true);
            }
        }
    }
    preds
}

/// The models after the applied fixes.
fn apply_to_models(docs: &mut [DocModel], preds: &[Pred]) {
    for p in preds.iter().filter(|p| p.outcome == Outcome::Applied) {
        let (side, value, _) = p.fix.clone().unwrap();
        let d = &mut docs[p.doc];
        let r = d.containers[p.container].res.as_mut().unwrap();
        let res_flow = r.flow;
        let sm = r.side_mut(side);
        let canon = sibling_canon(&p.resource, &value);
        let is_map = sm.state == State::Map;
        match sm.entries.iter_mut().find(|e| e.name == p.resource) {
            Some(e) if is_map => {
                e.text = value.clone();
                e.canon = canon;
            }
            _ => {
                if sm.state == State::Absent {
                    sm.flow = res_flow;
                }
                sm.state = State::Map;
                sm.entries.push(Ent {
                    name: p.resource.clone(),
                    kq: Q::Plain,
                    text: value.clone(),
                    canon,
                    q: Q::Plain,
                    anchor: None,
                    alias_of: None,
                    va: false,
                });
            }
        }
        let mut path = d.containers[p.container].path.clone();
        path.push(Segment::Key("resources".into()));
        path.push(Segment::Key(side_key(side).into()));
        path.push(Segment::Key(p.resource.clone()));
        set_json(&mut d.json, &path, &value);
    }
}

fn sibling_canon(name: &str, text: &str) -> u64 {
    let table: &[(&str, u64)] = match name {
        "cpu" => CPU_VALUES,
        "memory" => MEM_VALUES,
        _ => GPU_VALUES,
    };
    table
        .iter()
        .find(|(t, _)| *t == text)
        .map_or(u64::MAX, |(_, c)| *c)
}

fn set_json(doc: &mut Json, path: &[Segment], value: &str) {
    let (last, parents) = path.split_last().unwrap();
    let mut at = doc;
    for seg in parents {
        at = match seg {
            Segment::Key(key) => {
                let m = at.as_object_mut().unwrap();
                if m.get(key).is_none_or(Json::is_null) {
                    m.insert(key.clone(), Json::Object(Map::new()));
                }
                m.get_mut(key).unwrap()
            }
            Segment::Index(i) => &mut at.as_array_mut().unwrap()[*i],
        };
    }
    let Segment::Key(key) = last else {
        unreachable!()
    };
    at.as_object_mut()
        .unwrap()
        .insert(key.clone(), Json::String(value.to_string()));
}

// ------------------------------------------------------------------------------------------
// Helpers on parsed text

fn node_at<'a>(root: &'a Node, path: &[Segment]) -> Option<&'a Node> {
    path.iter().try_fold(root, |n, seg| match seg {
        Segment::Key(key) => n.get(key),
        Segment::Index(i) => n.as_seq()?.get(*i),
    })
}

fn line_of(stream: &Stream, offset: usize) -> usize {
    stream.line_col(offset).0 - 1
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

fn comment_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| l.trim_start().starts_with('#'))
        .collect()
}

/// `&name` and `*name` tokens, in order.
fn anchor_tokens(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        if (c == b'&' || c == b'*') && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let end = (i + 1..b.len())
                .find(|&j| !b[j].is_ascii_alphanumeric())
                .unwrap_or(b.len());
            out.push(text[i..end].to_string());
        }
    }
    out
}

fn resource_of(f: &Finding) -> String {
    for r in ["cpu or memory", "cpu", "memory"] {
        if f.message.contains(&format!(" has no {r} limit")) {
            return r.to_string();
        }
    }
    for r in ["cpu", "memory"] {
        if f.message.contains(&format!(" requests {r} ")) {
            return r.to_string();
        }
    }
    f.message.split('`').nth(1).unwrap_or_default().to_string()
}

type FindingKey = (String, String, String, String, Option<String>);

fn finding_keys(findings: &[Finding]) -> Vec<FindingKey> {
    let mut keys: Vec<FindingKey> = findings
        .iter()
        .map(|f| {
            (
                f.rule.id.to_string(),
                f.object.display_name(),
                f.container.clone().unwrap_or_default(),
                resource_of(f),
                f.fix.as_ref().map(|x| x.description.clone()),
            )
        })
        .collect();
    keys.sort();
    keys
}

fn predicted_keys(docs: &[DocModel], preds: &[Pred], only_left: bool) -> Vec<FindingKey> {
    let mut keys: Vec<FindingKey> = preds
        .iter()
        .filter(|p| !only_left || p.outcome != Outcome::Applied)
        .map(|p| {
            (
                p.rule.to_string(),
                docs[p.doc].object.clone(),
                docs[p.doc].containers[p.container].name.clone(),
                p.resource.clone(),
                p.fix.as_ref().map(|f| f.2.clone()),
            )
        })
        .collect();
    keys.sort();
    keys
}

fn esc(text: &str) -> String {
    format!("{text:?}")
}

macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(format!($($arg)*));
        }
    };
}

// ------------------------------------------------------------------------------------------
// The pipeline property

#[derive(Default)]
struct Stats {
    cases: usize,
    fixed_files: usize,
    applied: BTreeMap<&'static str, usize>,
    rejected: usize,
    no_fix: usize,
    inserted_lines: usize,
    crlf: usize,
    multi_doc: usize,
    anchors: usize,
    in_lint: std::time::Duration,
    in_plan: std::time::Duration,
}

fn selection() -> Selection {
    Selection {
        select: vec![
            Rule::GpuLimitMissing,
            Rule::GpuRequestLimitMismatch,
            Rule::GpuBurstableQos,
        ],
        ignore: Vec::new(),
        measured_only: false,
    }
}

fn check_pipeline(
    linter: &Linter,
    file: &Path,
    case: &Case,
    stats: &mut Stats,
) -> Result<(), String> {
    let text = &case.text;
    // A new file each time: rewriting a file in place can wait for its old blocks.
    let _ = std::fs::remove_file(file);
    std::fs::write(file, text).map_err(|e| e.to_string())?;
    let original = Stream::parse(text);
    ensure!(
        original.error.is_none(),
        "generator wrote invalid YAML: {:?}",
        original.error
    );
    ensure!(
        original.documents.len() == case.docs.len(),
        "{} documents parsed, {} generated",
        original.documents.len(),
        case.docs.len()
    );
    for (i, (d, m)) in original.documents.iter().zip(&case.docs).enumerate() {
        let got = plain(&d.root);
        ensure!(
            same_in_order(&got, &m.json),
            "document {i} parses to\n{got}\nnot the generated\n{}",
            m.json
        );
    }
    let preds = predict(&case.docs);
    let t = Instant::now();
    let run = linter.run(&[file.to_path_buf()]);
    stats.in_lint += t.elapsed();
    ensure!(run.errors.is_empty(), "input errors: {:?}", run.errors);
    let got = finding_keys(&run.findings);
    let want = predicted_keys(&case.docs, &preds, false);
    ensure!(got == want, "findings\n  got  {got:?}\n  want {want:?}");

    let t = Instant::now();
    let fix_plan = plan(linter, &run, false);
    stats.in_plan += t.elapsed();
    let applied_preds: Vec<&Pred> = preds
        .iter()
        .filter(|p| p.outcome == Outcome::Applied)
        .collect();
    let n_rejected = preds
        .iter()
        .filter(|p| p.outcome == Outcome::Rejected)
        .count();
    stats.rejected += n_rejected;
    stats.no_fix += preds.iter().filter(|p| p.outcome == Outcome::NoFix).count();
    let mut want_rejected: Vec<&str> = preds
        .iter()
        .filter(|p| p.outcome == Outcome::Rejected)
        .map(|p| p.rule)
        .collect();
    want_rejected.sort();
    let mut got_rejected: Vec<&str> = fix_plan.rejected.iter().map(|r| r.rule).collect();
    got_rejected.sort();
    ensure!(
        got_rejected == want_rejected,
        "refused fixes: got {:?}, want {want_rejected:?}",
        fix_plan.rejected
    );
    if applied_preds.is_empty() {
        ensure!(
            fix_plan.files.is_empty(),
            "nothing to fix, yet a file was planned"
        );
        return Ok(());
    }
    ensure!(
        fix_plan.files.len() == 1,
        "{} files planned",
        fix_plan.files.len()
    );
    let ff = &fix_plan.files[0];
    ensure!(ff.original == *text, "the plan's original is not the file");
    let fixed = ff.fixed.as_str();
    stats.fixed_files += 1;
    if std::env::var_os("GPULINT_PROP_SHOW").is_some() {
        eprintln!(
            "--- input\n{text}\n--- fixed\n{fixed}\n--- applied {:?}",
            ff.applied
        );
    }

    // The applied fixes are the predicted ones.
    let mut got_applied: Vec<(String, String, String)> = ff
        .applied
        .iter()
        .map(|a| (a.rule.to_string(), a.object.clone(), a.description.clone()))
        .collect();
    got_applied.sort();
    let mut want_applied: Vec<(String, String, String)> = applied_preds
        .iter()
        .map(|p| {
            (
                p.rule.to_string(),
                case.docs[p.doc].object.clone(),
                p.fix.as_ref().unwrap().2.clone(),
            )
        })
        .collect();
    want_applied.sort();
    ensure!(
        got_applied == want_applied,
        "applied fixes\n  got  {got_applied:?}\n  want {want_applied:?}"
    );
    for p in &applied_preds {
        *stats.applied.entry(p.rule).or_default() += 1;
    }

    // It parses, and only the intended fields changed, to the intended values.
    let after = Stream::parse(fixed);
    ensure!(
        after.error.is_none(),
        "the fixed text does not parse: {:?}",
        after.error
    );
    ensure!(
        after.documents.len() == original.documents.len(),
        "the fixed text has {} documents, not {}",
        after.documents.len(),
        original.documents.len()
    );
    let mut expected_docs: Vec<DocModel> = case
        .docs
        .iter()
        .map(|d| DocModel {
            object: d.object.clone(),
            containers: d.containers.clone(),
            json: d.json.clone(),
            referenced: d.referenced.clone(),
        })
        .collect();
    apply_to_models(&mut expected_docs, &preds);
    for (i, (d, m)) in after.documents.iter().zip(&expected_docs).enumerate() {
        let got = plain(&d.root);
        ensure!(
            same_in_order(&got, &m.json),
            "fixed document {i} is\n{got}\nnot the expected\n{}",
            m.json
        );
    }

    // Comments, anchors and aliases survive.
    let texts = |s: &Stream| {
        s.comments
            .iter()
            .map(|c| c.text.clone())
            .collect::<Vec<_>>()
    };
    ensure!(texts(&after) == texts(&original), "comments changed");
    ensure!(
        comment_lines(fixed) == comment_lines(text),
        "comment lines changed"
    );
    ensure!(
        anchor_tokens(fixed) == anchor_tokens(text),
        "anchors or aliases changed"
    );

    // Line endings, the final newline and the BOM are kept.
    if text.contains("\r\n") {
        ensure!(
            !fixed.replace("\r\n", "").contains('\n'),
            "a bare LF in a CRLF file"
        );
        stats.crlf += 1;
    } else {
        ensure!(!fixed.contains('\r'), "a CR in an LF file");
    }
    ensure!(
        text.ends_with('\n') == fixed.ends_with('\n'),
        "the final newline changed"
    );
    ensure!(
        text.starts_with('\u{feff}') == fixed.starts_with('\u{feff}'),
        "the BOM changed"
    );
    if case.docs.len() > 1 {
        stats.multi_doc += 1;
    }
    if !case.docs.iter().all(|d| d.referenced.is_empty()) {
        stats.anchors += 1;
    }

    // Line diff: untouched lines stay byte for byte; the others are the edited value lines and
    // the inserted lines.
    let mut touched: HashSet<usize> = HashSet::new();
    let mut inserted = 0usize;
    let mut inserts_per_side: HashMap<(usize, usize, &'static str), usize> = HashMap::new();
    for p in &applied_preds {
        let c = &case.docs[p.doc].containers[p.container];
        let root = &original.documents[p.doc].root;
        let (side, _, _) = p.fix.as_ref().unwrap();
        let mut path = c.path.clone();
        path.push(Segment::Key("resources".into()));
        let res = node_at(root, &path).ok_or("no resources node")?;
        let sm = res.get(side.key());
        let count = inserts_per_side
            .entry((p.doc, p.container, side.key()))
            .or_default();
        if let Some(e) = sm.and_then(|m| m.entry(&p.resource)) {
            for l in
                line_of(&original, e.value.span.start())..=line_of(&original, e.value.span.end())
            {
                touched.insert(l);
            }
            continue;
        }
        *count += 1;
        let last_line = |m: &Node| {
            m.as_map()
                .and_then(|e| e.last())
                .map(|e| line_of(&original, e.value.span.end().max(e.key.span.end())))
        };
        match sm {
            Some(m) if m.as_map().is_some_and(|e| !e.is_empty()) => {
                touched.extend(last_line(m));
                inserted += usize::from(!m.flow);
            }
            Some(m) => {
                touched.insert(line_of(&original, m.span.start()));
                touched.insert(line_of(&original, m.span.end()));
                // A null block value (`limits:`, `limits: ~`) gets its entries on new lines.
                inserted += usize::from(m.is_null() && !res.flow);
            }
            None => {
                touched.extend(last_line(res));
                let sibling = res.get(if *side == Side::Limits {
                    "requests"
                } else {
                    "limits"
                });
                let created_block = !res.flow && !sibling.is_some_and(|s| s.flow);
                inserted += if *count > 1 {
                    usize::from(created_block)
                } else if res.flow {
                    0
                } else if sibling.is_some_and(|s| s.flow) {
                    1
                } else {
                    2
                };
            }
        }
    }
    stats.inserted_lines += inserted;
    let (old, new) = (lines(text), lines(fixed));
    // Every line no fix touches is still there, in order (a subsequence of the new lines).
    let mut at = 0;
    for (i, line) in old.iter().enumerate() {
        if touched.contains(&i) {
            continue;
        }
        let found = new[at..].iter().position(|l| l == line);
        ensure!(
            found.is_some(),
            "line {} changed but no fix edits it: {line:?}",
            i + 1
        );
        at += found.unwrap() + 1;
    }
    ensure!(
        new.len() == old.len() + inserted,
        "{} lines became {}, {inserted} insertions expected",
        old.len(),
        new.len()
    );
    for l in &new {
        let body = l.trim_end_matches('\n').trim_end_matches('\r');
        ensure!(
            !body.contains('\t') || text.contains('\t'),
            "a tab appeared: {l:?}"
        );
    }

    // Linting the fixed file: the fixed findings are gone, the others stay, nothing to fix.
    std::fs::remove_file(file).map_err(|e| e.to_string())?;
    std::fs::write(file, fixed).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let run2 = linter.run(&[file.to_path_buf()]);
    stats.in_lint += t.elapsed();
    ensure!(
        run2.errors.is_empty(),
        "input errors after the fix: {:?}",
        run2.errors
    );
    let left = predict(&expected_docs);
    ensure!(
        left.iter().all(|p| p.outcome != Outcome::Applied),
        "the model predicts fixes after fixing: {left:?}"
    );
    let got = finding_keys(&run2.findings);
    let want = predicted_keys(&expected_docs, &left, false);
    ensure!(
        got == want,
        "findings after the fix\n  got  {got:?}\n  want {want:?}"
    );
    let t = Instant::now();
    let second = plan(linter, &run2, false);
    stats.in_plan += t.elapsed();
    ensure!(
        second.files.is_empty(),
        "a second plan changes the file again:\n{}",
        esc(&second.files[0].fixed)
    );
    Ok(())
}

thread_local! {
    /// In the case runners: the last panic, with its location, instead of a printed backtrace.
    static CAUGHT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn catch_panics_in_workers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let caught = CAUGHT.with(|c| {
                let mut c = c.borrow_mut();
                let capturing = c.is_some();
                if capturing {
                    *c = Some(info.to_string());
                }
                capturing
            });
            if !caught {
                previous(info);
            }
        }));
    });
}

fn failure_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("fix_props-failures")
}

/// A failed case: its index, what went wrong, its input.
type Failure = (usize, String, String);

/// Runs `check` on every case, in two threads; reports failures with their inputs.
fn run_cases<S: Default + Send>(
    name: &str,
    check: impl Fn(&mut S, usize, &Case, &Path) -> Result<(), String> + Sync,
    merge: impl Fn(&mut S, S),
) -> (S, usize) {
    let indices = case_indices();
    let workers = 2;
    let results: Vec<(S, Vec<Failure>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let indices = &indices;
                let check = &check;
                scope.spawn(move || {
                    catch_panics_in_workers();
                    CAUGHT.with(|c| *c.borrow_mut() = Some(String::new()));
                    let dir = tempfile::tempdir().unwrap();
                    let mut stats = S::default();
                    let mut failures = Vec::new();
                    for &i in indices.iter().skip(w).step_by(workers) {
                        let case = gen_case(case_seed(i));
                        let outcome =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                check(&mut stats, i, &case, dir.path())
                            }));
                        let message = match outcome {
                            Ok(Ok(())) => continue,
                            Ok(Err(m)) => m,
                            Err(_) => CAUGHT.with(|c| c.borrow().clone().unwrap_or_default()),
                        };
                        failures.push((i, message, case.text.clone()));
                        if failures.len() >= 20 {
                            break;
                        }
                    }
                    CAUGHT.with(|c| *c.borrow_mut() = None);
                    (stats, failures)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = S::default();
    let mut failures = Vec::new();
    for (s, f) in results {
        merge(&mut total, s);
        failures.extend(f);
    }
    if !failures.is_empty() {
        failures.sort_by_key(|f| f.0);
        let dir = failure_dir();
        let _ = std::fs::create_dir_all(&dir);
        let mut report = String::new();
        for (i, message, text) in failures.iter().take(5) {
            let path = dir.join(format!("{name}-{i}.yaml"));
            let _ = std::fs::write(&path, text);
            let _ = writeln!(
                report,
                "case {i} (GPULINT_PROP_SEED={} GPULINT_PROP_ONLY={i}), written to {}:\n{message}\ninput: {}\n",
                base_seed(),
                path.display(),
                esc(text)
            );
        }
        panic!(
            "{} of {} cases failed:\n{report}",
            failures.len(),
            indices.len()
        );
    }
    (total, indices.len())
}

#[test]
fn planned_fixes_change_only_their_fields() {
    let start = Instant::now();
    let (stats, n) = run_cases(
        "pipeline",
        |stats: &mut Stats, _, case, dir| {
            thread_local! {
                static LINTER: Linter = Linter::new(Config::default(), selection());
            }
            stats.cases += 1;
            LINTER.with(|linter| check_pipeline(linter, &dir.join("m.yaml"), case, stats))
        },
        |total, s| {
            total.cases += s.cases;
            total.fixed_files += s.fixed_files;
            for (k, v) in s.applied {
                *total.applied.entry(k).or_default() += v;
            }
            total.rejected += s.rejected;
            total.no_fix += s.no_fix;
            total.inserted_lines += s.inserted_lines;
            total.crlf += s.crlf;
            total.multi_doc += s.multi_doc;
            total.anchors += s.anchors;
            total.in_lint += s.in_lint;
            total.in_plan += s.in_plan;
        },
    );
    eprintln!(
        "fix_props pipeline: {n} cases, {} fixed files ({} CRLF, {} multi-document, {} with \
         shared anchors), applied {:?}, {} refused, {} without a fix, {} inserted lines, in {:.1?} (threads: {:.1?} linting, {:.1?} planning)",
        stats.fixed_files,
        stats.crlf,
        stats.multi_doc,
        stats.anchors,
        stats.applied,
        stats.rejected,
        stats.no_fix,
        stats.inserted_lines,
        start.elapsed(),
        stats.in_lint,
        stats.in_plan,
    );
    if n >= 500 {
        assert!(
            stats.fixed_files * 2 > n,
            "too few cases had something to fix"
        );
        assert!(stats.applied.get("GPU001").copied().unwrap_or(0) > n / 10);
        assert!(stats.applied.get("GPU002").copied().unwrap_or(0) > n / 10);
        assert!(stats.applied.get("QOS002").copied().unwrap_or(0) > n / 10);
        assert!(stats.rejected > 0 && stats.no_fix > 0 && stats.crlf > 0);
    }
}

// ------------------------------------------------------------------------------------------
// verify, directly

#[derive(Default)]
struct VStats {
    accepted: usize,
    refused_shared: usize,
    wrong_refused: usize,
    garbage: usize,
    garbage_accepted: usize,
}

fn model_of<'m>(case: &'m Case, doc: usize, c: &Container) -> Option<&'m CM> {
    let path = parse_path(&c.path)?;
    case.docs[doc].containers.iter().find(|m| m.path == path)
}

fn changes_path(f: &FieldChange) -> &Vec<Segment> {
    match f {
        FieldChange::Set { path, .. } | FieldChange::Rename { path, .. } => path,
    }
}

/// `fix` with its changes (and document) replaced by wrong ones: every one must be refused.
fn wrong_variants(fix: &Fix, docs: usize, containers: usize) -> Vec<(String, Fix)> {
    let mut out = Vec::new();
    let with = |changes: Vec<FieldChange>| Fix {
        changes,
        ..fix.clone()
    };
    out.push(("no changes".to_string(), with(Vec::new())));
    let first = fix.changes[0].clone();
    let path = changes_path(&first).clone();
    let n = path.len();
    let retarget = |p: Vec<Segment>| match &first {
        FieldChange::Set { value, .. } => FieldChange::Set {
            path: p,
            value: value.clone(),
        },
        FieldChange::Rename { to, .. } => FieldChange::Rename {
            path: p,
            to: to.clone(),
        },
    };
    match &first {
        FieldChange::Set { path, value } => out.push((
            "another value".into(),
            with(vec![FieldChange::Set {
                path: path.clone(),
                value: format!("{value}0"),
            }]),
        )),
        FieldChange::Rename { path, to } => out.push((
            "another new name".into(),
            with(vec![FieldChange::Rename {
                path: path.clone(),
                to: format!("{to}x"),
            }]),
        )),
    }
    if let Some(Segment::Key(last)) = path.last() {
        let mut p = path.clone();
        p[n - 1] = Segment::Key(format!("{last}x"));
        out.push(("another name".into(), with(vec![retarget(p)])));
    }
    if n >= 2 {
        if let Segment::Key(side) = &path[n - 2] {
            let other = if side == "limits" {
                "requests"
            } else {
                "limits"
            };
            if side == "limits" || side == "requests" {
                let mut p = path.clone();
                p[n - 2] = Segment::Key(other.into());
                out.push(("the other side".into(), with(vec![retarget(p)])));
            }
        }
    }
    if containers > 1 {
        if let Some(at) = path.iter().rposition(|s| matches!(s, Segment::Index(_))) {
            let Segment::Index(i) = path[at] else {
                unreachable!()
            };
            let mut p = path.clone();
            p[at] = Segment::Index(if i == 0 { 1 } else { i - 1 });
            out.push(("another container".into(), with(vec![retarget(p)])));
        }
    }
    if docs > 1 {
        out.push((
            "another document".into(),
            Fix {
                document: (fix.document + 1) % docs,
                ..fix.clone()
            },
        ));
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn check_fix_verifies(
    rng: &mut Rng,
    stream: &Stream,
    fix: &Fix,
    expect_ok: bool,
    docs: usize,
    containers: usize,
    what: &str,
    tries: usize,
    stats: &mut VStats,
) -> Result<(), String> {
    let text = &*stream.text;
    let fixed = apply(text, &fix.edits).ok_or_else(|| format!("{what}: edits do not apply"))?;
    let result = verify(stream, &fixed, &[fix]);
    if !expect_ok {
        ensure!(
            result.is_err(),
            "{what}: an edit through a shared anchor was accepted:\n{}",
            esc(&fixed)
        );
        stats.refused_shared += 1;
        return Ok(());
    }
    ensure!(
        result.is_ok(),
        "{what}: a correct fix was refused ({:?}): changes {:?}, edits {:?}\n{}",
        result.err(),
        fix.changes,
        fix.edits,
        esc(&fixed)
    );
    stats.accepted += 1;
    // Some of the wrong change lists, at random.
    let mut wrong = wrong_variants(fix, docs, containers);
    rng.shuffle(&mut wrong);
    for (how, wrong) in wrong.into_iter().take(tries) {
        let r = verify(stream, &fixed, &[&wrong]);
        ensure!(
            r.is_err(),
            "{what}: verify accepted a fix whose changes are wrong ({how}): {:?}",
            wrong.changes
        );
        stats.wrong_refused += 1;
    }
    Ok(())
}

fn scalar_values<'a>(
    node: &'a Node,
    path: &mut Vec<Segment>,
    out: &mut Vec<(Vec<Segment>, &'a Node)>,
) {
    if node.via_alias {
        return;
    }
    match &node.value {
        Value::Map(entries) => {
            for e in entries {
                let Some(key) = e.key.as_scalar() else {
                    continue;
                };
                path.push(Segment::Key(key.text.clone()));
                // Block scalars are left out: their span starts after the `|` header.
                let flow_scalar = e.value.as_scalar().is_some_and(|s| {
                    !matches!(s.style, ScalarStyle::Literal | ScalarStyle::Folded)
                });
                if flow_scalar && !e.value.via_alias && !e.value.is_null() {
                    out.push((path.clone(), &e.value));
                }
                scalar_values(&e.value, path, out);
                path.pop();
            }
        }
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Segment::Index(i));
                scalar_values(item, path, out);
                path.pop();
            }
        }
        Value::Scalar(_) => {}
    }
}

/// Equal, key order included (a fix keeps the order of the keys it does not add).
fn same_in_order(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, v), (l, w))| k == l && same_in_order(v, w))
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_in_order(v, w))
        }
        _ => a == b,
    }
}

/// Equal, key order aside (as `verify` compares).
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

fn check_verify(
    rng: &mut Rng,
    case: &Case,
    catalog: &Catalog,
    stats: &mut VStats,
) -> Result<(), String> {
    let stream = Stream::parse(&case.text);
    let text = &*stream.text;
    let ndocs = stream.documents.len();
    let styles = [
        ScalarStyle::Plain,
        ScalarStyle::DoubleQuoted,
        ScalarStyle::SingleQuoted,
    ];
    for (di, doc) in stream.documents.iter().enumerate() {
        let target = Target::local(text, di);
        let referenced = &case.docs[di].referenced;
        let shared = |a: &Option<String>| a.as_ref().is_some_and(|a| referenced.contains(a));
        for object in objects(doc) {
            let Some(w) = Workload::of(object, catalog) else {
                continue;
            };
            let n = w.containers.len();
            // One random container per document (each verify parses the whole text again).
            if let Some(c) = w.containers.get(rng.below(n.max(1))) {
                let m = model_of(case, di, c).ok_or_else(|| format!("no model for {}", c.path))?;
                // set_quantity on a random side and name.
                {
                    let side = rng.one(&[Side::Requests, Side::Limits]);
                    let name = rng.one(&["nvidia.com/gpu", "cpu", "memory", "example.com/fpga"]);
                    let value = rng.one(&["7", "3Gi", "123m"]);
                    let style = rng.one(&styles);
                    let fix =
                        set_quantity(&target, c, side, name, value, style, Applicability::Safe);
                    let outcome = match &m.res {
                        None => Outcome::NoFix,
                        Some(r) => fix_outcome(r, referenced, side, name),
                    };
                    let what = format!("set_quantity({}, {}.{name} = {value})", c.path, side.key());
                    match (fix, outcome) {
                        (None, Outcome::NoFix) => {}
                        (Some(fix), Outcome::Applied | Outcome::Rejected) => check_fix_verifies(
                            rng,
                            &stream,
                            &fix,
                            outcome == Outcome::Applied,
                            ndocs,
                            n,
                            &what,
                            2,
                            stats,
                        )?,
                        (fix, outcome) => {
                            return Err(format!(
                                "{what}: got {:?}, expected {outcome:?}",
                                fix.map(|f| f.edits)
                            ))
                        }
                    }
                }
                // rename_resource of a name the container has.
                let Some(r) = &m.res else { continue };
                let names = r.names();
                if names.is_empty() || rng.chance(50) {
                    continue;
                }
                let from = names[rng.below(names.len())].clone();
                let fix = rename_resource(&target, c, &from, "example.com/renamed");
                let sides: Vec<&SideM> = [&r.requests, &r.limits]
                    .into_iter()
                    .filter(|s| s.get(&from).is_some())
                    .collect();
                let what = format!("rename_resource({}, {from})", c.path);
                // The keys are written where the mapping is, unless the mapping is an alias.
                let blocked = r.va || sides.iter().any(|s| s.va);
                match fix {
                    None => ensure!(blocked, "{what}: no fix"),
                    Some(fix) => {
                        ensure!(!blocked, "{what}: a fix through an alias: {:?}", fix.edits);
                        let through = shared(&r.anchor) || sides.iter().any(|s| shared(&s.anchor));
                        check_fix_verifies(
                            rng, &stream, &fix, !through, ndocs, n, &what, 1, stats,
                        )?;
                    }
                }
            }
        }
        // A random scalar edit, told with its true path, then with wrong ones.
        let mut scalars = Vec::new();
        scalar_values(&doc.root, &mut Vec::new(), &mut scalars);
        if !scalars.is_empty() && rng.chance(50) {
            let (path, node) = &scalars[rng.below(scalars.len())];
            let value = format!("edited-{}", rng.below(1000));
            let style = node.as_scalar().map_or(ScalarStyle::Plain, |s| s.style);
            let fix = Fix {
                edits: vec![Edit {
                    start: node.span.start(),
                    end: node.span.end(),
                    content: render_scalar(&value, style),
                }],
                source: SourceId::LOCAL,
                applicability: Applicability::Safe,
                document: di,
                changes: vec![FieldChange::Set {
                    path: path.clone(),
                    value,
                }],
                description: String::new(),
                notes: Vec::new(),
            };
            let through = case
                .shared_spans
                .iter()
                .any(|&(a, b)| a <= node.span.start() && node.span.end() <= b);
            let what = format!("edit of {path:?}");
            check_fix_verifies(rng, &stream, &fix, !through, ndocs, 1, &what, 1, stats)?;
        }
    }
    // Garbage inserted anywhere: accepted exactly when the documents did not change.
    let snippets = [
        "x", " ", "#", ": ", "- ", "\n", "{", "'", "\"", "  ", "&a ", "*a", "1", ",", "\n  z: 1",
    ];
    {
        let mut at = rng.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let edit = Edit {
            start: at,
            end: at,
            content: rng.one(&snippets).to_string(),
        };
        let fixed = apply(text, std::slice::from_ref(&edit)).unwrap();
        let parsed = Stream::parse(&fixed);
        let want = if parsed.error.is_some() {
            "unparsable"
        } else if parsed.documents.len() == ndocs
            && parsed
                .documents
                .iter()
                .zip(&stream.documents)
                .all(|(a, b)| same(&plain(&a.root), &plain(&b.root)))
        {
            "ok"
        } else {
            "unintended"
        };
        let got = match verify(&stream, &fixed, &[]) {
            Ok(_) => "ok",
            Err(Rejected::Unparsable(_)) => "unparsable",
            Err(Rejected::Unintended) => "unintended",
        };
        ensure!(
            got == want,
            "inserting {:?} at {at}: verify says {got}, the documents say {want}:\n{}",
            edit.content,
            esc(&fixed)
        );
        stats.garbage += 1;
        stats.garbage_accepted += usize::from(got == "ok");
    }
    Ok(())
}

#[test]
fn verify_rejects_edits_it_was_not_told_about() {
    let start = Instant::now();
    let (stats, n) = run_cases(
        "verify",
        |stats: &mut VStats, i, case, _| {
            thread_local! {
                static CATALOG: Catalog = Catalog::builtin();
            }
            let mut rng = Rng::new(case_seed(i) ^ 0x7665_7269_6679);
            CATALOG.with(|catalog| check_verify(&mut rng, case, catalog, stats))
        },
        |total, s| {
            total.accepted += s.accepted;
            total.refused_shared += s.refused_shared;
            total.wrong_refused += s.wrong_refused;
            total.garbage += s.garbage;
            total.garbage_accepted += s.garbage_accepted;
        },
    );
    eprintln!(
        "fix_props verify: {n} cases, {} correct fixes accepted, {} edits through shared anchors \
         refused, {} wrong change lists refused, {} garbage insertions ({} harmless), in {:.1?}",
        stats.accepted,
        stats.refused_shared,
        stats.wrong_refused,
        stats.garbage,
        stats.garbage_accepted,
        start.elapsed()
    );
    if n >= 500 {
        assert!(stats.accepted > n && stats.wrong_refused > n);
        assert!(stats.refused_shared > 0);
    }
}
