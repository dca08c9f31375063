//! The comparison document (`kind: mongobench.io/comparison`, `version: 1`): what a comparison
//! concludes, for pipelines — the headline, the method, and per group and target one entry per
//! declared verdict metric with its verdict, estimate, interval, MDE and test. Read from a
//! [`Comparison`] as `verdict` reached it; nothing here computes a statistic. Its JSON schema
//! is docs/comparison.schema.json (docs/results.md, "Comparison document").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::VerdictMetric;
use crate::verdict::server_facts::ServerFacts;
use crate::verdict::simultaneous::SimultaneousDiagnostics;
use crate::verdict::stats::Delta;
use crate::verdict::{Comparison, ComparisonRow, MetricVerdict, Verdict, headline, method_lines};

/// The document's `kind`.
pub const COMPARISON_KIND: &str = "mongobench.io/comparison";
/// The document's `version`: a removed or renamed field needs a new one.
pub const COMPARISON_VERSION: u32 = 1;

/// A whole comparison of targets against a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonDocument {
    /// Always `mongobench.io/comparison`.
    pub kind: String,
    /// The document's version, 1.
    pub version: u32,
    /// The target every other target is compared with.
    pub baseline: String,
    /// The declared verdict metrics, in order.
    pub metrics: Vec<VerdictMetric>,
    /// The tests Holm–Bonferroni adjusted together.
    pub family: usize,
    /// The main finding in one line; `null` when nothing was compared (one target).
    pub headline: Option<String>,
    /// How the verdicts were reached, one statement per line.
    pub method: Vec<String>,
    /// When every result is of a load sweep, the latency goal its throughput is the knee of.
    pub knee_goal: Option<String>,
    /// One per (workload, platform, size), in the order they first appear.
    pub groups: Vec<GroupDocument>,
    /// Every row's warnings, each prefixed with its `platform/size/target`.
    pub warnings: Vec<String>,
}

/// All targets of one (workload, platform, size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupDocument {
    /// Workload.
    pub workload: String,
    /// Platform.
    pub platform: String,
    /// Dataset size.
    pub size: String,
    /// The baseline's row first, then the others.
    pub rows: Vec<RowDocument>,
}

/// One target in one group against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RowDocument {
    /// The target.
    pub target: String,
    /// The baseline it is compared with.
    pub baseline: String,
    /// What its servers said they are (distribution, version, topology, engine, cache, CPUs,
    /// architecture); a fact its cells disagree on reads `a / b`.
    #[serde(default)]
    pub server: ServerFacts,
    /// Valid repetitions behind its figures.
    pub repetitions: usize,
    /// The row's verdict: its first declared metric's, or why there is none.
    pub verdict: Verdict,
    /// Why the row's verdict is `inconclusive` or `notComparable`.
    pub reason: Option<String>,
    /// Mean successful operations per second over the valid repetitions.
    pub ops_per_sec: Option<f64>,
    /// Mean p99 latency of successful operations, µs.
    pub p99_us: Option<f64>,
    /// Mean server CPU µs per operation.
    pub cpu_us_per_op: Option<f64>,
    /// One per declared metric, in declared order; empty for the baseline's row.
    pub verdicts: Vec<MetricDocument>,
    /// Measured at the same time as the baseline (`parallelism: Simultaneous`): how far the
    /// disturbance was shared, how the ratio moved within the window, the side effect the
    /// crossover removed; absent for cells run in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<SimultaneousDiagnostics>,
    /// What it differs in from the baseline besides its version, the cells a noise canary
    /// flagged, the cells left out and why, and notes on how the row was measured.
    pub warnings: Vec<String>,
}

/// One declared metric of one target against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricDocument {
    /// The metric.
    pub metric: VerdictMetric,
    /// Its verdict; a row that was not tested gives each metric the row's verdict.
    pub verdict: Verdict,
    /// The difference from the baseline, percent: (target − baseline) ÷ baseline × 100,
    /// paired the geometric mean of the per-slot ratios.
    pub estimate_percent: Option<f64>,
    /// The interval of the difference at the level the verdict used; `null` without a test.
    pub interval: Option<IntervalDocument>,
    /// The p-value after Holm–Bonferroni over the family.
    pub adjusted_p_value: Option<f64>,
    /// The smallest difference the test detects with 80 % power, percent.
    pub mde_percent: Option<f64>,
    /// The same with the spread at its upper 80 % confidence bound.
    pub cautious_mde_percent: Option<f64>,
    /// The test in words.
    pub method: Option<String>,
    /// Slots holding a valid repetition of both targets (paired tests only).
    pub pairs: Option<usize>,
    /// Why the verdict is `inconclusive` or `notComparable`.
    pub reason: Option<String>,
}

