//! One cell of the matrix against one connected target whose collection is in its seeded
//! state S(size): warm up, restore S(size), settle, measure, take server figures and explain
//! plans, restore S(size) again, and assemble the result with its workload identity and the
//! validity gates it passed or failed (docs/results.md). A cell that cannot finish still
//! yields a result, marked incomplete with the target, the phase and the error: never a
//! partial result that passes as valid.

use crate::api::RunLength;
use crate::contract::CellStep;
use crate::measure;
use crate::plan::{RunSettings, WorkloadPlan};
use crate::result::{self, CellId, CellResult, CellStatus, WarmupRounds, add_series};
use crate::runner::crew::{Helpers, Task};
use crate::runner::dataset::{self, Seeded};
use crate::runner::deadline::bounded;
use crate::runner::server::{ConnectedTarget, Members, explain_all, flights_samples, ycsb_samples};
use crate::workload::flights::Params;
use crate::workload::ycsb::SharedState;

use super::failure::CellFailure;
use super::identity::identity;
use super::inputs::{CellInputs, CellProgress, changes_of};
use super::measure::validity_gates;
use super::meeting::Meeting;
use super::phase::CellRun;

/// Runs one cell on `target`, whose collection is in the seeded state `seeded`; leaves it in
/// that state (updating `seeded` when it had to be seeded again).
pub async fn run_cell(
    target: &ConnectedTarget,
    uri: &str,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    cell: CellId,
    seeded: &mut Seeded,
    progress: &CellProgress,
) -> CellResult {
    run_cell_with(target, uri, plan, settings, cell, seeded, progress, None).await
}

/// [`run_cell`], with the other client processes of `crew` running their workers beside
/// this one's: the result is of them all.
#[allow(clippy::too_many_arguments)]
pub async fn run_cell_with(
    target: &ConnectedTarget,
    uri: &str,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    cell: CellId,
    seeded: &mut Seeded,
    progress: &CellProgress,
    crew: Option<Helpers<'_>>,
) -> CellResult {
    let run = CellRun {
        target,
        uri,
        plan,
        settings,
        progress,
        crew,
        meeting: None,
    };
    run.run(cell, seeded).await
}

/// [`run_cell`] as one of the cells of a simultaneous slot: it meets the others at `meeting`
/// before its measured phase, which starts when they all do.
#[allow(clippy::too_many_arguments)]
pub async fn run_cell_together(
    target: &ConnectedTarget,
    uri: &str,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    cell: CellId,
    seeded: &mut Seeded,
    progress: &CellProgress,
    meeting: &Meeting,
) -> CellResult {
    let run = CellRun {
        target,
        uri,
        plan,
        settings,
        progress,
        crew: None,
        meeting: Some(meeting),
    };
    let result = run.run(cell, seeded).await;
    // A cell that stopped before the meeting lets the others go (after it, this does nothing).
    meeting.leave();
    result
}

