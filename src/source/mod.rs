//! Finding and loading inputs: discovery, the span-aware YAML tree, strict decoding.

pub mod decode;
pub mod discover;
pub mod document;
pub mod file;
pub mod helm;
mod jsonpath;
pub mod kustomize;
pub mod repo;
pub mod units;
pub mod yaml;
