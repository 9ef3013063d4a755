//! Patch targets: kustomize's selectors (regex names, label and annotation selectors, matching
//! original or current ids) and the application of `patches`, `patchesStrategicMerge` and
//! `patchesJson6902` entries to the resources they select.

use std::path::Path;

use regex::Regex;

use super::kustomization::{Patch, Selector};
use super::load::{Res, ResId};
use super::{json6902, smp, RenderError, RenderErrorKind};
use crate::source::yaml::{Node, Span, Value};

/// A regex matching the whole string, as kustomize anchors selector fields.
fn full_match(pattern: &str, text: &str) -> bool {
    match Regex::new(&format!("^(?:{pattern})$")) {
        Ok(re) => re.is_match(text),
        Err(_) => pattern == text,
    }
}

pub(crate) fn selects(sel: &Selector, res: &Res) -> bool {
    let cur = res.id();
    let org = res.org_id();
    if let Some(ns) = sel.namespace.as_deref().filter(|s| !s.is_empty()) {
        let m =
            |id: &ResId| full_match(ns, id.effective_namespace()) || full_match(ns, &id.namespace);
        if !m(&org) && !m(&cur) {
            return false;
        }
    }
    if let Some(name) = sel.name.as_deref().filter(|s| !s.is_empty()) {
        if !full_match(name, &org.name) && !full_match(name, &cur.name) {
            return false;
        }
    }
    let field = |want: &Option<String>, have: &str| {
        want.as_deref().is_none_or(|w| w.is_empty() || w == have)
    };
    if !field(&sel.group, &cur.group)
        || !field(&sel.version, &cur.version)
        || !field(&sel.kind, &cur.kind)
    {
        return false;
    }
    let meta = |key: &str| -> Vec<(String, String)> {
        res.node
            .get_path(&["metadata", key])
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                Some((
                    e.key.text()?.to_string(),
                    e.value.text().unwrap_or_default().to_string(),
                ))
            })
            .collect()
    };
    if let Some(ls) = sel
        .label_selector
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        if !label_selector_matches(ls, &meta("labels")) {
            return false;
        }
    }
    if let Some(a) = sel
        .annotation_selector
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        if !label_selector_matches(a, &meta("annotations")) {
            return false;
        }
    }
    true
}

/// Kubernetes label selector syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`.
pub(crate) fn label_selector_matches(selector: &str, labels: &[(String, String)]) -> bool {
    let get = |k: &str| {
        labels
            .iter()
            .find(|(lk, _)| lk == k)
            .map(|(_, v)| v.as_str())
    };
    let mut terms = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in selector.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    terms.push(cur);
    terms
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .all(|t| {
            if let Some((k, v)) = t.split_once("!=") {
                return get(k.trim()) != Some(v.trim());
            }
            if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                return get(k.trim()) == Some(v.trim());
            }
            let set = |rest: &str| -> Vec<String> {
                rest.trim()
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect()
            };
            if let Some((k, rest)) = t.split_once(" notin ") {
                return get(k.trim()).is_none_or(|v| !set(rest).iter().any(|s| s == v));
            }
            if let Some((k, rest)) = t.split_once(" in ") {
                return get(k.trim()).is_some_and(|v| set(rest).iter().any(|s| s == v));
            }
            if let Some(k) = t.strip_prefix('!') {
                return get(k.trim()).is_none();
            }
            get(t).is_some()
        })
}

fn same(a: &ResId, b: &ResId) -> bool {
    a.same_gvk(b) && a.name == b.name && a.effective_namespace() == b.effective_namespace()
}

