//! The fingerprint's tests: what both versions share here, each version's exact values (from
//! testdata/reference.py) and record layouts in `v1` and `v2`.
use super::*;
use crate::workload::flights::{DatasetInfo, Params, RunPhase, Worker};
use crate::workload::{Command, Operation};

mod v1;
mod v2;

const VERSIONS: [FingerprintVersion; 2] = [FingerprintVersion::V1, FingerprintVersion::V2];

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
fn fingerprint_changes_with_any_input() {
    for version in VERSIONS {
        let fp = |params: &Params, dataset: &DatasetInfo, counts: &[u64]| {
            fingerprint_only(version, params, dataset, counts).unwrap()
        };
        let dataset = DatasetInfo::fresh(1, 1000);
        let base = fp(&small(2), &dataset, &[5, 4]);
        assert_eq!(base, fp(&small(2), &dataset, &[5, 4]));
        let other_seed = Params {
            seed: 2,
            ..small(2)
        };
        assert_ne!(base.hash, fp(&other_seed, &dataset, &[5, 4]).hash);
        assert_ne!(base.hash, fp(&small(3), &dataset, &[3, 3, 3]).hash);
        assert_ne!(base.hash, fp(&small(2), &dataset, &[5, 5]).hash);
        // The default mix's v2 records hold no value of datasetSeed (seqs and flight ids):
        // the worker digest's dataset covers it.
        let other_data = DatasetInfo::fresh(2, 1000);
        assert_ne!(base.hash, fp(&small(2), &other_data, &[5, 4]).hash);
        let other_base = DatasetInfo {
            insert_base: 2 << 48,
            ..dataset
        };
        assert_ne!(base.hash, fp(&small(2), &other_base, &[5, 4]).hash);
        let other_knob = Params {
            find_limit: 6,
            ..small(2)
        };
        assert_ne!(base.hash, fp(&other_knob, &dataset, &[5, 4]).hash);
    }
}

#[test]
fn counts_must_match_workers() {
    for version in VERSIONS {
        let err =
            fingerprint_only(version, &small(2), &DatasetInfo::fresh(1, 1000), &[5]).unwrap_err();
        assert_eq!(
            err,
            FingerprintError::CountMismatch {
                workers: 2,
                counts: 1
            }
        );
    }
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
fn recording_what_the_worker_yields_equals_fingerprint_only() {
    let params = small(2);
    let dataset = DatasetInfo::fresh(1, 1000);
    for version in VERSIONS {
        let digests = (0..2)
            .map(|w| {
                let mut worker = Worker::new(&params, &dataset, w, RunPhase::Measured).unwrap();
                let mut fp = Fingerprint::new(version, worker.dataset());
                assert_eq!(fp.version(), version);
                for _ in 0..(5 - w) {
                    fp.record(&worker.next_op()).unwrap();
                }
                fp.finish()
            })
            .collect();
        assert_eq!(
            RunFingerprint::from_workers(version, digests),
            fingerprint_only(version, &params, &dataset, &[5, 4]).unwrap()
        );
    }
}

#[test]
fn a_recorded_fingerprint_names_its_version() {
    let v1 = fingerprint_only(
        FingerprintVersion::V1,
        &small(2),
        &DatasetInfo::fresh(1, 1000),
        &[5, 4],
    )
    .unwrap();
    let v2 = fingerprint_only(
        FingerprintVersion::V2,
        &small(2),
        &DatasetInfo::fresh(1, 1000),
        &[5, 4],
    )
    .unwrap();
    assert_eq!(FingerprintVersion::of(&v1.hex()), FingerprintVersion::V1);
    assert_eq!(FingerprintVersion::of(&v2.hex()), FingerprintVersion::V2);
    // Results of other workloads and of tests carry no prefix either.
    assert_eq!(FingerprintVersion::of(""), FingerprintVersion::V1);
    assert_eq!(
        FingerprintVersion::of_digest(&v1.workers[0].digest),
        Some(FingerprintVersion::V1)
    );
    assert_eq!(
        FingerprintVersion::of_digest(&v2.workers[0].digest),
        Some(FingerprintVersion::V2)
    );
    assert_eq!(FingerprintVersion::of_digest(&[0; 20]), None);
    assert_eq!(FingerprintVersion::CURRENT, FingerprintVersion::V2);
}

#[test]
#[should_panic(expected = "worker digests of another fingerprint version")]
fn digests_of_two_versions_do_not_combine() {
    let worker = |digest: Vec<u8>| WorkerDigest {
        operations: 1,
        digest,
    };
    RunFingerprint::from_workers(
        FingerprintVersion::V2,
        vec![worker(vec![0; 16]), worker(vec![0; 32])],
    );
}

#[test]
fn foreign_operations_have_no_record_in_either_version() {
    let op = |bodies: Vec<mongodb::bson::Document>| Operation {
        label: "READ",
        database: "ycsb",
        commands: bodies
            .into_iter()
            .map(|body| Command::new(&body, false, false))
            .collect(),
    };
    let foreign = [
        op(vec![]),
        op(vec![mongodb::bson::doc! { "count": "x" }]),
        op(vec![mongodb::bson::doc! { "insert": "x" }]),
    ];
    for version in VERSIONS {
        let mut fp = Fingerprint::new(version, &DatasetInfo::fresh(1, 1000));
        for o in &foreign {
            assert!(fp.record(o).is_err(), "{version:?} {o:?}");
        }
        assert_eq!(fp.operations(), 0);
    }
}
