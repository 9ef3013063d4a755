//! Strategic-merge patches of an overlay, as text: what `--fix` adds to a Kustomize overlay
//! when the field it changes is written by a base other overlays share. Pure functions of the
//! rendered object and the kustomization; `kustomize.rs` decides when to use them and verifies
//! the result by rendering the overlay again.

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

/// Lists `files` under the kustomization's `patches:` (created when missing), in the style of
/// its other lists.
pub(super) fn add_patch_entries(text: &str, files: &[String]) -> Result<String, FixError> {
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
        let entry = |f: &String| format!("{}- path: {f}", " ".repeat(dash));
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
        out.push_str(&format!("{}- path: {f}{nl}", " ".repeat(dash)));
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
            add_patch_entries(listed, &["gpulint-deployment-llm.yaml".into()]).unwrap(),
            "resources:\n  - ../../base\npatches:\n  - path: replicas.yaml\n  - path: gpulint-deployment-llm.yaml\n# end\n"
        );
        // The last item a block scalar: the entry starts the line after it.
        let inline = "patches:\n- patch: |\n    - op: add\n";
        assert_eq!(
            add_patch_entries(inline, &["p.yaml".into()]).unwrap(),
            "patches:\n- patch: |\n    - op: add\n- path: p.yaml\n"
        );
        // No `patches:` yet: a new list indented like `resources:`, CRLF kept.
        let crlf = "resources:\r\n  - base\r\n";
        assert_eq!(
            add_patch_entries(crlf, &["a.yaml".into(), "b.yaml".into()]).unwrap(),
            "resources:\r\n  - base\r\npatches:\r\n  - path: a.yaml\r\n  - path: b.yaml\r\n"
        );
        // A flow list or an empty one is left to the user.
        assert_eq!(
            add_patch_entries("patches: [{path: a.yaml}]\n", &["b.yaml".into()]),
            Err(FixError::PatchesNotBlockList)
        );
        assert_eq!(
            add_patch_entries("patches: []\n", &["b.yaml".into()]),
            Err(FixError::PatchesNotBlockList)
        );
        assert_eq!(
            add_patch_entries("", &["b.yaml".into()]),
            Err(FixError::KustomizationEmpty)
        );
    }
}
