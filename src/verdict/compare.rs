//! Targets against a baseline, per (workload, platform, size), with statistics across
//! repetitions: throughput, p99 and server CPU per operation, their percent differences with
//! 95 % intervals (Fieller's, of the ratio of the means), Welch's test with Holm–Bonferroni
//! correction across the whole comparison, the minimum detectable effect, cost per million
//! operations, and a verdict.
//!
//! The rules (docs/results.md, "Verdicts"):
//! - only valid results count: incomplete and invalid cells are left out, and each row says
//!   how many and why;
//! - results are comparable only when their workload identities are equal; otherwise the row
//!   is `not comparable` and names the differing parameters;
//! - a verdict needs [`MIN_REPETITIONS`] valid repetitions on each side;
//! - a difference is significant when its Holm-adjusted p-value is below [`ALPHA`].

use std::collections::BTreeSet;

use super::comparison::{
    CompareError, CompareOptions, Comparison, ComparisonGroup, ComparisonRow, Verdict,
};
use super::stats::{ALPHA, Delta, MIN_REPETITIONS, Summary, holm};
use crate::result::{CellResult, WorkloadIdentity, slot_pairs};

/// The cells of one target in one group.
struct TargetCells<'r> {
    target: String,
    cells: Vec<&'r CellResult>,
}

impl TargetCells<'_> {
    fn valid(&self) -> impl Iterator<Item = &CellResult> {
        self.cells.iter().copied().filter(|c| c.is_valid())
    }

    fn summary(&self, f: impl Fn(&CellResult) -> Option<f64>) -> Option<Summary> {
        let samples: Option<Vec<f64>> = self.valid().map(f).collect();
        Summary::of(&samples?).ok()
    }

    fn excluded(&self) -> Vec<String> {
        self.cells
            .iter()
            .filter_map(|c| {
                c.exclusion()
                    .map(|why| format!("repetition {}: {why}", c.cell.repetition))
            })
            .collect()
    }

    /// The identity of the valid cells, or the differences between them.
    fn identity(&self) -> Result<Option<&WorkloadIdentity>, Vec<String>> {
        let mut valid = self.valid();
        let Some(first) = valid.next() else {
            return Ok(None);
        };
        for other in valid {
            let differences = first.identity.differences(&other.identity);
            if !differences.is_empty() {
                return Err(differences);
            }
        }
        Ok(Some(&first.identity))
    }
}

pub(super) fn ops_per_sec(c: &CellResult) -> Option<f64> {
    c.measured.as_ref().map(|m| m.overall.ops_per_sec)
}

fn error_rate(c: &CellResult) -> Option<f64> {
    c.measured.as_ref().map(|m| m.overall.error_rate)
}

fn p99(c: &CellResult) -> Option<f64> {
    c.measured
        .as_ref()
        .and_then(|m| m.overall.latency_us)
        .map(|l| l.p99 as f64)
}

fn cpu_per_op(c: &CellResult) -> Option<f64> {
    c.server_stats.as_ref().and_then(|s| s.cpu_us_per_op)
}

