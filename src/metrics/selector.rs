//! Label matchers (`cluster="prod", region=~"eu-.*"`): what `--prometheus-selector`,
//! `prometheus.selector` and `prometheus.selectors[].selector` may say.
//!
//! A selector from the repository is data: it is parsed here into matchers (a label name, an
//! operator, a string) and the queries are built from the parsed form, never from the text, so
//! `x="y"}[14d]) or vector(1) or up{x="y"` is an error at its column instead of a query of its
//! own sent with the CI's token.

use std::fmt;

/// One matcher: `name op "value"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matcher {
    pub name: String,
    pub op: MatchOp,
    pub value: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchOp {
    Equal,
    NotEqual,
    Regex,
    NotRegex,
}

impl MatchOp {
    fn as_str(self) -> &'static str {
        match self {
            MatchOp::Equal => "=",
            MatchOp::NotEqual => "!=",
            MatchOp::Regex => "=~",
            MatchOp::NotRegex => "!~",
        }
    }
}

/// A list of matchers (possibly empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector(pub Vec<Matcher>);

/// Why a selector is not a list of label matchers: `offset` is the byte in the selector's text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    pub offset: usize,
    pub message: String,
}

impl Selector {
    /// Parses `name op "value"` matchers separated by commas; surrounding braces, whitespace
    /// and a trailing comma are allowed (`{cluster="prod",}`). Strings are PromQL's: double or
    /// single quoted, with Go's escapes.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let mut p = Parser { text, pos: 0 };
        p.skip_space();
        let braced = p.eat('{');
        let mut matchers = Vec::new();
        loop {
            p.skip_space();
            match p.peek() {
                None if !braced => break,
                Some('}') if braced => {
                    p.pos += 1;
                    p.skip_space();
                    if p.peek().is_some() {
                        return Err(p.error("unexpected text after `}`"));
                    }
                    break;
                }
                None => return Err(p.error("missing `}`")),
                _ => {}
            }
            matchers.push(p.matcher()?);
            p.skip_space();
            match p.peek() {
                Some(',') => p.pos += 1,
                None | Some('}') => {}
                Some(_) => {
                    return Err(p.error("expected `,` between label matchers"));
                }
            }
        }
        Ok(Selector(matchers))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The matchers as PromQL, without braces: `cluster="prod",region=~"eu-.*"`; every value a
/// double-quoted string with its special characters escaped.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}{}{}", m.name, m.op.as_str(), promql_string(&m.value))?;
        }
        Ok(())
    }
}

