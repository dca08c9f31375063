//! One worker's operation stream (specs/ycsb.md §4, §5, §8): load-phase inserts or run-phase
//! operations, each a YCSB binding call rendered as MongoDB commands. Builds on the lower files of
//! `ycsb/` (properties, chooser, distributions, record, values, commands, shared); only
//! `fingerprint` builds on it. The unit tests live in `tests/`, by theme.
//!
//! Draw order per run-phase operation (one stream per worker, see [`rng`]): one double
//! for the operation; then per kind — read: key, field (if `readallfields=false`); update: key,
//! values; insert: values; scan: key, length, field; read-modify-write: key, field, values. Values
//! draw, per field in `field0…` order, a length then the bytes. A key draw takes as many draws as
//! its distribution and YCSB's rejection of unacknowledged keys need.
//!
//! A load-phase insert draws nothing from the worker's stream: record `k` comes from its own
//! stream ([`RecordBuilder::load_document`]), so it does not depend on the worker count.

use std::sync::Arc;

use mongodb::bson::{Bson, Document};

use super::chooser::{KeyChooser, KeyView, build_chooser};
use super::commands;
use super::distributions::{Discrete, Uniform, Zipfian};
use super::error::WorkerError;
pub use super::ops::{Call, OpKind, YcsbOp, YcsbPhase};
use super::partition::quota;
use super::properties::{Properties, ScanLengthDistribution};
use super::record::RecordBuilder;
use super::rng::{self, Rng};
use super::shared::SharedState;
use super::values::{java_hash_order, java_hashset_capacity};
use crate::workload::Operation;

/// Scan lengths.
#[derive(Debug, Clone)]
enum ScanLength {
    Uniform(Uniform),
    Zipfian(Zipfian),
}

/// The operation stream of one worker of one client process.
///
/// Call [`Worker::next`] (or [`Worker::next_op`]) only once the previous operation has finished:
/// YCSB keeps exactly one operation in flight per worker, and a run-phase insert is acknowledged
/// (made readable for key choice) when the worker asks for its next operation, when
/// [`Worker::complete`] is called, or when the worker is dropped.
#[derive(Debug)]
pub struct Worker {
    phase: YcsbPhase,
    rng: Rng,
    remaining: Option<u64>,
    deterministic: bool,
    database: &'static str,
    table: String,
    /// Keys, documents and values.
    records: RecordBuilder,
    /// Field indexes in Java `HashSet` order for a full projection.
    projection_order: Vec<usize>,
    data_integrity: bool,
    read_all_fields: bool,
    read_all_fields_by_name: bool,
    write_all_fields: bool,
    upsert: bool,
    batch_size: usize,
    /// `mongobench.batch.flush`: yield the batch remainder once the quota is done.
    batch_flush: bool,
    batch: Vec<Document>,
    batch_last_keynum: u64,
    // load phase
    load_next: u64,
    load_stride: u64,
    // run phase
    mix: Option<Discrete<OpKind>>,
    chooser: Option<KeyChooser>,
    scan_length: ScanLength,
    view: KeyView,
    pending_ack: Option<u64>,
}

/// The seed of worker `worker_index`'s own stream, apart per phase and client pod.
fn worker_stream(props: &Properties, seed: u64, worker_index: u32, phase: YcsbPhase) -> u64 {
    let tag = match phase {
        YcsbPhase::Load => rng::TAG_LOAD,
        YcsbPhase::Run => rng::TAG_RUN,
    };
    rng::key(
        rng::key(seed, tag, u64::from(props.client_index)),
        rng::TAG_WORKER,
        u64::from(worker_index),
    )
}

/// The worker's share of the phase's operations; `None` for a run bounded by time alone.
fn operation_budget(
    props: &Properties,
    worker_index: u32,
    workers: u32,
    phase: YcsbPhase,
) -> Result<Option<u64>, WorkerError> {
    match phase {
        YcsbPhase::Load => Ok(Some(quota(props.load_range().1, workers, worker_index))),
        YcsbPhase::Run if props.operation_count == 0 => {
            if props.max_execution_time == 0 {
                return Err(WorkerError::Unbounded);
            }
            Ok(None)
        }
        YcsbPhase::Run => Ok(Some(quota(props.operation_count, workers, worker_index))),
    }
}

/// The run-phase operation kinds drawn by their normalised proportions (zero weights left out;
/// `None` when no weight is positive).
fn operation_mix(weights: &[f64; 5]) -> Option<Discrete<OpKind>> {
    let kinds = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
    ];
    Discrete::new(
        weights
            .iter()
            .zip(kinds)
            .filter(|(w, _)| **w > 0.0)
            .map(|(w, k)| (*w, k))
            .collect(),
    )
}

