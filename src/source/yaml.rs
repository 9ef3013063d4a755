//! A span-aware YAML tree built from granit-parser events.
//!
//! Every node keeps the byte range it was written at, so findings point at the exact text and fixes
//! can be byte-range edits on the original file. Aliases are expanded by copying the anchored
//! subtree (marked `via_alias`, so the fixer never edits through them), under a node budget that
//! stops alias bombs. Comments are kept per line for suppression comments.

use std::collections::HashMap;
use std::sync::Arc;

use granit_parser::{Event, Parser, ScalarStyle as GranitStyle, StructureStyle};

/// Maximum nesting of collections; granit-parser enforces the same bound while scanning.
const MAX_DEPTH: usize = 200;
/// Alias expansion may add at most this many nodes beyond the ones written, per file (all its
/// documents together: a budget per document would let 2,000 small documents expand to 8 GB).
const ALIAS_NODE_BUDGET: usize = 100_000;
/// And at most this many in the whole process (one run), so many files each just under the
/// per-file budget cannot add up to gigabytes either.
pub const RUN_ALIAS_NODE_BUDGET: usize = 2_000_000;

/// Alias nodes expanded so far in this process.
static RUN_ALIAS_NODES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Which loaded file a node was written in.
///
/// A freshly parsed stream's nodes are `LOCAL`: they belong to the stream they were parsed from.
/// Renderers (Kustomize, Helm) build objects out of several files; the nodes they copy are
/// re-tagged with the run's file index, so a finding on a rendered field lands in the file (and
/// at the bytes) that wrote it, and a fix edits that file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(u32);

impl Default for SourceId {
    fn default() -> Self {
        SourceId::LOCAL
    }
}

impl SourceId {
    pub const LOCAL: SourceId = SourceId(u32::MAX);
    /// In no file of the run: a node built from what another object says (a KServe serving
    /// runtime's container merged into a model); no file's text is read at its span.
    pub const NOWHERE: SourceId = SourceId(u32::MAX - 1);

    /// The file with this index in the run's file list.
    pub fn file(index: usize) -> SourceId {
        SourceId(
            u32::try_from(index)
                .unwrap_or(u32::MAX - 2)
                .min(u32::MAX - 2),
        )
    }

    /// The run's file index, or `None` for a local node.
    pub fn index(self) -> Option<usize> {
        (self != SourceId::LOCAL).then_some(self.0 as usize)
    }
}

/// A half-open byte range in a source text, and the file it is in.
///
/// Offsets are `u32` so a [`Node`] stays small (the parse trees of a whole repository are kept
/// for the run); [`Stream::parse`] refuses texts of 4 GiB or more with an error instead, so every
/// offset in a tree fits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    pub source: SourceId,
}

/// The largest text [`Stream::parse`] builds a tree for: every byte offset must fit a [`Span`].
pub const MAX_TEXT_LEN: usize = u32::MAX as usize;

