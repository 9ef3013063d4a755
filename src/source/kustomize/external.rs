//! Fallback: render with an external `kustomize build` or `kubectl kustomize`, then map origins
//! back by resource identity. For each output object, the input resource with the same kind and
//! name (modulo namePrefix/nameSuffix) is found among the files the tree lists; every output node
//! whose value equals the input's at the same path takes the input node (and its span); anything
//! else points at the kustomization file.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::kustomization::{self};
use super::load::{find_kustomization, resources_of};
use super::{
    normalize, LoadRestrictor, Options, RenderError, RenderErrorKind, Rendered, Reorder, Sources,
};
use crate::source::document::plain;
use crate::source::yaml::{Node, Span, Stream, Value};

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Every path a kustomization tree names, checked before the external tool may read it: no
/// remote resource (the tool would fetch it or run `git`/`ssh`), every local path inside the
/// repository once symlinks are followed (under `LoadRestrictionsNone` too, generators
/// included), nothing that needs Helm. Only then does the tool run, so what it reads is what
/// gpulint checked.
fn check_tree(dir: &Path, sources: &dyn Sources, options: &Options) -> Result<(), RenderError> {
    // No boundary (a library caller's choice, as for the built-in renderer): the filesystem
    // root, so only remoteness, Helm and file types are checked. The CLI always sets one.
    let boundary = options
        .boundary
        .as_deref()
        .map(normalize)
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut todo = vec![normalize(dir)];
    let mut seen = std::collections::HashSet::new();
    while let Some(d) = todo.pop() {
        if !seen.insert(d.clone()) {
            continue;
        }
        if seen.len() > 10_000 {
            return Err(RenderError::new(
                RenderErrorKind::External,
                dir,
                None,
                "more than 10000 kustomizations: not rendered",
            ));
        }
        let Some(kf) = find_kustomization(&d, sources) else {
            continue; // the tool reports a missing kustomization
        };
        let stream = sources.load(&kf).map_err(|e| {
            RenderError::new(
                RenderErrorKind::Io,
                &kf,
                None,
                format!("reading '{}': {e}", kf.display()),
            )
        })?;
        let Some(root) = stream.documents.first().map(|doc| &doc.root) else {
            continue;
        };
        if let Some(e) = kustomization::first_remote(root, &kf) {
            return Err(e);
        }
        for entry in root.as_map().unwrap_or_default() {
            let Some(key) = entry.key.text() else {
                continue;
            };
            let value = &entry.value;
            let refuse = |node: &Node, message: String| {
                RenderError::new(
                    RenderErrorKind::LoadRestrictor,
                    &kf,
                    Some(node.span),
                    message,
                )
            };
            if matches!(
                key,
                "helmCharts" | "helmChartInflationGenerator" | "helmGlobals"
            ) {
                return Err(refuse(
                    &entry.key,
                    format!("`{key}` not rendered: gpulint does not let kustomize run helm"),
                ));
            }
            let paths = kustomization::references(key, value);
            for kustomization::Reference {
                node,
                written,
                folder_ok,
            } in paths
            {
                let path = normalize(&d.join(written));
                let real = crate::source::repo::resolve_inside(&path, Some(&boundary));
                match real {
                    Err(refused @ crate::source::repo::Refused::Outside { .. }) => {
                        return Err(refuse(
                            node,
                            format!("security; `{key}: {written}` {refused}"),
                        ));
                    }
                    Err(_) if !path.starts_with(&boundary) => {
                        return Err(refuse(
                            node,
                            format!(
                                "security; `{key}: {written}` is outside the repository ({}): gpulint never reads it",
                                boundary.display()
                            ),
                        ));
                    }
                    // Missing: the tool would take a name it cannot find for a remote one.
                    Err(_) if matches!(key, "resources" | "bases" | "components") => {
                        return Err(RenderError::new(
                            RenderErrorKind::MissingResource,
                            &kf,
                            Some(node.span),
                            format!("`{key}: {written}`: no such file or directory"),
                        ));
                    }
                    Err(_) => {} // an inline patch, or the tool's own error
                    Ok(real) if real.is_dir() => {
                        if folder_ok {
                            todo.push(path);
                        }
                    }
                    Ok(real) => {
                        if let Err(refused) =
                            crate::source::repo::check_file(&real, Some(&boundary))
                        {
                            return Err(refuse(node, format!("`{key}: {written}` {refused}")));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs the external tool on `dir`; the YAML stream it printed. Only after [`check_tree`]: no
/// network, no plugins, no helm, no exec (the tools' defaults, which gpulint never turns on).
pub(crate) fn run_tool(dir: &Path, options: &Options) -> Result<String, RenderError> {
    let (mut cmd, _) = if let Some(k) = on_path("kustomize") {
        let mut c = Command::new(k);
        c.arg("build");
        (c, "kustomize")
    } else if let Some(k) = on_path("kubectl") {
        let mut c = Command::new(k);
        c.arg("kustomize");
        (c, "kubectl")
    } else {
        return Err(RenderError::new(
            RenderErrorKind::External,
            dir,
            None,
            "neither `kustomize` nor `kubectl` is on PATH",
        ));
    };
    cmd.arg(dir);
    // Always said, never left to a default: every path was checked inside the repository.
    cmd.arg(match options.load_restrictor {
        LoadRestrictor::None => "--load-restrictor=LoadRestrictionsNone",
        LoadRestrictor::RootOnly => "--load-restrictor=LoadRestrictionsRootOnly",
    });
    if options.reorder == Reorder::None {
        // `kubectl kustomize` has no --reorder; legacy is what it prints.
        if on_path("kustomize").is_some() {
            cmd.arg("--reorder").arg("none");
        }
    }
    let out = cmd.output().map_err(|e| {
        RenderError::new(
            RenderErrorKind::External,
            dir,
            None,
            format!("running {cmd:?}: {e}"),
        )
    })?;
    if !out.status.success() {
        return Err(RenderError::new(
            RenderErrorKind::External,
            dir,
            None,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn render_external(
    dir: &Path,
    sources: &dyn Sources,
    options: &Options,
) -> Result<Rendered, RenderError> {
    let dir = normalize(dir);
    let Some(kfile) = find_kustomization(&dir, sources) else {
        return Err(RenderError::new(
            RenderErrorKind::MissingKustomization,
            &dir,
            None,
            "no kustomization file",
        ));
    };
    check_tree(&dir, sources, options)?;
    let text = run_tool(&dir, options)?;
    let out = Stream::parse(&text);
    if let Some(e) = &out.error {
        return Err(RenderError::new(
            RenderErrorKind::External,
            &kfile,
            None,
            format!("unparsable output: {}", e.message),
        ));
    }
    // The inputs: every resource file reachable through resources/bases/components.
    let mut files = Vec::new();
    let mut kustomizations = Vec::new();
    let mut inputs: Vec<Node> = Vec::new();
    let mut todo = vec![dir.clone()];
    let mut kspan = Span::default();
    while let Some(d) = todo.pop() {
        let Some(kf) = find_kustomization(&d, sources) else {
            continue;
        };
        if kustomizations.contains(&kf) || kustomizations.len() > 10_000 {
            continue;
        }
        let Ok(ks) = sources.load(&kf) else { continue };
        if kf == kfile {
            kspan = ks
                .documents
                .first()
                .map(|d| d.root.span)
                .unwrap_or_default();
        }
        kustomizations.push(kf.clone());
        files.push(kf.clone());
        let Ok(k) = kustomization_lenient(&ks, &kf) else {
            continue;
        };
        for r in k.resources.iter().chain(k.components.iter()) {
            let p = normalize(&d.join(&r.text));
            if sources.is_dir(&p) {
                todo.push(p);
            } else if sources.is_file(&p) {
                if let Ok(s) = sources.load(&p) {
                    files.push(p.clone());
                    if let Ok(rs) = resources_of(&s, &p) {
                        inputs.extend(rs.into_iter().map(|r| r.node));
                    }
                }
            }
        }
    }
    let objects = out
        .documents
        .iter()
        .map(|d| {
            let mut o = d.root.clone();
            super::kustomization::respan(&mut o, &|_| kspan);
            let kind = o.get_str("kind").unwrap_or_default().to_string();
            let name = o
                .get_path(&["metadata", "name"])
                .and_then(Node::text)
                .unwrap_or_default()
                .to_string();
            // Same kind, and the input's name inside the output's (prefix/suffix added): the
            // longest such name wins, so `app` does not claim what `app-server` wrote.
            let input = inputs
                .iter()
                .filter(|i| i.get_str("kind") == Some(kind.as_str()))
                .filter_map(|i| {
                    let iname = i.get_path(&["metadata", "name"]).and_then(Node::text)?;
                    (!iname.is_empty() && name.contains(iname)).then_some((iname.len(), i))
                })
                .max_by_key(|(len, _)| *len)
                .map(|(_, i)| i);
            if let Some(input) = input {
                adopt(&mut o, input);
            }
            o
        })
        .collect();
    Ok(Rendered {
        dir,
        kustomization: kfile,
        objects,
        files,
        kustomizations,
    })
}

fn kustomization_lenient(
    s: &Stream,
    f: &Path,
) -> Result<kustomization::Kustomization, RenderError> {
    kustomization::parse(s, f).or_else(|_| {
        // Unsupported features do not matter here: only the lists of files do.
        let mut k = kustomization::Kustomization::default();
        if let Some(root) = s.documents.first().map(|d| &d.root) {
            for key in ["resources", "bases", "components"] {
                for item in root.get(key).and_then(Node::as_seq).unwrap_or_default() {
                    if let Some(t) = item.text() {
                        k.resources.push(kustomization::Str {
                            text: t.to_string(),
                            node: item.clone(),
                        });
                    }
                }
            }
        }
        Ok(k)
    })
}

/// Takes the input's nodes wherever the output has the same value at the same path.
fn adopt(out: &mut Node, input: &Node) {
    if plain(out) == plain(input) {
        *out = input.clone();
        return;
    }
    match (&mut out.value, &input.value) {
        (Value::Map(o), Value::Map(i)) => {
            for e in o {
                let Some(k) = e.key.text() else { continue };
                if let Some(ie) = i.iter().find(|x| x.key.text() == Some(k)) {
                    e.key.span = ie.key.span;
                    adopt(&mut e.value, &ie.value);
                }
            }
        }
        (Value::Seq(o), Value::Seq(i)) => {
            for (a, b) in o.iter_mut().zip(i) {
                adopt(a, b);
            }
        }
        _ => {}
    }
}
