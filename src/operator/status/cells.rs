//! One [`CellStatus`] per cell: what is known of it ([`CellOutcome`]) folded into its phase,
//! headline figures and the ConfigMap of its result.

use crate::api::{CellPhase, CellStatus, OperationLatency, Regime, ResultRef};
use crate::operator::build::names::RESULT_KEY;
use crate::plan::Cell;
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
pub(super) fn round3(x: f64) -> f64 {
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
            status.fingerprint = Some(result.fingerprint.chars().take(16).collect());
        }
    }
    status
}
