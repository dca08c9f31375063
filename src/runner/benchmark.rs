//! The whole run of a benchmark on one platform against connected targets, shared by
//! `mongobench run -f` and the operator's runner Job (`run --plan`): per dataset size in
//! ascending order, bring every target to S(size) (grown from S(previous size)), then run
//! the repetitions interleaved across targets (A B C A B C …) so slow drift of the machines
//! favours none of them; each cell warms up, restores, settles, measures and restores again
//! (`cell.rs`). The caller shows progress and keeps the results through [`Events`].

use std::collections::{BTreeMap, BTreeSet};

use crate::api::DatasetSize;
use crate::plan::{self, Cell};
use crate::result::{CellId, CellResult, CellStatus};

use super::cell::{CellProgress, RunSettings, WorkloadPlan, run_cell_with};
use super::connect::Target;
use super::crew::{Crew, Helpers};
use super::dataset::{self, Seeded};

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
    /// Cells already done (their results exist): skipped.
    pub completed: BTreeSet<String>,
}

/// A target with the URI it was reached at.
pub struct Connected {
    pub target: Target,
    pub uri: String,
}

/// What the caller does as the run goes.
pub trait Events {
    /// A target is being brought to a size.
    fn seeding(&mut self, target: &str, size: &str, documents: u64);
    /// A target reached a size.
    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded);
    /// A cell starts; `progress` is live until [`Events::finished`].
    fn started(&mut self, cell: &Cell, progress: &CellProgress);
    /// A cell ended with `result` (complete, invalid or incomplete). An error stops the run.
    fn finished(
        &mut self,
        cell: &Cell,
        result: &CellResult,
    ) -> impl std::future::Future<Output = anyhow::Result<()>>;
}

impl Benchmark {
    fn cell(&self, target: &str, size: &(String, DatasetSize), repetition: u32) -> Cell {
        Cell {
            id: plan::cell_id(target, &self.platform, &size.0, repetition),
            target: target.to_owned(),
            platform: self.platform.clone(),
            size: size.0.clone(),
            dataset: size.1,
            repetition,
        }
    }

    fn cell_id(&self, cell: &Cell) -> CellId {
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
) -> anyhow::Result<Vec<CellResult>> {
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
) -> anyhow::Result<Vec<CellResult>> {
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
) -> anyhow::Result<Vec<CellResult>> {
    let helpers = |i: usize| crew.map(|crew| Helpers { crew, target: i });
    let mut results = Vec::new();
    // Per target: its collection's known state, or why it cannot go on at this size.
    let mut states: BTreeMap<&str, Seeded> = BTreeMap::new();
    let mut broken: BTreeMap<&str, String> = BTreeMap::new();
    for size in &bench.sizes {
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
        for repetition in 1..=bench.repetitions {
            for (i, t) in targets.iter().enumerate() {
                let name = t.target.name.as_str();
                let cell = bench.cell(name, size, repetition);
                if bench.completed.contains(&cell.id) {
                    continue;
                }
                let id = bench.cell_id(&cell);
                let result = match (broken.get(name), states.get_mut(name)) {
                    (Some(reason), _) => CellResult::empty(
                        id,
                        CellStatus::Incomplete {
                            reason: reason.clone(),
                        },
                    ),
                    (None, Some(seeded)) => {
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
                        result
                    }
                    (None, None) => unreachable!("a target without a state is broken"),
                };
                events.finished(&cell, &result).await?;
                results.push(result);
            }
        }
        // A target that could not reach this size starts the next one afresh.
        for name in broken.keys() {
            states.remove(name);
        }
    }
    Ok(results)
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
