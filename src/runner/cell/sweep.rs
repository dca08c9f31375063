//! A cell of a load sweep (`workload.sweep`): after the one warm-up, a measured phase per step,
//! each settled before and restored after like every measured phase, judged against the goal,
//! until the plan says the sweep is over. The cell then carries the knee step's figures and the
//! whole curve (docs/results.md, "Load sweeps").

use crate::plan::RunSettings;
use crate::plan::sweep::{Ran, SweepPlan, judge, knee};
use crate::result::{CellResult, SweepRecord, SweepStep};
use crate::runner::dataset::Seeded;
use crate::runner::server::Members;

use super::failure::CellFailure;
use super::inputs::CellInputs;
use super::measure::ERROR_BUDGET;
use super::phase::CellRun;

/// Runs the steps of `sweep` into `result`, which holds what the cell measured before them.
pub(super) async fn run(
    cell: &CellRun<'_>,
    sweep: &SweepPlan,
    members: &Members,
    result: &mut CellResult,
    seeded: &mut Seeded,
) -> Result<(), CellFailure> {
    let base = result.clone();
    let mut ran = Vec::new();
    let mut steps = Vec::new();
    let mut kept: Vec<CellResult> = Vec::new();
    while let Some(level) = sweep.next_level(&ran) {
        let settings: RunSettings = cell.settings.at_step(level);
        let inputs = CellInputs::new(cell.plan, &settings, seeded.documents, cell.slice());
        let mut step = base.clone();
        let outcome = cell
            .measured_phase(&inputs, Some(level), members, &mut step, seeded)
            .await;
        if let Err(e) = outcome {
            // The steps before it keep their judgment; the cell is incomplete all the same.
            kept.push(step);
            *result = assemble(&base, sweep, kept, steps, knee(&ran));
            return Err(e);
        }
        let measured = step.measured.as_ref().ok_or(CellFailure::at(
            "measured phase",
            "a step measured nothing".to_owned(),
        ))?;
        let load = (
            settings.workers,
            settings.target_ops_per_sec.map(|r| r as u64),
        );
        let judged = judge(load, measured, sweep.goal.as_ref(), ERROR_BUDGET);
        tracing::info!(
            load = judged.load(),
            achieved = judged.ops_per_sec,
            saturated = judged.saturated.as_deref().unwrap_or("no"),
            "sweep step"
        );
        ran.push(Ran {
            level,
            saturated: judged.saturated.is_some(),
        });
        steps.push(judged);
        kept.push(step);
    }
    if kept.is_empty() {
        return Err(CellFailure::at(
            "sweep",
            "the sweep has no step to run".to_owned(),
        ));
    }
    *result = assemble(&base, sweep, kept, steps, knee(&ran));
    Ok(())
}

