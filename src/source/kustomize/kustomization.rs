//! The kustomization file, parsed strictly enough that a wrong type is an error pointing at the
//! field (never a panic or a silent skip), and keeping the nodes: synthesised values take the
//! span of the field that asked for them.

use std::path::{Path, PathBuf};

use super::{RenderError, RenderErrorKind, Sources};
use crate::source::yaml::{offset32, Node, ScalarKind, ScalarStyle, Span, Stream, Value};

/// A string field with the node it was written as.
#[derive(Clone, Debug)]
pub(crate) struct Str {
    pub text: String,
    pub node: Node,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Selector {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub label_selector: Option<String>,
    pub annotation_selector: Option<String>,
}

/// One entry of `patches`, `patchesStrategicMerge` or `patchesJson6902`.
#[derive(Clone, Debug)]
pub(crate) struct Patch {
    /// `path:` (or a `patchesStrategicMerge` string naming a file).
    pub path: Option<Str>,
    /// Inline body: the string node.
    pub inline: Option<Node>,
    pub target: Option<Selector>,
    pub allow_name_change: bool,
    pub allow_kind_change: bool,
    /// The whole entry, for errors.
    pub span: Span,
    /// `patchesJson6902` entries are JSON patches whatever their body looks like.
    pub json6902: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct LabelSet {
    /// key node, value node
    pub pairs: Vec<(Node, Node)>,
    pub include_selectors: bool,
    pub include_templates: bool,
    pub include_volume_claim_templates: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Image {
    pub name: String,
    pub new_name: Option<Str>,
    pub new_tag: Option<Str>,
    pub digest: Option<Str>,
    pub node: Node,
}

#[derive(Clone, Debug)]
pub(crate) struct Replica {
    pub name: String,
    pub count: Node,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Kustomization {
    #[allow(dead_code)] // components are applied the same way; kept for diagnostics
    pub is_component: bool,
    pub resources: Vec<Str>,
    pub components: Vec<Str>,
    pub patches: Vec<Patch>,
    pub patches_strategic_merge: Vec<Patch>,
    pub patches_json6902: Vec<Patch>,
    pub name_prefix: Option<Str>,
    pub name_suffix: Option<Str>,
    pub namespace: Option<Str>,
    pub common_labels: Vec<(Node, Node)>,
    pub labels: Vec<LabelSet>,
    pub common_annotations: Vec<(Node, Node)>,
    pub images: Vec<Image>,
    pub replicas: Vec<Replica>,
    pub replacements: Vec<Node>,
}

/// A kustomization feature the built-in renderer does not implement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub file: PathBuf,
    pub span: Span,
    /// The kustomization field (or `resources: <url>` for remote resources).
    pub feature: String,
}

/// Fields that change the output and that we do not implement.
const UNSUPPORTED_FIELDS: &[&str] = &[
    "configMapGenerator",
    "secretGenerator",
    "helmCharts",
    "helmChartInflationGenerator",
    "helmGlobals",
    "transformers",
    "generators",
    "validators",
    "vars",
    "openapi",
    "crds",
    "configurations",
    "sortOptions",
    "buildMetadata",
    "inventory",
];

/// Fields that do not change the output without the features above.
const IGNORED_FIELDS: &[&str] = &["apiVersion", "kind", "metadata", "generatorOptions"];

/// A path a kustomization names, as written, under one of its keys.
pub(crate) struct Reference<'n> {
    pub node: &'n Node,
    pub written: &'n str,
    /// A folder is allowed there (another kustomization: `resources`, `bases`, `components`,
    /// `transformers`...); otherwise it names a file.
    pub folder_ok: bool,
}

/// Every local or remote path the kustomization entry `key: value` names: resources, bases,
/// components, patches, generator files, replacements, CRDs, configurations, openapi and
/// plugin configs. Inline documents (strings with a line break) are not paths. The one list
/// of what a kustomization may read, used to check a tree before an external tool reads it
/// and to find the kustomizations that read a file without rendering them.
pub(crate) fn references<'n>(key: &str, value: &'n Node) -> Vec<Reference<'n>> {
    fn items(n: &Node) -> Vec<&Node> {
        match n.as_seq() {
            Some(items) => items.iter().collect(),
            None => vec![n],
        }
    }
    let mut out = Vec::new();
    let mut push = |node: &'n Node, written: &'n str, folder_ok: bool| {
        out.push(Reference {
            node,
            written,
            folder_ok,
        })
    };
    match key {
        "resources" | "bases" | "components" => {
            for item in items(value) {
                if let Some(t) = item.text() {
                    push(item, t, true);
                }
            }
        }
        "crds"
        | "configurations"
        | "patchesStrategicMerge"
        | "transformers"
        | "generators"
        | "validators" => {
            for item in items(value) {
                if let Some(t) = item.text().filter(|t| !t.contains('\n')) {
                    push(item, t, key != "crds" && key != "configurations");
                }
            }
        }
        "patches" | "patchesJson6902" | "replacements" => {
            for item in items(value) {
                if let Some(p) = item.get("path") {
                    if let Some(t) = p.text() {
                        push(p, t, false);
                    }
                }
            }
        }
        "openapi" => {
            if let Some(p) = value.get("path") {
                if let Some(t) = p.text() {
                    push(p, t, false);
                }
            }
        }
        "configMapGenerator" | "secretGenerator" => {
            for generator in items(value) {
                for field in ["files", "envs", "env"] {
                    for item in generator.get(field).map(items).unwrap_or_default() {
                        // `files` entries may be `key=path`.
                        if let Some(t) = item.text() {
                            push(item, t.split_once('=').map_or(t, |(_, p)| p), false);
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out
}

pub(crate) fn is_remote(s: &str) -> bool {
    let s = s.trim();
    s.contains("://")
        || s.contains("?ref=")
        || s.contains("?version=")
        || s.contains("?timeout=")
        || s.contains("?submodules=")
        || ["git::", "gh:", "ssh:", "http:", "https:", "file:"]
            .iter()
            .any(|scheme| s.starts_with(scheme))
        || s.starts_with("github.com")
        || s.starts_with("git@")
        || s.starts_with("gitlab.com")
        || s.starts_with("bitbucket.org")
}

/// The error for a remote resource: gpulint never fetches one (a pull request would choose the
/// host, or make `git`/`ssh` run), and never renders the kustomization without it.
pub(crate) fn remote_not_rendered(file: &Path, node: &Node, key: &str, url: &str) -> RenderError {
    RenderError::new(
        RenderErrorKind::Remote,
        file,
        Some(node.span),
        format!(
            "remote resource not rendered: `{key}: {url}` is not fetched (gpulint never reads the network); vendor it into the repository to lint it"
        ),
    )
}

/// The first remote entry of `resources`, `bases` or `components`, as an error.
pub(crate) fn first_remote(root: &Node, file: &Path) -> Option<RenderError> {
    for e in root.as_map().unwrap_or_default() {
        let Some(key) = e.key.text() else { continue };
        if !matches!(key, "resources" | "bases" | "components") {
            continue;
        }
        for item in e.value.as_seq().unwrap_or_default() {
            if let Some(url) = item.text().filter(|t| is_remote(t)) {
                return Some(remote_not_rendered(file, item, key, url));
            }
        }
    }
    None
}

/// The unsupported features of one kustomization document.
pub(crate) fn unsupported_in(root: &Node, file: &Path) -> Vec<Unsupported> {
    let mut out = Vec::new();
    for e in root.as_map().unwrap_or_default() {
        let Some(key) = e.key.text() else { continue };
        let empty = match &e.value.value {
            Value::Scalar(s) => s.kind == ScalarKind::Null,
            Value::Seq(v) => v.is_empty(),
            Value::Map(v) => v.is_empty(),
        };
        if UNSUPPORTED_FIELDS.contains(&key) && !empty {
            out.push(Unsupported {
                file: file.to_path_buf(),
                span: e.key.span,
                feature: key.to_string(),
            });
        }
        if matches!(key, "resources" | "bases" | "components") {
            for item in e.value.as_seq().unwrap_or_default() {
                if item.text().is_some_and(is_remote) {
                    out.push(Unsupported {
                        file: file.to_path_buf(),
                        span: item.span,
                        feature: format!("{key}: remote {}", item.text().unwrap_or_default()),
                    });
                }
            }
        }
        if key == "labels" {
            for set in e.value.as_seq().unwrap_or_default() {
                if let Some(f) = set.entry("fields") {
                    out.push(Unsupported {
                        file: file.to_path_buf(),
                        span: f.key.span,
                        feature: "labels.fields".to_string(),
                    });
                }
            }
        }
    }
    out
}

/// Every unsupported feature in the kustomizations reachable from `dir` (resources, bases and
/// components that are directories), without rendering.
pub fn unsupported_features(dir: &Path, sources: &dyn Sources) -> Vec<Unsupported> {
    let mut out = Vec::new();
    let mut todo = vec![super::normalize(dir)];
    let mut seen = std::collections::HashSet::new();
    while let Some(d) = todo.pop() {
        if !seen.insert(d.clone()) || seen.len() > 10_000 {
            continue;
        }
        let Some(file) = super::load::find_kustomization(&d, sources) else {
            continue;
        };
        let Ok(stream) = sources.load(&file) else {
            continue;
        };
        let Some(doc) = stream.documents.first() else {
            continue;
        };
        out.extend(unsupported_in(&doc.root, &file));
        for key in ["resources", "bases", "components"] {
            for item in last(&doc.root, key)
                .and_then(Node::as_seq)
                .unwrap_or_default()
            {
                if let Some(t) = item.text().filter(|t| !is_remote(t)) {
                    let p = super::normalize(&d.join(t));
                    if sources.is_dir(&p) {
                        todo.push(p);
                    }
                }
            }
        }
    }
    out
}

/// The value of the last entry with this key (kustomize keeps the last of duplicate keys).
fn last<'a>(root: &'a Node, key: &str) -> Option<&'a Node> {
    root.as_map()?
        .iter()
        .rev()
        .find(|e| e.key.text() == Some(key))
        .map(|e| &e.value)
}

struct P<'a> {
    file: &'a Path,
}

impl P<'_> {
    fn err(&self, node: &Node, msg: impl Into<String>) -> RenderError {
        RenderError::new(
            RenderErrorKind::Invalid,
            self.file,
            Some(node.span),
            format!("invalid Kustomization: {}", msg.into()),
        )
    }

    fn string(&self, node: &Node, what: &str) -> Result<Str, RenderError> {
        match &node.value {
            Value::Scalar(s) if s.kind != ScalarKind::Null => Ok(Str {
                text: s.text.clone(),
                node: node.clone(),
            }),
            _ => Err(self.err(node, format!("{what} must be a string"))),
        }
    }

    fn opt_string(&self, node: Option<&Node>, what: &str) -> Result<Option<Str>, RenderError> {
        match node {
            None => Ok(None),
            Some(n) if n.is_null() => Ok(None),
            Some(n) => self.string(n, what).map(Some),
        }
    }

    fn seq<'n>(&self, node: &'n Node, what: &str) -> Result<&'n [Node], RenderError> {
        match &node.value {
            Value::Seq(items) => Ok(items),
            Value::Scalar(s) if s.kind == ScalarKind::Null => Ok(&[]),
            _ => Err(self.err(node, format!("{what} must be a list"))),
        }
    }

