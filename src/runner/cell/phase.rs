//! What one cell runs with ([`CellRun`]) and the steps every cell takes: ordering a phase of the
//! other client processes and collecting their replies, one measured phase from settling to the
//! restore after it, and the restore with its digest check. `run.rs` (one cell) and `sweep.rs`
//! (a cell of several measured phases) build on it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::api::RunLength;
use crate::contract::CellStep;
use crate::measure::server::CollStatsSizes;
use crate::plan::custom::CustomPlan;
use crate::plan::sharding::{
    Chunk, DistributionFlag, judge_distribution, moved_chunks, skew_percent,
};
use crate::plan::{RunSettings, WorkloadPlan};
use crate::result::{CellResult, RestoreRecord, ShardShare, ShardingRecord};
use crate::runner::crew::{ClientSlice, Helpers, Issued, Task, grace};
use crate::runner::dataset::{self, Restored, Seeded, restore};
use crate::runner::deadline::{self, bounded};
use crate::runner::send::Changes;
use crate::runner::server::{
    self, ConnectedTarget, Members, SETTLE_TIMEOUT, Settled, coll_stats, settle, sharding,
};

use super::failure::CellFailure;
use super::inputs::{CellInputs, CellProgress};
use super::measure::measure;
use super::meeting::Meeting;
use super::partial;

/// The step a failure during the measured phase names.
const MEASURED_STEP: &str = "measured phase";

/// What the measured phase's traffic leaves for the figures and the restore after it.
struct Traffic {
    /// What the phase's writes changed, for the restore.
    changes: Arc<Changes>,
    /// The measured phase's wall time, merged over the client processes.
    wall: Duration,
    /// Operations completed in it.
    operations: u64,
}

/// What one cell runs with.
pub(super) struct CellRun<'a> {
    pub target: &'a ConnectedTarget,
    pub uri: &'a str,
    pub plan: &'a WorkloadPlan,
    pub settings: &'a RunSettings,
    pub progress: &'a CellProgress,
    pub crew: Option<Helpers<'a>>,
    /// The meeting of a simultaneous slot's cells before their measured phases.
    pub meeting: Option<&'a Meeting>,
}

