//! Patches of an overlay, as text: what `--fix` adds to a Kustomize overlay when the field it
//! changes is written by a base other overlays share. A strategic-merge patch where it can say
//! the change; a JSON 6902 patch (`test` then `replace` at the exact path) where it cannot: in a
//! custom resource kustomize merges no list (a strategic-merge patch of RayService's
//! `workerGroupSpecs` or JobSet's `replicatedJobs` replaces the whole list), and a list element
//! without a `name` has no merge key. Pure functions of the rendered object and the
//! kustomization; `kustomize.rs` decides when to use them and verifies the result by rendering
//! the overlay again.

use crate::edit::{apply, column, line_end, newline, Edit, FieldChange};
use crate::source::document::Segment;
use crate::source::kustomize::to_yaml;
use crate::source::yaml::{Entry, Node, ScalarKind, Stream, Value};

use super::error::FixError;

pub(super) const PATCH_HEADER: &str =
    "# Added by `gpulint --fix` for this overlay only: the base it patches is shared\n\
                            # with other overlays.\n";

fn map_node(entries: Vec<(String, Node)>) -> Node {
    Node {
        value: Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| Entry {
                    key: Node::scalar(&k, ScalarKind::Str),
                    value: v,
                })
                .collect(),
        ),
        ..Node::default()
    }
}

/// Sets `path` (on the rendered object `object`) to `value` in the patch tree `patch`, naming
/// list elements by their merge key (`name`) as strategic merge does.
fn set_in_patch(
    patch: &mut Node,
    object: &Node,
    path: &[Segment],
    value: &str,
    kind: ScalarKind,
) -> Result<(), FixError> {
    let Some((first, rest)) = path.split_first() else {
        *patch = Node::scalar(value, kind);
        return Ok(());
    };
    match first {
        Segment::Key(key) => {
            if !matches!(patch.value, Value::Map(_)) {
                *patch = map_node(Vec::new());
            }
            let next_object = object.get(key).cloned().unwrap_or_default();
            let Value::Map(entries) = &mut patch.value else {
                return Err(FixError::Inconsistent("patch shape"));
            };
            let pos = match entries
                .iter()
                .position(|e| e.key.text() == Some(key.as_str()))
            {
                Some(p) => p,
                None => {
                    entries.push(Entry {
                        key: Node::scalar(key, ScalarKind::Str),
                        value: Node::default(),
                    });
                    entries.len() - 1
                }
            };
            set_in_patch(&mut entries[pos].value, &next_object, rest, value, kind)
        }
        Segment::Index(i) => {
            let element = object
                .as_seq()
                .and_then(|items| items.get(*i))
                .ok_or(FixError::Inconsistent("list element not found"))?;
            let name = element
                .get_str("name")
                .ok_or(FixError::ListElementWithoutName)?;
            if !matches!(patch.value, Value::Seq(_)) {
                patch.value = Value::Seq(Vec::new());
            }
            let Value::Seq(items) = &mut patch.value else {
                return Err(FixError::Inconsistent("patch shape"));
            };
            let pos = match items.iter().position(|n| n.get_str("name") == Some(name)) {
                Some(p) => p,
                None => {
                    items.push(map_node(vec![(
                        "name".into(),
                        Node::scalar(name, ScalarKind::Str),
                    )]));
                    items.len() - 1
                }
            };
            set_in_patch(&mut items[pos], element, rest, value, kind)
        }
    }
}

