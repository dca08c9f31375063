//! Folding results into `status`: one [`CellStatus`] per cell with its headline figures,
//! comparisons of every target against the baseline, the headline line, and conditions whose
//! `lastTransitionTime` moves only when their status does. Pure functions: the same inputs
//! always give the same status, so a pass that observed nothing new writes nothing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use crate::api::{
    CellPhase, CellStatus, Comparison, MongoBenchmarkSpec, OperationLatency, Regime, ResultRef,
    Verdict,
};
use crate::plan::Cell;
use crate::result::CellResult;
use crate::verdict;

use crate::operator::build::names::RESULT_KEY;

/// What is known of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellOutcome<'a> {
    /// Not started.
    Pending,
    /// Its runner is working on it: seeding its size, or in a phase of the cell (`restoring`,
    /// `measuring`, ...) when the runner said so.
    Running {
        /// What the runner is doing, e.g. `seeding to 1k`, `measuring`.
        activity: Option<&'a str>,
    },
    /// A complete result (valid or not).
    Completed {
        /// The result.
        result: &'a CellResult,
        /// The ConfigMap holding it.
        config_map: &'a str,
    },
    /// Failed: an incomplete or unreadable result, or a runner that failed before it.
    Failed {
        /// Why.
        message: &'a str,
        /// The ConfigMap holding the incomplete result, if there is one.
        config_map: Option<&'a str>,
    },
}

impl CellOutcome<'_> {
    /// True once the cell will not change any more.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            CellOutcome::Completed { .. } | CellOutcome::Failed { .. }
        )
    }
}

fn result_ref(config_map: &str) -> ResultRef {
    ResultRef {
        config_map: config_map.to_owned(),
        key: Some(RESULT_KEY.to_owned()),
    }
}

/// Rounds to 3 decimals: status shows headline figures, the result keeps full precision.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The status entry of `cell`.
pub fn cell_status(cell: &Cell, outcome: CellOutcome<'_>) -> CellStatus {
    let mut status = CellStatus {
        id: cell.id.clone(),
        target: cell.target.clone(),
        platform: cell.platform.clone(),
        size: cell.size.clone(),
        repetition: cell.repetition,
        ..CellStatus::default()
    };
    match outcome {
        CellOutcome::Pending => status.phase = CellPhase::Pending,
        CellOutcome::Running { activity } => {
            status.phase = CellPhase::Running;
            status.activity = activity.map(str::to_owned);
        }
        CellOutcome::Failed {
            message,
            config_map,
        } => {
            status.phase = CellPhase::Failed;
            status.message = Some(message.to_owned());
            status.result_ref = config_map.map(result_ref);
        }
        CellOutcome::Completed { result, config_map } => {
            status.phase = if result.is_valid() {
                CellPhase::Completed
            } else {
                status.message = Some(format!("invalid: {}", result.invalid_reasons.join("; ")));
                CellPhase::Invalid
            };
            status.result_ref = Some(result_ref(config_map));
            if let Some(m) = &result.measured {
                status.ops_per_second = Some(round3(m.overall.ops_per_sec));
                status.latencies = m
                    .operations
                    .iter()
                    .filter_map(|(op, r)| {
                        let l = r.latency_us?;
                        Some(OperationLatency {
                            operation: op.clone(),
                            p50_micros: l.p50,
                            p95_micros: l.p95,
                            p99_micros: l.p99,
                        })
                    })
                    .collect();
            }
            let stats = result.server_stats.as_ref();
            status.server_cpu_micros_per_op = stats.and_then(|s| s.cpu_us_per_op).map(round3);
            let client_bound = result.client_cpu.is_some_and(|c| c.client_saturated);
            status.regime = if client_bound {
                Some(Regime::ClientBound)
            } else {
                stats.and_then(|s| s.regime).map(|r| match r {
                    crate::measure::server::Regime::CacheResident => Regime::CacheResident,
                    crate::measure::server::Regime::CpuBound => Regime::CpuBound,
                    crate::measure::server::Regime::IoBound => Regime::IoBound,
                })
            };
            status.fingerprint = Some(short_fingerprint(&result.fingerprint));
        }
    }
    status
}