/// Compares every target with the baseline in each (workload, platform, size) group.
///
/// # Errors
/// [`CompareError::Empty`] for no results, [`CompareError::BaselineMissing`] if the baseline
/// target has no result at all.
pub fn compare(
    results: &[CellResult],
    options: &CompareOptions,
) -> Result<Comparison, CompareError> {
    if results.is_empty() {
        return Err(CompareError::Empty);
    }
    if !results.iter().any(|r| r.cell.target == options.baseline) {
        let available: BTreeSet<&str> = results.iter().map(|r| r.cell.target.as_str()).collect();
        return Err(CompareError::BaselineMissing {
            baseline: options.baseline.clone(),
            available: available.into_iter().collect::<Vec<_>>().join(", "),
        });
    }

    // Groups and targets in order of first appearance.
    let mut groups: Vec<((String, String, String), Vec<TargetCells<'_>>)> = Vec::new();
    for result in results {
        let c = &result.cell;
        let key = (c.workload.clone(), c.platform.clone(), c.size.clone());
        let group = match groups.iter_mut().position(|(k, _)| *k == key) {
            Some(i) => &mut groups[i].1,
            None => {
                groups.push((key, Vec::new()));
                &mut groups.last_mut().expect("just pushed").1
            }
        };
        match group.iter_mut().find(|t| t.target == c.target) {
            Some(t) => t.cells.push(result),
            None => group.push(TargetCells {
                target: c.target.clone(),
                cells: vec![result],
            }),
        }
    }

    let mut groups: Vec<ComparisonGroup> = groups
        .into_iter()
        .map(|((workload, platform, size), mut targets)| {
            // Baseline first; the sort is stable, so the others keep their order.
            targets.sort_by_key(|t| t.target != options.baseline);
            let price = options.price_per_node_hour.get(&platform).copied();
            let baseline = targets.first().filter(|t| t.target == options.baseline);
            let rows = targets.iter().map(|t| row(t, baseline, price)).collect();
            ComparisonGroup {
                workload,
                platform,
                size,
                rows,
            }
        })
        .collect();
    adjust_and_decide(&mut groups);
    let knee_goal = results
        .iter()
        .map(|r| r.sweep.as_ref())
        .collect::<Option<Vec<_>>>()
        .map(|sweeps| {
            sweeps[0]
                .goal
                .clone()
                .unwrap_or_else(|| "its rate".to_owned())
        });
    Ok(Comparison {
        baseline: options.baseline.clone(),
        groups,
        knee_goal,
    })
}

/// Holm–Bonferroni over every throughput test of the comparison, then the verdicts of the
/// tested rows.
fn adjust_and_decide(groups: &mut [ComparisonGroup]) {
    let tested: Vec<&mut ComparisonRow> = groups
        .iter_mut()
        .flat_map(|g| g.rows.iter_mut())
        .filter(|r| r.verdict == Verdict::NoSignificantDifference)
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .map(|r| {
            r.throughput_delta
                .and_then(|d| d.p_value)
                .expect("tested rows have a p-value")
        })
        .collect();
    for (row, adjusted) in tested.into_iter().zip(holm(&p)) {
        row.adjusted_p_value = Some(adjusted);
        let percent = row.throughput_delta.expect("tested").percent;
        row.verdict = match () {
            _ if adjusted >= ALPHA => Verdict::NoSignificantDifference,
            _ if percent > 0.0 => Verdict::Faster,
            _ => Verdict::Slower,
        };
    }
}

pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A row with its figures; tested rows are left `NoSignificantDifference` for
/// [`adjust_and_decide`].
fn row(
    t: &TargetCells<'_>,
    baseline: Option<&TargetCells<'_>>,
    price: Option<f64>,
) -> ComparisonRow {
    let ops = t.summary(ops_per_sec);
    let p99_us = t.summary(p99);
    let cpu = t.summary(cpu_per_op);
    let errors = t.summary(error_rate).map(|s| s.mean);
    let nodes = t.cells.iter().map(|c| c.nodes.len()).max().unwrap_or(0);
    let cost_per_million_ops = match (price, ops) {
        (Some(price), Some(ops)) if nodes > 0 && ops.mean > 0.0 => {
            Some(price * nodes as f64 / (ops.mean * 3600.0) * 1e6)
        }
        _ => None,
    };
    let is_baseline = baseline.is_some_and(|b| b.target == t.target);
    // Paired by slot where enough slots hold both targets, else as independent groups.
    let delta = |mine: Option<Summary>, f: fn(&CellResult) -> Option<f64>| {
        let b = baseline.filter(|_| !is_baseline)?;
        let pairs = slot_pairs(b.cells.iter().copied(), t.cells.iter().copied(), f);
        if pairs.len() >= MIN_REPETITIONS {
            return Delta::paired(&pairs).ok();
        }
        Delta::between(&b.summary(f)?, &mine?).ok()
    };
    let simultaneous = baseline
        .filter(|_| !is_baseline)
        .and_then(|b| super::simultaneous::compare_throughput(&b.cells, &t.cells));
    let repetitions = t.valid().count();
    let (verdict, reason) = match baseline {
        _ if is_baseline => match t.identity() {
            Err(differences) => (
                Verdict::NotComparable,
                Some(format!(
                    "the baseline's repetitions differ in {}",
                    differences.join(", ")
                )),
            ),
            Ok(_) => (Verdict::Baseline, None),
        },
        None => (Verdict::NoBaseline, None),
        Some(b) => decide(t, b, repetitions),
    };
    ComparisonRow {
        target: t.target.clone(),
        repetitions,
        excluded: t.excluded(),
        throughput_delta: match &simultaneous {
            Some((together, _)) => together.as_ref().ok().copied(),
            None => delta(ops, ops_per_sec),
        },
        p99_delta: delta(p99_us, p99),
        cpu_delta: delta(cpu, cpu_per_op),
        ops_per_sec: ops,
        error_rate: errors,
        p99_us,
        cpu_us_per_op: cpu,
        adjusted_p_value: None,
        cost_per_million_ops,
        verdict,
        reason,
        simultaneous: simultaneous.map(|(_, diagnostics)| diagnostics),
    }
}

fn decide(
    t: &TargetCells<'_>,
    b: &TargetCells<'_>,
    repetitions: usize,
) -> (Verdict, Option<String>) {
    let not_comparable = |why: String| (Verdict::NotComparable, Some(why));
    let identities = (t.identity(), b.identity());
    match identities {
        (Err(d), _) => {
            return not_comparable(format!(
                "the repetitions of {} differ in {}",
                t.target,
                d.join(", ")
            ));
        }
        (_, Err(d)) => {
            return not_comparable(format!(
                "the baseline's repetitions differ in {}",
                d.join(", ")
            ));
        }
        (Ok(Some(mine)), Ok(Some(base))) => {
            let d = base.differences(mine);
            if !d.is_empty() {
                return not_comparable(format!(
                    "workload identities differ in {} ({} vs {})",
                    d.join(", "),
                    b.target,
                    t.target
                ));
            }
        }
        _ => {}
    }
    let base_reps = b.valid().count();
    if repetitions < MIN_REPETITIONS || base_reps < MIN_REPETITIONS {
        return (
            Verdict::Inconclusive,
            Some(format!(
                "{} of {} and {} of {}; a verdict needs {MIN_REPETITIONS} valid repetitions \
                 on each side",
                plural(repetitions, "valid repetition"),
                t.target,
                base_reps,
                b.target
            )),
        );
    }
    (Verdict::NoSignificantDifference, None)
}