    fn map<'n>(
        &self,
        node: &'n Node,
        what: &str,
    ) -> Result<&'n [crate::source::yaml::Entry], RenderError> {
        match &node.value {
            Value::Map(entries) => Ok(entries),
            Value::Scalar(s) if s.kind == ScalarKind::Null => Ok(&[]),
            _ => Err(self.err(node, format!("{what} must be a mapping"))),
        }
    }

    fn boolean(&self, node: Option<&Node>, what: &str) -> Result<bool, RenderError> {
        match node {
            None => Ok(false),
            Some(n) if n.is_null() => Ok(false),
            Some(n) => match n.as_scalar() {
                Some(s) if s.kind == ScalarKind::Bool => Ok(s.text.eq_ignore_ascii_case("true")),
                _ => Err(self.err(n, format!("{what} must be true or false"))),
            },
        }
    }

    fn string_map(&self, node: &Node, what: &str) -> Result<Vec<(Node, Node)>, RenderError> {
        let mut out: Vec<(Node, Node)> = Vec::new();
        for e in self.map(node, what)? {
            if e.key.as_scalar().is_none() || !matches!(e.value.value, Value::Scalar(_)) {
                return Err(self.err(&e.value, format!("{what} values must be strings")));
            }
            let k = e
                .key
                .as_scalar()
                .map(|s| s.text.clone())
                .unwrap_or_default();
            out.retain(|(old, _)| old.as_scalar().map(|s| s.text.as_str()) != Some(k.as_str()));
            out.push((e.key.clone(), e.value.clone()));
        }
        Ok(out)
    }

    fn selector(&self, node: &Node) -> Result<Selector, RenderError> {
        let entries = self.map(node, "target")?;
        let mut s = Selector::default();
        for e in entries {
            let key = e.key.text().unwrap_or_default();
            let v = self
                .opt_string(Some(&e.value), &format!("target.{key}"))?
                .map(|s| s.text);
            match key {
                "group" => s.group = v,
                "version" => s.version = v,
                "kind" => s.kind = v,
                "name" => s.name = v,
                "namespace" => s.namespace = v,
                "labelSelector" => s.label_selector = v,
                "annotationSelector" => s.annotation_selector = v,
                other => {
                    return Err(self.err(&e.key, format!("unknown field \"{other}\" in target")))
                }
            }
        }
        Ok(s)
    }

    fn patch(&self, node: &Node, json6902: bool) -> Result<Patch, RenderError> {
        let entries = self.map(node, "a patch")?;
        let mut p = Patch {
            path: None,
            inline: None,
            target: None,
            allow_name_change: false,
            allow_kind_change: false,
            span: node.span,
            json6902,
        };
        for e in entries {
            match e.key.text().unwrap_or_default() {
                "path" => p.path = self.opt_string(Some(&e.value), "patch path")?,
                "patch" => {
                    if !e.value.is_null() {
                        self.string(&e.value, "patch")?;
                        p.inline = Some(e.value.clone());
                    }
                }
                "target" => {
                    if !e.value.is_null() {
                        p.target = Some(self.selector(&e.value)?)
                    }
                }
                "options" => {
                    for o in self.map(&e.value, "patch options")? {
                        match o.key.text().unwrap_or_default() {
                            "allowNameChange" => {
                                p.allow_name_change =
                                    self.boolean(Some(&o.value), "allowNameChange")?
                            }
                            "allowKindChange" => {
                                p.allow_kind_change =
                                    self.boolean(Some(&o.value), "allowKindChange")?
                            }
                            other => {
                                return Err(
                                    self.err(&o.key, format!("unknown patch option \"{other}\""))
                                )
                            }
                        }
                    }
                }
                other => {
                    return Err(self.err(&e.key, format!("unknown field \"{other}\" in patch")))
                }
            }
        }
        match (&p.path, &p.inline) {
            (None, None) => Err(self.err(node, "a patch needs `path` or `patch`")),
            (Some(_), Some(_)) => Err(self.err(node, "a patch has both `path` and `patch`")),
            _ => Ok(p),
        }
    }
}

