//! Finding and loading inputs: discovery, the span-aware YAML tree, strict decoding.

pub mod decode;
pub mod discover;
mod jsonpath;
pub mod kustomize;
pub mod yaml;
