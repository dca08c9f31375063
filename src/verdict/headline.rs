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
    let targets: BTreeSet<&str> = rows.iter().map(|(_, r)| r.target.as_str()).collect();
    let baseline_reps = |g: &ComparisonGroup| g.rows.first().map_or(0, |b| b.repetitions);
    let names = |g: &ComparisonGroup, r: &ComparisonRow| names(&comparison.baseline, g, r);
    if let Some((g, r, v, percent)) = largest(true) {
        let (target, baseline) = names(g, r);
        let (sustains, at_goal) = match (&comparison.knee_goal, v.metric) {
            (Some(goal), VerdictMetric::Throughput) => ("sustains ", format!(" at {goal},")),
            _ => ("", " at".to_owned()),
        };
        return Some(format!(
            "{} {sustains}{percent:+.1}%{} {} vs {}{at_goal} {}, {} reps{}{}",
            target,
            interval(v),
            v.metric.label(),
            baseline,
            place(g),
            r.repetitions.min(baseline_reps(g)),
            mde(v),
            also_differ(r)
        ));
    }
    if let Some((g, r, v, _)) = largest(false) {
        let (target, baseline) = names(g, r);
        // One compared target of the same software needs no names: the line is about it.
        let who = if targets.len() > 1 || target != r.target {
            format!("{target} vs {baseline}: ")
        } else {
            String::new()
        };
        return Some(format!(
            "{who}no significant difference at {}: {}{}{}{}",
            place(g),
            v.metric.label(),
            interval(v),
            mde(v),
            also_differ(r)
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

/// The target's and the baseline's names, each with what its servers said they are
/// (`mongo-9.0 (MongoDB 9.0.1)`) when the two said different things: the same server on both
/// sides (an A/A run, two platforms) needs no version in the line.
fn names(baseline: &str, g: &ComparisonGroup, r: &ComparisonRow) -> (String, String) {
    let theirs = r.server.short();
    let base = g.rows.first().and_then(|b| b.server.short());
    let named = |name: &str, short: Option<String>| match short {
        Some(short) if theirs != base => format!("{name} ({short})"),
        _ => name.to_owned(),
    };
    (
        named(&r.target, theirs.clone()),
        named(baseline, base.clone()),
    )
}

/// `; they also differ in topology replica set vs standalone`: what the difference measured
/// includes besides the versions (docs/results.md, "What differs").
fn also_differ(row: &ComparisonRow) -> String {
    if row.unasked_differences.is_empty() {
        String::new()
    } else {
        format!(
            "; they also differ in {}",
            row.unasked_differences.join(", ")
        )
    }
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
