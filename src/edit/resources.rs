//! Fixes on a container's `resources`: set a quantity in `requests` or `limits`, in place when
//! the key exists, else inserted in the style of its siblings (block or flow, quoting,
//! indentation, line endings), creating the `requests:`/`limits:` mapping when it is missing or
//! written empty (`limits:`, `limits: null`, `limits: {}`).

use super::{
    column, line_end, newline, render_scalar, sibling_style, Applicability, ChangeNote, Edit,
    FieldChange, Fix,
};
use crate::k8s::workload::{Container, ResourceList};
use crate::source::document::{parse_path, Segment};
use crate::source::yaml::{Node, ScalarStyle, SourceId, Value};

pub use crate::k8s::workload::Side;

/// Where an edit lands: the text and the document it belongs to.
pub struct Target<'t> {
    /// The text of the linted file (nodes tagged `SourceId::LOCAL`).
    pub text: &'t str,
    pub document: usize,
    /// For a rendered object: the texts of the run's files by index, so an edit lands in the
    /// file that wrote the field. Empty for a plain file.
    pub files: &'t [std::sync::Arc<str>],
}

impl<'t> Target<'t> {
    /// A plain file's target.
    pub fn local(text: &'t str, document: usize) -> Target<'t> {
        Target {
            text,
            document,
            files: &[],
        }
    }

    fn rendered(&self) -> bool {
        !self.files.is_empty()
    }

    /// The text a node tagged `source` was written in.
    pub(crate) fn text_of(&self, source: SourceId) -> Option<&'t str> {
        match source.index() {
            None => Some(self.text),
            Some(i) => self.files.get(i).map(|t| &**t),
        }
    }
}

/// The one file every node under `node` was written in, if there is one.
fn single_source(node: &Node) -> Option<SourceId> {
    fn walk(node: &Node, source: SourceId) -> bool {
        node.span.source == source
            && match &node.value {
                Value::Scalar(_) => true,
                Value::Seq(items) => items.iter().all(|n| walk(n, source)),
                Value::Map(entries) => entries
                    .iter()
                    .all(|e| walk(&e.key, source) && walk(&e.value, source)),
            }
    }
    walk(node, node.span.source).then_some(node.span.source)
}

fn field_path(c: &Container, side: Side, name: &str) -> Option<Vec<Segment>> {
    let mut path = parse_path(&c.path)?;
    path.push(Segment::Key("resources".into()));
    path.push(Segment::Key(side.key().into()));
    path.push(Segment::Key(name.into()));
    Some(path)
}

/// Inserts `key: value` as a new last entry of a non-empty mapping, in its style.
fn insert_entry(text: &str, mapping: &Node, key: &str, value: &str) -> Option<Edit> {
    let entries = mapping.as_map()?;
    let last = entries.last()?;
    if mapping.flow {
        return Some(Edit {
            start: last.value.span.end(),
            end: last.value.span.end(),
            content: format!(", {key}: {value}"),
        });
    }
    let first = entries.first()?;
    let indent = column(text, first.key.span.start());
    // A key that does not start its line (`- name: x`) cannot tell the indentation.
    let prefix = text.get(first.key.span.start() - indent..first.key.span.start())?;
    if !prefix.chars().all(|c| c == ' ') {
        return None;
    }
    let at = line_end(text, last.value.span.end().max(last.key.span.end()));
    Some(Edit {
        start: at,
        end: at,
        content: format!("{}{}{key}: {value}", newline(text), " ".repeat(indent)),
    })
}

