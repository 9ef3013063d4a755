//! Which releases a repository declares: Argo CD `Application`s, Flux `HelmRelease`s and the
//! config's `charts:` entries, with their values files and `--set` parameters resolved inside the
//! repository; a chart nobody declares is rendered once with its defaults.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde_json::Value as Json;

use super::{is_chart, parse_set_name, typed_set_value, Parameter, Release, SetKind, ValuesSource};
use crate::source::repo::symlink_leaving;
use crate::source::yaml::{Node, ScalarKind, Stream};

/// One `charts:` entry: a release of a chart in the repository.
///
/// ```yaml
/// charts:
/// - path: charts/llm          # the chart's folder
///   release: llm-prod         # default: the folder's name
///   namespace: serving        # default: `default`
///   values: [envs/prod/llm.yaml]
/// ```
///
/// Paths are kept as written: relative to the config's folder, which is the repository root
/// (`source::helm::releases` resolves them against the repository root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartEntry {
    pub path: PathBuf,
    pub release: Option<String>,
    pub namespace: Option<String>,
    /// Values files, in precedence order (last wins), after the chart's own values.yaml.
    pub values: Vec<PathBuf>,
    /// The remote chart this folder vendors, as a Flux HelmRelease names it
    /// (`<source name>/<chart>` for a HelmRepository or OCIRepository source, the
    /// `chartRef` name otherwise): the releases that name it render this folder. Such an
    /// entry declares no release of its own.
    pub remote: Option<String>,
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

pub(super) fn under(root: &Path, path: &Path) -> PathBuf {
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
    /// root, if that folder is one of `charts` or holds a chart. `Err`: the folder is outside
    /// the repository, as written or once symlinks are followed (Helm is never handed it).
    fn resolve(&self, path: &str) -> Result<Option<PathBuf>, String> {
        let full = under(self.repo_root, Path::new(path.trim_start_matches('/')));
        self.inside(path, &full, self.repo_root)?;
        Ok((self.known.contains(&full) || is_chart(&full)).then_some(full))
    }

    /// `Err` when `full` (what `path` names from `base`) is outside the repository, as written
    /// or once symlinks are followed.
    fn inside(&self, path: &str, full: &Path, base: &Path) -> Result<(), String> {
        let outside = |how: String| {
            Err(format!(
                "chart path {path} {how}, outside the repository: not rendered (Helm is never handed a folder outside it)"
            ))
        };
        let absolute = |p: &Path| normalize(&std::path::absolute(p).unwrap_or_else(|_| p.into()));
        let root = absolute(self.repo_root);
        if !absolute(full).starts_with(absolute(base)) || !absolute(full).starts_with(&root) {
            return outside(format!("is {}", absolute(full).display()));
        }
        if let Ok(real) = std::fs::canonicalize(full) {
            let real_root = std::fs::canonicalize(&root).unwrap_or(root);
            if !real.starts_with(&real_root) {
                return outside(format!("resolves to {}", real.display()));
            }
        }
        Ok(())
    }

    /// The chart at `path` as a GitOps declaration in `declared_in` names it: relative to the
    /// root of its source, which is the repository's root, or (for a GitOps tree kept in a
    /// folder of the repository) the outermost folder above the declaration that holds it.
    /// `Err`: no chart inside the repository, and the path from its root leaves it.
    fn resolve_declared(&self, path: &str, declared_in: &Path) -> Result<Option<PathBuf>, String> {
        let from_root = self.resolve(path);
        if let Ok(Some(found)) = from_root {
            return Ok(Some(found));
        }
        let relative = Path::new(path.trim_start_matches('/'));
        // The root was tried above: the folders between it and the declaration.
        let bases = crate::source::repo::declaration_bases(declared_in, Some(self.repo_root));
        for base in bases.iter().skip(1) {
            let full = normalize(&base.join(relative));
            if full.starts_with(base) && (self.known.contains(&full) || is_chart(&full)) {
                // A chart found from a folder: inside it as written; symlinks followed, too.
                self.inside(path, &full, base)?;
                return Ok(Some(full));
            }
        }
        from_root
    }

    fn key(&self, chart: &Path) -> PathBuf {
        under(self.repo_root, chart)
    }
}