/// A byte offset as a span stores it; offsets past [`MAX_TEXT_LEN`] (which no parsed tree has)
/// saturate instead of wrapping.
pub fn offset32(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

/// A byte offset into a text: a `usize`, or a [`Span`]'s `u32`.
pub trait Offset: Copy {
    fn to_usize(self) -> usize;
}

impl Offset for usize {
    fn to_usize(self) -> usize {
        self
    }
}

impl Offset for u32 {
    fn to_usize(self) -> usize {
        self as usize
    }
}

impl Span {
    /// A span in the local file.
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: offset32(start),
            end: offset32(end),
            source: SourceId::LOCAL,
        }
    }

    /// The start offset as an index into the text.
    pub fn start(self) -> usize {
        self.start as usize
    }

    /// The end offset as an index into the text.
    pub fn end(self) -> usize {
        self.end as usize
    }

    /// The byte range, to index the text with.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start()..self.end()
    }

    /// The empty span at this span's start, in the same file.
    pub fn at_start(self) -> Span {
        Span {
            end: self.start,
            ..self
        }
    }

    /// The index of the file the span is in: its source, or `local` for a local span.
    pub fn file_or(self, local: usize) -> usize {
        self.source.index().unwrap_or(local)
    }

    pub fn len(self) -> usize {
        self.end.saturating_sub(self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// How a scalar was written; the fixer keeps the style when it replaces a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// The YAML 1.2 core-schema type of a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

#[derive(Clone, Debug)]
pub struct Scalar {
    /// The value after escape processing (quotes removed).
    pub text: String,
    pub style: ScalarStyle,
    pub kind: ScalarKind,
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

#[derive(Clone, Debug)]
pub enum Value {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    /// Flow style (`{a: 1}` / `[1]`) for collections.
    pub flow: bool,
    /// The node is a copy made by expanding an alias: its span points at the anchor's text.
    pub via_alias: bool,
}

impl Default for Node {
    fn default() -> Self {
        Node::scalar("", ScalarKind::Null)
    }
}

impl Node {
    /// A synthetic scalar (used by JSONPath literals); it has no position in any file.
    pub fn scalar(text: &str, kind: ScalarKind) -> Self {
        Node {
            value: Value::Scalar(Scalar {
                text: text.to_string(),
                style: ScalarStyle::Plain,
                kind,
            }),
            span: Span::default(),
            flow: false,
            via_alias: false,
        }
    }

    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar text of any non-null scalar (numbers and booleans included).
    pub fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if s.kind != ScalarKind::Null => Some(&s.text),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(s) if s.kind == ScalarKind::Null)
    }

    /// The entry whose key is `key` in a mapping.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?
            .iter()
            .find(|e| e.key.as_scalar().is_some_and(|s| s.text == key))
    }

    /// The value under `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// Follows a chain of mapping keys.
    pub fn get_path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The string under `key`, if it is a non-null scalar.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key)?.text()
    }

    /// Tags this node and everything under it as written in file `source`.
    pub fn set_source(&mut self, source: SourceId) {
        self.span.source = source;
        match &mut self.value {
            Value::Scalar(_) => {}
            Value::Seq(items) => items.iter_mut().for_each(|n| n.set_source(source)),
            Value::Map(entries) => entries.iter_mut().for_each(|e| {
                e.key.set_source(source);
                e.value.set_source(source);
            }),
        }
    }
}

/// A comment and the line (1-based) it sits on.
#[derive(Clone, Debug)]
pub struct Comment {
    pub line: usize,
    pub text: String,
}

/// One YAML document of a file.
#[derive(Clone, Debug)]
pub struct Document {
    pub root: Node,
}

/// A parse error at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// Line starts of a text, to turn byte offsets into 1-based line and column.
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// `u32` like [`Span`]'s offsets (a text past 4 GiB, which gets no tree, saturates).
    starts: Vec<u32>,
}

impl LineIndex {
    /// Line breaks as YAML counts them: `\n`, `\r\n`, and a lone `\r`.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0u32];
        for (i, b) in bytes.iter().enumerate() {
            let lone_cr = *b == b'\r' && bytes.get(i + 1) != Some(&b'\n');
            if *b == b'\n' || lone_cr {
                starts.push(offset32(i + 1));
            }
        }
        starts.shrink_to_fit();
        LineIndex { starts }
    }

    /// 1-based line and 1-based column (in characters) of a byte offset.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self
            .starts
            .partition_point(|&s| s as usize <= offset)
            .max(1);
        let start = self.starts[line - 1] as usize;
        let column = text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        (line, column)
    }

    /// Byte offset of the start of a 1-based line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).map(|&s| s as usize)
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

/// A parsed YAML stream: every complete document, the comments, and the first error if any.
#[derive(Clone, Debug)]
pub struct Stream {
    pub text: Arc<str>,
    pub lines: LineIndex,
    pub documents: Vec<Document>,
    pub comments: Vec<Comment>,
    pub error: Option<ParseError>,
}

