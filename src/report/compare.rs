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

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::layout::fixed_width;
pub use crate::measure::stats::MIN_REPETITIONS;
use crate::measure::stats::{ALPHA, Delta, Summary, holm};
use crate::result::{CellResult, WorkloadIdentity, slot_pairs};

/// What to compare against and how to price it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOptions {
    /// The target every other target is compared with.
    pub baseline: String,
    /// Price of one server node per hour, by platform name; cost columns stay empty for
    /// platforms without a price.
    pub price_per_node_hour: BTreeMap<String, f64>,
}

/// The outcome for one target in one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// This row is the baseline.
    Baseline,
    /// Throughput significantly higher than the baseline's.
    Faster,
    /// Throughput significantly lower.
    Slower,
    /// Tested, and the difference is not significant.
    NoSignificantDifference,
    /// Not enough valid repetitions on a side for a test.
    Inconclusive,
    /// The workload identities differ: the targets did not run the same experiment.
    NotComparable,
    /// The baseline has no result in this group.
    NoBaseline,
}

impl Verdict {
    /// The text the comparison table shows.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Baseline => "baseline",
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotComparable => "not comparable",
            Verdict::NoBaseline => "no baseline result in this group",
        }
    }
}

/// One target in one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonRow {
    /// Target name.
    pub target: String,
    /// Valid repetitions behind the figures.
    pub repetitions: usize,
    /// Cells left out of the figures, each with why (incomplete or invalid).
    pub excluded: Vec<String>,
    /// Successful operations per second; `None` without a valid repetition.
    pub ops_per_sec: Option<Summary>,
    /// Mean share of failed operations over the valid repetitions.
    pub error_rate: Option<f64>,
    /// Overall p99 latency of successful operations (µs); `None` if a repetition had none.
    pub p99_us: Option<Summary>,
    /// Server CPU µs per operation; `None` if a repetition lacks it.
    pub cpu_us_per_op: Option<Summary>,
    /// Throughput difference from the baseline: paired by slot when at least
    /// [`MIN_REPETITIONS`] slots hold a valid cell of both (`pairs` is then set), else with
    /// Welch's test of the two groups.
    pub throughput_delta: Option<Delta>,
    /// The throughput test's p-value after Holm–Bonferroni over every test of the comparison.
    pub adjusted_p_value: Option<f64>,
    /// p99 difference from the baseline (negative is better).
    pub p99_delta: Option<Delta>,
    /// CPU per operation difference from the baseline (negative is better).
    pub cpu_delta: Option<Delta>,
    /// Server cost per million operations: price per node hour × nodes ÷ (ops/s × 3600) × 10⁶.
    pub cost_per_million_ops: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why the verdict is `inconclusive` or `not comparable`.
    pub reason: Option<String>,
}

/// All targets of one (workload, platform, size).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonGroup {
    /// Workload.
    pub workload: String,
    /// Platform.
    pub platform: String,
    /// Dataset size.
    pub size: String,
    /// Baseline first, then the other targets in the order they first appear.
    pub rows: Vec<ComparisonRow>,
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The baseline target.
    pub baseline: String,
    /// Groups in the order they first appear.
    pub groups: Vec<ComparisonGroup>,
}

/// Why results could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// No results at all.
    #[error("cannot compare: no results were given")]
    Empty,
    /// The baseline target has no result anywhere.
    #[error("baseline target {baseline:?} has no result; targets with results: {available}")]
    BaselineMissing {
        /// The requested baseline.
        baseline: String,
        /// The targets present, comma-separated.
        available: String,
    },
}

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

