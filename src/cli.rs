//! Command-line definitions (clap).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::Format;

#[derive(Parser, Debug)]
#[command(
    name = "gpulint",
    version,
    about = "GPU-aware linter for Kubernetes manifests: GPU spec rules, QoS and shared memory",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub lint: LintArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every workload and container with its GPU, CPU and memory requests and limits.
    Inventory(InventoryArgs),
    /// List the rules, one line each.
    Rules,
    /// Query Prometheus once and write the usage of the workloads in PATHS to a snapshot file.
    #[command(
        long_about = "Query Prometheus once (a fixed set of queries, whatever the size of the \
repository) and write the measured usage of every container of the workloads in PATHS, as each \
cluster applies them, to a snapshot file: what `--metrics FILE` (or `metrics:` in .gpulint.yaml) \
reads back, so CI without cluster access judges against it.\n\n\
The snapshot is JSON, version 1: `window`, `collected_at`, `source`, and `containers`, one per \
(cluster, namespace, kind, name, container) with `samples`, `history_seconds`, `memory_bytes` \
and `cpu_cores` ({p50, p99, max}), the GPU series (`gpu_memory_bytes`, `gpu_utilization`, \
`gpu_engine_active`, `gpu_count`, `gpus_used`, `gpu_model`, `kv_cache_usage`) and `oom_kills`; \
`nodes` holds each node's labels and allocatable resources (FIT001). Every series is optional: \
missing means not measured, never zero. docs/measurements.md (\"The snapshot format\") \
documents every field.",
        mut_arg("paths", |a| a.help(
            "Files or folders of the workloads to measure (their manifests, Kustomize roots and \
             Helm charts, rendered as for linting); `-` reads stdin"
        ))
    )]
    Snapshot(SnapshotArgs),
    /// Print the rendered stream of a Kustomize root or a Helm chart: what gpulint lints for it.
    ///
    /// A chart's releases are rendered as the config's `charts:` entries declare them (release,
    /// namespace, values files), else once with the chart's defaults.
    Render(RenderArgs),
    /// Print a rule's full documentation.
    Explain {
        /// Rule id or name, e.g. GPU002 or gpu-request-limit-mismatch.
        rule: String,
    },
    /// Print a shell completion script, e.g. `gpulint completions bash > ~/.local/share/bash-completion/completions/gpulint`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: CompletionShell,
    },
    /// Print the man page (roff), e.g. `gpulint man > ~/.local/share/man/man1/gpulint.1`.
    Man,
}

/// The shells `gpulint completions` writes a script for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Files or folders to lint; `-` reads stdin.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Config file (default: .gpulint.yaml found upward from the first path).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Which files a kustomization may read: `root-only` (kustomize's and Argo CD's default:
    /// in or below its folder) or `none`. Nothing outside the repository is ever read.
    #[arg(long, value_enum, value_name = "R")]
    pub load_restrictor: Option<LoadRestrictorArg>,
    /// The most objects one Kustomize render may hold (default 10000); more is an input error
    /// at the entry that crossed it. Only the command line raises it, never a repository file.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_render_objects: Option<u32>,
    /// The `helm` binary that renders charts (default: `helm` on PATH). Never read from a
    /// repository file.
    #[arg(long, value_name = "PATH", env = "GPULINT_HELM")]
    pub helm: Option<PathBuf>,
    /// The seconds all renderer programs (helm, the Kustomize fallback) may take together in
    /// this run (default 300): past them, each release or root not yet rendered is an error.
    #[arg(long, value_name = "SECONDS", env = "GPULINT_RENDER_BUDGET", value_parser = clap::value_parser!(u32).range(1..))]
    pub render_budget: Option<u32>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadRestrictorArg {
    RootOnly,
    None,
}

#[derive(Args, Debug, Clone)]
pub struct RenderArgs {
    /// The kustomization folder, or a Helm chart's folder.
    pub dir: PathBuf,
    /// The `helm` binary that renders a chart (default: `helm` on PATH). Never read from a
    /// repository file.
    #[arg(long, value_name = "PATH", env = "GPULINT_HELM")]
    pub helm: Option<PathBuf>,
    /// Which files a kustomization may read (`root-only`, the default, or `none`).
    #[arg(long, value_enum, value_name = "R")]
    pub load_restrictor: Option<LoadRestrictorArg>,
    /// The most objects the render may hold (default 10000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_render_objects: Option<u32>,
    /// Config file (default: .gpulint.yaml found upward from DIR).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The seconds renderer programs may take together (default 300).
    #[arg(long, value_name = "SECONDS", env = "GPULINT_RENDER_BUDGET", value_parser = clap::value_parser!(u32).range(1..))]
    pub render_budget: Option<u32>,
}

