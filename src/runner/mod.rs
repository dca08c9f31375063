//! Executes a benchmark against real servers: connect, seed, warm up, restore, settle,
//! measure, explain, collect server statistics, restore, and write one result per cell. The
//! same code (`benchmark.rs`) runs locally (`mongobench run --target NAME=URI`) and inside the
//! operator's Job; `follower.rs` is another client process of the same run.
//!
//! Layers, bottom first (each uses only those below it): `deadline.rs`, `outcome.rs`,
//! `crew/`, `wire/`; `server/`; `send/`; `dataset/`; `cell/`; `benchmark.rs`, `follower.rs`.
//! `slots.rs`, `sink.rs`, `activity.rs` and `canaries.rs` stand apart. Below the runner: `api/`, `plan/`,
//! `workload/`, `measure/`, `result/`.

pub mod activity;
pub mod benchmark;
pub mod canaries;
pub mod cell;
pub mod crew;
pub mod dataset;
pub mod deadline;
pub mod follower;
pub mod outcome;
pub mod send;
pub mod server;
pub mod sink;
pub mod slots;
pub mod wire;
