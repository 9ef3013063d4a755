//! `--fix --commit`: commit exactly the fixed files on the current branch (git2).

use std::sync::atomic::AtomicBool;

use git2::{Repository, Signature, Status};

use super::plan::FixPlan;
use crate::source::repo::{git_work_tree, relative_to};

/// The commit message: a summary line, then one line per change.
pub fn message(plan: &FixPlan, custom: Option<&str>) -> String {
    let count: usize = plan.files.iter().map(|f| f.applied.len()).sum();
    let mut msg = custom.map_or_else(
        || {
            format!(
                "gpulint: fix {count} finding(s) in {} file(s)",
                plan.files.len()
            )
        },
        str::to_string,
    );
    msg.push_str("\n\n");
    for f in &plan.files {
        for a in &f.applied {
            msg.push_str(&format!(
                "- {}:{}: {} {} ({})\n",
                f.name, a.line, a.rule, a.description, a.object
            ));
        }
    }
    msg
}

/// Checks that a commit is possible (inside a repository, the files have no uncommitted changes
/// of the user's), writes the fixes, stages exactly those files and commits. The writes are all
/// or nothing: a refused target, a file changed meanwhile or a `stop` request (SIGINT/SIGTERM)
/// leaves every file as it was and commits nothing.
pub fn commit(
    plan: &FixPlan,
    custom_message: Option<&str>,
    stop: &AtomicBool,
) -> Result<Committed, String> {
    let first = plan.files.first().ok_or("nothing to commit")?;
    let root = git_work_tree(&first.path)
        .ok_or_else(|| format!("{}: not inside a git repository", first.name))?;
    let repo = Repository::open(&root).map_err(|e| format!("cannot open the repository: {e}"))?;
    let mut paths = Vec::new();
    for f in &plan.files {
        let rel = relative_to(&f.path, &root).ok_or_else(|| {
            format!(
                "{}: not inside the repository at {}",
                f.name,
                root.display()
            )
        })?;
        if f.created {
            // A new file (an overlay patch): it must not exist yet; `write` checks that again.
            if f.path.exists() {
                return Err(format!("{}: already exists (nothing written)", f.name));
            }
            paths.push(rel);
            continue;
        }
        let status = repo
            .status_file(std::path::Path::new(&rel))
            .map_err(|e| format!("{}: cannot read its git status: {e}", f.name))?;
        let dirty = Status::WT_MODIFIED
            | Status::INDEX_MODIFIED
            | Status::WT_NEW
            | Status::INDEX_NEW
            | Status::WT_DELETED
            | Status::INDEX_DELETED
            | Status::CONFLICTED;
        if status.intersects(dirty) {
            return Err(format!(
                "{}: has uncommitted changes; commit or stash them first (nothing written)",
                f.name
            ));
        }
        paths.push(rel);
    }
    let (signature, fallback_author) = match repo.signature() {
        Ok(sig) => (sig, false),
        Err(_) => (
            Signature::now("gpulint", "gpulint@localhost")
                .map_err(|e| format!("cannot make a commit signature: {e}"))?,
            true,
        ),
    };
    super::write::write_all(plan, stop)?;
    let result = (|| -> Result<git2::Oid, git2::Error> {
        let mut index = repo.index()?;
        for p in &paths {
            index.add_path(std::path::Path::new(p))?;
        }
        index.write()?;
        let tree = repo.find_tree(index.write_tree()?)?;
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            &message(plan, custom_message),
            &tree,
            &parents,
        )
    })();
    result
        .map(|oid| Committed {
            id: oid.to_string(),
            fallback_author,
        })
        .map_err(|e| format!("the fixes were written but the commit failed: {e}"))
}

pub struct Committed {
    pub id: String,
    /// git has no user.name/user.email: the commit is by `gpulint <gpulint@localhost>`.
    pub fallback_author: bool,
}
