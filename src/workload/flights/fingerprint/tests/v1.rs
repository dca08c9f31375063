//! v1: SHA-256 over kind bytes and command bodies. Exact fingerprints come from
//! testdata/reference.py, which builds records straight from its own generation (not from
//! command documents) with its own BSON encoder.
use super::*;
use crate::workload::flights::document::bson_bytes;
use mongodb::bson::{Document, doc};
use sha2::{Digest, Sha256};

const V1: FingerprintVersion = FingerprintVersion::V1;

#[test]
fn default_mix_fingerprint_matches_reference() {
    let fp = fingerprint_only(V1, &small(2), &DatasetInfo::fresh(1, 1000), &[5, 4]).unwrap();
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
    let fp = fingerprint_only(
        V1,
        &all_shapes(),
        &DatasetInfo::fresh(1, 1000),
        &[40, 40, 39],
    )
    .unwrap();
    assert_eq!(
        fp.hex(),
        "6f98b267f63822071221101fcfbd2722c3fad3a2077054cbbc351c906213b22c"
    );
}

#[test]
fn run_fingerprint_byte_layout() {
    let workers = vec![
        WorkerDigest {
            operations: 3,
            digest: vec![0xAA; 32],
        },
        WorkerDigest {
            operations: 1 << 40,
            digest: vec![0x01; 32],
        },
    ];
    let mut bytes = b"flights/v1".to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 2]);
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3]);
    bytes.extend_from_slice(&[0xAA; 32]);
    bytes.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(&[0x01; 32]);
    let expected = Sha256::digest(&bytes).to_vec();
    assert_eq!(RunFingerprint::from_workers(V1, workers).hash, expected);
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
    let mut fp = Fingerprint::new(V1, &DatasetInfo::fresh(1, 1000));
    assert!(fp.record(&two).is_err());
    assert_eq!(fp.operations(), 0);
}
