//! Targets against a baseline, per (workload, platform, size), with statistics across
//! repetitions: throughput, p99 and server CPU per operation and their percent differences;
//! for each declared verdict metric, a test fixed by the design (paired by slot when the
//! schedule paired the cells, Stein's two-stage test under a precision goal, else Welch's),
//! Holm–Bonferroni across the whole comparison (`family`), the interval at the level the
//! verdict used, the minimum detectable effect, and a verdict; cost per million operations.
//!
//! The rules (docs/results.md, "Verdicts"):
//! - only valid results count: incomplete and invalid cells are left out, and each row says
//!   how many and why;
//! - results are comparable only when their workload identities are equal; otherwise the row
//!   is `not comparable` and names the differing parameters;
//! - a verdict needs [`MIN_REPETITIONS`] valid repetitions on each side, and, paired,
//!   [`MIN_REPETITIONS`] slots holding a valid cell of both;
//! - a difference is significant when its Holm-adjusted p-value is below the family's level.

use std::collections::BTreeSet;

use super::comparison::{
    CompareError, CompareOptions, Comparison, ComparisonGroup, ComparisonRow, MetricVerdict,
    Verdict,
};
use super::family::decide_family;
use super::server_facts::{ServerFacts, unasked_differences};
use super::stats::{Delta, MIN_REPETITIONS, Summary};
use crate::api::VerdictMetric;
use crate::api::verdict::DEFAULT_METRICS;
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

/// The figure a verdict metric reads from a cell.
pub(crate) fn figure(metric: VerdictMetric) -> fn(&CellResult) -> Option<f64> {
    match metric {
        VerdictMetric::Throughput => ops_per_sec,
        VerdictMetric::CpuPerOperation => cpu_per_op,
        VerdictMetric::P99Latency => p99,
    }
}

/// How two targets' cells are tested, fixed by how they were scheduled and the design they
/// record, never by which test gives the smaller interval.
#[derive(Clone, Copy)]
struct Design {
    /// The schedule ran them in slots (a cell of either, valid or not, records one).
    paired: bool,
    /// Under a precision goal, the pilot's slots (`design.pilotSlots`).
    pilot: Option<usize>,
}

impl Design {
    fn of(a: &TargetCells<'_>, b: &TargetCells<'_>) -> Design {
        let cells = || a.cells.iter().chain(&b.cells);
        Design {
            paired: cells().any(|c| c.slot.is_some()),
            pilot: cells()
                .find_map(|c| c.design.as_ref()?.pilot_slots)
                .map(|p| p as usize),
        }
    }

    /// The difference of `t` from `b` in `f` with its unadjusted test; with fewer than
    /// [`MIN_REPETITIONS`] pairs or repetitions the test has too little to stand on, and
    /// [`tested`] says so.
    fn delta(
        self,
        b: &TargetCells<'_>,
        t: &TargetCells<'_>,
        f: fn(&CellResult) -> Option<f64>,
    ) -> Option<Delta> {
        if self.paired {
            let pairs = slot_pairs(b.cells.iter().copied(), t.cells.iter().copied(), f);
            return Delta::paired(&pairs, self.pilot).ok();
        }
        Delta::between(&b.summary(f)?, &t.summary(f)?).ok()
    }
}

/// The declared metric's verdict before the family is adjusted: tested (left
/// `NoSignificantDifference` for [`decide_family`]) or `Inconclusive` with why.
pub(super) fn tested(metric: VerdictMetric, delta: Option<Delta>, paired: bool) -> MetricVerdict {
    let enough = delta.and_then(|d| match d.pairs {
        Some(n) if n < MIN_REPETITIONS => None,
        _ => d.p_value,
    });
    let reason = match (enough, delta.and_then(|d| d.pairs), paired) {
        (Some(_), _, _) => None,
        (None, pairs, true) => Some(format!(
            "{} held a valid {} of both targets; a paired verdict needs {MIN_REPETITIONS}",
            plural(pairs.unwrap_or(0), "slot"),
            metric.label()
        )),
        (None, _, false) => Some(format!(
            "{} is missing from a valid repetition or has too few of them",
            metric.label()
        )),
    };
    MetricVerdict {
        metric,
        delta,
        adjusted_p_value: None,
        interval_percent: None,
        interval_confidence: None,
        mde_percent: None,
        mde_upper_percent: None,
        verdict: if reason.is_none() {
            Verdict::NoSignificantDifference
        } else {
            Verdict::Inconclusive
        },
        reason,
    }
}

