//! The fix engine, above `rules`: plans the fixes of a run's findings in rounds (`apply.rs`),
//! lands them at the origin (`kustomize.rs`: files a Kustomize render read, or an overlay patch;
//! `helm.rs`: values leaves), verified before anything is written, then writes them atomically
//! (`write.rs`), or shows them as a diff, a patch or a commit. The edits themselves are
//! `crate::edit`, which rules build fixes with.

pub mod apply;
pub mod commit;
pub mod helm;
pub mod kustomize;
pub mod patch;
pub mod write;