/// The address Argo CD calls `in-cluster`: the cluster it runs in.
const IN_CLUSTER: &str = "https://kubernetes.default.svc";

/// The cluster an Argo CD Application's destination names: `name`, else `server`
/// (`in-cluster` for the API server's own address).
pub fn argo_destination(spec: &Node) -> Option<String> {
    let dest = spec.get("destination")?;
    if let Some(name) = dest.get_str("name").filter(|n| !n.is_empty()) {
        return Some(name.to_string());
    }
    let server = dest.get_str("server").filter(|s| !s.is_empty())?;
    Some(if server.trim_end_matches('/') == IN_CLUSTER {
        "in-cluster".to_string()
    } else {
        server.to_string()
    })
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

/// Whether `s` is a DNS-1123 subdomain (what Kubernetes allows as most objects' names):
/// lowercase letters, digits, '-' and '.', at most 253 characters; never a `/`.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// The error for a release name or namespace a manifest gives that Helm must not be handed.
pub(super) fn invalid_name(what: &str, value: &str, release: &str) -> String {
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
#[allow(clippy::too_many_arguments)]
fn argo_releases(
    at: &Declaring,
    root: &Node,
    index: &ChartIndex,
    config: &[ChartEntry],
    repo_root: &Path,
    out: &mut Vec<Release>,
    errors: &mut Vec<DeclarationError>,
    notes: &mut Vec<String>,
) {
    let Some(spec) = root.get("spec") else { return };
    let app_name = root.get_path(&["metadata", "name"]).and_then(Node::text);
    let namespace = str_at(spec, &["destination", "namespace"]).unwrap_or("default");
    let destination = argo_destination(spec);
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
        let chart = if let Some((key, chart)) = argo_remote_chart(source) {
            // A chart from a Helm or OCI repository: rendered from its vendored copy only.
            let Some(entry) = vendored(config, &key) else {
                let note = format!(
                    "{}: Application {}: its chart ({chart}) is not in this repository: not rendered (vendor it and map it in .gpulint.yaml: `charts: [{{path: <folder>, remote: {key}}}]`)",
                    at.file.display(),
                    app_name.unwrap_or("?")
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
                continue;
            };
            // The entry's path was checked with the config (inside the repository).
            match index.resolve(&entry.path.to_string_lossy()) {
                Ok(Some(chart)) => chart,
                _ => continue,
            }
        } else {
            let Some(path) = source.get_str("path") else {
                continue;
            };
            match index.resolve_declared(path, at.file) {
                Ok(Some(chart)) => chart,
                Ok(None) => continue,
                Err(message) => {
                    errors.push(at.error(source.get("path").unwrap_or(source), message));
                    continue;
                }
            }
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
                cluster: destination.clone(),
                rendered_from: None,
            });
        }
    }
}