/// A PromQL double-quoted string literal (Go's escapes; control characters as `\u00XX`).
pub fn promql_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn error(&self, what: &str) -> SelectorError {
        let found = match self.peek() {
            None => "the end".to_string(),
            Some(c) => format!("{c:?}"),
        };
        SelectorError {
            offset: self.pos,
            message: format!(
                "not a list of label matchers (name=\"value\", !=, =~, !~, separated by commas): \
                 {what} at character {}, found {found}",
                self.text.get(..self.pos).map_or(0, |s| s.chars().count()) + 1
            ),
        }
    }

    fn matcher(&mut self) -> Result<Matcher, SelectorError> {
        let start = self.pos;
        let name_len = self
            .rest()
            .char_indices()
            .find(|&(i, c)| !(c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())))
            .map_or(self.rest().len(), |(i, _)| i);
        if name_len == 0 {
            return Err(self.error("expected a label name ([a-zA-Z_][a-zA-Z0-9_]*)"));
        }
        let name = self
            .text
            .get(start..start + name_len)
            .unwrap_or("")
            .to_string();
        self.pos += name_len;
        self.skip_space();
        let op = if self.rest().starts_with("=~") {
            MatchOp::Regex
        } else if self.rest().starts_with("!=") {
            MatchOp::NotEqual
        } else if self.rest().starts_with("!~") {
            MatchOp::NotRegex
        } else if self.rest().starts_with('=') {
            MatchOp::Equal
        } else {
            return Err(self.error("expected `=`, `!=`, `=~` or `!~`"));
        };
        self.pos += op.as_str().len();
        self.skip_space();
        let value = self.string()?;
        Ok(Matcher { name, op, value })
    }

    /// A double- or single-quoted string with Go's escapes (`\n`, `\"`, `\x41`, `\u00e9`, …).
    fn string(&mut self) -> Result<String, SelectorError> {
        let quote = match self.peek() {
            Some(q @ ('"' | '\'')) => q,
            _ => return Err(self.error("expected a quoted string")),
        };
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            match c {
                c if c == quote => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\n' | '\r' => return Err(self.error("a line break in a string")),
                '\\' => {
                    let escape_at = self.pos;
                    self.pos += 1;
                    out.push(self.escape(quote).map_err(|mut e| {
                        e.offset = e.offset.max(escape_at);
                        e
                    })?);
                }
                c => {
                    self.pos += c.len_utf8();
                    out.push(c);
                }
            }
        }
    }

    fn escape(&mut self, quote: char) -> Result<char, SelectorError> {
        let Some(c) = self.peek() else {
            return Err(self.error("unterminated string"));
        };
        self.pos += c.len_utf8();
        let simple = match c {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' => Some('\\'),
            c if c == quote => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            return Ok(s);
        }
        let (digits, radix) = match c {
            'x' => (2, 16),
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='7' => {
                self.pos -= 1;
                (3, 8)
            }
            _ => {
                self.pos -= c.len_utf8();
                return Err(self.error("unknown escape sequence"));
            }
        };
        let end = self.pos + digits;
        let code = self
            .text
            .get(self.pos..end)
            .and_then(|d| u32::from_str_radix(d, radix).ok())
            .filter(|_| {
                self.text
                    .get(self.pos..end)
                    .is_some_and(|d| d.chars().all(|c| c.is_digit(radix)))
            });
        let Some(code) = code else {
            return Err(self.error("invalid escape sequence"));
        };
        // `\x` and octal escapes are bytes in Go: only ASCII ones make a whole character here.
        let ch = if matches!(c, 'x' | '0'..='7') && code > 0x7f {
            None
        } else {
            char::from_u32(code)
        };
        let Some(ch) = ch else {
            return Err(self.error("escape sequence is not a valid character"));
        };
        self.pos = end;
        Ok(ch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebuilt(s: &str) -> String {
        Selector::parse(s).expect(s).to_string()
    }

    #[test]
    fn matchers_are_parsed_and_rebuilt() {
        assert_eq!(rebuilt(""), "");
        assert_eq!(rebuilt("  "), "");
        assert_eq!(rebuilt("{}"), "");
        assert_eq!(rebuilt(r#"cluster="prod""#), r#"cluster="prod""#);
        assert_eq!(rebuilt(r#" {cluster="prod",} "#), r#"cluster="prod""#);
        assert_eq!(
            rebuilt(r#"cluster = 'prod' , region=~"eu-.*",team!="a",_x!~'b|c'"#),
            r#"cluster="prod",region=~"eu-.*",team!="a",_x!~"b|c""#
        );
        // Escapes are decoded, then written again as one canonical double-quoted string.
        assert_eq!(rebuilt(r#"a="x\"}y""#), r#"a="x\"}y""#);
        assert_eq!(rebuilt(r"a='it\'s'"), r#"a="it's""#);
        assert_eq!(rebuilt(r#"a="\x41\u00e9\101\n""#), r#"a="AéA\n""#);
        assert_eq!(rebuilt(r#"a="\\""#), r#"a="\\""#);
    }

    #[test]
    fn anything_else_is_refused_with_its_offset() {
        let injection = r#"x="y"}[14d]) or label_replace(vector(1), "a", "b", "", "") or quantile_over_time(0.99, up{x="y""#;
        let e = Selector::parse(injection).expect_err("injection");
        assert_eq!(e.offset, 5, "{e}");
        for bad in [
            "cluster",
            "cluster=prod",
            r#"1x="a""#,
            r#"a.b="c""#,
            r#"a=="b""#,
            r#"a="b" b="c""#,
            r#"a="b"#,
            r#"{a="b""#,
            r#"{a="b"} or up"#,
            r#"a="b\q""#,
            r#"a="\xff""#,
            "a=\"b\nc\"",
            r#"a=`raw`"#,
            ",",
            r#"a="b",,"#,
        ] {
            assert!(Selector::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn the_offset_points_at_the_offending_character() {
        let e = Selector::parse(r#"a="b", c ~ "d""#).expect_err("bad op");
        assert_eq!(e.offset, 9);
        assert!(e.message.contains("character 10"), "{e}");
    }
}
