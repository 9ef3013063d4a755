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
    /// How many more times each base will be asked for (see `load::base_uses`); `None`: not
    /// known, every base is kept to the end of the render.
    uses: Option<HashMap<PathBuf, usize>>,
}

impl Budget {
    pub fn with_uses(uses: Option<HashMap<PathBuf, usize>>) -> Budget {
        Budget {
            bases: HashMap::new(),
            uses,
        }
    }

    /// A base built before in this render. A base's output depends only on its directory
    /// (components, which build on what includes them, are never memoized). Its last user
    /// takes it: no copy is made, and nothing is kept to the end of the render.
    pub fn base(&mut self, dir: &Path) -> Option<Vec<Res>> {
        if !self.bases.contains_key(dir) {
            return None; // not built yet: `remember_base` counts this use
        }
        let left = self.uses.as_mut().and_then(|u| u.get_mut(dir));
        match left {
            Some(left) => {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.bases.remove(dir)
                } else {
                    self.bases.get(dir).cloned()
                }
            }
            None => self.bases.get(dir).cloned(),
        }
    }

    /// Keeps a base just built for its later users (none: nothing is kept, no copy made).
    pub fn remember_base(&mut self, dir: &Path, resources: &[Res]) {
        let later = match self.uses.as_mut().and_then(|u| u.get_mut(dir)) {
            Some(left) => {
                *left = left.saturating_sub(1);
                *left
            }
            None => 1,
        };
        if later > 0 {
            self.bases.insert(dir.to_path_buf(), resources.to_vec());
        }
    }
}

/// An error once `count` objects are more than a render may hold.
pub(crate) fn check_count(
    count: usize,
    max: usize,
    kfile: &Path,
    span: Option<Span>,
) -> Result<(), RenderError> {
    if count <= max {
        return Ok(());
    }
    Err(RenderError::new(
        RenderErrorKind::TooLarge,
        kfile,
        span,
        format!(
            "the render grew to {count} objects, more than the {max} a render may hold \
             (bases included many times over? --max-render-objects raises the cap)"
        ),
    ))
}
