//! Fallback: render with an external `kustomize build` or `kubectl kustomize`, then map origins
//! back by resource identity. For each output object, the input resource with the same kind and
//! name (modulo namePrefix/nameSuffix) is found among the files the tree lists; every output node
//! whose value equals the input's at the same path takes the input node (and its span); anything
//! else points at the kustomization file.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::kustomization::{self};
use super::load::{find_kustomization, resources_of};
use super::vet;
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
/// remote resource or file (the tool would fetch it or run `git`/`ssh`), every local path inside
/// the repository once symlinks are followed (under `LoadRestrictionsNone` too, generators
/// included) and outside `.git`, nothing that needs Helm or a plugin. The tree must read the
/// same to kustomize as to gpulint ([`vet`]: kustomize's field names only, written exactly; no
/// merge key, no tag); generator, transformer and validator configs (files or inline) are
/// builtin plugins whose paths are checked too. Only then does the tool run, so what it reads
/// is what gpulint checked.
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
        let vetted = |r: vet::Refusal| {
            RenderError::new(
                RenderErrorKind::LoadRestrictor,
                &kf,
                Some(r.span),
                format!("security; {}", r.message),
            )
        };
        vet::check_stream(&stream, false).map_err(vetted)?;
        let Some(root) = stream.documents.first().map(|doc| &doc.root) else {
            continue;
        };
        vet::check_fields(root).map_err(vetted)?;
        vet::check_keys(root).map_err(vetted)?;
        if let Some(e) = kustomization::first_remote(root, &kf) {
            return Err(e);
        }
        let place = Place {
            boundary: &boundary,
            file: &kf,
            dir: &d,
        };
        for entry in root.as_map().unwrap_or_default() {
            let Some(key) = entry.key.text() else {
                continue; // check_fields refused it
            };
            let value = &entry.value;
            if matches!(
                key,
                "helmCharts" | "helmChartInflationGenerator" | "helmGlobals"
            ) {
                return Err(place.refuse(
                    &entry.key,
                    format!("`{key}` not rendered: gpulint does not let kustomize run helm"),
                ));
            }
            if matches!(key, "generators" | "transformers" | "validators") {
                check_plugins(&place, key, value, sources)?;
                continue;
            }
            for r in kustomization::references(key, value) {
                if let Some(folder) = place.check(key, r.node, r.written, r.folder_ok)? {
                    todo.push(folder);
                }
            }
        }
    }
    Ok(())
}

/// Where a path was written: the kustomization file, its folder, the repository.
struct Place<'a> {
    boundary: &'a Path,
    /// The file errors point into (the kustomization, or a plugin config file).
    file: &'a Path,
    /// The folder paths are relative to (the kustomization's).
    dir: &'a Path,
}

