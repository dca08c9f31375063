//! What a comparison says: per (workload, platform, size) group, one row per target with its
//! figures, its differences from the baseline and a verdict per declared metric; and what it
//! is asked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::stats::{Delta, Summary};
use crate::api::VerdictMetric;

/// What to compare against, how to price it and which figures get verdicts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOptions {
    /// The target every other target is compared with.
    pub baseline: String,
    /// Price of one server node per hour, by platform name; cost columns stay empty for
    /// platforms without a price.
    pub price_per_node_hour: BTreeMap<String, f64>,
    /// The declared verdict metrics (`spec.verdict.metrics`); empty: those the results record
    /// (`design.metrics`), else throughput.
    pub metrics: Vec<VerdictMetric>,
}

/// The outcome for one target in one group, of one metric or of the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// This row is the baseline.
    Baseline,
    /// Throughput significantly higher than the baseline's.
    Faster,
    /// Throughput significantly lower.
    Slower,
    /// Server CPU per operation significantly lower.
    Cheaper,
    /// Server CPU per operation significantly higher.
    Costlier,
    /// p99 latency significantly lower.
    LowerLatency,
    /// p99 latency significantly higher.
    HigherLatency,
    /// Tested, and the difference is not significant.
    NoSignificantDifference,
    /// Not enough valid repetitions (or pairs) for a test.
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
            Verdict::Cheaper => "cheaper",
            Verdict::Costlier => "costlier",
            Verdict::LowerLatency => "lower latency",
            Verdict::HigherLatency => "higher latency",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotComparable => "not comparable",
            Verdict::NoBaseline => "no baseline result in this group",
        }
    }

    /// The verdict on `metric` of a significant change of `percent`.
    pub fn significant(metric: VerdictMetric, percent: f64) -> Verdict {
        match (metric, percent > 0.0) {
            (VerdictMetric::Throughput, true) => Verdict::Faster,
            (VerdictMetric::Throughput, false) => Verdict::Slower,
            (VerdictMetric::CpuPerOperation, true) => Verdict::Costlier,
            (VerdictMetric::CpuPerOperation, false) => Verdict::Cheaper,
            (VerdictMetric::P99Latency, true) => Verdict::HigherLatency,
            (VerdictMetric::P99Latency, false) => Verdict::LowerLatency,
        }
    }

    /// Whether it says the targets differ.
    pub fn is_difference(self) -> bool {
        matches!(
            self,
            Verdict::Faster
                | Verdict::Slower
                | Verdict::Cheaper
                | Verdict::Costlier
                | Verdict::LowerLatency
                | Verdict::HigherLatency
        )
    }
}

/// One declared metric's test of one target against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricVerdict {
    /// The metric.
    pub metric: VerdictMetric,
    /// The difference and its test (the method, raw p-value, pairs); `None` when there were
    /// too few valid repetitions or pairs, or the figure is missing.
    pub delta: Option<Delta>,
    /// The p-value after Holm–Bonferroni over every declared metric's test of the comparison.
    pub adjusted_p_value: Option<f64>,
    /// The interval of the difference, in percent, at [`interval_confidence`]: the level Holm's
    /// step-down judged this test at, so it excludes 0 exactly when the verdict is a
    /// difference.
    ///
    /// [`interval_confidence`]: MetricVerdict::interval_confidence
    pub interval_percent: Option<(f64, f64)>,
    /// Confidence of the interval: 1 − the Holm level (0.95 for a single test).
    pub interval_confidence: Option<f64>,
    /// The smallest difference this test detects with 80 % power at the family's first Holm
    /// level (5 % ÷ tests), from the spread measured.
    pub mde_percent: Option<f64>,
    /// The same with the spread at its upper 80 % confidence bound.
    pub mde_upper_percent: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why it is `inconclusive`.
    pub reason: Option<String>,
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
    /// Throughput difference from the baseline and its unadjusted test: paired by slot when
    /// the schedule paired the cells, else Welch's.
    pub throughput_delta: Option<Delta>,
    /// p99 difference from the baseline (negative is better).
    pub p99_delta: Option<Delta>,
    /// CPU per operation difference from the baseline (negative is better).
    pub cpu_delta: Option<Delta>,
    /// The declared metrics' tests and verdicts, in declared order; empty for the baseline and
    /// rows without a test.
    pub verdicts: Vec<MetricVerdict>,
    /// Server cost per million operations: price per node hour × nodes ÷ (ops/s × 3600) × 10⁶.
    pub cost_per_million_ops: Option<f64>,
    /// The row's verdict: its first declared metric's, or why there is none.
    pub verdict: Verdict,
    /// Why the verdict is `inconclusive` or `not comparable`.
    pub reason: Option<String>,
    /// Cells measured at the same time as the baseline's (`parallelism: Simultaneous`): the
    /// throughput difference is then over their common windows (with the side's effect
    /// removed where they traded sides), and this says how far that cancelled the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<super::simultaneous::SimultaneousDiagnostics>,
    /// What the target's servers said they are.
    pub server: super::server_facts::ServerFacts,
    /// What it differs from the baseline in besides distribution and version (`topology
    /// replica set vs standalone`): part of any difference measured, and not what a comparison
    /// of versions asks.
    pub unasked_differences: Vec<String>,
    /// Valid cells behind the figures that a noise canary flagged (kept, and counted here).
    pub canary_flagged: usize,
}

impl ComparisonRow {
    /// The verdict on `metric`, if it is declared and the row was tested.
    pub fn verdict_on(&self, metric: VerdictMetric) -> Option<&MetricVerdict> {
        self.verdicts.iter().find(|v| v.metric == metric)
    }

    /// What a reader must weigh beside its verdict (docs/results.md, "What differs"): what it
    /// differs in from `baseline` besides the version, and the cells a noise canary flagged.
    pub fn warnings(&self, baseline: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !self.unasked_differences.is_empty() {
            out.push(format!(
                "differs from {baseline} in more than its version: {}; the difference measured \
                 includes these",
                self.unasked_differences.join(", ")
            ));
        }
        if self.canary_flagged > 0 {
            out.push(format!(
                "{} of its {} valid cells flagged by a noise canary (kept in the figures)",
                self.canary_flagged, self.repetitions
            ));
        }
        out
    }
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
    /// The declared verdict metrics, in order.
    pub metrics: Vec<VerdictMetric>,
    /// The tests Holm–Bonferroni adjusted together (every declared metric of every tested
    /// row).
    pub family: usize,
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

/// The comparison options a benchmark spec implies: its baseline, its platforms' prices and
/// its verdict metrics.
pub fn compare_options(spec: &crate::api::MongoBenchmarkSpec) -> CompareOptions {
    CompareOptions {
        baseline: spec.baseline().to_owned(),
        price_per_node_hour: spec
            .platforms
            .iter()
            .filter_map(|p| Some((p.name.clone(), p.price_per_node_hour?)))
            .collect(),
        metrics: spec.verdict_metrics(),
    }
}
