//! The traffic fingerprint (specs/flights.md §8).
//!
//! An operation record is one kind byte followed by the BSON of a body taken from the commands
//! actually sent (driver-added fields never appear in them): find `{filter, projection?, sort?,
//! limit}`, updates `{q, u}`, deletes `{q}`, insert `{documents}`, aggregate `{pipeline}`,
//! transaction `{stmts: [{kind, body}, …]}`. A worker's digest is SHA-256 over its records in
//! order; the run fingerprint is SHA-256 over `flights/v1`, W (u32), then per worker its count
//! (u64) and digest, integers big-endian.

use super::dataset::DatasetInfo;
use super::ids::Phase;
use super::params::Params;
use super::version::VERSION;
use super::worker::{Worker, WorkerError};
use crate::workload::{Command, Operation};
use mongodb::bson::{RawArrayBuf, RawBsonRef, RawDocument, RawDocumentBuf};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// An operation that is not a flights/v1 shape, so it has no record.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RecordError {
    /// The operation has no commands.
    #[error("operation {label:?} has no commands")]
    Empty {
        /// The operation's label.
        label: &'static str,
    },
    /// Several commands outside a transaction.
    #[error("operation {label:?} has {count} commands outside a transaction; expected one")]
    SeveralCommands {
        /// The operation's label.
        label: &'static str,
        /// How many.
        count: usize,
    },
    /// A command the fingerprint does not know.
    #[error(
        "command {0:?} is not a flights/v1 command (expected find, update, delete, insert or aggregate)"
    )]
    UnknownCommand(String),
    /// A known command without a field its record needs.
    #[error("{command} command lacks {field:?} or it has the wrong type")]
    MissingField {
        /// The command name.
        command: &'static str,
        /// The field.
        field: &'static str,
    },
}

/// Errors of [`fingerprint_only`].
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FingerprintError {
    /// One worker count per worker is needed.
    #[error("{counts} per-worker operation counts given for workers = {workers}")]
    CountMismatch {
        /// `workers`.
        workers: u32,
        /// How many counts were given.
        counts: usize,
    },
    /// A worker could not be built.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// A generated operation had no record (a generator bug).
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// `key` of `d`, if present and well-formed.
fn get<'a>(d: &'a RawDocument, key: &str) -> Option<RawBsonRef<'a>> {
    d.get(key).ok().flatten()
}

/// `(kind, body)` of one command outside a transaction; the body's values are the command's
/// own bytes, copied.
fn command_record(command: &Command) -> Result<(u8, RawDocumentBuf), RecordError> {
    let cmd: &RawDocument = &command.body;
    let missing = |command, field| RecordError::MissingField { command, field };
    let first_statement =
        |command: &'static str, field: &'static str| -> Result<&RawDocument, RecordError> {
            cmd.get_array(field)
                .ok()
                .and_then(|a| a.get_document(0).ok())
                .ok_or(missing(command, field))
        };
    let mut body = RawDocumentBuf::new();
    let kind = match command.name() {
        "find" => {
            let filter = get(cmd, "filter").ok_or(missing("find", "filter"))?;
            let limit = get(cmd, "limit").ok_or(missing("find", "limit"))?;
            body.append_ref("filter", filter);
            for optional in ["projection", "sort"] {
                if let Some(v) = get(cmd, optional) {
                    body.append_ref(optional, v);
                }
            }
            body.append_ref("limit", limit);
            b'F'
        }
        "update" => {
            let s = first_statement("update", "updates")?;
            let q = get(s, "q").ok_or(missing("update", "updates.0.q"))?;
            let u = get(s, "u").ok_or(missing("update", "updates.0.u"))?;
            body.append_ref("q", q);
            body.append_ref("u", u);
            if s.get_bool("multi").unwrap_or(false) {
                b'U'
            } else {
                b'u'
            }
        }
        "delete" => {
            let s = first_statement("delete", "deletes")?;
            let q = get(s, "q").ok_or(missing("delete", "deletes.0.q"))?;
            let one = match get(s, "limit") {
                Some(RawBsonRef::Int32(l)) => l != 0,
                Some(RawBsonRef::Int64(l)) => l != 0,
                _ => return Err(missing("delete", "deletes.0.limit")),
            };
            body.append_ref("q", q);
            if one { b'd' } else { b'D' }
        }
        "insert" => {
            let documents = get(cmd, "documents").ok_or(missing("insert", "documents"))?;
            body.append_ref("documents", documents);
            b'I'
        }
        "aggregate" => {
            let pipeline = get(cmd, "pipeline").ok_or(missing("aggregate", "pipeline"))?;
            body.append_ref("pipeline", pipeline);
            b'A'
        }
        other => return Err(RecordError::UnknownCommand(other.to_string())),
    };
    Ok((kind, body))
}

