//! How a comparison reached its verdicts, in words read from the comparison itself: the
//! test of each declared metric, the family Holm adjusted, the level of the intervals and
//! what the MDE is. Every report that states the method prints these lines.

use super::comparison::Comparison;
use super::stats::{ALPHA, MIN_REPETITIONS, Method, POWER, SPREAD_CONFIDENCE};

/// The method of `comparison`, one statement per line, without markup.
pub fn method_lines(comparison: &Comparison) -> Vec<String> {
    let tested: Vec<_> = comparison
        .groups
        .iter()
        .flat_map(|g| &g.rows)
        .flat_map(|r| &r.verdicts)
        .filter_map(|v| Some((v.metric, v.delta?)))
        .filter(|(_, d)| d.p_value.is_some())
        .collect();
    let metrics: Vec<&str> = comparison.metrics.iter().map(|m| m.name()).collect();
    let mut lines = vec![format!(
        "Verdict metrics (declared before the run): {}; the other figures are descriptive.",
        metrics.join(", ")
    )];
    let mut methods: Vec<(Method, Vec<usize>)> = Vec::new();
    for (_, d) in &tested {
        let pairs = d.pairs.unwrap_or(0);
        match methods.iter_mut().find(|(m, _)| *m == d.method) {
            Some((_, counts)) => counts.push(pairs),
            None => methods.push((d.method, vec![pairs])),
        }
    }
    for (method, pairs) in &methods {
        let (fewest, most) = (
            pairs.iter().min().copied().unwrap_or(0),
            pairs.iter().max().copied().unwrap_or(0),
        );
        let over = match (method, fewest == most) {
            (Method::Welch, _) => String::new(),
            (_, true) => format!(" over {most} slots"),
            (_, false) => format!(" over {fewest} to {most} slots"),
        };
        lines.push(format!("Test: {}{over}.", method.text()));
    }
    if comparison.family > 0 {
        let family = comparison.family;
        lines.push(format!(
            "Holm–Bonferroni over the {family} test{} of the comparison, significant below \
             {}%; a verdict needs {MIN_REPETITIONS} valid repetitions on each side (paired: \
             {MIN_REPETITIONS} slots holding both).",
            if family == 1 { "" } else { "s" },
            ALPHA * 100.0
        ));
        lines.push(
            "Intervals: Holm-adjusted, each at the level Holm's step-down judged its test at \
             (95% for a single test), so an interval excludes 0 exactly when its verdict is a \
             difference."
                .to_owned(),
        );
        lines.push(format!(
            "MDE: the difference these repetitions would find with {:.0}% power at level \
             {}% ÷ {family}, from the spread measured; the cautious MDE takes the spread at \
             its upper {:.0}% confidence bound.",
            POWER * 100.0,
            ALPHA * 100.0,
            SPREAD_CONFIDENCE * 100.0
        ));
    }
    lines
}