impl Stream {
    /// Parses bytes: invalid UTF-8 is an error at the first bad byte.
    pub fn parse_bytes(bytes: &[u8]) -> Stream {
        match std::str::from_utf8(bytes) {
            Ok(text) => Stream::parse(text),
            Err(e) => {
                let valid = e.valid_up_to();
                let text: Arc<str> = String::from_utf8_lossy(bytes).into();
                Stream {
                    lines: LineIndex::new(&text),
                    text,
                    documents: Vec::new(),
                    comments: Vec::new(),
                    error: Some(ParseError {
                        offset: valid,
                        message: format!("invalid UTF-8 at byte offset {valid}"),
                    }),
                }
            }
        }
    }

    pub fn parse(text: &str) -> Stream {
        let (documents, comments, error) = build(text);
        Stream {
            text: text.into(),
            lines: LineIndex::new(text),
            documents,
            comments,
            error,
        }
    }

    /// 1-based line and column of a byte offset (a `usize`, or a span's `u32`).
    pub fn line_col(&self, offset: impl Offset) -> (usize, usize) {
        self.lines.line_col(&self.text, offset.to_usize())
    }

    /// Tags every node as written in file `source` (see [`SourceId`]).
    pub fn set_source(&mut self, source: SourceId) {
        for doc in &mut self.documents {
            doc.root.set_source(source);
        }
    }
}

enum Frame {
    Seq {
        start: usize,
        flow: bool,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: usize,
        flow: bool,
        anchor: usize,
        entries: Vec<Entry>,
        key: Option<Node>,
        /// Scalar keys seen so far and where, to refuse duplicates.
        keys: HashMap<String, usize>,
    },
}

/// A key written twice in one mapping: its text and both offsets.
struct DuplicateKey {
    key: String,
    first: usize,
    second: usize,
}

struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    /// Completed anchored nodes by anchor id, with their node counts.
    anchors: HashMap<usize, (Node, usize)>,
    alias_nodes: usize,
    duplicate: Option<DuplicateKey>,
}

fn count_nodes(node: &Node) -> usize {
    1 + match &node.value {
        Value::Scalar(_) => 0,
        Value::Seq(items) => items.iter().map(count_nodes).sum(),
        Value::Map(entries) => entries
            .iter()
            .map(|e| count_nodes(&e.key) + count_nodes(&e.value))
            .sum(),
    }
}

fn mark_alias(node: &mut Node) {
    node.via_alias = true;
    match &mut node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(mark_alias),
        Value::Map(entries) => entries.iter_mut().for_each(|e| {
            mark_alias(&mut e.key);
            mark_alias(&mut e.value);
        }),
    }
}

impl Builder {
    fn new() -> Self {
        Builder {
            stack: Vec::new(),
            root: None,
            anchors: HashMap::new(),
            alias_nodes: 0,
            duplicate: None,
        }
    }

