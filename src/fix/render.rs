//! Fixes on rendered Kustomize objects, written at their origin.
//!
//! A rendered field was written by one file: a base resource, a patch, or the kustomization.
//! The fix edits that file when only this render reads it (the overlay's own patch, a base no
//! other overlay uses); a file other renders also read (a shared base) is left alone and the fix
//! becomes a strategic-merge patch added to the overlay (a new file and its `patches:` entry).
//!
//! Verification is by rendering again: the edited texts are rendered in memory and every
//! rendered object must equal the original render plus exactly the intended changes. Nothing is
//! written unless that holds.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::apply::{allowed, AppliedFix, FileFix, FixPlan, RejectedFix};
use super::edit::{
    apply, apply_change, column, line_end, newline, plain, Applicability, Edit, FieldChange, Fix,
    Segment,
};
use crate::lint::{FileRole, Run};
use crate::renders::{display_path, render_root, RenderSettings, RenderUnit, RunSources};
use crate::rules::Finding;
use crate::source::discover::Input;
use crate::source::kustomize::to_yaml;
use crate::source::yaml::{Entry, Node, ScalarKind, Value};

/// Plans the fixes of every render unit into `plan`.
pub(super) fn plan_units(
    run: &Run,
    settings: &RenderSettings,
    unsafe_fixes: bool,
    plan: &mut FixPlan,
) {
    // How many renders read each file: a file read by more than one is not edited.
    let mut readers: HashMap<usize, usize> = HashMap::new();
    for unit in &run.units {
        for &f in &unit.files {
            *readers.entry(f).or_default() += 1;
        }
    }
    for (index, unit) in run.units.iter().enumerate() {
        let findings: Vec<&Finding> = run
            .findings
            .iter()
            .filter(|f| f.unit == Some(index))
            .collect();
        if !unsafe_fixes {
            plan.unsafe_skipped += findings
                .iter()
                .filter(|f| f.suppression.is_none())
                .filter(|f| {
                    f.fix
                        .as_ref()
                        .is_some_and(|x| x.applicability == Applicability::Unsafe)
                })
                .count();
        }
        let fixable: Vec<&Finding> = findings
            .into_iter()
            .filter(|f| allowed(f, unsafe_fixes))
            .collect();
        if fixable.is_empty() {
            continue;
        }
        let planner = UnitPlanner {
            run,
            unit,
            settings,
            readers: &readers,
        };
        planner.plan(&fixable, plan);
    }
}

struct UnitPlanner<'r> {
    run: &'r Run,
    unit: &'r RenderUnit,
    settings: &'r RenderSettings,
    readers: &'r HashMap<usize, usize>,
}

/// The texts a set of fixes produces: edited files by run index, new files by path.
#[derive(Default, Clone)]
struct Outcome {
    edited: BTreeMap<usize, String>,
    created: BTreeMap<PathBuf, String>,
}

