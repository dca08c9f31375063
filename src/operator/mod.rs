//! The operator: reconciles a `MongoBenchmark` from apply to verdict.
//!
//! One pass of the reconcile loop (`run.rs` wires it into a kube `Controller`), one folder per
//! step:
//!
//! 1. [`observe`] reads what the cluster holds for the benchmark: its StatefulSets, server pods,
//!    runner Jobs and their pods, the result ConfigMaps the runners wrote and, for platforms
//!    whose runners have not started, their Nodes.
//! 2. [`decide`] (pure) turns the MongoBenchmark and those observations into the next actions
//!    (create servers, start a runner, delete servers) and the desired status ([`status`]
//!    folds the results into cells, comparisons and conditions).
//! 3. [`apply`] renders the objects of each action ([`render`]: servers, jobs, secrets) and
//!    writes them by server-side apply; the status is applied only when it differs from the
//!    stored one, and [`status::events`] are published only for transitions, so an idle
//!    benchmark makes no API writes.
//!
//! Work is split in *runners*, each one Job on one platform: every target of the platform,
//! interleaved, when its nodes hold all its replica sets at once (`decide/placement.rs`), else
//! one target per runner, one after another. A provisioned target first gets a replica set
//! (StatefulSet + headless Service + NetworkPolicy); a runner of external targets goes
//! straight to its Job. Everything created is owned by the MongoBenchmark, so deleting it
//! removes everything through garbage collection.
//!
//! The loop is level-triggered: it keeps no state of its own. A restarted operator reads the
//! same objects, reaches the same decisions and redoes no completed cell (a re-created Job is
//! told which cells already have results).
//!
//! Layers, bottom first: `error.rs`; `render/` (pure rendering) and `status/` (pure folding);
//! `observe/` (reads the API); `decide/` (pure, over what was observed); `apply.rs` (writes);
//! `run.rs` with `context.rs`, `leader.rs`, `http.rs`, `custom_workload.rs` (a custom
//! workload's document, read before each pass decides) and the metrics on top. Uses `api/`,
//! `plan/`, `result/`, the comparison of `report/` and the names the runner writes under.
//! This file is only the face.

pub mod apply;
pub mod context;
pub mod custom_workload;
pub mod decide;
pub mod error;
#[cfg(test)]
mod fixtures;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod observe;
pub mod render;
pub mod result_gauges;
pub mod run;
pub mod status;
pub mod testing;

pub use apply::FIELD_MANAGER;
pub use context::{DEFAULT_IMAGE, DEFAULT_STALL_DEADLINE, OperatorOptions};
pub use error::{Error, SpecError};
pub use run::{Operator, run};