/// Sets `resources.<side>.<name>` of a container to `value`.
pub fn set_quantity(
    target: &Target,
    c: &Container,
    side: Side,
    name: &str,
    value: &str,
    style: ScalarStyle,
    applicability: Applicability,
) -> Option<Fix> {
    let this = c.resources.list(side);
    let old = this
        .get(name)
        .and_then(|q| q.value.text())
        .unwrap_or("(none)")
        .to_string();
    let path = field_path(c, side, name)?;
    let note = ChangeNote {
        path: path.clone(),
        label: format!("{}.{name}", side.key()),
        from: old,
        to: value.to_string(),
    };
    let mut fix = Fix {
        edits: Vec::new(),
        source: SourceId::LOCAL,
        applicability,
        document: target.document,
        changes: vec![FieldChange::Set {
            path,
            value: value.to_string(),
        }],
        description: note.describe(),
        notes: vec![note],
    };
    match quantity_edit(target, c, side, name, value, style) {
        Some((source, edit)) => {
            fix.source = source;
            fix.edits.push(edit);
            Some(fix)
        }
        // A rendered object's field without one editable origin: the fix planner writes it as
        // an overlay patch (or reports it).
        None if target.rendered() => Some(fix),
        None => None,
    }
}

/// The edit setting `resources.<side>.<name>`, and the file it applies to.
fn quantity_edit(
    target: &Target,
    c: &Container,
    side: Side,
    name: &str,
    value: &str,
    style: ScalarStyle,
) -> Option<(SourceId, Edit)> {
    let resources = c.resources.node?;
    if resources.via_alias || c.node.via_alias {
        return None;
    }
    let this = c.resources.list(side);
    if let Some(existing) = this.get(name) {
        // A value is replaced where it was written, whichever file that is.
        if existing.value.via_alias {
            return None;
        }
        target.text_of(existing.value.span.source)?;
        let style = existing.value.as_scalar().map_or(style, |s| s.style);
        let edit = Edit {
            start: existing.value.span.start(),
            end: existing.value.span.end(),
            content: render_scalar(value, style),
        };
        return Some((existing.value.span.source, edit));
    }
    // An insertion reads the indentation of its neighbours: they must all come from one file (a
    // `resources` merged from a base and a patch has no single place to insert into).
    let source = single_source(resources)?;
    let text = target.text_of(source)?;
    let edit = if let Some(mapping) = this
        .node
        .filter(|n| n.as_map().is_some_and(|m| !m.is_empty()))
    {
        if mapping.via_alias {
            return None;
        }
        let style = match sibling_style(Some(mapping)) {
            ScalarStyle::Plain => style,
            quoted => quoted,
        };
        insert_entry(text, mapping, name, &render_scalar(value, style))?
    } else if let (Some(mapping), true) = (this.node, this.node.is_some_and(|n| n.flow)) {
        // An empty flow mapping: `limits: {}`.
        Edit {
            start: mapping.span.start(),
            end: mapping.span.end(),
            content: format!("{{{name}: {}}}", render_scalar(value, style)),
        }
    } else if this.node.is_none() {
        create_list(text, c, side, name, &render_scalar(value, style))?
    } else if let (Some(key), Some(mapping)) = (this.key, this.node.filter(|n| n.is_null())) {
        // `limits:` or `limits: null`, left by a template or a hand edit: filled in place.
        let entry = format!("{name}: {}", render_scalar(value, style));
        if resources.flow {
            fill_null_flow(mapping, &format!("{{{entry}}}"))?
        } else {
            let step = child_step(text, c.resources.list(side.other())).unwrap_or(2);
            fill_null(text, key, mapping, step, &entry)?
        }
    } else {
        return None;
    };
    Some((source, edit))
}

/// How much deeper than its key a block list's entries are indented, when `list` shows it.
fn child_step(text: &str, list: &ResourceList) -> Option<usize> {
    let key = list.key?;
    let child = list.node.filter(|m| !m.flow)?.as_map()?.first()?;
    let (key_column, child_column) = (
        column(text, key.span.start()),
        column(text, child.key.span.start()),
    );
    (child_column > key_column).then(|| child_column - key_column)
}

/// Replaces a null value inside a flow mapping (`{limits: null}`) with `content`.
fn fill_null_flow(value: &Node, content: &str) -> Option<Edit> {
    // An empty value in a flow mapping (`{limits: }`) has no place of its own to edit.
    (!value.span.is_empty()).then(|| Edit {
        start: value.span.start(),
        end: value.span.end(),
        content: content.to_string(),
    })
}