impl<'r> UnitPlanner<'r> {
    fn path_of(&self, file: usize) -> Option<&'r Path> {
        match &self.run.files.get(file)?.input {
            Input::File(p) => Some(p),
            Input::Stdin => None,
        }
    }

    /// A file this render alone reads, that a fix may edit.
    fn editable(&self, file: usize) -> bool {
        self.readers.get(&file) == Some(&1)
            && self.unit.files.contains(&file)
            && self
                .run
                .files
                .get(file)
                .is_some_and(|f| f.role != FileRole::Plain)
    }

    fn plan(&self, findings: &[&Finding], plan: &mut FixPlan) {
        // One fix per field: two rules asking for the same change are one edit.
        let mut picked: Vec<&Finding> = Vec::new();
        for f in findings {
            let Some(fix) = &f.fix else { continue };
            let clashes = picked.iter().any(|p| {
                p.fix
                    .as_ref()
                    .is_some_and(|q| fix.document == q.document && touches_same(fix, q))
            });
            if !clashes {
                picked.push(f);
            }
        }
        let mut good: Vec<&Finding> = Vec::new();
        for f in &picked {
            match self
                .outcome(&[f])
                .and_then(|o| self.verify(&[f], &o).map(|()| o))
            {
                Ok(_) => good.push(f),
                Err(reason) => plan.rejected.push(self.rejected(f, reason)),
            }
        }
        if good.is_empty() {
            return;
        }
        let outcome = match self
            .outcome(&good)
            .and_then(|o| self.verify(&good, &o).map(|()| o))
        {
            Ok(o) => o,
            Err(reason) => {
                for f in &good {
                    plan.rejected.push(self.rejected(f, reason.clone()));
                }
                return;
            }
        };
        for (file, fixed) in outcome.edited {
            let Some(path) = self.path_of(file) else {
                continue;
            };
            let source = &self.run.files[file];
            let applied = good
                .iter()
                .filter(|f| {
                    f.file == file
                        || f.fix
                            .as_ref()
                            .is_some_and(|x| x.source.index() == Some(file))
                })
                .map(|f| self.applied(f))
                .collect();
            plan.files.push(FileFix {
                path: path.to_path_buf(),
                name: source.name.clone(),
                original: source.stream.text.to_string(),
                fixed,
                applied,
                created: false,
            });
        }
        for (path, text) in outcome.created {
            let applied = good
                .iter()
                .filter(|f| f.fix.as_ref().is_some_and(|x| !self.edits_in_place(x)))
                .map(|f| self.applied(f))
                .collect();
            plan.files.push(FileFix {
                name: display_path(&path),
                path,
                original: String::new(),
                fixed: text,
                applied,
                created: true,
            });
        }
    }

    fn applied(&self, f: &Finding) -> AppliedFix {
        let line = self
            .run
            .files
            .get(f.file)
            .map_or(0, |file| file.stream.line_col(f.span.start()).0);
        AppliedFix {
            rule: f.rule.id,
            line,
            object: format!("{} (render of {})", f.object.display_name(), self.unit.name),
            description: f
                .fix
                .as_ref()
                .map(|x| x.description.clone())
                .unwrap_or_default(),
        }
    }

    fn rejected(&self, f: &Finding, reason: String) -> RejectedFix {
        let file = self.run.files.get(f.file);
        RejectedFix {
            file: file.map(|x| x.name.clone()).unwrap_or_default(),
            line: file.map_or(0, |x| x.stream.line_col(f.span.start()).0),
            rule: f.rule.id,
            reason,
        }
    }

    fn edits_in_place(&self, fix: &Fix) -> bool {
        !fix.edits.is_empty() && fix.source.index().is_some_and(|i| self.editable(i))
    }

    /// The texts the fixes produce: edits at their origins, the rest as an overlay patch.
    fn outcome(&self, findings: &[&Finding]) -> Result<Outcome, String> {
        let mut out = Outcome::default();
        let mut by_file: BTreeMap<usize, Vec<Edit>> = BTreeMap::new();
        let mut patched: BTreeMap<usize, Vec<&FieldChange>> = BTreeMap::new();
        for f in findings {
            let Some(fix) = &f.fix else { continue };
            if self.edits_in_place(fix) {
                if let Some(file) = fix.source.index() {
                    by_file
                        .entry(file)
                        .or_default()
                        .extend(fix.edits.iter().cloned());
                }
            } else {
                patched
                    .entry(fix.document)
                    .or_default()
                    .extend(fix.changes.iter());
            }
        }
        for (file, edits) in by_file {
            let text = &self.run.files[file].stream.text;
            let fixed = apply(text, &edits).ok_or("the edits overlap")?;
            out.edited.insert(file, fixed);
        }
        if !patched.is_empty() {
            self.overlay_patches(&patched, &mut out)?;
        }
        Ok(out)
    }

    /// Writes one strategic-merge patch file per object into the overlay and lists them under
    /// the kustomization's `patches:`.
    fn overlay_patches(
        &self,
        patched: &BTreeMap<usize, Vec<&FieldChange>>,
        out: &mut Outcome,
    ) -> Result<(), String> {
        let home = self.unit.home;
        let kustomization = self.path_of(home).ok_or("no kustomization file")?;
        let dir = kustomization.parent().unwrap_or(Path::new("."));
        let root = self.run.files[home]
            .stream
            .documents
            .first()
            .map(|d| d.root.clone())
            .ok_or("the kustomization is empty")?;
        let mut text = out
            .edited
            .get(&home)
            .cloned()
            .unwrap_or_else(|| self.run.files[home].stream.text.to_string());
        let mut entries = Vec::new();
        for (&document, changes) in patched {
            let object = self.unit.objects.get(document).ok_or("object not found")?;
            let patch = strategic_patch(object, changes, &root)?;
            let kind = patch
                .get_str("kind")
                .unwrap_or("object")
                .to_ascii_lowercase();
            let name = patch
                .get("metadata")
                .and_then(|m| m.get_str("name"))
                .unwrap_or("unnamed")
                .to_string();
            let mut file = format!("gpulint-{kind}-{name}.yaml");
            let mut n = 2;
            while dir.join(&file).exists() || out.created.contains_key(&dir.join(&file)) {
                file = format!("gpulint-{kind}-{name}-{n}.yaml");
                n += 1;
            }
            let mut body = format!(
                "# Added by `gpulint --fix` for this overlay only: the base it patches is shared\n\
                 # with other overlays.\n{}",
                to_yaml(std::slice::from_ref(&patch))
            );
            if !body.ends_with('\n') {
                body.push('\n');
            }
            out.created.insert(dir.join(&file), body);
            entries.push(file);
        }
        text = add_patch_entries(&text, &entries)?;
        out.edited.insert(home, text);
        Ok(())
    }

    /// Renders again with the fixed texts: every object must equal the original plus exactly
    /// the intended changes.
    fn verify(&self, findings: &[&Finding], outcome: &Outcome) -> Result<(), String> {
        let mut overrides: HashMap<PathBuf, String> = HashMap::new();
        for (file, text) in &outcome.edited {
            if let Some(p) = self.path_of(*file) {
                overrides.insert(p.to_path_buf(), text.clone());
            }
        }
        for (p, text) in &outcome.created {
            overrides.insert(p.clone(), text.clone());
        }
        let sources = RunSources::new(&self.run.files, overrides, self.settings.boundary.clone());
        let rendered = render_root(&self.unit.dir, &sources, self.settings)
            .map_err(|e| format!("the fixed overlay does not render: {}", e.message))?;
        let mut expected: Vec<Json> = self.unit.objects.iter().map(plain).collect();
        for f in findings {
            let Some(fix) = &f.fix else { continue };
            let doc = expected.get_mut(fix.document).ok_or("object not found")?;
            for change in &fix.changes {
                apply_change(doc, change).ok_or("the change does not apply")?;
            }
        }
        let actual: Vec<Json> = rendered.objects.iter().map(plain).collect();
        if actual != expected {
            return Err(
                "rendering the fixed files again does not give exactly the intended values; \
                 fix it by hand"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Whether two fixes write the same field.
fn touches_same(a: &Fix, b: &Fix) -> bool {
    let paths = |f: &Fix| -> Vec<Vec<Segment>> {
        f.changes
            .iter()
            .map(|c| match c {
                FieldChange::Set { path, .. } | FieldChange::Rename { path, .. } => path.clone(),
            })
            .collect()
    };
    let pb = paths(b);
    paths(a).iter().any(|p| pb.contains(p))
}

fn map_node(entries: Vec<(String, Node)>) -> Node {
    Node {
        value: Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| Entry {
                    key: Node::scalar(&k, ScalarKind::Str),
                    value: v,
                })
                .collect(),
        ),
        ..Node::default()
    }
}

/// Sets `path` (on the rendered object `object`) to `value` in the patch tree `patch`, naming
/// list elements by their merge key (`name`) as strategic merge does.
fn set_in_patch(
    patch: &mut Node,
    object: &Node,
    path: &[Segment],
    value: &str,
    kind: ScalarKind,
) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *patch = Node::scalar(value, kind);
        return Ok(());
    };
    match first {
        Segment::Key(key) => {
            if !matches!(patch.value, Value::Map(_)) {
                *patch = map_node(Vec::new());
            }
            let next_object = object.get(key).cloned().unwrap_or_default();
            let Value::Map(entries) = &mut patch.value else {
                return Err("patch shape".into());
            };
            let pos = match entries
                .iter()
                .position(|e| e.key.text() == Some(key.as_str()))
            {
                Some(p) => p,
                None => {
                    entries.push(Entry {
                        key: Node::scalar(key, ScalarKind::Str),
                        value: Node::default(),
                    });
                    entries.len() - 1
                }
            };
            set_in_patch(&mut entries[pos].value, &next_object, rest, value, kind)
        }
        Segment::Index(i) => {
            let element = object
                .as_seq()
                .and_then(|items| items.get(*i))
                .ok_or("list element not found")?;
            let name = element
                .get_str("name")
                .ok_or("a list element without a `name` cannot be patched by strategic merge")?;
            if !matches!(patch.value, Value::Seq(_)) {
                patch.value = Value::Seq(Vec::new());
            }
            let Value::Seq(items) = &mut patch.value else {
                return Err("patch shape".into());
            };
            let pos = match items.iter().position(|n| n.get_str("name") == Some(name)) {
                Some(p) => p,
                None => {
                    items.push(map_node(vec![(
                        "name".into(),
                        Node::scalar(name, ScalarKind::Str),
                    )]));
                    items.len() - 1
                }
            };
            set_in_patch(&mut items[pos], element, rest, value, kind)
        }
    }
}

