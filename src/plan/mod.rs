//! Expands a MongoBenchmark spec into the matrix of cells (targets × platforms × dataset sizes ×
//! repetitions), in the order they run, and turns the spec's workload into the generators' and
//! the runner's own terms. Pure functions: no I/O.
//!
//! `cells.rs` expands the matrix, `workload.rs` holds the plan and settings types the runner
//! executes, `convert.rs` derives them from the spec (`custom.rs` for a custom workload's
//! document and phases). Depends only on `api/` and `workload/` (and `result/`'s types); the
//! plan file a runner executes is `contract/`'s.

mod cells;
mod convert;
pub mod custom;
pub mod sharding;
pub mod sweep;
mod workload;

pub use cells::{
    PlannedCell, cell_id, cells, cells_of, cells_with_added, possible_cells_of, sanitize,
};
pub use convert::{CONNECT_TIMEOUT, PlanError, documents, run_settings, workload_plan};
pub use custom::PhaseLoad;
pub use workload::{RunSettings, SettingsError, WarmupSettle, WorkloadPlan};