/// The operation record of `op`: kind byte then body BSON.
///
/// # Errors
/// `op` is not a flights/v1 shape.
pub fn operation_record(op: &Operation) -> Result<Vec<u8>, RecordError> {
    let (kind, body) = record_parts(op)?;
    let mut out = Vec::with_capacity(1 + body.as_bytes().len());
    out.push(kind);
    out.extend_from_slice(body.as_bytes());
    Ok(out)
}

/// The kind byte and body of `op`'s record.
fn record_parts(op: &Operation) -> Result<(u8, RawDocumentBuf), RecordError> {
    Ok(match op.commands.as_slice() {
        [] => return Err(RecordError::Empty { label: op.label }),
        cmds if cmds.iter().any(|c| c.in_transaction) => {
            let mut stmts = RawArrayBuf::new();
            for c in cmds {
                let (kind, body) = command_record(c)?;
                let mut statement = RawDocumentBuf::new();
                statement.append("kind", char::from(kind).to_string());
                statement.append("body", body);
                stmts.push(statement);
            }
            let mut body = RawDocumentBuf::new();
            body.append("stmts", stmts);
            (b'T', body)
        }
        [cmd] => command_record(cmd)?,
        cmds => {
            return Err(RecordError::SeveralCommands {
                label: op.label,
                count: cmds.len(),
            });
        }
    })
}

/// A worker's digest and operation count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerDigest {
    /// Operations recorded.
    pub operations: u64,
    /// SHA-256 over their records.
    pub digest: [u8; 32],
}

/// Accumulates one worker's measured records, in the order the operations were generated.
#[derive(Debug, Clone, Default)]
pub struct Fingerprint {
    hasher: Sha256,
    operations: u64,
}

impl Fingerprint {
    /// An empty accumulator.
    pub fn new() -> Fingerprint {
        Fingerprint::default()
    }

    /// Adds `op`'s record.
    ///
    /// # Errors
    /// `op` is not a flights/v1 shape; nothing is recorded then.
    pub fn record(&mut self, op: &Operation) -> Result<(), RecordError> {
        let (kind, body) = record_parts(op)?;
        self.hasher.update([kind]);
        self.hasher.update(body.as_bytes());
        self.operations += 1;
        Ok(())
    }

    /// Operations recorded so far.
    pub fn operations(&self) -> u64 {
        self.operations
    }

    /// The worker's count and digest.
    pub fn finish(self) -> WorkerDigest {
        WorkerDigest {
            operations: self.operations,
            digest: self.hasher.finalize().into(),
        }
    }
}

/// A run's fingerprint with the per-worker digests it was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFingerprint {
    /// SHA-256 over version, W and the workers' counts and digests.
    pub hash: [u8; 32],
    /// The workers' counts and digests, in worker order.
    pub workers: Vec<WorkerDigest>,
}

impl RunFingerprint {
    /// Combines per-worker digests (in worker index order) into the run fingerprint.
    pub fn from_workers(workers: Vec<WorkerDigest>) -> RunFingerprint {
        let mut h = Sha256::new();
        h.update(VERSION.as_bytes());
        h.update((workers.len() as u32).to_be_bytes());
        for w in &workers {
            h.update(w.operations.to_be_bytes());
            h.update(w.digest);
        }
        RunFingerprint {
            hash: h.finalize().into(),
            workers,
        }
    }

    /// The 64 hex characters reported with every result.
    pub fn hex(&self) -> String {
        hex::encode(self.hash)
    }

    /// The first 16 hex characters, for display.
    pub fn short(&self) -> String {
        self.hex()[..16].to_string()
    }
}

/// Measured operations of each worker for a total `total`: ⌊T/W⌋, plus one for w < T mod W.
pub fn operations_per_worker(total: u64, workers: u32) -> Vec<u64> {
    let w = u64::from(workers.max(1));
    (0..w)
        .map(|i| total / w + u64::from(i < total % w))
        .collect()
}