/// The cell's result: the knee step's figures (the first step's when there is no knee), every
/// step's restores and reasons, and the curve.
fn assemble(
    base: &CellResult,
    sweep: &SweepPlan,
    mut kept: Vec<CellResult>,
    steps: Vec<SweepStep>,
    knee: Option<(usize, bool)>,
) -> CellResult {
    let chosen = knee.map_or(0, |(i, _)| i).min(kept.len() - 1);
    let mut invalid = base.invalid_reasons.clone();
    let mut restores = base.dataset.restores.clone();
    for (i, step) in kept.iter().enumerate() {
        let load = steps.get(i).map_or("its load".to_owned(), SweepStep::load);
        let label = format!("step {} at {load}", i + 1);
        restores.extend(
            step.dataset.restores[base.dataset.restores.len()..]
                .iter()
                .cloned(),
        );
        let own = &step.invalid_reasons[base.invalid_reasons.len()..];
        invalid.extend(own.iter().map(|r| format!("{label}: {r}")));
        // The knee step's own client is judged by the validity gates, as every cell's is.
        if i != chosen
            && let Some(cpu) = step.client_cpu.as_ref().filter(|c| c.client_saturated)
        {
            invalid.push(format!(
                "{label}: client saturated: it used {:.0}% of its {} cores, so the client was measured",
                cpu.utilization * 100.0,
                cpu.cores
            ));
        }
    }
    if knee.is_none()
        && let Some(first) = steps.first()
    {
        invalid.push(format!(
            "sweep: no step sustained its load; the first, at {}: {}",
            first.load(),
            first.saturated.as_deref().unwrap_or("did not finish")
        ));
    }
    let mut result = kept.swap_remove(chosen);
    result.invalid_reasons = invalid;
    result.dataset.restores = restores;
    result.sweep = Some(SweepRecord {
        goal: sweep.goal.as_ref().map(|g| g.describe()),
        bound_us: sweep.goal.as_ref().map(|g| g.bound_us),
        steps,
        knee: knee.map(|(i, _)| i),
        bounded: knee.is_some_and(|(_, bounded)| bounded),
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::sweep::Sweep;
    use crate::result::RestoreRecord;
    use crate::result::testing::sample_result;

    fn plan() -> SweepPlan {
        let sweep: Sweep = serde_yaml::from_str("{rates: [100, 200, 400]}").unwrap();
        SweepPlan::of(&sweep).unwrap()
    }

    /// A step's result: the base's figures at `ops` ops/s, one restore after it, `reasons`.
    fn step(base: &CellResult, ops: f64, reasons: &[&str]) -> CellResult {
        let mut r = sample_result("a", 1, ops);
        r.dataset.restores = base.dataset.restores.clone();
        r.dataset.restores.push(RestoreRecord {
            after: "measured".into(),
            seconds: 0.1,
            removed: 0,
            rewritten: 0,
            reseeded: None,
        });
        r.invalid_reasons = base.invalid_reasons.clone();
        r.invalid_reasons
            .extend(reasons.iter().map(|s| s.to_string()));
        r
    }

    fn judged(rate: u64, ops: f64, saturated: bool) -> SweepStep {
        SweepStep {
            target_ops_per_sec: Some(rate),
            workers: 16,
            ops_per_sec: ops,
            error_rate: 0.0,
            p50_us: None,
            p99_us: None,
            p999_us: None,
            goal_us: None,
            saturated: saturated.then(|| "achieved 300 of 400 ops/s (below 90%)".to_owned()),
        }
    }

    #[test]
    fn the_cell_is_its_knee_step_with_every_steps_restores_and_named_reasons() {
        let mut base = sample_result("a", 1, 1.0);
        base.invalid_reasons = vec!["from before".into()];
        let kept = vec![
            step(&base, 100.0, &[]),
            step(&base, 200.0, &["election: term 3 → 4"]),
            step(&base, 300.0, &[]),
        ];
        let steps = vec![
            judged(100, 100.0, false),
            judged(200, 200.0, false),
            judged(400, 300.0, true),
        ];
        let r = assemble(&base, &plan(), kept, steps, Some((1, true)));
        assert_eq!(r.measured.as_ref().unwrap().overall.ops_per_sec, 200.0);
        assert_eq!(r.dataset.restores.len(), 3);
        assert_eq!(
            r.invalid_reasons,
            ["from before", "step 2 at 200 ops/s: election: term 3 → 4"]
        );
        let s = r.sweep.unwrap();
        assert_eq!((s.knee, s.bounded, s.steps.len()), (Some(1), true, 3));
    }

    #[test]
    fn a_cell_cut_short_keeps_the_knee_of_its_steps_and_no_knee_is_a_reason() {
        let base = sample_result("a", 1, 1.0);
        // Two steps judged, the third failed before it was: the knee stands, unbounded.
        let kept = vec![
            step(&base, 100.0, &[]),
            step(&base, 200.0, &[]),
            step(&base, 5.0, &[]),
        ];
        let steps = vec![judged(100, 100.0, false), judged(200, 200.0, false)];
        let ran = [
            Ran {
                level: 100,
                saturated: false,
            },
            Ran {
                level: 200,
                saturated: false,
            },
        ];
        let r = assemble(&base, &plan(), kept, steps, knee(&ran));
        assert!(r.invalid_reasons.is_empty(), "{:?}", r.invalid_reasons);
        assert_eq!(r.sweep.unwrap().knee, Some(1));
        // Saturated from the first step: the first step's figures, and the reason.
        let r = assemble(
            &base,
            &plan(),
            vec![step(&base, 300.0, &[])],
            vec![judged(400, 300.0, true)],
            None,
        );
        assert_eq!(
            r.invalid_reasons,
            [
                "sweep: no step sustained its load; the first, at 400 ops/s: achieved 300 of 400 ops/s (below 90%)"
            ]
        );
    }
}
