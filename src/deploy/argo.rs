//! Argo CD: the folders an `Application` or an `ApplicationSet` sends to a cluster.
//!
//! An Application's `spec.source.path` (and each of `spec.sources[].path`) that is not a Helm
//! chart is applied to `destination.name` (else `destination.server`; the API server's own
//! address is Argo CD's `in-cluster`), with `destination.namespace` for the objects that name
//! none. An ApplicationSet is expanded into its Applications: the `list` generator, the `git`
//! generator's `directories` and `files` (read from this repository), and `matrix` of two of
//! them; each parameter set fills the template's `{{…}}` (fasttemplate's `{{path.basename}}`,
//! or Go templates' `{{.path.basename}}` with `goTemplate: true`). Generators that need the
//! cluster (`cluster`, `clusterDecisionResource`), a forge (`pullRequest`, `scmProvider`) or a
//! plugin are named in a note: nothing in the repository says what they produce.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::source::helm::argo_destination as destination_cluster;
use crate::source::yaml::{Node, Stream, Value};

/// One Application's source folder and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ArgoApp {
    /// The path as the Application writes it (relative to the repository's root).
    pub path: String,
    pub cluster: Option<String>,
    /// `destination.namespace`: the namespace of the objects that name none.
    pub namespace: Option<String>,
    /// For people: `Argo CD Application ml/llm` or `ApplicationSet ml/apps (prod)`.
    pub by: String,
}

fn is_kind(object: &Node, kind: &str) -> bool {
    object.get_str("kind") == Some(kind)
        && object
            .get_str("apiVersion")
            .is_some_and(|a| a.starts_with("argoproj.io/"))
}

fn name_of(object: &Node) -> String {
    let ns = object
        .get_path(&["metadata", "namespace"])
        .and_then(Node::text)
        .unwrap_or("argocd");
    let name = object
        .get_path(&["metadata", "name"])
        .and_then(Node::text)
        .unwrap_or("?");
    format!("{ns}/{name}")
}

/// The Applications `object` declares (none for other kinds). `roots` are the folders the git
/// generator may look in, in order: the repository's root, then the folders above the
/// declaring file (a GitOps tree kept in a folder of the repository); the first where the
/// generator finds something is taken.
pub(super) fn applications(
    object: &Node,
    roots: &[PathBuf],
    notes: &mut Vec<String>,
) -> Vec<ArgoApp> {
    if is_kind(object, "Application") {
        let by = format!("Argo CD Application {}", name_of(object));
        return object
            .get("spec")
            .map(|spec| of_spec(spec, &by))
            .unwrap_or_default();
    }
    if !is_kind(object, "ApplicationSet") {
        return Vec::new();
    }
    let set = name_of(object);
    let Some(spec) = object.get("spec") else {
        return Vec::new();
    };
    let go = spec.get("goTemplate").and_then(Node::text) == Some("true");
    let Some(template) = spec.get("template") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for generator in spec
        .get("generators")
        .and_then(Node::as_seq)
        .unwrap_or_default()
    {
        let Some(mut params) = generate(generator, roots, &set, notes) else {
            continue;
        };
        if out.len() + params.len() > MAX_APPLICATIONS {
            notes.push(format!(
                "Argo CD ApplicationSet {set}: more than {MAX_APPLICATIONS} Applications; the rest are not followed"
            ));
            params.truncate(MAX_APPLICATIONS.saturating_sub(out.len()));
        }
        for p in params {
            let filled = fill(template, &p, go);
            let label = p
                .get("cluster")
                .or_else(|| p.get("name"))
                .or_else(|| p.get("path"))
                .cloned()
                .unwrap_or_default();
            let by = format!("Argo CD ApplicationSet {set} ({label})");
            if let Some(s) = filled.get("spec") {
                out.extend(of_spec(s, &by));
            }
        }
    }
    out
}