/// Regenerates the measured traffic of `counts[w]` operations per worker without a server and
/// returns its fingerprint (`fingerprint-only` mode).
///
/// # Errors
/// `counts.len() != params.workers`, or the parameters or dataset do not allow a worker.
pub fn fingerprint_only(
    params: &Params,
    dataset: &DatasetInfo,
    counts: &[u64],
) -> Result<RunFingerprint, FingerprintError> {
    if counts.len() != params.workers as usize {
        return Err(FingerprintError::CountMismatch {
            workers: params.workers,
            counts: counts.len(),
        });
    }
    let mut digests = Vec::with_capacity(counts.len());
    for (w, &count) in counts.iter().enumerate() {
        let mut worker = Worker::new(params, dataset, w as u32, Phase::Measured)?;
        let mut fp = Fingerprint::new();
        for _ in 0..count {
            fp.record(&worker.next_op())?;
        }
        digests.push(fp.finish());
    }
    Ok(RunFingerprint::from_workers(digests))
}

#[cfg(test)]
mod tests {
    //! Exact fingerprints come from testdata/reference.py, which builds records straight from
    //! its own generation (not from command documents) with its own BSON encoder.
    use super::*;
    use crate::workload::flights::document::bson_bytes;
    use mongodb::bson::{Document, doc};

    fn small(workers: u32) -> Params {
        Params {
            workers,
            documents: Some(1000),
            ..Params::default()
        }
    }

    fn all_shapes() -> Params {
        Params::all_shapes()
    }

    #[test]
    fn default_mix_fingerprint_matches_reference() {
        let fp = fingerprint_only(&small(2), &DatasetInfo::fresh(1, 1000), &[5, 4]).unwrap();
        assert_eq!(
            fp.hex(),
            "b51595b4eecc8981055169077b2af5a07fb24cfebc1008189afe7c13a280f49e"
        );
        assert_eq!(fp.short(), "b51595b4eecc8981");
        assert_eq!(
            fp.workers.iter().map(|w| w.operations).collect::<Vec<_>>(),
            [5, 4]
        );
    }

    #[test]
    fn every_shape_fingerprint_matches_reference() {
        let fp =
            fingerprint_only(&all_shapes(), &DatasetInfo::fresh(1, 1000), &[40, 40, 39]).unwrap();
        assert_eq!(
            fp.hex(),
            "6f98b267f63822071221101fcfbd2722c3fad3a2077054cbbc351c906213b22c"
        );
    }

    #[test]
    fn fingerprint_changes_with_any_input() {
        let dataset = DatasetInfo::fresh(1, 1000);
        let base = fingerprint_only(&small(2), &dataset, &[5, 4]).unwrap();
        assert_eq!(
            base,
            fingerprint_only(&small(2), &dataset, &[5, 4]).unwrap()
        );
        let other_seed = Params {
            seed: 2,
            ..small(2)
        };
        assert_ne!(
            base.hash,
            fingerprint_only(&other_seed, &dataset, &[5, 4])
                .unwrap()
                .hash
        );
        assert_ne!(
            base.hash,
            fingerprint_only(&small(3), &dataset, &[3, 3, 3])
                .unwrap()
                .hash
        );
        assert_ne!(
            base.hash,
            fingerprint_only(&small(2), &dataset, &[5, 5]).unwrap().hash
        );
        let other_data = DatasetInfo::fresh(2, 1000);
        assert_ne!(
            base.hash,
            fingerprint_only(&small(2), &other_data, &[5, 4])
                .unwrap()
                .hash
        );
        let other_base = DatasetInfo {
            insert_base: 2 << 48,
            ..dataset
        };
        assert_ne!(
            base.hash,
            fingerprint_only(&small(2), &other_base, &[5, 4])
                .unwrap()
                .hash
        );
        let other_knob = Params {
            find_limit: 6,
            ..small(2)
        };
        assert_ne!(
            base.hash,
            fingerprint_only(&other_knob, &dataset, &[5, 4])
                .unwrap()
                .hash
        );
    }

    #[test]
    fn counts_must_match_workers() {
        let err = fingerprint_only(&small(2), &DatasetInfo::fresh(1, 1000), &[5]).unwrap_err();
        assert_eq!(
            err,
            FingerprintError::CountMismatch {
                workers: 2,
                counts: 1
            }
        );
    }

    #[test]
    fn operations_split_over_workers() {
        assert_eq!(
            operations_per_worker(100, 16),
            [7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6]
        );
        assert_eq!(operations_per_worker(9, 2), [5, 4]);
        assert_eq!(operations_per_worker(3, 4), [1, 1, 1, 0]);
        assert_eq!(operations_per_worker(0, 2), [0, 0]);
    }

