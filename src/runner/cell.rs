//! One cell of the matrix against one connected target whose collection is in its seeded
//! state S(size): warm up, restore S(size), settle, measure, take server figures and explain
//! plans, restore S(size) again, and assemble the result with its workload identity and the
//! validity gates it passed or failed (docs/results.md). A cell that cannot finish still
//! yields a result, marked incomplete with the target, the phase and the error: never a
//! partial result that passes as valid.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::api::RunLength;
use crate::measure::ClientCpuMeter;
use crate::plan::{RunSettings, WorkloadPlan};
use crate::result::{
    self, CellId, CellResult, CellStatus, ClientPath, LoopMode, MeasuredPhase, RestoreRecord,
    add_series,
};
use crate::workload::flights::{self, Params};
use crate::workload::ycsb::{self, SharedState};

use super::connect::Target;
use super::crew::{Helpers, Issued, Task, grace, skew_ms};
use super::dataset::{self, Seeded};
use super::deadline::bounded;
use super::digest::digest;
use super::execute::ExecOptions;
use super::explain::{explain_all, flights_samples, ycsb_samples};
use super::identity::{identity, measured_properties};
use super::partial::{self, Partial};
use super::phase::{PhaseConfig, PhaseOutcome, Progress, Stop, run_phase};
use super::replication::{SETTLE_TIMEOUT, settle};
use super::changes::Changes;
use super::restore::{Restored, restore};
use super::server_stats::{Members, coll_stats};
use super::source::Source;
use super::split::ClientSlice;

/// Share of failed operations above which a cell is invalid: a server that fails this often
/// is not measured doing the workload.
pub const ERROR_BUDGET: f64 = 0.01;

/// What a caller watches while a cell runs.
#[derive(Debug, Default)]
pub struct CellProgress {
    /// `warmup`, `restoring`, `settling`, `measuring`, `explaining`.
    pub phase: Arc<std::sync::Mutex<&'static str>>,
    pub ops: Arc<Progress>,
}

impl CellProgress {
    fn set(&self, phase: &'static str) {
        *self.phase.lock().expect("progress lock") = phase;
    }
}

/// What every phase of one cell generates against, in this client process.
pub(crate) struct CellInputs<'a> {
    pub plan: &'a WorkloadPlan,
    pub settings: &'a RunSettings,
    pub dataset: flights::DatasetInfo,
    pub records: u64,
    /// The workers of this process.
    pub slice: ClientSlice,
}

impl<'a> CellInputs<'a> {
    /// The generators' view of a collection holding `records` seeded documents.
    pub fn new(
        plan: &'a WorkloadPlan,
        settings: &'a RunSettings,
        records: u64,
        slice: ClientSlice,
    ) -> CellInputs<'a> {
        let dataset = match plan {
            WorkloadPlan::Flights(params) => {
                flights::DatasetInfo::fresh(params.dataset_seed, records)
            }
            WorkloadPlan::Ycsb { .. } => flights::DatasetInfo::fresh(0, records),
        };
        CellInputs {
            plan,
            settings,
            dataset,
            records,
            slice,
        }
    }

    /// The source (and flights think time) of each worker of this process for a phase of
    /// `length`.
    fn sources(
        &self,
        ycsb_shared: &Arc<SharedState>,
        length: RunLength,
        warmup: bool,
    ) -> Result<(Vec<Source>, Vec<Option<flights::ThinkTime>>), String> {
        let workers = self.settings.workers.max(1);
        let counts = match length {
            RunLength::Operations(t) => Some(flights::operations_per_worker(t, workers)),
            RunLength::Duration(_) => None,
        };
        let mut sources = Vec::new();
        let mut think = Vec::new();
        let changes = Arc::new(Changes::new(self.records));
        match self.plan {
            WorkloadPlan::Flights(params) => {
                let params = Params {
                    workers,
                    ..(**params).clone()
                };
                let phase = if warmup {
                    flights::Phase::Warmup
                } else {
                    flights::Phase::Measured
                };
                for w in self.slice.workers(workers) {
                    let worker = flights::Worker::new(&params, &self.dataset, w, phase)
                        .map_err(|e| e.to_string())?;
                    sources.push(Source::flights(
                        worker,
                        counts.as_ref().map(|c| c[w as usize]),
                        changes.clone(),
                    ));
                    think.push(Some(flights::ThinkTime::new(&params, w)));
                }
            }
            WorkloadPlan::Ycsb { raw, seed } => {
                let raw = measured_properties(raw, self.records, length);
                let props = ycsb::Properties::from_raw(&raw).map_err(|e| e.to_string())?;
                // Warm-up draws from its own stream so it never repeats the measured traffic.
                let seed = if warmup {
                    seed ^ 0x5741_524d_5550
                } else {
                    *seed
                };
                for w in self.slice.workers(workers) {
                    let worker =
                        ycsb::Worker::new(&props, seed, w, workers, ycsb::Phase::Run, ycsb_shared)
                            .map_err(|e| e.to_string())?;
                    sources.push(Source::ycsb(worker, changes.clone()));
                    think.push(None);
                }
            }
        }
        Ok((sources, think))
    }

    /// Runs this process's workers of one phase of `length` (`warmup` or the measured phase)
    /// from `start_at` (now if `None`). YCSB run-phase inserts start at the record count: the
    /// collection holds exactly the seeded records.
    pub async fn phase(
        &self,
        name: &'static str,
        target: &Target,
        length: RunLength,
        start_at: Option<Instant>,
        progress: &CellProgress,
    ) -> Result<PhaseOutcome, (&'static str, String)> {
        let exec =
            ExecOptions::from_settings(self.settings).map_err(|e| ("settings", e.to_string()))?;
        let shared = SharedState::new(self.records);
        let (src, think) = self
            .sources(&shared, length, name == "warmup")
            .map_err(|e| (name, e))?;
        let workers = self.settings.workers.max(1);
        let config = PhaseConfig {
            stop: stop(length),
            target_ops_per_sec: self.settings.target_ops_per_sec,
            exec,
            first_worker: self.slice.workers(workers).start,
            total_workers: workers,
            start_at,
        };
        Ok(run_phase(target, src, think, &config, progress.ops.clone()).await)
    }
}

