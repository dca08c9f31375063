//! v2: XXH3-128 over the generator's values. Exact fingerprints and records come from
//! testdata/reference.py, which writes each record from its own draws (not from the commands)
//! and hashes with PyPI's `xxhash`.
use super::*;
use crate::workload::flights::{Flight, insert_command, object_id};
use mongodb::bson::{Bson, Document, doc};
use std::collections::BTreeMap;
use xxhash_rust::xxh3::xxh3_128;

const V2: FingerprintVersion = FingerprintVersion::V2;

fn one(body: Document) -> Operation {
    Operation {
        label: "x",
        database: "airline",
        commands: vec![Command::new(&body, false, false)],
    }
}

fn record(body: Document) -> String {
    hex::encode(operation_record_v2(&one(body)).unwrap())
}

#[test]
fn xxh3_bytes_are_xxhash_canonical_form() {
    // xxhash.xxh3_128(b"flights/v1").hexdigest(): the 128-bit value big-endian.
    assert_eq!(
        hex::encode(xxh3_128(b"flights/v1").to_be_bytes()),
        "6f89833ac716313ebf19dbc0bcea7e3d"
    );
}

#[test]
fn default_mix_fingerprint_matches_reference() {
    let fp = fingerprint_only(V2, &small(2), &DatasetInfo::fresh(1, 1000), &[5, 4]).unwrap();
    assert_eq!(fp.hex(), "v2:df54b7c3a8d09abf0b59fe5e228e1f7b");
    assert_eq!(fp.short(), "v2:df54b7c3a8d09abf");
    assert_eq!(
        fp.workers.iter().map(|w| w.operations).collect::<Vec<_>>(),
        [5, 4]
    );
}

#[test]
fn every_shape_fingerprint_matches_reference() {
    let fp = |dataset_seed| {
        fingerprint_only(
            V2,
            &all_shapes(),
            &DatasetInfo::fresh(dataset_seed, 1000),
            &[40, 40, 39],
        )
        .unwrap()
        .hex()
    };
    assert_eq!(fp(1), "v2:0284e6caa13d10dbfbe711368dca490d");
    assert_eq!(fp(2), "v2:ad809cda5bf33c0060fdf52dee940e9d");
}

#[test]
fn every_variants_record_matches_reference() {
    let expected = [
        ("A1", "413123d7020064000000"),
        (
            "A2",
            "41320a000000506974747362757267680b00000042616b6572736669656c64",
        ),
        ("D1", "44316d830600"),
        ("D2", "4432f200000000000000"),
        ("D3", "44332e0a0e00"),
        ("F1", "463104d5020005000000"),
        (
            "F2",
            "46320800000053746f636b746f6e0d00000053616e746120436c6172697461",
        ),
        ("F3", "4633080000006465706172746564"),
        ("I", "490200000000000000000101000300000000010100"),
        ("T", "54b702000000000000d70300000000000002000000"),
        ("U1", "5531a6140d00ffffffff08000000626f617264696e67"),
        ("U2", "5532de020000000000000100000006000000696e5f616972"),
        ("U3", "5533a1cc020000feffffff"),
    ];
    let mut worker = Worker::new(
        &all_shapes(),
        &DatasetInfo::fresh(1, 1000),
        0,
        RunPhase::Measured,
    )
    .unwrap();
    let mut first: BTreeMap<&str, String> = BTreeMap::new();
    for _ in 0..200 {
        let p = worker.next_planned();
        let record = operation_record_v2(&p.operation).unwrap();
        first
            .entry(p.variant.code())
            .or_insert_with(|| hex::encode(record));
    }
    let first: Vec<(&str, &str)> = first.iter().map(|(c, r)| (*c, r.as_str())).collect();
    assert_eq!(first, expected);
}

#[test]
fn run_fingerprint_byte_layout() {
    let workers = vec![
        WorkerDigest {
            operations: 3,
            digest: vec![0xAA; 16],
        },
        WorkerDigest {
            operations: 1 << 40,
            digest: vec![0x01; 16],
        },
    ];
    let mut bytes = b"flights/v1".to_vec();
    bytes.extend_from_slice(&[2, 0, 0, 0]);
    bytes.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(&[0xAA; 16]);
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0]);
    bytes.extend_from_slice(&[0x01; 16]);
    let expected = xxh3_128(&bytes).to_be_bytes();
    let fp = RunFingerprint::from_workers(V2, workers);
    assert_eq!(fp.hash, expected);
    assert_eq!(fp.hex(), format!("v2:{}", hex::encode(expected)));
    assert_eq!(fp.short(), fp.hex()[..19]);
}

