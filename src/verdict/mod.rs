//! Comparisons of targets against a baseline, from result documents to verdicts: what the
//! reports render and what the operator folds into a benchmark's status.
//!
//! Pure and renders nothing: it depends on `result` (the documents) and `api` (a spec's
//! baseline, prices and verdict metrics). `stats` is the arithmetic, `comparison` what a
//! comparison says, `compare` how it is reached (groups, slot pairs, tests), `family` the
//! verdicts of all its tests together (Holm), `sequential` when a precision goal stops adding
//! slots, `method` the method in words, `headline` the finding in one line, `server_facts` what each target is and what it differs
//! in besides its version, `simulation` the
//! error rates of all of it on synthetic runs.
#![deny(missing_docs)]

mod compare;
mod comparison;
mod family;
mod headline;
mod method;
pub mod sequential;
pub mod server_facts;
pub mod simulation;
pub mod simultaneous;
pub mod stats;

pub use compare::compare;
pub(crate) use compare::figure;
pub use comparison::{
    CompareError, CompareOptions, Comparison, ComparisonGroup, ComparisonRow, MetricVerdict,
    Verdict, compare_options,
};
pub use headline::headline;
pub use method::method_lines;
pub use stats::MIN_REPETITIONS;

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;
