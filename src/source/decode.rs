//! Strict decoding of configuration-like YAML (the config file, the workload catalogue): every
//! unknown key or wrong type is an error at the offending node, never a silent default.

use super::yaml::{Node, ScalarKind, Value};

/// The closest of `candidates` to a misspelt `name`, when close enough to be a typo (config
/// keys, rule ids, queue and claim names, Kubernetes fields).
pub fn did_you_mean<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, _)| *d > 0 && *d <= (name.chars().count() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A built-in table's rows: `{key: [row, ...]}`, each row decoded by `row`, no other key.
pub fn table_rows<T>(
    root: &Node,
    what: &str,
    key: &'static str,
    row: impl Fn(&Node) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut f = Fields::new(root, what)?;
    let rows = f
        .seq(key)?
        .unwrap_or_default()
        .iter()
        .map(row)
        .collect::<Result<Vec<_>, _>>()?;
    f.finish()?;
    Ok(rows)
}

/// The first document of a table built into the binary, decoded; empty when it does not
/// decode (each table's unit test keeps it valid).
pub fn builtin_rows<T>(
    text: &str,
    decode: impl Fn(&Node) -> Result<Vec<T>, DecodeError>,
) -> Vec<T> {
    super::yaml::Stream::parse(text)
        .documents
        .first()
        .and_then(|d| decode(&d.root).ok())
        .unwrap_or_default()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub message: String,
}

fn type_name(node: &Node) -> &'static str {
    match &node.value {
        Value::Map(_) => "a mapping",
        Value::Seq(_) => "a list",
        Value::Scalar(s) => match s.kind {
            ScalarKind::Null => "null",
            ScalarKind::Bool => "a boolean",
            ScalarKind::Int | ScalarKind::Float => "a number",
            ScalarKind::Str => "a string",
        },
    }
}

fn wrong_type(node: &Node, what: &str, expected: &str) -> DecodeError {
    DecodeError {
        offset: node.span.start(),
        message: format!("{what}: expected {expected}, found {}", type_name(node)),
    }
}

/// Any scalar as a string (numbers too: `GPU001` and `1` are both fine as strings).
pub fn string(node: &Node) -> Result<String, DecodeError> {
    match &node.value {
        Value::Scalar(s) if s.kind != ScalarKind::Null => Ok(s.text.clone()),
        _ => Err(wrong_type(node, "value", "a string")),
    }
}

/// A string or a list of strings.
pub fn string_list(node: &Node, what: &str) -> Result<Vec<String>, DecodeError> {
    match &node.value {
        Value::Seq(items) => items.iter().map(string).collect(),
        Value::Scalar(s) if s.kind != ScalarKind::Null => Ok(vec![s.text.clone()]),
        _ => Err(wrong_type(node, what, "a list of strings")),
    }
}

/// A YAML 1.2 core-schema number as a float: Rust's syntax, plus `.nan`, `.inf`, `-.inf`
/// (any case), hex `0x` and octal `0o` integers.
fn yaml_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let (sign, body) = match t.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, t.strip_prefix('+').unwrap_or(t)),
    };
    match body.to_ascii_lowercase().as_str() {
        ".nan" => return Some(f64::NAN),
        ".inf" => return Some(sign * f64::INFINITY),
        _ => {}
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(|v| sign * v as f64);
    }
    if let Some(oct) = body.strip_prefix("0o") {
        return u64::from_str_radix(oct, 8).ok().map(|v| sign * v as f64);
    }
    t.parse::<f64>().ok()
}

/// The keys of a mapping, consumed one by one; `finish` rejects whatever was not consumed.
pub struct Fields<'a> {
    node: &'a Node,
    what: String,
    used: Vec<bool>,
    expected: Vec<&'static str>,
    /// The keys of a schema (`Fields::with_keys`): `expected` is that list, and `take` of a key
    /// outside it is a bug of the caller.
    schema: bool,
}

