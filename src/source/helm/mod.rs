//! Helm charts: which releases a repository declares, rendering them with a real `helm`, mapping
//! rendered objects back to their templates, and finding the values leaf a rendered field comes
//! from (the place a fix must edit).
//!
//! * [`releases`] reads Argo CD `Application`s, Flux `HelmRelease`s and the config's `charts:`
//!   entries; a chart nobody declares is rendered once with its defaults.
//! * [`HelmEngine::template`] runs `helm template NAME CHART --namespace NS -f …` (never through a
//!   shell, with a timeout) and parses the output into a [`RenderedRelease`].
//! * [`source_templates`] maps each document of a render (ours, or a pre-rendered
//!   `helm template … | gpulint -`) to its `# Source:` template; [`template_location`] finds the
//!   line of a template that writes a key.
//! * [`values_origin`] finds the one values leaf that produces a rendered field, by re-rendering
//!   with candidate leaves changed to a sentinel (see its docs for the algorithm and its cost).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value as Json};

use crate::source::document::Segment;
use crate::source::yaml::{Node, ScalarKind, Stream, Value};

mod engine;
mod origin;
mod releases;
pub mod stage;

pub use engine::{
    node_path_at, source_templates, template_field_location, template_location, HelmEngine,
    RenderedRelease, TempDir,
};
pub use origin::{shared_probe, values_origin, Purpose, SharedProbe, ValuesLayer, ValuesOrigin};
pub use releases::{
    argo_destination, declared_releases, is_dns1123_subdomain, is_namespace, is_release_name,
    releases, ChartEntry, DeclarationError, Declared, RenderedDeclaration,
};

/// How long one `helm template` may run before it is killed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Candidate leaves [`values_origin`] re-renders at most (each costs one `helm template`).
pub const MAX_CANDIDATES: usize = 64;

/// Probe renders run at the same time.
pub const PARALLEL_PROBES: usize = 2;

/// True when `dir` is a Helm chart (holds a `Chart.yaml`).
pub fn is_chart(dir: &Path) -> bool {
    dir.join("Chart.yaml").is_file()
}

/// Where values come from, in precedence order (the last one wins).
#[derive(Clone, Debug)]
pub enum ValuesSource {
    /// A values file (`-f FILE`).
    File(PathBuf),
    /// Values written inside the declaring manifest `file`: the mapping (Argo CD
    /// `helm.valuesObject`, Flux `spec.values`) or the string scalar holding YAML (Argo CD
    /// `helm.values`). Spans are those of `file`.
    Inline { file: PathBuf, node: Node },
    /// Argo CD `helm.parameters` and `helm.fileParameters` of the manifest `file`: applied last,
    /// like `--set`/`--set-string`/`--set-file` onto the values before them.
    Parameters {
        file: PathBuf,
        params: Vec<Parameter>,
    },
}

impl ValuesSource {
    /// The file the values are written in (a values file, or the declaring manifest).
    pub fn file(&self) -> &Path {
        match self {
            ValuesSource::File(p) => p,
            ValuesSource::Inline { file, .. } | ValuesSource::Parameters { file, .. } => file,
        }
    }
}

/// How a parameter reaches Helm: Argo CD passes `helm.parameters` as `--set NAME=VALUE` (or
/// `--set-string` with `forceString: true`) and `helm.fileParameters` as `--set-file`; Helm
/// applies every `--set`, then every `--set-string`, then every `--set-file` (the order of
/// this enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SetKind {
    Set,
    SetString,
    SetFile,
}

/// One Argo CD Helm parameter.
#[derive(Clone, Debug)]
pub struct Parameter {
    /// The name as written (`servingEngineSpec.modelSpec[0].requestGPU`).
    pub name: String,
    /// The name as a values path.
    pub path: Vec<Segment>,
    pub kind: SetKind,
    /// The value as Helm reads it (`--set` types `1` as a number and `true` as a boolean, keeps
    /// `0.5` a string; a file parameter is the file's text).
    pub value: Json,
    /// Where the value is written in the manifest: the `value:` scalar (`path:` for a file
    /// parameter), spans of the manifest.
    pub node: Node,
}