    fn complete(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            let size = count_nodes(&node);
            self.anchors.insert(anchor, (node.clone(), size));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries, key, keys, ..
            }) => match key.take() {
                None => {
                    // Strict decoding (the API server's, kubectl's): a second `limits:` must not
                    // silently hide the first.
                    if let Value::Scalar(s) = &node.value {
                        let at = node.span.start as usize;
                        if let Some(&first) = keys.get(&s.text) {
                            if self.duplicate.is_none() {
                                self.duplicate = Some(DuplicateKey {
                                    key: s.text.clone(),
                                    first,
                                    second: at,
                                });
                            }
                        } else {
                            keys.insert(s.text.clone(), at);
                        }
                    }
                    *key = Some(node)
                }
                Some(k) => entries.push(Entry {
                    key: k,
                    value: node,
                }),
            },
        }
    }

    fn push(&mut self, frame: Frame) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        self.stack.push(frame);
        Ok(())
    }

    fn alias(&mut self, id: usize, span: Span) -> Result<(), String> {
        let Some((_, size)) = self.anchors.get(&id) else {
            return Err("alias to an unknown anchor".to_string());
        };
        let size = *size;
        self.alias_nodes += size;
        if self.alias_nodes > ALIAS_NODE_BUDGET {
            return Err(format!(
                "aliases expand to more than {ALIAS_NODE_BUDGET} nodes in this file (possible alias bomb)"
            ));
        }
        let run = RUN_ALIAS_NODES.fetch_add(size, std::sync::atomic::Ordering::Relaxed) + size;
        if run > RUN_ALIAS_NODE_BUDGET {
            return Err(format!(
                "aliases expand to more than {RUN_ALIAS_NODE_BUDGET} nodes across the files of this run \
                 (possible alias bomb)"
            ));
        }
        let Some((node, _)) = self.anchors.get(&id) else {
            return Err("alias to an unknown anchor".to_string());
        };
        let mut copy = node.clone();
        mark_alias(&mut copy);
        // The alias itself is where the value is used: keep its own position for the root.
        copy.span = span;
        self.complete(copy, 0);
        Ok(())
    }

    fn end_collection(&mut self, end: usize) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let (value, start, flow, anchor) = match frame {
            Frame::Seq {
                start,
                flow,
                anchor,
                items,
            } => (Value::Seq(shrunk(items)), start, flow, anchor),
            Frame::Map {
                start,
                flow,
                anchor,
                mut entries,
                key,
                ..
            } => {
                // A key without a value (only possible in malformed streams) maps to null.
                if let Some(k) = key {
                    let at = k.span.end();
                    let mut null = Node::scalar("", ScalarKind::Null);
                    null.span = Span::new(at, at);
                    entries.push(Entry {
                        key: k,
                        value: null,
                    });
                }
                (Value::Map(shrunk(entries)), start, flow, anchor)
            }
        };
        // Block collections end where their last child ends; the parser's end event sits at the
        // next token, which may be lines later, past comments.
        let end = if flow {
            end
        } else {
            last_end(&value).unwrap_or(start)
        };
        let node = Node {
            value,
            span: Span::new(start, end.max(start)),
            flow,
            via_alias: false,
        };
        self.complete(node, anchor);
    }
}

/// A finished collection without its growth slack: the trees live for the whole run.
fn shrunk<T>(mut items: Vec<T>) -> Vec<T> {
    items.shrink_to_fit();
    items
}

fn last_end(value: &Value) -> Option<usize> {
    match value {
        Value::Scalar(_) => None,
        Value::Seq(items) => items.last().map(|n| n.span.end()),
        Value::Map(entries) => entries
            .last()
            .map(|e| e.value.span.end().max(e.key.span.end())),
    }
}

pub(crate) fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarKind::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return ScalarKind::Bool,
        ".inf" | "-.inf" | "+.inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN" => {
            return ScalarKind::Float
        }
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return ScalarKind::Int;
    }
    if let Some(hex) = text.strip_prefix("0x") {
        if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return ScalarKind::Int;
        }
    }
    if let Some(oct) = text.strip_prefix("0o") {
        if !oct.is_empty() && oct.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return ScalarKind::Int;
        }
    }
    let looks_float = digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && digits.parse::<f64>().is_ok();
    if looks_float {
        ScalarKind::Float
    } else {
        ScalarKind::Str
    }
}

fn offset(marker: &granit_parser::Marker) -> usize {
    marker.byte_offset().unwrap_or(marker.index())
}

type Built = (Vec<Document>, Vec<Comment>, Option<ParseError>);

/// The error for a text too large for [`Span`]'s `u32` offsets (4 GiB or more).
fn too_large(len: usize) -> Option<ParseError> {
    (len > MAX_TEXT_LEN).then(|| ParseError {
        offset: 0,
        message: format!(
            "file too large: {len} bytes; gpulint reads YAML files under 4 GiB ({MAX_TEXT_LEN} bytes at most)"
        ),
    })
}

