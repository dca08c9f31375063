//! The whole run of a benchmark on one platform against connected targets, shared by
//! `mongobench run -f` and the operator's runner Job (`run --plan`): per dataset size in
//! ascending order, bring every target to S(size) (grown from S(previous size)), then run
//! the repetitions interleaved across targets in slots (slot k holds repetition k of every
//! target, in a seeded random order: A B, B A, …), so slow drift of the machines favours
//! none of them and the comparison can pair the cells of a slot (`slots.rs`); with a
//! precision goal, slots are added until it is reached or a limit is. Each cell warms up,
//! restores, settles, measures and restores again (`cell/`). The caller shows progress and
//! keeps the results through [`Events`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::api::{CanaryPolicy, DatasetSize};
use crate::measure::canary;
use crate::plan::{self, PlannedCell, RunSettings, WorkloadPlan};
use crate::result::{CellId, CellResult, CellStatus, Slot};

use super::canaries::{self, Probes};
use super::cell::{CellProgress, run_cell_with};
use super::crew::{Crew, Helpers};
use super::dataset::{self, Seeded};
use super::server::ConnectedTarget;
use super::sink::SinkError;
use super::slots::{self, PrecisionGoal, Standing};

/// What one runner executes.
#[derive(Debug, Clone)]
pub struct Benchmark {
    /// The MongoBenchmark's name (or the local run's).
    pub name: String,
    /// This execution's identifier.
    pub run_id: String,
    /// The platform the targets run on.
    pub platform: String,
    pub plan: WorkloadPlan,
    pub settings: RunSettings,
    /// `spec.dataset.reuseDataset`: keep a stored dataset of the same identity whose digest
    /// verifies, instead of seeding fresh at the first size.
    pub reuse_dataset: bool,
    /// Sizes as the spec writes them, ascending.
    pub sizes: Vec<(String, DatasetSize)>,
    pub repetitions: u32,
    /// `spec.precision`: slots added past `repetitions` until every comparison's MDE is at
    /// most its goal.
    pub precision: Option<PrecisionGoal>,
    /// `spec.canaryPolicy`: what a deviating noise canary does to its cell.
    pub canary_policy: CanaryPolicy,
    /// Per target, its server nodes' canaries (`host:port`), asked before each of its cells;
    /// only provisioned replica sets have them.
    pub server_canaries: BTreeMap<String, Vec<String>>,
    /// The target compared with the others (the spec's baseline; the first target when that
    /// is not among the targets run).
    pub baseline: String,
    /// Cells already done (their results exist): skipped.
    pub completed: BTreeSet<String>,
}

/// Why a size stopped adding slots under a precision goal.
#[derive(Debug, Clone, PartialEq)]
pub enum PrecisionOutcome {
    /// Every comparison's MDE reached the goal after `repetitions` slots.
    Reached {
        repetitions: u32,
        widest_mde_percent: f64,
    },
    /// A limit came first; `standing` is where the size stood then.
    NotReached {
        repetitions: u32,
        limit: String,
        standing: Standing,
    },
}

impl std::fmt::Display for PrecisionOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrecisionOutcome::Reached {
                repetitions,
                widest_mde_percent,
            } => write!(
                f,
                "PrecisionReached: MDE {widest_mde_percent:.1}% after {repetitions} reps"
            ),
            PrecisionOutcome::NotReached {
                repetitions,
                limit,
                standing,
            } => {
                let mde = match standing {
                    Standing::Short {
                        target,
                        mde_percent: Some(m),
                    } => format!("MDE {m:.1}% ({target})"),
                    Standing::Short { target, .. } => {
                        format!("too few valid pairs for an MDE ({target})")
                    }
                    Standing::Reached { widest_mde_percent } => {
                        format!("MDE {widest_mde_percent:.1}%")
                    }
                };
                write!(
                    f,
                    "PrecisionNotReached: {mde} after {repetitions} reps ({limit})"
                )
            }
        }
    }
}

/// A target with the URI it was reached at.
pub struct Connected {
    pub target: ConnectedTarget,
    pub uri: String,
}

/// What the caller does as the run goes.
pub trait Events {
    /// A target is being brought to a size.
    fn seeding(&mut self, target: &str, size: &str, documents: u64);
    /// A target reached a size.
    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded);
    /// A cell starts; `progress` is live until [`Events::finished`].
    fn started(&mut self, cell: &PlannedCell, progress: &CellProgress);
    /// A cell ended with `result` (complete, invalid or incomplete). An error stops the run.
    fn finished(
        &mut self,
        cell: &PlannedCell,
        result: &CellResult,
    ) -> impl std::future::Future<Output = Result<(), SinkError>>;
    /// A size stopped adding slots under the precision goal.
    fn precision(&mut self, size: &str, outcome: &PrecisionOutcome) {
        tracing::info!(size, "{outcome}");
    }
}

impl Benchmark {
    fn cell(&self, target: &str, size: &(String, DatasetSize), repetition: u32) -> PlannedCell {
        PlannedCell {
            id: plan::cell_id(target, &self.platform, &size.0, repetition),
            target: target.to_owned(),
            platform: self.platform.clone(),
            size: size.0.clone(),
            dataset: size.1,
            repetition,
        }
    }

