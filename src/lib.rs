//! gpulint: a GPU-aware linter for Kubernetes manifest repositories.
//!
//! The pipeline (see DESIGN.md): `source` finds and parses inputs into span-aware YAML,
//! `k8s` gives a typed view of workloads, `rules` checks them, `report` prints the findings.

pub mod changed;
pub mod cli;
pub mod config;
pub mod fix;
pub mod interrupt;
pub mod k8s;
pub mod lint;
pub mod metrics;
pub mod renders;
pub mod report;
pub mod rules;
pub mod source;