impl Place<'_> {
    fn refuse(&self, node: &Node, message: String) -> RenderError {
        RenderError::new(
            RenderErrorKind::LoadRestrictor,
            self.file,
            Some(node.span),
            message,
        )
    }

    /// One path written under `key`: refused when remote, outside the repository (symlinks
    /// followed), in `.git`, or a folder holding a symlink that leaves the repository where a
    /// file is expected. `Some(folder)`: a kustomization folder to check in turn.
    fn check(
        &self,
        key: &str,
        node: &Node,
        written: &str,
        folder_ok: bool,
    ) -> Result<Option<PathBuf>, RenderError> {
        if kustomization::is_remote(written) {
            return Err(kustomization::remote_not_rendered(
                self.file, node, key, written,
            ));
        }
        let path = normalize(&self.dir.join(written));
        let in_git = |p: &Path| vet::names_git(p.strip_prefix(self.boundary).unwrap_or(p));
        if in_git(&path) {
            return Err(self.refuse(
                node,
                format!("security; `{key}: {written}` is in `.git`: gpulint never hands it to kustomize"),
            ));
        }
        let real = crate::source::repo::resolve_inside(&path, Some(self.boundary));
        match real {
            Err(refused @ crate::source::repo::Refused::Outside { .. }) => Err(self.refuse(
                node,
                format!("security; `{key}: {written}` {refused}"),
            )),
            Err(crate::source::repo::Refused::InGit) => Err(self.refuse(
                node,
                format!("security; `{key}: {written}` resolves into `.git`: gpulint never hands it to kustomize"),
            )),
            Err(_) if !path.starts_with(self.boundary) => Err(self.refuse(
                node,
                format!(
                    "security; `{key}: {written}` is outside the repository ({}): gpulint never reads it",
                    self.boundary.display()
                ),
            )),
            // Missing: the tool would take a name it cannot find for a remote one.
            Err(_) if matches!(key, "resources" | "bases" | "components") => {
                Err(RenderError::new(
                    RenderErrorKind::MissingResource,
                    self.file,
                    Some(node.span),
                    format!("`{key}: {written}`: no such file or directory"),
                ))
            }
            Err(_) => Ok(None), // an inline patch, a field path, or the tool's own error
            Ok(real) if in_git(&real) => Err(self.refuse(
                node,
                format!("security; `{key}: {written}` resolves into `.git`: gpulint never hands it to kustomize"),
            )),
            Ok(real) if real.is_dir() => {
                if folder_ok {
                    return Ok(Some(path));
                }
                // A folder of files (a generator's `files: [dir]` reads each file in it).
                match crate::source::repo::symlink_leaving(&real, self.boundary) {
                    Some((link, refused)) => Err(self.refuse(
                        node,
                        format!("security; `{key}: {written}` holds {}, which {refused}", link.display()),
                    )),
                    None => Ok(None),
                }
            }
            Ok(real) => match crate::source::repo::check_file(&real, Some(self.boundary)) {
                Err(refused) => Err(self.refuse(node, format!("`{key}: {written}` {refused}"))),
                Ok(_) => Ok(None),
            },
        }
    }
}