fn build(text: &str) -> Built {
    if let Some(error) = too_large(text.len()) {
        return (Vec::new(), Vec::new(), Some(error));
    }
    let options = granit_parser::options! { emit_comments: true };
    let mut documents = Vec::new();
    let mut comments = Vec::new();
    let mut builder = Builder::new();
    for next in Parser::new_from_str_with_options(text, options) {
        let (event, span) = match next {
            Ok(pair) => pair,
            Err(e) => {
                let error = ParseError {
                    offset: offset(e.marker()),
                    message: e.info(),
                };
                return (documents, comments, Some(error));
            }
        };
        let start = offset(&span.start);
        let end = offset(&span.end);
        let result = match event {
            Event::Comment(body, _) => {
                comments.push(Comment {
                    line: span.start.line(),
                    text: body.into_owned(),
                });
                Ok(())
            }
            Event::DocumentStart(..) => {
                // The alias budget is the file's, not the document's.
                let spent = builder.alias_nodes;
                builder = Builder::new();
                builder.alias_nodes = spent;
                Ok(())
            }
            Event::DocumentEnd => {
                // An empty document (only comments, or a bare `---`) holds no object.
                if let Some(root) = builder.root.take().filter(|r| !r.is_null()) {
                    documents.push(Document { root });
                }
                Ok(())
            }
            Event::Scalar(value, style, anchor, _) => {
                let style = match style {
                    GranitStyle::Plain => ScalarStyle::Plain,
                    GranitStyle::SingleQuoted => ScalarStyle::SingleQuoted,
                    GranitStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
                    GranitStyle::Literal => ScalarStyle::Literal,
                    GranitStyle::Folded => ScalarStyle::Folded,
                };
                let kind = if style == ScalarStyle::Plain {
                    resolve_plain(&value)
                } else {
                    ScalarKind::Str
                };
                let node = Node {
                    value: Value::Scalar(Scalar {
                        text: value.into_owned(),
                        style,
                        kind,
                    }),
                    span: Span::new(start, end),
                    flow: false,
                    via_alias: false,
                };
                builder.complete(node, anchor);
                Ok(())
            }
            Event::SequenceStart(style, anchor, _) => builder.push(Frame::Seq {
                start,
                flow: style == StructureStyle::Flow,
                anchor,
                items: Vec::new(),
            }),
            Event::MappingStart(style, anchor, _) => builder.push(Frame::Map {
                start,
                flow: style == StructureStyle::Flow,
                anchor,
                entries: Vec::new(),
                key: None,
                keys: HashMap::new(),
            }),
            Event::SequenceEnd | Event::MappingEnd => {
                builder.end_collection(end);
                Ok(())
            }
            Event::Alias(id) => builder.alias(id, Span::new(start, end)),
            Event::UnresolvedAlias(_) => Err("alias to an unknown anchor".to_string()),
            // Stream markers and anchor metadata carry nothing the tree needs.
            _ => Ok(()),
        };
        let result =
            result
                .map_err(BuildError::from)
                .and_then(|()| match builder.duplicate.take() {
                    None => Ok(()),
                    Some(d) => Err(duplicate_key_error(text, d)),
                });
        if let Err((offset, message)) = result.map_err(|e| e.located(start)) {
            return (documents, comments, Some(ParseError { offset, message }));
        }
    }
    (documents, comments, None)
}

/// The byte offset of the first node written with an explicit tag (`!!binary`, `!!merge`,
/// `!local`), if any: the tree drops tags, so a reader that must see what another YAML library
/// sees (the Kustomize fallback's check) refuses them. A text that does not parse has none here.
pub fn first_tag(text: &str) -> Option<usize> {
    for next in Parser::new_from_str(text) {
        let Ok((event, span)) = next else {
            return None;
        };
        match event {
            Event::Scalar(_, _, _, Some(_))
            | Event::SequenceStart(_, _, Some(_))
            | Event::MappingStart(_, _, Some(_)) => return Some(offset(&span.start)),
            _ => {}
        }
    }
    None
}

