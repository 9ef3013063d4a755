//! Values-origin tracing: the one values leaf that produces a rendered field, found by
//! re-rendering with candidate leaves changed to sentinels (the place a fix must edit).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use super::engine::{HelmEngine, RenderedRelease};
use super::{
    apply_parameters, merge, read_yaml, typed, HelmError, Parameter, Release, ValuesSource,
    MAX_CANDIDATES, PARALLEL_PROBES,
};
use crate::quantity::Quantity;
use crate::source::document::Segment;
use crate::source::yaml::{Node, ScalarKind, ScalarStyle, Span, Stream, Value};

/// Which values a [`ValuesOrigin`] is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValuesLayer {
    /// The chart's own `values.yaml`.
    Chart,
    /// `release.values[i]`.
    Release(usize),
}

/// The values leaf that produces a rendered field.
#[derive(Clone, Debug)]
pub struct ValuesOrigin {
    pub values: ValuesLayer,
    /// The file holding the leaf: a values file, the chart's values.yaml, or the manifest with
    /// the inline values.
    pub file: PathBuf,
    /// The leaf's path in the values (`servingEngineSpec.modelSpec[0].requestGPU`).
    pub key_path: Vec<Segment>,
    /// The leaf in `file`, spans intact (a fixer replaces `node.span` in `file`).
    pub node: Node,
    /// Other fields of the same object that the leaf also writes: only the twin of the field in
    /// the other of `resources.requests`/`resources.limits` is accepted (editing the leaf edits
    /// both).
    pub also_sets: Vec<Vec<Segment>>,
}

fn seg_get<'n>(node: &'n Node, path: &[Segment]) -> Option<&'n Node> {
    path.iter().try_fold(node, |n, s| match s {
        Segment::Key(k) => n.get(k),
        Segment::Index(i) => n.as_seq()?.get(*i),
    })
}

fn json_get<'j>(json: &'j Json, path: &[Segment]) -> Option<&'j Json> {
    path.iter().try_fold(json, |j, s| match s {
        Segment::Key(k) => j.get(k.as_str()),
        Segment::Index(i) => j.get(*i),
    })
}

