//! Comparisons of targets against a baseline, from result documents to verdicts: what the
//! reports render and what the operator folds into a benchmark's status.
//!
//! Pure and renders nothing: it depends on `result` (the documents) and `api` (a spec's
//! baseline and prices). `stats` is the arithmetic, `comparison` what a comparison says,
//! `compare` how it is reached (groups, slot pairs, tests, verdicts), `headline` the finding
//! in one line.
#![deny(missing_docs)]

mod compare;
mod comparison;
mod headline;
pub mod simultaneous;
pub mod stats;

pub use compare::compare;
pub use comparison::{
    CompareError, CompareOptions, Comparison, ComparisonGroup, ComparisonRow, Verdict,
    compare_options,
};
pub use headline::headline;
pub use stats::MIN_REPETITIONS;

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;