impl Parameter {
    /// The leaf a finding can land on and a fix can edit: the `value:` scalar, typed as Helm
    /// reads it. A file parameter's value is a file's text, and a list (`{a,b}`) is no leaf.
    fn leaf(&self) -> Option<Node> {
        if self.kind == SetKind::SetFile {
            return None;
        }
        let kind = match &self.value {
            Json::Number(_) => ScalarKind::Int,
            Json::Bool(_) => ScalarKind::Bool,
            Json::Null => ScalarKind::Null,
            Json::String(_) => ScalarKind::Str,
            _ => return None,
        };
        let mut leaf = self.node.clone();
        match &mut leaf.value {
            Value::Scalar(s) => s.kind = kind,
            _ => return None,
        }
        Some(leaf)
    }
}

/// A `--set` name as a values path: `a.b[0].c`, `\.` for a dot inside a key
/// (`nodeSelector.kubernetes\.io/os`). `None` when Helm would not accept it.
pub fn parse_set_name(name: &str) -> Option<Vec<Segment>> {
    // Helm refuses list indices above this (strvals' MaxIndex).
    const MAX_INDEX: usize = 65_536;
    let mut out = Vec::new();
    let mut key = String::new();
    let mut chars = name.chars();
    let mut after_index = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => key.push(chars.next()?),
            '.' => {
                if !key.is_empty() {
                    out.push(Segment::Key(std::mem::take(&mut key)));
                } else if !after_index {
                    return None;
                }
                after_index = false;
            }
            '[' => {
                if !key.is_empty() {
                    out.push(Segment::Key(std::mem::take(&mut key)));
                } else if out.is_empty() {
                    return None;
                }
                let digits: String = chars.by_ref().take_while(|c| *c != ']').collect();
                let index = digits.trim().parse::<usize>().ok()?;
                if index > MAX_INDEX {
                    return None;
                }
                out.push(Segment::Index(index));
                after_index = true;
            }
            _ if after_index => return None,
            _ => key.push(c),
        }
    }
    if !key.is_empty() {
        out.push(Segment::Key(key));
    }
    (!out.is_empty() && matches!(out.first(), Some(Segment::Key(_)))).then_some(out)
}

/// A `--set` value as Helm types it (strvals `typedVal`): `true`/`false`/`null`, integers
/// without a leading zero, everything else a string; `--set-string` keeps the text. `{a,b}`
/// is a list (Argo CD escapes every other comma).
pub fn typed_set_value(text: &str, kind: SetKind) -> Json {
    if let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        return Json::Array(
            inner
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|item| typed_set_value(item, kind))
                .collect(),
        );
    }
    if kind != SetKind::Set {
        return Json::String(text.to_string());
    }
    if text.eq_ignore_ascii_case("true") {
        return Json::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Json::Bool(false);
    }
    if text.eq_ignore_ascii_case("null") {
        return Json::Null;
    }
    if text == "0" {
        return Json::from(0);
    }
    if !text.is_empty() && !text.starts_with('0') {
        if let Ok(i) = text.parse::<i64>() {
            return Json::from(i);
        }
    }
    Json::String(text.to_string())
}

/// Sets `path` in `target` like `--set`: maps are created or entered (a scalar in the way is
/// replaced), lists are padded with nulls up to the index, the rest of the values is kept.
fn set_json(target: &mut Json, path: &[Segment], value: Json) {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return;
    };
    let slot = match first {
        Segment::Key(k) => {
            if !target.is_object() {
                *target = Json::Object(Map::new());
            }
            let Json::Object(map) = target else { return };
            map.entry(k.clone()).or_insert(Json::Null)
        }
        Segment::Index(i) => {
            if !target.is_array() {
                *target = Json::Array(Vec::new());
            }
            let Json::Array(items) = target else { return };
            if items.len() <= *i {
                items.resize(*i + 1, Json::Null);
            }
            &mut items[*i]
        }
    };
    set_json(slot, rest, value);
}