impl<'a> Fields<'a> {
    pub fn new(node: &'a Node, what: &str) -> Result<Fields<'a>, DecodeError> {
        let Some(entries) = node.as_map() else {
            return Err(wrong_type(node, what, "a mapping"));
        };
        Ok(Fields {
            node,
            what: what.to_string(),
            used: vec![false; entries.len()],
            expected: Vec::new(),
            schema: false,
        })
    }

    /// Like `new`, for a mapping whose keys a schema lists: an unknown key's error names all of
    /// `keys` (not only those taken before it), and the list is the one the docs are held to.
    pub fn with_keys(
        node: &'a Node,
        what: &str,
        keys: &'static [&'static str],
    ) -> Result<Fields<'a>, DecodeError> {
        let mut fields = Fields::new(node, what)?;
        fields.expected = keys.to_vec();
        fields.schema = true;
        Ok(fields)
    }

    /// The value under `key`, marking it used.
    pub fn take(&mut self, key: &'static str) -> Option<&'a Node> {
        if self.schema {
            debug_assert!(
                self.expected.contains(&key),
                "`{key}` is read from {} but not in its schema's keys",
                self.what
            );
        } else {
            self.expected.push(key);
        }
        self.take_unlisted(key)
    }

    /// The value under a key that is refused, not expected: marked used (its own error says
    /// why), left out of the list of keys an unknown key's error names.
    pub fn take_unlisted(&mut self, key: &'static str) -> Option<&'a Node> {
        let entries = self.node.as_map()?;
        let index = entries
            .iter()
            .position(|e| e.key.as_scalar().is_some_and(|s| s.text == key))?;
        self.used[index] = true;
        let value = &entries[index].value;
        (!value.is_null()).then_some(value)
    }

    pub fn string(&mut self, key: &'static str) -> Result<Option<String>, DecodeError> {
        self.take(key).map(string).transpose()
    }

    pub fn string_at(&mut self, key: &'static str) -> Result<Option<(String, usize)>, DecodeError> {
        self.take(key)
            .map(|n| string(n).map(|s| (s, n.span.start())))
            .transpose()
    }

    pub fn required_string(&mut self, key: &'static str) -> Result<String, DecodeError> {
        self.string(key)?.ok_or_else(|| DecodeError {
            offset: self.node.span.start(),
            message: format!("{}: missing required key `{key}`", self.what),
        })
    }

    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, DecodeError> {
        let what = format!("`{key}`");
        self.take(key)
            .map(|n| match &n.value {
                Value::Scalar(s) if s.kind == ScalarKind::Bool => {
                    Ok(s.text.eq_ignore_ascii_case("true"))
                }
                _ => Err(wrong_type(n, &what, "true or false")),
            })
            .transpose()
    }

    /// A finite number (integers too): YAML's `.nan` and `.inf`, and a number too large for
    /// a float, are errors that say so.
    pub fn number(&mut self, key: &'static str) -> Result<Option<f64>, DecodeError> {
        let what = format!("`{key}`");
        self.take(key)
            .map(|n| match &n.value {
                Value::Scalar(s) if matches!(s.kind, ScalarKind::Int | ScalarKind::Float) => {
                    let v = yaml_float(&s.text).ok_or_else(|| wrong_type(n, &what, "a number"))?;
                    if v.is_finite() {
                        Ok(v)
                    } else {
                        let found = if v.is_nan() { "NaN" } else { "infinity" };
                        Err(DecodeError {
                            offset: n.span.start(),
                            message: format!(
                                "{what}: expected a finite number, found {found} ({})",
                                s.text
                            ),
                        })
                    }
                }
                _ => Err(wrong_type(n, &what, "a number")),
            })
            .transpose()
    }

    pub fn seq(&mut self, key: &'static str) -> Result<Option<&'a [Node]>, DecodeError> {
        let what = format!("`{key}`");
        self.take(key)
            .map(|n| n.as_seq().ok_or_else(|| wrong_type(n, &what, "a list")))
            .transpose()
    }

    pub fn string_list(&mut self, key: &'static str) -> Result<Vec<String>, DecodeError> {
        let what = format!("`{key}`");
        Ok(self
            .take(key)
            .map(|n| string_list(n, &what))
            .transpose()?
            .unwrap_or_default())
    }

    /// Errors on the first key that no `take` asked for.
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.finish_all().into_iter().next() {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// An error for every key that no `take` asked for, with the closest expected key.
    pub fn finish_all(self) -> Vec<DecodeError> {
        let Some(entries) = self.node.as_map() else {
            return Vec::new();
        };
        let mut expected = self.expected.clone();
        expected.sort_unstable();
        expected.dedup();
        entries
            .iter()
            .zip(&self.used)
            .filter(|(_, used)| !**used)
            .map(|(entry, _)| {
                let key = entry.key.text().unwrap_or("?");
                let near = did_you_mean(key, expected.iter().copied())
                    .map(|k| format!("did you mean `{k}`? "))
                    .unwrap_or_default();
                DecodeError {
                    offset: entry.key.span.start(),
                    message: format!(
                        "unknown key `{key}` in {}; {near}expected one of: {}",
                        self.what,
                        expected.join(", ")
                    ),
                }
            })
            .collect()
    }
}
