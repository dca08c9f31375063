//! What the operator and the runner exchange, defined once: the plan a runner Job executes
//! (`plan.rs`, versioned, carrying the run resolved from the spec), the activity the runner
//! publishes while it works (`activity.rs`, versioned) with the steps it names (`step.rs`),
//! and the names and labels of every object one side writes and the other reads
//! (`names.rs`), the order of the targets in each slot (`slot_order.rs`). Uses `api/`, `plan/` and `result/`; both `runner/` and `operator/` build on
//! it, and nothing here does I/O.

pub mod activity;
pub mod cpus;
pub mod names;
pub mod plan;
pub mod slot_order;
pub mod step;

pub use activity::{ACTIVITY_VERSION, Activity};
pub use cpus::{CpuSet, parse_sides};
pub use plan::{
    JobPlan, JobTarget, LOCAL_PLATFORM, MemberFacts, PLAN_VERSION, PLAN_VERSION_KEY, RunDefinition,
    Schedule, ServerFacts, Timeouts, TlsFiles,
};
pub use step::{CellStep, RunnerStep};
