//! One worker's operation generator (specs/flights.md §3, §5, §6, §8). Builds on `version`,
//! `dataset`, `data`, `ids`, `document`, `ops` and `params`, never on `fingerprint`, which builds
//! on it; the unit tests, with testdata/reference.py's values, live in `tests.rs`.
//!
//! A [`Worker`] owns its stream (`key(seed, 2, w)` measured, `key(seed, 3, w)` warm-up) and its
//! insert lane, and reads its configuration once when built. Each operation draws, in order: the
//! type `U[0, 99]`; the split `U[0, 99]` (not for insert and transaction); the target (`P(hitRate)`
//! then `U[0, N0 − 1]` or the planned-miss value; aggregates always hit); then its own parameters.
//! Nothing here looks at server replies or the clock.

use super::data::{MISS_STATUS, STATUSES, cities};
use super::dataset::DatasetInfo;
use super::document::Flight;
use super::ids::{
    InsertLane, MISS_FLIGHT_ID_MAX, MISS_SEQ_BASE, RunPhase, object_id, seeded_flight_id,
};
use super::ops::{self, OpType, Variant};
use super::params::{Params, ParamsError};
use super::version::DATABASE;
use crate::workload::rng::{Stream, TAG_JITTER, TAG_MEASURED, TAG_WARMUP, key, threshold};
use crate::workload::{Command, Operation};
use mongodb::bson::{Document, doc};
use std::time::Duration;
use thiserror::Error;

/// Why a worker cannot be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorkerError {
    /// The traffic knobs are invalid.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// The worker index is not below `workers`.
    #[error("worker index {index} out of range: workers is {workers}")]
    WorkerIndex {
        /// The index given.
        index: u32,
        /// `workers`.
        workers: u32,
    },
    /// Targets need a non-empty seeded set (two documents for transactions).
    #[error("dataset has {documents} seeded documents; flights/v1 traffic needs at least {needed}")]
    DatasetTooSmall {
        /// N0.
        documents: u64,
        /// The minimum for this mix.
        needed: u64,
    },
    /// `insertBase` is not a run lane start (a positive multiple of 2^48 above every seeded seq).
    #[error("insertBase {0} is not a positive multiple of 2^48 above the seeded documents")]
    InsertBase(u64),
}

/// Where a find, update, delete or aggregate was aimed (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// At seeded document `seq` (its id, `_id` or field values). Matching nothing at run time
    /// means the document was deleted earlier: a stale miss.
    Hit {
        /// The target's document number.
        seq: u64,
    },
    /// At a value that never exists (planned miss).
    PlannedMiss,
    /// Inserts and transactions have no §3 target.
    None,
}

/// Which seeded documents an operation may change (§6): what a restore writes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Reads, planned misses, inserts (inserted documents lie above every seeded `seq` and are
    /// removed by range).
    Nothing,
    /// The seeded document `seq` (filters by `_id`).
    Document(u64),
    /// Every seeded document sharing `flight_id(seq)` (filters by flight_id: which of them a
    /// `*One` operation changes is the server's choice).
    SharingFlightId(u64),
    /// Two seeded documents (the seat transfer).
    Pair(u64, u64),
}

impl Writes {
    /// The seeded `seq`s (below `documents`) this may change.
    pub fn seqs(self, documents: u64) -> Vec<u64> {
        match self {
            Writes::Nothing => Vec::new(),
            Writes::Document(seq) => vec![seq],
            Writes::Pair(a, b) => vec![a, b],
            Writes::SharingFlightId(seq) => super::ids::seqs_sharing_flight_id(seq, documents),
        }
    }
}

/// One generated operation with what the runner needs besides the commands: its variant (for
/// per-variant explain sampling), its target (for hit, planned-miss and stale-miss counts) and
/// the seeded documents it may change (for restoring them).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedOp {
    /// What to send.
    pub operation: Operation,
    /// Which §5 shape it is.
    pub variant: Variant,
    /// Where it was aimed.
    pub target: Target,
    /// The seeded documents it may change.
    pub writes: Writes,
}

/// Cumulative shares, e.g. [60, 20, 10, 10, 0, 0] → [60, 80, 90, 100, 100, 100].
fn cumulative<const N: usize>(shares: [u32; N]) -> [u32; N] {
    let mut acc = 0;
    shares.map(|s| {
        acc += s;
        acc
    })
}