fn ops_per_sec(c: &CellResult) -> Option<f64> {
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

/// The comparison options a benchmark spec implies: its baseline and its platforms' prices.
pub fn compare_options(spec: &crate::api::MongoBenchmarkSpec) -> CompareOptions {
    CompareOptions {
        baseline: spec.baseline().to_owned(),
        price_per_node_hour: spec
            .platforms
            .iter()
            .filter_map(|p| Some((p.name.clone(), p.price_per_node_hour?)))
            .collect(),
    }
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
    Ok(Comparison {
        baseline: options.baseline.clone(),
        groups,
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

fn plural(n: usize, word: &str) -> String {
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
        throughput_delta: delta(ops, ops_per_sec),
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
        return Some(format!(
            "{} {:+.1}% ±{:.1}% ops/s vs {} at {}, {} reps{}",
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

const HEADERS: [&str; 15] = [
    "TARGET",
    "REPS",
    "OPS/S",
    "±95% CI",
    "CV",
    "ERRORS",
    "Δ OPS/S",
    "Δ OPS/S 95% CI",
    "P (HOLM)",
    "MDE",
    "PAIRED CV",
    "P99 µs",
    "Δ P99",
    "CPU µs/OP",
    "VERDICT",
];
const RIGHT: [bool; 15] = [
    false, true, true, true, true, true, true, false, true, true, true, true, true, true, false,
];

/// `, MDE 2.1%`, or nothing without a test.
fn mde(d: &Delta) -> String {
    d.mde_percent
        .map_or(String::new(), |m| format!(", MDE {m:.1}%"))
}

/// A p-value as the reports show it: three decimals, `<0.001` below that.
pub(super) fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// A fraction (a CV) as a percentage with two decimals.
fn fraction(f: Option<f64>) -> String {
    f.map_or("-".into(), |f| format!("{:.2}%", f * 100.0))
}

fn percent(d: Option<Delta>) -> String {
    d.map_or("-".into(), |d| format!("{:+.1}%", d.percent))
}

/// The comparison as text: one titled table per group, notes (left-out cells, reasons, cost)
/// under it, a blank line between groups, and the headline last.
pub fn render_comparison(comparison: &Comparison) -> String {
    let mut out = String::new();
    for (i, group) in comparison.groups.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "{}, platform {}, size {}: baseline {}\n",
            group.workload, group.platform, group.size, comparison.baseline
        ));
        let rows: Vec<Vec<String>> = group
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.target.clone(),
                    r.repetitions.to_string(),
                    r.ops_per_sec
                        .map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    r.ops_per_sec
                        .and_then(|s| s.ci95_half_width)
                        .map_or("-".into(), |h| format!("{h:.1}")),
                    fraction(r.ops_per_sec.and_then(|s| s.cv)),
                    r.error_rate
                        .map_or("-".into(), |e| format!("{:.2}%", e * 100.0)),
                    percent(r.throughput_delta),
                    r.throughput_delta
                        .and_then(|d| d.ci95_percent)
                        .map_or("-".into(), |(lo, hi)| format!("[{lo:+.1}%, {hi:+.1}%]")),
                    r.adjusted_p_value.map_or("-".into(), p_value),
                    r.throughput_delta
                        .and_then(|d| d.mde_percent)
                        .map_or("-".into(), |m| format!("{m:.1}%")),
                    fraction(r.throughput_delta.and_then(|d| d.ratio_cv)),
                    r.p99_us.map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    percent(r.p99_delta),
                    r.cpu_us_per_op
                        .map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    r.verdict.text().to_string(),
                ]
            })
            .collect();
        out.push_str(&fixed_width(&HEADERS, &RIGHT, &rows));
        for r in &group.rows {
            if let Some(reason) = &r.reason {
                out.push_str(&format!("  {}: {}\n", r.target, reason));
            }
            if let Some(n) = r.throughput_delta.and_then(|d| d.pairs) {
                out.push_str(&format!(
                    "  {}: paired with the baseline by slot over {n} slots\n",
                    r.target
                ));
            }
            for why in &r.excluded {
                out.push_str(&format!("  {} left out, {why}\n", r.target));
            }
            if let Some(cost) = r.cost_per_million_ops {
                out.push_str(&format!(
                    "  {}: {cost:.4} per million operations\n",
                    r.target
                ));
            }
        }
    }
    if let Some(line) = headline(comparison) {
        out.push_str(&format!("\n{line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::ErrorKind;
    use crate::result::CellStatus;
    use crate::result::testing::{cell, identity, result_from};

    /// A 1-second cell of `n` finds of `latency_us` each, `cpu_per_op` µs of server CPU per
    /// operation (none if `None`), on platform n2, size 1M, the study's identity.
    fn res(
        target: &str,
        rep: u32,
        n: usize,
        latency_us: u64,
        cpu_per_op: Option<u64>,
    ) -> CellResult {
        let ops = vec![("find", latency_us, Ok(())); n];
        result_from(
            cell(target, "n2", "1M", rep),
            Duration::from_secs(1),
            &ops,
            cpu_per_op.map(|c| c * n as u64),
        )
    }

    fn study() -> Vec<CellResult> {
        vec![
            res("psmdb-8.0", 1, 1000, 200, Some(50)),
            res("mongo-9.0", 1, 1100, 180, Some(45)),
            res("psmdb-8.0", 2, 1020, 210, Some(52)),
            res("mongo-9.0", 2, 1120, 190, Some(47)),
            res("psmdb-8.0", 3, 980, 190, Some(48)),
            res("mongo-9.0", 3, 1080, 170, Some(43)),
        ]
    }

    fn options() -> CompareOptions {
        CompareOptions {
            baseline: "psmdb-8.0".into(),
            price_per_node_hour: BTreeMap::from([("n2".to_string(), 0.5)]),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn verdict_of(c: &Comparison, target: &str) -> Verdict {
        c.groups[0]
            .rows
            .iter()
            .find(|r| r.target == target)
            .unwrap()
            .verdict
    }

    #[test]
    fn deltas_intervals_and_tests_across_three_repetitions() {
        let c = compare(&study(), &options()).unwrap();
        assert_eq!(c.groups.len(), 1);
        let rows = &c.groups[0].rows;
        assert_eq!(rows[0].target, "psmdb-8.0");
        assert_eq!(rows[0].verdict, Verdict::Baseline);
        assert_eq!(rows[0].throughput_delta, None);
        let m = &rows[1];
        assert_eq!((m.target.as_str(), m.repetitions), ("mongo-9.0", 3));
        // Independent mpmath computation (Welch df = 4, Fieller's ratio interval):
        // ops +10 % [5.343376273896673, 14.882976700523548], p = 0.003602232609104004,
        // MDE 6.070504591228296 %; p99 −10 % [−20.251507999063197, 1.4152810424487947];
        // CPU −10 % [−18.28058935829076, −0.9763254589517225].
        let d = m.throughput_delta.unwrap();
        assert!(close(d.percent, 10.0));
        let (lo, hi) = d.ci95_percent.unwrap();
        assert!(close(lo, 5.343376273896673) && close(hi, 14.882976700523548));
        assert!(close(d.df.unwrap(), 4.0));
        assert!(close(d.p_value.unwrap(), 0.003602232609104004));
        assert!(close(d.mde_percent.unwrap(), 6.070504591228296));
        // One test: Holm leaves its p-value as it is.
        assert!(close(m.adjusted_p_value.unwrap(), 0.003602232609104004));
        let (lo, hi) = m.p99_delta.unwrap().ci95_percent.unwrap();
        assert!(close(lo, -20.251507999063197) && close(hi, 1.4152810424487947));
        let (lo, hi) = m.cpu_delta.unwrap().ci95_percent.unwrap();
        assert!(close(lo, -18.28058935829076) && close(hi, -0.9763254589517225));
        assert!(close(m.cpu_us_per_op.unwrap().mean, 45.0));
        // 0.5 $/node-hour × 3 nodes / (1100 ops/s × 3600 s) × 10⁶ = 0.3787878…
        assert!(close(m.cost_per_million_ops.unwrap(), 0.3787878787878788));
        assert_eq!(m.verdict, Verdict::Faster);
        assert_eq!(m.error_rate, Some(0.0));
    }

    #[test]
    fn comparison_text_is_exact() {
        let c = compare(&study(), &options()).unwrap();
        // ±95 % CI of the means: t₀.₉₇₅(2) · 20 / √3 = 49.68… for both targets.
        let expected = "\
flights/v1, platform n2, size 1M: baseline psmdb-8.0
TARGET     REPS   OPS/S  ±95% CI     CV  ERRORS  Δ OPS/S  Δ OPS/S 95% CI   P (HOLM)   MDE  PAIRED CV  P99 µs   Δ P99  CPU µs/OP  VERDICT
psmdb-8.0     3  1000.0     49.7  2.00%   0.00%        -  -                       -     -          -   200.0       -       50.0  baseline
mongo-9.0     3  1100.0     49.7  1.82%   0.00%   +10.0%  [+5.3%, +14.9%]     0.004  6.1%          -   180.0  -10.0%       45.0  faster
  psmdb-8.0: 0.4167 per million operations
  mongo-9.0: 0.3788 per million operations

mongo-9.0 +10.0% ±4.9% ops/s vs psmdb-8.0 at 1M, 3 reps, MDE 6.1%
";
        assert_eq!(render_comparison(&c), expected);
    }

    #[test]
    fn cells_of_one_slot_are_compared_paired() {
        use crate::result::Slot;
        // The baseline drifts between slots; the candidate is 3 % above it in each.
        let mut results = Vec::new();
        for (slot, base) in [(1, 1000), (2, 1200), (3, 900), (4, 1100)] {
            for (position, (target, ops)) in [("psmdb-8.0", base), ("mongo-9.0", base * 103 / 100)]
                .into_iter()
                .enumerate()
            {
                let mut r = res(target, slot, ops, 100, Some(50));
                r.slot = Some(Slot {
                    number: slot,
                    position: position as u32,
                });
                results.push(r);
            }
        }
        let c = compare(&results, &options()).unwrap();
        let m = &c.groups[0].rows[1];
        let d = m.throughput_delta.unwrap();
        assert_eq!(d.pairs, Some(4));
        let pairs: Vec<(f64, f64)> = (0..4)
            .map(|i| {
                (
                    ops_per_sec(&results[2 * i]).unwrap(),
                    ops_per_sec(&results[2 * i + 1]).unwrap(),
                )
            })
            .collect();
        assert_eq!(Some(d), Delta::paired(&pairs).ok());
        assert!(close(d.percent, 3.0), "{d:?}");
        // Independent groups would see the drift (CV about 12 %) and no difference.
        let welch = Delta::between(
            &Summary::of(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()).unwrap(),
            &Summary::of(&pairs.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap(),
        )
        .unwrap();
        assert!(welch.p_value.unwrap() > 0.5, "{welch:?}");
        assert_eq!(m.verdict, Verdict::Faster);
        let text = render_comparison(&c);
        assert!(
            text.contains("  mongo-9.0: paired with the baseline by slot over 4 slots\n"),
            "{text}"
        );
    }

    #[test]
    fn verdicts_for_slower_equal_few_and_different_identities() {
        let mut results = study();
        // slower: 900 ± 10; equal: 1000 ± 10 (not significant); two: two repetitions only.
        for (rep, n) in [(1, 890), (2, 900), (3, 910)] {
            results.push(res("slow", rep, n, 200, Some(50)));
        }
        for (rep, n) in [(1, 990), (2, 1000), (3, 1010)] {
            results.push(res("same", rep, n, 200, Some(50)));
        }
        for (rep, n) in [(1, 1500), (2, 1510)] {
            results.push(res("two", rep, n, 200, Some(50)));
        }
        for rep in 1..=3 {
            let mut other = res("other-seed", rep, 1500 + rep as usize, 200, Some(50));
            other.identity = identity(&[("seed", "2")]);
            results.push(other);
        }
        let c = compare(&results, &options()).unwrap();
        assert_eq!(verdict_of(&c, "mongo-9.0"), Verdict::Faster);
        assert_eq!(verdict_of(&c, "slow"), Verdict::Slower);
        assert_eq!(verdict_of(&c, "same"), Verdict::NoSignificantDifference);
        assert_eq!(verdict_of(&c, "two"), Verdict::Inconclusive);
        assert_eq!(verdict_of(&c, "other-seed"), Verdict::NotComparable);
        let rows = &c.groups[0].rows;
        let reason = |t: &str| rows.iter().find(|r| r.target == t).unwrap().reason.clone();
        assert_eq!(
            reason("two").unwrap(),
            "2 valid repetitions of two and 3 of psmdb-8.0; a verdict needs 3 valid \
             repetitions on each side"
        );
        assert_eq!(
            reason("other-seed").unwrap(),
            "workload identities differ in seed (1 vs 2) (psmdb-8.0 vs other-seed)"
        );
        // Holm over the three tested rows of the whole comparison (mongo-9.0, slow, same).
        let tested: Vec<&ComparisonRow> = rows
            .iter()
            .filter(|r| r.adjusted_p_value.is_some())
            .collect();
        let raw: Vec<f64> = tested
            .iter()
            .map(|r| r.throughput_delta.unwrap().p_value.unwrap())
            .collect();
        let adjusted: Vec<f64> = tested.iter().map(|r| r.adjusted_p_value.unwrap()).collect();
        assert_eq!(tested.len(), 3);
        assert_eq!(adjusted, holm(&raw));
    }

    #[test]
    fn holm_correction_can_withdraw_a_marginal_verdict() {
        // A marginal difference is significant alone (p ≈ 0.02) and not once four other
        // tests share the level.
        let mut results = Vec::new();
        for (rep, n) in [(1, 1000), (2, 1010), (3, 990)] {
            results.push(res("base", rep, n, 200, None));
        }
        for (rep, n) in [(1, 1020), (2, 1030), (3, 1025)] {
            results.push(res("marginal", rep, n, 200, None));
        }
        let options = CompareOptions {
            baseline: "base".into(),
            ..CompareOptions::default()
        };
        let alone = compare(&results, &options).unwrap();
        let p = alone.groups[0].rows[1]
            .throughput_delta
            .unwrap()
            .p_value
            .unwrap();
        assert!(p < ALPHA && p * 5.0 >= ALPHA, "{p}");
        assert_eq!(verdict_of(&alone, "marginal"), Verdict::Faster);
        for t in ["n1", "n2", "n3", "n4"] {
            for (rep, n) in [(1, 1000), (2, 1010), (3, 990)] {
                results.push(res(t, rep, n, 200, None));
            }
        }
        let many = compare(&results, &options).unwrap();
        assert_eq!(
            verdict_of(&many, "marginal"),
            Verdict::NoSignificantDifference
        );
    }

    #[test]
    fn throughput_counts_only_successful_operations() {
        // The same completions, but half of the fast server's operations failed: its
        // successful throughput is lower than the baseline's, not higher.
        let mut results = Vec::new();
        for rep in 1..=3u32 {
            results.push(res("base", rep, 1000 + rep as usize, 200, None));
            let ops: Vec<_> = (0..1500 + rep as usize)
                .map(|i| {
                    let outcome = if i % 2 == 0 {
                        Ok(())
                    } else {
                        Err(ErrorKind::Network)
                    };
                    ("find", 100, outcome)
                })
                .collect();
            results.push(result_from(
                cell("failing", "n2", "1M", rep),
                Duration::from_secs(1),
                &ops,
                None,
            ));
        }
        let c = compare(
            &results,
            &CompareOptions {
                baseline: "base".into(),
                ..CompareOptions::default()
            },
        )
        .unwrap();
        let failing = &c.groups[0].rows[1];
        assert_eq!(failing.verdict, Verdict::Slower);
        assert!((failing.error_rate.unwrap() - 0.5).abs() < 0.001);
    }

    #[test]
    fn invalid_and_incomplete_cells_are_left_out_and_named() {
        let mut results = study();
        results[3].status = CellStatus::Incomplete {
            reason: "target mongo-9.0: server killed in phase measured".into(),
        };
        results[5].invalid_reasons = vec!["election: term 3 → 4".into()];
        let c = compare(&results, &options()).unwrap();
        let m = &c.groups[0].rows[1];
        assert_eq!(m.repetitions, 1);
        assert_eq!(
            m.excluded,
            [
                "repetition 2: incomplete: target mongo-9.0: server killed in phase measured",
                "repetition 3: invalid: election: term 3 → 4"
            ]
        );
        assert_eq!(m.verdict, Verdict::Inconclusive);
        assert_eq!(m.ops_per_sec.unwrap().mean, 1100.0);
        assert_eq!(headline(&c).unwrap(), "inconclusive: 1 repetition");
    }

    #[test]
    fn groups_split_by_platform_and_size_and_missing_baselines_are_said() {
        let mut results = study();
        let mut c4a = res("mongo-9.0", 1, 1000, 200, None);
        c4a.cell.platform = "c4a".into();
        results.push(c4a);
        let c = compare(&results, &options()).unwrap();
        assert_eq!(c.groups.len(), 2);
        let g = &c.groups[1];
        assert_eq!((g.platform.as_str(), g.rows.len()), ("c4a", 1));
        assert_eq!(g.rows[0].verdict, Verdict::NoBaseline);
        assert_eq!(g.rows[0].cpu_us_per_op, None);
        assert_eq!(g.rows[0].cost_per_million_ops, None); // no price for c4a
        // Two platforms: the headline names the platform.
        assert_eq!(
            headline(&c).unwrap(),
            "mongo-9.0 +10.0% ±4.9% ops/s vs psmdb-8.0 at 1M on n2, 3 reps, MDE 6.1%"
        );
    }

    #[test]
    fn headlines_say_only_what_was_tested() {
        let mut same = Vec::new();
        for (rep, a, b) in [(1, 1000, 1003), (2, 1010, 1004), (3, 990, 995)] {
            same.push(res("base", rep, a, 200, None));
            same.push(res("other", rep, b, 200, None));
        }
        let options = CompareOptions {
            baseline: "base".into(),
            ..CompareOptions::default()
        };
        let c = compare(&same, &options).unwrap();
        let line = headline(&c).unwrap();
        assert!(
            line.starts_with("no significant difference at 1M (±"),
            "{line}"
        );
        let single = vec![
            res("base", 1, 1000, 200, None),
            res("other", 1, 1200, 200, None),
        ];
        let c = compare(&single, &options).unwrap();
        assert_eq!(headline(&c).unwrap(), "inconclusive: 1 repetition");
        let alone = vec![res("base", 1, 1000, 200, None)];
        assert_eq!(headline(&compare(&alone, &options).unwrap()), None);
    }

    #[test]
    fn missing_baselines_and_empty_input_are_refused() {
        let e = compare(
            &study(),
            &CompareOptions {
                baseline: "psmdb-7.0".into(),
                ..options()
            },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "baseline target \"psmdb-7.0\" has no result; targets with results: mongo-9.0, \
             psmdb-8.0"
        );
        assert!(matches!(compare(&[], &options()), Err(CompareError::Empty)));
    }
}
