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

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value as Json};

use crate::config::ChartEntry;
use crate::fix::edit::Segment;
use crate::k8s::quantity::Quantity;
use crate::source::yaml::{Node, ScalarKind, ScalarStyle, Span, Stream, Value};

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
}

/// Lexically normalizes a path: drops `.`, folds `..` into its parent.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn under(root: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&root.join(path))
    }
}

/// Identifies declared charts with the caller's chart list.
struct ChartIndex<'a> {
    repo_root: &'a Path,
    /// `charts`, resolved against the repository root.
    known: Vec<PathBuf>,
}

impl<'a> ChartIndex<'a> {
    fn new(charts: &'a [PathBuf], repo_root: &'a Path) -> Self {
        let known = charts.iter().map(|c| under(repo_root, c)).collect();
        ChartIndex { repo_root, known }
    }

    /// The chart at `path` (relative to the repository root), resolved against the repository
    /// root, if that folder is one of `charts` or holds a chart.
    fn resolve(&self, path: &str) -> Option<PathBuf> {
        let full = under(self.repo_root, Path::new(path.trim_start_matches('/')));
        (self.known.contains(&full) || is_chart(&full)).then_some(full)
    }

    fn key(&self, chart: &Path) -> PathBuf {
        under(self.repo_root, chart)
    }
}

fn str_at<'n>(node: &'n Node, keys: &[&str]) -> Option<&'n str> {
    node.get_path(keys)?.text()
}

/// A declaration gpulint cannot render as written: a values file that is missing or outside
/// the repository, a parameter Helm would refuse. Placed at the manifest's line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclarationError {
    pub file: PathBuf,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Where a manifest's declarations are: for errors placed at a node.
struct Declaring<'a> {
    file: &'a Path,
    stream: &'a Stream,
}

impl Declaring<'_> {
    fn error(&self, node: &Node, message: String) -> DeclarationError {
        let (line, column) = self.stream.line_col(node.span.start());
        DeclarationError {
            file: self.file.to_path_buf(),
            offset: node.span.start(),
            line,
            column,
            message,
        }
    }
}

/// A path Argo CD reads from the repository: relative to `base` (the chart's folder), or to
/// the repository root when it starts with `/`. An error when it leaves the repository (Argo
/// CD refuses those too); repository content is data, and gpulint reads nothing outside it.
fn repo_path(repo_root: &Path, base: &Path, written: &str) -> Result<PathBuf, String> {
    let path = match written.strip_prefix('/') {
        Some(rest) => normalize(&repo_root.join(rest)),
        None => normalize(&base.join(written)),
    };
    let outside = || format!("{written} is outside the repository: gpulint never reads it");
    if !path.starts_with(repo_root) || path.components().any(|c| c == Component::ParentDir) {
        return Err(outside());
    }
    // A symbolic link inside the repository may point outside it; a FIFO or device would
    // hang or flood the read. A missing file is the caller's to report.
    if std::fs::symlink_metadata(&path).is_ok() {
        crate::source::repo::check_file(&path, Some(repo_root))
            .map_err(|refused| format!("{written} {refused}"))?;
    }
    Ok(path)
}

/// Whether `name` is a Helm release name: a DNS-1123 subdomain of at most 53 characters (Helm's
/// own rule). Names come from manifests: checked, a name cannot reach `helm` as a flag.
pub fn is_release_name(name: &str) -> bool {
    name.len() <= 53 && is_dns1123_subdomain(name)
}

/// Whether `ns` is a namespace name: a DNS-1123 label (at most 63 characters).
pub fn is_namespace(ns: &str) -> bool {
    ns.len() <= 63 && is_dns1123_label(ns)
}

