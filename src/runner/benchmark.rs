//! The whole run of a benchmark on one platform against connected targets, shared by
//! `mongobench run -f` and the operator's runner Job (`run --plan`): per dataset size in
//! ascending order, bring every target to S(size) (grown from S(previous size)), then run
//! the repetitions in slots (slot k holds repetition k of every target), one target after
//! another in a seeded random order (A B, B A, …) or all at the same time over one measured
//! window (`slot/`), so that what the machines do favours none of them and the comparison can
//! pair the cells of a slot (`slots.rs`); a void slot runs again; with a precision goal, slots
//! are added until it is reached or a limit is. Each cell warms up, restores, settles,
//! measures and restores again (`cell/`). The caller shows progress and keeps the results
//! through [`Events`].

use std::time::Instant;

use tracing::Instrument;

use crate::contract::Schedule;
use crate::plan;
use crate::result::CellResult;

use super::canaries::Probes;
use super::crew::Crew;
use super::sink::SinkError;
use super::slot::{Sides, Size, TargetState, in_turn, seed, together};
use super::slots::{PrecisionGoal, Standing};

pub use super::definition::{Benchmark, Connected, Events, PrecisionOutcome};

/// Runs every cell of `bench` not yet completed on `targets`; returns their results in the
/// order they ran.
///
/// # Errors
/// Only what [`Events::finished`] returns: a cell that fails is an incomplete result, never
/// an error.
pub async fn run(
    bench: &Benchmark,
    targets: &[Connected],
    events: &mut impl Events,
) -> Result<Vec<CellResult>, SinkError> {
    run_with(bench, targets, events, None).await
}

/// [`run`] as the coordinator of `crew`: the other client processes load their shares of
/// the data and run their workers beside this one's; told to finish at the end.
///
/// # Errors
/// As [`run`].
pub async fn run_with(
    bench: &Benchmark,
    targets: &[Connected],
    events: &mut impl Events,
    crew: Option<&Crew>,
) -> Result<Vec<CellResult>, SinkError> {
    let results = run_all(bench, targets, events, crew).await;
    if let Some(crew) = crew
        && let Err(e) = crew.finish().await
    {
        tracing::warn!("telling the other client processes to finish: {e}");
    }
    results
}

async fn run_all(
    bench: &Benchmark,
    targets: &[Connected],
    events: &mut impl Events,
    crew: Option<&Crew>,
) -> Result<Vec<CellResult>, SinkError> {
    let started = Instant::now();
    let baseline = if targets.iter().any(|t| t.target.name == bench.baseline) {
        bench.baseline.as_str()
    } else {
        targets.first().map_or("", |t| t.target.name.as_str())
    };
    let sides = match bench.schedule {
        Schedule::Simultaneous => Sides::start(&bench.sides),
        Schedule::InTurn => Sides::start(&[]),
    }
    .map_err(|e| SinkError::Runtime(e.to_string()))?;
    let mut results = Vec::new();
    // The run's noise canaries so far, each cell's against the earlier ones of its machine.
    let mut probes = Probes::default();
    // Per target: its collection's known state, carried from one size to the next.
    let mut states: Vec<TargetState> = targets.iter().map(|_| TargetState::Idle).collect();
    for (index, size) in bench.sizes.iter().enumerate() {
        let size = Size {
            bench,
            targets,
            size,
            index,
            documents: plan::documents(&bench.plan, size.1),
            crew,
        };
        bring_to_size(&size, &mut states, events).await;
        let span = tracing::info_span!("size", size = %size.size.0);
        let at_size = run_slots(
            &size,
            &mut states,
            &mut probes,
            &sides,
            baseline,
            started,
            events,
        )
        .instrument(span)
        .await?;
        results.extend(at_size);
        // A target that could not reach this size starts the next one afresh.
        for state in &mut states {
            if matches!(state, TargetState::Broken(_)) {
                *state = TargetState::Idle;
            }
        }
    }
    sides.stop();
    Ok(results)
}

/// Brings every target with a pending cell at `size` to it (grown from the size before).
async fn bring_to_size(size: &Size<'_>, states: &mut [TargetState], events: &mut impl Events) {
    let bench = size.bench;
    for (i, t) in size.targets.iter().enumerate() {
        let name = t.target.name.as_str();
        let pending = (1..=bench.repetitions)
            .any(|r| !bench.completed.contains(&bench.cell(name, size.size, r).id));
        if !pending {
            continue;
        }
        events.seeding(name, &size.size.0, size.documents);
        let current = match &states[i] {
            TargetState::Seeded(seeded) => Some(seeded.clone()),
            _ => None,
        };
        states[i] = match seed(bench, t, size.documents, current.as_ref(), size.helpers(i)).await {
            Ok(seeded) => {
                events.seeded(name, &size.size.0, &seeded);
                TargetState::Seeded(seeded)
            }
            Err(e) => {
                TargetState::Broken(format!("target {name}: seeding to {}: {e}", size.size.0))
            }
        };
    }
}