/// Applies parameters in Helm's order (every `--set`, then `--set-string`, then `--set-file`;
/// within a kind, a later parameter of the same name wins, as in Argo CD's parameter map).
fn apply_parameters(values: &mut Json, params: &[Parameter]) {
    let mut ordered: Vec<&Parameter> = params.iter().collect();
    ordered.sort_by_key(|p| p.kind);
    for p in ordered {
        set_json(values, &p.path, p.value.clone());
    }
}

/// One release of a chart: what `helm template` renders.
#[derive(Clone, Debug)]
pub struct Release {
    /// The chart's folder: `repo_root` joined with the chart's path, lexically normalized (so
    /// `helm` finds it from any working directory).
    pub chart: PathBuf,
    pub name: String,
    pub namespace: String,
    /// Values on top of the chart's own values.yaml, lowest precedence first.
    pub values: Vec<ValuesSource>,
    /// The manifest that declares the release (Argo CD Application, Flux HelmRelease); `None`
    /// for config entries and undeclared charts.
    pub declared_in: Option<PathBuf>,
    /// The cluster that applies it, when its declaration says: an Argo CD Application's
    /// destination (`destination.name`, else `destination.server`), or the cluster of the
    /// render a Flux HelmRelease is part of; `None` otherwise.
    pub cluster: Option<String>,
    /// Declared by a HelmRelease inside a Kustomize render (its values may come from several
    /// files: the base and the overlays' patches): the run's index of that render and the
    /// HelmRelease's place among its objects. A fix of its values is a fix of that object.
    pub rendered_from: Option<(usize, usize)>,
}