/// The index of the first cumulative share above `v` (v in 0..100, shares summing to 100).
fn pick<const N: usize>(v: u64, cumulative: &[u32; N]) -> usize {
    cumulative
        .iter()
        .position(|&c| v < u64::from(c))
        .unwrap_or(N - 1)
}

/// A deterministic generator of one worker's operations.
#[derive(Debug, Clone)]
pub struct Worker {
    stream: Stream,
    mix: [u32; 6],
    find_split: [u32; 3],
    update_split: [u32; 3],
    delete_split: [u32; 3],
    aggregate_split: [u32; 2],
    hit_threshold: u128,
    find_limit: i32,
    agg_window: i32,
    insert_batch_size: u32,
    dataset: DatasetInfo,
    lane: InsertLane,
}

impl Worker {
    /// Worker `worker_index` (0-based, below `params.workers`) of `phase` against `dataset`.
    ///
    /// # Errors
    /// Invalid traffic knobs ([`Params::validate_traffic`]), an index out of range, a dataset
    /// without seeded documents (or fewer than 2 with transactions), or an invalid insertBase.
    pub fn new(
        params: &Params,
        dataset: &DatasetInfo,
        worker_index: u32,
        phase: RunPhase,
    ) -> Result<Worker, WorkerError> {
        params.validate_traffic()?;
        if worker_index >= params.workers {
            return Err(WorkerError::WorkerIndex {
                index: worker_index,
                workers: params.workers,
            });
        }
        let needed = if params.transaction_percent > 0 { 2 } else { 1 };
        if dataset.documents < needed {
            return Err(WorkerError::DatasetTooSmall {
                documents: dataset.documents,
                needed,
            });
        }
        let base = dataset.insert_base;
        if base == 0 || !base.is_multiple_of(super::ids::RUN_SPACING) || base < dataset.documents {
            return Err(WorkerError::InsertBase(base));
        }
        let tag = match phase {
            RunPhase::Measured => TAG_MEASURED,
            RunPhase::Warmup => TAG_WARMUP,
        };
        let u = &params.update_split;
        let d = &params.delete_split;
        let f = &params.find_split;
        let a = &params.aggregate_split;
        Ok(Worker {
            stream: Stream::new(key(params.seed, tag, u64::from(worker_index))),
            mix: cumulative(params.percentages()),
            find_split: cumulative([f.by_flight_id, f.by_route, f.by_status]),
            update_split: cumulative([u.one_by_flight_id, u.one_by_id, u.many_by_flight_id]),
            delete_split: cumulative([d.one_by_flight_id, d.one_by_id, d.many_by_flight_id]),
            aggregate_split: cumulative([a.aircraft_window, a.route_summary]),
            hit_threshold: threshold(params.hit_rate),
            // validate_traffic bounds both by MAX_LIMIT, far inside i32.
            find_limit: params.find_limit as i32,
            agg_window: params.agg_window as i32,
            insert_batch_size: params.insert_batch_size,
            dataset: *dataset,
            lane: InsertLane::new(base, phase, params.workers, worker_index),
        })
    }

    /// The next operation to send.
    pub fn next_op(&mut self) -> Operation {
        self.next_planned().operation
    }

    /// The next operation with its variant and target.
    pub fn next_planned(&mut self) -> PlannedOp {
        let r = self.stream.uniform(0, 99);
        match OpType::ALL[pick(r, &self.mix)] {
            OpType::Find => self.find(),
            OpType::Update => self.update(),
            OpType::Delete => self.delete(),
            OpType::Insert => self.insert(),
            OpType::Aggregate => self.aggregate(),
            OpType::Transaction => self.transaction(),
        }
    }

    /// Documents this worker's insert lane has allocated so far (docsInserted if all succeed).
    pub fn documents_allocated(&self) -> u64 {
        self.lane.allocated()
    }

    /// The dataset this worker generates against (its fingerprint covers it).
    pub fn dataset(&self) -> &DatasetInfo {
        &self.dataset
    }

    /// `P(hitRate)` then, on a hit, `t = U[0, N0 − 1]`.
    fn aim(&mut self) -> Option<u64> {
        if self.stream.event(self.hit_threshold) {
            Some(self.any_seeded())
        } else {
            None
        }
    }

    fn any_seeded(&mut self) -> u64 {
        self.stream.uniform(0, self.dataset.documents - 1)
    }

    /// `{flight_id: F}` of a hit, or of a planned miss `U[1, 99999]`.
    fn flight_id_target(&mut self) -> (Document, Target) {
        match self.aim() {
            Some(t) => (
                ops::flight_id_filter(seeded_flight_id(t)),
                Target::Hit { seq: t },
            ),
            None => {
                let miss = self.stream.uniform(1, MISS_FLIGHT_ID_MAX) as i32;
                (ops::flight_id_filter(miss), Target::PlannedMiss)
            }
        }
    }