fn is_dns1123_label(s: &str) -> bool {
    let bytes = s.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.iter().all(|b| alnum(b) || *b == b'-')
        && bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// The error for a release name or namespace a manifest gives that Helm must not be handed.
fn invalid_name(what: &str, value: &str, release: &str) -> String {
    let rule = if what == "namespace" {
        "a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
    } else {
        "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most 53 characters"
    };
    let of = if what == "namespace" {
        format!(" of release {release}")
    } else {
        String::new()
    };
    format!("{what} {value:?}{of} is not {rule}; the release is not rendered")
}

/// Argo CD `Application` sources that are local charts. Values are applied in Argo CD's
/// documented order, "parameters > valuesObject > values > valueFiles > helm repository
/// values.yaml", and `valuesObject` replaces `values` when both are set
/// (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/#helm-value-precedence): the
/// repo server writes one inline values file after the `valueFiles` and passes `parameters`
/// as `--set`/`--set-string` and `fileParameters` as `--set-file` (reposerver/repository).
fn argo_releases(
    at: &Declaring,
    root: &Node,
    index: &ChartIndex,
    repo_root: &Path,
    out: &mut Vec<Release>,
    errors: &mut Vec<DeclarationError>,
) {
    let Some(spec) = root.get("spec") else { return };
    let app_name = root.get_path(&["metadata", "name"]).and_then(Node::text);
    let namespace = str_at(spec, &["destination", "namespace"]).unwrap_or("default");
    let mut sources: Vec<&Node> = Vec::new();
    if let Some(s) = spec.get("source").filter(|s| s.as_map().is_some()) {
        sources.push(s);
    }
    if let Some(list) = spec.get("sources").and_then(Node::as_seq) {
        sources.extend(list.iter().filter(|s| s.as_map().is_some()));
    }
    // `$ref/path` in valueFiles names another source of the same Application by its `ref`.
    let refs: Vec<&str> = sources.iter().filter_map(|s| s.get_str("ref")).collect();
    for source in &sources {
        if source.get("chart").is_some() {
            continue; // a chart from a Helm repository, not from this repository
        }
        let Some(path) = source.get_str("path") else {
            continue;
        };
        let Some(chart) = index.resolve(path) else {
            continue;
        };
        let helm = source.get("helm");
        let name_node = helm
            .and_then(|h| h.get("releaseName"))
            .or_else(|| root.get_path(&["metadata", "name"]));
        let name = helm
            .and_then(|h| h.get_str("releaseName"))
            .or(app_name)
            .unwrap_or("release");
        let mut values = Vec::new();
        let mut renderable = true;
        if !is_release_name(name) {
            errors.push(at.error(
                name_node.unwrap_or(root),
                invalid_name("release name", name, name),
            ));
            renderable = false;
        }
        if !is_namespace(namespace) {
            let node = spec.get_path(&["destination", "namespace"]).unwrap_or(root);
            errors.push(at.error(node, invalid_name("namespace", namespace, name)));
            renderable = false;
        }
        let chart_dir = index.key(&chart);
        let ignore_missing = helm
            .and_then(|h| h.get("ignoreMissingValueFiles"))
            .and_then(Node::as_scalar)
            .is_some_and(|s| s.kind == ScalarKind::Bool && s.text.eq_ignore_ascii_case("true"));
        let files = helm
            .and_then(|h| h.get("valueFiles"))
            .and_then(Node::as_seq)
            .unwrap_or_default();
        for node in files {
            let Some(f) = node.text() else { continue };
            if f.contains("://") {
                continue; // a remote values file: never fetched
            }
            let resolved = match f.strip_prefix('$') {
                Some(rest) => {
                    let (r, p) = rest.split_once('/').unwrap_or((rest, ""));
                    if !refs.contains(&r) {
                        continue;
                    }
                    repo_path(repo_root, repo_root, p)
                }
                None => repo_path(repo_root, &chart_dir, f),
            };
            match resolved {
                Ok(p) if p.is_file() => values.push(ValuesSource::File(p)),
                Ok(_) if ignore_missing => {}
                Ok(p) => {
                    errors.push(at.error(
                        node,
                        format!(
                            "values file {f} of release {name} does not exist ({}); the release is not rendered",
                            p.display()
                        ),
                    ));
                    renderable = false;
                }
                Err(message) => {
                    errors.push(at.error(node, format!("values file {message}")));
                    renderable = false;
                }
            }
        }
        let inline = ["valuesObject", "values"]
            .iter()
            .find_map(|key| helm.and_then(|h| h.get(key)).filter(|n| !n.is_null()));
        if let Some(node) = inline {
            values.push(ValuesSource::Inline {
                file: at.file.to_path_buf(),
                node: node.clone(),
            });
        }
        let mut params = Vec::new();
        for p in helm
            .and_then(|h| h.get("parameters"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let (Some(name_node), Some(value)) = (p.get("name"), p.get("value")) else {
                continue;
            };
            let Some(param_name) = name_node.text() else {
                continue;
            };
            let Some(path) = parse_set_name(param_name) else {
                errors.push(at.error(
                    name_node,
                    format!("Helm parameter name {param_name:?} is not a values path Helm accepts"),
                ));
                renderable = false;
                continue;
            };
            let force = p
                .get("forceString")
                .and_then(Node::as_scalar)
                .is_some_and(|s| s.text.eq_ignore_ascii_case("true"));
            let kind = if force {
                SetKind::SetString
            } else {
                SetKind::Set
            };
            let text = value.as_scalar().map_or("", |s| s.text.as_str());
            params.push(Parameter {
                name: param_name.to_string(),
                path,
                kind,
                value: typed_set_value(text, kind),
                node: value.clone(),
            });
        }
        for p in helm
            .and_then(|h| h.get("fileParameters"))
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            let (Some(name_node), Some(path_node)) = (p.get("name"), p.get("path")) else {
                continue;
            };
            let (Some(param_name), Some(written)) = (name_node.text(), path_node.text()) else {
                continue;
            };
            let Some(path) = parse_set_name(param_name) else {
                errors.push(at.error(
                    name_node,
                    format!("Helm parameter name {param_name:?} is not a values path Helm accepts"),
                ));
                renderable = false;
                continue;
            };
            let content = repo_path(repo_root, &chart_dir, written).and_then(|file| {
                crate::source::repo::read_file(&file, Some(repo_root))
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                    .map_err(|e| format!("{written} cannot be read ({}): {e}", file.display()))
            });
            match content {
                Ok(text) => params.push(Parameter {
                    name: param_name.to_string(),
                    path,
                    kind: SetKind::SetFile,
                    value: Json::String(text),
                    node: path_node.clone(),
                }),
                Err(message) => {
                    errors.push(at.error(path_node, format!("file parameter {message}")));
                    renderable = false;
                }
            }
        }
        if !params.is_empty() {
            values.push(ValuesSource::Parameters {
                file: at.file.to_path_buf(),
                params,
            });
        }
        if renderable {
            out.push(Release {
                chart,
                name: name.to_string(),
                namespace: namespace.to_string(),
                values,
                declared_in: Some(at.file.to_path_buf()),
            });
        }
    }
}

/// A Flux `HelmRelease` whose chart is a path in a GitRepository (or Bucket) source.
fn flux_release(
    at: &Declaring,
    root: &Node,
    index: &ChartIndex,
    repo_root: &Path,
    out: &mut Vec<Release>,
    errors: &mut Vec<DeclarationError>,
) {
    let file = at.file;
    let Some(spec) = root.get("spec") else { return };
    let Some(chart_spec) = spec.get_path(&["chart", "spec"]) else {
        return;
    };
    let kind = str_at(chart_spec, &["sourceRef", "kind"]).unwrap_or("");
    if kind != "GitRepository" && kind != "Bucket" {
        return;
    }
    let Some(chart) = chart_spec.get_str("chart").and_then(|p| index.resolve(p)) else {
        return;
    };
    let name = root.get_path(&["metadata", "name"]).and_then(Node::text);
    let target = spec.get_str("targetNamespace");
    let namespace = target
        .or_else(|| {
            root.get_path(&["metadata", "namespace"])
                .and_then(Node::text)
        })
        .unwrap_or("default");
    let release_name = match (spec.get_str("releaseName"), target, name) {
        (Some(r), _, _) => r.to_string(),
        (None, Some(t), Some(n)) => format!("{t}-{n}"),
        (None, None, Some(n)) => n.to_string(),
        _ => return,
    };
    let mut renderable = true;
    if !is_release_name(&release_name) {
        let node = spec
            .get("releaseName")
            .or_else(|| root.get_path(&["metadata", "name"]))
            .unwrap_or(root);
        errors.push(at.error(
            node,
            invalid_name("release name", &release_name, &release_name),
        ));
        renderable = false;
    }
    if !is_namespace(namespace) {
        let node = spec
            .get("targetNamespace")
            .or_else(|| root.get_path(&["metadata", "namespace"]))
            .unwrap_or(root);
        errors.push(at.error(node, invalid_name("namespace", namespace, &release_name)));
        renderable = false;
    }
    let mut values = Vec::new();
    // Values files are paths in the source (here: the repository).
    let mut files: Vec<&Node> = Vec::new();
    if let Some(f) = chart_spec.get("valuesFile") {
        files.push(f);
    }
    for holder in [chart_spec, spec] {
        if let Some(list) = holder.get("valuesFiles").and_then(Node::as_seq) {
            files.extend(list.iter());
        }
    }
    for node in files {
        let Some(f) = node.text() else { continue };
        match repo_path(repo_root, repo_root, f.trim_start_matches("./")) {
            Ok(p) if p.is_file() => values.push(ValuesSource::File(p)),
            Ok(p) => {
                errors.push(at.error(
                    node,
                    format!(
                        "values file {f} of release {release_name} does not exist ({}); the release is not rendered",
                        p.display()
                    ),
                ));
                renderable = false;
            }
            Err(message) => {
                errors.push(at.error(node, format!("values file {message}")));
                renderable = false;
            }
        }
    }
    if !renderable {
        return;
    }
    if let Some(node) = spec.get("values").filter(|n| n.as_map().is_some()) {
        values.push(ValuesSource::Inline {
            file: file.to_path_buf(),
            node: node.clone(),
        });
    }
    out.push(Release {
        chart,
        name: release_name,
        namespace: namespace.to_string(),
        values,
        declared_in: Some(file.to_path_buf()),
    });
}

/// The chart's folder name (the default release name).
fn dir_name(chart: &Path) -> String {
    normalize(chart)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "release".to_string())
}