    fn cell_id(&self, cell: &PlannedCell) -> CellId {
        CellId {
            benchmark: self.name.clone(),
            run_id: self.run_id.clone(),
            workload: self.plan.name(),
            target: cell.target.clone(),
            platform: cell.platform.clone(),
            size: cell.size.clone(),
            repetition: cell.repetition,
        }
    }
}

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
    let helpers = |i: usize| crew.map(|crew| Helpers { crew, target: i });
    let started = Instant::now();
    let baseline = if targets.iter().any(|t| t.target.name == bench.baseline) {
        bench.baseline.as_str()
    } else {
        targets.first().map_or("", |t| t.target.name.as_str())
    };
    let mut results = Vec::new();
    // The run's noise canaries so far, each cell's against the earlier ones of its machine.
    let mut probes = Probes::default();
    // Per target: its collection's known state, or why it cannot go on at this size.
    let mut states: BTreeMap<&str, Seeded> = BTreeMap::new();
    let mut broken: BTreeMap<&str, String> = BTreeMap::new();
    for (size_index, size) in bench.sizes.iter().enumerate() {
        let documents = plan::documents(&bench.plan, size.1);
        let pending = |t: &str| {
            (1..=bench.repetitions).any(|r| !bench.completed.contains(&bench.cell(t, size, r).id))
        };
        broken.clear();
        for (i, t) in targets.iter().enumerate() {
            let name = t.target.name.as_str();
            if !pending(name) {
                continue;
            }
            events.seeding(name, &size.0, documents);
            match seed(bench, t, documents, states.get(name), helpers(i)).await {
                Ok(seeded) => {
                    events.seeded(name, &size.0, &seeded);
                    states.insert(name, seeded);
                }
                Err(e) => {
                    states.remove(name);
                    broken.insert(name, format!("target {name}: seeding to {}: {e}", size.0));
                }
            }
        }
        // This run's results at this size, for the precision goal.
        let mut at_size: Vec<CellResult> = Vec::new();
        // Slots voided by their canary (canaryPolicy Void), each run again; at most as many
        // as were planned.
        let mut voided = 0;
        let mut slot = 1;
        loop {
            if slot > bench.repetitions + voided {
                let Some(goal) = &bench.precision else { break };
                let elapsed = started.elapsed();
                if let Some(outcome) =
                    precision_outcome(goal, &at_size, baseline, slot - 1, elapsed)
                {
                    events.precision(&size.0, &outcome);
                    break;
                }
            }
            let order = slots::order(bench.plan.seed(), size_index, slot, targets.len());
            let mut slot_voided = false;
            for (position, &i) in order.iter().enumerate() {
                let t = &targets[i];
                let name = t.target.name.as_str();
                let cell = bench.cell(name, size, slot);
                if bench.completed.contains(&cell.id) {
                    continue;
                }
                let id = bench.cell_id(&cell);
                let mut result = match (broken.get(name), states.get_mut(name)) {
                    (Some(reason), _) => CellResult::empty(
                        id,
                        CellStatus::Incomplete {
                            reason: reason.clone(),
                        },
                    ),
                    (None, Some(seeded)) => {
                        let probe = tokio::task::spawn_blocking(canary::probe).await.ok();
                        let servers = match bench.server_canaries.get(name) {
                            Some(addresses) => canaries::probe_all(addresses).await,
                            None => Vec::new(),
                        };
                        let progress = CellProgress::default();
                        events.started(&cell, &progress);
                        let result = run_cell_with(
                            &t.target,
                            &t.uri,
                            &bench.plan,
                            &bench.settings,
                            id,
                            seeded,
                            &progress,
                            helpers(i),
                        )
                        .await;
                        if !result.is_complete() {
                            // The collection's state is unknown after a cell that stopped
                            // early: seed this size again before the next repetition.
                            match seed(bench, t, documents, None, helpers(i)).await {
                                Ok(again) => *seeded = again,
                                Err(e) => {
                                    broken.insert(
                                        name,
                                        format!(
                                            "target {name}: seeding to {} again after an \
                                             incomplete cell: {e}",
                                            size.0
                                        ),
                                    );
                                }
                            }
                        }
                        let mut result = result;
                        slot_voided |=
                            probes.keep(&mut result, probe, servers, bench.canary_policy);
                        result
                    }
                    (None, None) => unreachable!("a target without a state is broken"),
                };
                if targets.len() > 1 {
                    result.slot = Some(Slot {
                        number: slot,
                        position: position as u32,
                    });
                }
                events.finished(&cell, &result).await?;
                at_size.push(result.clone());
                results.push(result);
            }
            if slot_voided && voided < bench.repetitions {
                voided += 1;
            }
            slot += 1;
        }
        // A target that could not reach this size starts the next one afresh.
        for name in broken.keys() {
            states.remove(name);
        }
    }
    Ok(results)
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
    let standing = slots::standing(at_size, baseline, goal.mde_percent);
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

async fn seed(
    bench: &Benchmark,
    t: &Connected,
    documents: u64,
    current: Option<&Seeded>,
    crew: Option<Helpers<'_>>,
) -> Result<Seeded, dataset::DatasetError> {
    let prepare = |current, crew| {
        dataset::prepare_with(
            &t.target,
            &bench.plan,
            bench.settings.workers,
            documents,
            current,
            bench.reuse_dataset,
            bench.settings.operation_timeout,
            crew,
        )
    };
    match prepare(current, crew).await {
        // A client process that stopped (its pod is being replaced) leaves its share undone:
        // this process seeds the size afresh on its own instead.
        Err(e) if crew.is_some() => {
            tracing::warn!(target = %t.target.name, "seeding with the other client processes: {e}; seeding alone");
            prepare(None, None).await
        }
        other => other,
    }
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
