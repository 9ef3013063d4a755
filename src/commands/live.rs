//! The live source as the command line and the environment name it, measured for the inputs a
//! run loaded (`gpulint snapshot`, and `gpulint --prometheus`). The options and the queries are
//! `gpulint::metrics::measure`; this file only gathers the values and prints.

use std::io::IsTerminal;

use gpulint::cli::PrometheusArgs;
use gpulint::lint::{Linter, Loaded};
use gpulint::metrics::measure::{self, LiveRequest, Wanted};
use gpulint::metrics::prometheus::redact_url;
use gpulint::metrics::usage::UsageSet;
use gpulint::source::discover::Input;

use super::{error, Failure};

/// The Prometheus URL: `--prometheus`, else GPULINT_PROMETHEUS_URL. Never a repository file's:
/// the host named here receives the token and the headers.
pub fn url(args: &PrometheusArgs) -> Option<String> {
    args.prometheus.clone().or_else(|| {
        std::env::var("GPULINT_PROMETHEUS_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
    })
}

/// Where and with what secret (the command line and the environment only), and how (the
/// flags; the config's `prometheus:` section fills the rest in `measure::options`).
fn request(args: &PrometheusArgs) -> Result<LiveRequest, Failure> {
    let Some(url) = url(args) else {
        return Err(error(
            "--prometheus URL (or GPULINT_PROMETHEUS_URL) is required",
        ));
    };
    Ok(LiveRequest {
        url,
        window: args.window.clone(),
        headers: args.headers.clone(),
        token_file: args.token_file.clone(),
        token: std::env::var("GPULINT_PROMETHEUS_TOKEN").ok(),
        ca: args.ca.clone(),
        timeout_seconds: args.timeout,
        selector: args.selector.clone(),
        max_body_mib: args.max_body_mib,
    })
}

/// Queries Prometheus for the workloads `loaded` holds (files, renders and Helm releases),
/// once per distinct selector (the config's per-path selectors split a multi-cluster repo);
/// prints one summary line on stderr.
pub fn measure(
    args: &PrometheusArgs,
    linter: &Linter,
    loaded: &Loaded,
) -> Result<UsageSet, Failure> {
    let defaults = linter
        .config
        .prometheus
        .as_ref()
        .map(|p| p.query_defaults())
        .unwrap_or_default();
    let opts = measure::options(request(args)?, defaults).map_err(error)?;
    let selector = |path: &std::path::Path| linter.config.path_selector(path);
    // Several clusters in one store: each asked under its own label value.
    let cluster_label = loaded.placement.several().then(|| {
        linter
            .config
            .prometheus
            .as_ref()
            .and_then(|p| p.cluster_label.clone())
            .unwrap_or_else(|| "cluster".to_string())
    });
    let mut wanted = Wanted::new(opts.selector.clone(), cluster_label);
    for (index, file) in loaded.files.iter().enumerate() {
        let path = match &file.input {
            Input::File(p) => Some(p.as_path()),
            Input::Stdin => None,
        };
        for cluster in loaded.placement.file_clusters(index) {
            let cluster = cluster.as_deref();
            let ns = linter.plain_namespace(&loaded.placement, index, file, cluster);
            wanted.add(path.and_then(selector), linter.file_keys(file, ns, cluster));
        }
    }
    for unit in &loaded.units {
        wanted.add(selector(&unit.dir), linter.unit_keys(unit));
    }
    // Helm releases, under the selector of the manifest that declares them.
    for release in &loaded.releases {
        let declared = release.release.declared_in.as_deref();
        wanted.add(
            selector(declared.unwrap_or(&release.release.chart)),
            linter.release_keys(release),
        );
    }
    let progress = std::io::stderr().is_terminal();
    if progress {
        eprint!(
            "querying {} for {} container(s)…",
            redact_url(&opts.url),
            wanted.len()
        );
    }
    let measured = measure::measure(&opts, wanted, |w| eprintln!("warning: prometheus: {w}"));
    if progress {
        eprint!("\r\x1b[2K");
    }
    let measured = measured.map_err(error)?;
    eprintln!("{}", measured.summary(&opts));
    Ok(measured.usage)
}