    #[test]
    fn run_fingerprint_byte_layout() {
        let workers = vec![
            WorkerDigest {
                operations: 3,
                digest: [0xAA; 32],
            },
            WorkerDigest {
                operations: 1 << 40,
                digest: [0x01; 32],
            },
        ];
        let mut bytes = b"flights/v1".to_vec();
        bytes.extend_from_slice(&[0, 0, 0, 2]);
        bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3]);
        bytes.extend_from_slice(&[0xAA; 32]);
        bytes.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[0x01; 32]);
        let expected: [u8; 32] = Sha256::digest(&bytes).into();
        assert_eq!(RunFingerprint::from_workers(workers).hash, expected);
    }

    #[test]
    fn find_record_is_kind_byte_then_body() {
        let op = Operation {
            label: "find",
            database: "airline",
            commands: vec![Command::new(
                &doc! { "find": "flights", "filter": { "flight_id": 7 }, "projection": { "_id": 0 },
                "limit": 5, "singleBatch": true },
                false,
                false,
            )],
        };
        let mut expected = vec![b'F'];
        expected.extend(bson_bytes(
            &doc! { "filter": { "flight_id": 7 }, "projection": { "_id": 0 }, "limit": 5 },
        ));
        assert_eq!(operation_record(&op).unwrap(), expected);
    }

    #[test]
    fn write_records_distinguish_one_and_many() {
        let one = |body: Document| Operation {
            label: "x",
            database: "airline",
            commands: vec![Command::new(&body, false, false)],
        };
        let upd = |multi| doc! { "update": "flights", "updates": [{ "q": { "a": 1 }, "u": { "$set": { "b": 2 } }, "multi": multi }] };
        let del = |limit: i32| doc! { "delete": "flights", "deletes": [{ "q": { "a": 1 } , "limit": limit }] };
        assert_eq!(operation_record(&one(upd(false))).unwrap()[0], b'u');
        assert_eq!(operation_record(&one(upd(true))).unwrap()[0], b'U');
        assert_eq!(operation_record(&one(del(1))).unwrap()[0], b'd');
        assert_eq!(operation_record(&one(del(0))).unwrap()[0], b'D');
        let mut body = vec![b'U'];
        body.extend(bson_bytes(
            &doc! { "q": { "a": 1 }, "u": { "$set": { "b": 2 } } },
        ));
        assert_eq!(operation_record(&one(upd(true))).unwrap(), body);
    }

    #[test]
    fn foreign_operations_have_no_record() {
        let op = |bodies: Vec<Document>| Operation {
            label: "READ",
            database: "ycsb",
            commands: bodies
                .into_iter()
                .map(|body| Command::new(&body, false, false))
                .collect(),
        };
        assert_eq!(
            operation_record(&op(vec![])),
            Err(RecordError::Empty { label: "READ" })
        );
        assert_eq!(
            operation_record(&op(vec![doc! { "count": "x" }])),
            Err(RecordError::UnknownCommand("count".into()))
        );
        assert_eq!(
            operation_record(&op(vec![doc! { "insert": "x" }])),
            Err(RecordError::MissingField {
                command: "insert",
                field: "documents"
            })
        );
        let two = op(vec![
            doc! { "insert": "x", "documents": [] },
            doc! { "insert": "x", "documents": [] },
        ]);
        assert_eq!(
            operation_record(&two),
            Err(RecordError::SeveralCommands {
                label: "READ",
                count: 2
            })
        );
        let mut fp = Fingerprint::new();
        assert!(fp.record(&two).is_err());
        assert_eq!(fp.operations(), 0);
    }

    #[test]
    fn recording_what_the_worker_yields_equals_fingerprint_only() {
        let params = small(2);
        let dataset = DatasetInfo::fresh(1, 1000);
        let digests = (0..2)
            .map(|w| {
                let mut worker = Worker::new(&params, &dataset, w, Phase::Measured).unwrap();
                let mut fp = Fingerprint::new();
                for _ in 0..(5 - w) {
                    fp.record(&worker.next_op()).unwrap();
                }
                fp.finish()
            })
            .collect();
        assert_eq!(
            RunFingerprint::from_workers(digests),
            fingerprint_only(&params, &dataset, &[5, 4]).unwrap()
        );
    }
}