/// Parses a kustomization document. `Unsupported` features are reported first.
pub(crate) fn parse(stream: &Stream, file: &Path) -> Result<Kustomization, RenderError> {
    let p = P { file };
    if let Some(e) = &stream.error {
        let start = e.offset;
        return Err(RenderError::new(
            RenderErrorKind::Parse,
            file,
            Some(Span {
                start: offset32(start),
                end: offset32(start),
                source: stream
                    .documents
                    .first()
                    .map(|d| d.root.span.source)
                    .unwrap_or_default(),
            }),
            format!("invalid YAML: {}", e.message),
        ));
    }
    let Some(doc) = stream.documents.first() else {
        // An empty kustomization builds nothing.
        return Ok(Kustomization::default());
    };
    if stream.documents.len() > 1 {
        return Err(p.err(
            &stream.documents[1].root,
            "a kustomization file holds one document",
        ));
    }
    let root = &doc.root;
    let entries = p.map(root, "the kustomization")?;
    if let Some(e) = first_remote(root, file) {
        return Err(e);
    }
    if let Some(u) = unsupported_in(root, file).into_iter().next() {
        return Err(RenderError::new(
            RenderErrorKind::Unsupported,
            file,
            Some(u.span),
            format!(
                "`{}` is not supported by the built-in kustomize renderer",
                u.feature
            ),
        ));
    }
    let mut k = Kustomization {
        is_component: last(root, "kind").and_then(Node::text) == Some("Component"),
        ..Kustomization::default()
    };
    // Deprecated `bases` are resources listed after `resources` (kustomize's fix-up).
    let mut bases = Vec::new();
    // Duplicate keys: the last wins (as in kustomize), so only handle each key's last entry.
    for (i, e) in entries.iter().enumerate() {
        let Some(key) = e.key.text() else {
            return Err(p.err(&e.key, "keys must be strings"));
        };
        if entries[i + 1..].iter().any(|l| l.key.text() == Some(key)) {
            continue;
        }
        let v = &e.value;
        match key {
            "resources" => {
                for item in p.seq(v, key)? {
                    k.resources.push(p.string(item, key)?);
                }
            }
            "bases" => {
                for item in p.seq(v, key)? {
                    bases.push(p.string(item, key)?);
                }
            }
            "components" => {
                for item in p.seq(v, key)? {
                    k.components.push(p.string(item, key)?);
                }
            }
            "patches" => {
                for item in p.seq(v, key)? {
                    k.patches.push(p.patch(item, false)?);
                }
            }
            "patchesStrategicMerge" => {
                for item in p.seq(v, key)? {
                    let s = p.string(item, "patchesStrategicMerge entries")?;
                    // A string with a line break, or that reads as a mapping, is an inline patch.
                    let inline = s.text.contains('\n') || s.text.trim_start().starts_with('{');
                    k.patches_strategic_merge.push(Patch {
                        path: (!inline).then(|| s.clone()),
                        inline: inline.then(|| item.clone()),
                        target: None,
                        allow_name_change: false,
                        allow_kind_change: false,
                        span: item.span,
                        json6902: false,
                    });
                }
            }
            "patchesJson6902" => {
                for item in p.seq(v, key)? {
                    let patch = p.patch(item, true)?;
                    if patch.target.is_none() {
                        return Err(p.err(item, "patchesJson6902 entries need a target"));
                    }
                    k.patches_json6902.push(patch);
                }
            }
            "namePrefix" => k.name_prefix = p.opt_string(Some(v), key)?,
            "nameSuffix" => k.name_suffix = p.opt_string(Some(v), key)?,
            "namespace" => k.namespace = p.opt_string(Some(v), key)?,
            "commonLabels" => k.common_labels = p.string_map(v, key)?,
            "commonAnnotations" => k.common_annotations = p.string_map(v, key)?,
            "labels" => {
                for item in p.seq(v, key)? {
                    let pairs = match item.get("pairs") {
                        Some(n) => p.string_map(n, "labels.pairs")?,
                        None => Vec::new(),
                    };
                    p.map(item, "a labels entry")?;
                    k.labels.push(LabelSet {
                        pairs,
                        include_selectors: p
                            .boolean(item.get("includeSelectors"), "includeSelectors")?,
                        include_templates: p
                            .boolean(item.get("includeTemplates"), "includeTemplates")?,
                        include_volume_claim_templates: p.boolean(
                            item.get("includeVolumeClaimTemplates"),
                            "includeVolumeClaimTemplates",
                        )?,
                    });
                }
            }
            "images" => {
                for item in p.seq(v, key)? {
                    p.map(item, "an images entry")?;
                    let name = match item.get("name") {
                        Some(n) => p.string(n, "images.name")?.text,
                        None => return Err(p.err(item, "an images entry needs a name")),
                    };
                    k.images.push(Image {
                        name,
                        new_name: p.opt_string(item.get("newName"), "images.newName")?,
                        new_tag: p.opt_string(item.get("newTag"), "images.newTag")?,
                        digest: p.opt_string(item.get("digest"), "images.digest")?,
                        node: item.clone(),
                    });
                }
            }
            "replicas" => {
                for item in p.seq(v, key)? {
                    p.map(item, "a replicas entry")?;
                    let name = match item.get("name") {
                        Some(n) => p.string(n, "replicas.name")?.text,
                        None => return Err(p.err(item, "a replicas entry needs a name")),
                    };
                    let count = match item.get("count") {
                        Some(n) if n.as_scalar().is_some_and(|s| s.kind == ScalarKind::Int) => {
                            n.clone()
                        }
                        _ => return Err(p.err(item, "a replicas entry needs an integer count")),
                    };
                    k.replicas.push(Replica { name, count });
                }
            }
            "replacements" => {
                for item in p.seq(v, key)? {
                    p.map(item, "a replacements entry")?;
                    k.replacements.push(item.clone());
                }
            }
            _ if IGNORED_FIELDS.contains(&key) => {}
            other => {
                return Err(p.err(&e.key, format!("json: unknown field \"{other}\"")));
            }
        }
    }
    k.resources.extend(bases);
    Ok(k)
}

