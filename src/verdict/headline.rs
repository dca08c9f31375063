//! The headline of a comparison: the line the reports print last and the operator puts in
//! the benchmark's status.

use std::collections::BTreeSet;

use super::compare::plural;
use super::comparison::{Comparison, ComparisonGroup, ComparisonRow, MetricVerdict, Verdict};
use crate::api::VerdictMetric;

/// The main finding in one line (docs/results.md, "Headline"): the largest significant
/// difference of a declared metric with its interval, naming the metric; else the largest
/// tested one, saying it is not significant; else why nothing could be concluded. `None` when
/// nothing was compared (one target).
pub fn headline(comparison: &Comparison) -> Option<String> {
    let platforms: BTreeSet<&str> = comparison
        .groups
        .iter()
        .map(|g| g.platform.as_str())
        .collect();
    let rows: Vec<(&ComparisonGroup, &ComparisonRow)> = comparison
        .groups
        .iter()
        .flat_map(|g| g.rows.iter().map(move |r| (g, r)))
        .filter(|(_, r)| !matches!(r.verdict, Verdict::Baseline | Verdict::NoBaseline))
        .collect();
    let targets: BTreeSet<&str> = rows.iter().map(|(_, r)| r.target.as_str()).collect();
    let place = |g: &ComparisonGroup| {
        if platforms.len() > 1 {
            format!("{} on {}", g.size, g.platform)
        } else {
            g.size.clone()
        }
    };
    let largest = |significant: bool| {
        rows.iter()
            .flat_map(|&(g, r)| r.verdicts.iter().map(move |v| (g, r, v)))
            .filter(|(_, _, v)| {
                v.verdict.is_difference() == significant
                    && (significant || v.verdict == Verdict::NoSignificantDifference)
            })
            .filter_map(|(g, r, v)| Some((g, r, v, v.delta?.percent)))
            .max_by(|a, b| a.3.abs().total_cmp(&b.3.abs()))
    };
    let baseline_reps = |g: &ComparisonGroup| g.rows.first().map_or(0, |b| b.repetitions);
    if let Some((g, r, v, percent)) = largest(true) {
        let (sustains, at_goal) = match (&comparison.knee_goal, v.metric) {
            (Some(goal), VerdictMetric::Throughput) => ("sustains ", format!(" at {goal},")),
            _ => ("", " at".to_owned()),
        };
        return Some(format!(
            "{} {sustains}{percent:+.1}%{} {} vs {}{at_goal} {}, {} reps{}",
            r.target,
            interval(v),
            v.metric.label(),
            comparison.baseline,
            place(g),
            r.repetitions.min(baseline_reps(g)),
            mde(v)
        ));
    }
    if let Some((g, r, v, _)) = largest(false) {
        let who = if targets.len() > 1 {
            format!("{} vs {}: ", r.target, comparison.baseline)
        } else {
            String::new()
        };
        return Some(format!(
            "{who}no significant difference at {}: {}{}{}",
            place(g),
            v.metric.label(),
            interval(v),
            mde(v)
        ));
    }
    if let Some((_, r)) = rows
        .iter()
        .find(|(_, r)| r.verdict == Verdict::NotComparable)
    {
        return Some(format!(
            "not comparable: {}",
            r.reason.as_deref().unwrap_or("workload identities differ")
        ));
    }
    let fewest = rows
        .iter()
        .map(|(g, r)| r.repetitions.min(baseline_reps(g)))
        .min()?;
    Some(format!("inconclusive: {}", plural(fewest, "repetition")))
}

/// ` [+5.3%, +14.9%]`, or nothing without an interval.
fn interval(v: &MetricVerdict) -> String {
    v.interval_percent
        .map_or(String::new(), |(lo, hi)| format!(" [{lo:+.1}%, {hi:+.1}%]"))
}

/// `, MDE 2.1%`, or nothing without a test.
fn mde(v: &MetricVerdict) -> String {
    v.mde_percent
        .map_or(String::new(), |m| format!(", MDE {m:.1}%"))
}