/// The kind and the name a patch of `object` addresses: the name before the overlay's own
/// prefix and suffix (kustomize matches patches on that name).
pub(super) fn patch_names(
    object: &Node,
    kustomization: &Node,
) -> Result<(String, String), FixError> {
    let kind = object
        .get_str("kind")
        .ok_or(FixError::ObjectWithout("kind"))?;
    let metadata = object
        .get("metadata")
        .ok_or(FixError::ObjectWithout("metadata"))?;
    let mut name = metadata
        .get_str("name")
        .ok_or(FixError::ObjectWithout("a name"))?;
    if let Some(prefix) = kustomization.get_str("namePrefix") {
        name = name.strip_prefix(prefix).unwrap_or(name);
    }
    if let Some(suffix) = kustomization.get_str("nameSuffix") {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    Ok((kind.to_string(), name.to_string()))
}

/// An empty strategic-merge patch of `object`: its apiVersion, kind and metadata.
pub(super) fn strategic_patch(object: &Node, kustomization: &Node) -> Result<Node, FixError> {
    let api_version = object
        .get_str("apiVersion")
        .ok_or(FixError::ObjectWithout("apiVersion"))?;
    let (kind, name) = patch_names(object, kustomization)?;
    let mut meta = vec![("name".to_string(), Node::scalar(&name, ScalarKind::Str))];
    let namespace = object.get("metadata").and_then(|m| m.get_str("namespace"));
    if let Some(ns) = namespace {
        if kustomization.get("namespace").is_none() {
            meta.push(("namespace".into(), Node::scalar(ns, ScalarKind::Str)));
        }
    }
    Ok(map_node(vec![
        (
            "apiVersion".into(),
            Node::scalar(api_version, ScalarKind::Str),
        ),
        ("kind".into(), Node::scalar(&kind, ScalarKind::Str)),
        ("metadata".into(), map_node(meta)),
    ]))
}

/// Writes one change into a strategic-merge patch.
pub(super) fn set_change(
    patch: &mut Node,
    object: &Node,
    change: &FieldChange,
) -> Result<(), FixError> {
    let FieldChange::Set { path, value } = change else {
        return Err(FixError::OnlyValueChanges);
    };
    // Written like the value it replaces (`cpu: "8"` stays quoted); a new number is plain.
    let existing = path.iter().try_fold(object, |node, segment| match segment {
        Segment::Key(k) => node.get(k),
        Segment::Index(i) => node.as_seq()?.get(*i),
    });
    let kind = match existing.and_then(Node::as_scalar) {
        Some(s) if s.kind == ScalarKind::Int || s.kind == ScalarKind::Str => s.kind,
        _ if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => ScalarKind::Int,
        _ => ScalarKind::Str,
    };
    set_in_patch(patch, object, path, value, kind)
}

/// Adds `changes` to a `gpulint-*.yaml` patch an earlier fix wrote (one document addressing
/// `kind`/`name`), keeping its leading comment.
pub(super) fn extend_patch(
    text: &str,
    object: &Node,
    changes: &[&FieldChange],
    kind: &str,
    name: &str,
) -> Result<String, FixError> {
    let stream = Stream::parse(text);
    let [doc] = stream.documents.as_slice() else {
        return Err(FixError::PatchNotOneDocument);
    };
    let mut patch = doc.root.clone();
    let addressed = patch.get_str("kind") == Some(kind)
        && patch.get("metadata").and_then(|m| m.get_str("name")) == Some(name);
    if stream.error.is_some() || !addressed {
        return Err(FixError::PatchChangedByHand);
    }
    for change in changes {
        set_change(&mut patch, object, change)?;
    }
    let header: String = text
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('#'))
        .collect();
    Ok(format!("{header}{}", to_yaml(std::slice::from_ref(&patch))))
}

/// A `patches:` entry the fix adds: the patch file, and for a JSON 6902 patch the `target:` it
/// applies to (field, value pairs in order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PatchEntry {
    pub file: String,
    pub target: Vec<(String, String)>,
}

impl PatchEntry {
    pub(super) fn strategic(file: String) -> PatchEntry {
        PatchEntry {
            file,
            target: Vec::new(),
        }
    }

    /// Its text with the dash at column `dash`, lines ended by `nl` (no final one).
    fn text(&self, dash: usize, nl: &str) -> String {
        let pad = " ".repeat(dash);
        let mut lines = vec![format!("{pad}- path: {}", self.file)];
        if !self.target.is_empty() {
            lines.push(format!("{pad}  target:"));
            for (k, v) in &self.target {
                let v = crate::source::kustomize::to_yaml(&[Node::scalar(v, ScalarKind::Str)]);
                lines.push(format!("{pad}    {k}: {}", v.trim_end()));
            }
        }
        lines.join(nl)
    }
}

