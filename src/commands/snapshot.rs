//! `gpulint snapshot PATHS`: query Prometheus once for the workloads in PATHS and write their
//! usage as a snapshot file (what `--metrics FILE` reads).

use gpulint::cli::SnapshotArgs;
use gpulint::lint::Selection;
use gpulint::metrics::snapshot;

use super::setup::{linter_for, load_config};
use super::{error, live, print, Exit, Outcome};

pub fn snapshot(args: &SnapshotArgs) -> Outcome {
    let config = load_config(&args.common)?;
    let linter = linter_for(config, Selection::default(), &args.common);
    let loaded = linter.load(&args.common.paths);
    let usage = live::measure(&args.prometheus, &linter, &loaded)?;
    let text = snapshot::write(&usage, &gpulint::report::now_rfc3339());
    // What is written must read back: check it as `--metrics` will.
    if let Err(e) = snapshot::parse(&text, "the collected snapshot") {
        return Err(error(format_args!(
            "Prometheus returned figures the snapshot format rejects: {e}"
        )));
    }
    match &args.output {
        None => print(&text),
        Some(path) => {
            // Atomic, never through a link: a reader never sees half a snapshot.
            gpulint::fix::write::write_output(path, &text).map_err(error)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(Exit::Clean)
}