/// A strategic merge patch without a target: it patches the one resource with its own id
/// (current, original or previous).
pub(crate) fn apply_smp_by_id(
    acc: &mut Vec<Res>,
    patch: &Node,
    kfile: &Path,
    span: Span,
) -> Result<(), RenderError> {
    if patch.as_map().is_none() {
        return Err(RenderError::new(
            RenderErrorKind::Invalid,
            kfile,
            Some(span),
            "a strategic merge patch must be a mapping",
        ));
    }
    let id = ResId::of(patch);
    // Like kustomize, the current, original and previous ids all count: a patch may name a
    // resource as its base wrote it, and two resources that share a past are ambiguous.
    let hits: Vec<usize> = (0..acc.len())
        .filter(|&i| acc[i].all_ids().iter().any(|a| same(a, &id)))
        .collect();
    match hits.len() {
        0 => Err(RenderError::new(
            RenderErrorKind::PatchTargetNotFound,
            kfile,
            Some(span),
            format!(
                "no resource matches strategic merge patch \"{}\": failed to find unique target for patch {}",
                id.display(),
                id.display()
            ),
        )),
        1 => {
            let i = hits[0];
            if smp_one(&mut acc[i], patch, false, false) {
                acc.remove(i);
            }
            Ok(())
        }
        _ => Err(RenderError::new(
            RenderErrorKind::PatchTargetAmbiguous,
            kfile,
            Some(span),
            format!(
                "multiple matches for Id {}; failed to find unique target for patch {}",
                id.display(),
                id.display()
            ),
        )),
    }
}

/// Applies a strategic merge patch to one resource; true when the patch deletes it.
fn smp_one(res: &mut Res, patch: &Node, allow_name: bool, allow_kind: bool) -> bool {
    if patch.get_str("$patch") == Some("delete") {
        return true;
    }
    let mut p = patch.clone();
    // The patch's own identity only says which resource it is for, unless it may rename.
    if let Value::Map(entries) = &mut p.value {
        if !allow_kind {
            entries.retain(|e| !matches!(e.key.text(), Some("kind" | "apiVersion")));
        }
        for e in entries.iter_mut() {
            if e.key.text() == Some("metadata") {
                if let Value::Map(m) = &mut e.value.value {
                    m.retain(|x| match x.key.text() {
                        Some("name") => allow_name,
                        Some("namespace") => false,
                        _ => true,
                    });
                }
            }
        }
    }
    let before = res.id();
    let merged = smp::merge_resource(&res.node, &p);
    let after = ResId::of(&merged);
    if after != before {
        res.remember();
    }
    res.node = merged;
    false
}

/// One `patches` or `patchesJson6902` entry, with its documents.
pub(crate) fn apply_patch(
    acc: &mut Vec<Res>,
    p: &Patch,
    docs: &[Node],
    kfile: &Path,
) -> Result<(), RenderError> {
    let is_json = p.json6902 || (docs.len() == 1 && docs[0].as_seq().is_some());
    if is_json {
        let Some(target) = &p.target else {
            return Err(RenderError::new(
                RenderErrorKind::Invalid,
                kfile,
                Some(p.span),
                "unable to apply json6902 patch without a target",
            ));
        };
        let ops = match docs {
            [] => return Ok(()),
            [d] => d,
            _ => {
                return Err(RenderError::new(
                    RenderErrorKind::Invalid,
                    kfile,
                    Some(p.span),
                    "a JSON 6902 patch is one list of operations",
                ))
            }
        };
        let ops = json6902::parse_ops(ops)
            .map_err(|m| RenderError::new(RenderErrorKind::Invalid, kfile, Some(p.span), m))?;
        for res in acc.iter_mut().filter(|r| selects(target, r)) {
            let before = res.id();
            let mut node = res.node.clone();
            json6902::apply(&mut node, &ops).map_err(|m| {
                RenderError::new(
                    RenderErrorKind::Invalid,
                    kfile,
                    Some(p.span),
                    format!(
                        "unable to apply JSON 6902 patch to {}: {m}",
                        before.display()
                    ),
                )
            })?;
            if ResId::of(&node) != before {
                res.remember();
            }
            res.node = node;
        }
        return Ok(());
    }
    for d in docs {
        if d.as_map().is_none() {
            return Err(RenderError::new(
                RenderErrorKind::Invalid,
                kfile,
                Some(p.span),
                "a patch must be a mapping (strategic merge) or a list of operations (JSON 6902)",
            ));
        }
    }
    match &p.target {
        None => {
            for d in docs {
                apply_smp_by_id(acc, d, kfile, p.span)?;
            }
        }
        Some(target) => {
            let mut i = 0;
            while i < acc.len() {
                if !selects(target, &acc[i]) {
                    i += 1;
                    continue;
                }
                let mut deleted = false;
                for d in docs {
                    if smp_one(&mut acc[i], d, p.allow_name_change, p.allow_kind_change) {
                        deleted = true;
                        break;
                    }
                }
                if deleted {
                    acc.remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }
    Ok(())
}