/// Lists `files` under the kustomization's `patches:` (created when missing), in the style of
/// its other lists.
pub(super) fn add_patch_entries(text: &str, files: &[PatchEntry]) -> Result<String, FixError> {
    let stream = Stream::parse(text);
    let root = stream
        .documents
        .first()
        .map(|d| &d.root)
        .ok_or(FixError::KustomizationEmpty)?;
    let nl = newline(text);
    if let Some(patches) = root.get("patches") {
        let items = patches
            .as_seq()
            .filter(|_| !patches.flow)
            .ok_or(FixError::PatchesNotBlockList)?;
        let last = items.last().ok_or(FixError::PatchesEmpty)?;
        // `- path: x`: the dash sits two columns before the item's content.
        let dash = column(text, items[0].span.start()).saturating_sub(2);
        let entry = |f: &PatchEntry| f.text(dash, nl);
        // A block scalar (`- patch: |`) ends after its line break: the entry starts a line.
        let (at, body) = if text[..last.span.end()].ends_with(['\n', '\r']) {
            let body: String = files.iter().map(|f| format!("{}{nl}", entry(f))).collect();
            (last.span.end(), body)
        } else {
            let body: String = files.iter().map(|f| format!("{nl}{}", entry(f))).collect();
            (line_end(text, last.span.end()), body)
        };
        return apply(
            text,
            &[Edit {
                start: at,
                end: at,
                content: body,
            }],
        )
        .ok_or(FixError::EditsOverlap);
    }
    // Indent the new list like `resources:` is (`- x` at column 0 or 2).
    let dash = root
        .get("resources")
        .and_then(Node::as_seq)
        .and_then(|items| items.first())
        .map_or(0, |item| column(text, item.span.start()).saturating_sub(2));
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') && !out.ends_with('\r') {
        out.push_str(nl);
    }
    out.push_str(&format!("patches:{nl}"));
    for f in files {
        out.push_str(&format!("{}{nl}", f.text(dash, nl)));
    }
    Ok(out)
}

/// A new `gpulint-<kind>-<name>.yaml` patch of `object` setting `changes`: its header, then one
/// strategic-merge document addressing the object by the name the overlay's bases give it.
pub(super) fn new_patch(
    object: &Node,
    kustomization: &Node,
    changes: &[&FieldChange],
) -> Result<String, FixError> {
    let mut patch = strategic_patch(object, kustomization)?;
    for change in changes {
        set_change(&mut patch, object, change)?;
    }
    let mut body = format!("{PATCH_HEADER}{}", to_yaml(std::slice::from_ref(&patch)));
    if !body.ends_with('\n') {
        body.push('\n');
    }
    Ok(body)
}

/// The JSON pointer of `path` (`~` and `/` escaped as RFC 6901 says).
fn pointer(path: &[Segment]) -> String {
    path.iter()
        .map(|s| match s {
            Segment::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Segment::Index(i) => format!("/{i}"),
        })
        .collect()
}

fn op(op: &str, path: &[Segment], value: Node) -> Node {
    map_node(vec![
        ("op".into(), Node::scalar(op, ScalarKind::Str)),
        ("path".into(), Node::scalar(&pointer(path), ScalarKind::Str)),
        ("value".into(), value),
    ])
}

/// The JSON 6902 operations that make `change` on the rendered `object`: a field that is
/// there is guarded by a `test` of its value and replaced (so the patch fails to apply, and
/// the render with it, once the base changes under it); a missing one is added, with the
/// mappings missing on its way. A list element must exist: its index is the exact path.
fn json_ops(object: &Node, change: &FieldChange) -> Result<Vec<Node>, FixError> {
    let FieldChange::Set { path, value } = change else {
        return Err(FixError::OnlyValueChanges);
    };
    let mut node = object;
    for (depth, segment) in path.iter().enumerate() {
        let next = match segment {
            Segment::Key(k) => node.get(k),
            Segment::Index(i) => node.as_seq().and_then(|items| items.get(*i)),
        };
        match (next, segment) {
            (Some(n), _) => node = n,
            (None, Segment::Key(_)) if node.as_map().is_some() => {
                // Missing from here: one `add` of the key with the rest nested in it.
                let rest = &path[depth + 1..];
                let kind = number_or_string(value);
                let mut added = Node::scalar(value, kind);
                for seg in rest.iter().rev() {
                    let Segment::Key(k) = seg else {
                        return Err(FixError::Inconsistent("list element not found"));
                    };
                    added = map_node(vec![(k.clone(), added)]);
                }
                return Ok(vec![op("add", &path[..=depth], added)]);
            }
            (None, _) => return Err(FixError::Inconsistent("list element not found")),
        }
    }
    let old = node
        .as_scalar()
        .ok_or(FixError::Inconsistent("the field is not a value"))?;
    // Written like the value it replaces (`cpu: "8"` stays a string).
    let kind = match old.kind {
        ScalarKind::Int | ScalarKind::Str => old.kind,
        _ => number_or_string(value),
    };
    Ok(vec![
        op("test", path, Node::scalar(&old.text, old.kind)),
        op("replace", path, Node::scalar(value, kind)),
    ])
}

