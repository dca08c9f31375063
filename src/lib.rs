//! mongobench: a Kubernetes operator and load generator that benchmarks MongoDB deployments.
pub mod api;
pub mod cli;
pub mod contract;
pub mod measure;
pub mod operator;
pub mod plan;
pub mod report;
pub mod result;
pub mod runner;
pub mod verdict;
pub mod workload;
