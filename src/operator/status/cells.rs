//! One [`CellStatus`] per cell: what is known of it ([`CellOutcome`]) folded into its phase,
//! headline figures and the ConfigMap of its result.

use crate::api::{
    CellPhase, CellShards, CellStatus, CellSweep, OperationLatency, Regime, ResultRef, SweepPoint,
};
use crate::contract::RunnerStep;
use crate::operator::render::names::RESULT_KEY;
use crate::plan::PlannedCell;
use crate::result::CellResult;

/// What is known of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellOutcome<'a> {
    /// Not started.
    Pending,
    /// Its runner is working on it: seeding its size, or in a phase of the cell (`restoring`,
    /// `measuring`, ...) when the runner said so.
    Running {
        /// What the runner is doing, e.g. `seeding to 1k`, `measuring`.
        activity: Option<&'a RunnerStep>,
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
pub(super) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The status entry of `cell`.
pub fn cell_status(cell: &PlannedCell, outcome: CellOutcome<'_>) -> CellStatus {
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
            status.activity = activity.map(ToString::to_string);
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
            status.fingerprint = Some(result.fingerprint.chars().take(16).collect());
            status.sweep = result.sweep.as_ref().map(|s| CellSweep {
                goal: s.goal.clone(),
                knee_ops_per_second: s.knee_step().map(|k| round3(k.ops_per_sec)),
                bounded: s.bounded,
                steps: s
                    .steps
                    .iter()
                    .map(|p| SweepPoint {
                        target_ops_per_second: p.target_ops_per_sec,
                        workers: p.workers,
                        ops_per_second: round3(p.ops_per_sec),
                        p50_micros: p.p50_us,
                        p99_micros: p.p99_us,
                        p999_micros: p.p999_us,
                        saturated: p.saturated.is_some(),
                    })
                    .collect(),
            });
            status.shards = result.sharding.as_ref().map(|s| CellShards {
                documents: s.after.iter().map(|x| x.documents).collect(),
                chunks: s.after.iter().map(|x| x.chunks).collect(),
                skew_percent: round3(s.skew_percent),
                chunks_moved: s.chunks_moved,
                flags: s.flags.clone(),
            });
        }
    }
    status
}

/// Each target's median knee over its valid sweep cells, in the order targets first appear:
/// `postgres 148, wiredtiger 1950 ops/s at p99 ≤ 10ms`; per platform and size (`1k on x86:
/// …`) when the cells span several. `None` without a sweep cell.
pub fn knees(cells: &[CellStatus]) -> Option<String> {
    let swept: Vec<(&CellStatus, f64)> = cells
        .iter()
        .filter(|c| c.phase == CellPhase::Completed)
        .filter_map(|c| Some((c, c.sweep.as_ref()?.knee_ops_per_second?)))
        .collect();
    let goal = swept
        .first()?
        .0
        .sweep
        .as_ref()
        .and_then(|s| s.goal.clone())
        .map_or(String::new(), |g| format!(" at {g}"));
    let mut places: Vec<(&str, &str)> = Vec::new();
    for (c, _) in &swept {
        if !places.contains(&(c.platform.as_str(), c.size.as_str())) {
            places.push((&c.platform, &c.size));
        }
    }
    let mut parts = Vec::new();
    for &(platform, size) in &places {
        let here: Vec<&(&CellStatus, f64)> = swept
            .iter()
            .filter(|(c, _)| c.platform == platform && c.size == size)
            .collect();
        let mut targets: Vec<&str> = Vec::new();
        for (c, _) in &here {
            if !targets.contains(&c.target.as_str()) {
                targets.push(&c.target);
            }
        }
        let each: Vec<String> = targets
            .iter()
            .map(|t| {
                let mut k: Vec<f64> = here
                    .iter()
                    .filter(|(c, _)| c.target == *t)
                    .map(|(_, k)| *k)
                    .collect();
                k.sort_by(f64::total_cmp);
                let n = k.len();
                let median = if n % 2 == 1 {
                    k[n / 2]
                } else {
                    (k[n / 2 - 1] + k[n / 2]) / 2.0
                };
                format!("{t} {median:.0}")
            })
            .collect();
        let line = format!("{} ops/s", each.join(", "));
        parts.push(if places.len() > 1 {
            format!("{size} on {platform}: {line}")
        } else {
            line
        });
    }
    Some(format!("{}{goal}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swept(target: &str, size: &str, phase: CellPhase, knee: Option<f64>) -> CellStatus {
        CellStatus {
            target: target.into(),
            platform: "x86".into(),
            size: size.into(),
            phase,
            sweep: Some(CellSweep {
                goal: Some("p99 ≤ 10ms".into()),
                knee_ops_per_second: knee,
                ..CellSweep::default()
            }),
            ..CellStatus::default()
        }
    }

    #[test]
    fn knees_are_each_targets_median_over_its_valid_sweeps() {
        let mut cells = vec![
            swept("a", "1k", CellPhase::Completed, Some(100.0)),
            swept("b", "1k", CellPhase::Completed, Some(210.0)),
            swept("a", "1k", CellPhase::Completed, Some(140.0)),
            swept("b", "1k", CellPhase::Invalid, Some(999.0)),
            swept("a", "1k", CellPhase::Completed, Some(120.4)),
            swept("b", "1k", CellPhase::Completed, Some(190.0)),
            swept("b", "1k", CellPhase::Completed, None),
        ];
        assert_eq!(
            knees(&cells).as_deref(),
            Some("a 120, b 200 ops/s at p99 ≤ 10ms")
        );
        cells.push(swept("a", "1M", CellPhase::Completed, Some(50.0)));
        assert_eq!(
            knees(&cells).as_deref(),
            Some("1k on x86: a 120, b 200 ops/s; 1M on x86: a 50 ops/s at p99 ≤ 10ms")
        );
        let plain = CellStatus {
            phase: CellPhase::Completed,
            ops_per_second: Some(5.0),
            ..CellStatus::default()
        };
        assert_eq!(knees(&[plain]), None);
    }
}