/// The folders of an Application's spec (`source`, `sources`) that are not charts of a Helm
/// repository.
fn of_spec(spec: &Node, by: &str) -> Vec<ArgoApp> {
    let cluster = destination_cluster(spec);
    let namespace = spec
        .get_path(&["destination", "namespace"])
        .and_then(Node::text)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let mut sources: Vec<&Node> = spec.get("source").into_iter().collect();
    sources.extend(
        spec.get("sources")
            .and_then(Node::as_seq)
            .unwrap_or_default(),
    );
    sources
        .into_iter()
        .filter(|s| s.get("chart").is_none())
        .filter_map(|s| s.get_str("path"))
        .map(|path| ArgoApp {
            path: path.to_string(),
            cluster: cluster.clone(),
            namespace: namespace.clone(),
            by: by.to_string(),
        })
        .collect()
}

type Params = BTreeMap<String, String>;

/// The most Applications one ApplicationSet is expanded into: a matrix of two long lists is a
/// product, and a repository file must not make a run build millions of them.
const MAX_APPLICATIONS: usize = 10_000;

/// The parameter sets of one generator; `None` (with a note) for one gpulint cannot expand.
fn generate(
    generator: &Node,
    roots: &[PathBuf],
    set: &str,
    notes: &mut Vec<String>,
) -> Option<Vec<Params>> {
    let entries = generator.as_map()?;
    let (kind, body) = entries
        .iter()
        .find_map(|e| Some((e.key.text()?, &e.value)))?;
    match kind {
        "list" => Some(
            body.get("elements")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .map(|element| {
                    let mut p = Params::new();
                    flatten("", element, &mut p);
                    p
                })
                .collect(),
        ),
        "git" => Some(
            roots
                .iter()
                .map(|root| git(body, root))
                .find(|found| !found.is_empty())
                .unwrap_or_default(),
        ),
        "matrix" => {
            let children: Vec<&Node> = body
                .get("generators")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .collect();
            let [a, b] = children.as_slice() else {
                notes.push(format!(
                    "Argo CD ApplicationSet {set}: a matrix generator takes two generators; not expanded"
                ));
                return None;
            };
            let left = generate(a, roots, set, notes)?;
            let right = generate(b, roots, set, notes)?;
            if left.len().saturating_mul(right.len()) > MAX_APPLICATIONS {
                notes.push(format!(
                    "Argo CD ApplicationSet {set}: its matrix makes {} × {} Applications, more than {MAX_APPLICATIONS}; not expanded",
                    left.len(),
                    right.len()
                ));
                return None;
            }
            Some(
                left.iter()
                    .flat_map(|l| {
                        right.iter().map(move |r| {
                            let mut p = l.clone();
                            p.extend(r.clone());
                            p
                        })
                    })
                    .collect(),
            )
        }
        other => {
            notes.push(format!(
                "Argo CD ApplicationSet {set}: the {other} generator needs what is outside the repository (cluster secrets, a forge, a plugin); its Applications are not followed"
            ));
            None
        }
    }
}

/// A list element's (or a config file's) values as parameters: nested keys joined with dots.
fn flatten(prefix: &str, node: &Node, out: &mut Params) {
    match &node.value {
        Value::Map(entries) => {
            for e in entries {
                let Some(k) = e.key.text() else { continue };
                let key = if prefix.is_empty() {
                    k.to_string()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, &e.value, out);
            }
        }
        Value::Scalar(s) if !prefix.is_empty() => {
            out.insert(prefix.to_string(), s.text.clone());
        }
        _ => {}
    }
}

/// The git generator over this repository: `directories` (globs of folders, `exclude: true`
/// ones taken out) and `files` (globs of YAML or JSON files, whose values become parameters).
fn git(body: &Node, root: &Path) -> Vec<Params> {
    let mut out = Vec::new();
    let globs = |key: &str, exclude: bool| -> Vec<globset::GlobMatcher> {
        body.get(key)
            .and_then(Node::as_seq)
            .unwrap_or_default()
            .iter()
            .filter(|d| (d.get("exclude").and_then(Node::text) == Some("true")) == exclude)
            .filter_map(|d| d.get_str("path"))
            .filter_map(|p| globset::Glob::new(p.trim_start_matches("./")).ok())
            .map(|g| g.compile_matcher())
            .collect()
    };
    let (include, exclude) = (globs("directories", false), globs("directories", true));
    let files = globs("files", false);
    let entries = walk(root);
    for (rel, is_dir) in &entries {
        let text = rel.to_string_lossy();
        if *is_dir
            && include.iter().any(|g| g.is_match(&*text))
            && !exclude.iter().any(|g| g.is_match(&*text))
        {
            out.push(path_params(rel));
        }
        if !*is_dir && files.iter().any(|g| g.is_match(&*text)) {
            let Ok(content) = crate::source::repo::read_repo_text(&root.join(rel)) else {
                continue;
            };
            let stream = Stream::parse(&content);
            for doc in &stream.documents {
                let mut p = rel.parent().map(path_params).unwrap_or_default();
                flatten("", &doc.root, &mut p);
                out.push(p);
            }
        }
    }
    out
}

