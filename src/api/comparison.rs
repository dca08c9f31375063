//! A comparison in status: one target against the baseline on one platform at one size, with
//! a verdict per declared metric (docs/results.md, "Verdicts").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One target against the baseline on one platform at one size, over all repetitions.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Platform name.
    pub platform: String,
    /// Dataset size as written in the spec.
    pub size: String,
    /// The compared target.
    pub target: String,
    /// The baseline target.
    pub baseline: String,
    /// What the target's servers said they are: distribution, version, topology, engine,
    /// cache, CPUs, architecture (docs/results.md, "What differs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The same of the baseline's servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_server: Option<String>,
    /// What to weigh beside the verdict: what the target differs in from the baseline
    /// besides its version, and the valid cells a noise canary flagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Valid repetitions of the target behind the figures.
    #[serde(default)]
    pub repetitions: u32,
    /// Valid repetitions of the baseline.
    #[serde(default)]
    pub baseline_repetitions: u32,
    /// Throughput change against the baseline, in percent (+ is faster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_delta_percent: Option<f64>,
    /// Slots in which both targets have a valid repetition, when the test paired them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_slots: Option<u32>,
    /// Coefficient of variation of the target's throughput over its valid repetitions, in
    /// percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_percent: Option<f64>,
    /// Coefficient of variation of the baseline's throughput, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_cv_percent: Option<f64>,
    /// Paired only: coefficient of variation of the per-slot throughput ratios, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_ratio_cv_percent: Option<f64>,
    /// Change of server CPU per operation, in percent (− is cheaper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_op_delta_percent: Option<f64>,
    /// Change of the overall p99 latency, in percent (− is better).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_delta_percent: Option<f64>,
    /// Cost of one million operations of the target, in the platform's currency (when the
    /// platform has a price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_million_ops: Option<f64>,
    /// The verdict: the first declared metric's (`spec.verdict.metrics`), taking the spread
    /// of the repetitions into account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Why the verdict is Inconclusive or NotComparable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cells measured at the same time as the baseline's (`parallelism: Simultaneous`): how
    /// far that cancelled the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<SimultaneousStatus>,
    /// Each declared metric's test and verdict, in declared order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricComparison>,
}

/// What a comparison of cells measured at the same time says beside its verdict.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SimultaneousStatus {
    /// Slots in which both targets were measured at the same time.
    pub slots: u32,
    /// Median correlation of the targets' per-second throughput (near 1: what disturbed one
    /// disturbed the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<f64>,
    /// How much the per-second ratio moved across the window, in percent (mean over slots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_trend_percent: Option<f64>,
    /// Where the targets traded sides: how much faster the first side made the target on it,
    /// in percent, removed from the throughput change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effect_percent: Option<f64>,
    /// What to know: no crossover and why, a low correlation, too few slots on traded sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One declared metric's test of a target against the baseline (docs/results.md, "Verdicts").
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MetricComparison {
    /// The metric.
    pub metric: crate::api::VerdictMetric,
    /// The change against the baseline, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_percent: Option<f64>,
    /// The test: `paired`, `twoStage` (Stein's, the spread of the pilot's slots), `welch`,
    /// `crossover` (simultaneous slots whose targets traded sides) or `crossoverTwoStage` (the
    /// same under a precision goal, the residual spread of the pilot's slots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// Lower end of the interval of the change, in percent, at `intervalConfidencePercent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_low_percent: Option<f64>,
    /// Upper end of the interval of the change, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_high_percent: Option<f64>,
    /// Confidence of the interval: the level Holm–Bonferroni judged the test at (95 for a
    /// single test), so the interval excludes 0 exactly when the verdict is a difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_confidence_percent: Option<f64>,
    /// p-value after Holm–Bonferroni over every declared metric's tests of the benchmark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted_p_value: Option<f64>,
    /// The smallest change, in percent, these repetitions detect with 80 % power at the
    /// family's first Holm level, from the spread measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_detectable_effect_percent: Option<f64>,
    /// The same with the spread at its upper 80 % confidence bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cautious_minimum_detectable_effect_percent: Option<f64>,
    /// The verdict on this metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Why the verdict is Inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Outcome of a comparison.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
pub enum Verdict {
    /// Throughput significantly higher than the baseline's.
    Faster,
    /// Throughput significantly lower than the baseline's.
    Slower,
    /// Server CPU per operation significantly lower.
    Cheaper,
    /// Server CPU per operation significantly higher.
    Costlier,
    /// p99 latency significantly lower.
    LowerLatency,
    /// p99 latency significantly higher.
    HigherLatency,
    /// Tested; the difference is not significant.
    NoSignificantDifference,
    /// Too few valid repetitions for a test.
    Inconclusive,
    /// The workload identities differ: not the same experiment.
    NotComparable,
}