/// Same value, compared as Kubernetes quantities when both parse (`1` = `"1"`, `1Gi` = `1024Mi`).
pub(super) fn same_quantity(a: &str, b: &str) -> bool {
    match (a.trim().parse::<Quantity>(), b.trim().parse::<Quantity>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn json_text(j: &Json) -> Option<String> {
    match j {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// One layer of values: where it is, and its values (spans of `file`).
struct Layer {
    layer: ValuesLayer,
    file: PathBuf,
    values: LayerValues,
    /// False for an Argo CD `helm.values` string whose text cannot be mapped back to the
    /// manifest's bytes (not a literal block): its leaves take part but cannot be an origin.
    spans_ok: bool,
}

enum LayerValues {
    /// A values tree (a file, or inline values).
    Tree(Node),
    /// Parameters, and the leaves among them (`value:` scalars typed as Helm reads them).
    Sets {
        params: Vec<Parameter>,
        leaves: Vec<(Vec<Segment>, Node)>,
    },
}

/// Shifts the spans of a tree parsed from a literal block scalar's content (`content`) to the
/// manifest (`manifest`); false unless every scalar's bytes are the same at both places.
fn remap_literal(
    node: &mut Node,
    map: &dyn Fn(usize) -> Option<usize>,
    content: &str,
    manifest: &str,
) -> bool {
    let Some(start) = map(node.span.start()) else {
        return false;
    };
    let Some(end) = map(node.span.end()) else {
        return false;
    };
    if matches!(node.value, Value::Scalar(_))
        && (manifest.get(start..end).is_none()
            || manifest.get(start..end) != content.get(node.span.start()..node.span.end()))
    {
        return false;
    }
    node.span = Span {
        source: node.span.source,
        ..Span::new(start, end)
    };
    match &mut node.value {
        Value::Scalar(_) => true,
        Value::Seq(items) => items
            .iter_mut()
            .all(|n| remap_literal(n, map, content, manifest)),
        Value::Map(entries) => entries.iter_mut().all(|e| {
            remap_literal(&mut e.key, map, content, manifest)
                && remap_literal(&mut e.value, map, content, manifest)
        }),
    }
}

/// Parses an Argo CD `helm.values` string; spans point into the manifest when the scalar is a
/// literal block (`values: |`), whose content lines are the manifest's lines minus indentation.
fn inline_string_layer(file: &Path, node: &Node, text: &str) -> (Option<Node>, bool) {
    let parsed = Stream::parse(text)
        .documents
        .into_iter()
        .next()
        .map(|d| d.root);
    let Some(mut root) = parsed else {
        return (None, false);
    };
    let literal = node
        .as_scalar()
        .is_some_and(|s| s.style == ScalarStyle::Literal);
    let manifest = crate::source::repo::read_repo_text(file).ok();
    let ok = literal
        && manifest.as_deref().is_some_and(|m| {
            // The scalar's span starts at its content (past the first line's indentation);
            // every later content line is the manifest line minus that indentation.
            let Some(block) = m.get(node.span.start()..node.span.end()) else {
                return false;
            };
            let indent =
                node.span.start() - m[..node.span.start()].rfind('\n').map_or(0, |i| i + 1);
            let mut line_starts = vec![node.span.start()];
            let mut at = node.span.start();
            for line in block.split_inclusive('\n') {
                at += line.len();
                line_starts.push(at + indent);
            }
            let mut content_starts = vec![0];
            for (i, b) in text.bytes().enumerate() {
                if b == b'\n' {
                    content_starts.push(i + 1);
                }
            }
            let map = |off: usize| -> Option<usize> {
                let line = content_starts
                    .partition_point(|&s| s <= off)
                    .checked_sub(1)?;
                Some(line_starts.get(line)? + (off - content_starts[line]))
            };
            remap_literal(&mut root, &map, text, m)
        });
    (Some(root), ok)
}

fn layers(release: &Release) -> Result<Vec<Layer>, HelmError> {
    let io = |path: &Path| {
        let what = format!("reading {}", path.display());
        move |source| HelmError::Io { what, source }
    };
    let mut out = Vec::new();
    let chart_values = release.chart.join("values.yaml");
    if chart_values.is_file() {
        if let Some(root) = read_yaml(&chart_values).map_err(io(&chart_values))? {
            out.push(Layer {
                layer: ValuesLayer::Chart,
                file: chart_values,
                values: LayerValues::Tree(root),
                spans_ok: true,
            });
        }
    }
    for (i, source) in release.values.iter().enumerate() {
        let layer = ValuesLayer::Release(i);
        match source {
            ValuesSource::File(path) => {
                if let Some(root) = read_yaml(path).map_err(io(path))? {
                    out.push(Layer {
                        layer,
                        file: path.clone(),
                        values: LayerValues::Tree(root),
                        spans_ok: true,
                    });
                }
            }
            ValuesSource::Inline { file, node } => match &node.value {
                Value::Scalar(s) => {
                    if let (Some(root), spans_ok) = inline_string_layer(file, node, &s.text) {
                        out.push(Layer {
                            layer,
                            file: file.clone(),
                            values: LayerValues::Tree(root),
                            spans_ok,
                        });
                    }
                }
                _ => out.push(Layer {
                    layer,
                    file: file.clone(),
                    values: LayerValues::Tree(node.clone()),
                    spans_ok: true,
                }),
            },
            ValuesSource::Parameters { file, params } => out.push(Layer {
                layer,
                file: file.clone(),
                values: LayerValues::Sets {
                    // In the order Helm applies them: a later leaf of the same path wins.
                    leaves: {
                        let mut ordered: Vec<&Parameter> = params.iter().collect();
                        ordered.sort_by_key(|p| p.kind);
                        ordered
                            .into_iter()
                            .filter_map(|p| Some((p.path.clone(), p.leaf()?)))
                            .collect()
                    },
                    params: params.clone(),
                },
                spans_ok: true,
            }),
        }
    }
    Ok(out)
}

fn collect_leaves<'n>(
    node: &'n Node,
    path: &mut Vec<Segment>,
    out: &mut Vec<(Vec<Segment>, &'n Node)>,
) {
    match &node.value {
        Value::Scalar(s) if s.kind != ScalarKind::Null => out.push((path.clone(), node)),
        Value::Scalar(_) => {}
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Segment::Index(i));
                collect_leaves(item, path, out);
                path.pop();
            }
        }
        Value::Map(entries) => {
            for e in entries {
                let Some(key) = e.key.text() else { continue };
                path.push(Segment::Key(key.to_string()));
                collect_leaves(&e.value, path, out);
                path.pop();
            }
        }
    }
}

/// The override that sets `path` to `sentinel` and keeps every other merged value: maps are
/// written sparsely (Helm merges them); a list is copied whole (Helm replaces lists).
fn override_at(merged: &Json, path: &[Segment], sentinel: Json) -> Option<Json> {
    fn set_in(mut value: Json, path: &[Segment], sentinel: Json) -> Option<Json> {
        let Some((first, rest)) = path.split_first() else {
            return Some(sentinel);
        };
        let slot = match first {
            Segment::Key(k) => value.as_object_mut()?.get_mut(k.as_str())?,
            Segment::Index(i) => value.as_array_mut()?.get_mut(*i)?,
        };
        *slot = set_in(slot.take(), rest, sentinel)?;
        Some(value)
    }
    let Some((first, rest)) = path.split_first() else {
        return Some(sentinel);
    };
    match first {
        Segment::Key(k) => {
            let inner = merged.get(k.as_str())?;
            let child = if inner.is_object() {
                override_at(inner, rest, sentinel)?
            } else {
                set_in(inner.clone(), rest, sentinel)?
            };
            let mut map = Map::new();
            map.insert(k.clone(), child);
            Some(Json::Object(map))
        }
        Segment::Index(_) => None, // values are a mapping at the top
    }
}

/// The number `n` written like the leaf (`16Gi` → `7919Gi`, `1` → `7919`).
fn sentinel_numbered(leaf: &Node, n: u32) -> Json {
    match leaf.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Int) | Some(ScalarKind::Float) => Json::from(n),
        _ => {
            let text = leaf.text().unwrap_or_default();
            let digits_end = text
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(text.len());
            Json::String(format!("{n}{}", &text[digits_end..]))
        }
    }
}

/// A number that is not `avoid`, written like the leaf (`16Gi` → `7919Gi`, `1` → `7919`).
fn sentinel_for(leaf: &Node, avoid: &str) -> Json {
    let text = leaf.text().unwrap_or_default();
    for n in [7919u32, 7927, 7933] {
        let candidate = match leaf.as_scalar().map(|s| s.kind) {
            Some(ScalarKind::Int) | Some(ScalarKind::Float) => Json::from(n),
            _ => {
                let digits_end = text
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap_or(text.len());
                Json::String(format!("{n}{}", &text[digits_end..]))
            }
        };
        if json_text(&candidate).is_some_and(|t| !same_quantity(&t, avoid)) {
            return candidate;
        }
    }
    Json::from(7937u32)
}