/// A fingerprint's version prefix (flights' `v2:`), if any, and its first 16 hex characters.
fn short_fingerprint(fingerprint: &str) -> String {
    let hex_start = fingerprint.find(':').map_or(0, |i| i + 1);
    fingerprint.chars().take(hex_start + 16).collect()
}

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
            let verdict = match row.verdict {
                verdict::Verdict::Baseline | verdict::Verdict::NoBaseline => continue,
                verdict::Verdict::Faster => Verdict::Faster,
                verdict::Verdict::Slower => Verdict::Slower,
                verdict::Verdict::NoSignificantDifference => Verdict::NoSignificantDifference,
                verdict::Verdict::Inconclusive => Verdict::Inconclusive,
                verdict::Verdict::NotComparable => Verdict::NotComparable,
            };
            let delta = row.throughput_delta;
            let interval = delta.and_then(|d| d.ci95_percent);
            out.push(Comparison {
                platform: group.platform.clone(),
                size: group.size.clone(),
                target: row.target.clone(),
                baseline: comparison.baseline.clone(),
                repetitions: row.repetitions as u32,
                baseline_repetitions,
                throughput_delta_percent: delta.map(|d| round3(d.percent)),
                throughput_ci95_low_percent: interval.map(|(low, _)| round3(low)),
                throughput_ci95_high_percent: interval.map(|(_, high)| round3(high)),
                adjusted_p_value: row.adjusted_p_value.map(|p| (p * 1e6).round() / 1e6),
                minimum_detectable_effect_percent: delta.and_then(|d| d.mde_percent).map(round3),
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
            });
        }
    }
    out
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
        let key = |c: &Comparison| c.minimum_detectable_effect_percent.unwrap_or(f64::INFINITY);
        key(a).total_cmp(&key(b))
    });
    match worst {
        None => (false, "PrecisionNotReached", "no comparison yet".to_owned()),
        Some(c) => match c.minimum_detectable_effect_percent {
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

/// `now` at the second: the API server stores times at that precision, and a stored time
/// must compare equal to the one computed, or every pass would rewrite status.
pub fn now_seconds(now: Timestamp) -> Time {
    Time(Timestamp::from_second(now.as_second()).expect("a valid time"))
}

/// A condition with `lastTransitionTime` kept from `old` when the status is unchanged.
pub fn condition(
    old: &[Condition],
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: Timestamp,
) -> Condition {
    let status = if status { "True" } else { "False" };
    let last_transition_time = old
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now_seconds(now));
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        last_transition_time,
        observed_generation: generation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DatasetSize;
    use crate::operator::testing::result;

    fn cell(target: &str, size: &str, rep: u32) -> Cell {
        Cell {
            id: crate::plan::cell_id(target, "x86", size, rep),
            target: target.into(),
            platform: "x86".into(),
            size: size.into(),
            dataset: DatasetSize::Documents(1000),
            repetition: rep,
        }
    }

    #[test]
    fn completed_cells_carry_headline_figures_and_their_result() {
        // 900 finds of 100 µs and 100 inserts of 300 µs over 10 s: 100 ops/s.
        let r = result(
            "b",
            "a",
            "x86",
            "1k",
            1,
            10,
            &[("find", 900, 100), ("insert", 100, 300)],
            Some(20),
        );
        let s = cell_status(
            &cell("a", "1k", 1),
            CellOutcome::Completed {
                result: &r,
                config_map: "b-a.x86.1k.r1",
            },
        );
        assert_eq!(s.phase, CellPhase::Completed);
        assert_eq!(s.ops_per_second, Some(100.0));
        assert_eq!(
            s.latencies,
            [
                OperationLatency {
                    operation: "find".into(),
                    p50_micros: 100,
                    p95_micros: 100,
                    p99_micros: 100
                },
                OperationLatency {
                    operation: "insert".into(),
                    p50_micros: 300,
                    p95_micros: 300,
                    p99_micros: 300
                },
            ]
        );
        // 20 µs of CPU per operation on the one member that reports it.
        assert_eq!(s.server_cpu_micros_per_op, Some(20.0));
        // The first 16 of the fingerprint's 20 characters.
        assert_eq!(s.fingerprint.as_deref(), Some("0123456789abcdef"));
        // A versioned one keeps its version.
        assert_eq!(
            short_fingerprint("v2:0123456789abcdef0123456789abcdef"),
            "v2:0123456789abcdef"
        );
        assert_eq!(
            s.result_ref,
            Some(ResultRef {
                config_map: "b-a.x86.1k.r1".into(),
                key: Some("result.json".into())
            })
        );
        assert_eq!(s.id, "a.x86.1k.r1");
    }

    #[test]
    fn failed_and_pending_cells_have_no_figures() {
        let s = cell_status(
            &cell("a", "1k", 2),
            CellOutcome::Failed {
                message: "boom",
                config_map: None,
            },
        );
        assert_eq!(
            (s.phase, s.message.as_deref()),
            (CellPhase::Failed, Some("boom"))
        );
        assert_eq!(s.ops_per_second, None);
        let s = cell_status(
            &cell("a", "1k", 2),
            CellOutcome::Running {
                activity: Some("measuring"),
            },
        );
        assert_eq!(s.activity.as_deref(), Some("measuring"));
        assert_eq!((s.phase, s.message), (CellPhase::Running, None));
    }

    #[test]
    fn comparisons_and_headline_name_the_largest_significant_change() {
        let spec: MongoBenchmarkSpec = serde_yaml::from_str(
            "targets: [{name: base, external: {uriSecretRef: {name: s}}}, {name: new, external: {uriSecretRef: {name: s}}}]\n\
             platforms: [{name: x86, pricePerNodeHour: 0.36}]\ndataset: {sizes: [1k]}\nworkload: {type: flights}\n",
        )
        .unwrap();
        // Baseline 100, 110 and 105 ops/s; candidate 120, 130 and 125: +20/105 = +19.048 %,
        // Fieller's 95 % interval (mpmath, t₀.₉₇₅(4)) [+7.822 %, +31.668 %]: ±12.621 points
        // at its wider side.
        let mut results = Vec::new();
        for (rep, base, new) in [(1, 1000, 1200), (2, 1100, 1300), (3, 1050, 1250)] {
            for (target, finds) in [("base", base), ("new", new)] {
                results.push(result(
                    "b",
                    target,
                    "x86",
                    "1k",
                    rep,
                    10,
                    &[("find", finds, 100)],
                    Some(10),
                ));
            }
        }
        let refs: Vec<&CellResult> = results.iter().collect();
        let compared = compare(&spec, &refs);
        let c = comparisons(compared.as_ref());
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].target.as_str(), c[0].baseline.as_str()),
            ("new", "base")
        );
        assert_eq!((c[0].repetitions, c[0].baseline_repetitions), (3, 3));
        assert_eq!(c[0].throughput_delta_percent, Some(19.048));
        assert_eq!(c[0].throughput_ci95_low_percent, Some(7.822));
        assert_eq!(c[0].throughput_ci95_high_percent, Some(31.668));
        // 0.36 per node hour × 3 nodes ÷ (125 ops/s × 3600) × 1e6 = 2.4.
        assert_eq!(c[0].cost_per_million_ops, Some(2.4));
        assert_eq!(c[0].verdict, Some(Verdict::Faster));
        assert!(c[0].adjusted_p_value.unwrap() < 0.05);
        let line = headline(compared.as_ref(), &[]).unwrap();
        assert_eq!(
            line,
            "new +19.0% ±12.6% ops/s vs base at 1k, 3 reps, MDE 14.5%"
        );
    }

    #[test]
    fn an_invalid_result_shows_why_and_is_left_out() {
        let mut r = result("b", "a", "x86", "1k", 1, 10, &[("find", 100, 100)], None);
        r.invalid_reasons = vec!["client saturated: 0.97 of 1 core".into()];
        let s = cell_status(
            &cell("a", "1k", 1),
            CellOutcome::Completed {
                result: &r,
                config_map: "b-a.x86.1k.r1",
            },
        );
        assert_eq!(s.phase, CellPhase::Invalid);
        assert_eq!(
            s.message.as_deref(),
            Some("invalid: client saturated: 0.97 of 1 core")
        );
        assert!(s.result_ref.is_some());
    }

    #[test]
    fn single_target_headline_shows_ops_per_platform() {
        let mut cells = Vec::new();
        for (platform, ops) in [("x86", 100.0), ("x86", 120.0), ("arm", 90.0)] {
            cells.push(CellStatus {
                target: "m".into(),
                platform: platform.into(),
                size: "10M".into(),
                phase: CellPhase::Completed,
                ops_per_second: Some(ops),
                ..CellStatus::default()
            });
        }
        assert_eq!(
            headline(None, &cells).unwrap(),
            "m at 10M: x86 110 ops/s, arm 90 ops/s"
        );
        assert_eq!(headline(None, &[]), None);
    }

    #[test]
    fn transition_time_moves_only_when_status_changes() {
        let t0 = Timestamp::from_second(1_000).unwrap();
        let t1 = Timestamp::from_second(2_000).unwrap();
        let first = condition(&[], "Ready", false, "Running", "1/2".into(), Some(1), t0);
        assert_eq!(first.last_transition_time, Time(t0));
        let same = condition(
            std::slice::from_ref(&first),
            "Ready",
            false,
            "Running",
            "2/2".into(),
            Some(1),
            t1,
        );
        assert_eq!(same.last_transition_time, Time(t0));
        let flipped = condition(
            &[first],
            "Ready",
            true,
            "Completed",
            String::new(),
            Some(1),
            t1,
        );
        assert_eq!(flipped.last_transition_time, Time(t1));
        // Sub-second precision is dropped, as the API server does.
        let precise = Timestamp::new(3_000, 123_456_789).unwrap();
        assert_eq!(
            now_seconds(precise),
            Time(Timestamp::from_second(3_000).unwrap())
        );
    }
}