fn stop(length: RunLength) -> Stop {
    match length {
        RunLength::Duration(d) => Stop::After(d),
        RunLength::Operations(_) => Stop::Exhausted,
    }
}

/// Everything the workers of a phase may have changed (they note it together).
pub(crate) fn changes_of(sources: &[Source]) -> Arc<Changes> {
    sources
        .first()
        .map_or_else(Default::default, |s| s.changes().clone())
}

/// Runs one cell on `target`, whose collection is in the seeded state `seeded`; leaves it in
/// that state (updating `seeded` when it had to be seeded again).
pub async fn run_cell(
    target: &Target,
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
    target: &Target,
    uri: &str,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    cell: CellId,
    seeded: &mut Seeded,
    progress: &CellProgress,
    crew: Option<Helpers<'_>>,
) -> CellResult {
    let mut result = CellResult::empty(cell, CellStatus::Complete);
    result.mongobench_version = Some(env!("CARGO_PKG_VERSION").to_owned());
    result.server = result::ServerInfo {
        version: Some(target.server.version.clone()),
        topology: Some(target.server.topology.clone()),
        ..Default::default()
    };
    result.dataset.seeded_documents = seeded.documents;
    result.dataset.digest = Some(seeded.digest.clone());
    result.identity = identity(plan, settings, seeded.documents);
    let cell = Cell {
        target,
        uri,
        plan,
        settings,
        progress,
        crew,
    };
    if let Err((phase, error)) = cell.fill(&mut result, seeded).await {
        result.status = CellStatus::Incomplete {
            reason: format!("target {}: {phase}: {error}", target.name),
        };
    }
    result
}

/// What one cell runs with.
struct Cell<'a> {
    target: &'a Target,
    uri: &'a str,
    plan: &'a WorkloadPlan,
    settings: &'a RunSettings,
    progress: &'a CellProgress,
    crew: Option<Helpers<'a>>,
}

/// This process's measured phase and its share of the figures.
pub(crate) struct Measured {
    pub partial: Partial,
    pub changes: Arc<Changes>,
    pub wall: Duration,
    pub path: ClientPath,
}

