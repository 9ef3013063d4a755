//! Flux's post-build variable substitution (`spec.postBuild.substitute` and `substituteFrom` of a
//! `kustomize.toolkit.fluxcd.io` Kustomization), applied to rendered objects.
//!
//! Flux runs it on each object's YAML text after `kustomize build`: `${NAME}` is replaced by the
//! variable's value, `${NAME:=default}` (also `:-`, `=` and `-`) by the value or the default, and
//! `$${NAME}` is an escape that leaves `${NAME}` in place. A variable that is not set and has no
//! default becomes the empty string (Flux's default, non-strict mode). Only the braced form is
//! substituted (Flux's docs tell users to write `$var` in scripts to keep it), and an object
//! annotated `kustomize.toolkit.fluxcd.io/substitute: disabled` is left alone.
//!
//! Here it works on the span-aware tree instead of the text: each string scalar is substituted,
//! and a plain scalar is typed again from its new text (`${GPUS}` set to `8` is the integer 8, as
//! Flux's re-parse makes it). The node keeps its span, so a finding on a substituted value is
//! shown on the `${…}` that wrote it; `Substitution::touched` tells the fixer not to write a
//! literal over a variable.

use std::collections::BTreeMap;

use crate::source::yaml::{Node, ScalarStyle, Value};

/// The annotation that turns substitution off for one object.
pub const DISABLE_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// The variables of one Flux Kustomization: `substitute` over `substituteFrom`, as Flux merges
/// them (the inline ones win).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Substitution {
    pub vars: BTreeMap<String, String>,
}

impl Substitution {
    /// Substitutes every string scalar of `object` (unless the object disables it). Returns
    /// whether anything changed.
    pub fn apply(&self, object: &mut Node) -> bool {
        let disabled = object
            .get_path(&["metadata", "annotations"])
            .and_then(|a| a.get_str(DISABLE_ANNOTATION))
            == Some("disabled");
        if disabled {
            return false;
        }
        self.walk(object)
    }

    fn walk(&self, node: &mut Node) -> bool {
        match &mut node.value {
            Value::Scalar(s) => {
                if !s.text.contains('$') {
                    return false;
                }
                let Some(new) = expand(&s.text, &self.vars) else {
                    return false;
                };
                s.text = new;
                if s.style == ScalarStyle::Plain {
                    s.kind = crate::source::yaml::resolve_plain(&s.text);
                }
                true
            }
            Value::Seq(items) => items
                .iter_mut()
                .fold(false, |changed, n| self.walk(n) | changed),
            Value::Map(entries) => entries
                .iter_mut()
                .fold(false, |changed, e| self.walk(&mut e.value) | changed),
        }
    }
}

/// Whether `text` holds a `${…}` Flux would substitute (not an escaped `$${…}`).
pub fn has_variable(text: &str) -> bool {
    expand(text, &BTreeMap::new()).is_some()
}

