//! Every target against the baseline in status: the comparison of the complete results, its
//! rows as [`Comparison`] entries, the Precision condition's verdict and the headline line.

use super::cells::round3;
use crate::api::{
    CellPhase, CellStatus, Comparison, MetricComparison, MongoBenchmarkSpec, SimultaneousStatus,
    Verdict,
};
use crate::result::CellResult;
use crate::verdict;
use crate::verdict::stats::Method;

/// The comparison of `results` (complete ones; invalid ones are left out and counted there),
/// or `None` when there is nothing to compare yet.
pub fn compare(spec: &MongoBenchmarkSpec, results: &[&CellResult]) -> Option<verdict::Comparison> {
    let owned: Vec<CellResult> = results.iter().map(|r| (*r).clone()).collect();
    verdict::compare(&owned, &verdict::compare_options(spec)).ok()
}

/// Every target against the baseline per platform and size, in plan order.
pub fn comparisons(comparison: Option<&verdict::Comparison>) -> Vec<Comparison> {
    let Some(comparison) = comparison else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for group in &comparison.groups {
        let baseline_row = group
            .rows
            .first()
            .filter(|r| r.verdict == verdict::Verdict::Baseline);
        let baseline_repetitions = baseline_row.map_or(0, |r| r.repetitions as u32);
        let cv_percent = |r: &verdict::ComparisonRow| {
            r.ops_per_sec
                .and_then(|s| s.cv)
                .map(|cv| round3(cv * 100.0))
        };
        for row in &group.rows {
            let Some(verdict) = status_verdict(row.verdict) else {
                continue;
            };
            let delta = row.throughput_delta;
            out.push(Comparison {
                platform: group.platform.clone(),
                size: group.size.clone(),
                target: row.target.clone(),
                baseline: comparison.baseline.clone(),
                server: described(&row.server),
                baseline_server: baseline_row.and_then(|b| described(&b.server)),
                warnings: row.warnings(&comparison.baseline),
                repetitions: row.repetitions as u32,
                baseline_repetitions,
                throughput_delta_percent: delta.map(|d| round3(d.percent)),
                paired_slots: delta.and_then(|d| d.pairs).map(|n| n as u32),
                cv_percent: cv_percent(row),
                baseline_cv_percent: baseline_row.and_then(cv_percent),
                paired_ratio_cv_percent: delta
                    .and_then(|d| d.ratio_cv)
                    .map(|cv| round3(cv * 100.0)),
                cpu_per_op_delta_percent: row.cpu_delta.map(|d| round3(d.percent)),
                p99_delta_percent: row.p99_delta.map(|d| round3(d.percent)),
                cost_per_million_ops: row.cost_per_million_ops.map(round3),
                verdict: Some(verdict),
                reason: row.reason.clone(),
                simultaneous: row.simultaneous.as_ref().map(|s| SimultaneousStatus {
                    slots: s.slots as u32,
                    correlation: s.correlation.map(round3),
                    ratio_trend_percent: s.ratio_trend_percent.map(round3),
                    side_effect_percent: s.side_effect_percent.map(round3),
                    notes: s.notes.clone(),
                }),
                metrics: row.verdicts.iter().map(metric_comparison).collect(),
            });
        }
    }
    out
}

/// What a row's servers said they are; `None` when they said nothing.
fn described(facts: &verdict::server_facts::ServerFacts) -> Option<String> {
    Some(facts.describe()).filter(|d| d != "-")
}

/// The status's verdict; `None` for the baseline's own row and a group without one.
fn status_verdict(v: verdict::Verdict) -> Option<Verdict> {
    Some(match v {
        verdict::Verdict::Baseline | verdict::Verdict::NoBaseline => return None,
        verdict::Verdict::Faster => Verdict::Faster,
        verdict::Verdict::Slower => Verdict::Slower,
        verdict::Verdict::Cheaper => Verdict::Cheaper,
        verdict::Verdict::Costlier => Verdict::Costlier,
        verdict::Verdict::LowerLatency => Verdict::LowerLatency,
        verdict::Verdict::HigherLatency => Verdict::HigherLatency,
        verdict::Verdict::NoSignificantDifference => Verdict::NoSignificantDifference,
        verdict::Verdict::Inconclusive => Verdict::Inconclusive,
        verdict::Verdict::NotComparable => Verdict::NotComparable,
    })
}