/// A strategic-merge patch of `object` that makes `changes`, addressed by the object's name
/// before the overlay's own prefix and suffix (kustomize matches patches on that name).
fn strategic_patch(
    object: &Node,
    changes: &[&FieldChange],
    kustomization: &Node,
) -> Result<Node, String> {
    let api_version = object
        .get_str("apiVersion")
        .ok_or("object without apiVersion")?;
    let kind = object.get_str("kind").ok_or("object without kind")?;
    let metadata = object.get("metadata").ok_or("object without metadata")?;
    let mut name = metadata.get_str("name").ok_or("object without a name")?;
    if let Some(prefix) = kustomization.get_str("namePrefix") {
        name = name.strip_prefix(prefix).unwrap_or(name);
    }
    if let Some(suffix) = kustomization.get_str("nameSuffix") {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    let mut meta = vec![("name".to_string(), Node::scalar(name, ScalarKind::Str))];
    if let Some(ns) = metadata.get_str("namespace") {
        if kustomization.get("namespace").is_none() {
            meta.push(("namespace".into(), Node::scalar(ns, ScalarKind::Str)));
        }
    }
    let mut patch = map_node(vec![
        (
            "apiVersion".into(),
            Node::scalar(api_version, ScalarKind::Str),
        ),
        ("kind".into(), Node::scalar(kind, ScalarKind::Str)),
        ("metadata".into(), map_node(meta)),
    ]);
    for change in changes {
        let FieldChange::Set { path, value } = change else {
            return Err("only value changes can be written as an overlay patch".into());
        };
        let kind = if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() {
            ScalarKind::Int
        } else {
            ScalarKind::Str
        };
        set_in_patch(&mut patch, object, path, value, kind)?;
    }
    Ok(patch)
}

/// Lists `files` under the kustomization's `patches:` (created when missing), in the style of
/// its other lists.
fn add_patch_entries(text: &str, files: &[String]) -> Result<String, String> {
    let stream = crate::source::yaml::Stream::parse(text);
    let root = stream
        .documents
        .first()
        .map(|d| &d.root)
        .ok_or("the kustomization is empty")?;
    let nl = newline(text);
    if let Some(patches) = root.get("patches") {
        let items = patches
            .as_seq()
            .filter(|_| !patches.flow)
            .ok_or("`patches:` is not a block list; add the patch by hand")?;
        let last = items
            .last()
            .ok_or("`patches:` is empty; add the patch by hand")?;
        // `- path: x`: the dash sits two columns before the item's content.
        let dash = column(text, items[0].span.start()).saturating_sub(2);
        let at = line_end(text, last.span.end());
        let body: String = files
            .iter()
            .map(|f| format!("{nl}{}- path: {f}", " ".repeat(dash)))
            .collect();
        return apply(
            text,
            &[Edit {
                start: at,
                end: at,
                content: body,
            }],
        )
        .ok_or_else(|| "edit".into());
    }
    // Indent the new list like `resources:` is (`- x` at column 0 or 2).
    let dash = root
        .get("resources")
        .and_then(Node::as_seq)
        .and_then(|items| items.first())
        .map_or(0, |item| column(text, item.span.start()).saturating_sub(2));
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') && !out.ends_with('\r') {
        out.push_str(nl);
    }
    out.push_str(&format!("patches:{nl}"));
    for f in files {
        out.push_str(&format!("{}- path: {f}{nl}", " ".repeat(dash)));
    }
    Ok(out)
}