/// Every release to render.
///
/// * `charts`: the charts found in the repository (paths relative to `repo_root`, or absolute);
/// * `manifests`: the parsed manifests, searched for Argo CD `Application`s
///   (`argoproj.io/v1alpha1`, `spec.source` and `spec.sources[]` with a `path`) and Flux
///   `HelmRelease`s (`helm.toolkit.fluxcd.io`, `spec.chart.spec.chart` a path in a
///   `GitRepository`/`Bucket` source);
/// * `config`: the config's `charts:` entries (paths relative to `repo_root`).
///
/// Each declaration is its own release; a chart in `charts` that nothing declares gets one
/// release with its defaults (named after its folder, in `default`). Declared charts outside
/// `charts` are included when their folder holds a chart. Order: declarations in manifest order,
/// then config entries, then undeclared charts.
pub fn releases(
    charts: &[PathBuf],
    manifests: &[(PathBuf, &Stream)],
    config: &[ChartEntry],
    repo_root: &Path,
) -> Vec<Release> {
    declared_releases(charts, manifests, config, repo_root).releases
}

/// What the repository declares: the releases to render, and the declarations that cannot be
/// rendered as written (their charts are not rendered with defaults instead).
#[derive(Debug, Default)]
pub struct Declared {
    pub releases: Vec<Release>,
    pub errors: Vec<DeclarationError>,
}