/// Which inserted keys the worker sees: its own lane with `mongobench.txninsert.partition`,
/// else the process's shared frontier.
fn key_view(
    props: &Properties,
    worker_index: u32,
    workers: u32,
    shared: &Arc<SharedState>,
) -> KeyView {
    if !props.txninsert_partition {
        return KeyView::Shared(Arc::clone(shared));
    }
    KeyView::Lane {
        shared: Arc::clone(shared),
        start: shared.insert_start(),
        lanes: u64::from(props.client_count) * u64::from(workers),
        lane: u64::from(worker_index) * u64::from(props.client_count)
            + u64::from(props.client_index),
        inserted: 0,
    }
}

/// The scan length distribution over `[minscanlength, maxscanlength]`.
fn scan_length(props: &Properties) -> ScanLength {
    match props.scan_length_distribution {
        ScanLengthDistribution::Uniform => ScanLength::Uniform(
            Uniform::new(props.min_scan_length, props.max_scan_length)
                .expect("validated: minscanlength <= maxscanlength"),
        ),
        ScanLengthDistribution::Zipfian => ScanLength::Zipfian(Zipfian::new(
            props.min_scan_length,
            props.max_scan_length - props.min_scan_length + 1,
            super::distributions::ZIPFIAN_CONSTANT,
        )),
    }
}

impl Worker {
    /// Worker `worker_index` of `workers` in this client process (client pod
    /// `props.client_index` of `props.client_count`), drawing from the stream of `seed`.
    ///
    /// Load: worker `w` inserts keys `first + w + j·workers` for `j < quota`, where `(first, n)`
    /// is [`Properties::load_range`] and the quota is §2's share of `n`. Run: `quota(operationcount)` operations, or
    /// unbounded when `operationcount=0`. `shared` is the process's [`SharedState`], created once
    /// per phase and passed to every worker.
    ///
    /// # Errors
    /// [`WorkerError`] when the index is out of range, an unbounded run has no time limit, or the
    /// request distribution cannot produce a readable key.
    pub fn new(
        props: &Properties,
        seed: u64,
        worker_index: u32,
        workers: u32,
        phase: YcsbPhase,
        shared: &Arc<SharedState>,
    ) -> Result<Worker, WorkerError> {
        if worker_index >= workers {
            return Err(WorkerError::WorkerIndex {
                index: worker_index,
                workers,
            });
        }
        let remaining = operation_budget(props, worker_index, workers, phase)?;
        let weights = props.proportions.normalised();
        let reads_keys =
            weights[0] > 0.0 || weights[1] > 0.0 || weights[3] > 0.0 || weights[4] > 0.0;
        let inserts = weights[2] > 0.0;
        let view = key_view(props, worker_index, workers, shared);
        let chooser = if phase == YcsbPhase::Run && reads_keys {
            Some(build_chooser(
                props,
                seed,
                worker_index,
                workers,
                shared,
                view.frontier(),
            )?)
        } else {
            None
        };

        let records = RecordBuilder::new(props, seed);
        let field_names = records.field_names();
        let projection_order =
            java_hash_order(field_names, java_hashset_capacity(field_names.len()));
        Ok(Worker {
            phase,
            rng: Rng::new(worker_stream(props, seed, worker_index, phase)),
            remaining,
            deterministic: phase == YcsbPhase::Load
                || props.txninsert_partition
                || workers == 1
                || !inserts,
            database: crate::workload::intern(&props.database),
            table: props.table.clone(),
            records,
            projection_order,
            data_integrity: props.data_integrity,
            read_all_fields: props.read_all_fields,
            read_all_fields_by_name: props.read_all_fields_by_name,
            write_all_fields: props.write_all_fields,
            upsert: props.upsert,
            batch_size: props.batch_size as usize,
            batch_flush: props.batch_flush,
            batch: Vec::new(),
            batch_last_keynum: 0,
            load_next: props.load_range().0 + u64::from(worker_index),
            load_stride: u64::from(workers),
            mix: operation_mix(&weights),
            chooser,
            scan_length: scan_length(props),
            view,
            pending_ack: None,
        })
    }

    /// Whether this worker's operations are a pure function of (seed, worker index, worker
    /// count, operation count). False only in a run phase with inserts, several workers and
    /// shared insert keys (`mongobench.txninsert.partition=false`, YCSB's behaviour): insert keys
    /// and the acknowledged frontier then depend on how workers interleave.
    pub fn is_deterministic(&self) -> bool {
        self.deterministic
    }

