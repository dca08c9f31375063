//! Executes a benchmark against real servers: connect, seed, warm up, restore, settle,
//! measure, explain, collect server statistics, restore, and write one result per cell. The
//! same code (`benchmark.rs`) runs locally (`mongobench run --target NAME=URI`) and inside the
//! operator's Job; `follower.rs` is another client process of the same run.
//!
//! Layers, bottom first (each uses only those below it): `deadline.rs`, `outcome.rs`,
//! `crew/`, `wire/`; `server/`; `send/`; `dataset/`; `cell/`; `benchmark.rs`, `follower.rs`.
//! `slots.rs`, `sink.rs`, `activity.rs`, `canaries.rs` and `canary_server.rs` stand apart. Below the runner: `api/`, `plan/`,
//! `workload/`, `measure/`, `result/`.

pub mod activity;
pub mod benchmark;
pub mod canaries;
pub mod canary_server;
pub mod cell;
pub mod crew;
pub mod dataset;
pub mod deadline;
pub mod definition;
pub mod follower;
pub mod job;
pub mod lines;
pub mod local;
pub mod outcome;
pub mod send;
pub mod server;
pub mod setup;
pub mod sink;
pub mod slot;
pub mod slots;
pub mod wire;

// The runner's entry points, which the CLI uses (and nothing deeper: tools/module-graph).
pub use benchmark::{Events, PrecisionOutcome};
pub use canaries::probe_all;
pub use canary_server::serve as serve_canary;
pub use cell::CellProgress;
pub use cell::identity::{CUSTOM_WORKLOAD_FILE, Verification, verify_with};
pub use crew::{COMPLETION_INDEX_ENV, ClientSlice, JOB_UID_ENV};
pub use dataset::Seeded;
pub use job::{JobEnvironment, JobError, JobOutcome, run_job};
pub use lines::{cell_line, seeded_line};
pub use local::{LocalError, LocalOptions, follow_local, run_local};
pub use server::{check_uri, redact_uri};
pub use sink::{SinkError, write_file};