/// [`releases`], with the errors of the declarations that cannot be rendered.
pub fn declared_releases(
    charts: &[PathBuf],
    manifests: &[(PathBuf, &Stream)],
    config: &[ChartEntry],
    repo_root: &Path,
) -> Declared {
    let index = ChartIndex::new(charts, repo_root);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (file, stream) in manifests {
        let at = Declaring { file, stream };
        for doc in &stream.documents {
            let root = &doc.root;
            let api = root.get_str("apiVersion").unwrap_or("");
            let kind = root.get_str("kind").unwrap_or("");
            let group = api.split('/').next().unwrap_or("");
            match (group, kind) {
                ("argoproj.io", "Application") => {
                    argo_releases(&at, root, &index, repo_root, &mut out, &mut errors)
                }
                ("helm.toolkit.fluxcd.io", "HelmRelease") => {
                    flux_release(&at, root, &index, repo_root, &mut out, &mut errors)
                }
                _ => {}
            }
        }
    }
    for entry in config {
        let Some(chart) = index.resolve(&entry.path.to_string_lossy()) else {
            continue;
        };
        out.push(Release {
            name: entry.release.clone().unwrap_or_else(|| dir_name(&chart)),
            chart,
            namespace: entry
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_string()),
            values: entry
                .values
                .iter()
                .map(|v| ValuesSource::File(under(repo_root, v)))
                .collect(),
            declared_in: None,
        });
    }
    let mut declared: HashSet<PathBuf> = out.iter().map(|r| index.key(&r.chart)).collect();
    // A chart whose declaration failed is not rendered with its defaults instead.
    let failed: HashSet<&PathBuf> = errors.iter().map(|e| &e.file).collect();
    for (_, stream) in manifests.iter().filter(|(f, _)| failed.contains(f)) {
        for doc in &stream.documents {
            for path in declared_chart_paths(&doc.root) {
                if let Some(chart) = index.resolve(path) {
                    declared.insert(index.key(&chart));
                }
            }
        }
    }
    for chart in &index.known {
        if declared.insert(chart.clone()) {
            out.push(Release {
                chart: chart.clone(),
                name: dir_name(chart),
                namespace: "default".to_string(),
                values: Vec::new(),
                declared_in: None,
            });
        }
    }
    Declared {
        releases: out,
        errors,
    }
}

/// The local chart paths an Argo CD Application or Flux HelmRelease names.
fn declared_chart_paths(root: &Node) -> Vec<&str> {
    let mut out = Vec::new();
    if let Some(spec) = root.get("spec") {
        out.extend(spec.get_path(&["source", "path"]).and_then(Node::text));
        for s in spec
            .get("sources")
            .and_then(Node::as_seq)
            .unwrap_or_default()
        {
            out.extend(s.get_str("path"));
        }
        out.extend(
            spec.get_path(&["chart", "spec", "chart"])
                .and_then(Node::text),
        );
    }
    out
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
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// A rendered release: the `helm template` output, parsed.
#[derive(Clone, Debug)]
pub struct RenderedRelease {
    pub text: Arc<str>,
    pub stream: Stream,
    /// Per document of `stream`: the template it came from (`# Source:`, e.g.
    /// `ollama/templates/deployment.yaml`).
    pub templates: Vec<Option<String>>,
}

impl RenderedRelease {
    pub fn parse(text: &str) -> RenderedRelease {
        let stream = Stream::parse(text);
        RenderedRelease {
            text: stream.text.clone(),
            templates: source_templates(&stream),
            stream,
        }
    }
}

/// Per document of a `helm template` output: the template path of the nearest `# Source:`
/// comment above it (`None` when there is none, e.g. for input that is not Helm output).
pub fn source_templates(stream: &Stream) -> Vec<Option<String>> {
    let sources: Vec<(usize, &str)> = stream
        .comments
        .iter()
        .filter_map(|c| {
            let path = c.text.trim().strip_prefix("Source:")?.trim();
            (!path.is_empty()).then_some((c.line, path))
        })
        .collect();
    stream
        .documents
        .iter()
        .map(|doc| {
            let (line, _) = stream.line_col(doc.root.span.start());
            sources
                .iter()
                .take_while(|(l, _)| *l < line)
                .last()
                .map(|(_, p)| p.to_string())
        })
        .collect()
}

/// The template file a `# Source:` path names, and the first line in it that writes `key:`
/// (e.g. `resources:`): the byte offset of that key. `template` is as Helm prints it,
/// `<chart-name>/templates/x.yaml` (subcharts: `<chart-name>/charts/<sub>/templates/x.yaml`,
/// found only when the subchart is unpacked). `None` when the file or the key is not there.
pub fn template_location(chart: &Path, template: &str, key: &str) -> Option<(PathBuf, usize)> {
    let (_, rest) = template.split_once('/')?;
    let rel = Path::new(rest);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let file = chart.join(rel);
    let text = std::fs::read_to_string(&file).ok()?;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let item = trimmed.strip_prefix("- ").map(str::trim_start);
        for (candidate, at) in [
            (Some(trimmed), indent),
            (item, line.len() - item.map_or(0, str::len)),
        ] {
            let Some(c) = candidate else { continue };
            let unquoted = c
                .strip_prefix('"')
                .and_then(|c| c.strip_prefix(key)?.strip_prefix('"'))
                .or_else(|| c.strip_prefix(key));
            if unquoted.is_some_and(|r| r.starts_with(':')) {
                return Some((file, offset + at));
            }
        }
        offset += line.len();
    }
    None
}

