//! The vocabulary rules build fixes with, below `rules` and the fix engine (`fix`): fixes as
//! byte-range edits on the original text (ruff's `Edit`/`Fix`, zizmor's yamlpatch), the
//! text-level helpers that keep indentation, quoting and line endings, the verification that a
//! fixed text changes exactly the fields a fix meant to change, and the edits on a container's
//! `resources` (`resources.rs`).

pub mod resources;

use serde_json::{Map, Value as Json};

use crate::source::document::{plain, Segment};
use crate::source::yaml::{Node, ScalarStyle, SourceId, Stream};

/// Replace `start..end` with `content` (an insertion when the range is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub content: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Applicability {
    /// Changes meaning in a way the user should review (`--unsafe-fixes`).
    Unsafe,
    /// Keeps the user's intent; applied by `--fix`.
    Safe,
}

/// A field a fix is meant to change, for verification and for the change report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldChange {
    /// Set the scalar at `path` (creating mappings on the way).
    Set { path: Vec<Segment>, value: String },
    /// Rename the key at the end of `path`, keeping its value.
    Rename { path: Vec<Segment>, to: String },
}

/// A field a fix sets, with its old and new text, for the fix log and the commit message:
/// `limits.memory: 48Gi -> 22Gi`. Fixes in later rounds that set the same field again are
/// folded into one net change (see `fix::plan::net_changes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeNote {
    /// The field inside the fixed document (for a rendered object, inside the render).
    pub path: Vec<Segment>,
    /// The field for people: `limits.memory`.
    pub label: String,
    pub from: String,
    pub to: String,
}

impl ChangeNote {
    pub fn describe(&self) -> String {
        format!("{}: {} -> {}", self.label, self.from, self.to)
    }
}

#[derive(Clone, Debug)]
pub struct Fix {
    /// Byte-range edits on the file `source` names. Empty for a fix on a rendered object whose
    /// field has no single editable origin: the planner then writes an overlay patch.
    pub edits: Vec<Edit>,
    /// The file the edits apply to: `LOCAL` for the linted file itself, a run file index for a
    /// field of a rendered object (the base or patch that wrote it).
    pub source: SourceId,
    pub applicability: Applicability,
    /// Index of the document in its file (of the object in its render, for rendered objects).
    pub document: usize,
    pub changes: Vec<FieldChange>,
    /// What changes, for people: `limits.nvidia.com/gpu: (none) -> 2`.
    pub description: String,
    /// The value changes behind `description`, where the fix sets values (empty for renames).
    pub notes: Vec<ChangeNote>,
}

/// The line ending a file uses (CRLF files stay CRLF).
pub fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else if text.contains('\r') && !text.contains('\n') {
        // Old Mac line endings: YAML (and the parser) break lines at a lone CR too.
        "\r"
    } else {
        "\n"
    }
}

fn line_start(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .and_then(|s| s.rfind(['\n', '\r']))
        .map_or(0, |i| i + 1)
}

/// Column (in bytes) of an offset: the indentation of a key that starts a line.
pub fn column(text: &str, offset: usize) -> usize {
    offset - line_start(text, offset)
}

/// Where a line ends: before its `\r\n` or `\n`, or at the end of the text.
pub fn line_end(text: &str, offset: usize) -> usize {
    // The first `\r` or `\n`: before a `\r\n` pair, a lone `\r`, or a `\n`.
    text.get(offset..)
        .and_then(|s| s.find(['\n', '\r']))
        .map_or(text.len(), |i| offset + i)
}