    /// Operations left (`None`: unbounded).
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    /// Replaces the operation budget, e.g. to regenerate a duration-bound run from the
    /// per-worker counts it recorded (`None`: unbounded).
    pub fn set_remaining(&mut self, remaining: Option<u64>) {
        self.remaining = remaining;
    }

    /// Acknowledges the last run-phase insert now (YCSB does so as soon as the insert call
    /// returns, failed or not). Idempotent; [`Worker::next`] calls it too.
    pub fn complete(&mut self) {
        if let Some(k) = self.pending_ack.take() {
            self.view.acknowledge(k);
        }
    }

    /// The next operation, or `None` when the phase's quota is done.
    pub fn next_op(&mut self) -> Option<Operation> {
        self.next().map(|op| op.operation)
    }

    /// The next operation with its YCSB details, or `None` when the quota is done. With
    /// `mongobench.batch.flush=true` and `batchsize > 1`, the unflushed batch remainder follows
    /// the quota as one more operation (an INSERT of the remaining documents).
    #[allow(clippy::should_implement_trait)] // not an Iterator: it must not run ahead of execution
    pub fn next(&mut self) -> Option<YcsbOp> {
        self.complete();
        match &mut self.remaining {
            Some(0) if self.batch_flush => return self.take_remainder(),
            Some(0) => return None,
            Some(n) => *n -= 1,
            None => {}
        }
        Some(match self.phase {
            YcsbPhase::Load => {
                let k = self.load_next;
                self.load_next += self.load_stride;
                self.insert(k)
            }
            YcsbPhase::Run => self.transaction(),
        })
    }

    /// The batch remainder this worker has not flushed (`batchsize > 1`) as one INSERT
    /// operation, emptying the buffer. YCSB drops the remainder silently; with
    /// `mongobench.batch.flush=true` [`Worker::next`] yields it after the quota, and a runner that
    /// stops a worker early (a duration-bound phase) takes it here to send it at cleanup.
    pub fn take_remainder(&mut self) -> Option<YcsbOp> {
        let last = self.batch.last()?;
        let key = last.get_str("_id").unwrap_or_default().to_string();
        let documents = std::mem::take(&mut self.batch);
        let count = documents.len();
        let commands = self.batch_commands(documents);
        Some(YcsbOp {
            kind: OpKind::Insert,
            keynum: self.batch_last_keynum,
            key,
            calls: vec![Call::Insert],
            buffered: false,
            documents: count,
            verify: false,
            operation: self.operation(OpKind::Insert, commands),
        })
    }

    /// Documents waiting in the batch buffer.
    pub fn buffered_documents(&self) -> usize {
        self.batch.len()
    }

    fn operation(&self, kind: OpKind, commands: Vec<crate::workload::Command>) -> Operation {
        Operation {
            label: kind.label(),
            database: self.database,
            commands,
        }
    }

    fn transaction(&mut self) -> YcsbOp {
        let kind = self
            .mix
            .as_ref()
            .expect("validated: at least one positive proportion")
            .sample(&mut self.rng);
        match kind {
            OpKind::Read => self.read(),
            OpKind::Update => self.update(),
            OpKind::Insert => {
                let k = self.view.next_insert_key();
                self.pending_ack = Some(k);
                self.insert(k)
            }
            OpKind::Scan => self.scan(),
            OpKind::ReadModifyWrite => self.read_modify_write(),
        }
    }

    fn next_keynum(&mut self) -> u64 {
        let frontier = self.view.frontier();
        let chooser = self
            .chooser
            .as_mut()
            .expect("a chooser exists whenever the mix reads keys");
        let v = chooser.next_keynum(&mut self.rng, frontier);
        self.view.key_of(v)
    }

    fn random_field(&mut self) -> usize {
        self.rng
            .range(0, self.records.field_names().len() as u64 - 1) as usize
    }

    /// Update values from the worker's stream: one random field, or all of them.
    fn write_values(&mut self, key: &str) -> Document {
        let values: Vec<(usize, Bson)> = if self.write_all_fields {
            self.records.all_values(&mut self.rng, key)
        } else {
            let f = self.random_field();
            vec![(f, self.records.value(&mut self.rng, key, f))]
        };
        let names = self.records.field_names();
        values
            .into_iter()
            .map(|(f, v)| (names[f].clone(), v))
            .collect()
    }

    /// The read field list: one random field, all fields (dataintegrity, or readallfieldsbyname
    /// on master), or none (whole document).
    fn read_fields(&mut self, full_list: bool) -> Option<Vec<usize>> {
        if !self.read_all_fields {
            Some(vec![self.random_field()])
        } else if full_list {
            Some(self.projection_order.clone())
        } else {
            None
        }
    }