/// A template's file in `chart`, from its `# Source:` path (never outside the chart).
fn template_file(chart: &Path, template: &str) -> Option<PathBuf> {
    let (_, rest) = template.split_once('/')?;
    let rel = Path::new(rest);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(chart.join(rel))
}

/// The key a template line writes (`key:` or `- key:`, the key possibly quoted), and where the
/// key starts in the line; `None` for directives (`{{ … }}`), comments and blank lines.
fn template_key(line: &str) -> Option<(&str, usize)> {
    let trimmed = line.trim_start();
    let mut at = line.len() - trimmed.len();
    let mut rest = trimmed;
    if let Some(item) = rest.strip_prefix("- ") {
        let item = item.trim_start();
        at = line.len() - item.len();
        rest = item;
    }
    if rest.is_empty() || rest.starts_with('#') || rest.starts_with("{{") {
        return None;
    }
    let key = match rest.strip_prefix('"') {
        Some(quoted) => &quoted[..quoted.find('"')?],
        None => &rest[..rest.find(':')?],
    };
    Some((key, at))
}

/// Where a template writes the rendered field `path` (the segments of the rendered object, as
/// [`node_path_at`] gives them): the keys of `path` are looked for in order, each inside the
/// block of the one found before it (a deeper indentation), skipping keys the template does
/// not write literally (`toYaml`, `include`); the last one found is the place, as (file,
/// offset, length). A template that writes none of them gives its first line; `None` when
/// the template file is not in the chart (a packed subchart).
pub fn template_field_location(
    chart: &Path,
    template: &str,
    path: &[Segment],
) -> Option<(PathBuf, usize, usize)> {
    let file = template_file(chart, template)?;
    let text = std::fs::read_to_string(&file).ok()?;
    // (offset of the key, its indentation, the key) per line that writes a key.
    let mut lines: Vec<(usize, usize, &str)> = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some((key, at)) = template_key(line.trim_end_matches(['\n', '\r'])) {
            lines.push((offset + at, at, key));
        }
        offset += line.len();
    }
    let mut next = 0;
    let mut block: Option<usize> = None;
    let mut best = (0, 0);
    for segment in path {
        let Segment::Key(wanted) = segment else {
            continue;
        };
        let found = lines[next..]
            .iter()
            .take_while(|(_, indent, _)| block.is_none_or(|b| *indent > b))
            .position(|(_, _, key)| key == wanted);
        if let Some(i) = found {
            let (at, indent, key) = lines[next + i];
            best = (at, key.len());
            block = Some(indent);
            next += i + 1;
        }
    }
    Some((file, best.0, best.1))
}

/// The path of keys and indices to the deepest node of `root` whose span holds `offset` (a
/// key's span counts as its entry's).
pub fn node_path_at(root: &Node, offset: usize) -> Vec<Segment> {
    let mut path = Vec::new();
    let mut node = root;
    loop {
        let next = match &node.value {
            Value::Map(entries) => entries.iter().find_map(|e| {
                let holds = |n: &Node| {
                    n.span.start() <= offset && offset < n.span.end().max(n.span.start() + 1)
                };
                (holds(&e.key) || holds(&e.value))
                    .then(|| Some((Segment::Key(e.key.text()?.to_string()), &e.value)))
                    .flatten()
            }),
            Value::Seq(items) => items.iter().enumerate().find_map(|(i, n)| {
                (n.span.start() <= offset && offset < n.span.end())
                    .then_some((Segment::Index(i), n))
            }),
            Value::Scalar(_) => None,
        };
        let Some((segment, child)) = next else {
            return path;
        };
        path.push(segment);
        node = child;
    }
}

