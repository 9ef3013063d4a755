//! gpulint: a GPU-aware linter for Kubernetes manifest repositories.
//!
//! The pipeline (see ARCHITECTURE.md at the repository root, whose "Layers" list
//! `tests/integration/layers.rs` checks every import against): `source` finds, parses and renders inputs
//! into span-aware YAML, `k8s` gives a typed view of workloads, `metrics` says what was
//! measured, `rules` checks them and builds fixes from `edit`, `config` is the repository's
//! `.gpulint.yaml`, `lint` runs the rules, `fix` writes fixes at the origin, `report` prints the
//! findings, `changed` keeps those of objects changed since a git ref. `quantity` and
//! `interrupt` are leaves anyone may use; `cli` is the command line.

pub mod changed;
pub mod cli;
pub mod config;
pub mod deploy;
pub mod edit;
pub mod fix;
pub mod interrupt;
pub mod k8s;
pub mod lint;
pub mod metrics;
pub mod quantity;
pub mod report;
pub mod rules;
pub mod source;