/// Paths (of leaves, or of keys added/removed, or of lists that changed length) that differ.
fn diff(a: &Json, b: &Json, path: &mut Vec<Segment>, out: &mut Vec<Vec<Segment>>) {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            for (k, v) in x {
                path.push(Segment::Key(k.clone()));
                match y.get(k) {
                    Some(w) => diff(v, w, path, out),
                    None => out.push(path.clone()),
                }
                path.pop();
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                path.push(Segment::Key(k.clone()));
                out.push(path.clone());
                path.pop();
            }
        }
        (Json::Array(x), Json::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                path.push(Segment::Index(i));
                diff(v, w, path, out);
                path.pop();
            }
        }
        (x, y) if x == y => {}
        _ => out.push(path.clone()),
    }
}

/// Annotations that hash the values or a rendered config (`checksum/config`) change with any
/// value; they do not count as a field the leaf writes.
fn is_checksum_annotation(path: &[Segment]) -> bool {
    path.windows(3).any(|w| {
        matches!((&w[0], &w[1], &w[2]), (Segment::Key(m), Segment::Key(a), Segment::Key(k))
            if m == "metadata" && a == "annotations" && k.starts_with("checksum/"))
    })
}

/// The other of `resources.requests.X` / `resources.limits.X`.
fn is_resource_twin(field: &[Segment], other: &[Segment]) -> bool {
    if field.len() != other.len() || field.len() < 3 {
        return false;
    }
    let n = field.len();
    let kind = |p: &[Segment]| match &p[n - 2] {
        Segment::Key(k) if k == "requests" || k == "limits" => Some(k.clone()),
        _ => None,
    };
    matches!(&field[n - 3], Segment::Key(r) if r == "resources")
        && field[..n - 2] == other[..n - 2]
        && field[n - 1] == other[n - 1]
        && matches!((kind(field), kind(other)), (Some(a), Some(b)) if a != b)
}

struct Candidate<'l> {
    layer: &'l Layer,
    key_path: Vec<Segment>,
    node: &'l Node,
}

/// What a candidate's probe render showed.
enum Probe {
    /// The field changed to the sentinel, nothing else but these twins changed.
    Feeds(Vec<Vec<Segment>>),
    /// The field did not change to the sentinel, or other fields/objects changed too.
    Rejected,
}

/// What every probe of one [`values_origin`] call shares.
struct ProbeContext<'a> {
    engine: &'a HelmEngine,
    release: &'a Release,
    /// The unmodified render, as typed JSON per document.
    base: &'a [Json],
    document: usize,
    path: &'a [Segment],
    merged: &'a Json,
    rendered_value: &'a str,
    noise: &'a Noise,
}

fn probe(cx: &ProbeContext, candidate: &Candidate) -> Result<Probe, HelmError> {
    let ProbeContext {
        engine,
        release,
        base,
        document,
        path,
        merged,
        rendered_value,
        noise,
    } = *cx;
    let sentinel = sentinel_for(candidate.node, rendered_value);
    let Some(sentinel_text) = json_text(&sentinel) else {
        return Ok(Probe::Rejected);
    };
    let Some(over) = override_at(merged, &candidate.key_path, sentinel) else {
        return Ok(Probe::Rejected);
    };
    let render = match engine.template(release, Some(&over)) {
        Ok(r) => r,
        // A template that refuses the sentinel (validation, arithmetic) says nothing.
        Err(HelmError::Failed { .. }) => return Ok(Probe::Rejected),
        Err(e) => return Err(e),
    };
    let docs = typed_docs(&render.stream);
    if docs.len() != base.len() {
        return Ok(Probe::Rejected);
    }
    for (i, (a, b)) in base.iter().zip(&docs).enumerate() {
        let mut changed = Vec::new();
        diff(a, b, &mut Vec::new(), &mut changed);
        changed.retain(|p| !is_checksum_annotation(p) && !noise.has(i, p));
        if i != document {
            if !changed.is_empty() {
                return Ok(Probe::Rejected);
            }
            continue;
        }
        let new_value = json_get(b, path).and_then(json_text);
        if !new_value.is_some_and(|v| same_quantity(&v, &sentinel_text)) {
            return Ok(Probe::Rejected);
        }
        let mut twins = Vec::new();
        for p in changed {
            if p == path {
                continue;
            }
            if !is_resource_twin(path, &p) {
                return Ok(Probe::Rejected);
            }
            twins.push(p);
        }
        return Ok(Probe::Feeds(twins));
    }
    Ok(Probe::Rejected)
}

/// The values of a release, as layers and merged as Helm merges them.
struct Values {
    layers: Vec<Layer>,
    merged: Json,
}

fn values_of(release: &Release) -> Result<Values, HelmError> {
    let layers = layers(release)?;
    // Helm merges the user's values first (parameters set into them), then coalesces the
    // chart's values.yaml under them.
    let mut merged = Json::Object(Map::new());
    let mut user = Json::Object(Map::new());
    for l in &layers {
        let target = match l.layer {
            ValuesLayer::Chart => &mut merged,
            ValuesLayer::Release(_) => &mut user,
        };
        match &l.values {
            LayerValues::Tree(root) => {
                let v = typed(root);
                if v.is_object() {
                    merge(target, &v);
                }
            }
            LayerValues::Sets { params, .. } => apply_parameters(target, params),
        }
    }
    merge(&mut merged, &user);
    Ok(Values { layers, merged })
}

