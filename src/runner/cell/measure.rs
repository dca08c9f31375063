//! This process's share of a cell's measured phase, and the gates a measured result must pass
//! (docs/results.md, "Validity").

use std::sync::Arc;
use std::time::Duration;

use crate::measure::ClientCpuMeter;
use crate::plan::WorkloadPlan;
use crate::result::{CellResult, LoopMode, MeasuredPhase};
use crate::runner::crew::{Issued, skew_ms};
use crate::runner::send::{Changes, PhaseOutcome, Source};
use crate::runner::server::ConnectedTarget;

use super::inputs::{CellInputs, CellProgress, changes_of};
use super::partial::Partial;

/// Share of failed operations above which a cell is invalid: a server that fails this often
/// is not measured doing the workload.
pub const ERROR_BUDGET: f64 = 0.01;

/// This process's measured phase and its share of the figures.
pub(crate) struct Measured {
    pub partial: Partial,
    pub changes: Arc<Changes>,
    pub wall: Duration,
}

/// Runs this process's workers of the measured phase (from the common start time of `issued`,
/// or of a simultaneous slot's cells, `common`) and returns its share of the figures.
pub(crate) async fn measure(
    inputs: &CellInputs<'_>,
    target: &ConnectedTarget,
    issued: Option<&Issued>,
    common: Option<std::time::Instant>,
    progress: &CellProgress,
) -> Result<Measured, String> {
    // Waiting for the common start is not part of the CPU measured.
    if let Some(start) = issued.and_then(|i| i.start).or(common) {
        tokio::time::sleep_until(start.into()).await;
    }
    let skew = issued.map_or(0.0, |i| skew_ms(i.start_at_ms));
    let cpu = ClientCpuMeter::start().map_err(|e| e.to_string())?;
    let PhaseOutcome {
        recorder,
        sources: used,
        wall,
        targeting,
        fatal,
        path,
    } = inputs
        .phase(
            "measured phase",
            target,
            inputs.settings.measured,
            None,
            progress,
        )
        .await
        .map_err(|f| f.detail)?;
    let cpu = cpu.finish().map_err(|e| e.to_string())?;
    let loop_mode = if inputs.settings.target_ops_per_sec.is_some() {
        LoopMode::Open
    } else {
        LoopMode::Closed
    };
    let changes = changes_of(&used);
    Ok(Measured {
        partial: Partial {
            index: inputs.slice.index,
            first_worker: inputs.slice.workers(inputs.settings.workers.max(1)).start,
            start_skew_ms: skew,
            measured: MeasuredPhase::from_recorder(
                &recorder,
                wall,
                loop_mode,
                inputs.settings.target_ops_per_sec,
            ),
            cpu,
            shares: used.into_iter().map(Source::share).collect(),
            targeting,
            fatal,
            path,
        },
        changes,
        wall,
    })
}

/// The gates a measured result must pass besides replication (docs/results.md, "Validity").
pub(super) fn validity_gates(result: &CellResult, plan: &WorkloadPlan) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = &result.measured {
        let overall = &m.overall;
        if overall.error_rate > ERROR_BUDGET {
            out.push(format!(
                "errors: {:.2}% of {} operations failed (budget {:.0}%)",
                overall.error_rate * 100.0,
                overall.completed,
                ERROR_BUDGET * 100.0
            ));
        }
        if matches!(plan, WorkloadPlan::Flights(_)) && overall.errors.duplicate_key > 0 {
            out.push(format!(
                "duplicate key: {} inserts collided, which flights never generates (specs/flights.md §6)",
                overall.errors.duplicate_key
            ));
        }
    }
    if let Some(cpu) = &result.client_cpu
        && cpu.client_saturated
    {
        out.push(format!(
            "client saturated: it used {:.0}% of its {} cores, so the client was measured",
            cpu.utilization * 100.0,
            cpu.cores
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::{ClientCpuUsage, ErrorKind};
    use crate::result::testing::{cell, result_from};
    use crate::workload::ycsb;

    fn flights() -> WorkloadPlan {
        WorkloadPlan::Flights(Box::default())
    }

    /// `n` finds of which `failed` failed with `kind`.
    fn with_failures(n: usize, failed: usize, kind: ErrorKind) -> CellResult {
        let ops: Vec<_> = (0..n)
            .map(|i| ("find", 100, if i < failed { Err(kind) } else { Ok(()) }))
            .collect();
        result_from(cell("t", "p", "1k", 1), Duration::from_secs(1), &ops, None)
    }

    #[test]
    fn errors_over_the_budget_duplicate_keys_and_a_saturated_client_invalidate() {
        // 1 failure in 100 is within the 1 % budget; 2 are not.
        assert!(validity_gates(&with_failures(100, 1, ErrorKind::Timeout), &flights()).is_empty());
        assert_eq!(
            validity_gates(&with_failures(100, 2, ErrorKind::Timeout), &flights()),
            ["errors: 2.00% of 100 operations failed (budget 1%)"]
        );
        // A single duplicate key is a flights generator violation; YCSB only counts it.
        let dup = with_failures(1000, 1, ErrorKind::DuplicateKey);
        assert_eq!(
            validity_gates(&dup, &flights()),
            [
                "duplicate key: 1 inserts collided, which flights never generates (specs/flights.md §6)"
            ]
        );
        let ycsb = WorkloadPlan::Ycsb {
            raw: ycsb::RawProperties::preset("workloada").unwrap(),
            seed: 1,
        };
        assert!(validity_gates(&dup, &ycsb).is_empty());
        let mut saturated = with_failures(10, 0, ErrorKind::Other);
        saturated.client_cpu = Some(ClientCpuUsage {
            user_us: 1_900_000,
            system_us: 0,
            wall_us: 1_000_000,
            cores: 2,
            utilization: 0.95,
            client_saturated: true,
        });
        assert_eq!(
            validity_gates(&saturated, &flights()),
            ["client saturated: it used 95% of its 2 cores, so the client was measured"]
        );
    }
}