/// An interval of a difference in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntervalDocument {
    /// Lower bound, percent.
    pub low_percent: f64,
    /// Upper bound, percent.
    pub high_percent: f64,
    /// Its confidence (0.95 for a single test; Holm's level for a family).
    pub confidence: f64,
}

impl ComparisonDocument {
    /// The document of `comparison`.
    pub fn of(comparison: &Comparison) -> ComparisonDocument {
        let groups: Vec<GroupDocument> = comparison
            .groups
            .iter()
            .map(|g| GroupDocument {
                workload: g.workload.clone(),
                platform: g.platform.clone(),
                size: g.size.clone(),
                rows: g.rows.iter().map(|r| row(comparison, r)).collect(),
            })
            .collect();
        let warnings = groups
            .iter()
            .flat_map(|g| {
                g.rows.iter().flat_map(move |r| {
                    r.warnings
                        .iter()
                        .map(move |w| format!("{}/{}/{}: {w}", g.platform, g.size, r.target))
                })
            })
            .collect();
        ComparisonDocument {
            kind: COMPARISON_KIND.to_owned(),
            version: COMPARISON_VERSION,
            baseline: comparison.baseline.clone(),
            metrics: comparison.metrics.clone(),
            family: comparison.family,
            headline: headline(comparison),
            method: method_lines(comparison),
            knee_goal: comparison.knee_goal.clone(),
            groups,
            warnings,
        }
    }

    /// The JSON schema of the document (docs/comparison.schema.json).
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(ComparisonDocument))
            .expect("a generated schema is always representable as JSON")
    }
}

fn row(comparison: &Comparison, r: &ComparisonRow) -> RowDocument {
    let compared = !matches!(r.verdict, Verdict::Baseline | Verdict::NoBaseline);
    let verdicts = match (compared, r.verdicts.is_empty()) {
        (false, _) => Vec::new(),
        (true, false) => r.verdicts.iter().map(tested).collect(),
        // Not tested (too few repetitions, not comparable): each metric says why.
        (true, true) => comparison.metrics.iter().map(|&m| untested(r, m)).collect(),
    };
    let mut warnings = r.warnings(&comparison.baseline);
    warnings.extend(r.excluded.iter().cloned());
    warnings.extend(r.simultaneous.iter().flat_map(|s| s.notes.iter().cloned()));
    RowDocument {
        target: r.target.clone(),
        baseline: comparison.baseline.clone(),
        server: r.server.clone(),
        repetitions: r.repetitions,
        verdict: r.verdict,
        reason: r.reason.clone(),
        ops_per_sec: r.ops_per_sec.map(|s| s.mean),
        p99_us: r.p99_us.map(|s| s.mean),
        cpu_us_per_op: r.cpu_us_per_op.map(|s| s.mean),
        verdicts,
        simultaneous: r.simultaneous.clone(),
        warnings,
    }
}

fn method(d: &Delta) -> String {
    match d.pairs {
        Some(n) => format!("{} over {n} slots", d.method.text()),
        None => d.method.text(),
    }
}

fn tested(v: &MetricVerdict) -> MetricDocument {
    MetricDocument {
        metric: v.metric,
        verdict: v.verdict,
        estimate_percent: v.delta.map(|d| d.percent),
        interval: v
            .interval_percent
            .zip(v.interval_confidence)
            .map(|((low, high), confidence)| IntervalDocument {
                low_percent: low,
                high_percent: high,
                confidence,
            }),
        adjusted_p_value: v.adjusted_p_value,
        mde_percent: v.mde_percent,
        cautious_mde_percent: v.mde_upper_percent,
        method: v.delta.as_ref().map(method),
        pairs: v.delta.and_then(|d| d.pairs),
        reason: v.reason.clone(),
    }
}

fn untested(r: &ComparisonRow, metric: VerdictMetric) -> MetricDocument {
    let delta = match metric {
        VerdictMetric::Throughput => r.throughput_delta,
        VerdictMetric::CpuPerOperation => r.cpu_delta,
        VerdictMetric::P99Latency => r.p99_delta,
    };
    MetricDocument {
        metric,
        verdict: r.verdict,
        estimate_percent: delta.map(|d| d.percent),
        interval: None,
        adjusted_p_value: None,
        mde_percent: None,
        cautious_mde_percent: None,
        method: None,
        pairs: delta.and_then(|d| d.pairs),
        reason: r.reason.clone(),
    }
}

/// The document as pretty-printed JSON with a final line end.
pub fn render_comparison_json(comparison: &Comparison) -> String {
    serde_json::to_string_pretty(&ComparisonDocument::of(comparison))
        .expect("the comparison document serializes")
        + "\n"
}

#[cfg(test)]
#[path = "comparison_json_tests.rs"]
mod tests;