/// A build error: a message at the current event, or one with its own offset.
enum BuildError {
    Here(String),
    At(usize, String),
}

impl From<String> for BuildError {
    fn from(message: String) -> Self {
        BuildError::Here(message)
    }
}

impl BuildError {
    fn located(self, here: usize) -> (usize, String) {
        match self {
            BuildError::Here(message) => (here, message),
            BuildError::At(offset, message) => (offset, message),
        }
    }
}

fn duplicate_key_error(text: &str, d: DuplicateKey) -> BuildError {
    let lines = LineIndex::new(text);
    let (first, _) = lines.line_col(text, d.first);
    let (second, _) = lines.line_col(text, d.second);
    BuildError::At(
        d.second,
        format!(
            "duplicate mapping key '{}' at line {second} (first at line {first}); \
             the API server rejects it",
            d.key
        ),
    )
}

/// Appends a member name to an RFC 9535 normalized path (`$['spec']['containers'][0]`).
pub fn push_name(path: &mut String, name: &str) {
    path.push_str("['");
    for c in name.chars() {
        match c {
            '\'' => path.push_str("\\'"),
            '\\' => path.push_str("\\\\"),
            '\u{08}' => path.push_str("\\b"),
            '\u{0C}' => path.push_str("\\f"),
            '\n' => path.push_str("\\n"),
            '\r' => path.push_str("\\r"),
            '\t' => path.push_str("\\t"),
            c if (c as u32) < 0x20 => path.push_str(&format!("\\u{:04x}", c as u32)),
            c => path.push(c),
        }
    }
    path.push_str("']");
}