impl Values {
    /// The leaves in effect (the merged values hold their value at their key path; a later
    /// layer's leaf replaces an earlier one), each once, those `keep` accepts.
    fn effective_leaves(&self, keep: impl Fn(&str) -> bool) -> Vec<Candidate<'_>> {
        let mut out: Vec<Candidate> = Vec::new();
        for l in &self.layers {
            let mut leaves = Vec::new();
            match &l.values {
                LayerValues::Tree(root) => collect_leaves(root, &mut Vec::new(), &mut leaves),
                LayerValues::Sets { leaves: sets, .. } => {
                    leaves.extend(sets.iter().map(|(p, n)| (p.clone(), n)));
                }
            }
            for (key_path, node) in leaves {
                let Some(text) = node.text() else { continue };
                if !keep(text) {
                    continue;
                }
                let effective = json_get(&self.merged, &key_path)
                    .and_then(json_text)
                    .is_some_and(|m| same_quantity(&m, text));
                if !effective {
                    continue;
                }
                out.retain(|c| c.key_path != key_path);
                out.push(Candidate {
                    layer: l,
                    key_path,
                    node,
                });
            }
        }
        out
    }
}

/// What every values-origin question about one release shares, rendered once: one render with
/// every numeric leaf in effect set to its own sentinel, which answers most questions without
/// a render of their own, and, when that render changed something no sentinel explains, the
/// control render (fields that differ between two renders without changes: `now`, `uuidv4`,
/// `rand*`).
pub struct SharedProbe {
    values: Values,
    base: Vec<Json>,
    /// Empty when the combined render needed no control render.
    noise: Noise,
    /// `None` when the control render does not have the same documents (nothing is answered).
    control_ok: bool,
    combined: Option<Combined>,
    /// The same leaves with their sentinels in the reverse order, rendered at the first
    /// question with several candidates: a field that follows the same leaf in both renders
    /// does not depend on which sentinel is larger (`max .Values.a .Values.b` does).
    permuted: std::sync::OnceLock<Option<Combined>>,
}

/// The render with every numeric leaf a distinct sentinel.
struct Combined {
    sentinels: Vec<Sentinel>,
    /// What changed from the base render (noise and `checksum/` annotations left out), and
    /// which leaves it comes from.
    changed: Vec<Change>,
    docs: Vec<Json>,
}

/// One leaf's sentinel in a combined render.
struct Sentinel {
    key_path: Vec<Segment>,
    /// The sentinel as a quantity (`7921Gi`).
    value: Quantity,
    /// Its number (`7921`): what a template that writes the leaf into a text shows.
    number: u32,
    /// The number the leaf holds in the values (`16` of `16Gi`), as written.
    digits: String,
    /// The leaf's value as a quantity.
    was: Option<Quantity>,
}

/// One field that differs from the base render.
struct Change {
    document: usize,
    path: Vec<Segment>,
    /// The new value, when it is a quantity.
    value: Option<Quantity>,
    cause: Cause,
}

/// Which leaves a change comes from.
#[derive(Clone, Debug, PartialEq)]
enum Cause {
    /// The field holds this sentinel as is.
    Sentinel(usize),
    /// A text holding these sentinels' numbers, and the base text once they are put back
    /// (`--port 7919` for `--port 8000`).
    Text(Vec<usize>),
    /// The leaf's value plus a constant (`replicaCount + 1`): the same constant in the base
    /// render and in this one. `confirmed` once the other combined render agrees too.
    Offset {
        leaf: usize,
        by: Quantity,
        confirmed: bool,
    },
    /// No leaf alone explains it: noise (`now`, `rand*`), arithmetic over several leaves, a
    /// branch a sentinel took.
    Unknown,
}

impl Cause {
    fn involves(&self, leaf: usize) -> bool {
        match self {
            Cause::Sentinel(i) => *i == leaf,
            Cause::Text(leaves) => leaves.contains(&leaf),
            Cause::Offset { leaf: i, .. } => *i == leaf,
            Cause::Unknown => false,
        }
    }

    fn known(&self) -> bool {
        match self {
            Cause::Sentinel(_) | Cause::Text(_) => true,
            Cause::Offset { confirmed, .. } => *confirmed,
            Cause::Unknown => false,
        }
    }
}

impl Combined {
    /// Whether every change comes from one known leaf (a sentinel written as is, in a text, or
    /// plus a constant both combined renders agree on): then each leaf's effects are exactly
    /// the changes it causes, and a question is answered without a render of its own.
    fn clean(&self) -> bool {
        self.changed.iter().all(|c| c.cause.known())
    }

    /// Whether only a second combined render is missing to call it clean.
    fn needs_other_order(&self) -> bool {
        !self.clean()
            && self
                .changed
                .iter()
                .all(|c| c.cause.known() || matches!(c.cause, Cause::Offset { .. }))
    }

    fn sentinel_of(&self, key_path: &[Segment]) -> Option<&Sentinel> {
        self.sentinels.iter().find(|s| s.key_path == key_path)
    }
}

/// Confirms each `Offset` cause of `a` in `b` (the same leaves, other sentinels): the field
/// there must be the leaf's sentinel in `b` plus the same constant; else it is `Unknown`.
fn confirm_offsets(a: &mut Combined, b: &Combined) {
    for change in &mut a.changed {
        let Cause::Offset {
            leaf,
            by,
            confirmed,
        } = &mut change.cause
        else {
            continue;
        };
        let Some(key_path) = a.sentinels.get(*leaf).map(|s| &s.key_path) else {
            change.cause = Cause::Unknown;
            continue;
        };
        let there = b
            .docs
            .get(change.document)
            .and_then(|d| json_get(d, &change.path))
            .and_then(json_text)
            .and_then(|t| t.trim().parse::<Quantity>().ok());
        let agrees = match (there, b.sentinel_of(key_path)) {
            (Some(v), Some(s)) => v.checked_sub(s.value) == Some(*by),
            _ => false,
        };
        if agrees {
            *confirmed = true;
        } else {
            change.cause = Cause::Unknown;
        }
    }
}