/// A `helm` binary.
#[derive(Clone, Debug)]
pub struct HelmEngine {
    pub binary: PathBuf,
    /// Per `helm` run; [`DEFAULT_TIMEOUT`] unless changed.
    pub timeout: Duration,
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

struct Output {
    status: std::process::ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Makes a private temporary folder (created exclusively), removed on drop.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// A new folder with a random name, readable by this user only (rendered values may hold
    /// secrets); removed on drop.
    pub fn new() -> std::io::Result<TempDir> {
        tempfile::Builder::new()
            .prefix("gpulint-helm-")
            .tempdir()
            .map(TempDir)
    }
}

impl HelmEngine {
    pub fn new(binary: PathBuf) -> HelmEngine {
        HelmEngine {
            binary,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// `explicit` (a path, or a bare name looked up on `PATH`), else `helm` on `PATH`.
    pub fn find(explicit: Option<&Path>) -> Option<HelmEngine> {
        let binary = match explicit {
            Some(p) if p.components().count() > 1 || p.is_absolute() => {
                p.is_file().then(|| p.to_path_buf())?
            }
            Some(p) => find_on_path(&p.to_string_lossy())?,
            None => find_on_path("helm")?,
        };
        Some(HelmEngine::new(binary))
    }

    fn run(&self, args: &[&std::ffi::OsStr]) -> Result<Option<Output>, HelmError> {
        let mut child = Command::new(&self.binary)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| HelmError::Spawn {
                binary: self.binary.clone(),
                source,
            })?;
        let mut out_pipe = child.stdout.take();
        let mut err_pipe = child.stderr.take();
        let out_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = out_pipe.as_mut() {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        });
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = err_pipe.as_mut() {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        });
        let start = Instant::now();
        let io = |source| HelmError::Io {
            what: format!("waiting for {}", self.binary.display()),
            source,
        };
        let status = loop {
            if let Some(status) = child.try_wait().map_err(io)? {
                break Some(status);
            }
            if start.elapsed() >= self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let stdout = out_reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        Ok(status.map(|status| Output {
            status,
            stdout,
            stderr,
        }))
    }