/// `text` with its variables substituted; `None` when it has none.
fn expand(text: &str, vars: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        // `$${…}`: the escape, one `$` dropped.
        if let Some(escaped) = tail.strip_prefix("$${") {
            if escaped.contains('}') {
                out.push_str("${");
                rest = escaped;
                changed = true;
                continue;
            }
        }
        let Some(body_and_rest) = tail.strip_prefix("${") else {
            out.push('$');
            rest = &tail[1..];
            continue;
        };
        let Some(close) = body_and_rest.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        let body = &body_and_rest[..close];
        match reference(body) {
            Some((name, default)) => {
                let value = match (vars.get(name), default) {
                    // `:=`/`:-` also apply when the variable is set but empty.
                    (Some(v), Some(Default { value, colon: true })) if v.is_empty() => value,
                    (Some(v), _) => v.as_str(),
                    (None, Some(d)) => d.value,
                    (None, None) => "",
                };
                out.push_str(value);
                changed = true;
            }
            // Not a variable Flux knows: kept as written.
            None => out.push_str(&tail[..close + 3]),
        }
        rest = &body_and_rest[close + 1..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

struct Default<'a> {
    value: &'a str,
    colon: bool,
}

/// `NAME`, `NAME:=default`, `NAME:-default`, `NAME=default` or `NAME-default`, with Flux's
/// name rule (`^[_[:alpha:]][_[:alpha:][:digit:]]*$`).
fn reference(body: &str) -> Option<(&str, Option<Default<'_>>)> {
    let end = body
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(body.len(), |(i, _)| i);
    let name = &body[..end];
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    let rest = &body[end..];
    if rest.is_empty() {
        return Some((name, None));
    }
    let default = if let Some(v) = rest.strip_prefix(":=").or_else(|| rest.strip_prefix(":-")) {
        Default {
            value: v,
            colon: true,
        }
    } else if let Some(v) = rest.strip_prefix('=').or_else(|| rest.strip_prefix('-')) {
        Default {
            value: v,
            colon: false,
        }
    } else {
        return None;
    };
    Some((name, Some(default)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::yaml::{ScalarKind, Stream};

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn flux_forms() {
        let v = vars(&[("GPUS", "8"), ("EMPTY", "")]);
        let e = |t: &str| expand(t, &v);
        assert_eq!(e("${GPUS}").as_deref(), Some("8"));
        assert_eq!(e("x-${GPUS}-y").as_deref(), Some("x-8-y"));
        assert_eq!(e("${MISSING}").as_deref(), Some(""));
        assert_eq!(e("${MISSING:=4}").as_deref(), Some("4"));
        assert_eq!(e("${MISSING:-4}").as_deref(), Some("4"));
        assert_eq!(e("${MISSING=4}").as_deref(), Some("4"));
        assert_eq!(e("${EMPTY:=4}").as_deref(), Some("4"));
        assert_eq!(e("${EMPTY=4}").as_deref(), Some(""));
        assert_eq!(e("${GPUS:=4}").as_deref(), Some("8"));
        assert_eq!(e("$${GPUS}").as_deref(), Some("${GPUS}"));
        // Not Flux's: kept.
        assert_eq!(e("$GPUS"), None);
        assert_eq!(e("${1X}"), None);
        assert_eq!(e("{{ .Values.gpus }}"), None);
        assert_eq!(e("${unterminated").as_deref(), None);
        assert_eq!(e("a $ b ${GPUS} ${"), Some("a $ b 8 ${".into()));
        assert!(has_variable("${X}"));
        assert!(!has_variable("$X"));
    }

    #[test]
    fn any_text_of_the_syntax_characters_is_handled() {
        // Every string of up to 6 characters over the characters the syntax uses: no panic, and
        // a text without `${` is never changed.
        let alphabet = ['$', '{', '}', ':', '=', '-', 'A', 'é'];
        let v = vars(&[("A", "x")]);
        let mut stack = vec![String::new()];
        while let Some(text) = stack.pop() {
            let out = expand(&text, &v);
            if !text.contains("${") {
                assert_eq!(out, None, "{text:?}");
            }
            if text.chars().count() < 6 {
                for c in alphabet {
                    stack.push(format!("{text}{c}"));
                }
            }
        }
    }

    #[test]
    fn typed_again_and_disabled_objects_kept() {
        let s = Stream::parse(
            "a: ${GPUS}\nb: \"${GPUS}\"\n---\nmetadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\na: ${GPUS}\n",
        );
        let sub = Substitution {
            vars: vars(&[("GPUS", "8")]),
        };
        let mut first = s.documents[0].root.clone();
        assert!(sub.apply(&mut first));
        let a = first.get("a").and_then(Node::as_scalar).unwrap();
        assert_eq!((a.text.as_str(), a.kind), ("8", ScalarKind::Int));
        let b = first.get("b").and_then(Node::as_scalar).unwrap();
        assert_eq!((b.text.as_str(), b.kind), ("8", ScalarKind::Str));
        // The span still names the `${GPUS}` that wrote it.
        let span = first.get("a").unwrap().span;
        assert_eq!(&s.text[span.range()], "${GPUS}");
        let mut second = s.documents[1].root.clone();
        assert!(!sub.apply(&mut second));
        assert_eq!(second.get_str("a"), Some("${GPUS}"));
    }
}
