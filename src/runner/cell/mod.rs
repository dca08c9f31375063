//! One cell of the matrix, run against one connected target whose collection is in its seeded
//! state: `run.rs` takes it from warm-up to result, `phase.rs` runs one measured phase from
//! settling to the restore after it, `sweep.rs` runs a load sweep's steps (a measured phase
//! each) and picks the knee, `inputs.rs` builds each phase's workers, `measure.rs` runs this
//! process's measured phase and judges the result, `identity.rs` names (and checks) the
//! traffic, `partial.rs` merges the shares of several client processes, `failure.rs` says why
//! a cell stopped.
//!
//! Uses `dataset/`, `send/`, `server/`, `crew/` and the runner's `deadline.rs`; used by
//! `benchmark.rs` and `follower.rs`.

mod failure;
pub mod identity;
mod inputs;
mod measure;
mod meeting;
pub mod partial;
mod phase;
mod run;
mod sweep;

pub use failure::CellFailure;
pub use inputs::CellProgress;
pub(crate) use inputs::{CellInputs, changes_of};
pub use measure::ERROR_BUDGET;
pub(crate) use measure::measure;
pub use meeting::{Broken, CommonStart, Meeting};
pub use phase::MEETING_STEP;
pub use run::{run_cell, run_cell_together, run_cell_with};
