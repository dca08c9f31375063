//! What a comparison says: per (workload, platform, size) group, one row per target with its
//! figures, its differences from the baseline and a verdict; and what it is asked.

use std::collections::BTreeMap;

use serde::Serialize;

use super::stats::{Delta, Summary};

/// What to compare against and how to price it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOptions {
    /// The target every other target is compared with.
    pub baseline: String,
    /// Price of one server node per hour, by platform name; cost columns stay empty for
    /// platforms without a price.
    pub price_per_node_hour: BTreeMap<String, f64>,
}

/// The outcome for one target in one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// This row is the baseline.
    Baseline,
    /// Throughput significantly higher than the baseline's.
    Faster,
    /// Throughput significantly lower.
    Slower,
    /// Tested, and the difference is not significant.
    NoSignificantDifference,
    /// Not enough valid repetitions on a side for a test.
    Inconclusive,
    /// The workload identities differ: the targets did not run the same experiment.
    NotComparable,
    /// The baseline has no result in this group.
    NoBaseline,
}

impl Verdict {
    /// The text the comparison table shows.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Baseline => "baseline",
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotComparable => "not comparable",
            Verdict::NoBaseline => "no baseline result in this group",
        }
    }
}

/// One target in one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonRow {
    /// Target name.
    pub target: String,
    /// Valid repetitions behind the figures.
    pub repetitions: usize,
    /// Cells left out of the figures, each with why (incomplete or invalid).
    pub excluded: Vec<String>,
    /// Successful operations per second; `None` without a valid repetition.
    pub ops_per_sec: Option<Summary>,
    /// Mean share of failed operations over the valid repetitions.
    pub error_rate: Option<f64>,
    /// Overall p99 latency of successful operations (µs); `None` if a repetition had none.
    pub p99_us: Option<Summary>,
    /// Server CPU µs per operation; `None` if a repetition lacks it.
    pub cpu_us_per_op: Option<Summary>,
    /// Throughput difference from the baseline: paired by slot when at least
    /// [`MIN_REPETITIONS`](super::stats::MIN_REPETITIONS) slots hold a valid cell of both
    /// (`pairs` is then set), else with Welch's test of the two groups.
    pub throughput_delta: Option<Delta>,
    /// The throughput test's p-value after Holm–Bonferroni over every test of the comparison.
    pub adjusted_p_value: Option<f64>,
    /// p99 difference from the baseline (negative is better).
    pub p99_delta: Option<Delta>,
    /// CPU per operation difference from the baseline (negative is better).
    pub cpu_delta: Option<Delta>,
    /// Server cost per million operations: price per node hour × nodes ÷ (ops/s × 3600) × 10⁶.
    pub cost_per_million_ops: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why the verdict is `inconclusive` or `not comparable`.
    pub reason: Option<String>,
    /// Cells measured at the same time as the baseline's (`parallelism: Simultaneous`): the
    /// throughput difference is then over their common windows (with the side's effect
    /// removed where they traded sides), and this says how far that cancelled the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<super::simultaneous::SimultaneousDiagnostics>,
}

/// All targets of one (workload, platform, size).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonGroup {
    /// Workload.
    pub workload: String,
    /// Platform.
    pub platform: String,
    /// Dataset size.
    pub size: String,
    /// Baseline first, then the other targets in the order they first appear.
    pub rows: Vec<ComparisonRow>,
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The baseline target.
    pub baseline: String,
    /// Groups in the order they first appear.
    pub groups: Vec<ComparisonGroup>,
    /// When every result is of a load sweep, its latency goal (`p99 ≤ 10ms`, or `its rate`
    /// without one): each cell's throughput is then its knee's.
    pub knee_goal: Option<String>,
}

/// Why results could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// No results at all.
    #[error("cannot compare: no results were given")]
    Empty,
    /// The baseline target has no result anywhere.
    #[error("baseline target {baseline:?} has no result; targets with results: {available}")]
    BaselineMissing {
        /// The requested baseline.
        baseline: String,
        /// The targets present, comma-separated.
        available: String,
    },
}

/// The comparison options a benchmark spec implies: its baseline and its platforms' prices.
pub fn compare_options(spec: &crate::api::MongoBenchmarkSpec) -> CompareOptions {
    CompareOptions {
        baseline: spec.baseline().to_owned(),
        price_per_node_hour: spec
            .platforms
            .iter()
            .filter_map(|p| Some((p.name.clone(), p.price_per_node_hour?)))
            .collect(),
    }
}
