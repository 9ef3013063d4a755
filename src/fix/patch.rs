//! Unified diffs of planned fixes: `--diff` for people, `--patch` for `git apply`.

use std::path::{Path, PathBuf};

use similar::TextDiff;

use super::apply::FixPlan;

/// The repository root of a path, if it is inside a git work tree.
pub fn repo_root(path: &Path) -> Option<PathBuf> {
    let repo = git2::Repository::discover(path).ok()?;
    let workdir = repo.workdir()?;
    std::fs::canonicalize(workdir).ok()
}

/// A path relative to `root`, with `/` separators, as git writes it.
pub fn relative_to(path: &Path, root: &Path) -> Option<String> {
    // A file a fix creates does not exist yet: resolve its folder.
    let absolute = std::fs::canonicalize(path).ok().or_else(|| {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        Some(
            std::fs::canonicalize(dir.unwrap_or(Path::new(".")))
                .ok()?
                .join(path.file_name()?),
        )
    })?;
    let rel = absolute.strip_prefix(root).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}

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
        let root = repo_root(&f.path)
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
