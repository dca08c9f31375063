//! Targets against a baseline, per (workload, platform, size), with statistics across
//! repetitions: throughput, p99 and server CPU per operation, their percent differences with
//! 95 % Welch intervals, cost per million operations, and a verdict.
//!
//! Only complete results are compared: any incomplete one is refused with its reason. The
//! verdict is the throughput's, and is withheld when the comparison would mislead: a saturated
//! client (the client was measured, not the server) or different traffic fingerprints (the
//! targets did not receive the same operations).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::layout::fixed_width;
use crate::measure::stats::{Delta, Direction, Summary};
use crate::result::{CellResult, ResultError};

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
    /// The 95 % interval of the throughput difference contains 0.
    NoSignificantDifference,
    /// A side has a single repetition: no interval, no verdict.
    TooFewRepetitions,
    /// A cell of this target or of the baseline had a saturated client.
    ClientSaturated,
    /// The target and the baseline received different traffic.
    TrafficDiffers,
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
            Verdict::TooFewRepetitions => "too few repetitions for a confidence interval",
            Verdict::ClientSaturated => "client saturated: not a server result",
            Verdict::TrafficDiffers => "traffic fingerprints differ: not comparable",
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
    /// Repetitions (cells) behind the figures.
    pub repetitions: usize,
    /// Overall operations per second.
    pub ops_per_sec: Summary,
    /// Overall p99 latency of successful operations (µs); `None` if a repetition had none.
    pub p99_us: Option<Summary>,
    /// Server CPU µs per operation; `None` if a repetition lacks it.
    pub cpu_us_per_op: Option<Summary>,
    /// Throughput difference from the baseline.
    pub throughput_delta: Option<Delta>,
    /// p99 difference from the baseline (negative is better).
    pub p99_delta: Option<Delta>,
    /// CPU per operation difference from the baseline (negative is better).
    pub cpu_delta: Option<Delta>,
    /// Server cost per million operations: price per node hour × nodes ÷ (ops/s × 3600) × 10⁶.
    pub cost_per_million_ops: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
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
    /// A result is incomplete (or otherwise invalid).
    #[error("cannot compare: {0}")]
    Invalid(#[from] ResultError),
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
    fn summary(&self, f: impl Fn(&CellResult) -> Option<f64>) -> Option<Summary> {
        let samples: Option<Vec<f64>> = self.cells.iter().map(|c| f(c)).collect();
        Summary::of(&samples?).ok()
    }

    fn client_saturated(&self) -> bool {
        self.cells
            .iter()
            .any(|c| c.client_cpu.is_some_and(|u| u.client_saturated))
    }

    fn fingerprints(&self) -> BTreeSet<&str> {
        self.cells.iter().map(|c| c.fingerprint.as_str()).collect()
    }
}

