//! The fix engine, above `rules`: plans the fixes of a run's findings (`plan.rs`: one rounds
//! driver over a [`plan::Target`] per origin), lands them where the value is written (`file.rs`:
//! a plain file; `kustomize.rs`: files a Kustomize render read, or an overlay patch built by
//! `overlay_patch.rs`; `helm.rs`: values leaves), verified before anything is written, then
//! writes them atomically (`write.rs`), or shows them as a diff, a patch or a commit. The edits
//! themselves are `crate::edit`, which rules build fixes with. Why a fix did not land is a
//! [`FixError`].

pub mod commit;
mod error;
mod file;
mod helm;
mod kustomize;
mod overlay_patch;
pub mod patch;
pub mod plan;
pub mod write;

pub use error::FixError;
