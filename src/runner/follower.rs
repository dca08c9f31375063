//! A client process other than the coordinator (`crew/`): it follows the coordinator's
//! orders on the board — load its share of the documents, run its workers' warm-up or
//! measured phase from the common start time, restore what its workers changed — and replies
//! to each order meant for it, until told to finish. It writes no result of its own: the coordinator merges its
//! partial measurement into the cell's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::api::WireCompressor;
use crate::plan::WorkloadPlan;

use super::benchmark::Benchmark;
use super::cell::{CellInputs, CellProgress, changes_of, measure};
use super::crew::{Issued, Member, Order, Task, instant_of};
use super::dataset::{Restored, restore, seed_flights, seed_ycsb};
use super::send::Changes;
use super::server::{ConnectedTarget, connect_with};

/// The targets a follower may be sent to: name and URI, in the runner's order.
pub struct Follower<'a> {
    pub bench: &'a Benchmark,
    pub targets: Vec<(String, String)>,
    pub compressors: Vec<WireCompressor>,
    pub connect_timeout: Duration,
}

/// What a follower keeps between orders.
#[derive(Default)]
struct State {
    connected: BTreeMap<usize, ConnectedTarget>,
    /// What its workers changed in the last phase, per target.
    held: BTreeMap<usize, Arc<Changes>>,
}

impl Follower<'_> {
    /// Follows orders numbered after `after` until the coordinator says finish (`true`) or
    /// the board is gone (`false`).
    pub async fn run(&self, member: &Member, after: u64) -> bool {
        let mut state = State::default();
        let mut last = after;
        loop {
            let Some(order) = member.next_order(last).await else {
                return false;
            };
            last = order.seq;
            if order.task == Task::Finish {
                return true;
            }
            if !order.is_for(member.slice().index) {
                continue;
            }
            let outcome = self.execute(member, &order, &mut state).await;
            if let Err(e) = &outcome {
                tracing::warn!(seq = order.seq, "{e}");
            }
            member.reply(order.seq, outcome).await;
        }
    }

    async fn target<'s>(
        &self,
        connected: &'s mut BTreeMap<usize, ConnectedTarget>,
        i: usize,
    ) -> Result<&'s ConnectedTarget, String> {
        match connected.entry(i) {
            std::collections::btree_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::btree_map::Entry::Vacant(e) => {
                let (name, uri) = self.targets.get(i).ok_or_else(|| {
                    format!("the order names target {i}, beyond the runner's targets")
                })?;
                let workers = self.bench.settings.most_workers();
                let target =
                    connect_with(name, uri, workers, self.connect_timeout, &self.compressors)
                        .await
                        .map_err(|e| e.to_string())?;
                Ok(e.insert(target))
            }
        }
    }

    async fn execute(
        &self,
        member: &Member,
        order: &Order,
        state: &mut State,
    ) -> Result<serde_json::Value, String> {
        let (plan, settings) = (&self.bench.plan, &self.bench.settings);
        let limit = settings.operation_timeout;
        let slice = member.slice();
        let inputs = CellInputs::new(plan, settings, order.records, slice);
        let progress = CellProgress::default();
        let target = self.target(&mut state.connected, order.target).await?;
        match order.task {
            Task::Seed { from, to } => {
                let range = slice.documents(from..to);
                match plan {
                    WorkloadPlan::Flights(params) => {
                        let bytes = seed_flights::load_share(&target.client, params, range, limit)
                            .await
                            .map_err(|e| e.to_string())?;
                        Ok(serde_json::json!(bytes))
                    }
                    WorkloadPlan::Ycsb { raw, seed } => {
                        let workers = slice.workers(settings.workers.max(1)).len() as u32;
                        seed_ycsb::load_share(target, raw, *seed, to, range, workers, limit)
                            .await
                            .map_err(|e| e.to_string())?;
                        Ok(serde_json::Value::Null)
                    }
                    WorkloadPlan::Custom(_) => Err(
                        "a custom workload is seeded by the first client process alone, which \
                         sends no such order"
                            .to_owned(),
                    ),
                }
            }
            Task::Warmup { start_at_ms } => {
                let start = Some(instant_of(start_at_ms));
                let outcome = inputs
                    .phase("warmup", target, settings.warmup, start, &progress)
                    .await
                    .map_err(|failure| failure.to_string())?;
                state
                    .held
                    .insert(order.target, changes_of(&outcome.sources));
                if let Some(fatal) = outcome.fatal {
                    return Err(format!("warmup: {fatal}"));
                }
                Ok(serde_json::json!(outcome.recorder.overall().per_second()))
            }
            Task::Measure { start_at_ms, step } => {
                let stepped;
                let inputs = match step {
                    Some(level) => {
                        stepped = settings.at_step(level);
                        CellInputs::new(plan, &stepped, order.records, slice)
                    }
                    None => inputs,
                };
                let issued = Issued {
                    seq: order.seq,
                    only: None,
                    start: Some(instant_of(start_at_ms)),
                    start_at_ms,
                };
                let measured = measure(&inputs, target, Some(&issued), None, &progress).await?;
                state.held.insert(order.target, measured.changes);
                serde_json::to_value(&measured.partial).map_err(|e| e.to_string())
            }
            Task::Restore => {
                let restored = match state.held.remove(&order.target) {
                    // The first process reloads every collection the phase may have written.
                    Some(_) if matches!(plan, WorkloadPlan::Custom(_)) => Restored::default(),
                    Some(changes) => restore(target, plan, order.records, &changes, limit)
                        .await
                        .map_err(|e| format!("restoring: {e}"))?,
                    None => Restored::default(),
                };
                serde_json::to_value(restored).map_err(|e| e.to_string())
            }
            Task::Finish => Ok(serde_json::Value::Null),
        }
    }
}