/// The path parameters of a folder: `path`, `path.basename`, `path.basenameNormalized` and
/// `path[N]` (Go templates: `.path.path`, `.path.basename`, …).
fn path_params(rel: &Path) -> Params {
    let mut p = Params::new();
    let text = rel.to_string_lossy().to_string();
    let base = rel
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let normalized: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    for (i, seg) in rel.iter().enumerate() {
        p.insert(format!("path[{i}]"), seg.to_string_lossy().to_string());
    }
    p.insert("path".into(), text.clone());
    p.insert("path.path".into(), text);
    p.insert("path.basename".into(), base);
    p.insert("path.basenameNormalized".into(), normalized);
    p
}

/// Every folder and file below `root` (relative), not following links, `.git` skipped, at
/// most a few levels deep and a bounded number of entries: the generator's globs name
/// folders of a GitOps tree, not the whole of a monorepo.
fn walk(root: &Path) -> Vec<(PathBuf, bool)> {
    const MAX_DEPTH: usize = 6;
    const MAX_ENTRIES: usize = 20_000;
    let mut out = Vec::new();
    let mut stack = vec![(PathBuf::new(), 0usize)];
    while let Some((rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            if out.len() >= MAX_ENTRIES {
                return out;
            }
            let name = e.file_name();
            if name == ".git" {
                continue;
            }
            let Ok(t) = e.file_type() else { continue };
            let child = rel.join(&name);
            if t.is_dir() {
                out.push((child.clone(), true));
                if depth + 1 < MAX_DEPTH {
                    stack.push((child, depth + 1));
                }
            } else if t.is_file() {
                out.push((child, false));
            }
        }
    }
    out.sort();
    out
}

/// The template with every `{{ … }}` in its strings filled from `params`; an expression with
/// no parameter is left as written (the path then names no folder, and is not followed).
fn fill(template: &Node, params: &Params, go: bool) -> Node {
    let mut node = template.clone();
    fill_node(&mut node, params, go);
    node
}

