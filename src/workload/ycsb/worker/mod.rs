//! One worker's operation stream (specs/ycsb.md §4, §5, §8): load-phase inserts or run-phase
//! operations, each a YCSB binding call rendered as MongoDB commands.
//!
//! Draw order per run-phase operation (one stream per worker, see [`rng`]): one double
//! for the operation; then per kind — read: key, field (if `readallfields=false`); update: key,
//! values; insert: values; scan: key, length, field; read-modify-write: key, field, values. Values
//! draw, per field in `field0…` order, a length then the bytes. A key draw takes as many draws as
//! its distribution and YCSB's rejection of unacknowledged keys need.
//!
//! A load-phase insert draws nothing from the worker's stream: record `k` comes from its own
//! stream ([`RecordBuilder::load_document`]), so it does not depend on the worker count.

use std::sync::{Arc, Mutex, OnceLock};

use mongodb::bson::{Bson, Document};

use super::chooser::{KeyChooser, KeyView, build_chooser};
use super::commands;
use super::distributions::{Discrete, Uniform, Zipfian};
use super::error::WorkerError;
pub use super::ops::{Call, OpKind, Phase, YcsbOp};
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

/// Interns database names for [`Operation::database`] (one leak per distinct name).
fn intern(name: &str) -> &'static str {
    if name == "ycsb" {
        return "ycsb";
    }
    static NAMES: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(leaked);
    leaked
}