impl Cell<'_> {
    fn slice(&self) -> ClientSlice {
        self.crew.map_or(ClientSlice::WHOLE, |h| h.crew.slice())
    }

    /// Orders a phase of the other processes, if there are any.
    async fn order(
        &self,
        records: u64,
        task: impl FnOnce(u64) -> Task,
    ) -> Result<Option<Issued>, String> {
        match self.crew {
            Some(h) => h.crew.order(h.target, records, task).await.map(Some),
            None => Ok(None),
        }
    }

    /// The other processes' replies to the phase `issued` of `length`, which took this one
    /// `own`: an operation-bounded phase may take them as long again.
    async fn replies(
        &self,
        issued: Option<&Issued>,
        length: RunLength,
        own: Duration,
    ) -> Result<Vec<serde_json::Value>, String> {
        let (Some(h), Some(issued)) = (self.crew, issued) else {
            return Ok(Vec::new());
        };
        let limit = self.settings.operation_timeout;
        let wait = match length {
            RunLength::Operations(_) => own + grace(limit),
            RunLength::Duration(_) => grace(limit),
        };
        h.crew.collect(issued, wait).await
    }

    async fn fill(
        &self,
        result: &mut CellResult,
        seeded: &mut Seeded,
    ) -> Result<(), (&'static str, String)> {
        let (target, plan, settings, progress) =
            (self.target, self.plan, self.settings, self.progress);
        let (database, collection) =
            dataset::namespace(plan).map_err(|e| ("settings", e.to_string()))?;
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
        .map_err(|e| (prepare, e))?;
        result.nodes = bounded(limit, "hostInfo", members.nodes())
            .await
            .map_err(|e| (prepare, e))?;

        let inputs = CellInputs::new(plan, settings, records, self.slice());
        // Warm-up: its own streams and insert lane; nothing is recorded, and what it changed is
        // undone before the measured phase.
        if !matches!(settings.warmup, RunLength::Duration(d) if d.is_zero())
            && settings.warmup != RunLength::Operations(0)
        {
            progress.set("warmup");
            let issued = self
                .order(records, |at| Task::Warmup { start_at_ms: at })
                .await
                .map_err(|e| ("warmup", e))?;
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
                return Err(("warmup", fatal));
            }
            let mut series = outcome.recorder.overall().per_second().to_vec();
            let replies = self
                .replies(issued.as_ref(), settings.warmup, outcome.wall)
                .await
                .map_err(|e| ("warmup", e))?;
            for reply in replies {
                let theirs: Vec<u64> = serde_json::from_value(reply)
                    .map_err(|e| ("warmup", format!("a client process's warm-up: {e}")))?;
                add_series(&mut series, &theirs);
            }
            if let RunLength::Duration(d) = settings.warmup {
                series.truncate(d.as_secs() as usize);
            }
            result.warmup_per_second = series;
            progress.set("restoring");
            let record = self
                .restore(seeded, &changes_of(&outcome.sources), "warmup")
                .await
                .map_err(|e| ("restoring after the warm-up", e))?;
            result.dataset.restores.push(record);
        }

        progress.set("settling");
        let settled = bounded(
            SETTLE_TIMEOUT + limit,
            "waiting for the replica set to settle",
            settle(&target.client, SETTLE_TIMEOUT),
        )
        .await
        .map_err(|e| ("settling", e))?;
        result.settle_seconds = Some(settled.seconds);
        result.invalid_reasons.extend(settled.timed_out);

        progress.set("measuring");
        let measuring = "measured phase";
        let before = bounded(limit, "serverStatus", members.server_status())
            .await
            .map_err(|e| (measuring, e))?;
        let issued = self
            .order(records, |at| Task::Measure { start_at_ms: at })
            .await
            .map_err(|e| (measuring, e))?;
        result.started_at = Some(
            k8s_openapi::jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
        );
        let own = measure(&inputs, target, issued.as_ref(), progress)
            .await
            .map_err(|e| (measuring, e))?;
        result.client_path = Some(own.path);
        let mut parts = vec![own.partial];
        let replies = self
            .replies(issued.as_ref(), settings.measured, own.wall)
            .await
            .map_err(|e| (measuring, e))?;
        for reply in replies {
            parts.push(
                serde_json::from_value(reply)
                    .map_err(|e| (measuring, format!("a client process's result: {e}")))?,
            );
        }
        let slice = self.slice();
        let merged = partial::merge(&plan.name(), settings.workers.max(1), slice.count, parts)
            .map_err(|e| (measuring, e))?;
        let operations = merged.measured.overall.completed;
        let wall = merged.measured.duration();
        result.measured = Some(merged.measured);
        result.client_cpu = Some(merged.cpu);
        if slice.count > 1 {
            result.client_pods = merged.pods;
        }
        result.targeting = merged.targeting;
        result.worker_operations = merged.worker_operations;
        result.fingerprint = merged.fingerprint;
        if let Some(fatal) = merged.fatal {
            return Err((measuring, fatal));
        }
        let after = bounded(limit, "serverStatus", members.server_status())
            .await
            .map_err(|e| (measuring, e))?;
        let mut stats = members
            .stats(&before, &after, &result.nodes, wall, operations)
            .map_err(|e| (measuring, e.to_string()))?;
        stats.primary = settled.state.as_ref().and_then(|s| s.primary.clone());
        result.server_stats = Some(stats);
        let replica_state = super::replication::state(&target.client);
        let replica_after = bounded(limit, "replSetGetStatus", replica_state)
            .await
            .map_err(|e| (measuring, e))?;
        if let (Some(before), Some(after)) = (&settled.state, &replica_after) {
            result.invalid_reasons.extend(before.changes(after));
        }
        let sizes = coll_stats(target, &database, &collection);
        let whole = super::deadline::whole_collection(limit);
        result.dataset.coll_stats = bounded(whole, "collStats", sizes)
            .await
            .map_err(|e| ("collecting statistics", e))?;

        progress.set("restoring");
        let record = self
            .restore(seeded, &own.changes, "measured")
            .await
            .map_err(|e| ("restoring after the measured phase", e))?;
        result.dataset.restores.push(record);

        progress.set("explaining");
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
            WorkloadPlan::Ycsb { .. } => {
                let (mut src, _) = inputs
                    .sources(
                        &SharedState::new(records),
                        RunLength::Operations(200),
                        false,
                    )
                    .map_err(|e| ("explaining", e))?;
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

    /// Undoes this process's `changes`, then has every other process undo its own, one after
    /// another (a restore deletes and inserts documents again, and the workers of two processes
    /// may have changed the same one), and checks the collection against the seeded digest.
    async fn restore(
        &self,
        seeded: &mut Seeded,
        changes: &Changes,
        after: &str,
    ) -> Result<RestoreRecord, String> {
        let started = Instant::now();
        let limit = self.settings.operation_timeout;
        let mut restored = restore(
            &self.target.client,
            self.plan,
            seeded.documents,
            changes,
            limit,
        )
        .await
        .map_err(|e| e.to_string())?;
        if let Some(h) = self.crew {
            for other in h.crew.slice().all().skip(1) {
                let issued = h
                    .crew
                    .order_to(
                        h.target,
                        seeded.documents,
                        |_| Task::Restore,
                        Some(other.index),
                    )
                    .await?;
                let wait = grace(super::deadline::whole_collection(limit));
                for reply in h.crew.collect(&issued, wait).await? {
                    let theirs: Restored = serde_json::from_value(reply)
                        .map_err(|e| format!("{other}'s restore: {e}"))?;
                    restored.removed += theirs.removed;
                    restored.rewritten += theirs.rewritten;
                }
            }
        }
        let reseeded = verify(self.target, self.plan, self.settings, seeded, self.crew).await?;
        Ok(RestoreRecord {
            after: after.to_owned(),
            seconds: started.elapsed().as_secs_f64(),
            removed: restored.removed,
            rewritten: restored.rewritten,
            reseeded,
        })
    }
}

