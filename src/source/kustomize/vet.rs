//! What the Kustomize fallback's check must see the way kustomize sees it. Kustomize reads a
//! kustomization with `sigs.k8s.io/yaml` (YAML 1.1: merge keys `<<`, tags such as `!!binary`
//! that turn a key into another string) and then Go's `encoding/json`, which matches field
//! names without regard to case (and folds `ſ` to `s`, the Kelvin sign to `k`). gpulint's tree
//! resolves none of that, so a field hidden that way would reach kustomize unchecked. Rather
//! than emulate the differences, the fallback refuses them: only kustomize's own field names,
//! written exactly; no merge key and no explicit tag anywhere; one document that parses.
//! Generator, transformer and validator configs must be builtin plugins, and every path they
//! name is checked like the kustomization's own.

use crate::source::yaml::{first_tag, Node, Stream, Value};

/// The fields of kustomize's `Kustomization` (`api/types/kustomization.go`, with the
/// `TypeMeta` it inlines): any other key is refused before kustomize runs.
pub(crate) const KUSTOMIZATION_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "inventory",
    "buildMetadata",
];

/// Kustomize's builtin plugins (`api/internal/plugins/builtinhelpers/builtins.go`), but
/// `HelmChartInflationGenerator`: gpulint never lets kustomize run Helm.
const BUILTIN_PLUGINS: &[&str] = &[
    "AnnotationsTransformer",
    "ConfigMapGenerator",
    "IAMPolicyGenerator",
    "HashTransformer",
    "ImageTagTransformer",
    "LabelTransformer",
    "NamespaceTransformer",
    "PatchJson6902Transformer",
    "PatchStrategicMergeTransformer",
    "PatchTransformer",
    "PrefixSuffixTransformer",
    "PrefixTransformer",
    "SuffixTransformer",
    "ReplicaCountTransformer",
    "SecretGenerator",
    "ValueAddTransformer",
    "ReplacementTransformer",
];

/// The keys that name files in a plugin config or a generator entry: `path` (patches,
/// replacements), `paths` (PatchStrategicMergeTransformer), `files` (`[key=]path`), `envs`,
/// `env`. Any key spelled like one of them in another case is refused (Go would read it).
pub(crate) const PATH_KEYS: &[&str] = &["path", "paths", "files", "envs", "env"];

/// A refusal: where (a node of the document) and why.
pub(crate) struct Refusal {
    pub span: crate::source::yaml::Span,
    pub message: String,
}

fn refusal(node: &Node, message: String) -> Refusal {
    Refusal {
        span: node.span,
        message,
    }
}

/// A field name as Go's `encoding/json` compares it (its `foldName`): ASCII letters in one case,
/// the long s and the Kelvin sign as the letters they fold to.
fn json_fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '\u{17f}' => 's',
            '\u{212a}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The stream as kustomize would read it, or why not: it must parse, hold at most one document
/// (`documents` > 1 allowed for plugin config files), and carry no explicit tag.
pub(crate) fn check_stream(stream: &Stream, several: bool) -> Result<(), Refusal> {
    let at = |offset: usize| crate::source::yaml::Span {
        start: crate::source::yaml::offset32(offset),
        end: crate::source::yaml::offset32(offset),
        source: stream
            .documents
            .first()
            .map(|d| d.root.span.source)
            .unwrap_or_default(),
    };
    if let Some(e) = &stream.error {
        return Err(Refusal {
            span: at(e.offset),
            message: format!(
                "invalid YAML ({}): not handed to kustomize, which may read it otherwise",
                e.message
            ),
        });
    }
    if let Some(offset) = first_tag(&stream.text) {
        return Err(Refusal {
            span: at(offset),
            message: "an explicit YAML tag (`!!binary`, `!!merge`, `!local`...) is not handed to kustomize: its YAML library would read the node as something else than gpulint checked".to_string(),
        });
    }
    if !several {
        if let Some(second) = stream.documents.get(1) {
            return Err(refusal(
                &second.root,
                "a kustomization file holds one document".to_string(),
            ));
        }
    }
    Ok(())
}

/// Every mapping under `node`: no merge key `<<` (kustomize's YAML library merges it in, after
/// gpulint's check), and no key that Go would take for a path-bearing field it is not written
/// as (`Files`, `PATH`, `ſiles`).
pub(crate) fn check_keys(node: &Node) -> Result<(), Refusal> {
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        match &n.value {
            Value::Map(entries) => {
                for e in entries {
                    match e.key.text() {
                        Some("<<") => {
                            return Err(refusal(
                                &e.key,
                                "a YAML merge key `<<` is not handed to kustomize: it would merge fields in that gpulint did not check; write them out".to_string(),
                            ))
                        }
                        Some(k) => {
                            let folded = json_fold(k);
                            if let Some(field) = PATH_KEYS
                                .iter()
                                .chain(KUSTOMIZATION_FIELDS)
                                .find(|f| **f != k && json_fold(f) == folded)
                            {
                                return Err(refusal(
                                    &e.key,
                                    format!("`{k}` is read by kustomize as `{field}` (Go matches field names without regard to case): write `{field}`"),
                                ));
                            }
                        }
                        None => {}
                    }
                    todo.push(&e.key);
                    todo.push(&e.value);
                }
            }
            Value::Seq(items) => todo.extend(items),
            Value::Scalar(_) => {}
        }
    }
    Ok(())
}