/// Runs the slots of `size` until the planned repetitions are done (each void slot run again,
/// as many times as there are repetitions at most) and, under a precision goal, until it is
/// reached or a limit is; returns their results in the order they ran.
async fn run_slots(
    size: &Size<'_>,
    states: &mut [TargetState],
    probes: &mut Probes,
    sides: &Sides,
    baseline: &str,
    started: Instant,
    events: &mut impl Events,
) -> Result<Vec<CellResult>, SinkError> {
    let bench = size.bench;
    let mut at_size: Vec<CellResult> = Vec::new();
    let mut voided = 0;
    let mut slot = 1;
    loop {
        if slot > bench.repetitions + voided {
            let Some(goal) = &bench.precision else { break };
            let elapsed = started.elapsed();
            if let Some(outcome) = precision_outcome(goal, &at_size, baseline, slot - 1, elapsed) {
                events.precision(&size.size.0, &outcome);
                break;
            }
        }
        let span = tracing::info_span!("slot", slot);
        let outcome = match bench.schedule {
            Schedule::InTurn => {
                in_turn(size, slot, states, probes, events)
                    .instrument(span)
                    .await?
            }
            Schedule::Simultaneous => {
                together(size, slot, states, probes, sides, events)
                    .instrument(span)
                    .await?
            }
        };
        if outcome.void && voided < bench.repetitions {
            voided += 1;
        }
        at_size.extend(outcome.results);
        slot += 1;
    }
    Ok(at_size)
}

/// Whether a size stops adding slots under `goal` after `slots` slots whose results are
/// `at_size`, `elapsed` after the runner started: `Some` with why, `None` to add another.
fn precision_outcome(
    goal: &PrecisionGoal,
    at_size: &[CellResult],
    baseline: &str,
    slots: u32,
    elapsed: std::time::Duration,
) -> Option<PrecisionOutcome> {
    let standing = super::slots::standing(at_size, baseline, goal.mde_percent);
    if let Standing::Reached { widest_mde_percent } = standing {
        return Some(PrecisionOutcome::Reached {
            repetitions: slots,
            widest_mde_percent,
        });
    }
    let limit = if slots >= goal.max_repetitions {
        format!("precision.maxRepetitions {}", goal.max_repetitions)
    } else if let Some(max) = goal.max_duration.filter(|max| elapsed >= *max) {
        format!(
            "precision.maxDuration {}",
            crate::api::units::format_duration(max)
        )
    } else {
        return None;
    };
    Some(PrecisionOutcome::NotReached {
        repetitions: slots,
        limit,
        standing,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::result::testing::slotted_result;

    #[test]
    fn a_size_adds_slots_until_the_goal_or_a_limit() {
        let goal = PrecisionGoal {
            mde_percent: 1.0,
            max_repetitions: 5,
            max_duration: Some(Duration::from_secs(60)),
        };
        let noisy: Vec<CellResult> = [(100.0, 110.0), (100.0, 95.0), (100.0, 104.0)]
            .into_iter()
            .enumerate()
            .flat_map(|(i, (a, b))| {
                [
                    slotted_result("a", i as u32 + 1, a),
                    slotted_result("b", i as u32 + 1, b),
                ]
            })
            .collect();
        let second = Duration::from_secs(1);
        assert_eq!(precision_outcome(&goal, &noisy, "a", 3, second), None);
        let Some(PrecisionOutcome::NotReached {
            repetitions,
            limit,
            standing,
        }) = precision_outcome(&goal, &noisy, "a", 5, second)
        else {
            panic!("the repetitions limit stops it");
        };
        assert_eq!(
            (repetitions, limit.as_str()),
            (5, "precision.maxRepetitions 5")
        );
        assert!(
            matches!(standing, Standing::Short { ref target, mde_percent: Some(m) } if target == "b" && m > 1.0)
        );
        let Some(outcome) = precision_outcome(&goal, &noisy, "a", 3, Duration::from_secs(61))
        else {
            panic!("the duration limit stops it");
        };
        assert!(
            outcome.to_string().starts_with("PrecisionNotReached: MDE ")
                && outcome
                    .to_string()
                    .ends_with("% (b) after 3 reps (precision.maxDuration 1m)"),
            "{outcome}"
        );
        // Ratios of exactly 1.1 in every slot: the MDE is at the resolution, far below 1 %.
        let steady: Vec<CellResult> = (1..=3)
            .flat_map(|s| [slotted_result("a", s, 100.0), slotted_result("b", s, 110.0)])
            .collect();
        let outcome = precision_outcome(&goal, &steady, "a", 3, second).unwrap();
        assert!(
            matches!(outcome, PrecisionOutcome::Reached { repetitions: 3, widest_mde_percent } if widest_mde_percent < 1.0),
            "{outcome:?}"
        );
        assert!(
            outcome.to_string().starts_with("PrecisionReached: MDE 0."),
            "{outcome}"
        );
    }
}
