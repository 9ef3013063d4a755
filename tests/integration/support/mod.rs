//! Helpers shared by the integration tests (each test file says `mod support;`): `common` (the
//! gpulint binary with a clean environment, git, copy_dir, the RNG) for all of them; for the
//! Prometheus tests a real Prometheus (Debian's package) fed by backfilled OpenMetrics, and tiny
//! local TCP servers that record or stall requests; for the per-rule tests `rule_fixtures` (each
//! rule's fixtures linted with that rule alone, and the fix plan of one finding) and `rule_docs`
//! (docs/rules.md's and `rules/README.md`'s rule tables).
#![allow(dead_code)]

pub mod common;
pub mod fake_http;
pub mod openmetrics;
pub mod prometheus;
pub mod release;
pub mod rule_docs;
pub mod rule_fixtures;
pub mod victoria;
