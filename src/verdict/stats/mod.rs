//! Statistics across repetitions of a cell: mean, sample standard deviation, a 95 % confidence
//! interval from Student's t, the coefficient of variation, and the percent difference of two
//! targets: of two independent means with Welch's test, or of repetitions paired by the slot
//! they ran in with a paired t-test on the log ratios (Stein's two-stage test when a pilot's
//! spread decided how many); each with its interval and minimum detectable effect at any
//! level. Holm–Bonferroni adjusts the p-values of one benchmark's comparisons together and
//! gives the level each was judged at.
//!
//! Student's t and the chi-square distribution are computed (regularized incomplete beta and
//! gamma functions), not tabulated, so Welch's fractional degrees of freedom get their exact
//! quantiles. The rules built on these functions (how many repetitions a verdict needs, the
//! significance level) are in docs/results.md.
//!
//! Pure arithmetic on numbers: it depends on nothing else in the crate. `student_t` and
//! `chi_square` are the distributions, `summary` one figure over repetitions, `delta` the
//! difference of two targets and its test, `crossover` that difference where the targets
//! traded sides, `holm` the family's adjustment.

mod chi_square;
mod crossover;
mod delta;
mod holm;
mod student_t;
mod summary;

pub use chi_square::{chi_square_cdf, chi_square_quantile};
pub use crossover::{SideEffect, crossover};
pub use delta::{
    ALPHA, Delta, MIN_REPETITIONS, Method, POWER, SPREAD_CONFIDENCE, log_ratio_sd,
    paired_mde_percent, two_stage_pairs,
};
pub use holm::{holm, holm_levels};
pub use student_t::{t_cdf, t_critical_95, t_quantile};
pub use summary::{RESOLUTION, StatsError, Summary};

#[cfg(test)]
mod tests;