/// Runs this process's workers of the measured phase (from the common start time of `issued`)
/// and returns its share of the figures.
pub(crate) async fn measure(
    inputs: &CellInputs<'_>,
    target: &Target,
    issued: Option<&Issued>,
    progress: &CellProgress,
) -> Result<Measured, String> {
    // Waiting for the common start is not part of the CPU measured.
    if let Some(start) = issued.and_then(|i| i.start) {
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
        .map_err(|(_, e)| e)?;
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
        },
        changes,
        wall,
        path,
    })
}

/// The gates a measured result must pass besides replication (docs/results.md, "Validity").
fn validity_gates(result: &CellResult, plan: &WorkloadPlan) -> Vec<String> {
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

/// Checks the collection against the seeded digest after a restore; seeds the size again
/// when they differ, and says why.
async fn verify(
    target: &Target,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    seeded: &mut Seeded,
    crew: Option<Helpers<'_>>,
) -> Result<Option<String>, String> {
    let client = &target.client;
    let limit = settings.operation_timeout;
    let (database, collection) = dataset::namespace(plan).map_err(|e| e.to_string())?;
    let now = digest(client, &database, &collection, limit)
        .await
        .map_err(|e| e.to_string())?;
    if now == seeded.digest {
        return Ok(None);
    }
    let why = format!(
        "after restoring, the collection held {} documents with {} {} instead of {} with {}; \
         seeded again",
        now.documents, now.method, now.value, seeded.digest.documents, seeded.digest.value
    );
    *seeded = dataset::prepare_with(
        target,
        plan,
        settings.workers,
        seeded.documents,
        None,
        false,
        limit,
        crew,
    )
    .await
    .map_err(|e| format!("{why}, which failed: {e}"))?;
    Ok(Some(why))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::{ClientCpuUsage, ErrorKind};
    use crate::result::testing::{cell, result_from};

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