impl CellRun<'_> {
    pub(super) fn slice(&self) -> ClientSlice {
        self.crew.map_or(ClientSlice::WHOLE, |h| h.crew.slice())
    }

    /// Orders a phase of the other processes, if there are any.
    pub(super) async fn order(
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
    pub(super) async fn replies(
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

    /// Settles, measures one phase (a sweep's step of level `step`, when given), takes the
    /// server figures around it and restores the data after it, into `result`.
    pub(super) async fn measured_phase(
        &self,
        inputs: &CellInputs<'_>,
        step: Option<u64>,
        members: &Members,
        result: &mut CellResult,
        seeded: &mut Seeded,
    ) -> Result<(), CellFailure> {
        let (target, plan, progress) = (self.target, self.plan, self.progress);
        let limit = inputs.settings.operation_timeout;
        let (database, collection) =
            dataset::namespace(plan).map_err(|e| CellFailure::at("settings", e.to_string()))?;
        let settled = self.settle_first(limit, result).await?;

        progress.set(CellStep::Measuring);
        let shard_check = match plan {
            WorkloadPlan::Custom(custom) => ShardCheck::of_custom(target, custom),
            _ => ShardCheck::of(target, &database, &collection),
        };
        let shards_before = match &shard_check {
            Some(check) => Some(
                check
                    .read(target, limit)
                    .await
                    .map_err(|e| CellFailure::at(MEASURED_STEP, e))?,
            ),
            None => None,
        };
        let before = bounded(limit, "serverStatus", members.server_status())
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        let os_cpu = members.watch_os_cpu().await;
        let traffic = self.traffic(inputs, step, seeded.documents, result).await?;
        let after = bounded(limit, "serverStatus", members.server_status())
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        let os_cpu = os_cpu.stop().await;
        let (wall, operations) = (traffic.wall, traffic.operations);
        let mut stats = members
            .stats(&before, &after, os_cpu, &result.nodes, wall, operations)
            .map_err(|e| CellFailure::at(MEASURED_STEP, e.to_string()))?;
        stats.primary = settled.state.as_ref().and_then(|s| s.primary.clone());
        result.server_stats = Some(stats);
        self.note_interference(limit, &settled, shard_check.zip(shards_before), result)
            .await?;
        let sizes = dataset_sizes(target, plan, &database, &collection);
        let whole = deadline::whole_collection(limit);
        result.dataset.coll_stats = bounded(whole, "collStats", sizes)
            .await
            .map_err(|e| CellFailure::at("collecting statistics", e))?;

        progress.set(CellStep::Restoring);
        let record = self
            .restore(seeded, &traffic.changes, "measured")
            .await
            .map_err(|e| CellFailure::at("restoring after the measured phase", e))?;
        result.dataset.restores.push(record);

        Ok(())
    }

    /// Waits for the replica set to settle before a measured phase; notes a timeout as a
    /// reason the result is invalid.
    async fn settle_first(
        &self,
        limit: Duration,
        result: &mut CellResult,
    ) -> Result<Settled, CellFailure> {
        self.progress.set(CellStep::Settling);
        let settled = bounded(
            SETTLE_TIMEOUT + limit,
            "waiting for the replica set to settle",
            settle(&self.target.client, SETTLE_TIMEOUT),
        )
        .await
        .map_err(|e| CellFailure::at("settling", e))?;
        result.settle_seconds = Some(settled.seconds);
        result.invalid_reasons.extend(settled.timed_out.clone());
        Ok(settled)
    }

    /// The measured traffic of every client process: orders the others' phase, measures this
    /// one's, merges their parts into `result`.
    async fn traffic(
        &self,
        inputs: &CellInputs<'_>,
        step: Option<u64>,
        records: u64,
        result: &mut CellResult,
    ) -> Result<Traffic, CellFailure> {
        let settings = inputs.settings;
        let issued = self
            .order(records, |at| Task::Measure {
                start_at_ms: at,
                step,
            })
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        result.started_at = Some(
            k8s_openapi::jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
        );
        let common = self.meet().await?;
        let servers_during = server::ServerPhaseSampler::start(&self.target.canaries);
        let own = measure(inputs, self.target, issued.as_ref(), common, self.progress)
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        result.phase_canary = Some(own.during);
        result.server_phase_canaries = servers_during.finish().await;
        let mut parts = vec![own.partial];
        let replies = self
            .replies(issued.as_ref(), settings.measured, own.wall)
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        for reply in replies {
            parts.push(serde_json::from_value(reply).map_err(|e| {
                CellFailure::at(MEASURED_STEP, format!("a client process's result: {e}"))
            })?);
        }
        let slice = self.slice();
        let merged = partial::merge(
            &self.plan.name(),
            settings.workers.max(1),
            slice.count,
            parts,
        )
        .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        let traffic = Traffic {
            changes: own.changes,
            wall: merged.measured.duration(),
            operations: merged.measured.overall.completed,
        };
        result.measured = Some(merged.measured);
        result.client_cpu = Some(merged.cpu);
        result.client_path = merged.path;
        if slice.count > 1 {
            result.client_pods = merged.pods;
        }
        result.targeting = merged.targeting;
        result.worker_operations = merged.worker_operations;
        result.fingerprint = merged.fingerprint;
        if let Some(fatal) = merged.fatal {
            return Err(CellFailure::at(MEASURED_STEP, fatal));
        }
        Ok(traffic)
    }

    /// Notes what changed under the phase: a replica set's members or primary, and on a
    /// sharded target the distribution (`shards`: the check and what it read before).
    async fn note_interference(
        &self,
        limit: Duration,
        settled: &Settled,
        shards: Option<(ShardCheck, Distribution)>,
        result: &mut CellResult,
    ) -> Result<(), CellFailure> {
        let replica_state = server::replication::state(&self.target.client);
        let replica_after = bounded(limit, "replSetGetStatus", replica_state)
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        if let (Some(before), Some(after)) = (&settled.state, &replica_after) {
            result.invalid_reasons.extend(before.changes(after));
        }
        let Some((check, before)) = shards else {
            return Ok(());
        };
        let after = check
            .read(self.target, limit)
            .await
            .map_err(|e| CellFailure::at(MEASURED_STEP, e))?;
        let record = check.judge(before, after);
        // A migration during the phase is interference, as an election is; a skew is how this
        // key spreads this data, kept as a flag.
        if record.chunks_moved > 0 {
            result.invalid_reasons.push(format!(
                "sharding: {}",
                DistributionFlag::ChunksMoved {
                    moved: record.chunks_moved
                }
            ));
        }
        result.sharding = Some(record);
        Ok(())
    }

    /// In a simultaneous slot, waits for the other cells; the common start of the measured
    /// phases.
    async fn meet(&self) -> Result<Option<std::time::Instant>, CellFailure> {
        let Some(meeting) = self.meeting else {
            return Ok(None);
        };
        self.progress.set(CellStep::Waiting);
        let start = meeting
            .meet()
            .await
            .map_err(|e| CellFailure::at(MEETING_STEP, e.to_string()))?;
        self.progress.set(CellStep::Measuring);
        Ok(Some(start.at))
    }

    /// Undoes this process's `changes`, then has every other process undo its own, one after
    /// another (a restore deletes and inserts documents again, and the workers of two processes
    /// may have changed the same one), and checks the collection against the seeded digest.
    pub(super) async fn restore(
        &self,
        seeded: &mut Seeded,
        changes: &Changes,
        after: &str,
    ) -> Result<RestoreRecord, String> {
        let started = Instant::now();
        let limit = self.settings.operation_timeout;
        let mut restored = restore(self.target, self.plan, seeded.documents, changes, limit)
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
                let wait = grace(deadline::whole_collection(limit));
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

/// The step of a cell that stopped because another cell of its simultaneous slot did: its
/// collection is still in its seeded state.
pub const MEETING_STEP: &str = "waiting for the simultaneous cells";

/// The `collStats` sizes of what `plan` seeded: its collection, or all of a custom workload's.
async fn dataset_sizes(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    database: &str,
    collection: &str,
) -> Result<CollStatsSizes, server::StatsError> {
    let WorkloadPlan::Custom(custom) = plan else {
        return coll_stats(target, database, collection).await;
    };
    let mut parts = Vec::new();
    for c in custom.workload.collections() {
        parts.push(coll_stats(target, database, &c.name).await?);
    }
    Ok(CollStatsSizes::total(&parts))
}

/// Checks the collection against the seeded digest after a restore; seeds the size again
/// when they differ, and says why.
async fn verify(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    seeded: &mut Seeded,
    crew: Option<Helpers<'_>>,
) -> Result<Option<String>, String> {
    let client = &target.client;
    let limit = settings.operation_timeout;
    let now = dataset::plan_digest(client, plan, limit)
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

/// A sharded collection's shares per shard and its chunks.
type Distribution = (Vec<ShardShare>, Vec<Chunk>);

/// The distribution check of a sharded target's collection around a measured phase.
struct ShardCheck {
    database: String,
    collection: String,
    max_skew_percent: f64,
    topology: String,
}

impl ShardCheck {
    /// The check of `database.collection` on `target`, when the workload shards it there.
    fn of(target: &ConnectedTarget, database: &str, collection: &str) -> Option<ShardCheck> {
        let sharding = target.sharding.as_ref()?;
        sharding
            .workload
            .collections
            .iter()
            .any(|c| c.collection == collection)
            .then(|| ShardCheck::on(target, database, collection))?
    }

    /// The check of a custom workload on `target`: of its first collection with a shard key.
    fn of_custom(target: &ConnectedTarget, plan: &CustomPlan) -> Option<ShardCheck> {
        let first = plan
            .workload
            .collections()
            .iter()
            .find(|c| c.shard_key.is_some())?;
        ShardCheck::on(target, plan.workload.database(), &first.name)
    }

    fn on(target: &ConnectedTarget, database: &str, collection: &str) -> Option<ShardCheck> {
        let sharding = target.sharding.as_ref()?;
        Some(ShardCheck {
            database: database.to_owned(),
            collection: collection.to_owned(),
            max_skew_percent: sharding.workload.max_skew_percent(),
            topology: sharding.topology.clone(),
        })
    }

    async fn read(
        &self,
        target: &ConnectedTarget,
        limit: Duration,
    ) -> Result<Distribution, String> {
        let read = sharding::distribution(&target.client, &self.database, &self.collection, limit);
        bounded(
            deadline::whole_collection(limit),
            "reading the shard distribution",
            read,
        )
        .await
    }

    fn judge(
        &self,
        (before, chunks_before): Distribution,
        (after, chunks_after): Distribution,
    ) -> ShardingRecord {
        let flags =
            judge_distribution(&after, &chunks_before, &chunks_after, self.max_skew_percent);
        ShardingRecord {
            topology: self.topology.clone(),
            namespace: format!("{}.{}", self.database, self.collection),
            skew_percent: skew_percent(&after),
            max_skew_percent: self.max_skew_percent,
            chunks_moved: moved_chunks(&chunks_before, &chunks_after),
            flags: flags.iter().map(ToString::to_string).collect(),
            before,
            after,
        }
    }
}
