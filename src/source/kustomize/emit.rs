//! YAML output: a `---` separated stream in block style, strings quoted when a plain scalar would
//! read back as something else. Re-parsing gives the same data.

use crate::source::yaml::{Node, ScalarKind, Stream, Value};

pub fn to_yaml(objects: &[Node]) -> String {
    let mut out = String::new();
    for (i, o) in objects.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        match &o.value {
            Value::Scalar(_) => {
                out.push_str(&scalar(o));
                out.push('\n');
            }
            _ if is_empty_collection(o) => {
                out.push_str(&scalar(o));
                out.push('\n');
            }
            _ => write(o, 0, &mut out),
        }
    }
    out
}

fn is_empty_collection(n: &Node) -> bool {
    match &n.value {
        Value::Map(e) => e.is_empty(),
        Value::Seq(s) => s.is_empty(),
        Value::Scalar(_) => false,
    }
}

fn inline(n: &Node) -> Option<String> {
    match &n.value {
        Value::Map(e) if e.is_empty() => Some("{}".to_string()),
        Value::Seq(s) if s.is_empty() => Some("[]".to_string()),
        Value::Scalar(_) => Some(scalar(n)),
        _ => None,
    }
}

fn write(node: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match &node.value {
        Value::Map(entries) => {
            for e in entries {
                out.push_str(&pad);
                out.push_str(&key_text(&e.key));
                out.push(':');
                match inline(&e.value) {
                    Some(s) => {
                        out.push(' ');
                        out.push_str(&s);
                        out.push('\n');
                    }
                    None => {
                        out.push('\n');
                        let nested = if matches!(e.value.value, Value::Seq(_)) {
                            indent
                        } else {
                            indent + 2
                        };
                        write(&e.value, nested, out);
                    }
                }
            }
        }
        Value::Seq(items) => {
            for item in items {
                match inline(item) {
                    Some(s) => {
                        out.push_str(&pad);
                        out.push_str("- ");
                        out.push_str(&s);
                        out.push('\n');
                    }
                    None => {
                        let mut inner = String::new();
                        write(item, indent + 2, &mut inner);
                        out.push_str(&pad);
                        out.push_str("- ");
                        out.push_str(inner.get(indent + 2..).unwrap_or_default());
                    }
                }
            }
        }
        Value::Scalar(_) => {
            out.push_str(&pad);
            out.push_str(&scalar(node));
            out.push('\n');
        }
    }
}

fn key_text(key: &Node) -> String {
    match &key.value {
        Value::Scalar(_) => scalar(key),
        // Complex keys do not occur in Kubernetes objects; write them as a quoted string.
        _ => quote(&format!("{:?}", crate::source::document::plain(key))),
    }
}

fn scalar(n: &Node) -> String {
    match &n.value {
        Value::Scalar(s) => match s.kind {
            ScalarKind::Null => "null".to_string(),
            ScalarKind::Str => {
                if plain_reads_as_string(&s.text) {
                    s.text.clone()
                } else {
                    quote(&s.text)
                }
            }
            _ => {
                if reads_as(&s.text) == Some(s.kind) {
                    s.text.clone()
                } else {
                    quote(&s.text)
                }
            }
        },
        _ => inline(n).unwrap_or_default(),
    }
}

/// The kind a plain scalar `text` resolves to, if it parses as one plain scalar with that text.
fn reads_as(text: &str) -> Option<ScalarKind> {
    let s = Stream::parse(&format!("k: {text}\n"));
    if s.error.is_some() {
        return None;
    }
    let v = s.documents.first()?.root.get("k")?;
    let sc = v.as_scalar()?;
    (sc.text == text && v.as_map().is_none()).then_some(sc.kind)
}

fn plain_reads_as_string(text: &str) -> bool {
    let safe_chars = !text.is_empty()
        && text.chars().all(|c| {
            c.is_alphanumeric()
                || matches!(
                    c,
                    '_' | '.'
                        | '/'
                        | '-'
                        | ':'
                        | ' '
                        | '='
                        | '+'
                        | '('
                        | ')'
                        | ','
                        | '@'
                        | '$'
                        | '%'
                        | '^'
                        | '~'
                        | '<'
                        | '>'
                        | ';'
                        | '\\'
                )
        })
        && !text.starts_with(['-', ':', ' ', '@', '%'])
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #");
    safe_chars && reads_as(text) == Some(ScalarKind::Str)
}

fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20
                || c == '\u{7f}'
                || c == '\u{85}'
                || c == '\u{feff}'
                || c == '\u{2028}'
                || c == '\u{2029}' =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
