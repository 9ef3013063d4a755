//! KUS001: what a Kustomize render lost. Kustomize merges lists by key only for the kinds it has
//! a schema for: a strategic-merge patch on a CRD (PyTorchJob, RayCluster, JobSet, …) replaces
//! a whole `containers` list with the patch's, so a patch written to change one container's
//! resources silently drops its image and every other field the base set.

use super::{container_label, Context, Hit, Rule};
use crate::k8s::workload::Workload;

pub fn check(cx: &Context, w: &Workload, hits: &mut Vec<Hit>) {
    // Only objects rendered by Kustomize: a file as written is the author's to complete.
    if cx.target.files.is_empty() {
        return;
    }
    for c in &w.containers {
        // Unnamed container-like blocks (KServe `predictor.model`) take no image.
        let (Some(_), Some(name)) = (c.name, c.node.entry("name")) else {
            continue;
        };
        if c.spark.is_some() || c.node.get("image").is_some_and(|i| !i.is_null()) {
            continue;
        }
        let builtin = matches!(
            w.object.id.api_version.split('/').next(),
            Some("v1" | "apps" | "batch")
        ) && !w.object.id.api_version.contains('.');
        let why = if builtin {
            "the rendered container has no image".to_string()
        } else {
            format!(
                "the rendered {} has no image: kustomize does not merge lists inside a {} (no \
                 schema), so a strategic-merge patch replaces the whole list with its own \
                 containers",
                container_label(c),
                w.object.id.kind
            )
        };
        hits.push(
            Hit::new(
                Rule::RenderedContainerWithoutImage,
                name.value.span,
                why,
                "no image after rendering".into(),
            )
            .container(c)
            .help(
                "patch the field with a JSON 6902 patch (`op: replace`, path \
                 /spec/…/containers/0/resources), or repeat the whole container in the patch",
            ),
        );
    }
}