/// Parses an inline patch (a string in the kustomization). When the string is a literal block
/// scalar, the bytes of its content lines are the bytes of the file (shifted by the block
/// indentation), so the parsed nodes get spans in the kustomization file itself: a fix can edit a
/// value inside `patch: |` in place. Otherwise every node points at the string's span.
pub(crate) fn parse_inline(node: &Node, file_text: &str) -> Stream {
    let text = node
        .as_scalar()
        .map(|s| s.text.as_str())
        .unwrap_or_default();
    let mut stream = Stream::parse(text);
    let source = node.span.source;
    let mapped = match node.as_scalar().map(|s| s.style) {
        Some(ScalarStyle::Literal) => block_mapping(node, text, file_text),
        _ => None,
    };
    let whole = node.span;
    for doc in &mut stream.documents {
        let ok = mapped
            .as_ref()
            .is_some_and(|m| verify(&doc.root, text, file_text, m));
        respan(&mut doc.root, &|s: Span| match (&mapped, ok) {
            (Some(m), true) => Span {
                start: offset32(m.map(s.start())),
                end: offset32(m.map(s.end())),
                source,
            },
            _ => whole,
        });
    }
    stream
}

/// Maps offsets in a literal block scalar's content to offsets in the file.
struct BlockMap {
    /// For each content line: (offset of the line in the content, offset in the file).
    lines: Vec<(usize, usize)>,
}

