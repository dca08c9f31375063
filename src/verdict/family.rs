//! The family of one comparison's tests: every declared metric of every tested row, adjusted
//! together with Holm–Bonferroni. Each test then gets its adjusted p-value, its interval at
//! the level Holm's step-down judged it at (so the interval excludes 0 exactly when the
//! verdict is a difference), its MDE at the family's first level, and its verdict.

use super::comparison::{ComparisonGroup, ComparisonRow, MetricVerdict, Verdict};
use super::stats::{ALPHA, holm, holm_levels};

/// Decides every tested metric of `groups` (those left `NoSignificantDifference` with a
/// p-value) as one family, and sets each tested row's verdict to its first metric's; returns
/// the family's size.
pub(super) fn decide_family(groups: &mut [ComparisonGroup]) -> usize {
    let tests: Vec<&mut MetricVerdict> = groups
        .iter_mut()
        .flat_map(|g| g.rows.iter_mut())
        .flat_map(|r| r.verdicts.iter_mut())
        .filter(|v| v.verdict == Verdict::NoSignificantDifference)
        .collect();
    let family = decide(tests);
    for row in groups.iter_mut().flat_map(|g| g.rows.iter_mut()) {
        settle_row(row);
    }
    family
}

/// Holm over `tests`, which all have a p-value; returns how many there were.
pub(crate) fn decide(tests: Vec<&mut MetricVerdict>) -> usize {
    let p: Vec<f64> = tests
        .iter()
        .map(|v| {
            v.delta
                .and_then(|d| d.p_value)
                .expect("tested metrics have a p-value")
        })
        .collect();
    let m = p.len();
    // The MDE is stated at the first step's level: the difference found with 80 % power even
    // if it is the only real one of the family.
    let first_level = ALPHA / m.max(1) as f64;
    for ((v, adjusted), level) in tests.into_iter().zip(holm(&p)).zip(holm_levels(&p)) {
        let delta = v.delta.expect("tested");
        let raw = delta.p_value.expect("tested");
        v.adjusted_p_value = Some(adjusted);
        v.interval_percent = delta.interval_percent(level);
        v.interval_confidence = Some(1.0 - level);
        v.mde_percent = delta.mde_percent(first_level);
        v.mde_upper_percent = delta.mde_upper_percent(first_level);
        v.verdict = if raw < level {
            Verdict::significant(v.metric, delta.percent)
        } else {
            Verdict::NoSignificantDifference
        };
    }
    m
}

/// A tested row's verdict is its first declared metric's; its reason, that metric's.
fn settle_row(row: &mut ComparisonRow) {
    if row.verdict != Verdict::NoSignificantDifference {
        return;
    }
    if let Some(first) = row.verdicts.first() {
        row.verdict = first.verdict;
        if row.reason.is_none() {
            row.reason = first.reason.clone();
        }
    }
}
