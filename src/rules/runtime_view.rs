//! A KServe predictor's model that names no image runs its serving runtime's container with
//! the model's fields merged over it (`k8s::kserve`). The rules that read a container's engine
//! (FIT002–FIT005, GPU012, the measured GPU sizing) judge that merged view; what the runtime
//! gives is written in no file of the run (`SourceId::NOWHERE`), so a finding on it is moved
//! to the model's `runtime` (or `modelFormat`) and carries no fix, and every finding's message
//! names the runtime.

use super::{Context, Hit};
use crate::k8s::kserve::{self, Runtime, RUNTIME_SOURCE};
use crate::k8s::workload::{Container, Workload};
use crate::source::yaml::{Node, Span};

/// Runs `check` on each container of `w` that serves (not an init container, not Spark's), as
/// its runtime's view when it has one.
pub(crate) fn each_serving(
    cx: &Context,
    w: &Workload,
    hits: &mut Vec<Hit>,
    check: fn(&Context, &Workload, &Container, &mut Vec<Hit>),
) {
    for c in w.containers.iter().filter(|c| !c.init && c.spark.is_none()) {
        match of(cx, w, c) {
            Some(view) => {
                let before = hits.len();
                check(cx, w, &view.container(c), hits);
                view.settle(&mut hits[before..]);
            }
            None => check(cx, w, c, hits),
        }
    }
}

/// The merged container of a predictor model, and what it came from.
pub(crate) struct RuntimeView<'r> {
    node: Node,
    runtime: &'r Runtime,
    /// The model's `runtime` (or `modelFormat`): where findings on the runtime's values go.
    at: Span,
}

/// The view of `c` when it is an InferenceService's `predictor.model` with no image of its own
/// and its runtime is among the linted files; `None` otherwise (judged as written).
pub(crate) fn of<'r>(cx: &'r Context, w: &Workload, c: &Container) -> Option<RuntimeView<'r>> {
    let id = &w.object.id;
    let predictor_model = id.kind == "InferenceService"
        && id.api_version.starts_with("serving.kserve.io/")
        && c.path.ends_with("['predictor']['model']");
    if !predictor_model || c.node.get("image").is_some() {
        return None;
    }
    let named = c.node.get("runtime");
    let format = c.node.get_path(&["modelFormat", "name"]);
    let at = named.or(format)?.span;
    let runtime = cx.facts.kserve.runtime_for(
        super::dra::namespace(cx, w),
        named.and_then(Node::text),
        format.and_then(Node::text),
    )?;
    let node = kserve::merged(c.node, runtime)?;
    Some(RuntimeView { node, runtime, at })
}

impl RuntimeView<'_> {
    /// `c` as the merged container: the merged resources, its own pod and place.
    pub(crate) fn container<'n>(&'n self, c: &Container<'n>) -> Container<'n> {
        Container {
            node: &self.node,
            name: c.name,
            init: false,
            path: c.path.clone(),
            pod: c.pod,
            resources: crate::k8s::workload::Resources::of(&self.node),
            spark: None,
        }
    }

    /// Findings made on the view without naming the runtime (rules that read its resources, not
    /// its engine): only those on what the runtime gives move, without a fix.
    pub(crate) fn place(&self, h: &mut Hit) {
        if h.span.source == RUNTIME_SOURCE {
            h.span = self.at;
            h.comment_anchor = Some(self.at);
            h.fix = None;
        }
        if h.comment_anchor.map(|a| a.source) == Some(RUNTIME_SOURCE) {
            h.comment_anchor = Some(h.span);
        }
        if h.fix.as_ref().is_some_and(|f| f.source == RUNTIME_SOURCE) {
            h.fix = None;
        }
    }

    /// Findings made on the view: those on what the runtime gives move to the model's
    /// `runtime` (with no fix: the runtime's file is not this one), and every message names the
    /// runtime.
    pub(crate) fn settle(&self, hits: &mut [Hit]) {
        for h in hits {
            self.place(h);
            h.message.push_str(&format!(
                " (the image and settings of {})",
                self.runtime.describe()
            ));
        }
    }
}