/// A Flux `HelmRelease` whose chart is a path in a GitRepository (or Bucket) source, or a
/// remote chart a `charts:` entry maps to a vendored folder. `config_maps` are those its
/// `valuesFrom` may name (its render's, or the plain manifests').
#[allow(clippy::too_many_arguments)]
fn flux_release(
    at: &Declaring,
    root: &Node,
    index: &ChartIndex,
    config: &[ChartEntry],
    repo_root: &Path,
    config_maps: &[(PathBuf, &Node)],
    out: &mut Vec<Release>,
    errors: &mut Vec<DeclarationError>,
    notes: &mut Vec<String>,
) {
    let file = at.file;
    let Some(spec) = root.get("spec") else { return };
    let chart_spec = spec.get_path(&["chart", "spec"]);
    let remote = remote_chart(root);
    let chart = if let Some((key, _)) = &remote {
        let Some(entry) = vendored(config, key) else {
            return;
        };
        // The entry's path was checked with the config (inside the repository).
        match index.resolve(&entry.path.to_string_lossy()) {
            Ok(Some(chart)) => chart,
            _ => return,
        }
    } else {
        let Some(chart_spec) = chart_spec else {
            return;
        };
        let Some(path) = chart_spec.get_str("chart") else {
            return;
        };
        match index.resolve_declared(path, at.file) {
            Ok(Some(chart)) => chart,
            Ok(None) => return,
            Err(message) => {
                errors.push(at.error(chart_spec.get("chart").unwrap_or(chart_spec), message));
                return;
            }
        }
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
    // Values files are paths in the source: the repository for a GitRepository, the chart
    // itself for a remote chart (here: its vendored folder).
    let base = if remote.is_some() {
        chart.clone()
    } else {
        repo_root.to_path_buf()
    };
    let mut files: Vec<&Node> = Vec::new();
    if let Some(f) = chart_spec.and_then(|c| c.get("valuesFile")) {
        files.push(f);
    }
    for holder in chart_spec.into_iter().chain([spec]) {
        if let Some(list) = holder.get("valuesFiles").and_then(Node::as_seq) {
            files.extend(list.iter());
        }
    }
    for node in files {
        let Some(f) = node.text() else { continue };
        match repo_path(repo_root, &base, f.trim_start_matches("./")) {
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
    // Flux merges valuesFrom in order over the chart's values, then spec.values over them.
    let own_namespace = root
        .get_path(&["metadata", "namespace"])
        .and_then(Node::text)
        .unwrap_or("default");
    let unread = values_from(spec, own_namespace, config_maps, &mut values);
    if !unread.is_empty() {
        let note = format!(
            "{}: HelmRelease {}: its valuesFrom {} is not read: the release is rendered without it, so a value it sets is judged as the chart's",
            file.display(),
            root.get_path(&["metadata", "name"])
                .and_then(Node::text)
                .unwrap_or("?"),
            unread.join(", ")
        );
        // Each cluster that applies the release would say it again.
        if !notes.contains(&note) {
            notes.push(note);
        }
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
        cluster: None,
        rendered_from: None,
    });
}

/// A HelmRelease's `valuesFrom`: each ConfigMap key the repository holds (in the release's
/// namespace, or in none: a Flux Kustomization's target namespace places it) becomes a values
/// source, its YAML string placed in the ConfigMap's file. Returns what is not read: Secrets
/// (never read), `targetPath` entries, and ConfigMaps or keys that are not in the repository
/// (unless `optional`).
fn values_from(
    spec: &Node,
    namespace: &str,
    config_maps: &[(PathBuf, &Node)],
    values: &mut Vec<ValuesSource>,
) -> Vec<String> {
    let mut unread = Vec::new();
    for entry in spec
        .get("valuesFrom")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let kind = entry.get_str("kind").unwrap_or("ConfigMap");
        let name = entry.get_str("name").unwrap_or("?");
        if kind != "ConfigMap" {
            unread.push(format!("{kind} {name} (gpulint never reads secrets)"));
            continue;
        }
        if entry.get("targetPath").is_some() {
            unread.push(format!("ConfigMap {name} (a targetPath entry)"));
            continue;
        }
        let key = entry.get_str("valuesKey").unwrap_or("values.yaml");
        let found = config_maps.iter().find(|(_, cm)| {
            cm.get_path(&["metadata", "name"]).and_then(Node::text) == Some(name)
                && cm
                    .get_path(&["metadata", "namespace"])
                    .and_then(Node::text)
                    .is_none_or(|ns| ns == namespace)
        });
        match found.and_then(|(file, cm)| Some((file, cm.get("data")?.get(key)?))) {
            Some((file, node)) if node.text().is_some() => values.push(ValuesSource::Inline {
                file: file.clone(),
                node: node.clone(),
            }),
            _ if entry.get_str("optional") == Some("true") => {}
            Some(_) => unread.push(format!("ConfigMap {name} (its {key} is not text)")),
            None => unread.push(format!(
                "ConfigMap {name} (its {key} is not in the repository)"
            )),
        }
    }
    unread
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
    declared_releases(charts, manifests, &[], config, repo_root).releases
}

/// A Flux HelmRelease as a Kustomize render made it (a base's HelmRelease with the overlay's
/// patches of its values): a declaration like one in a plain manifest, for the render's
/// cluster. Its nodes carry the run's file indices, so a values leaf is placed in the file
/// that wrote it.
pub struct RenderedDeclaration<'a> {
    /// The file that declares it (its `kind:`), and that file's text.
    pub file: PathBuf,
    pub stream: &'a Stream,
    pub object: &'a Node,
    pub cluster: Option<String>,
    /// The render (run index) and the object's place in it.
    pub rendered_from: (usize, usize),
    /// The render's ConfigMaps (a `valuesFrom` source), each with the file that writes it.
    pub config_maps: Vec<(PathBuf, &'a Node)>,
}

/// What the repository declares: the releases to render, and the declarations that cannot be
/// rendered as written (their charts are not rendered with defaults instead).
#[derive(Debug, Default)]
pub struct Declared {
    pub releases: Vec<Release>,
    pub errors: Vec<DeclarationError>,
    /// Releases declared with a chart that is not in the repository (a Helm or OCI
    /// repository's): named, not rendered.
    pub notes: Vec<String>,
}

/// A Flux HelmRelease's chart when it comes from outside the repository: `chartRef`, or a
/// `HelmRepository`/`OCIRepository` source. Returns the key a `charts:` entry's `remote` maps
/// (`<source>/<chart>`, or the `chartRef` name) and how a note names it.
fn remote_chart(root: &Node) -> Option<(String, String)> {
    let spec = root.get("spec")?;
    if let Some(r) = spec.get("chartRef") {
        let kind = r.get_str("kind").unwrap_or("OCIRepository");
        let name = r.get_str("name").unwrap_or("?");
        return Some((name.to_string(), format!("{kind} {name}")));
    }
    let chart = spec.get_path(&["chart", "spec"])?;
    let kind = str_at(chart, &["sourceRef", "kind"]).unwrap_or("");
    if matches!(kind, "GitRepository" | "Bucket" | "") {
        return None;
    }
    let source = str_at(chart, &["sourceRef", "name"]).unwrap_or("?");
    let name = chart.get_str("chart").unwrap_or("?");
    let version = chart.get_str("version").unwrap_or("*");
    Some((
        format!("{source}/{name}"),
        format!("{kind} {source}: {name}@{version}"),
    ))
}

/// An Argo CD source's chart from a Helm or OCI repository (`repoURL` + `chart`): the key a
/// `charts:` entry's `remote` maps (`<repoURL>/<chart>`, the URL without a trailing `/`) and
/// how a note names it.
fn argo_remote_chart(source: &Node) -> Option<(String, String)> {
    let chart = source.get_str("chart")?;
    let repo = source
        .get_str("repoURL")
        .unwrap_or("?")
        .trim_end_matches('/');
    let version = source.get_str("targetRevision").unwrap_or("*");
    Some((
        format!("{repo}/{chart}"),
        format!("{repo}: {chart}@{version}"),
    ))
}

/// The vendored folder a `charts:` entry maps a remote chart to.
fn vendored<'a>(config: &'a [ChartEntry], key: &str) -> Option<&'a ChartEntry> {
    config.iter().find(|e| e.remote.as_deref() == Some(key))
}