fn number_or_string(value: &str) -> ScalarKind {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        ScalarKind::Int
    } else {
        ScalarKind::Str
    }
}

/// A new JSON 6902 patch of `object` making `changes`: the header, then the operations.
pub(super) fn new_json_patch(object: &Node, changes: &[&FieldChange]) -> Result<String, FixError> {
    let mut ops = Vec::new();
    for change in changes {
        ops.extend(json_ops(object, change)?);
    }
    let list = Node {
        value: Value::Seq(ops),
        ..Node::default()
    };
    let mut body = format!("{PATCH_HEADER}{}", to_yaml(std::slice::from_ref(&list)));
    if !body.ends_with('\n') {
        body.push('\n');
    }
    Ok(body)
}

/// Appends the operations of `changes` to a JSON 6902 patch an earlier fix wrote, keeping its
/// leading comment. The rendered `object` already has the earlier operations applied, so the
/// new `test`s guard the values they left.
pub(super) fn extend_json_patch(
    text: &str,
    object: &Node,
    changes: &[&FieldChange],
) -> Result<String, FixError> {
    let stream = Stream::parse(text);
    let [doc] = stream.documents.as_slice() else {
        return Err(FixError::PatchNotOneDocument);
    };
    let Some(existing) = doc.root.as_seq().filter(|_| stream.error.is_none()) else {
        return Err(FixError::PatchChangedByHand);
    };
    let mut ops = existing.to_vec();
    for change in changes {
        ops.extend(json_ops(object, change)?);
    }
    let list = Node {
        value: Value::Seq(ops),
        ..Node::default()
    };
    let header: String = text
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('#'))
        .collect();
    Ok(format!("{header}{}", to_yaml(std::slice::from_ref(&list))))
}

/// The `target:` of a JSON 6902 patch of `object`: its group, version, kind and the name the
/// overlay's bases give it (and its namespace when the overlay sets none).
pub(super) fn json_target(
    object: &Node,
    kustomization: &Node,
) -> Result<Vec<(String, String)>, FixError> {
    let api_version = object
        .get_str("apiVersion")
        .ok_or(FixError::ObjectWithout("apiVersion"))?;
    let (kind, name) = patch_names(object, kustomization)?;
    let (group, version) = match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let mut target = Vec::new();
    if !group.is_empty() {
        target.push(("group".to_string(), group.to_string()));
    }
    target.push(("version".into(), version.to_string()));
    target.push(("kind".into(), kind));
    target.push(("name".into(), name));
    let namespace = object.get("metadata").and_then(|m| m.get_str("namespace"));
    if let (Some(ns), None) = (namespace, kustomization.get("namespace")) {
        target.push(("namespace".into(), ns.to_string()));
    }
    Ok(target)
}

