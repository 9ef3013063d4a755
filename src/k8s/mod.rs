//! Kubernetes knowledge: GPU resource names, the workload catalogue and views.

pub mod accelerator;
pub mod catalog;
pub mod dra;
pub mod engine;
pub mod gpu;
pub mod kaito;
pub mod kserve;
pub mod kueue;
pub mod model;
pub mod podsets;
pub mod workload;
