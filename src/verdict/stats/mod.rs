//! Statistics across repetitions of a cell: mean, sample standard deviation, a 95 % confidence
//! interval from Student's t, the coefficient of variation, and the percent difference of two
//! targets: of two independent means with Welch's test, or of repetitions paired by the slot
//! they ran in with a paired t-test on the log ratios; each with its 95 % interval, p-value and
//! minimum detectable effect. Holm–Bonferroni adjusts the p-values of one benchmark's
//! comparisons together.
//!
//! Student's t distribution is computed (regularized incomplete beta), not tabulated, so
//! Welch's fractional degrees of freedom get their exact quantiles. The rules built on these
//! functions (how many repetitions a verdict needs, the significance level) are in
//! docs/results.md.
//!
//! Pure arithmetic on numbers: it depends on nothing else in the crate. `student_t` is the
//! distribution, `summary` one figure over repetitions, `delta` the difference of two
//! targets and its test, `crossover` that difference where the targets traded sides.

mod crossover;
mod delta;
mod student_t;
mod summary;

pub use crossover::{SideEffect, crossover};
pub use delta::{ALPHA, Delta, MIN_REPETITIONS, POWER, holm, pairs_for_mde};
pub use student_t::{t_cdf, t_critical_95, t_quantile};
pub use summary::{RESOLUTION, StatsError, Summary};

#[cfg(test)]
mod tests;
