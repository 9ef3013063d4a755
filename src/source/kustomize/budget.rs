//! What bounds a render: each base is built once per render (a diamond of bases that include
//! each other twice is not rebuilt at every level), and the number of objects a render may hold
//! is capped, so a few small files cannot expand to millions of objects.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::load::Res;
use super::{RenderError, RenderErrorKind};
use crate::source::yaml::Span;

/// The most objects one render may accumulate at any level. Real overlays render hundreds;
/// 10,000 is far above that and still renders in well under a second.
pub const MAX_RENDERED_OBJECTS: usize = 10_000;

/// Bases already built in this render, by directory.
#[derive(Default)]
pub(crate) struct Budget {
    bases: HashMap<PathBuf, Vec<Res>>,
}

impl Budget {
    /// A base built before in this render. A base's output depends only on its directory
    /// (components, which build on what includes them, are never memoized).
    pub fn base(&self, dir: &Path) -> Option<Vec<Res>> {
        self.bases.get(dir).cloned()
    }

    pub fn remember_base(&mut self, dir: &Path, resources: &[Res]) {
        self.bases.insert(dir.to_path_buf(), resources.to_vec());
    }
}

/// An error once `count` objects are more than a render may hold.
pub(crate) fn check_count(
    count: usize,
    kfile: &Path,
    span: Option<Span>,
) -> Result<(), RenderError> {
    if count <= MAX_RENDERED_OBJECTS {
        return Ok(());
    }
    Err(RenderError::new(
        RenderErrorKind::TooLarge,
        kfile,
        span,
        format!(
            "the render grew to {count} objects, more than the {MAX_RENDERED_OBJECTS} a render may hold \
             (bases included many times over?)"
        ),
    ))
}
