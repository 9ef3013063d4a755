//! Lets jsonpath-rust query the span-aware YAML tree directly, so a JSONPath match is a node
//! with its position in the file, and its normalized path comes for free.

use jsonpath_rust::query::queryable::Queryable;

use super::yaml::{Node, ScalarKind, Value};

impl PartialEq for Node {
    /// Structural equality of values; positions and styles do not matter (JSONPath filters).
    fn eq(&self, other: &Self) -> bool {
        match (&self.value, &other.value) {
            (Value::Scalar(a), Value::Scalar(b)) => {
                a.kind == b.kind
                    && match a.kind {
                        ScalarKind::Int | ScalarKind::Float => {
                            match (a.text.parse::<f64>(), b.text.parse::<f64>()) {
                                (Ok(x), Ok(y)) => x == y,
                                _ => a.text == b.text,
                            }
                        }
                        ScalarKind::Null => true,
                        _ => a.text == b.text,
                    }
            }
            (Value::Seq(a), Value::Seq(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.key == y.key && x.value == y.value)
            }
            _ => false,
        }
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Self {
        Node::scalar(s, ScalarKind::Str)
    }
}

impl From<String> for Node {
    fn from(s: String) -> Self {
        Node::scalar(&s, ScalarKind::Str)
    }
}

impl From<bool> for Node {
    fn from(b: bool) -> Self {
        Node::scalar(if b { "true" } else { "false" }, ScalarKind::Bool)
    }
}

impl From<i64> for Node {
    fn from(i: i64) -> Self {
        Node::scalar(&i.to_string(), ScalarKind::Int)
    }
}

impl From<f64> for Node {
    fn from(f: f64) -> Self {
        Node::scalar(&f.to_string(), ScalarKind::Float)
    }
}

impl From<Vec<Node>> for Node {
    fn from(items: Vec<Node>) -> Self {
        Node {
            value: Value::Seq(items),
            ..Node::default()
        }
    }
}

impl Queryable for Node {
    fn get(&self, key: &str) -> Option<&Self> {
        Node::get(self, key)
    }

    fn as_array(&self) -> Option<&Vec<Self>> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    fn as_object(&self) -> Option<Vec<(&str, &Self)>> {
        let entries = self.as_map()?;
        Some(
            entries
                .iter()
                .filter_map(|e| Some((e.key.as_scalar()?.text.as_str(), &e.value)))
                .collect(),
        )
    }

    fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if s.kind == ScalarKind::Str => Some(&s.text),
            _ => None,
        }
    }

    fn as_i64(&self) -> Option<i64> {
        match &self.value {
            Value::Scalar(s) if s.kind == ScalarKind::Int => s.text.parse().ok(),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match &self.value {
            Value::Scalar(s) if matches!(s.kind, ScalarKind::Int | ScalarKind::Float) => {
                s.text.parse().ok()
            }
            _ => None,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar(s) if s.kind == ScalarKind::Bool => {
                Some(s.text.eq_ignore_ascii_case("true"))
            }
            _ => None,
        }
    }

    fn null() -> Self {
        Node::default()
    }
}

#[cfg(test)]
mod tests {
    use crate::source::yaml::Stream;

    #[test]
    fn queries_return_nodes_with_normalized_paths() {
        let text = "spec:\n  pytorchReplicaSpecs:\n    Master:\n      template: {a: 1}\n    Worker:\n      template: {a: 2}\n";
        let s = Stream::parse(text);
        let root = &s.documents[0].root;
        let found =
            jsonpath_rust::query::js_path("$.spec.pytorchReplicaSpecs.*.template", root).unwrap();
        let paths: Vec<_> = found.iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths,
            [
                "$['spec']['pytorchReplicaSpecs']['Master']['template']",
                "$['spec']['pytorchReplicaSpecs']['Worker']['template']"
            ]
        );
        assert_eq!(
            &text[found[1].val.span.start()..found[1].val.span.end()],
            "{a: 2}"
        );
    }
}