/// Which leaves make the change of the field from `before` to `after` (see [`Cause`]).
fn cause_of(sentinels: &[Sentinel], before: Option<&Json>, after: Option<&Json>) -> Cause {
    let value = after
        .and_then(json_text)
        .and_then(|t| t.trim().parse::<Quantity>().ok());
    if let Some(i) = value.and_then(|v| sentinels.iter().position(|s| s.value == v)) {
        return Cause::Sentinel(i);
    }
    if let (Some(Json::String(was)), Some(Json::String(now))) = (before, after) {
        // Put each sentinel number back to the leaf's own number: the base text again means
        // those leaves, written into the text, are the whole change.
        let mut leaves = Vec::new();
        let mut rebuilt = String::with_capacity(was.len());
        let mut rest = now.as_str();
        while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
            rebuilt.push_str(&rest[..start]);
            let run = &rest[start..];
            let len = run.find(|c: char| !c.is_ascii_digit()).unwrap_or(run.len());
            let digits = &run[..len];
            match digits
                .parse::<u32>()
                .ok()
                .and_then(|n| sentinels.iter().position(|s| s.number == n))
            {
                Some(i) => {
                    rebuilt.push_str(&sentinels[i].digits);
                    if !leaves.contains(&i) {
                        leaves.push(i);
                    }
                }
                None => rebuilt.push_str(digits),
            }
            rest = &run[len..];
        }
        rebuilt.push_str(rest);
        if !leaves.is_empty() && rebuilt == *was {
            return Cause::Text(leaves);
        }
    }
    // The leaf plus a constant: the only leaf for which the base render agrees.
    let was = before
        .and_then(json_text)
        .and_then(|t| t.trim().parse::<Quantity>().ok());
    if let (Some(now), Some(was)) = (value, was) {
        let mut found = sentinels.iter().enumerate().filter_map(|(i, s)| {
            let by = now.checked_sub(s.value)?;
            (s.was?.checked_add(by)? == was).then_some((i, by))
        });
        if let (Some((leaf, by)), None) = (found.next(), found.next()) {
            return Cause::Offset {
                leaf,
                by,
                confirmed: false,
            };
        }
    }
    Cause::Unknown
}

/// Leaves numbers can come from: a number or quantity, not zero (a zero is often a switch:
/// `if .Values.x`, and a sentinel there would change the render's shape).
fn may_be_a_quantity(text: &str) -> bool {
    text.trim().parse::<Quantity>().is_ok_and(|q| !q.is_zero())
}

/// The renders [`values_origin`] shares across the fields of one release: one `helm template`
/// run (the combined render) when it is clean, else two (and the control render); one more
/// when a question has several candidates (the permuted render).
pub fn shared_probe(
    engine: &HelmEngine,
    release: &Release,
    rendered: &RenderedRelease,
) -> Result<SharedProbe, HelmError> {
    let values = values_of(release)?;
    let base = typed_docs(&rendered.stream);
    // The combined render first: when every change in it is a sentinel written as is, nothing
    // in the chart differs from one render to the next and the control render is not needed.
    let mut combined = combined_render(engine, release, &values, &base, &Noise::default(), false)?;
    let mut noise = Noise::default();
    let mut control_ok = true;
    // The permuted render, when it was needed early: a field that is a leaf plus a constant
    // (`replicaCount + 1`) is that leaf's only when the other order agrees.
    let mut permuted: Option<Option<Combined>> = None;
    let other_order =
        |combined: &mut Combined, noise: &Noise| -> Result<Option<Combined>, HelmError> {
            let mut other = combined_render(engine, release, &values, &base, noise, true)?;
            if let Some(other) = &mut other {
                confirm_offsets(combined, other);
                confirm_offsets(other, combined);
            }
            Ok(other)
        };
    if let Some(c) = combined.as_mut().filter(|c| c.needs_other_order()) {
        permuted = Some(other_order(c, &noise)?);
    }
    if combined.as_ref().is_none_or(|c| !c.clean()) {
        let control = typed_docs(&engine.template(release, None)?.stream);
        control_ok = control.len() == base.len();
        if control_ok {
            noise = Noise::between(&base, &control);
        }
        let quiet = |c: &mut Combined| c.changed.retain(|c| !noise.has(c.document, &c.path));
        match &mut combined {
            Some(c) if control_ok => {
                quiet(c);
                match &mut permuted {
                    Some(Some(p)) => {
                        quiet(p);
                        confirm_offsets(c, p);
                    }
                    None if c.needs_other_order() => permuted = Some(other_order(c, &noise)?),
                    _ => {}
                }
            }
            _ => combined = None,
        }
    }
    let shared = SharedProbe {
        values,
        base,
        noise,
        control_ok,
        combined,
        permuted: std::sync::OnceLock::new(),
    };
    if let Some(p) = permuted {
        let _ = shared.permuted.set(p);
    }
    Ok(shared)
}

/// The (document, field) paths that differ between two renders without changes (`now`,
/// `uuidv4`, `rand*`): left out of every comparison with the base render.
#[derive(Default)]
struct Noise(Vec<(usize, Vec<Segment>)>);

impl Noise {
    /// What differs between two renders of the same documents.
    fn between(base: &[Json], other: &[Json]) -> Noise {
        let mut noise = Vec::new();
        for (i, (a, b)) in base.iter().zip(other).enumerate() {
            let mut changed = Vec::new();
            diff(a, b, &mut Vec::new(), &mut changed);
            noise.extend(changed.into_iter().map(|p| (i, p)));
        }
        Noise(noise)
    }