    /// `{_id: I}` of a hit, or of a planned miss with `seq = 2^63 + U[0, 2^32 − 1]`.
    fn id_target(&mut self) -> (Document, Target) {
        match self.aim() {
            Some(t) => (ops::id_filter(object_id(t)), Target::Hit { seq: t }),
            None => {
                let seq = MISS_SEQ_BASE + self.stream.uniform(0, u64::from(u32::MAX));
                (ops::id_filter(object_id(seq)), Target::PlannedMiss)
            }
        }
    }

    fn split(&mut self) -> u64 {
        self.stream.uniform(0, 99)
    }

    fn planned(&self, variant: Variant, commands: Vec<Command>, target: Target) -> PlannedOp {
        let writes = match (variant, target) {
            (Variant::UpdateOneById | Variant::DeleteOneById, Target::Hit { seq }) => {
                Writes::Document(seq)
            }
            (
                Variant::UpdateOneByFlightId
                | Variant::UpdateManyByFlightId
                | Variant::DeleteOneByFlightId
                | Variant::DeleteManyByFlightId,
                Target::Hit { seq },
            ) => Writes::SharingFlightId(seq),
            _ => Writes::Nothing,
        };
        PlannedOp {
            operation: Operation {
                label: variant.op_type().label(),
                database: DATABASE,
                commands,
            },
            variant,
            target,
            writes,
        }
    }

    fn single(&self, variant: Variant, body: Document, target: Target) -> PlannedOp {
        let drain_cursor = variant.op_type() == OpType::Aggregate;
        let mut command = Command::new(&body, drain_cursor, false);
        // Writes of one document are retryable, as the driver's updateOne/deleteOne are.
        if matches!(
            variant,
            Variant::UpdateOneByFlightId
                | Variant::UpdateOneById
                | Variant::DeleteOneByFlightId
                | Variant::DeleteOneById
        ) {
            command = command.retryable();
        }
        self.planned(variant, vec![command], target)
    }

    fn find(&mut self) -> PlannedOp {
        let v = self.split();
        match pick(v, &self.find_split) {
            0 => {
                let (filter, target) = self.flight_id_target();
                let body = ops::find_command(
                    filter,
                    Some(ops::flight_projection()),
                    None,
                    self.find_limit,
                );
                self.single(Variant::FindByFlightId, body, target)
            }
            1 => {
                let (origin, destination, target) = match self.aim() {
                    Some(t) => {
                        let (origin, destination, _) =
                            Flight::seeded_route_and_status(self.dataset.dataset_seed, t);
                        (origin, destination, Target::Hit { seq: t })
                    }
                    None => {
                        // origin = destination is never generated.
                        let c = *self.stream.choice(cities());
                        (c, c, Target::PlannedMiss)
                    }
                };
                let filter = doc! { "origin": origin, "destination": destination };
                let body = ops::find_command(filter, None, Some(doc! { "flight_date": -1 }), 20);
                self.single(Variant::FindByRoute, body, target)
            }
            _ => {
                let (status, target) = match self.aim() {
                    Some(t) => {
                        let (_, _, status) =
                            Flight::seeded_route_and_status(self.dataset.dataset_seed, t);
                        (status, Target::Hit { seq: t })
                    }
                    None => (MISS_STATUS, Target::PlannedMiss),
                };
                let body = ops::find_command(doc! { "status": status }, None, None, 20);
                self.single(Variant::FindByStatus, body, target)
            }
        }
    }

    /// `−1` or `+1` from `U[0, 1]`.
    fn sign(&mut self) -> i32 {
        if self.stream.uniform(0, 1) == 0 {
            -1
        } else {
            1
        }
    }

    fn seat_and_status(&mut self) -> Document {
        let d = self.sign();
        let status = *self.stream.choice(&STATUSES);
        ops::seat_and_status_update(d, status)
    }

