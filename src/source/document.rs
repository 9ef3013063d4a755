//! A document's fields as data, apart from their YAML layout: the path to a field (`Segment`,
//! parsed from a normalized JSONPath by `parse_path`) and a whole document as plain JSON
//! (`plain`), for comparing documents before and after a render or a fix.

use serde_json::{Map, Value as Json};

use crate::source::yaml::{Node, ScalarKind, Value};

/// One step of a path inside a document.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Parses an RFC 9535 normalized path (`$['spec']['containers'][0]`) into segments.
pub fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let mut rest = path.strip_prefix('$')?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        rest = rest.strip_prefix('[')?;
        if let Some(quoted) = rest.strip_prefix('\'') {
            let mut name = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                match c {
                    '\'' => break i,
                    '\\' => {
                        let (_, e) = chars.next()?;
                        name.push(match e {
                            'b' => '\u{08}',
                            'f' => '\u{0C}',
                            'n' => '\n',
                            'r' => '\r',
                            't' => '\t',
                            other => other,
                        });
                    }
                    c => name.push(c),
                }
            };
            rest = quoted.get(end + 1..)?.strip_prefix(']')?;
            out.push(Segment::Key(name));
        } else {
            let close = rest.find(']')?;
            out.push(Segment::Index(rest.get(..close)?.parse().ok()?));
            rest = rest.get(close + 1..)?;
        }
    }
    Some(out)
}

/// A document as plain data, for comparing before and after a fix.
pub fn plain(node: &Node) -> Json {
    match &node.value {
        Value::Scalar(s) if s.kind == ScalarKind::Null => Json::Null,
        Value::Scalar(s) => Json::String(s.text.clone()),
        Value::Seq(items) => Json::Array(items.iter().map(plain).collect()),
        Value::Map(entries) => {
            let mut map = Map::new();
            for e in entries {
                let key = e
                    .key
                    .as_scalar()
                    .map(|s| s.text.clone())
                    .unwrap_or_default();
                map.insert(key, plain(&e.value));
            }
            Json::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_paths_round_trip() {
        let p = parse_path("$['spec']['it\\'s'][3]['nvidia.com/gpu']").unwrap();
        assert_eq!(
            p,
            [
                Segment::Key("spec".into()),
                Segment::Key("it's".into()),
                Segment::Index(3),
                Segment::Key("nvidia.com/gpu".into())
            ]
        );
        assert!(parse_path("spec").is_none());
        assert!(parse_path("$['open").is_none());
    }
}