/// The declared metrics: the options', else those the results record, else throughput.
fn declared_metrics(results: &[CellResult], options: &CompareOptions) -> Vec<VerdictMetric> {
    if !options.metrics.is_empty() {
        return options.metrics.clone();
    }
    results
        .iter()
        .find_map(|r| Some(r.design.as_ref()?.metrics.clone()))
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| DEFAULT_METRICS.to_vec())
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

    let metrics = declared_metrics(results, options);
    let mut groups: Vec<ComparisonGroup> = groups
        .into_iter()
        .map(|((workload, platform, size), mut targets)| {
            // Baseline first; the sort is stable, so the others keep their order.
            targets.sort_by_key(|t| t.target != options.baseline);
            let price = options.price_per_node_hour.get(&platform).copied();
            let baseline = targets.first().filter(|t| t.target == options.baseline);
            let rows = targets
                .iter()
                .map(|t| row(t, baseline, price, &metrics))
                .collect();
            ComparisonGroup {
                workload,
                platform,
                size,
                rows,
            }
        })
        .collect();
    let family = decide_family(&mut groups);
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
        metrics,
        family,
        groups,
        knee_goal,
    })
}

pub(super) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A row with its figures and, when it is tested, its declared metrics' tests (left
/// `NoSignificantDifference` for [`decide_family`]).
fn row(
    t: &TargetCells<'_>,
    baseline: Option<&TargetCells<'_>>,
    price: Option<f64>,
    metrics: &[VerdictMetric],
) -> ComparisonRow {
    let ops = t.summary(ops_per_sec);
    let nodes = t.cells.iter().map(|c| c.nodes.len()).max().unwrap_or(0);
    let cost_per_million_ops = match (price, ops) {
        (Some(price), Some(ops)) if nodes > 0 && ops.mean > 0.0 => {
            Some(price * nodes as f64 / (ops.mean * 3600.0) * 1e6)
        }
        _ => None,
    };
    let is_baseline = baseline.is_some_and(|b| b.target == t.target);
    let candidate_of = baseline.filter(|_| !is_baseline);
    let design = candidate_of.map(|b| Design::of(b, t));
    // Simultaneous slots compare throughput over their common seconds, with the side's effect
    // removed where the targets traded sides (`simultaneous`).
    let simultaneous = candidate_of
        .and_then(|b| super::simultaneous::compare_throughput(&b.cells, &t.cells, design?.pilot));
    let delta = |m: VerdictMetric| {
        if m == VerdictMetric::Throughput
            && let Some((together, _)) = &simultaneous
        {
            return together.as_ref().ok().copied();
        }
        design?.delta(candidate_of?, t, figure(m))
    };
    let repetitions = t.valid().count();
    let server = ServerFacts::of(t.cells.iter().copied());
    let unasked_differences = candidate_of.map_or_else(Vec::new, |b| {
        unasked_differences(&server, &ServerFacts::of(b.cells.iter().copied()))
    });
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
    let verdicts = match (verdict, design) {
        (Verdict::NoSignificantDifference, Some(d)) => metrics
            .iter()
            .map(|&m| tested(m, delta(m), d.paired))
            .collect(),
        _ => Vec::new(),
    };
    ComparisonRow {
        target: t.target.clone(),
        repetitions,
        excluded: t.excluded(),
        throughput_delta: delta(VerdictMetric::Throughput),
        p99_delta: delta(VerdictMetric::P99Latency),
        cpu_delta: delta(VerdictMetric::CpuPerOperation),
        ops_per_sec: ops,
        error_rate: t.summary(error_rate).map(|s| s.mean),
        p99_us: t.summary(p99),
        cpu_us_per_op: t.summary(cpu_per_op),
        verdicts,
        cost_per_million_ops,
        verdict,
        reason,
        simultaneous: simultaneous.map(|(_, diagnostics)| diagnostics),
        canary_flagged: t.valid().filter(|c| c.canary_flagged()).count(),
        server,
        unasked_differences,
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