/// The kustomization's own keys: kustomize's fields only, written as kustomize spells them.
pub(crate) fn check_fields(root: &Node) -> Result<(), Refusal> {
    let Some(entries) = root.as_map() else {
        return Err(refusal(root, "a kustomization is a mapping".to_string()));
    };
    for e in entries {
        match e.key.text() {
            Some(k) if KUSTOMIZATION_FIELDS.contains(&k) => {}
            Some(k) => {
                return Err(refusal(
                    &e.key,
                    format!("`{k}` is not a kustomization field: not handed to kustomize"),
                ))
            }
            None => {
                return Err(refusal(
                    &e.key,
                    "a kustomization's keys are field names".to_string(),
                ))
            }
        }
    }
    Ok(())
}

/// A file a plugin config names: the node, the path as written (`key=` removed).
pub(crate) struct ConfigPath<'n> {
    pub node: &'n Node,
    pub written: &'n str,
}

/// One generator, transformer or validator config: a builtin plugin (`apiVersion: builtin`,
/// a kind kustomize builds in, not Helm), no function annotation; the files it names (under
/// [`PATH_KEYS`] at any depth, `files` entries without their `key=`; inline patches, which
/// hold a line break, are not paths).
pub(crate) fn plugin_config(doc: &Node) -> Result<Vec<ConfigPath<'_>>, Refusal> {
    check_keys(doc)?;
    let kind = doc.get("kind").and_then(Node::text).unwrap_or_default();
    let api = doc
        .get("apiVersion")
        .and_then(Node::text)
        .unwrap_or_default();
    if api != "builtin" || !BUILTIN_PLUGINS.contains(&kind) {
        let what = if kind == "HelmChartInflationGenerator" {
            "gpulint does not let kustomize run helm".to_string()
        } else {
            format!("`{api}` `{kind}` is not one of kustomize's builtin plugins (gpulint runs no plugin)")
        };
        return Err(refusal(
            doc,
            format!("plugin config not handed to kustomize: {what}"),
        ));
    }
    if let Some(annotations) = doc
        .get_path(&["metadata", "annotations"])
        .and_then(Node::as_map)
    {
        for a in annotations {
            if a.key.text().is_some_and(|k| k.ends_with("/function")) {
                return Err(refusal(
                    &a.key,
                    "a function annotation on a plugin config is not handed to kustomize (gpulint runs no function)".to_string(),
                ));
            }
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![doc];
    while let Some(n) = todo.pop() {
        match &n.value {
            Value::Map(entries) => {
                for e in entries {
                    let key = e.key.text().unwrap_or_default();
                    if PATH_KEYS.contains(&key) {
                        let items: Vec<&Node> = match e.value.as_seq() {
                            Some(items) => items.iter().collect(),
                            None => vec![&e.value],
                        };
                        for item in items {
                            let Some(t) = item.text().filter(|t| !t.contains('\n')) else {
                                continue;
                            };
                            let written = if key == "files" {
                                t.split_once('=').map_or(t, |(_, p)| p)
                            } else {
                                t
                            };
                            out.push(ConfigPath {
                                node: item,
                                written,
                            });
                        }
                    }
                    todo.push(&e.value);
                }
            }
            Value::Seq(items) => todo.extend(items),
            Value::Scalar(_) => {}
        }
    }
    Ok(out)
}

/// A path with a `.git` component: the repository's own metadata (its config may hold the
/// checkout's credential) is never handed to kustomize.
pub(crate) use crate::source::repo::names_git;

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        Stream::parse(text).documents.remove(0).root
    }

    #[test]
    fn merge_keys_and_case_variants_are_refused_anywhere() {
        assert!(check_keys(&root("a: {b: [{<<: {c: 1}}]}\n")).is_err());
        assert!(check_keys(&root("configMapGenerator:\n- Files: [x]\n")).is_err());
        assert!(check_keys(&root("x:\n  \u{17f}ources: 1\n")).is_ok());
        assert!(check_keys(&root("x:\n  re\u{17f}ources: 1\n")).is_err());
        assert!(check_keys(&root("configMapGenerator:\n- files: [x]\n")).is_ok());
    }

    #[test]
    fn only_kustomize_fields_written_exactly() {
        assert!(check_fields(&root("resources: []\nsortOptions: {}\n")).is_ok());
        assert!(check_fields(&root("Resources: [x]\n")).is_err());
        assert!(check_fields(&root("whatever: 1\n")).is_err());
        assert!(check_fields(&root("1: x\n")).is_err());
    }

    #[test]
    fn tags_and_second_documents_are_refused() {
        assert!(check_stream(&Stream::parse("!!binary cmVzb3VyY2Vz: [x]\n"), false).is_err());
        assert!(check_stream(&Stream::parse("a: !!str b\n"), false).is_err());
        assert!(check_stream(&Stream::parse("a: 1\n---\nb: 2\n"), false).is_err());
        assert!(check_stream(&Stream::parse("a: 1\n---\nb: 2\n"), true).is_ok());
        assert!(check_stream(&Stream::parse("a: [\n"), false).is_err());
    }

    #[test]
    fn plugin_configs_are_builtin_and_their_paths_are_found() {
        let doc = root("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: c}\nfiles: [t=/etc/passwd, b]\nenvs: [e]\nenv: f\n");
        let paths: Vec<&str> = plugin_config(&doc)
            .ok()
            .unwrap_or_default()
            .iter()
            .map(|p| p.written)
            .collect();
        assert_eq!(paths, ["/etc/passwd", "b", "e", "f"]);
        let doc = root("apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata: {name: c}\npaths: [p.yaml]\npatches: |\n  a: 1\n");
        assert_eq!(plugin_config(&doc).ok().map(|p| p.len()), Some(1));
        for bad in [
            "apiVersion: someteam.example.com/v1\nkind: Exec\n",
            "apiVersion: builtin\nkind: HelmChartInflationGenerator\n",
            "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  annotations:\n    config.kubernetes.io/function: x\n",
        ] {
            assert!(plugin_config(&root(bad)).is_err(), "{bad}");
        }
    }
}
