//! Finding and loading inputs: discovery, the repository boundary, the run's files, the
//! span-aware YAML tree and field paths in it, strict decoding, and the render units (Kustomize
//! roots and Helm releases) with their renderers.

pub mod child;
pub mod decode;
pub mod discover;
pub mod document;
pub mod file;
pub mod helm;
mod jsonpath;
pub mod kustomize;
pub mod repo;
pub mod substitute;
pub mod units;
pub mod yaml;