    /// `helm version --short`, e.g. `v3.16.2+g13654a5` (trimmed).
    pub fn version(&self) -> Result<String, HelmError> {
        let failed = |status: String, stderr: String| HelmError::Failed {
            chart: PathBuf::new(),
            release: "(helm version)".into(),
            status,
            stderr,
        };
        let out = self
            .run(&["version".as_ref(), "--short".as_ref()])?
            .ok_or_else(|| failed("timed out".into(), String::new()))?;
        if !out.status.success() {
            return Err(failed(
                out.status.to_string(),
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Renders `release` like `helm template NAME CHART --namespace NS -f V1 -f V2 …`: its values
    /// sources in order (inline values are written to temporary files), then `override_values`
    /// (a JSON object, applied last) if given.
    pub fn template(
        &self,
        release: &Release,
        override_values: Option<&Json>,
    ) -> Result<RenderedRelease, HelmError> {
        let tmp = TempDir::new().map_err(|source| HelmError::Io {
            what: "creating a temporary folder".into(),
            source,
        })?;
        let values_err = |message: String| HelmError::Values {
            chart: release.chart.clone(),
            release: release.name.clone(),
            message,
        };
        let mut files: Vec<PathBuf> = Vec::new();
        let write = |name: String, content: &[u8]| -> Result<PathBuf, HelmError> {
            let path = tmp.path().join(name);
            std::fs::File::create(&path)
                .and_then(|mut f| f.write_all(content))
                .map_err(|source| HelmError::Io {
                    what: format!("writing {}", path.display()),
                    source,
                })?;
            Ok(path)
        };
        for (i, source) in release.values.iter().enumerate() {
            match source {
                ValuesSource::File(p) => files.push(p.clone()),
                ValuesSource::Inline { file, node } => {
                    let content = match &node.value {
                        Value::Scalar(s) if s.kind == ScalarKind::Str => s.text.clone(),
                        Value::Map(_) => typed(node).to_string(),
                        _ => {
                            return Err(values_err(format!(
                                "inline values in {} are neither a mapping nor a string",
                                file.display()
                            )))
                        }
                    };
                    files.push(write(format!("values-{i}.yaml"), content.as_bytes())?);
                }
                ValuesSource::Parameters { params, .. } => {
                    // Helm applies `--set` onto the values files' merge (a list index enters
                    // the list a file gave); written out, that merge is the last values file.
                    let mut user = user_values(&release.values[..i])?;
                    apply_parameters(&mut user, params);
                    files.push(write(
                        format!("values-{i}.json"),
                        user.to_string().as_bytes(),
                    )?);
                }
            }
        }
        if let Some(v) = override_values {
            if !v.is_object() {
                return Err(values_err("override values must be an object".into()));
            }
            files.push(write("override.json".into(), v.to_string().as_bytes())?);
        }
        // Names come from manifests: never handed to helm unless they are names, flags take
        // their value in the same argument, and the positional arguments follow `--`.
        if !is_release_name(&release.name) {
            return Err(values_err(invalid_name(
                "release name",
                &release.name,
                &release.name,
            )));
        }
        if !is_namespace(&release.namespace) {
            return Err(values_err(invalid_name(
                "namespace",
                &release.namespace,
                &release.name,
            )));
        }
        let namespace = format!("--namespace={}", release.namespace);
        let values: Vec<std::ffi::OsString> = files
            .iter()
            .map(|f| {
                let mut arg = std::ffi::OsString::from("--values=");
                arg.push(f);
                arg
            })
            .collect();
        let mut args: Vec<&std::ffi::OsStr> = vec!["template".as_ref(), namespace.as_ref()];
        args.extend(values.iter().map(|v| v.as_os_str()));
        args.push("--".as_ref());
        args.push(release.name.as_ref());
        args.push(release.chart.as_os_str());
        let out = self.run(&args)?.ok_or_else(|| HelmError::Timeout {
            chart: release.chart.clone(),
            release: release.name.clone(),
            seconds: self.timeout.as_secs(),
        })?;
        if !out.status.success() {
            return Err(HelmError::Failed {
                chart: release.chart.clone(),
                release: release.name.clone(),
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let text = String::from_utf8(out.stdout)
            .map_err(|_| values_err("helm printed output that is not UTF-8".into()))?;
        Ok(RenderedRelease::parse(&text))
    }
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
fn same_quantity(a: &str, b: &str) -> bool {
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
    let manifest = std::fs::read_to_string(file).ok();
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
    /// (document, path) that differ between two renders without changes.
    noise: &'a [(usize, Vec<Segment>)],
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
    let docs: Vec<Json> = render
        .stream
        .documents
        .iter()
        .map(|d| typed(&d.root))
        .collect();
    if docs.len() != base.len() {
        return Ok(Probe::Rejected);
    }
    for (i, (a, b)) in base.iter().zip(&docs).enumerate() {
        let mut changed = Vec::new();
        diff(a, b, &mut Vec::new(), &mut changed);
        changed.retain(|p| {
            !is_checksum_annotation(p) && !noise.iter().any(|(d, n)| *d == i && n == p)
        });
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

/// The one values leaf that produces the rendered field `path` of document `document` of
/// `rendered` (a render of `release` by `engine`, without override).
///
/// Algorithm: the candidates are the values leaves (the chart's values.yaml, then each of
/// `release.values`) whose value equals the rendered value as a quantity (`1` = `"1"`), and
/// that are in effect: the merged values hold that value at that key path, and only the last
/// layer setting the key path counts (a user's values file over the chart's values.yaml). Each
/// candidate is probed with one render in which the leaf alone is a sentinel (`7919`, `7919Gi`;
/// lists copied whole since Helm replaces them) and is accepted only when the field of that
/// object becomes the sentinel and nothing else changed in the whole render, except the field's
/// `requests`/`limits` twin and `checksum/` annotations. Exactly one accepted candidate is the
/// origin; none, or more than one (e.g. `max .Values.a .Values.b` with `a = b`), is `Ok(None)`,
/// as is a winner whose bytes cannot be located (a non-literal Argo CD `helm.values` string).
///
/// A control render without changes comes first: fields that differ between two identical
/// renders (`now`, `uuidv4`, `randAlphaNum`) are ignored in the probes.
///
/// Cost: one control render plus one `helm template` per candidate (at most [`MAX_CANDIDATES`]; more → `Ok(None)`),
/// run [`PARALLEL_PROBES`] at a time. Measured (tests/helm.rs, helm-python-sdk engine, about
/// 0.15-0.3 s per render): ollama's GPU count `1` takes 6 renders (5 candidates), vllm-stack's
/// GPU count 11 (10 candidates: every effective `1` in its values), a4_jobset_workload's `8`
/// takes 2; 0.3-1.7 s per call. The caller's `rendered` must be `engine.template(release,
/// None)`; the function does not cache across calls.
pub fn values_origin(
    engine: &HelmEngine,
    release: &Release,
    rendered: &RenderedRelease,
    document: usize,
    path: &[Segment],
) -> Result<Option<ValuesOrigin>, HelmError> {
    let Some(doc) = rendered.stream.documents.get(document) else {
        return Ok(None);
    };
    let Some(rendered_value) = seg_get(&doc.root, path).and_then(Node::text) else {
        return Ok(None);
    };
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
    // Effective leaves equal to the rendered value; a later layer's leaf replaces an earlier one.
    let mut candidates: Vec<Candidate> = Vec::new();
    for l in &layers {
        let mut leaves = Vec::new();
        match &l.values {
            LayerValues::Tree(root) => collect_leaves(root, &mut Vec::new(), &mut leaves),
            LayerValues::Sets { leaves: sets, .. } => {
                leaves.extend(sets.iter().map(|(p, n)| (p.clone(), n)));
            }
        }
        for (key_path, node) in leaves {
            let Some(text) = node.text() else { continue };
            if !same_quantity(text, rendered_value) {
                continue;
            }
            let effective = json_get(&merged, &key_path)
                .and_then(json_text)
                .is_some_and(|m| same_quantity(&m, text));
            if !effective {
                continue;
            }
            candidates.retain(|c| c.key_path != key_path);
            candidates.push(Candidate {
                layer: l,
                key_path,
                node,
            });
        }
    }
    if candidates.is_empty() || candidates.len() > MAX_CANDIDATES {
        return Ok(None);
    }
    let base: Vec<Json> = rendered
        .stream
        .documents
        .iter()
        .map(|d| typed(&d.root))
        .collect();
    // A control render without changes: fields that differ anyway (`now`, `uuidv4`, `rand*`)
    // are noise, not effects of a candidate.
    let control = engine.template(release, None)?;
    let mut noise = Vec::new();
    let control_docs: Vec<Json> = control
        .stream
        .documents
        .iter()
        .map(|d| typed(&d.root))
        .collect();
    if control_docs.len() != base.len() {
        return Ok(None);
    }
    for (i, (a, b)) in base.iter().zip(&control_docs).enumerate() {
        let mut changed = Vec::new();
        diff(a, b, &mut Vec::new(), &mut changed);
        if i == document && changed.iter().any(|p| p.as_slice() == path) {
            return Ok(None); // the field itself is not reproducible
        }
        noise.extend(changed.into_iter().map(|p| (i, p)));
    }
    let cx = ProbeContext {
        engine,
        release,
        base: &base,
        document,
        path,
        merged: &merged,
        rendered_value,
        noise: &noise,
    };
    let mut results: Vec<Result<Probe, HelmError>> = Vec::with_capacity(candidates.len());
    for chunk in candidates.chunks(PARALLEL_PROBES) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|c| {
                    let cx = &cx;
                    s.spawn(move || probe(cx, c))
                })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(parts: &[&str]) -> Vec<Segment> {
        parts
            .iter()
            .map(|p| match p.parse::<usize>() {
                Ok(i) => Segment::Index(i),
                Err(_) => Segment::Key(p.to_string()),
            })
            .collect()
    }

    #[test]
    fn source_templates_maps_documents_to_the_comment_above() {
        let text = "---\n# Source: c/templates/a.yaml\n---\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B1\n---\nkind: B2\n---\n# Source: c/templates/empty.yaml\n---\n# Source: c/templates/c.yaml\n# a comment of the template\nkind: C\n";
        let s = Stream::parse(text);
        assert_eq!(
            source_templates(&s),
            [
                Some("c/templates/a.yaml".to_string()),
                Some("c/templates/b.yaml".to_string()),
                Some("c/templates/b.yaml".to_string()),
                Some("c/templates/c.yaml".to_string()),
            ]
        );
        let plain = Stream::parse("kind: A\n---\nkind: B\n");
        assert_eq!(source_templates(&plain), [None, None]);
        assert!(source_templates(&Stream::parse("")).is_empty());
    }

    #[test]
    fn template_location_finds_the_key_line() {
        let dir = std::env::temp_dir().join(format!("gpulint-helm-unit-{}", std::process::id()));
        let templates = dir.join("templates");
        std::fs::create_dir_all(&templates).unwrap();
        let text = "spec:\n  containers:\n  - name: x\n    # resources below\n    resources:\n      {{- toYaml .Values.resources | nindent 6 }}\n";
        std::fs::write(templates.join("d.yaml"), text).unwrap();
        let (file, at) = template_location(&dir, "mychart/templates/d.yaml", "resources").unwrap();
        assert_eq!(file, templates.join("d.yaml"));
        assert!(text[at..].starts_with("resources:"));
        let (_, at) = template_location(&dir, "mychart/templates/d.yaml", "name").unwrap();
        assert!(text[at..].starts_with("name: x"));
        assert_eq!(
            template_location(&dir, "mychart/templates/d.yaml", "limits"),
            None
        );
        assert_eq!(
            template_location(&dir, "mychart/templates/none.yaml", "spec"),
            None
        );
        assert_eq!(
            template_location(&dir, "mychart/../etc/passwd", "root"),
            None
        );
        assert_eq!(template_location(&dir, "no-slash", "spec"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

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
    fn template_field_location_follows_the_path_through_blocks() {
        let dir = std::env::temp_dir().join(format!("gpulint-helm-field-{}", std::process::id()));
        let templates = dir.join("templates");
        std::fs::create_dir_all(&templates).unwrap();
        let text = "spec:\n  template:\n    spec:\n      initContainers:\n      - name: init\n        resources: {{ toYaml .Values.init | nindent 10 }}\n      containers:\n      - name: main\n        {{- if .Values.r }}\n# a comment at column 0\n        resources:\n          limits:\n            {{- include \"x\" . | nindent 12 }}\n        {{- end }}\n";
        std::fs::write(templates.join("d.yaml"), text).unwrap();
        let path = keys(&[
            "spec",
            "template",
            "spec",
            "containers",
            "0",
            "resources",
            "limits",
            "nvidia.com/gpu",
        ]);
        let (file, at, len) = template_field_location(&dir, "c/templates/d.yaml", &path).unwrap();
        assert_eq!(file, templates.join("d.yaml"));
        assert!(text[at..].starts_with("limits:"), "{}", &text[at..]);
        assert_eq!(len, "limits".len());
        // Nothing written literally: the template's first line.
        assert_eq!(
            template_field_location(&dir, "c/templates/d.yaml", &keys(&["data"])),
            Some((templates.join("d.yaml"), 0, 0))
        );
        assert_eq!(
            template_field_location(&dir, "c/templates/none.yaml", &path),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
        // The path of a rendered node.
        let s = Stream::parse(
            "spec:\n  containers:\n  - name: a\n    resources:\n      limits: {x: 1}\n",
        );
        let at = s.text.find("x: 1").unwrap();
        assert_eq!(
            node_path_at(&s.documents[0].root, at),
            keys(&["spec", "containers", "0", "resources", "limits", "x"])
        );
    }

    #[test]
    fn releases_resolve_paths_lexically() {
        assert_eq!(normalize(Path::new("a/./b/../c/")), PathBuf::from("a/c"));
        assert_eq!(
            under(Path::new("/r"), Path::new("./charts/x")),
            PathBuf::from("/r/charts/x")
        );
    }
}