impl BlockMap {
    fn map(&self, offset: usize) -> usize {
        let i = self.lines.partition_point(|&(c, _)| c <= offset).max(1) - 1;
        let (c, f) = self.lines.get(i).copied().unwrap_or((0, 0));
        f + (offset - c)
    }
}

fn block_mapping(node: &Node, text: &str, file_text: &str) -> Option<BlockMap> {
    let start = node.span.start();
    let at = file_text.get(start..)?;
    // The content starts after the header line (`patch: |-`) when the span starts at the
    // indicator, else at the start of the line the span starts on.
    let header_end = if at.starts_with(['|', '>']) {
        start + at.find('\n')? + 1
    } else {
        file_text.get(..start)?.rfind('\n').map_or(0, |i| i + 1)
    };
    let body = file_text.get(header_end..node.span.end().max(header_end))?;
    // The block indentation: the first non-blank content line's leading spaces.
    let indent = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())?;
    let mut lines = Vec::new();
    let mut content_off = 0;
    let mut file_off = header_end;
    for line in text.split_inclusive('\n') {
        let file_line_end = file_text
            .get(file_off..)?
            .find('\n')
            .map_or(file_text.len(), |i| file_off + i + 1);
        let file_line = file_text.get(file_off..file_line_end)?;
        let skip = indent.min(file_line.len() - file_line.trim_start_matches(' ').len());
        lines.push((content_off, file_off + skip));
        content_off += line.len();
        file_off = file_line_end;
    }
    Some(BlockMap { lines })
}

/// Every scalar's mapped bytes must read as in the string, else the mapping is not trusted.
fn verify(node: &Node, text: &str, file_text: &str, m: &BlockMap) -> bool {
    let here = || {
        let (s, e) = (node.span.start(), node.span.end());
        let (fs, fe) = (m.map(s), m.map(e));
        text.get(s..e).is_some() && text.get(s..e) == file_text.get(fs..fe)
    };
    match &node.value {
        Value::Scalar(_) => here(),
        Value::Seq(items) => items.iter().all(|n| verify(n, text, file_text, m)),
        Value::Map(entries) => entries
            .iter()
            .all(|e| verify(&e.key, text, file_text, m) && verify(&e.value, text, file_text, m)),
    }
}

/// Rewrites every span under `node`.
pub(crate) fn respan(node: &mut Node, f: &dyn Fn(Span) -> Span) {
    node.span = f(node.span);
    match &mut node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| respan(n, f)),
        Value::Map(entries) => entries.iter_mut().for_each(|e| {
            respan(&mut e.key, f);
            respan(&mut e.value, f);
        }),
    }
}
