//! The headline of a comparison: the line the reports print last and the operator puts in
//! the benchmark's status.

use std::collections::BTreeSet;

use super::compare::plural;
use super::comparison::{Comparison, ComparisonGroup, ComparisonRow, Verdict};
use super::stats::Delta;

/// The main finding in one line (docs/results.md, "Headline"): the largest significant
/// throughput difference with its interval; else the largest tested one, saying it is not
/// significant; else why nothing could be concluded. `None` when nothing was compared (one
/// target).
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
    let largest = |verdicts: &[Verdict]| {
        rows.iter()
            .filter(|(_, r)| verdicts.contains(&r.verdict))
            .filter_map(|&(g, r)| Some((g, r, r.throughput_delta?)))
            .max_by(|a, b| a.2.percent.abs().total_cmp(&b.2.percent.abs()))
    };
    let baseline_reps = |g: &ComparisonGroup| g.rows.first().map_or(0, |b| b.repetitions);
    if let Some((g, r, d)) = largest(&[Verdict::Faster, Verdict::Slower]) {
        let (sustains, at_goal) = match &comparison.knee_goal {
            Some(goal) => ("sustains ", format!(" at {goal},")),
            None => ("", " at".to_owned()),
        };
        return Some(format!(
            "{} {sustains}{:+.1}% ±{:.1}% ops/s vs {}{at_goal} {}, {} reps{}",
            r.target,
            d.percent,
            d.ci95_margin_percent().unwrap_or(0.0),
            comparison.baseline,
            place(g),
            r.repetitions.min(baseline_reps(g)),
            mde(&d)
        ));
    }
    if let Some((g, r, d)) = largest(&[Verdict::NoSignificantDifference]) {
        let who = if targets.len() > 1 {
            format!("{} vs {}: ", r.target, comparison.baseline)
        } else {
            String::new()
        };
        return Some(format!(
            "{who}no significant difference at {} (±{:.1}%{})",
            place(g),
            d.ci95_margin_percent().unwrap_or(0.0),
            mde(&d)
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

/// `, MDE 2.1%`, or nothing without a test.
fn mde(d: &Delta) -> String {
    d.mde_percent
        .map_or(String::new(), |m| format!(", MDE {m:.1}%"))
}
