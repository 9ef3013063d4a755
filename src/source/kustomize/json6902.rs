//! JSON patch (RFC 6902) on the span-aware tree: values added or replaced are the patch's own
//! nodes, so they point at the patch file (or the inline patch in the kustomization).

use crate::source::document::plain;
use crate::source::yaml::{Entry, Node, Value};

#[derive(Clone, Debug)]
pub(crate) enum Op {
    Add(Vec<String>, Node),
    Remove(Vec<String>),
    Replace(Vec<String>, Node),
    Move(Vec<String>, Vec<String>),
    Copy(Vec<String>, Vec<String>),
    Test(Vec<String>, Node),
}

fn pointer(text: &str) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = text.strip_prefix('/') else {
        return Err(format!(
            "invalid JSON pointer '{text}': it must start with '/'"
        ));
    };
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

pub(crate) fn parse_ops(doc: &Node) -> Result<Vec<Op>, String> {
    let Some(items) = doc.as_seq() else {
        return Err("a JSON 6902 patch must be a list of operations".to_string());
    };
    let mut ops = Vec::new();
    for item in items {
        if item.as_map().is_none() {
            return Err("a JSON 6902 operation must be a mapping".to_string());
        }
        let op = item
            .get_str("op")
            .ok_or("a JSON 6902 operation needs `op`")?;
        let path = pointer(
            item.get_str("path")
                .ok_or("a JSON 6902 operation needs `path`")?,
        )?;
        let value = || {
            item.get("value")
                .cloned()
                .ok_or(format!("`{op}` needs a `value`"))
        };
        let from = || -> Result<Vec<String>, String> {
            pointer(item.get_str("from").ok_or(format!("`{op}` needs `from`"))?)
        };
        ops.push(match op {
            "add" => Op::Add(path, value()?),
            "remove" => Op::Remove(path),
            "replace" => Op::Replace(path, value()?),
            "move" => Op::Move(from()?, path),
            "copy" => Op::Copy(from()?, path),
            "test" => Op::Test(path, value()?),
            other => return Err(format!("unknown JSON 6902 operation '{other}'")),
        });
    }
    Ok(ops)
}

pub(crate) fn apply(doc: &mut Node, ops: &[Op]) -> Result<(), String> {
    for op in ops {
        match op {
            Op::Add(path, v) => add(doc, path, v.clone())?,
            Op::Remove(path) => {
                remove(doc, path)?;
            }
            Op::Replace(path, v) => {
                let target = get_mut(doc, path)?;
                *target = v.clone();
            }
            Op::Move(from, path) => {
                let v = remove(doc, from)?;
                add(doc, path, v)?;
            }
            Op::Copy(from, path) => {
                let v = get_mut(doc, from)?.clone();
                add(doc, path, v)?;
            }
            Op::Test(path, v) => {
                if plain(get_mut(doc, path)?) != plain(v) {
                    return Err(format!("test failed at /{}", path.join("/")));
                }
            }
        }
    }
    Ok(())
}

fn index(items_len: usize, seg: &str, allow_end: bool) -> Result<usize, String> {
    if allow_end && seg == "-" {
        return Ok(items_len);
    }
    let i: usize = seg
        .parse()
        .map_err(|_| format!("'{seg}' is not a list index"))?;
    if i > items_len || (!allow_end && i == items_len) {
        return Err(format!("index {i} is out of range"));
    }
    Ok(i)
}

fn get_mut<'a>(doc: &'a mut Node, path: &[String]) -> Result<&'a mut Node, String> {
    let mut at = doc;
    for seg in path {
        at = match &mut at.value {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|e| e.key.text() == Some(seg.as_str()))
                .map(|e| &mut e.value)
                .ok_or_else(|| format!("missing key '{seg}' in /{}", path.join("/")))?,
            Value::Seq(items) => {
                let i = index(items.len(), seg, false)?;
                &mut items[i]
            }
            Value::Scalar(_) => return Err(format!("/{} goes through a scalar", path.join("/"))),
        };
    }
    Ok(at)
}

fn add(doc: &mut Node, path: &[String], value: Node) -> Result<(), String> {
    let Some((last, parent)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    let parent = get_mut(doc, parent)?;
    match &mut parent.value {
        Value::Map(entries) => {
            if let Some(e) = entries
                .iter_mut()
                .find(|e| e.key.text() == Some(last.as_str()))
            {
                e.value = value;
            } else {
                let mut key = Node::scalar(last, crate::source::yaml::ScalarKind::Str);
                key.span = value.span;
                entries.push(Entry { key, value });
            }
        }
        Value::Seq(items) => {
            let i = index(items.len(), last, true)?;
            items.insert(i, value);
        }
        Value::Scalar(_) => return Err(format!("/{} goes through a scalar", path.join("/"))),
    }
    Ok(())
}

fn remove(doc: &mut Node, path: &[String]) -> Result<Node, String> {
    let Some((last, parent)) = path.split_last() else {
        return Err("cannot remove the whole document".to_string());
    };
    let parent = get_mut(doc, parent)?;
    match &mut parent.value {
        Value::Map(entries) => {
            let i = entries
                .iter()
                .position(|e| e.key.text() == Some(last.as_str()))
                .ok_or_else(|| format!("Unable to remove nonexistent key: {last}"))?;
            Ok(entries.remove(i).value)
        }
        Value::Seq(items) => {
            let i = index(items.len(), last, false)?;
            Ok(items.remove(i))
        }
        Value::Scalar(_) => Err(format!("/{} goes through a scalar", path.join("/"))),
    }
}
