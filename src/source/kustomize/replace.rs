//! `replacements`: copy a field of one resource into fields of others. The copied value is the
//! source's own node, so its origin is where the source resource wrote it.

use std::path::Path;

use super::kustomization::Selector;
use super::load::Res;
use super::select::selects;
use super::{RenderError, RenderErrorKind};
use crate::source::yaml::{Entry, Node, ScalarKind, Value};

struct Ctx<'a> {
    kfile: &'a Path,
    span: crate::source::yaml::Span,
}

impl Ctx<'_> {
    fn err(&self, node: &Node, msg: impl Into<String>) -> RenderError {
        RenderError::new(
            RenderErrorKind::Invalid,
            self.kfile,
            Some(if node.span.is_empty() {
                self.span
            } else {
                node.span
            }),
            format!("invalid replacement: {}", msg.into()),
        )
    }
}

fn selector(node: &Node) -> Selector {
    let s = |k: &str| node.get_str(k).map(str::to_string);
    Selector {
        group: s("group"),
        version: s("version"),
        kind: s("kind"),
        name: s("name"),
        namespace: s("namespace"),
        label_selector: s("labelSelector"),
        annotation_selector: s("annotationSelector"),
    }
}

/// `a.b.[name=x].c.0` split into segments (brackets keep their dots).
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

fn get<'a>(node: &'a Node, path: &[String]) -> Option<&'a Node> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    let next = match &node.value {
        Value::Map(_) => node.get(first)?,
        Value::Seq(items) => {
            if let Some(cond) = first.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                let (k, v) = cond.split_once('=')?;
                items.iter().find(|i| i.get_str(k) == Some(v))?
            } else {
                items.get(first.parse::<usize>().ok()?)?
            }
        }
        Value::Scalar(_) => return None,
    };
    get(next, rest)
}

fn get_mut<'a>(
    node: &'a mut Node,
    path: &[String],
    create: bool,
    like: &Node,
) -> Option<&'a mut Node> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    if node.is_null() && create {
        node.value = Value::Map(Vec::new());
    }
    let next = match &mut node.value {
        Value::Map(entries) => {
            let pos = entries
                .iter()
                .position(|e| e.key.text() == Some(first.as_str()));
            let i = match pos {
                Some(i) => i,
                None if create => {
                    let mut key = Node::scalar(first, ScalarKind::Str);
                    key.span = like.span;
                    let mut value = Node::scalar("", ScalarKind::Null);
                    value.span = like.span;
                    entries.push(Entry { key, value });
                    entries.len() - 1
                }
                None => return None,
            };
            &mut entries[i].value
        }
        Value::Seq(items) => {
            if let Some(cond) = first.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                let (k, v) = cond.split_once('=')?;
                items.iter_mut().find(|i| i.get_str(k) == Some(v))?
            } else {
                items.get_mut(first.parse::<usize>().ok()?)?
            }
        }
        Value::Scalar(_) => return None,
    };
    get_mut(next, rest, create, like)
}

pub(crate) fn apply(
    acc: &mut [Res],
    replacements: &[Node],
    kfile: &Path,
) -> Result<(), RenderError> {
    for r in replacements {
        let cx = Ctx {
            kfile,
            span: r.span,
        };
        if r.get("path").is_some() {
            return Err(RenderError::new(
                RenderErrorKind::Unsupported,
                kfile,
                Some(r.span),
                "`replacements` from a file (`path:`) is not supported by the built-in kustomize renderer",
            ));
        }
        let Some(src) = r.get("source").filter(|s| s.as_map().is_some()) else {
            return Err(cx.err(r, "a replacement needs a `source` mapping"));
        };
        let sel = selector(src);
        let found: Vec<&Res> = acc.iter().filter(|x| selects(&sel, x)).collect();
        let source = match found.as_slice() {
            [one] => *one,
            [] => return Err(cx.err(src, "nothing selected by the replacement source")),
            _ => {
                return Err(cx.err(
                    src,
                    "more than one resource selected by the replacement source",
                ))
            }
        };
        let field = src.get_str("fieldPath").unwrap_or("metadata.name");
        let Some(value) = get(&source.node, &segments(field)).cloned() else {
            return Err(cx.err(
                src,
                format!("fieldPath `{field}` is missing for the replacement source"),
            ));
        };
        let targets = r.get("targets").and_then(Node::as_seq).unwrap_or_default();
        for t in targets {
            let Some(select) = t.get("select").filter(|s| s.as_map().is_some()) else {
                return Err(cx.err(t, "a replacement target needs `select`"));
            };
            let select = selector(select);
            let rejects: Vec<Selector> = t
                .get("reject")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .map(selector)
                .collect();
            let options = t.get("options");
            let create = options.and_then(|o| o.get_str("create")) == Some("true");
            let delimiter = options.and_then(|o| o.get_str("delimiter"));
            let index: i64 = options
                .and_then(|o| o.get_str("index"))
                .and_then(|i| i.parse().ok())
                .unwrap_or(0);
            let paths: Vec<String> = t
                .get("fieldPaths")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(|p| p.text().map(str::to_string))
                .collect();
            for res in acc.iter_mut() {
                if !selects(&select, res) || rejects.iter().any(|rj| selects(rj, res)) {
                    continue;
                }
                let before = res.id();
                for p in &paths {
                    let Some(slot) = get_mut(&mut res.node, &segments(p.trim()), create, &value)
                    else {
                        continue;
                    };
                    *slot = match delimiter {
                        Some(d) => {
                            let (Some(old), Some(v)) = (slot.text(), value.text()) else {
                                continue;
                            };
                            let mut parts: Vec<String> = old.split(d).map(str::to_string).collect();
                            match usize::try_from(index) {
                                Ok(i) if i < parts.len() => parts[i] = v.to_string(),
                                Ok(_) => parts.push(v.to_string()),
                                Err(_) => parts.insert(0, v.to_string()),
                            }
                            let mut n = Node::scalar(&parts.join(d), ScalarKind::Str);
                            n.span = value.span;
                            n
                        }
                        None => value.clone(),
                    };
                }
                // A renamed target keeps its old id for later patches and name references.
                if res.id() != before && res.prev.last() != Some(&before) {
                    res.prev.push(before);
                }
            }
        }
    }
    Ok(())
}