/// A Helm failure: what was rendered, and what Helm said.
#[derive(Debug, thiserror::Error)]
pub enum HelmError {
    #[error("cannot run {binary}: {source}")]
    Spawn {
        binary: PathBuf,
        source: std::io::Error,
    },
    #[error("helm template of chart {chart} (release {release}) failed ({status}): {stderr}")]
    Failed {
        chart: PathBuf,
        release: String,
        status: String,
        stderr: String,
    },
    #[error("helm template of chart {chart} (release {release}) timed out after {seconds}s")]
    Timeout {
        chart: PathBuf,
        release: String,
        seconds: u64,
    },
    #[error("chart {chart} (release {release}): {message}")]
    Values {
        chart: PathBuf,
        release: String,
        message: String,
    },
    /// The chart or its declaration is not rendered (e.g. a symlink leaving the repository).
    #[error("{}: {message}", file.display())]
    Refused { file: PathBuf, message: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// A YAML node as typed JSON (numbers, booleans and nulls keep their type), as Helm reads values.
pub fn typed(node: &Node) -> Json {
    match &node.value {
        Value::Scalar(s) => match s.kind {
            ScalarKind::Null => Json::Null,
            ScalarKind::Bool => Json::Bool(s.text.eq_ignore_ascii_case("true")),
            ScalarKind::Int => s
                .text
                .parse::<i64>()
                .map(Json::from)
                .or_else(|_| s.text.parse::<f64>().map(Json::from))
                .unwrap_or_else(|_| Json::String(s.text.clone())),
            ScalarKind::Float => s
                .text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Json::String(s.text.clone()), Json::Number),
            ScalarKind::Str => Json::String(s.text.clone()),
        },
        Value::Seq(items) => Json::Array(items.iter().map(typed).collect()),
        Value::Map(entries) => {
            let mut map = Map::new();
            for e in entries {
                let key = e.key.text().unwrap_or_default().to_string();
                map.insert(key, typed(&e.value));
            }
            Json::Object(map)
        }
    }
}

/// The user's values from `sources` as Helm merges them before the chart's values.yaml.
fn user_values(sources: &[ValuesSource]) -> Result<Json, HelmError> {
    let mut user = Json::Object(Map::new());
    for source in sources {
        let values = match source {
            ValuesSource::File(p) => read_yaml(p)
                .map_err(|source| HelmError::Io {
                    what: format!("reading {}", p.display()),
                    source,
                })?
                .map(|n| typed(&n)),
            ValuesSource::Inline { node, .. } => match &node.value {
                Value::Scalar(s) => Stream::parse(&s.text)
                    .documents
                    .first()
                    .map(|d| typed(&d.root)),
                _ => Some(typed(node)),
            },
            ValuesSource::Parameters { params, .. } => {
                apply_parameters(&mut user, params);
                None
            }
        };
        if let Some(v) = values.filter(Json::is_object) {
            merge(&mut user, &v);
        }
    }
    Ok(user)
}

/// Helm's merge of values files: maps merge, anything else (null included) replaces.
fn merge(base: &mut Json, over: &Json) {
    match (base, over) {
        (Json::Object(b), Json::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => merge(slot, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn read_yaml(path: &Path) -> Result<Option<Node>, std::io::Error> {
    // Checked inside the repository when declared; here: a regular file, size-capped.
    let bytes = crate::source::repo::read_file(path, None)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    Ok(Stream::parse(&text)
        .documents
        .into_iter()
        .next()
        .map(|d| d.root))
}

#[cfg(test)]
mod tests {
    use super::origin::same_quantity;
    use super::*;

    pub(super) fn keys(parts: &[&str]) -> Vec<Segment> {
        parts
            .iter()
            .map(|p| match p.parse::<usize>() {
                Ok(i) => Segment::Index(i),
                Err(_) => Segment::Key(p.to_string()),
            })
            .collect()
    }

    #[test]
    fn set_names_and_values_parse_like_helm() {
        assert_eq!(
            parse_set_name("servingEngineSpec.modelSpec[0].requestGPU"),
            Some(keys(&["servingEngineSpec", "modelSpec", "0", "requestGPU"]))
        );
        assert_eq!(
            parse_set_name("nodeSelector.kubernetes\\.io/os"),
            Some(keys(&["nodeSelector", "kubernetes.io/os"]))
        );
        assert_eq!(parse_set_name("a[1][2]"), Some(keys(&["a", "1", "2"])));
        for bad in ["", ".a", "a..b", "[0]", "a[x]", "a[0]b", "a[99999999]"] {
            assert_eq!(parse_set_name(bad), None, "{bad}");
        }
        use serde_json::json;
        let set = |t| typed_set_value(t, SetKind::Set);
        assert_eq!(set("1"), json!(1));
        assert_eq!(set("0"), json!(0));
        assert_eq!(set("0.5"), json!("0.5"));
        assert_eq!(set("007"), json!("007"));
        assert_eq!(set("TRUE"), json!(true));
        assert_eq!(set("null"), Json::Null);
        assert_eq!(set("{a,2}"), json!(["a", 2]));
        assert_eq!(typed_set_value("1", SetKind::SetString), json!("1"));
        // `--set` enters lists and maps the values files gave; `--set-string` comes after.
        let mut values = json!({"m": [{"a": 1, "b": 2}], "s": "x"});
        let p = |name: &str, kind, value: Json| Parameter {
            name: name.into(),
            path: parse_set_name(name).unwrap(),
            kind,
            value,
            node: Node::default(),
        };
        apply_parameters(
            &mut values,
            &[
                p("m[0].a", SetKind::SetString, json!("s")),
                p("m[0].a", SetKind::Set, json!(5)),
                p("m[2].c", SetKind::Set, json!(true)),
                p("s.t", SetKind::Set, json!(1)),
            ],
        );
        assert_eq!(
            values,
            json!({"m": [{"a": "s", "b": 2}, null, {"c": true}], "s": {"t": 1}})
        );
    }

    #[test]
    fn values_merge_like_helm() {
        let mut base = serde_json::json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        merge(
            &mut base,
            &serde_json::json!({"a": {"c": [3], "e": null}, "d": {"x": 1}}),
        );
        assert_eq!(
            base,
            serde_json::json!({"a": {"b": 1, "c": [3], "e": null}, "d": {"x": 1}})
        );
        let s = Stream::parse("a: 1\nb: \"1\"\nc: true\nd: 1.5\ne: ~\n");
        assert_eq!(
            typed(&s.documents[0].root),
            serde_json::json!({"a": 1, "b": "1", "c": true, "d": 1.5, "e": null})
        );
        assert!(same_quantity("1", "1.0") && same_quantity("1Gi", "1024Mi"));
        assert!(!same_quantity("1", "2") && same_quantity("x", "x"));
    }
}