/// `generators`, `transformers` or `validators`: each entry a plugin config file or an inline
/// config (a string kustomize parses as YAML); a folder (a kustomization whose output would be
/// the configs) is refused. Each config is a builtin plugin; every path it names is checked
/// from the kustomization's folder (where kustomize reads it) and from the config's own.
fn check_plugins(
    place: &Place<'_>,
    key: &str,
    value: &Node,
    sources: &dyn Sources,
) -> Result<(), RenderError> {
    let items: Vec<&Node> = match &value.value {
        Value::Seq(items) => items.iter().collect(),
        _ if value.is_null() => Vec::new(),
        _ => vec![value],
    };
    for item in items {
        let Some(text) = item.text() else {
            return Err(place.refuse(item, format!("security; `{key}` entries are strings")));
        };
        // Kustomize takes an entry that parses as a resource for an inline config, else a path:
        // both readings are checked.
        let inline = crate::source::yaml::Stream::parse(text);
        if inline.documents.iter().any(|d| d.root.as_map().is_some()) {
            vet::check_stream(&inline, true).map_err(|r| {
                place.refuse(
                    item,
                    format!("security; inline `{key}` entry: {}", r.message),
                )
            })?;
            for doc in &inline.documents {
                let paths = vet::plugin_config(&doc.root).map_err(|r| {
                    place.refuse(
                        item,
                        format!("security; inline `{key}` entry: {}", r.message),
                    )
                })?;
                for p in paths {
                    // Inline nodes carry no place in the file: errors point at the entry.
                    place.check(key, item, p.written, false)?;
                }
            }
        }
        if text.contains('\n') {
            continue;
        }
        let Some(path) = place.check(key, item, text, true)? else {
            let path = normalize(&place.dir.join(text));
            if !sources.is_file(&path) {
                continue; // missing: the tool's own error
            }
            let stream = sources.load(&path).map_err(|e| {
                RenderError::new(
                    RenderErrorKind::Io,
                    &path,
                    None,
                    format!("reading '{}': {e}", path.display()),
                )
            })?;
            let config = Place {
                boundary: place.boundary,
                file: &path,
                dir: place.dir,
            };
            let own = Place {
                dir: path.parent().unwrap_or(place.dir),
                ..config
            };
            let vetted = |r: vet::Refusal| {
                RenderError::new(
                    RenderErrorKind::LoadRestrictor,
                    &path,
                    Some(r.span),
                    format!("security; {}", r.message),
                )
            };
            vet::check_stream(&stream, true).map_err(vetted)?;
            for doc in &stream.documents {
                for p in vet::plugin_config(&doc.root).map_err(vetted)? {
                    config.check(key, p.node, p.written, false)?;
                    own.check(key, p.node, p.written, false)?;
                }
            }
            continue;
        };
        return Err(place.refuse(
            item,
            format!(
                "security; `{key}: {text}` is a folder ({}): gpulint hands kustomize only plugin config files it checked; list the files",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// How long one external render may take (at most: what is left of the run's budget), how much
/// it may print, and its address space.
const TOOL_LIMITS: crate::source::child::Limits = crate::source::child::Limits {
    timeout: std::time::Duration::from_secs(60),
    max_output: 64 << 20,
    max_memory: Some(crate::source::child::MAX_CHILD_MEMORY),
};

/// Runs the external tool on `dir`; the YAML stream it printed. Only after [`check_tree`]: no
/// network, no plugins, no helm, no exec (the tools' defaults, which gpulint never turns on),
/// an environment with no proxy, no plugin home, git with no transport and `HOME` a private
/// empty folder; within [`TOOL_LIMITS`].
pub(crate) fn run_tool(dir: &Path, options: &Options) -> Result<String, RenderError> {
    let failed = |message: String| RenderError::new(RenderErrorKind::External, dir, None, message);
    let (mut cmd, _) = if let Some(k) = on_path("kustomize") {
        let mut c = Command::new(k);
        c.arg("build");
        (c, "kustomize")
    } else if let Some(k) = on_path("kubectl") {
        let mut c = Command::new(k);
        c.arg("kustomize");
        (c, "kubectl")
    } else {
        return Err(failed(
            "neither `kustomize` nor `kubectl` is on PATH".to_string(),
        ));
    };
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
    cmd.arg("--").arg(dir);
    let home = tempfile::Builder::new()
        .prefix("gpulint-kustomize-")
        .tempdir()
        .map_err(|e| failed(format!("making a private HOME for kustomize: {e}")))?;
    crate::source::child::sanitize_env(&mut cmd, home.path());
    let program = cmd.get_program().to_string_lossy().into_owned();
    let left = options.budget.remaining();
    if left.is_zero() {
        return Err(failed(format!(
            "not rendered: the run's {} s for renderers (--render-budget) are spent",
            options.budget.total().as_secs()
        )));
    }
    let limits = crate::source::child::Limits {
        timeout: TOOL_LIMITS.timeout.min(left),
        ..TOOL_LIMITS
    };
    let ended = crate::source::child::run(&mut cmd, limits)
        .map_err(|e| failed(format!("running {program}: {e}")))?;
    match ended {
        crate::source::child::Ended::Exited {
            status,
            stdout,
            stderr,
        } => {
            if !status.success() {
                return Err(failed(String::from_utf8_lossy(&stderr).trim().to_string()));
            }
            Ok(String::from_utf8_lossy(&stdout).into_owned())
        }
        crate::source::child::Ended::TimedOut => Err(failed(format!(
            "{program} took more than {} s: stopped, not rendered{}",
            limits.timeout.as_secs(),
            if limits.timeout < TOOL_LIMITS.timeout {
                " (the end of the run's --render-budget)"
            } else {
                ""
            }
        ))),
        crate::source::child::Ended::TooMuchOutput => Err(failed(format!(
            "{program} printed more than {} MiB: stopped, not rendered",
            TOOL_LIMITS.max_output >> 20
        ))),
    }
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
    if out.documents.len() > options.max_objects {
        return Err(RenderError::new(
            RenderErrorKind::TooLarge,
            &kfile,
            None,
            format!(
                "kustomize rendered {} objects, more than {} (--max-render-objects): not linted",
                out.documents.len(),
                options.max_objects
            ),
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