    fn has(&self, document: usize, path: &[Segment]) -> bool {
        self.0
            .iter()
            .any(|(d, p)| *d == document && p.as_slice() == path)
    }
}

/// A render's documents as typed JSON, to compare with the base render.
fn typed_docs(stream: &Stream) -> Vec<Json> {
    stream.documents.iter().map(|d| typed(&d.root)).collect()
}

/// Sentinels `7919`, `7921`, … (odd, distinct), written like their leaf (`16Gi` → `7921Gi`),
/// skipping any number already in the values.
fn combined_render(
    engine: &HelmEngine,
    release: &Release,
    values: &Values,
    base: &[Json],
    noise: &Noise,
    reversed: bool,
) -> Result<Option<Combined>, HelmError> {
    let mut leaves = values.effective_leaves(may_be_a_quantity);
    if reversed {
        leaves.reverse();
    }
    if leaves.is_empty() {
        return Ok(None);
    }
    let taken: HashSet<Quantity> = leaves
        .iter()
        .filter_map(|c| c.node.text()?.trim().parse::<Quantity>().ok())
        .collect();
    let mut over = values.merged.clone();
    let mut sentinels: Vec<Sentinel> = Vec::new();
    let mut n = 7919u32;
    for leaf in &leaves {
        let sentinel = loop {
            let number = n;
            let candidate = sentinel_numbered(leaf.node, number);
            n += 2;
            let q = json_text(&candidate).and_then(|t| t.trim().parse::<Quantity>().ok());
            match q {
                Some(q) if !taken.contains(&q) && !sentinels.iter().any(|s| s.value == q) => {
                    break Some((candidate, q, number))
                }
                Some(_) => continue,
                None => break None,
            }
        };
        let Some((json, value, number)) = sentinel else {
            continue;
        };
        if set_path(&mut over, &leaf.key_path, json) {
            let text = leaf.node.text().unwrap_or_default();
            let digits = match leaf.node.as_scalar().map(|s| s.kind) {
                Some(ScalarKind::Int) | Some(ScalarKind::Float) => text,
                _ => {
                    let end = text
                        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                        .unwrap_or(text.len());
                    &text[..end]
                }
            };
            sentinels.push(Sentinel {
                key_path: leaf.key_path.clone(),
                value,
                number,
                digits: digits.to_string(),
                was: text.trim().parse::<Quantity>().ok(),
            });
        }
    }
    let render = match engine.template(release, Some(&over)) {
        Ok(r) => r,
        // A template that refuses a sentinel: every question is asked alone.
        Err(HelmError::Failed { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let docs = typed_docs(&render.stream);
    if docs.len() != base.len() {
        return Ok(None);
    }
    let mut changed = Vec::new();
    for (i, (a, b)) in base.iter().zip(&docs).enumerate() {
        let mut paths = Vec::new();
        diff(a, b, &mut Vec::new(), &mut paths);
        for p in paths {
            if is_checksum_annotation(&p) || noise.has(i, &p) {
                continue;
            }
            let after = json_get(b, &p);
            let value = after
                .and_then(json_text)
                .and_then(|t| t.trim().parse::<Quantity>().ok());
            let cause = cause_of(&sentinels, json_get(a, &p), after);
            changed.push(Change {
                document: i,
                path: p,
                value,
                cause,
            });
        }
    }
    Ok(Some(Combined {
        sentinels,
        changed,
        docs,
    }))
}

/// Sets `path` in `json` (objects and lists) to `value`; false when the path is not there.
fn set_path(json: &mut Json, path: &[Segment], value: Json) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut at = json;
    for s in parents {
        let next = match s {
            Segment::Key(k) => at.get_mut(k.as_str()),
            Segment::Index(i) => at.get_mut(*i),
        };
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    let slot = match last {
        Segment::Key(k) => at.get_mut(k.as_str()),
        Segment::Index(i) => at.get_mut(*i),
    };
    match slot {
        Some(slot) => {
            *slot = value;
            true
        }
        None => false,
    }
}

/// The one values leaf that produces the rendered field `path` of document `document` of
/// `rendered` (a render of `release` by `engine`, without override).
///
/// Algorithm: the candidates are the values leaves (the chart's values.yaml, then each of
/// `release.values`) whose value equals the rendered value as a quantity (`1` = `"1"`), and
/// that are in effect: the merged values hold that value at that key path, and only the last
/// layer setting the key path counts (a user's values file over the chart's values.yaml). A
/// candidate is the origin when the field of that object becomes the candidate's sentinel
/// alone (`7919`, `7919Gi`; lists copied whole since Helm replaces them) and nothing else in the
/// whole render changes with it, except the field's `requests`/`limits` twin and `checksum/`
/// annotations. Exactly one such candidate is the origin; none, or more than one (e.g. `max
/// .Values.a .Values.b` with `a = b`), is `Ok(None)`, as is a winner whose bytes cannot be
/// located (a non-literal Argo CD `helm.values` string). Fields that differ between two
/// identical renders (`now`, `uuidv4`, `randAlphaNum`) are ignored.
///
/// Cost: the [`SharedProbe`] of the release (one or two renders, made once per release by the
/// caller, or here when `shared` is `None`) answers the question when its combined render is
/// clean: every change in it is one leaf's sentinel written as is, so each leaf's effects are
/// known without a render of its own. Otherwise the one candidate the combined render points
/// at is confirmed with a render of its own; and when there is no usable combined render
/// (a template refused a sentinel, the documents changed), each candidate is probed alone (at
/// most [`MAX_CANDIDATES`], [`PARALLEL_PROBES`] at a time), as before the shared renders.
pub fn values_origin(
    engine: &HelmEngine,
    release: &Release,
    rendered: &RenderedRelease,
    shared: Option<&SharedProbe>,
    document: usize,
    path: &[Segment],
    purpose: Purpose,
) -> Result<Option<ValuesOrigin>, HelmError> {
    let owned;
    let shared = match shared {
        Some(s) => s,
        None => {
            owned = shared_probe(engine, release, rendered)?;
            &owned
        }
    };
    let Some(doc) = rendered.stream.documents.get(document) else {
        return Ok(None);
    };
    let Some(rendered_value) = seg_get(&doc.root, path).and_then(Node::text) else {
        return Ok(None);
    };
    if !shared.control_ok || shared.noise.has(document, path) {
        return Ok(None); // the field itself is not reproducible
    }
    let candidates = shared
        .values
        .effective_leaves(|text| same_quantity(text, rendered_value));
    if candidates.is_empty() || candidates.len() > MAX_CANDIDATES {
        return Ok(None);
    }
    let cx = ProbeContext {
        engine,
        release,
        base: &shared.base,
        document,
        path,
        merged: &shared.values.merged,
        rendered_value,
        noise: &shared.noise,
    };
    let accepted = match &shared.combined {
        Some(combined) => match from_combined(combined, &candidates, document, path) {
            Answer::None => return Ok(None),
            // Several candidates: the permuted render must point at the same leaf.
            Answer::Leaf(c, _)
                if candidates.len() > 1
                    && purpose == Purpose::Show
                    && !shared.permuted(engine, release)?.is_some_and(|p| {
                        matches!(from_combined(p, &candidates, document, path),
                                Answer::Leaf(q, _) if q.key_path == c.key_path)
                    }) =>
            {
                return Ok(None)
            }
            Answer::Leaf(c, twins) if combined.clean() => vec![(c, twins)],
            // Something else changed that no sentinel explains: confirm with its own render.
            Answer::Leaf(c, _) => match probe(&cx, c)? {
                Probe::Feeds(twins) => vec![(c, twins)],
                Probe::Rejected => return Ok(None),
            },
        },
        None => probe_each(&cx, &candidates)?,
    };
    let mut accepted = accepted;
    // Zero or several accepted: no single origin.
    if accepted.len() != 1 {
        return Ok(None);
    }
    let Some((winner, also_sets)) = accepted.pop() else {
        return Ok(None);
    };
    if !winner.layer.spans_ok {
        return Ok(None);
    }
    Ok(Some(ValuesOrigin {
        values: winner.layer.layer,
        file: winner.layer.file.clone(),
        key_path: winner.key_path.clone(),
        node: winner.node.clone(),
        also_sets,
    }))
}

impl SharedProbe {
    fn permuted(
        &self,
        engine: &HelmEngine,
        release: &Release,
    ) -> Result<Option<&Combined>, HelmError> {
        if let Some(done) = self.permuted.get() {
            return Ok(done.as_ref());
        }
        let mut render =
            combined_render(engine, release, &self.values, &self.base, &self.noise, true)?;
        if let (Some(p), Some(c)) = (&mut render, &self.combined) {
            confirm_offsets(p, c);
        }
        Ok(self.permuted.get_or_init(|| render).as_ref())
    }
}

/// What a values origin is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// Where a finding is shown: the leaf must be the field's alone.
    Show,
    /// The leaf a fix edits. The fix is rendered again with the edited values before it counts
    /// (its verification), so the permuted render is not needed: a field that follows another
    /// leaf of the same value too (`max .Values.a .Values.b`) fails that render unless editing
    /// this leaf alone gives the field its new value.
    Fix,
}

enum Answer<'c, 'l> {
    /// No candidate feeds the field alone.
    None,
    /// The candidate whose sentinel the field took, and the twins that took it too.
    Leaf(&'c Candidate<'l>, Vec<Vec<Segment>>),
}

/// What the combined render says about the field: the candidate whose sentinel it holds, if
/// that sentinel appears nowhere else (but in the field's `requests`/`limits` twin).
fn from_combined<'c, 'l>(
    combined: &Combined,
    candidates: &'c [Candidate<'l>],
    document: usize,
    path: &[Segment],
) -> Answer<'c, 'l> {
    let value = combined
        .docs
        .get(document)
        .and_then(|d| json_get(d, path))
        .and_then(json_text)
        .and_then(|t| t.trim().parse::<Quantity>().ok());
    let Some(value) = value else {
        return Answer::None;
    };
    let Some(leaf) = combined.sentinels.iter().position(|s| s.value == value) else {
        return Answer::None;
    };
    let key_path = &combined.sentinels[leaf].key_path;
    let Some(candidate) = candidates.iter().find(|c| &c.key_path == key_path) else {
        return Answer::None;
    };
    let mut twins = Vec::new();
    for c in &combined.changed {
        if !c.cause.involves(leaf) || (c.document == document && c.path.as_slice() == path) {
            continue;
        }
        if c.document == document
            && c.value == Some(value)
            && matches!(c.cause, Cause::Sentinel(_))
            && is_resource_twin(path, &c.path)
        {
            twins.push(c.path.clone());
        } else {
            return Answer::None; // the leaf writes another field too
        }
    }
    Answer::Leaf(candidate, twins)
}

/// A candidate that feeds the field, and the twins it writes too.
type Accepted<'c, 'l> = (&'c Candidate<'l>, Vec<Vec<Segment>>);

/// Each candidate probed with a render of its own.
fn probe_each<'c, 'l>(
    cx: &ProbeContext,
    candidates: &'c [Candidate<'l>],
) -> Result<Vec<Accepted<'c, 'l>>, HelmError> {
    let mut results: Vec<Result<Probe, HelmError>> = Vec::with_capacity(candidates.len());
    for chunk in candidates.chunks(PARALLEL_PROBES) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|c| s.spawn(move || probe(cx, c)))
                .collect();
            for h in handles {
                results.push(h.join().unwrap_or(Ok(Probe::Rejected)));
            }
        });
    }
    let mut accepted = Vec::new();
    for (c, r) in candidates.iter().zip(results) {
        if let Probe::Feeds(twins) = r? {
            accepted.push((c, twins));
        }
    }
    Ok(accepted)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::source::helm::tests::keys;

    use super::*;

    #[test]
    fn overrides_keep_lists_whole_and_maps_sparse() {
        let merged = serde_json::json!({
            "a": {"b": 1, "c": 2},
            "spec": {"list": [{"gpu": 1, "mem": "16Gi"}, {"gpu": 2}]}
        });
        assert_eq!(
            override_at(&merged, &keys(&["a", "b"]), Json::from(7919)),
            Some(serde_json::json!({"a": {"b": 7919}}))
        );
        assert_eq!(
            override_at(
                &merged,
                &keys(&["spec", "list", "0", "gpu"]),
                Json::from(7919)
            ),
            Some(serde_json::json!({"spec": {"list": [{"gpu": 7919, "mem": "16Gi"}, {"gpu": 2}]}}))
        );
        assert_eq!(
            override_at(&merged, &keys(&["spec", "list", "5", "gpu"]), Json::from(1)),
            None
        );
    }

    #[test]
    fn sentinels_keep_the_leaf_shape() {
        let s = Stream::parse("i: 1\nq: 16Gi\nm: 400m\nn: 7919\n");
        let root = &s.documents[0].root;
        let get = |k: &str| root.get(k).unwrap();
        assert_eq!(sentinel_for(get("i"), "1"), Json::from(7919));
        assert_eq!(
            sentinel_for(get("q"), "16Gi"),
            Json::String("7919Gi".into())
        );
        assert_eq!(sentinel_for(get("m"), "400m"), Json::String("7919m".into()));
        assert_eq!(sentinel_for(get("n"), "7919"), Json::from(7927));
    }

    fn sentinel(key: &str, number: u32, digits: &str) -> Sentinel {
        Sentinel {
            key_path: keys(&[key]),
            value: Quantity::from(i128::from(number)),
            number,
            digits: digits.into(),
            was: digits.parse().ok(),
        }
    }

    #[test]
    fn a_change_is_a_sentinel_a_text_holding_sentinels_or_a_leaf_plus_a_constant() {
        let s = [
            sentinel("port", 7919, "8000"),
            sentinel("replicas", 8017, "1"),
        ];
        let j = |v: serde_json::Value| v;
        let cause = |a, b| cause_of(&s, Some(&j(a)), Some(&j(b)));
        assert_eq!(cause(json!(8000), json!("7919")), Cause::Sentinel(0));
        assert_eq!(
            cause(
                json!("vllm --port 8000 -n 1"),
                json!("vllm --port 7919 -n 8017")
            ),
            Cause::Text(vec![0, 1])
        );
        // A sentinel in the text, but something else changed too.
        assert_eq!(
            cause(json!("--port 8000 --x 5"), json!("--port 7919 --x 6")),
            Cause::Unknown
        );
        assert_eq!(
            cause(json!("2"), json!("8018")),
            Cause::Offset {
                leaf: 1,
                by: Quantity::from(1),
                confirmed: false
            }
        );
        // From 3: no leaf plus one constant gives both values.
        assert_eq!(cause(json!(3), json!(8018)), Cause::Unknown);
        assert_eq!(cause(json!("a"), json!("b")), Cause::Unknown);
    }

    #[test]
    fn an_offset_holds_only_when_the_other_order_agrees() {
        let change = |value: i128| Change {
            document: 0,
            path: keys(&["n"]),
            value: Some(Quantity::from(value)),
            cause: Cause::Offset {
                leaf: 0,
                by: Quantity::from(1),
                confirmed: false,
            },
        };
        let combined = |number: u32, n: i128| Combined {
            sentinels: vec![sentinel("replicas", number, "1")],
            changed: vec![change(n)],
            docs: vec![json!({"n": n})],
        };
        let mut a = combined(8017, 8018);
        assert!(a.needs_other_order() && !a.clean());
        confirm_offsets(&mut a, &combined(7919, 7920));
        assert!(a.clean());
        let mut b = combined(8017, 8018);
        confirm_offsets(&mut b, &combined(7919, 7925));
        assert_eq!(b.changed[0].cause, Cause::Unknown);
        assert!(!b.clean() && !b.needs_other_order());
    }

    #[test]
    fn twins_are_the_other_of_requests_and_limits() {
        let f = keys(&[
            "spec",
            "containers",
            "0",
            "resources",
            "limits",
            "nvidia.com/gpu",
        ]);
        let t = keys(&[
            "spec",
            "containers",
            "0",
            "resources",
            "requests",
            "nvidia.com/gpu",
        ]);
        let other = keys(&[
            "spec",
            "containers",
            "1",
            "resources",
            "requests",
            "nvidia.com/gpu",
        ]);
        let env = keys(&["spec", "containers", "0", "env", "0", "value"]);
        assert!(is_resource_twin(&f, &t));
        assert!(!is_resource_twin(&f, &f));
        assert!(!is_resource_twin(&f, &other));
        assert!(!is_resource_twin(&f, &env));
        assert!(is_checksum_annotation(&keys(&[
            "spec",
            "template",
            "metadata",
            "annotations",
            "checksum/config"
        ])));
    }
}
