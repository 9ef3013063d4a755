//! The integration tests: one crate, so one binary to build and link, with a module per
//! area. They run the gpulint binary (`support::common::gpulint()`, with a clean
//! environment) against real oracles: git, kubectl kustomize, Helm, Prometheus, pre-commit,
//! Chromium, the SARIF Multitool. `support/` holds what they share.

mod support;

mod action;
mod action_download;
mod changed;
mod cli;
mod clusters;
mod corpus;
mod dist;
mod docs;
mod fit;
mod fix;
mod fix_honest;
mod fix_props;
mod gpu_sizing;
mod helm;
mod helm_argo;
mod helm_lint;
mod helm_prometheus;
mod hostile_bounds;
#[cfg(unix)]
mod hostile_charts;
#[cfg(unix)]
mod hostile_exec;
#[cfg(unix)]
mod hostile_git;
#[cfg(unix)]
mod hostile_kustomize;
mod hostile_markdown;
mod hostile_secrets;
#[cfg(unix)]
mod hostile_writes;
mod inputs;
mod inventory;
mod kaito;
mod kustomize_conformance;
mod kustomize_lint;
mod kustomize_oracle;
mod layers;
mod metrics;
mod monorepo;
mod nim;
mod no_panic;
mod oom;
mod pre_commit;
mod prometheus;
mod prometheus_scale;
mod prometheus_shapes;
mod registry;
mod reports;
mod rule_fixtures;
mod rules_fixable;
mod verdicts;
