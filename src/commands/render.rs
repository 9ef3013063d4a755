//! `gpulint render DIR`: the rendered stream of a Kustomize root, or a chart's releases as Helm
//! renders them: what gpulint lints for it.

use std::path::{Path, PathBuf};

use gpulint::cli::{CommonArgs, RenderArgs};
use gpulint::config::Config;
use gpulint::lint::Selection;
use gpulint::source::kustomize::{self, Sources};
use gpulint::source::units::{self, FileSlice, RenderSettings, RunSources};

use super::setup::{linter_for, load_config, render_settings};
use super::{error, print, Exit, Failure, Outcome};

pub fn render(args: &RenderArgs) -> Outcome {
    let common = CommonArgs {
        paths: vec![args.dir.clone()],
        config: args.config.clone(),
        load_restrictor: args.load_restrictor,
        max_render_objects: args.max_render_objects,
        helm: args.helm.clone(),
        render_budget: args.render_budget,
    };
    let config = load_config(&common)?;
    let settings = render_settings(&common);
    if gpulint::source::helm::is_chart(&args.dir) {
        return render_chart(&args.dir, config, &common, &settings);
    }
    let sources = RunSources::new(FileSlice::Plain(&[]), settings.boundary.clone());
    if kustomize::kustomization_file(&args.dir).is_none() {
        return Err(error(format_args!(
            "{}: no kustomization.yaml, kustomization.yml or Kustomization in this folder",
            args.dir.display()
        )));
    }
    match units::render_root(&args.dir, &sources, &settings) {
        Ok(rendered) => {
            print(&kustomize::to_yaml(&rendered.objects));
            Ok(Exit::Clean)
        }
        Err(e) => {
            let at = e
                .span
                .and_then(|span| {
                    let stream = sources.load(&e.file).ok()?;
                    let (line, column) = stream.line_col(span.start);
                    Some(format!(":{line}:{column}"))
                })
                .unwrap_or_default();
            eprintln!(
                "error: {}{at}: {}",
                gpulint::source::file::display_path(&e.file),
                e.message
            );
            Err(Failure::Error)
        }
    }
}

/// A chart's releases as Helm renders them.
fn render_chart(
    dir: &Path,
    config: Config,
    common: &CommonArgs,
    settings: &RenderSettings,
) -> Outcome {
    let linter = linter_for(config, Selection::default(), common);
    let Some(engine) = &linter.helm else {
        return Err(error(format_args!(
            "{}: a Helm chart, and no helm binary (install helm, or pass --helm PATH or set GPULINT_HELM)",
            dir.display()
        )));
    };
    let root = settings
        .boundary
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    match units::render_chart(dir, &linter.config.charts, &root, engine) {
        Ok(text) => {
            print(&text);
            Ok(Exit::Clean)
        }
        Err(e) => Err(error(format_args!("{}: helm: {e}", dir.display()))),
    }
}