#[test]
fn worker_digest_starts_with_the_dataset() {
    let dataset = DatasetInfo {
        dataset_seed: 0x0102_0304_0506_0708,
        documents: 1000,
        insert_base: 1 << 48,
    };
    let find = one(doc! { "find": "flights", "filter": { "flight_id": 7 }, "limit": 5 });
    let mut fp = Fingerprint::new(V2, &dataset);
    fp.record(&find).unwrap();
    let mut bytes = vec![8, 7, 6, 5, 4, 3, 2, 1];
    bytes.extend_from_slice(&[0xE8, 0x03, 0, 0, 0, 0, 0, 0]);
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 1, 0]);
    bytes.extend_from_slice(&operation_record_v2(&find).unwrap());
    let d = fp.finish();
    assert_eq!(d.operations, 1);
    assert_eq!(d.digest, xxh3_128(&bytes).to_be_bytes());
}

#[test]
fn records_hold_the_drawn_values_little_endian() {
    // F1: F = 7, limit 5 (the projection, singleBatch and the other constants are not hashed).
    assert_eq!(
        record(doc! { "find": "flights", "filter": { "flight_id": 7 },
        "projection": { "_id": 0 }, "limit": 5, "singleBatch": true }),
        "4631".to_owned() + "07000000" + "05000000"
    );
    assert_eq!(
        record(doc! { "find": "flights", "filter": { "status": "landed" }, "limit": 20 }),
        "4633".to_owned() + "06000000" + &hex::encode("landed")
    );
    // U2 aimed at a planned miss: seq 2^63 + 5.
    let miss = Bson::ObjectId(object_id((1 << 63) + 5));
    assert_eq!(
        record(
            doc! { "update": "flights", "updates": [{ "q": { "_id": miss },
            "u": { "$inc": { "seats_available": -1 }, "$set": { "status": "boarding" } },
            "multi": false }] }
        ),
        "5532".to_owned() + "0500000000000080" + "ffffffff" + "08000000" + &hex::encode("boarding")
    );
    let u3 = |u: Document| {
        record(
            doc! { "update": "flights", "updates": [{ "q": { "flight_id": 100_000 },
            "u": u, "multi": true }] },
        )
    };
    assert_eq!(
        u3(doc! { "$inc": { "seats_available": -4 } }),
        "5533".to_owned() + "a0860100" + "00" + "fcffffff"
    );
    assert_eq!(
        u3(doc! { "$set": { "duration_minutes": 900 } }),
        "5533".to_owned() + "a0860100" + "01" + "84030000"
    );
    let del = |q: Document, limit: i32| {
        record(doc! { "delete": "flights", "deletes": [{ "q": q, "limit": limit }] })
    };
    assert_eq!(del(doc! { "flight_id": 1 }, 1), "443101000000");
    assert_eq!(del(doc! { "flight_id": 1 }, 0), "443301000000");
    assert_eq!(
        del(doc! { "_id": object_id(258) }, 1),
        "44320201000000000000"
    );
}

#[test]
fn an_insert_record_is_its_seqs() {
    let seqs = [1u64 << 48, (1 << 48) + 16];
    let flights = seqs.map(|seq| Flight::generate(1, seq, 1_000_000));
    let (body, _) = insert_command(flights, 2);
    let op = Operation {
        label: "insert",
        database: "airline",
        commands: vec![Command {
            body,
            drain_cursor: false,
            in_transaction: false,
            retryable: true,
        }],
    };
    assert_eq!(
        hex::encode(operation_record_v2(&op).unwrap()),
        "49".to_owned() + "02000000" + "0000000000000100" + "1000000000000100"
    );
}

#[test]
fn shapes_outside_section_5_have_no_record() {
    let err = |op: &Operation| operation_record_v2(op).unwrap_err();
    assert_eq!(
        err(&one(
            doc! { "find": "flights", "filter": { "gate": "A1" }, "limit": 1 }
        )),
        RecordError::UnknownShape {
            command: "find",
            found: "filter on \"gate\"".into()
        }
    );
    // An _id that is not a flights/v1 one (T0, then a seq).
    assert_eq!(
        err(&one(
            doc! { "delete": "flights", "deletes": [{ "q": { "_id": mongodb::bson::oid::ObjectId::from_bytes([0; 12]) }, "limit": 1 }] }
        )),
        RecordError::MissingField {
            command: "delete",
            field: "deletes.0.q._id"
        }
    );
    // A long flight id is not what the generator sends.
    assert_eq!(
        err(&one(
            doc! { "find": "flights", "filter": { "flight_id": 7_i64 }, "limit": 1 }
        )),
        RecordError::UnknownShape {
            command: "find",
            found: "filter on \"flight_id\"".into()
        }
    );
    let statement = |body: Document| Command::new(&body, false, true);
    let two = Operation {
        label: "transaction",
        database: "airline",
        commands: vec![
            statement(doc! { "find": "flights", "filter": { "_id": object_id(1) } }),
            statement(doc! { "find": "flights", "filter": { "_id": object_id(2) } }),
        ],
    };
    assert_eq!(
        err(&two),
        RecordError::UnknownShape {
            command: "transaction",
            found: "2 statements".into()
        }
    );
}