fn fill_node(node: &mut Node, params: &Params, go: bool) {
    match &mut node.value {
        Value::Scalar(s) => {
            if s.text.contains("{{") {
                s.text = fill_text(&s.text, params, go);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|n| fill_node(n, params, go)),
        Value::Map(entries) => entries
            .iter_mut()
            .for_each(|e| fill_node(&mut e.value, params, go)),
    }
}

fn fill_text(text: &str, params: &Params, go: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push_str(&rest[open..]);
            return out;
        };
        let expr = after[..close].trim();
        let key = if go {
            expr.strip_prefix('.').unwrap_or(expr)
        } else {
            expr
        };
        match params.get(key) {
            Some(v) => out.push_str(v),
            None => out.push_str(&rest[open..open + 2 + close + 2]),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(text: &str) -> Node {
        Stream::parse(text).documents[0].root.clone()
    }

    #[test]
    fn an_application_names_its_cluster_and_folders() {
        let app = object(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: llm, namespace: argocd}\nspec:\n  source: {path: apps/llm}\n  sources:\n  - {chart: vllm, repoURL: https://charts.example}\n  destination: {server: 'https://kubernetes.default.svc', namespace: ml}\n",
        );
        let apps = applications(&app, &[], &mut Vec::new());
        assert_eq!(
            apps,
            [ArgoApp {
                path: "apps/llm".into(),
                cluster: Some("in-cluster".into()),
                namespace: Some("ml".into()),
                by: "Argo CD Application argocd/llm".into(),
            }]
        );
    }

    #[test]
    fn an_application_set_is_expanded() {
        let root = tempfile::tempdir().unwrap();
        for d in ["apps/llm", "apps/rerank", "apps/experimental"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let set = object(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: apps}\nspec:\n  goTemplate: true\n  generators:\n  - matrix:\n      generators:\n      - list:\n          elements:\n          - {cluster: prod}\n          - {cluster: staging}\n      - git:\n          repoURL: https://git.example/fleet\n          directories:\n          - path: apps/*\n          - {path: apps/experimental, exclude: true}\n  - clusters: {}\n  template:\n    metadata: {name: '{{.cluster}}-{{.path.basename}}'}\n    spec:\n      source: {path: '{{.path.path}}'}\n      destination: {name: '{{.cluster}}', namespace: '{{.path.basename}}'}\n",
        );
        let mut notes = Vec::new();
        let apps = applications(&set, &[root.path().to_path_buf()], &mut notes);
        let got: Vec<(String, String, String)> = apps
            .iter()
            .map(|a| {
                (
                    a.cluster.clone().unwrap_or_default(),
                    a.path.clone(),
                    a.namespace.clone().unwrap_or_default(),
                )
            })
            .collect();
        let t = |c: &str, p: &str, n: &str| (c.to_string(), p.to_string(), n.to_string());
        assert_eq!(
            got,
            [
                t("prod", "apps/llm", "llm"),
                t("prod", "apps/rerank", "rerank"),
                t("staging", "apps/llm", "llm"),
                t("staging", "apps/rerank", "rerank"),
            ]
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("clusters generator"), "{notes:?}");
    }

    #[test]
    fn a_matrix_too_large_is_not_expanded() {
        let list = |n: usize| {
            let items: Vec<String> = (0..n).map(|i| format!("          - {{c{i}: x}}")).collect();
            format!("      - list:\n          elements:\n{}\n", items.join("\n"))
        };
        let text = format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {{name: big}}\nspec:\n  generators:\n  - matrix:\n      generators:\n{}{}  template:\n    spec:\n      source: {{path: apps}}\n      destination: {{name: x}}\n",
            list(200),
            list(200)
        );
        let mut notes = Vec::new();
        let apps = applications(&object(&text), &[], &mut notes);
        assert!(apps.is_empty());
        assert!(notes.iter().any(|n| n.contains("200 × 200")), "{notes:?}");
    }

    #[test]
    fn any_template_text_is_handled() {
        let alphabet = ['{', '}', '.', 'a', ' ', 'é'];
        let params: Params = [("a".to_string(), "x".to_string())].into();
        let mut stack = vec![String::new()];
        while let Some(text) = stack.pop() {
            for go in [false, true] {
                let out = fill_text(&text, &params, go);
                if !text.contains("{{") {
                    assert_eq!(out, text);
                }
            }
            if text.chars().count() < 6 {
                for c in alphabet {
                    stack.push(format!("{text}{c}"));
                }
            }
        }
        assert_eq!(fill_text("{{a}}-{{ .a }}", &params, true), "x-x");
        assert_eq!(fill_text("{{a}}-{{b}}", &params, false), "x-{{b}}");
    }

    #[test]
    fn fasttemplate_and_files() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("clusters/prod")).unwrap();
        std::fs::write(
            root.path().join("clusters/prod/config.yaml"),
            "cluster:\n  name: prod\n  app: apps/llm\n",
        )
        .unwrap();
        let set = object(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: by-file}\nspec:\n  generators:\n  - git:\n      files:\n      - path: clusters/*/config.yaml\n  template:\n    spec:\n      source: {path: '{{cluster.app}}'}\n      destination: {name: '{{ cluster.name }}'}\n",
        );
        let apps = applications(&set, &[root.path().to_path_buf()], &mut Vec::new());
        assert_eq!(apps.len(), 1);
        assert_eq!(apps[0].path, "apps/llm");
        assert_eq!(apps[0].cluster.as_deref(), Some("prod"));
    }
}
