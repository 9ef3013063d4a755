//! Unified diffs of planned fixes: `--diff` for people, `--patch` for `git apply`.

use similar::TextDiff;

use super::plan::FixPlan;
use crate::source::repo::{git_work_tree, relative_to};

fn unified(old: &str, new: &str, a: &str, b: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(a, b)
        .to_string()
}

/// The diff of every fixed file, named as walked (`a/<path>` and `b/<path>`).
pub fn diff(plan: &FixPlan) -> String {
    plan.files
        .iter()
        .map(|f| {
            let old_name = if f.created {
                "/dev/null".to_string()
            } else {
                format!("a/{}", f.name)
            };
            unified(&f.original, &f.fixed, &old_name, &format!("b/{}", f.name))
        })
        .collect()
}

/// A patch `git apply` accepts: paths relative to the repository root (or to the working
/// directory outside a repository).
pub fn patch(plan: &FixPlan) -> Result<String, String> {
    let mut out = String::new();
    for f in &plan.files {
        let root = git_work_tree(&f.path)
            .or_else(|| {
                std::env::current_dir()
                    .ok()
                    .and_then(|d| std::fs::canonicalize(d).ok())
            })
            .ok_or_else(|| "cannot tell the working directory".to_string())?;
        let rel = relative_to(&f.path, &root)
            .ok_or_else(|| format!("{}: not below {}", f.name, root.display()))?;
        out.push_str(&format!("diff --git a/{rel} b/{rel}\n"));
        if f.created {
            out.push_str("new file mode 100644\n");
        }
        let old_name = if f.created {
            "/dev/null".to_string()
        } else {
            format!("a/{rel}")
        };
        out.push_str(&unified(
            &f.original,
            &f.fixed,
            &old_name,
            &format!("b/{rel}"),
        ));
    }
    Ok(out)
}