fn metric_comparison(v: &verdict::MetricVerdict) -> MetricComparison {
    MetricComparison {
        metric: v.metric,
        delta_percent: v.delta.map(|d| round3(d.percent)),
        test: v.delta.map(|d| {
            match d.method {
                Method::Paired => "paired",
                Method::TwoStage { .. } => "twoStage",
                Method::Welch => "welch",
                Method::Crossover { pilot: None } => "crossover",
                Method::Crossover { pilot: Some(_) } => "crossoverTwoStage",
            }
            .to_owned()
        }),
        interval_low_percent: v.interval_percent.map(|(low, _)| round3(low)),
        interval_high_percent: v.interval_percent.map(|(_, high)| round3(high)),
        interval_confidence_percent: v.interval_confidence.map(|c| round3(c * 100.0)),
        adjusted_p_value: v.adjusted_p_value.map(|p| (p * 1e6).round() / 1e6),
        minimum_detectable_effect_percent: v.mde_percent.map(round3),
        cautious_minimum_detectable_effect_percent: v.mde_upper_percent.map(round3),
        verdict: status_verdict(v.verdict),
        reason: v.reason.clone(),
    }
}

/// The widest MDE of a comparison's declared metrics; `None` when one has none.
fn widest_mde(c: &Comparison) -> Option<f64> {
    if c.metrics.is_empty() {
        return None;
    }
    c.metrics
        .iter()
        .map(|m| m.minimum_detectable_effect_percent)
        .try_fold(0.0_f64, |widest, m| Some(widest.max(m?)))
}

/// The Precision condition's `(status, reason, message)` for a goal of `goal_percent` over
/// `comparisons`: reached when every comparison states an MDE at most the goal.
pub fn precision(goal_percent: f64, comparisons: &[Comparison]) -> (bool, &'static str, String) {
    let place = |c: &Comparison| {
        format!(
            "{} vs {} at {} on {}",
            c.target, c.baseline, c.size, c.platform
        )
    };
    let reps = |c: &Comparison| c.repetitions.min(c.baseline_repetitions);
    // The worst: no MDE yet, else the widest.
    let worst = comparisons.iter().max_by(|a, b| {
        let key = |c: &Comparison| widest_mde(c).unwrap_or(f64::INFINITY);
        key(a).total_cmp(&key(b))
    });
    match worst {
        None => (false, "PrecisionNotReached", "no comparison yet".to_owned()),
        Some(c) => match widest_mde(c) {
            Some(m) if m <= goal_percent => (
                true,
                "PrecisionReached",
                format!(
                    "MDE {m:.1}% after {} reps ({}), the widest; goal {goal_percent}%",
                    reps(c),
                    place(c)
                ),
            ),
            Some(m) => (
                false,
                "PrecisionNotReached",
                format!(
                    "MDE {m:.1}% after {} reps ({}); goal {goal_percent}%",
                    reps(c),
                    place(c)
                ),
            ),
            None => (
                false,
                "PrecisionNotReached",
                format!(
                    "no MDE after {} reps ({}: {}); goal {goal_percent}%",
                    reps(c),
                    place(c),
                    c.reason.as_deref().unwrap_or("not tested")
                ),
            ),
        },
    }
}

/// The main finding in one line: the comparison's headline (docs/results.md, "Headline");
/// with a single target, its mean ops/s per platform at the largest size measured so far.
pub fn headline(comparison: Option<&verdict::Comparison>, cells: &[CellStatus]) -> Option<String> {
    if let Some(line) = comparison.and_then(verdict::headline) {
        return Some(line);
    }
    // One target (or no baseline result yet): mean ops/s per platform at the last size
    // that has results.
    let done: Vec<&CellStatus> = cells
        .iter()
        .filter(|c| c.phase == CellPhase::Completed && c.ops_per_second.is_some())
        .collect();
    let last = done.last()?;
    let mut parts: Vec<String> = Vec::new();
    let mut platforms: Vec<&str> = Vec::new();
    for c in &done {
        if c.size == last.size
            && c.target == last.target
            && !platforms.contains(&c.platform.as_str())
        {
            platforms.push(&c.platform);
        }
    }
    for p in platforms {
        let ops: Vec<f64> = done
            .iter()
            .filter(|c| c.size == last.size && c.target == last.target && c.platform == p)
            .filter_map(|c| c.ops_per_second)
            .collect();
        let mean = ops.iter().sum::<f64>() / ops.len() as f64;
        parts.push(format!("{p} {mean:.0} ops/s"));
    }
    Some(format!(
        "{} at {}: {}",
        last.target,
        last.size,
        parts.join(", ")
    ))
}