impl CellRun<'_> {
    /// The cell's result: complete, or incomplete with the step it stopped at.
    async fn run(&self, cell: CellId, seeded: &mut Seeded) -> CellResult {
        let (target, plan, settings) = (self.target, self.plan, self.settings);
        let mut result = CellResult::empty(cell, CellStatus::Complete);
        result.mongobench_version = Some(env!("CARGO_PKG_VERSION").to_owned());
        result.server = result::ServerInfo {
            version: Some(target.server.version.clone()),
            topology: Some(target.server.topology.clone()),
            distribution: Some(target.server.distribution.clone()),
            storage_engine: target.server.storage_engine.clone(),
            cache_bytes: target.server.cache_bytes,
            ..Default::default()
        };
        result.dataset.seeded_documents = seeded.documents;
        result.dataset.digest = Some(seeded.digest.clone());
        result.identity = identity(plan, settings, seeded.documents);
        if let Err(failure) = self.fill(&mut result, seeded).await {
            result.status = CellStatus::Incomplete {
                reason: format!("target {}: {failure}", target.name),
            };
        }
        result
    }

    async fn fill(&self, result: &mut CellResult, seeded: &mut Seeded) -> Result<(), CellFailure> {
        let (target, plan, settings, progress) =
            (self.target, self.plan, self.settings, self.progress);
        let (database, collection) =
            dataset::namespace(plan).map_err(|e| CellFailure::at("settings", e.to_string()))?;
        result.dataset.namespace = Some(format!("{database}.{collection}"));

        let prepare = "preparing";
        let records = seeded.documents;
        let limit = settings.operation_timeout;
        let members = bounded(
            limit,
            "connecting to the members",
            Members::of(target, self.uri),
        )
        .await
        .map_err(|e| CellFailure::at(prepare, e))?;
        result.nodes = bounded(limit, "hostInfo", members.nodes())
            .await
            .map_err(|e| CellFailure::at(prepare, e))?;

        let inputs = CellInputs::new(plan, settings, records, self.slice());
        // Warm-up: its own streams and insert lane; nothing is recorded, and what it changed is
        // undone before the measured phase.
        if !matches!(settings.warmup, RunLength::Duration(d) if d.is_zero())
            && settings.warmup != RunLength::Operations(0)
        {
            self.warm_up(&inputs, records, result, seeded).await?;
        }

        match &settings.sweep {
            None => {
                self.measured_phase(&inputs, None, &members, result, seeded)
                    .await?
            }
            Some(sweep) => super::sweep::run(self, sweep, &members, result, seeded).await?,
        }

        progress.set(CellStep::Explaining);
        let samples: Vec<(String, mongodb::bson::Document)> = match plan {
            WorkloadPlan::Flights(params) => {
                let params = Params {
                    workers: settings.workers.max(1),
                    ..(**params).clone()
                };
                flights_samples(&params, &inputs.dataset, params.explain_samples)
                    .into_iter()
                    .map(|(v, c)| (v.code().to_owned(), c))
                    .collect()
            }
            WorkloadPlan::Custom(custom) => {
                let counts = custom
                    .counts(records)
                    .map_err(|e| CellFailure::at("explaining", e))?;
                custom.workload.explain_samples(custom.seed, &counts)
            }
            WorkloadPlan::Ycsb { .. } => {
                let (mut src, _) = inputs
                    .sources(
                        &SharedState::new(records),
                        RunLength::Operations(200),
                        false,
                    )
                    .map_err(|e| CellFailure::at("explaining", e))?;
                let mut steps = Vec::new();
                while let Some(step) = src[0].next_step() {
                    steps.push(step);
                }
                ycsb_samples(
                    steps
                        .iter()
                        .flat_map(|s| s.calls.iter().copied().zip(s.operation.commands.iter())),
                )
                .into_iter()
                .map(|(call, body)| (call.label().to_owned(), body))
                .collect()
            }
        };
        result.explain = explain_all(target, &database, samples, limit).await;
        result.fallbacks = result::fallbacks(result);
        let gates = validity_gates(result, plan);
        result.invalid_reasons.extend(gates);
        Ok(())
    }

    /// The warm-up: one round of `warmup`, or with `warmupUntilSettled` rounds until the last
    /// one's throughput has levelled off or the rounds run out. Each round starts from the
    /// seeded state: the streams, insert lane and restore are those of a single warm-up.
    async fn warm_up(
        &self,
        inputs: &CellInputs<'_>,
        records: u64,
        result: &mut CellResult,
        seeded: &mut Seeded,
    ) -> Result<(), CellFailure> {
        let (target, settings, progress) = (self.target, self.settings, self.progress);
        let mut rounds = 0;
        loop {
            rounds += 1;
            progress
                .warmup_round
                .store(rounds, std::sync::atomic::Ordering::Relaxed);
            progress.set(CellStep::Warmup);
            let issued = self
                .order(records, |at| Task::Warmup { start_at_ms: at })
                .await
                .map_err(|e| CellFailure::at("warmup", e))?;
            let outcome = inputs
                .phase(
                    "warmup",
                    target,
                    settings.warmup,
                    issued.as_ref().and_then(|i| i.start),
                    progress,
                )
                .await?;
            if let Some(fatal) = outcome.fatal {
                return Err(CellFailure::at("warmup", fatal));
            }
            let mut series = outcome.recorder.overall().per_second().to_vec();
            let replies = self
                .replies(issued.as_ref(), settings.warmup, outcome.wall)
                .await
                .map_err(|e| CellFailure::at("warmup", e))?;
            for reply in replies {
                let theirs: Vec<u64> = serde_json::from_value(reply).map_err(|e| {
                    CellFailure::at("warmup", format!("a client process's warm-up: {e}"))
                })?;
                add_series(&mut series, &theirs);
            }
            if let RunLength::Duration(d) = settings.warmup {
                series.truncate(d.as_secs() as usize);
            }
            result.warmup_per_second = series;
            progress.set(CellStep::Restoring);
            let record = self
                .restore(seeded, &changes_of(&outcome.sources), "warmup")
                .await
                .map_err(|e| CellFailure::at("restoring after the warm-up", e))?;
            result.dataset.restores.push(record);
            let Some(settle) = settings.warmup_settle else {
                return Ok(());
            };
            // A round too slow to judge (no operation in its middle third) has not settled.
            let settled = measure::settle::drift_percent(&result.warmup_per_second)
                .is_some_and(|d| d.abs() <= settle.tolerance_percent + 1e-9);
            if settled || rounds >= settle.max_rounds {
                result.warmup_rounds = Some(WarmupRounds { rounds, settled });
                return Ok(());
            }
        }
    }
}
