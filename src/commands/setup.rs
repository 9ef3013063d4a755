//! What every command that reads a repository starts from: its config and a linter set up for
//! it.

use std::path::PathBuf;
use std::time::Duration;

use gpulint::cli::{CommonArgs, LoadRestrictorArg};
use gpulint::config::Config;
use gpulint::lint::{Linter, Selection};
use gpulint::source::child::{Budget, DEFAULT_RENDER_BUDGET};
use gpulint::source::kustomize::{normalize, LoadRestrictor, MAX_RENDERED_OBJECTS};
use gpulint::source::units::RenderSettings;

use super::{error, Failure};

/// The first path that is not stdin (`.` when there is none): where the config is looked for
/// and whose repository bounds every read.
fn first_path(paths: &[PathBuf]) -> PathBuf {
    paths
        .iter()
        .find(|p| p.as_os_str() != "-")
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `--config`, else the `.gpulint.yaml` found upward from the first path (read inside its
/// repository), else the defaults.
pub fn load_config(common: &CommonArgs) -> Result<Config, Failure> {
    // The command line may name a config anywhere; a discovered one is the repository's, read
    // within its boundary.
    match &common.config {
        Some(p) => Config::load(p).map_err(error),
        None => match Config::discover(&first_path(&common.paths)) {
            None => Ok(Config::default()),
            Some(p) => Config::load_discovered(&p).map_err(error),
        },
    }
}

/// A linter with the config's settings, the command line's load restrictor, and the repository
/// as the boundary of what renders may read.
pub fn linter_for(config: Config, selection: Selection, common: &CommonArgs) -> Linter {
    let mut linter = Linter::new(config, selection);
    linter.render = render_settings(common);
    // Only the command line and the environment name the program (never a repository file).
    // Helm and the Kustomize fallback share the run's budget.
    linter.helm =
        gpulint::source::helm::HelmEngine::find(common.helm.as_deref()).map(|mut engine| {
            engine.budget = linter.render.budget.clone();
            engine
        });
    linter
}

/// The load restrictor (the flag only: the config may not widen what a render reads), the
/// repository of the first path as the boundary of every read, the object cap of a render and
/// the run's time for renderer programs (the command line and the environment only).
pub fn render_settings(common: &CommonArgs) -> RenderSettings {
    let load_restrictor = match common.load_restrictor {
        Some(LoadRestrictorArg::None) => LoadRestrictor::None,
        Some(LoadRestrictorArg::RootOnly) | None => LoadRestrictor::RootOnly,
    };
    let boundary = Some(normalize(&gpulint::source::repo::repository_of(
        &first_path(&common.paths),
    )));
    RenderSettings {
        load_restrictor,
        boundary,
        max_objects: common
            .max_render_objects
            .map_or(MAX_RENDERED_OBJECTS, |n| n as usize),
        budget: Budget::new(
            common
                .render_budget
                .map_or(DEFAULT_RENDER_BUDGET, |s| Duration::from_secs(u64::from(s))),
        ),
    }
}