/// The file name stem of the patch of `object` (`gpulint-deployment-llm`), and the kind and name
/// the patch addresses.
pub(super) fn patch_stem(
    object: &Node,
    kustomization: &Node,
) -> Result<(String, String, String), FixError> {
    let (kind, name) = patch_names(object, kustomization)?;
    // The names come from the repository: a `/` or `..` in one would put the file elsewhere.
    let kind_ok = !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_alphanumeric());
    if !kind_ok || !crate::source::helm::is_dns1123_subdomain(&name) {
        return Err(FixError::UnsafeFileName(format!("{kind}/{name}")));
    }
    let stem = format!("gpulint-{}-{name}", kind.to_ascii_lowercase());
    Ok((stem, kind, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        let stream = Stream::parse(text);
        assert!(stream.error.is_none(), "{text}");
        stream.documents[0].root.clone()
    }

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    const RENDERED: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prod-llm
  namespace: serving
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: proxy
      - name: server
        image: vllm
        resources:
          limits:
            cpu: \"8\"
";

    fn set(path: Vec<Segment>, value: &str) -> FieldChange {
        FieldChange::Set {
            path,
            value: value.into(),
        }
    }

    fn container_field(index: usize, field: &[&str]) -> Vec<Segment> {
        let mut path = vec![
            key("spec"),
            key("template"),
            key("spec"),
            key("containers"),
            Segment::Index(index),
        ];
        path.extend(field.iter().map(|k| key(k)));
        path
    }

    #[test]
    fn a_patch_names_list_elements_by_merge_key_and_the_object_by_its_base_name() {
        let object = root(RENDERED);
        let kustomization = root("namePrefix: prod-\nresources:\n- ../../base\n");
        let cpu = set(container_field(1, &["resources", "limits", "cpu"]), "4");
        let memory = set(
            container_field(1, &["resources", "limits", "memory"]),
            "22Gi",
        );
        let gpus = set(
            container_field(1, &["resources", "limits", "nvidia.com/gpu"]),
            "1",
        );
        let patch = new_patch(&object, &kustomization, &[&cpu, &memory, &gpus]).unwrap();
        assert_eq!(
            patch,
            format!(
                "{PATCH_HEADER}\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  namespace: serving
spec:
  template:
    spec:
      containers:
      - name: server
        resources:
          limits:
            cpu: \"4\"
            memory: 22Gi
            nvidia.com/gpu: 1
"
            )
        );
        let (stem, kind, name) = patch_stem(&object, &kustomization).unwrap();
        assert_eq!(
            (stem.as_str(), kind.as_str(), name.as_str()),
            ("gpulint-deployment-llm", "Deployment", "llm")
        );
    }

    #[test]
    fn the_overlay_namespace_is_left_to_the_overlay() {
        let object = root(RENDERED);
        let kustomization = root("namespace: serving\nresources:\n- ../../base\n");
        let change = set(container_field(1, &["resources", "limits", "cpu"]), "4");
        let patch = new_patch(&object, &kustomization, &[&change]).unwrap();
        assert!(!patch.contains("namespace:"), "{patch}");
        assert!(patch.contains("name: prod-llm"), "{patch}");
    }

    #[test]
    fn what_a_strategic_merge_patch_cannot_say_is_refused() {
        let object = root(RENDERED);
        let kustomization = root("resources:\n- base\n");
        let rename = FieldChange::Rename {
            path: container_field(1, &["resources", "limits", "nvidia.com/gpu"]),
            to: "nvidia.com/mig-3g.40gb".into(),
        };
        assert_eq!(
            new_patch(&object, &kustomization, &[&rename]),
            Err(FixError::OnlyValueChanges)
        );
        let unnamed = root(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: x\n",
        );
        let change = set(
            vec![
                key("spec"),
                key("containers"),
                Segment::Index(0),
                key("image"),
            ],
            "y",
        );
        assert_eq!(
            new_patch(&unnamed, &kustomization, &[&change]),
            Err(FixError::ListElementWithoutName)
        );
        let nameless = root("apiVersion: v1\nkind: Pod\nmetadata: {}\n");
        assert_eq!(
            patch_stem(&nameless, &kustomization),
            Err(FixError::ObjectWithout("a name"))
        );
    }

    #[test]
    fn an_earlier_patch_is_extended_keeping_its_header_unless_edited_by_hand() {
        let object = root(RENDERED);
        let kustomization = root("namePrefix: prod-\n");
        let cpu = set(container_field(1, &["resources", "limits", "cpu"]), "4");
        let first = new_patch(&object, &kustomization, &[&cpu]).unwrap();
        let memory = set(
            container_field(1, &["resources", "limits", "memory"]),
            "22Gi",
        );
        let extended = extend_patch(&first, &object, &[&memory], "Deployment", "llm").unwrap();
        assert!(extended.starts_with(PATCH_HEADER), "{extended}");
        assert!(
            extended.ends_with("            cpu: \"4\"\n            memory: 22Gi\n"),
            "{extended}"
        );
        assert_eq!(
            extend_patch(&first, &object, &[&memory], "Deployment", "other"),
            Err(FixError::PatchChangedByHand)
        );
        assert_eq!(
            extend_patch(
                "a: 1\n---\nb: 2\n",
                &object,
                &[&memory],
                "Deployment",
                "llm"
            ),
            Err(FixError::PatchNotOneDocument)
        );
    }

    #[test]
    fn patch_entries_follow_the_style_of_the_kustomization() {
        // An existing block list: a new entry at its indentation, after its last item.
        let listed = "resources:\n  - ../../base\npatches:\n  - path: replicas.yaml\n# end\n";
        assert_eq!(
            add_patch_entries(listed, &[PatchEntry::strategic("gpulint-deployment-llm.yaml".into())]).unwrap(),
            "resources:\n  - ../../base\npatches:\n  - path: replicas.yaml\n  - path: gpulint-deployment-llm.yaml\n# end\n"
        );
        // The last item a block scalar: the entry starts the line after it.
        let inline = "patches:\n- patch: |\n    - op: add\n";
        assert_eq!(
            add_patch_entries(inline, &[PatchEntry::strategic("p.yaml".into())]).unwrap(),
            "patches:\n- patch: |\n    - op: add\n- path: p.yaml\n"
        );
        // No `patches:` yet: a new list indented like `resources:`, CRLF kept.
        let crlf = "resources:\r\n  - base\r\n";
        assert_eq!(
            add_patch_entries(
                crlf,
                &[
                    PatchEntry::strategic("a.yaml".into()),
                    PatchEntry::strategic("b.yaml".into())
                ]
            )
            .unwrap(),
            "resources:\r\n  - base\r\npatches:\r\n  - path: a.yaml\r\n  - path: b.yaml\r\n"
        );
        // A flow list or an empty one is left to the user.
        assert_eq!(
            add_patch_entries(
                "patches: [{path: a.yaml}]\n",
                &[PatchEntry::strategic("b.yaml".into())]
            ),
            Err(FixError::PatchesNotBlockList)
        );
        assert_eq!(
            add_patch_entries("patches: []\n", &[PatchEntry::strategic("b.yaml".into())]),
            Err(FixError::PatchesNotBlockList)
        );
        assert_eq!(
            add_patch_entries("", &[PatchEntry::strategic("b.yaml".into())]),
            Err(FixError::KustomizationEmpty)
        );
    }

    #[test]
    fn a_json_patch_tests_and_replaces_at_the_exact_path_and_adds_what_is_missing() {
        let object = root(
            "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: llm\n  namespace: ml\nspec:\n  groups:\n  - replicas: 1\n    resources:\n      limits:\n        cpu: \"32\"\n        nvidia.com/gpu: 4\n",
        );
        let group = |field: &[&str]| {
            let mut p = vec![
                key("spec"),
                key("groups"),
                Segment::Index(0),
                key("resources"),
            ];
            p.extend(field.iter().map(|k| key(k)));
            p
        };
        let cpu = set(group(&["limits", "cpu"]), "26");
        let gpus = set(group(&["limits", "nvidia.com/gpu"]), "2");
        let memory = set(group(&["requests", "memory"]), "13Gi");
        let patch = new_json_patch(&object, &[&cpu, &gpus, &memory]).unwrap();
        assert_eq!(
            patch,
            format!(
                "{PATCH_HEADER}\
- op: test
  path: /spec/groups/0/resources/limits/cpu
  value: \"32\"
- op: replace
  path: /spec/groups/0/resources/limits/cpu
  value: \"26\"
- op: test
  path: /spec/groups/0/resources/limits/nvidia.com~1gpu
  value: 4
- op: replace
  path: /spec/groups/0/resources/limits/nvidia.com~1gpu
  value: 2
- op: add
  path: /spec/groups/0/resources/requests
  value:
    memory: 13Gi
"
            )
        );
        let extended = extend_json_patch(&patch, &object, &[&cpu]).unwrap();
        assert!(extended.starts_with(&patch), "{extended}");
        let kustomization = root("resources:\n- ../../base\n");
        let target = json_target(&object, &kustomization).unwrap();
        let entry = PatchEntry {
            file: "p.yaml".into(),
            target,
        };
        assert_eq!(
            add_patch_entries("resources:\n- base\n", &[entry]).unwrap(),
            "resources:\n- base\npatches:\n- path: p.yaml\n  target:\n    group: ray.io\n    version: v1\n    kind: RayService\n    name: llm\n    namespace: ml\n"
        );
        let rename = FieldChange::Rename {
            path: group(&["limits", "nvidia.com/gpu"]),
            to: "nvidia.com/mig-3g.40gb".into(),
        };
        assert_eq!(
            new_json_patch(&object, &[&rename]),
            Err(FixError::OnlyValueChanges)
        );
        let missing = set(
            vec![key("spec"), key("groups"), Segment::Index(3), key("x")],
            "1",
        );
        assert!(new_json_patch(&object, &[&missing]).is_err());
    }
}