/// The operation stream of one worker of one client process.
///
/// Call [`Worker::next`] (or [`Worker::next_op`]) only once the previous operation has finished:
/// YCSB keeps exactly one operation in flight per worker, and a run-phase insert is acknowledged
/// (made readable for key choice) when the worker asks for its next operation, when
/// [`Worker::complete`] is called, or when the worker is dropped.
#[derive(Debug)]
pub struct Worker {
    phase: Phase,
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
        phase: Phase,
        shared: &Arc<SharedState>,
    ) -> Result<Worker, WorkerError> {
        if worker_index >= workers {
            return Err(WorkerError::WorkerIndex {
                index: worker_index,
                workers,
            });
        }
        let tag = match phase {
            Phase::Load => rng::TAG_LOAD,
            Phase::Run => rng::TAG_RUN,
        };
        let stream = rng::key(
            rng::key(seed, tag, u64::from(props.client_index)),
            rng::TAG_WORKER,
            u64::from(worker_index),
        );
        let remaining = match phase {
            Phase::Load => Some(quota(props.load_range().1, workers, worker_index)),
            Phase::Run if props.operation_count == 0 => {
                if props.max_execution_time == 0 {
                    return Err(WorkerError::Unbounded);
                }
                None
            }
            Phase::Run => Some(quota(props.operation_count, workers, worker_index)),
        };
        let weights = props.proportions.normalised();
        let kinds = [
            OpKind::Read,
            OpKind::Update,
            OpKind::Insert,
            OpKind::Scan,
            OpKind::ReadModifyWrite,
        ];
        let mix = Discrete::new(
            weights
                .iter()
                .zip(kinds)
                .filter(|(w, _)| **w > 0.0)
                .map(|(w, k)| (*w, k))
                .collect(),
        );
        let reads_keys =
            weights[0] > 0.0 || weights[1] > 0.0 || weights[3] > 0.0 || weights[4] > 0.0;
        let inserts = weights[2] > 0.0;

        let view = if props.txninsert_partition {
            let lanes = u64::from(props.client_count) * u64::from(workers);
            KeyView::Lane {
                shared: Arc::clone(shared),
                start: shared.insert_start(),
                lanes,
                lane: u64::from(worker_index) * u64::from(props.client_count)
                    + u64::from(props.client_index),
                inserted: 0,
            }
        } else {
            KeyView::Shared(Arc::clone(shared))
        };
        let chooser = if phase == Phase::Run && reads_keys {
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
        let scan_length = match props.scan_length_distribution {
            ScanLengthDistribution::Uniform => ScanLength::Uniform(
                Uniform::new(props.min_scan_length, props.max_scan_length)
                    .expect("validated: minscanlength <= maxscanlength"),
            ),
            ScanLengthDistribution::Zipfian => ScanLength::Zipfian(Zipfian::new(
                props.min_scan_length,
                props.max_scan_length - props.min_scan_length + 1,
                super::distributions::ZIPFIAN_CONSTANT,
            )),
        };
        Ok(Worker {
            phase,
            rng: Rng::new(stream),
            remaining,
            deterministic: phase == Phase::Load
                || props.txninsert_partition
                || workers == 1
                || !inserts,
            database: intern(&props.database),
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
            mix,
            chooser,
            scan_length,
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
            Phase::Load => {
                let k = self.load_next;
                self.load_next += self.load_stride;
                self.insert(k)
            }
            Phase::Run => self.transaction(),
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
            Phase::Load => self.records.load_document(keynum),
            Phase::Run => self.records.document(&mut self.rng, keynum),
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
mod tests {
    use super::*;
    use crate::workload::ycsb::keys::key_name;
    use crate::workload::ycsb::properties::RawProperties;
    use crate::workload::ycsb::values::deterministic_value;
    use mongodb::bson::spec::BinarySubtype;
    use std::collections::{BTreeSet, HashMap};

    fn props(preset: Option<&str>, extra: &[(&str, &str)]) -> Properties {
        let mut raw = match preset {
            Some(p) => RawProperties::preset(p).expect("preset"),
            None => RawProperties::new(),
        };
        for (k, v) in extra {
            raw.set(*k, *v);
        }
        Properties::from_raw(&raw).expect("valid properties")
    }

    fn worker(
        p: &Properties,
        seed: u64,
        w: u32,
        n: u32,
        phase: Phase,
        s: &Arc<SharedState>,
    ) -> Worker {
        Worker::new(p, seed, w, n, phase, s).expect("valid worker")
    }

    fn drain(w: &mut Worker) -> Vec<YcsbOp> {
        std::iter::from_fn(|| w.next()).collect()
    }

    #[test]
    fn load_workers_split_the_key_range_round_robin() {
        let p = props(Some("a"), &[("recordcount", "10")]);
        let s = SharedState::new(10);
        let w0: Vec<u64> = drain(&mut worker(&p, 1, 0, 3, Phase::Load, &s))
            .iter()
            .map(|o| o.keynum)
            .collect();
        let w1: Vec<u64> = drain(&mut worker(&p, 1, 1, 3, Phase::Load, &s))
            .iter()
            .map(|o| o.keynum)
            .collect();
        let w2: Vec<u64> = drain(&mut worker(&p, 1, 2, 3, Phase::Load, &s))
            .iter()
            .map(|o| o.keynum)
            .collect();
        assert_eq!(w0, [0, 3, 6, 9]);
        assert_eq!(w1, [1, 4, 7]);
        assert_eq!(w2, [2, 5, 8]);
    }

    #[test]
    fn load_insert_document_has_the_binding_shape() {
        let p = props(Some("a"), &[]);
        let s = SharedState::new(1000);
        let op = worker(&p, 7, 0, 1, Phase::Load, &s).next().expect("one op");
        assert_eq!(
            (op.kind, op.keynum, op.key.as_str()),
            (OpKind::Insert, 0, "user6284781860667377211")
        );
        assert_eq!(op.operation.label, "INSERT");
        assert_eq!(op.operation.database, "ycsb");
        assert_eq!(op.calls, [Call::Insert]);
        let body = op.operation.commands[0].to_document();
        assert_eq!(body.get_str("insert").unwrap(), "usertable");
        assert!(body.get_bool("ordered").unwrap());
        let docs = body.get_array("documents").unwrap();
        let doc = docs[0].as_document().unwrap();
        let names: Vec<&str> = doc.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "_id", "field1", "field0", "field7", "field6", "field9", "field8", "field3",
                "field2", "field5", "field4"
            ]
        );
        for (name, value) in doc.iter().skip(1) {
            match value {
                Bson::Binary(b) => {
                    assert_eq!(b.subtype, BinarySubtype::Generic, "{name}");
                    assert_eq!(b.bytes.len(), 100, "{name}");
                }
                other => panic!("{name} is {other:?}"),
            }
        }
        // 4 + _id (1 + 4 + 4 + 24) + 10 × (1 + 7 + 4 + 1 + 100) + 1 = 1168 bytes (§6).
        let mut bytes = Vec::new();
        doc.to_writer(&mut bytes).unwrap();
        assert_eq!(bytes.len(), 1168);
    }

    #[test]
    fn run_mix_matches_each_workload_proportions() {
        let expected: [(&str, [f64; 5]); 6] = [
            ("a", [0.5, 0.5, 0.0, 0.0, 0.0]),
            ("b", [0.95, 0.05, 0.0, 0.0, 0.0]),
            ("c", [1.0, 0.0, 0.0, 0.0, 0.0]),
            ("d", [0.95, 0.0, 0.05, 0.0, 0.0]),
            ("e", [0.0, 0.0, 0.05, 0.95, 0.0]),
            ("f", [0.5, 0.0, 0.0, 0.0, 0.5]),
        ];
        let kinds = [
            OpKind::Read,
            OpKind::Update,
            OpKind::Insert,
            OpKind::Scan,
            OpKind::ReadModifyWrite,
        ];
        for (name, shares) in expected {
            let n = 40_000u64;
            let p = props(
                Some(name),
                &[("operationcount", &n.to_string()), ("fieldlength", "4")],
            );
            let s = SharedState::new(p.record_count);
            let mut w = worker(&p, 3, 0, 1, Phase::Run, &s);
            let mut counts: HashMap<OpKind, u64> = HashMap::new();
            for op in drain(&mut w) {
                *counts.entry(op.kind).or_default() += 1;
            }
            assert_eq!(counts.values().sum::<u64>(), n);
            for (kind, share) in kinds.iter().zip(shares) {
                let got = *counts.get(kind).unwrap_or(&0) as f64 / n as f64;
                let sigma = (share * (1.0 - share) / n as f64).sqrt();
                assert!(
                    (got - share).abs() <= 5.0 * sigma,
                    "workload {name} {kind:?}: {got} vs {share}"
                );
            }
        }
    }

    #[test]
    fn operation_choice_over_a_million_draws_is_tight() {
        // The mix alone (no documents built), 10^6 draws per workload, 5-sigma bounds.
        let expected: [(&str, [f64; 5]); 6] = [
            ("a", [0.5, 0.5, 0.0, 0.0, 0.0]),
            ("b", [0.95, 0.05, 0.0, 0.0, 0.0]),
            ("c", [1.0, 0.0, 0.0, 0.0, 0.0]),
            ("d", [0.95, 0.0, 0.05, 0.0, 0.0]),
            ("e", [0.0, 0.0, 0.05, 0.95, 0.0]),
            ("f", [0.5, 0.0, 0.0, 0.0, 0.5]),
        ];
        let kinds = [
            OpKind::Read,
            OpKind::Update,
            OpKind::Insert,
            OpKind::Scan,
            OpKind::ReadModifyWrite,
        ];
        let draws = 1_000_000u32;
        for (name, shares) in expected {
            let p = props(Some(name), &[]);
            let s = SharedState::new(1000);
            let mut w = worker(&p, 9, 0, 1, Phase::Run, &s);
            let mix = w.mix.clone().expect("mix");
            let mut counts: HashMap<OpKind, u32> = HashMap::new();
            for _ in 0..draws {
                *counts.entry(mix.sample(&mut w.rng)).or_default() += 1;
            }
            for (kind, share) in kinds.iter().zip(shares) {
                let got = f64::from(*counts.get(kind).unwrap_or(&0)) / f64::from(draws);
                let sigma = (share * (1.0 - share) / f64::from(draws)).sqrt();
                assert!(
                    (got - share).abs() <= 5.0 * sigma,
                    "workload {name} {kind:?}: {got} vs {share}"
                );
            }
        }
    }

    #[test]
    fn workers_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<Worker>();
        assert_send::<YcsbOp>();
    }

    #[test]
    fn read_update_scan_and_rmw_shapes() {
        let p = props(Some("e"), &[("fieldlength", "8")]);
        let s = SharedState::new(1000);
        let mut w = worker(&p, 5, 0, 1, Phase::Run, &s);
        let scan = std::iter::from_fn(|| w.next())
            .find(|o| o.kind == OpKind::Scan)
            .unwrap();
        let body = scan.operation.commands[0].to_document();
        let limit = body.get_i32("limit").unwrap();
        assert!((1..=100).contains(&limit));
        assert_eq!(
            body.get_document("filter")
                .unwrap()
                .get_document("_id")
                .unwrap()
                .get_str("$gte")
                .unwrap(),
            scan.key
        );
        assert!(!body.contains_key("projection"));
        assert!(scan.operation.commands[0].drain_cursor);

        let p = props(
            Some("f"),
            &[("fieldlength", "8"), ("readallfields", "false")],
        );
        let mut w = worker(&p, 5, 0, 1, Phase::Run, &s);
        let rmw = std::iter::from_fn(|| w.next())
            .find(|o| o.kind == OpKind::ReadModifyWrite)
            .unwrap();
        assert_eq!(rmw.operation.label, "READ-MODIFY-WRITE");
        assert_eq!(rmw.calls, [Call::Read, Call::Update]);
        let read = rmw.operation.commands[0].to_document();
        let update = rmw.operation.commands[1].to_document();
        assert_eq!(
            read.get_document("filter").unwrap().get_str("_id").unwrap(),
            rmw.key
        );
        assert_eq!(read.get_document("projection").unwrap().len(), 1);
        let u = update.get_array("updates").unwrap()[0]
            .as_document()
            .unwrap();
        assert_eq!(
            u.get_document("q").unwrap().get_str("_id").unwrap(),
            rmw.key
        );
        let set = u.get_document("u").unwrap().get_document("$set").unwrap();
        assert_eq!(set.len(), 1, "writeallfields=false updates one field");
        assert!(!u.contains_key("upsert"));

        let p = props(
            Some("a"),
            &[("fieldlength", "8"), ("writeallfields", "true")],
        );
        let mut w = worker(&p, 5, 0, 1, Phase::Run, &s);
        let upd = std::iter::from_fn(|| w.next())
            .find(|o| o.kind == OpKind::Update)
            .unwrap();
        let u = upd.operation.commands[0]
            .to_document()
            .get_array("updates")
            .unwrap()[0]
            .as_document()
            .unwrap()
            .clone();
        assert_eq!(
            u.get_document("u")
                .unwrap()
                .get_document("$set")
                .unwrap()
                .len(),
            10
        );
        let read = std::iter::from_fn(|| w.next())
            .find(|o| o.kind == OpKind::Read)
            .unwrap();
        assert!(
            !read.operation.commands[0]
                .to_document()
                .contains_key("projection")
        );
    }

    #[test]
    fn batched_inserts_buffer_then_flush_and_leave_a_remainder() {
        let p = props(
            Some("a"),
            &[
                ("batchsize", "3"),
                ("recordcount", "7"),
                ("fieldlength", "4"),
            ],
        );
        let s = SharedState::new(7);
        let mut w = worker(&p, 1, 0, 1, Phase::Load, &s);
        let ops = drain(&mut w);
        let shape: Vec<(bool, usize)> = ops.iter().map(|o| (o.buffered, o.documents)).collect();
        assert_eq!(
            shape,
            [
                (true, 0),
                (true, 0),
                (false, 3),
                (true, 0),
                (true, 0),
                (false, 3),
                (true, 0)
            ]
        );
        assert!(ops[0].operation.commands.is_empty());
        let flush = ops[2].operation.commands[0].to_document();
        assert!(!flush.get_bool("ordered").unwrap());
        let ids: Vec<&str> = flush
            .get_array("documents")
            .unwrap()
            .iter()
            .map(|d| d.as_document().unwrap().get_str("_id").unwrap())
            .collect();
        assert_eq!(
            ids,
            [
                key_name(0, true, 1),
                key_name(1, true, 1),
                key_name(2, true, 1)
            ]
        );
        assert_eq!(w.buffered_documents(), 1);
        let rest = w.take_remainder().expect("one document left");
        assert_eq!((rest.documents, rest.keynum), (1, 6));
        assert!(w.take_remainder().is_none());
    }

    #[test]
    fn batch_flush_yields_the_remainder_after_the_quota() {
        let p = props(
            Some("a"),
            &[
                ("batchsize", "3"),
                ("recordcount", "7"),
                ("fieldlength", "4"),
                ("mongobench.batch.flush", "true"),
            ],
        );
        let s = SharedState::new(7);
        let ops = drain(&mut worker(&p, 1, 0, 1, Phase::Load, &s));
        let shape: Vec<(bool, usize)> = ops.iter().map(|o| (o.buffered, o.documents)).collect();
        assert_eq!(
            shape,
            [
                (true, 0),
                (true, 0),
                (false, 3),
                (true, 0),
                (true, 0),
                (false, 3),
                (true, 0),
                (false, 1)
            ]
        );
        let last = ops.last().unwrap();
        assert_eq!(
            (last.kind, last.keynum, last.calls.as_slice()),
            (OpKind::Insert, 6, &[Call::Insert][..])
        );
        let body = last.operation.commands[0].to_document();
        let ids: Vec<&str> = body
            .get_array("documents")
            .unwrap()
            .iter()
            .map(|d| d.as_document().unwrap().get_str("_id").unwrap())
            .collect();
        assert_eq!(ids, [key_name(6, true, 1)]);
        // A quota that ends on a full batch leaves nothing to flush.
        let p = props(
            Some("a"),
            &[
                ("batchsize", "3"),
                ("recordcount", "6"),
                ("fieldlength", "4"),
                ("mongobench.batch.flush", "true"),
            ],
        );
        assert_eq!(drain(&mut worker(&p, 1, 0, 1, Phase::Load, &s)).len(), 6);
    }

    #[test]
    fn upserts_replace_by_id() {
        let p = props(
            Some("a"),
            &[("mongodb.upsert", "true"), ("fieldlength", "4")],
        );
        let s = SharedState::new(1000);
        let op = worker(&p, 1, 0, 1, Phase::Load, &s).next().unwrap();
        let body = op.operation.commands[0].to_document();
        let u = body.get_array("updates").unwrap()[0].as_document().unwrap();
        assert!(u.get_bool("upsert").unwrap());
        assert_eq!(u.get_document("u").unwrap().get_str("_id").unwrap(), op.key);
    }

    #[test]
    fn same_seed_same_operations_other_seed_others() {
        let p = props(Some("a"), &[]);
        let s = SharedState::new(1000);
        let a = drain(&mut worker(&p, 42, 1, 4, Phase::Run, &s));
        let b = drain(&mut worker(&p, 42, 1, 4, Phase::Run, &s));
        let c = drain(&mut worker(&p, 43, 1, 4, Phase::Run, &s));
        let d = drain(&mut worker(&p, 42, 2, 4, Phase::Run, &s));
        assert_eq!(a.len(), 250);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn reads_never_choose_an_unacknowledged_insert() {
        // Two workers of workload D share the counter; worker 0's insert stays in flight while
        // worker 1 reads: key 1000 must not be chosen until it is acknowledged.
        let p = props(
            Some("d"),
            &[
                ("operationcount", "0"),
                ("maxexecutiontime", "60"),
                ("fieldlength", "1"),
            ],
        );
        let s = SharedState::new(1000);
        let mut w0 = worker(&p, 1, 0, 2, Phase::Run, &s);
        let mut w1 = worker(&p, 2, 1, 2, Phase::Run, &s);
        let insert = std::iter::from_fn(|| w0.next())
            .find(|o| o.kind == OpKind::Insert)
            .unwrap();
        assert_eq!(insert.keynum, 1000);
        assert_eq!(s.last_acked(), Some(999));
        for _ in 0..20_000 {
            let op = w1.next().unwrap();
            if op.kind == OpKind::Read {
                assert!(
                    op.keynum <= s.last_acked().unwrap(),
                    "read {} beyond acknowledged",
                    op.keynum
                );
                assert!(op.keynum != 1000);
            }
            w1.complete();
        }
        w0.complete();
        assert!(s.last_acked().unwrap() >= 1000);
    }

    #[test]
    fn latest_reads_favour_the_newest_acknowledged_key() {
        let p = props(
            Some("d"),
            &[("operationcount", "200000"), ("fieldlength", "1")],
        );
        let s = SharedState::new(1000);
        let mut w = worker(&p, 8, 0, 1, Phase::Run, &s);
        let mut newest_hits = 0u32;
        let mut reads = 0u32;
        while let Some(op) = w.next() {
            let last = s.last_acked().unwrap();
            match op.kind {
                OpKind::Read => {
                    assert!(op.keynum <= last && op.keynum > 0);
                    reads += 1;
                    if op.keynum == last {
                        newest_hits += 1;
                    }
                }
                OpKind::Insert => assert_eq!(op.keynum, last + 1),
                other => panic!("{other:?} in workload D"),
            }
        }
        // P(newest) = 1/ζ(n) with n growing from 999 to ≈ 11,000: between 1/ζ(11000) ≈ 9.9 %
        // and 1/ζ(999) = 12.94 %.
        let share = f64::from(newest_hits) / f64::from(reads);
        assert!(share > 0.099 && share < 0.1295, "{share}");
    }

    #[test]
    fn partitioned_lanes_never_collide_and_read_only_own_inserts() {
        let p = props(
            Some("d"),
            &[
                ("mongobench.txninsert.partition", "true"),
                ("mongobench.client.count", "2"),
                ("mongobench.client.index", "1"),
                ("operationcount", "4000"),
                ("fieldlength", "1"),
            ],
        );
        let s = SharedState::new(1000);
        let mut all_inserts = BTreeSet::new();
        for w in 0..2u32 {
            let mut wk = worker(&p, 4, w, 2, Phase::Run, &s);
            assert!(wk.is_deterministic());
            let lane = u64::from(w) * 2 + 1;
            let mut mine = BTreeSet::new();
            while let Some(op) = wk.next() {
                match op.kind {
                    OpKind::Insert => {
                        assert_eq!((op.keynum - 1000) % 4, lane, "lane of worker {w}");
                        assert!(all_inserts.insert(op.keynum), "duplicate {}", op.keynum);
                        mine.insert(op.keynum);
                    }
                    OpKind::Read => assert!(op.keynum < 1000 || mine.contains(&op.keynum)),
                    other => panic!("{other:?}"),
                }
            }
        }
        assert_eq!(s.insert_high_water(), *all_inserts.last().unwrap() + 1);
    }

    #[test]
    fn data_integrity_reads_name_every_field_and_values_are_deterministic() {
        let p = props(
            Some("c"),
            &[("dataintegrity", "true"), ("fieldlength", "30")],
        );
        let s = SharedState::new(1000);
        let op = worker(&p, 1, 0, 1, Phase::Run, &s).next().unwrap();
        assert!(op.verify);
        let read = op.operation.commands[0].to_document();
        let projection = read.get_document("projection").unwrap();
        assert_eq!(projection.len(), 10);
        let load = worker(&p, 1, 0, 1, Phase::Load, &s).next().unwrap();
        let doc = load.operation.commands[0]
            .to_document()
            .get_array("documents")
            .unwrap()[0]
            .as_document()
            .unwrap()
            .clone();
        let Bson::Binary(b) = doc.get("field0").unwrap() else {
            panic!("binary")
        };
        assert_eq!(
            b.bytes,
            deterministic_value(&load.key, "field0", 30).into_bytes()
        );
    }

    #[test]
    fn url_database_and_table_reach_the_operation() {
        let p = props(
            Some("c"),
            &[("mongodb.url", "mongodb://h:27017/bench"), ("table", "t1")],
        );
        let s = SharedState::new(1000);
        let op = worker(&p, 1, 0, 1, Phase::Run, &s).next().unwrap();
        assert_eq!(op.operation.database, "bench");
        assert_eq!(
            op.operation.commands[0]
                .to_document()
                .get_str("find")
                .unwrap(),
            "t1"
        );
    }

    #[test]
    fn construction_errors() {
        let p = props(Some("a"), &[("operationcount", "0")]);
        let s = SharedState::new(1000);
        assert_eq!(
            Worker::new(&p, 1, 0, 1, Phase::Run, &s).unwrap_err(),
            WorkerError::Unbounded
        );
        assert!(
            Worker::new(&p, 1, 0, 1, Phase::Load, &s).is_ok(),
            "load ignores operationcount"
        );
        let p = props(Some("d"), &[]);
        assert!(matches!(
            Worker::new(&p, 1, 0, 1, Phase::Run, &SharedState::new(0)),
            Err(WorkerError::NothingToRead { .. })
        ));
        assert!(matches!(
            Worker::new(&p, 1, 2, 2, Phase::Run, &s),
            Err(WorkerError::WorkerIndex {
                index: 2,
                workers: 2
            })
        ));
        let insert_only = props(
            None,
            &[
                ("recordcount", "5"),
                ("readproportion", "0"),
                ("updateproportion", "0"),
                ("insertproportion", "1"),
                ("operationcount", "3"),
            ],
        );
        let mut w = Worker::new(&insert_only, 1, 0, 1, Phase::Run, &SharedState::new(0))
            .expect("inserts need no readable key");
        assert_eq!(
            drain(&mut w).iter().map(|o| o.keynum).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }

    #[test]
    fn other_request_distributions_stay_within_readable_keys() {
        for dist in ["uniform", "sequential", "hotspot", "exponential", "latest"] {
            let p = props(
                None,
                &[
                    ("recordcount", "100"),
                    ("operationcount", "3000"),
                    ("requestdistribution", dist),
                    ("fieldlength", "1"),
                ],
            );
            let s = SharedState::new(100);
            let mut w = worker(&p, 1, 0, 1, Phase::Run, &s);
            let keys: BTreeSet<u64> = drain(&mut w).iter().map(|o| o.keynum).collect();
            assert!(keys.iter().all(|k| *k < 100), "{dist}");
            assert!(keys.len() > 40, "{dist}: only {} distinct keys", keys.len());
        }
        let p = props(
            None,
            &[
                ("recordcount", "100"),
                ("operationcount", "5"),
                ("requestdistribution", "sequential"),
                ("insertstart", "10"),
                ("insertcount", "3"),
                ("fieldlength", "1"),
            ],
        );
        let s = SharedState::new(100);
        let keys: Vec<u64> = drain(&mut worker(&p, 1, 0, 1, Phase::Run, &s))
            .iter()
            .map(|o| o.keynum)
            .collect();
        assert_eq!(keys, [10, 11, 12, 10, 11]);
    }
}