    fn names(&self, fields: &Option<Vec<usize>>) -> Option<Vec<&str>> {
        fields.as_ref().map(|fs| {
            fs.iter()
                .map(|&f| self.records.field_names()[f].as_str())
                .collect()
        })
    }

    fn key(&self, keynum: u64) -> String {
        self.records.key(keynum)
    }

    fn read(&mut self) -> YcsbOp {
        let keynum = self.next_keynum();
        let key = self.key(keynum);
        let full = self.data_integrity || self.read_all_fields_by_name;
        let fields = self.read_fields(full);
        let command = commands::read(&self.table, &key, self.names(&fields).as_deref());
        YcsbOp {
            kind: OpKind::Read,
            keynum,
            calls: vec![Call::Read],
            buffered: false,
            documents: 0,
            verify: self.data_integrity,
            operation: self.operation(OpKind::Read, vec![command]),
            key,
        }
    }

    fn update(&mut self) -> YcsbOp {
        let keynum = self.next_keynum();
        let key = self.key(keynum);
        let values = self.write_values(&key);
        let command = commands::update(&self.table, &key, values);
        YcsbOp {
            kind: OpKind::Update,
            keynum,
            calls: vec![Call::Update],
            buffered: false,
            documents: 0,
            verify: false,
            operation: self.operation(OpKind::Update, vec![command]),
            key,
        }
    }

    fn scan(&mut self) -> YcsbOp {
        let keynum = self.next_keynum();
        let key = self.key(keynum);
        let len = match &mut self.scan_length {
            ScanLength::Uniform(u) => u.sample(&mut self.rng),
            ScanLength::Zipfian(z) => {
                let items = z.items();
                z.sample(&mut self.rng, items)
            }
        };
        let fields = self.read_fields(self.read_all_fields_by_name);
        let limit = i32::try_from(len).expect("validated: maxscanlength <= 2^31 - 1");
        let command = commands::scan(&self.table, &key, limit, self.names(&fields).as_deref());
        YcsbOp {
            kind: OpKind::Scan,
            keynum,
            calls: vec![Call::Scan],
            buffered: false,
            documents: 0,
            verify: false,
            operation: self.operation(OpKind::Scan, vec![command]),
            key,
        }
    }

    fn read_modify_write(&mut self) -> YcsbOp {
        let keynum = self.next_keynum();
        let key = self.key(keynum);
        let fields = self.read_fields(false);
        let values = self.write_values(&key);
        let read = commands::read(&self.table, &key, self.names(&fields).as_deref());
        let update = commands::update(&self.table, &key, values);
        YcsbOp {
            kind: OpKind::ReadModifyWrite,
            keynum,
            calls: vec![Call::Read, Call::Update],
            buffered: false,
            documents: 0,
            verify: self.data_integrity,
            operation: self.operation(OpKind::ReadModifyWrite, vec![read, update]),
            key,
        }
    }

    /// The flush of a batch: one command, or several within MongoDB's command limits.
    fn batch_commands(&self, documents: Vec<Document>) -> Vec<crate::workload::Command> {
        if self.upsert {
            commands::upsert_many(&self.table, documents)
        } else {
            commands::insert_many(&self.table, documents)
        }
    }

    /// Inserts record `keynum`: in the load phase the record's own document
    /// ([`RecordBuilder::load_document`]), in the run phase values from the worker's stream.
    fn insert(&mut self, keynum: u64) -> YcsbOp {
        let key = self.key(keynum);
        let document = match self.phase {
            YcsbPhase::Load => self.records.load_document(keynum),
            YcsbPhase::Run => self.records.document(&mut self.rng, keynum),
        };
        let (commands, buffered, documents) = if self.batch_size == 1 {
            let command = if self.upsert {
                commands::upsert_one(&self.table, document)
            } else {
                commands::insert_one(&self.table, document)
            };
            (vec![command], false, 1)
        } else {
            self.batch.push(document);
            self.batch_last_keynum = keynum;
            if self.batch.len() == self.batch_size {
                let batch = std::mem::take(&mut self.batch);
                (self.batch_commands(batch), false, self.batch_size)
            } else {
                (Vec::new(), true, 0)
            }
        };
        YcsbOp {
            kind: OpKind::Insert,
            keynum,
            calls: if buffered {
                Vec::new()
            } else {
                vec![Call::Insert]
            },
            buffered,
            documents,
            verify: false,
            operation: self.operation(OpKind::Insert, commands),
            key,
        }
    }
}

impl Drop for Worker {
    /// A dropped worker acknowledges its last insert so the shared frontier is not stuck on it.
    fn drop(&mut self) {
        self.complete();
    }
}

#[cfg(test)]
mod tests;