/// [`releases`], with the errors of the declarations that cannot be rendered.
pub fn declared_releases(
    charts: &[PathBuf],
    manifests: &[(PathBuf, &Stream)],
    rendered: &[RenderedDeclaration],
    config: &[ChartEntry],
    repo_root: &Path,
) -> Declared {
    let index = ChartIndex::new(charts, repo_root);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    let flux_objects = manifests
        .iter()
        .flat_map(|(f, s)| s.documents.iter().map(move |d| (f, &d.root)))
        .chain(rendered.iter().map(|r| (&r.file, r.object)));
    for (file, object) in flux_objects {
        let is_release = object.get_str("kind") == Some("HelmRelease")
            && object
                .get_str("apiVersion")
                .is_some_and(|a| a.starts_with("helm.toolkit.fluxcd.io/"));
        let remote = remote_chart(object).filter(|_| is_release);
        if let Some((key, chart)) = remote.filter(|(key, _)| vendored(config, key).is_none()) {
            let name = object
                .get_path(&["metadata", "name"])
                .and_then(Node::text)
                .unwrap_or("?");
            let note = format!(
                "{}: HelmRelease {name}: its chart ({chart}) is not in this repository: not rendered (vendor it and map it in .gpulint.yaml: `charts: [{{path: <folder>, remote: {key}}}]`)",
                file.display()
            );
            // Each cluster that applies the release would say it again.
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    // The ConfigMaps of the plain manifests: `valuesFrom` sources of their HelmReleases.
    let plain_config_maps: Vec<(PathBuf, &Node)> = manifests
        .iter()
        .flat_map(|(f, s)| s.documents.iter().map(move |d| (f, &d.root)))
        .filter(|(_, o)| o.get_str("kind") == Some("ConfigMap"))
        .map(|(f, o)| (f.clone(), o))
        .collect();
    for r in rendered {
        let at = Declaring {
            file: &r.file,
            stream: r.stream,
        };
        let first = out.len();
        flux_release(
            &at,
            r.object,
            &index,
            config,
            repo_root,
            &r.config_maps,
            &mut out,
            &mut errors,
            &mut notes,
        );
        for release in &mut out[first..] {
            release.cluster = r.cluster.clone();
            release.rendered_from = Some(r.rendered_from);
        }
    }
    for (file, stream) in manifests {
        let at = Declaring { file, stream };
        for doc in &stream.documents {
            let root = &doc.root;
            let api = root.get_str("apiVersion").unwrap_or("");
            let kind = root.get_str("kind").unwrap_or("");
            let group = api.split('/').next().unwrap_or("");
            match (group, kind) {
                ("argoproj.io", "Application") => argo_releases(
                    &at,
                    root,
                    &index,
                    config,
                    repo_root,
                    &mut out,
                    &mut errors,
                    &mut notes,
                ),
                ("helm.toolkit.fluxcd.io", "HelmRelease") => flux_release(
                    &at,
                    root,
                    &index,
                    config,
                    repo_root,
                    &plain_config_maps,
                    &mut out,
                    &mut errors,
                    &mut notes,
                ),
                _ => {}
            }
        }
    }
    for entry in config.iter().filter(|e| e.remote.is_none()) {
        // One leaving the repository is an error of the config, at its line (`config.rs`); a
        // symlinked folder that leaves it is not rendered either.
        let Ok(Some(chart)) = index.resolve(&entry.path.to_string_lossy()) else {
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
            cluster: None,
            rendered_from: None,
        });
    }
    let mut declared: HashSet<PathBuf> = out.iter().map(|r| index.key(&r.chart)).collect();
    // A chart whose declaration failed is not rendered with its defaults instead.
    let failed: HashSet<&PathBuf> = errors.iter().map(|e| &e.file).collect();
    for (file, stream) in manifests.iter().filter(|(f, _)| failed.contains(f)) {
        for doc in &stream.documents {
            for path in declared_chart_paths(&doc.root) {
                if let Ok(Some(chart)) = index.resolve_declared(path, file) {
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
                cluster: None,
                rendered_from: None,
            });
        }
    }
    // Helm follows symlinks inside a chart folder: one that leaves the repository would have it
    // read (and gpulint show) a file outside. Such a chart is not rendered, whatever declares it.
    let mut escaping: HashMap<PathBuf, bool> = HashMap::new();
    for release in &out {
        escaping
            .entry(index.key(&release.chart))
            .or_insert_with(|| {
                let Some((link, refused)) = symlink_leaving(&release.chart, repo_root) else {
                    return false;
                };
                errors.push(DeclarationError {
                    file: link,
                    offset: 0,
                    line: 0,
                    column: 0,
                    message: format!("the chart is not rendered: {refused} (Helm would follow it)"),
                });
                true
            });
    }
    out.retain(|release| escaping.get(&index.key(&release.chart)) != Some(&true));
    Declared {
        releases: out,
        errors,
        notes,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_resolve_paths_lexically() {
        assert_eq!(normalize(Path::new("a/./b/../c/")), PathBuf::from("a/c"));
        assert_eq!(
            under(Path::new("/r"), Path::new("./charts/x")),
            PathBuf::from("/r/charts/x")
        );
    }
}