/// Gives a null block value (`key:`, `key: null`, `key: ~`) a block mapping of one `entry`,
/// indented `deeper` than the key. A comment after the value stays on the key's line.
fn fill_null(text: &str, key: &Node, value: &Node, deeper: usize, entry: &str) -> Option<Edit> {
    let key_end = key.span.end();
    let end = line_end(text, key_end);
    // The value must be on the key's line (or empty): `key:` then the value, then a comment.
    let rest = text.get(key_end..end)?;
    let after_colon = rest.trim_start().strip_prefix(':')?;
    let tail = if value.span.is_empty() {
        after_colon
    } else {
        if value.span.start() < key_end || value.span.end() > end {
            return None;
        }
        // Only `key: null`: an anchor or a tag before the value would be dropped with it.
        let colon = key_end + rest.find(':')? + 1;
        if !text.get(colon..value.span.start())?.trim().is_empty() {
            return None;
        }
        text.get(value.span.end()..end)?
    };
    let comment = tail.trim();
    if !(comment.is_empty() || comment.starts_with('#')) {
        return None;
    }
    let indent = column(text, key.span.start());
    let mut content = String::from(":");
    if !comment.is_empty() {
        content.push(' ');
        content.push_str(comment);
    }
    content.push_str(newline(text));
    content.push_str(&" ".repeat(indent + deeper));
    content.push_str(entry);
    // From the key's end: `: null # c` becomes `: # c` and the new entries follow.
    let start = key_end + (rest.len() - rest.trim_start().len());
    Some(Edit {
        start,
        end,
        content,
    })
}

/// Adds a missing `requests:`/`limits:` mapping to `resources`, shaped like its sibling.
fn create_list(text: &str, c: &Container, side: Side, name: &str, value: &str) -> Option<Edit> {
    let resources = c.resources.node?;
    let sibling = c.resources.list(side.other()).node;
    let key = side.key();
    let entries = resources.as_map()?;
    if resources.flow || entries.is_empty() {
        if entries.is_empty() && resources.flow {
            return Some(Edit {
                start: resources.span.start(),
                end: resources.span.end(),
                content: format!("{{{key}: {{{name}: {value}}}}}"),
            });
        }
        let last = entries.last()?;
        return Some(Edit {
            start: last.value.span.end(),
            end: last.value.span.end(),
            content: format!(", {key}: {{{name}: {value}}}"),
        });
    }
    let first = entries.first()?;
    let indent = column(text, first.key.span.start());
    let body = match sibling {
        Some(s) if s.flow => format!(" {{{name}: {value}}}"),
        Some(s) => {
            let child = s.as_map().and_then(|m| m.first())?;
            let child_indent = column(text, child.key.span.start());
            if child_indent <= indent {
                return None;
            }
            format!(
                "{}{}{name}: {value}",
                newline(text),
                " ".repeat(child_indent)
            )
        }
        None => format!("{}{}{name}: {value}", newline(text), " ".repeat(indent + 2)),
    };
    let last = entries.last()?;
    let at = line_end(text, last.value.span.end().max(last.key.span.end()));
    Some(Edit {
        start: at,
        end: at,
        content: format!("{}{}{key}:{body}", newline(text), " ".repeat(indent)),
    })
}

/// Renames a resource key (GPU004's typo fix) in both requests and limits.
pub fn rename_resource(target: &Target, c: &Container, from: &str, to: &str) -> Option<Fix> {
    let source = single_source(c.resources.node?)?;
    target.text_of(source)?;
    let mut edits = Vec::new();
    let mut changes = Vec::new();
    for side in [Side::Requests, Side::Limits] {
        if let Some(q) = c.resources.list(side).get(from) {
            if q.key.via_alias || c.resources.list(side).get(to).is_some() {
                return None;
            }
            edits.push(Edit {
                start: q.key.span.start(),
                end: q.key.span.end(),
                content: render_scalar(to, ScalarStyle::Plain),
            });
            changes.push(FieldChange::Rename {
                path: field_path(c, side, from)?,
                to: to.to_string(),
            });
        }
    }
    (!edits.is_empty()).then(|| Fix {
        edits,
        source,
        applicability: Applicability::Unsafe,
        document: target.document,
        changes,
        description: format!("rename {from} -> {to}"),
        notes: Vec::new(),
    })
}
