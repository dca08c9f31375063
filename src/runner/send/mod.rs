//! A phase's load: the workers of one phase (`phase.rs`), each drawing its operations from a
//! source (`source.rs`) that notes what they may change (`changes.rs`) and sending them through
//! a `Sender` (`execute.rs`): the driver, or the worker's own connection from `wire/`.
//!
//! Uses `server/` (the connected target), `wire/` and the runner's `outcome.rs`.

mod changes;
pub mod execute;
mod phase;
mod source;

pub use changes::Changes;
pub use execute::{ExecOptions, Sender, execute};
pub use phase::{PhaseConfig, PhaseOutcome, Progress, Stop, run_phase};
pub use source::{
    Source, Step, WorkerShare, check_shares, fingerprint, fingerprint_of, judge, template_names,
};
