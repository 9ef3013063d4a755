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
use crate::fix::edit::plain;
use crate::source::yaml::{Node, Span, Stream, Value};

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs the external tool on `dir`; the YAML stream it printed.
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
    if options.load_restrictor == LoadRestrictor::None {
        cmd.arg("--load-restrictor").arg("LoadRestrictionsNone");
    }
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
