//! Fixes that land: byte-range edits on the origin file, verified before anything is written,
//! written atomically, shown as a diff, a patch or a commit.

pub mod apply;
pub mod commit;
pub mod helm;
pub mod patch;
pub mod render;
pub mod write;