/// Writes `value` in `style`, as a scalar that parses back to `value`.
pub fn render_scalar(value: &str, style: ScalarStyle) -> String {
    let plain_safe = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_' | '+'));
    match style {
        ScalarStyle::SingleQuoted => format!("'{}'", value.replace('\'', "''")),
        ScalarStyle::Plain if plain_safe => value.to_string(),
        _ => format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

/// The style a new value in `mapping` should take: that of its siblings' values.
pub fn sibling_style(mapping: Option<&Node>) -> ScalarStyle {
    mapping
        .and_then(Node::as_map)
        .and_then(|entries| {
            entries
                .iter()
                .filter_map(|e| e.value.as_scalar())
                .map(|s| s.style)
                .find(|s| matches!(s, ScalarStyle::DoubleQuoted | ScalarStyle::SingleQuoted))
        })
        .unwrap_or(ScalarStyle::Plain)
}

/// Applies edits (sorted, non-overlapping) to a text.
pub fn apply(text: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for e in sorted {
        if e.start < at || e.end < e.start {
            return None;
        }
        out.push_str(text.get(at..e.start)?);
        out.push_str(&e.content);
        at = e.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// Whether two fixes touch overlapping (or adjacent insertion) ranges.
pub fn overlaps(a: &Fix, b: &Fix) -> bool {
    a.edits.iter().any(|x| {
        b.edits
            .iter()
            .any(|y| x.start < y.end.max(y.start + 1) && y.start < x.end.max(x.start + 1))
    })
}

pub(crate) fn apply_change(doc: &mut Json, change: &FieldChange) -> Option<()> {
    let (path, last) = match change {
        FieldChange::Set { path, .. } | FieldChange::Rename { path, .. } => {
            let (last, parent) = path.split_last()?;
            (parent, last)
        }
    };
    let mut at = doc;
    for seg in path {
        at = match seg {
            Segment::Key(k) => {
                let map = at.as_object_mut()?;
                if !map.contains_key(k) || map.get(k).is_some_and(Json::is_null) {
                    map.insert(k.clone(), Json::Object(Map::new()));
                }
                map.get_mut(k)?
            }
            Segment::Index(i) => at.as_array_mut()?.get_mut(*i)?,
        };
    }
    let Segment::Key(key) = last else {
        return None;
    };
    let map = at.as_object_mut()?;
    match change {
        FieldChange::Set { value, .. } => {
            map.insert(key.clone(), Json::String(value.clone()));
        }
        FieldChange::Rename { to, .. } => {
            let value = map.remove(key)?;
            map.insert(to.clone(), value);
        }
    }
    Some(())
}

/// Why a fixed text was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejected {
    Unparsable(String),
    /// Something other than the intended fields changed (e.g. an edit through an anchor).
    Unintended,
}

/// Checks that `fixed` parses and equals `original` except for exactly `fixes`' changes.
pub fn verify(original: &Stream, fixed: &str, fixes: &[&Fix]) -> Result<Stream, Rejected> {
    let stream = Stream::parse(fixed);
    if let Some(e) = &stream.error {
        return Err(Rejected::Unparsable(e.message.clone()));
    }
    if stream.documents.len() != original.documents.len() {
        return Err(Rejected::Unintended);
    }
    for (index, (before, after)) in original.documents.iter().zip(&stream.documents).enumerate() {
        let mut expected = plain(&before.root);
        for fix in fixes.iter().filter(|f| f.document == index) {
            for change in &fix.changes {
                apply_change(&mut expected, change).ok_or(Rejected::Unintended)?;
            }
        }
        // Key order matters to people, not to the comparison.
        if !same(&expected, &plain(&after.root)) {
            return Err(Rejected::Unintended);
        }
    }
    Ok(stream)
}

fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_respect_crlf() {
        let text = "a: 1\r\nb: 2";
        assert_eq!(line_end(text, 0), 4);
        assert_eq!(line_end(text, 6), text.len());
        assert_eq!(newline(text), "\r\n");
    }

    #[test]
    fn lone_carriage_returns_are_line_breaks() {
        let text = "a: 1\r  b: 2\r";
        assert_eq!(newline(text), "\r");
        assert_eq!(line_end(text, 0), 4);
        assert_eq!(column(text, 7), 2);
    }

    #[test]
    fn scalars_keep_their_style() {
        assert_eq!(render_scalar("2", ScalarStyle::Plain), "2");
        assert_eq!(render_scalar("2", ScalarStyle::DoubleQuoted), "\"2\"");
        assert_eq!(render_scalar("2", ScalarStyle::SingleQuoted), "'2'");
        assert_eq!(render_scalar("a b", ScalarStyle::Plain), "\"a b\"");
    }

    #[test]
    fn verification_accepts_exactly_the_intended_change() {
        let text = "a: &x {n: 1}\nb: *x\nc: 2\n";
        let original = Stream::parse(text);
        let fix = Fix {
            edits: vec![Edit {
                start: 22,
                end: 23,
                content: "3".into(),
            }],
            source: SourceId::LOCAL,
            applicability: Applicability::Safe,
            document: 0,
            changes: vec![FieldChange::Set {
                path: vec![Segment::Key("c".into())],
                value: "3".into(),
            }],
            description: String::new(),
            notes: Vec::new(),
        };
        let fixed = apply(text, &fix.edits).unwrap();
        assert_eq!(fixed, "a: &x {n: 1}\nb: *x\nc: 3\n");
        assert!(verify(&original, &fixed, &[&fix]).is_ok());
        // Editing the anchor changes the alias too: not only the intended field.
        let through_anchor = Fix {
            edits: vec![Edit {
                start: 9,
                end: 10,
                content: "5".into(),
            }],
            changes: vec![FieldChange::Set {
                path: vec![Segment::Key("a".into()), Segment::Key("n".into())],
                value: "5".into(),
            }],
            ..fix.clone()
        };
        let fixed = apply(text, &through_anchor.edits).unwrap();
        assert_eq!(
            verify(&original, &fixed, &[&through_anchor]).unwrap_err(),
            Rejected::Unintended
        );
        assert!(matches!(
            verify(&original, "a: [", &[&fix]),
            Err(Rejected::Unparsable(_))
        ));
    }
}