fn ops_per_sec(c: &CellResult) -> Option<f64> {
    c.measured.as_ref().map(|m| m.overall.ops_per_sec)
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
/// [`CompareError::Invalid`] if any result is incomplete, [`CompareError::Empty`] for no
/// results, [`CompareError::BaselineMissing`] if the baseline target has no result.
pub fn compare(
    results: &[CellResult],
    options: &CompareOptions,
) -> Result<Comparison, CompareError> {
    if results.is_empty() {
        return Err(CompareError::Empty);
    }
    for result in results {
        result.require_complete()?;
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

    let groups = groups
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
    Ok(Comparison {
        baseline: options.baseline.clone(),
        groups,
    })
}

fn row(
    t: &TargetCells<'_>,
    baseline: Option<&TargetCells<'_>>,
    price: Option<f64>,
) -> ComparisonRow {
    let ops = t
        .summary(ops_per_sec)
        .expect("complete results always have a measured phase");
    let p99_us = t.summary(p99);
    let cpu = t.summary(cpu_per_op);
    let nodes = t.cells.iter().map(|c| c.nodes.len()).max().unwrap_or(0);
    let cost_per_million_ops = match price {
        Some(price) if nodes > 0 && ops.mean > 0.0 => {
            Some(price * nodes as f64 / (ops.mean * 3600.0) * 1e6)
        }
        _ => None,
    };
    let is_baseline = baseline.is_some_and(|b| b.target == t.target);
    let delta = |mine: Option<Summary>, f: fn(&CellResult) -> Option<f64>| {
        let base = baseline.filter(|_| !is_baseline)?.summary(f)?;
        Delta::between(&base, &mine?).ok()
    };
    let throughput_delta = delta(Some(ops), ops_per_sec);
    let verdict = match baseline {
        _ if is_baseline => Verdict::Baseline,
        None => Verdict::NoBaseline,
        Some(b) if t.client_saturated() || b.client_saturated() => Verdict::ClientSaturated,
        Some(b) if t.fingerprints() != b.fingerprints() => Verdict::TrafficDiffers,
        Some(_) => match throughput_delta.map(|d| d.direction()) {
            Some(Direction::Higher) => Verdict::Faster,
            Some(Direction::Lower) => Verdict::Slower,
            Some(Direction::NoSignificantDifference) => Verdict::NoSignificantDifference,
            Some(Direction::Unknown) | None => Verdict::TooFewRepetitions,
        },
    };
    ComparisonRow {
        target: t.target.clone(),
        repetitions: t.cells.len(),
        ops_per_sec: ops,
        p99_delta: delta(p99_us, p99),
        cpu_delta: delta(cpu, cpu_per_op),
        p99_us,
        cpu_us_per_op: cpu,
        throughput_delta,
        cost_per_million_ops,
        verdict,
    }
}

const HEADERS: [&str; 12] = [
    "TARGET",
    "REPS",
    "OPS/S",
    "±95% CI",
    "Δ OPS/S",
    "Δ OPS/S 95% CI",
    "P99 µs",
    "Δ P99",
    "CPU µs/OP",
    "Δ CPU/OP",
    "COST/M OPS",
    "VERDICT",
];
const RIGHT: [bool; 12] = [
    false, true, true, true, true, false, true, true, true, true, true, false,
];

fn percent(d: Option<Delta>) -> String {
    d.map_or("-".into(), |d| format!("{:+.1}%", d.percent))
}

/// The comparison as text: one titled table per group, a blank line between groups.
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
                    format!("{:.1}", r.ops_per_sec.mean),
                    r.ops_per_sec
                        .ci95_half_width
                        .map_or("-".into(), |h| format!("{h:.1}")),
                    percent(r.throughput_delta),
                    r.throughput_delta
                        .and_then(|d| d.ci95_percent)
                        .map_or("-".into(), |(lo, hi)| format!("[{lo:+.1}%, {hi:+.1}%]")),
                    r.p99_us.map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    percent(r.p99_delta),
                    r.cpu_us_per_op
                        .map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    percent(r.cpu_delta),
                    r.cost_per_million_ops
                        .map_or("-".into(), |c| format!("{c:.4}")),
                    r.verdict.text().to_string(),
                ]
            })
            .collect();
        out.push_str(&fixed_width(&HEADERS, &RIGHT, &rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::ClientCpuUsage;
    use crate::result::CellStatus;
    use crate::result::testing::{cell, result_from};

    /// A 1-second cell of `n` finds of `latency_us` each, `cpu_per_op` µs of server CPU per
    /// operation (none if `None`), on platform n2, size 1M.
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

    #[test]
    fn deltas_and_intervals_across_three_repetitions() {
        let c = compare(&study(), &options()).unwrap();
        assert_eq!(c.groups.len(), 1);
        let rows = &c.groups[0].rows;
        assert_eq!(rows[0].target, "psmdb-8.0");
        assert_eq!(rows[0].verdict, Verdict::Baseline);
        assert_eq!(rows[0].throughput_delta, None);
        let m = &rows[1];
        assert_eq!((m.target.as_str(), m.repetitions), ("mongo-9.0", 3));
        // Independent Python (statistics module, Welch df = 4, t = 2.776445):
        // ops +10 % [5.4660843007322395, 14.53391569926776];
        // p99 −10 % [−21.3347892481694, 1.3347892481694021];
        // CPU −10 % [−19.06783139853552, −0.932168601464479].
        let d = m.throughput_delta.unwrap();
        assert!(close(d.percent, 10.0));
        let (lo, hi) = d.ci95_percent.unwrap();
        assert!(close(lo, 5.4660843007322395) && close(hi, 14.53391569926776));
        assert!(close(d.welch_df.unwrap(), 4.0));
        let (lo, hi) = m.p99_delta.unwrap().ci95_percent.unwrap();
        assert!(close(lo, -21.3347892481694) && close(hi, 1.3347892481694021));
        let (lo, hi) = m.cpu_delta.unwrap().ci95_percent.unwrap();
        assert!(close(lo, -19.06783139853552) && close(hi, -0.932168601464479));
        assert!(close(m.cpu_us_per_op.unwrap().mean, 45.0));
        // 0.5 $/node-hour × 3 nodes / (1100 ops/s × 3600 s) × 10⁶ = 0.3787878…
        assert!(close(m.cost_per_million_ops.unwrap(), 0.3787878787878788));
        assert!(close(
            rows[0].cost_per_million_ops.unwrap(),
            0.4166666666666667
        ));
        assert_eq!(m.verdict, Verdict::Faster);
    }

    #[test]
    fn comparison_text_is_exact() {
        let c = compare(&study(), &options()).unwrap();
        // ±95 % CI of the means: 4.302653 · 20 / √3 = 49.68… for both targets.
        let expected = "\
flights/v1, platform n2, size 1M: baseline psmdb-8.0
TARGET     REPS   OPS/S  ±95% CI  Δ OPS/S  Δ OPS/S 95% CI   P99 µs   Δ P99  CPU µs/OP  Δ CPU/OP  COST/M OPS  VERDICT
psmdb-8.0     3  1000.0     49.7        -  -                 200.0       -       50.0         -      0.4167  baseline
mongo-9.0     3  1100.0     49.7   +10.0%  [+5.5%, +14.5%]   180.0  -10.0%       45.0    -10.0%      0.3788  faster
";
        assert_eq!(render_comparison(&c), expected);
    }

    #[test]
    fn verdicts_for_slower_equal_single_saturated_and_different_traffic() {
        let mut results = study();
        // slower: 900 ± 10; equal: 1000 ± 10 (CI crosses 0); single: one repetition.
        for (rep, n) in [(1, 890), (2, 900), (3, 910)] {
            results.push(res("slow", rep, n, 200, Some(50)));
        }
        for (rep, n) in [(1, 990), (2, 1000), (3, 1010)] {
            results.push(res("same", rep, n, 200, Some(50)));
        }
        results.push(res("single", 1, 1500, 200, Some(50)));
        let mut saturated = res("saturated", 1, 2000, 200, Some(50));
        saturated.client_cpu = Some(ClientCpuUsage {
            user_us: 990_000,
            system_us: 0,
            wall_us: 1_000_000,
            cores: 1,
            utilization: 0.99,
            client_saturated: true,
        });
        results.push(saturated);
        let mut other = res("other-traffic", 1, 1500, 200, Some(50));
        other.fingerprint = "fp-9999".into();
        results.push(other);
        let c = compare(&results, &options()).unwrap();
        let verdict = |t: &str| {
            c.groups[0]
                .rows
                .iter()
                .find(|r| r.target == t)
                .unwrap()
                .verdict
        };
        assert_eq!(verdict("slow"), Verdict::Slower);
        assert_eq!(verdict("same"), Verdict::NoSignificantDifference);
        assert_eq!(verdict("single"), Verdict::TooFewRepetitions);
        assert_eq!(verdict("saturated"), Verdict::ClientSaturated);
        assert_eq!(verdict("other-traffic"), Verdict::TrafficDiffers);
        assert_eq!(
            Verdict::NoSignificantDifference.text(),
            "no significant difference"
        );
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
    }

    #[test]
    fn incomplete_results_and_missing_baselines_are_refused() {
        let mut results = study();
        results[3].status = CellStatus::Incomplete {
            reason: "target mongo-9.0: server killed in phase measured".into(),
        };
        let e = compare(&results, &options()).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "cannot compare: result of cell study/r1 flights/v1 target=mongo-9.0 platform=n2 \
                 size=1M repetition=2 is incomplete"
            ),
            "{e}"
        );
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
