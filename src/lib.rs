//! mongobench: a Kubernetes operator and load generator that benchmarks MongoDB deployments.
pub mod api;
pub mod cli;
pub mod measure;
pub mod report;
pub mod result;
pub mod workload;
pub mod runner;