    fn update(&mut self) -> PlannedOp {
        let v = self.split();
        match pick(v, &self.update_split) {
            0 => {
                let (q, target) = self.flight_id_target();
                let u = self.seat_and_status();
                self.single(
                    Variant::UpdateOneByFlightId,
                    ops::update_command(q, u, false),
                    target,
                )
            }
            1 => {
                let (q, target) = self.id_target();
                let u = self.seat_and_status();
                self.single(
                    Variant::UpdateOneById,
                    ops::update_command(q, u, false),
                    target,
                )
            }
            _ => {
                let (q, target) = self.flight_id_target();
                let u = if self.stream.uniform(0, 1) == 0 {
                    let s = self.sign();
                    let step = self.stream.uniform(1, 5) as i32;
                    doc! { "$inc": { "seats_available": s * step } }
                } else {
                    doc! { "$set": { "duration_minutes": self.stream.uniform(30, 900) as i32 } }
                };
                self.single(
                    Variant::UpdateManyByFlightId,
                    ops::update_command(q, u, true),
                    target,
                )
            }
        }
    }

    fn delete(&mut self) -> PlannedOp {
        let v = self.split();
        let (variant, (q, target), many) = match pick(v, &self.delete_split) {
            0 => (Variant::DeleteOneByFlightId, self.flight_id_target(), false),
            1 => (Variant::DeleteOneById, self.id_target(), false),
            _ => (Variant::DeleteManyByFlightId, self.flight_id_target(), true),
        };
        self.single(variant, ops::delete_command(q, many), target)
    }

    /// The worker's next `insertBatchSize` lane allocations; no draw from the worker stream.
    fn insert(&mut self) -> PlannedOp {
        let dataset_seed = self.dataset.dataset_seed;
        let lane = &mut self.lane;
        let flights = (0..self.insert_batch_size).map(|_| {
            let (seq, flight_id) = lane.allocate();
            Flight::generate(dataset_seed, seq, flight_id)
        });
        let (body, _) = ops::insert_command(flights, u64::from(self.insert_batch_size));
        let command = Command {
            body,
            drain_cursor: false,
            in_transaction: false,
            retryable: true,
        };
        self.planned(Variant::Insert, vec![command], Target::None)
    }

    fn aggregate(&mut self) -> PlannedOp {
        let v = self.split();
        let t = self.any_seeded();
        let (variant, pipeline) = if pick(v, &self.aggregate_split) == 0 {
            (
                Variant::AggregateAircraftWindow,
                ops::aircraft_window_pipeline(seeded_flight_id(t), self.agg_window),
            )
        } else {
            let (origin, destination, _) =
                Flight::seeded_route_and_status(self.dataset.dataset_seed, t);
            (
                Variant::AggregateRouteSummary,
                ops::route_summary_pipeline(origin, destination),
            )
        };
        self.single(
            variant,
            ops::aggregate_command(pipeline),
            Target::Hit { seq: t },
        )
    }

    /// Seat transfer: A = U[0, N0 − 1]; B = U[0, N0 − 2], plus 1 if ≥ A; p = U[1, n_A].
    fn transaction(&mut self) -> PlannedOp {
        let a = self.any_seeded();
        let mut b = self.stream.uniform(0, self.dataset.documents - 2);
        if b >= a {
            b += 1;
        }
        let fa = Flight::seeded(self.dataset.dataset_seed, a);
        let fb = Flight::seeded(self.dataset.dataset_seed, b);
        let p = self.stream.uniform(1, fa.passengers.len() as u64) as usize;
        let commands = ops::seat_transfer_commands(&fa, &fb, p)
            .into_iter()
            .map(|body| Command::new(&body, false, true))
            .collect();
        PlannedOp {
            writes: Writes::Pair(a, b),
            ..self.planned(Variant::Transaction, commands, Target::None)
        }
    }
}

/// One worker's think time (§9): `thinkTimeMs + U[0, thinkJitterMs]` from `key(seed, 4, w)`,
/// a stream of its own so pauses never change the traffic.
#[derive(Debug, Clone)]
pub struct ThinkTime {
    stream: Stream,
    base_ms: u64,
    jitter_ms: u64,
}

impl ThinkTime {
    /// Think time of worker `worker_index` of a run with `params`.
    pub fn new(params: &Params, worker_index: u32) -> ThinkTime {
        ThinkTime {
            stream: Stream::new(key(params.seed, TAG_JITTER, u64::from(worker_index))),
            base_ms: params.think_time_ms,
            jitter_ms: params.think_jitter_ms,
        }
    }

    /// The pause before the next operation (zero by default).
    pub fn next_pause(&mut self) -> Duration {
        let jitter = if self.jitter_ms == 0 {
            0
        } else {
            self.stream.uniform(0, self.jitter_ms)
        };
        Duration::from_millis(self.base_ms + jitter)
    }
}

#[cfg(test)]
mod tests;
