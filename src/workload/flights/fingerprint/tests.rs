//! Exact fingerprints come from testdata/reference.py, which builds records straight from
//! its own generation (not from command documents) with its own BSON encoder.
use super::*;
use crate::workload::flights::document::bson_bytes;
use crate::workload::flights::{DatasetInfo, Params, Phase, Worker};
use crate::workload::{Command, Operation};
use mongodb::bson::{Document, doc};
use sha2::{Digest, Sha256};

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
