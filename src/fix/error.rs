//! Why a fix was not written. Each message is what `--fix` prints after `not fixed:` (and what
//! the JSON and the per-rule snapshots carry), so the wording is part of the output: a message
//! that names no way forward ends with what the user can do instead.

use crate::edit::Rejected;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FixError {
    // ── A plain file: the edited text, parsed and compared again.
    #[error("the fixed file would not parse: {0}")]
    Unparsable(String),
    #[error(
        "the edit would change more than the intended field (an anchor/alias or an unusual \
         layout); fix it by hand"
    )]
    Unintended,

    // ── A Kustomize render: edits at the origin, or an overlay patch.
    #[error("the fix has no file to edit")]
    NoFileToEdit,
    #[error("the edits overlap")]
    EditsOverlap,
    #[error("the overlay's kustomization is read by other renders too")]
    KustomizationShared,
    #[error("no kustomization file")]
    NoKustomizationFile,
    #[error("the kustomization is empty")]
    KustomizationEmpty,
    #[error("`patches:` is not a block list; add the patch by hand")]
    PatchesNotBlockList,
    #[error("`patches:` is empty; add the patch by hand")]
    PatchesEmpty,
    /// The rendered object lacks what a strategic-merge patch must name (`kind`, `a name`, …).
    #[error("object without {0}")]
    ObjectWithout(&'static str),
    #[error("a list element without a `name` cannot be patched by strategic merge")]
    ListElementWithoutName,
    #[error("only value changes can be written as an overlay patch")]
    OnlyValueChanges,
    #[error("the gpulint patch of this object is not one document")]
    PatchNotOneDocument,
    #[error("the gpulint patch of this object was changed by hand; fix it by hand")]
    PatchChangedByHand,
    /// A patch file is named after the object: its kind and name must be safe in a file name.
    #[error(
        "the object's kind or name ({0}) is not a Kubernetes name (a DNS-1123 subdomain): no \
         patch file is named after it; fix it by hand"
    )]
    UnsafeFileName(String),
    #[error("the fixed overlay does not render: {0}")]
    OverlayDoesNotRender(String),
    #[error(
        "rendering the fixed files again does not give exactly the intended values; fix it by \
         hand"
    )]
    RenderDiffers,

    // ── Several clusters, one file.
    #[error(
        "clusters {clusters} apply this file and each has its own measurements: write each \
         cluster's value in an overlay only that cluster applies"
    )]
    SharedByClusters { clusters: String },
    #[error(
        "Flux substitutes variables in this object (postBuild); fix it by hand, in the \
         variable's value if that is where it belongs"
    )]
    FluxVariables,
    #[error(
        "the value is set in {file} by the Flux Kustomization's patches (spec.patches), applied \
         after the folder's own files; gpulint does not edit them yet: change it there, by hand"
    )]
    SetByApplierPatch { file: String },

    // ── A Helm release: values leaves, verified by `helm template`.
    #[error(
        "no values key alone makes {field} (suggested: {suggested}); set it in the chart's values \
         by hand"
    )]
    NoValuesKey { field: String, suggested: String },
    #[error(
        "{field} is written by the chart's template, not by a values key; rename it to {to} \
         there by hand"
    )]
    RenameInTemplate { field: String, to: String },
    #[error("another fix sets the same values key; run --fix again")]
    SameValuesKey,
    #[error("the values edits overlap")]
    ValuesEditsOverlap,
    #[error("the edited manifest no longer declares the release")]
    ReleaseNotDeclared,
    #[error("the fixed values do not render: {0}")]
    ValuesDoNotRender(String),
    #[error("the release does not render again: {0}")]
    ReleaseDoesNotRender(String),
    #[error("the fixed values render a different set of objects")]
    DifferentObjects,
    #[error(
        "rendering the fixed values does not give exactly the intended fields; change the values \
         by hand"
    )]
    ValuesRenderDiffers,
    /// Reading a values file or writing its edited copy for the verifying render.
    #[error("{path}: {message}")]
    Io { path: String, message: String },

    /// A finding, fix or object the plan itself built cannot be found again: a bug in gpulint,
    /// reported instead of writing anything.
    #[error("{0}")]
    Inconsistent(&'static str),
}

impl FixError {
    pub(super) fn io(path: &std::path::Path, e: std::io::Error) -> FixError {
        FixError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

impl From<Rejected> for FixError {
    fn from(why: Rejected) -> FixError {
        match why {
            Rejected::Unparsable(e) => FixError::Unparsable(e),
            Rejected::Unintended => FixError::Unintended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages users and snapshots see, unchanged by the move from strings to this type.
    #[test]
    fn messages_read_as_before() {
        let cases = [
            (
                FixError::from(Rejected::Unintended),
                "the edit would change more than the intended field (an anchor/alias or an \
                 unusual layout); fix it by hand",
            ),
            (
                FixError::RenderDiffers,
                "rendering the fixed files again does not give exactly the intended values; fix \
                 it by hand",
            ),
            (
                FixError::NoValuesKey {
                    field: ".spec.x".into(),
                    suggested: "memory: 1Gi".into(),
                },
                "no values key alone makes .spec.x (suggested: memory: 1Gi); set it in the \
                 chart's values by hand",
            ),
            (FixError::ObjectWithout("a name"), "object without a name"),
        ];
        for (error, message) in cases {
            assert_eq!(error.to_string(), message);
        }
    }
}