/// Appends an array index to a normalized path.
pub fn push_index(path: &mut String, index: usize) {
    path.push('[');
    path.push_str(&index.to_string());
    path.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice<'a>(text: &'a str, node: &Node) -> &'a str {
        &text[node.span.range()]
    }

    #[test]
    fn spans_point_at_the_written_text() {
        let text = "a: 1\nb:\tx\nc:\n  d: \"q\" # note\n  e: [1, 2]\n";
        let s = Stream::parse(text);
        assert_eq!(s.error, None);
        let root = &s.documents[0].root;
        assert_eq!(slice(text, root.get("a").unwrap()), "1");
        assert_eq!(
            root.get_str("b"),
            Some("x"),
            "a tab after the colon is valid YAML"
        );
        let c = root.get("c").unwrap();
        assert_eq!(slice(text, c.get("d").unwrap()), "\"q\"");
        assert_eq!(slice(text, c.get("e").unwrap()), "[1, 2]");
        assert_eq!(slice(text, c), "d: \"q\" # note\n  e: [1, 2]");
        assert_eq!(s.comments.len(), 1);
        assert_eq!(s.comments[0].line, 4);
        assert_eq!(s.comments[0].text, " note");
    }

    #[test]
    fn multi_document_streams_keep_every_document() {
        let s = Stream::parse("a: 1\n---\nb: 2\n---\n# only a comment\n");
        assert_eq!(s.documents.len(), 2);
        assert_eq!(s.documents[1].root.get_str("b"), Some("2"));
    }

    #[test]
    fn aliases_are_copies_marked_as_such() {
        let s = Stream::parse("a: &r {cpu: 1}\nb: *r\n");
        let root = &s.documents[0].root;
        let b = root.get("b").unwrap();
        assert!(b.via_alias);
        assert_eq!(b.get_str("cpu"), Some("1"));
        assert!(!root.get("a").unwrap().via_alias);
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let s = Stream::parse(&text);
        let err = s.error.expect("an alias bomb must be an error");
        assert!(err.message.contains("alias bomb"), "{}", err.message);
    }

    #[test]
    fn errors_carry_offsets_and_keep_earlier_documents() {
        let text = "a: 1\n---\nb: [1, 2\n";
        let s = Stream::parse(text);
        assert_eq!(s.documents.len(), 1);
        let err = s.error.clone().unwrap();
        assert!(s.line_col(err.offset).0 >= 3, "{err:?}");
    }

    #[test]
    fn invalid_utf8_reports_its_byte_offset() {
        let s = Stream::parse_bytes(b"a: 1\nb: \xff\n");
        let err = s.error.clone().unwrap();
        assert_eq!(err.offset, 8);
        assert_eq!(s.line_col(err.offset), (2, 4));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(5000);
        let s = Stream::parse(&text);
        assert!(s.error.is_some());
    }

    #[test]
    fn plain_scalars_resolve_like_yaml_1_2() {
        for (text, kind) in [
            ("1", ScalarKind::Int),
            ("-3", ScalarKind::Int),
            ("1.5", ScalarKind::Float),
            ("1e3", ScalarKind::Float),
            ("500m", ScalarKind::Str),
            ("~", ScalarKind::Null),
            ("true", ScalarKind::Bool),
            ("1Gi", ScalarKind::Str),
        ] {
            assert_eq!(resolve_plain(text), kind, "{text}");
        }
    }

    #[test]
    fn line_col_counts_characters() {
        let text = "é: x\nab: y\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 4), (1, 4));
        assert_eq!(idx.line_col(text, 6), (2, 1));
    }

    #[test]
    fn lone_carriage_returns_break_lines_like_the_parser() {
        let text = "a: 1\r# c\rb: 2\r\nc: 3\n";
        let s = Stream::parse(text);
        assert_eq!(s.comments[0].line, 2);
        let b = s.documents[0].root.entry("b").unwrap();
        assert_eq!(s.line_col(b.key.span.start), (3, 1));
        let c = s.documents[0].root.entry("c").unwrap();
        assert_eq!(s.line_col(c.key.span.start), (4, 1));
    }

    #[test]
    fn normalized_paths_escape_quotes() {
        let mut p = String::from("$");
        push_name(&mut p, "it's");
        push_index(&mut p, 2);
        assert_eq!(p, "$['it\\'s'][2]");
    }

    /// The trees of every file live for the whole run (10,000 manifests are about 3 million
    /// nodes): a bigger `Node` costs memory in proportion. Change these with a measurement.
    #[test]
    fn node_layout_stays_compact() {
        assert_eq!(std::mem::size_of::<Span>(), 12);
        assert_eq!(std::mem::size_of::<Node>(), 48);
        assert_eq!(std::mem::size_of::<Entry>(), 96);
    }

    #[test]
    fn texts_of_4_gib_or_more_are_an_error() {
        assert!(too_large(MAX_TEXT_LEN).is_none());
        let e = too_large(MAX_TEXT_LEN + 1).expect("4 GiB is too large");
        assert_eq!(e.offset, 0);
        assert!(
            e.message.contains("file too large: 4294967296 bytes"),
            "{}",
            e.message
        );
        assert_eq!(offset32(MAX_TEXT_LEN), u32::MAX);
        assert_eq!(offset32(MAX_TEXT_LEN + 1), u32::MAX);
        let s = Span::new(3, 7);
        assert_eq!((s.start(), s.end(), s.len(), s.range()), (3, 7, 4, 3..7));
    }

    #[test]
    fn collections_keep_no_growth_slack() {
        let s = Stream::parse("a: [1, 2, 3, 4, 5]\nb: 1\nc: 2\nd: 3\ne: 4\nf: 5\n");
        let root = &s.documents[0].root;
        let Value::Map(entries) = &root.value else {
            panic!("a map");
        };
        assert_eq!((entries.len(), entries.capacity()), (6, 6));
        let Value::Seq(items) = &root.get("a").unwrap().value else {
            panic!("a seq");
        };
        assert_eq!((items.len(), items.capacity()), (5, 5));
    }
}