#[derive(Args, Debug, Clone)]
pub struct LintArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Output format (human is the default).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the --format output to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write FORMAT to FILE (repeatable), e.g. `--output-format sarif=gpulint.sarif
    /// --output-format html=report.html`: one run, several reports.
    #[arg(long = "output-format", value_name = "FORMAT=FILE", value_parser = format_and_file)]
    pub output_formats: Vec<(Format, PathBuf)>,
    /// Only these rules (comma-separated ids or names); also enables rules that are off by default.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub select: Vec<String>,
    /// Skip these rules (comma-separated ids or names).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub ignore: Vec<String>,
    /// Only findings about what was measured: the measured-headroom rules, and QoS or limit
    /// findings whose fix writes measured values (the right-sizing pull request's selection).
    #[arg(long)]
    pub measured_only: bool,
    /// Exit 1 when a finding at or above this severity remains.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    pub fail_on: FailOn,
    /// Judge requests and limits against a metrics snapshot (JSON, version 1).
    #[arg(long, value_name = "FILE", conflicts_with = "prometheus")]
    pub metrics: Option<PathBuf>,
    /// Largest metrics snapshot read, in MiB (default 512); a larger one is an error.
    #[arg(long = "metrics-max-size", value_name = "MIB")]
    pub metrics_max_mib: Option<u64>,
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
    /// Only findings of objects whose source changed between REF and the working tree.
    #[arg(long, value_name = "REF")]
    pub changed_since: Option<String>,
    /// Apply the fixes in place (verified first; atomic writes).
    #[arg(long)]
    pub fix: bool,
    /// With --fix: print a unified diff of the fixes and write nothing.
    #[arg(long, requires = "fix", conflicts_with_all = ["patch", "commit"])]
    pub diff: bool,
    /// With --fix: write a `git apply`-able patch to FILE and no manifest.
    #[arg(long, value_name = "FILE", requires = "fix", conflicts_with = "commit")]
    pub patch: Option<PathBuf>,
    /// With --fix: apply the fixes and commit exactly the fixed files on the current branch.
    #[arg(long, requires = "fix")]
    pub commit: bool,
    /// With --commit: the commit message's first line.
    #[arg(long, value_name = "M", requires = "commit")]
    pub message: Option<String>,
    /// Also apply fixes marked unsafe (e.g. renaming an unknown GPU resource).
    #[arg(long)]
    pub unsafe_fixes: bool,
}

/// A live Prometheus-compatible API (Prometheus, Thanos, Mimir, VictoriaMetrics).
#[derive(Args, Debug, Clone, Default)]
pub struct PrometheusArgs {
    /// Judge requests and limits against a live Prometheus API at URL (else
    /// GPULINT_PROMETHEUS_URL; never a repository file's: the token goes to this host).
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// Look-back window, a Prometheus duration (default 14d, or the config's).
    #[arg(long, value_name = "DURATION")]
    pub window: Option<String>,
    /// Extra request header `K: V` (repeatable), e.g. `X-Scope-OrgID: tenant-1` for Mimir.
    #[arg(long = "prometheus-header", value_name = "K: V")]
    pub headers: Vec<String>,
    /// File holding a bearer token (else GPULINT_PROMETHEUS_TOKEN); never printed.
    #[arg(long = "prometheus-token-file", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// PEM file of root certificates to trust for https.
    #[arg(long = "prometheus-ca", value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Per-request timeout in seconds (default 60, or the config's).
    #[arg(long = "prometheus-timeout", value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Label matchers added to every query, e.g. `cluster="prod"` for a multi-cluster store.
    #[arg(long = "prometheus-selector", value_name = "MATCHERS")]
    pub selector: Option<String>,
    /// Largest answer read per query, in MiB (default 64); a larger one is an error.
    #[arg(long = "prometheus-max-body", value_name = "MIB")]
    pub max_body_mib: Option<u64>,
}

#[derive(Args, Debug, Clone)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
    /// Write the snapshot to FILE (default: stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct InventoryArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[arg(long, value_enum, default_value_t = InventoryFormat::Table)]
    pub format: InventoryFormat,
}

/// `FORMAT=FILE` of `--output-format`.
fn format_and_file(s: &str) -> Result<(Format, PathBuf), String> {
    let (format, file) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FORMAT=FILE, e.g. sarif=gpulint.sarif, not {s:?}"))?;
    let format = Format::from_str(format.trim(), true).map_err(|_| {
        let names: Vec<String> = Format::value_variants()
            .iter()
            .filter_map(|f| Some(f.to_possible_value()?.get_name().to_string()))
            .collect();
        format!("unknown format {format:?}; one of {}", names.join(", "))
    })?;
    if file.is_empty() {
        return Err(format!("no file after {format:?}="));
    }
    Ok((format, PathBuf::from(file)))
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum InventoryFormat {
    Table,
    Json,
    /// One row per container (RFC 4180), for spreadsheets.
    Csv,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
}
