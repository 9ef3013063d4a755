//! A tolerant JSON scanner that records where each value is, by path
//! (`containers[3].memory_bytes.p99`). Used only to position errors, so it stops quietly at
//! malformed text; a value left unfinished extends to the end of the text.

use std::fmt;

/// Nesting deeper than this is not scanned for positions (serde_json stops at 128 anyway).
const MAX_SCAN_DEPTH: usize = 200;

pub(super) struct Span {
    pub(super) path: String,
    /// Byte offset of the value's first character.
    pub(super) start: usize,
    /// Byte offset just past the value.
    pub(super) end: usize,
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}..{}", self.path, self.start, self.end)
    }
}

/// Calls `visit` with each value of `text`, innermost first, until it returns true.
pub(super) fn scan_values(text: &str, visit: &mut dyn FnMut(Span) -> bool) {
    let mut scanner = Scanner {
        b: text.as_bytes(),
        pos: 0,
        visit,
        stopped: false,
    };
    scanner.value(String::new(), 0);
}

struct Scanner<'a, 'v> {
    b: &'a [u8],
    pos: usize,
    visit: &'v mut dyn FnMut(Span) -> bool,
    /// `visit` asked to stop: every level unwinds.
    stopped: bool,
}

impl Scanner<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Scans one value; false if the text is malformed or ends before the value does.
    fn value(&mut self, path: String, depth: usize) -> bool {
        self.skip_ws();
        let start = self.pos;
        let complete = match self.peek() {
            _ if depth > MAX_SCAN_DEPTH => false,
            Some(b'{') => self.object(&path, depth),
            Some(b'[') => self.array(&path, depth),
            Some(b'"') => self.string().is_some(),
            Some(_) => self.scalar(),
            None => false,
        };
        if self.stopped {
            return false;
        }
        let end = if complete { self.pos } else { self.b.len() };
        self.stopped = (self.visit)(Span { path, start, end });
        complete && !self.stopped
    }

    fn object(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return true;
        }
        loop {
            self.skip_ws();
            let Some(key) = self.string() else {
                return false;
            };
            self.skip_ws();
            if self.peek() != Some(b':') {
                return false;
            }
            self.pos += 1;
            let child = if path.is_empty() {
                key
            } else {
                format!("{path}.{key}")
            };
            if !self.value(child, depth + 1) {
                return false;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return true;
        }
        let mut index = 0usize;
        loop {
            if !self.value(format!("{path}[{index}]"), depth + 1) {
                return false;
            }
            index += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    /// A string at `pos`: its raw contents (escapes kept), with `pos` moved past it.
    fn string(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut i = start;
        loop {
            match self.b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
                None => {
                    self.pos = self.b.len();
                    return None;
                }
            }
        }
        let raw = String::from_utf8_lossy(self.b.get(start..i)?).into_owned();
        self.pos = i + 1;
        Some(raw)
    }

    /// A number, `true`, `false` or `null` (or any other run of non-structural bytes).
    fn scalar(&mut self) -> bool {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if matches!(
                c,
                b',' | b']' | b'}' | b'[' | b'{' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
            ) {
                break;
            }
            self.pos += 1;
        }
        self.pos > start
    }
}

/// Byte offset where 1-based `line` starts.
pub(super) fn line_start(text: &str, line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .nth(line - 2)
        .map(|(i, _)| i + 1)
}

/// 1-based line and column (in characters) of byte `offset`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = text
        .get(start..offset)
        .map_or(offset - start, |s| s.chars().count())
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_values(text: &str) -> Vec<Span> {
        let mut spans = Vec::new();
        scan_values(text, &mut |span| {
            spans.push(span);
            false
        });
        spans
    }

    #[test]
    fn scanner_positions() {
        let text = "{\"a\": [1, {\"b\": \"x\\\"y\"}],\n \"c\": null}";
        let spans = index_values(text);
        let get = |p: &str| {
            spans
                .iter()
                .find(|s| s.path == p)
                .map(|s| &text[s.start..s.end])
        };
        assert_eq!(get("a[0]"), Some("1"));
        assert_eq!(get("a[1].b"), Some("\"x\\\"y\""));
        assert_eq!(get("c"), Some("null"));
        assert_eq!(get(""), Some(text));
        let c = spans.iter().find(|s| s.path == "c").map(|s| s.start);
        assert_eq!(c.map(|o| line_column(text, o)), Some((2, 7)));
        // Unfinished values extend to the end and never panic.
        for cut in 0..text.len() {
            let _ = index_values(&text[..cut]);
        }
        let deep = "[".repeat(10_000);
        assert!(index_values(&deep).len() <= MAX_SCAN_DEPTH + 2);
    }
}
