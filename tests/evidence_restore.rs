//! Identical data at the start of every measured phase, against the real MongoDB-wire server:
//! after flights and YCSB A, D, E and F runs every document equals the freshly seeded one and
//! the digest equals the seeded digest; YCSB D and E grow through two sizes with repetitions
//! without a duplicate key; the fingerprint of each run is regenerated from its identity. The
//! restores run on FerretDB (PostgreSQL) and on SecantusDB (WiredTiger, whose digest is the
//! server's own `dbHash`).
mod support;

use std::time::Duration;

use futures::TryStreamExt;
use mongobench::api::RunLength;
use mongobench::plan::{RunSettings, WarmupSettle, WorkloadPlan};
use mongobench::result::{CellResult, CellStatus, WarmupRounds};
use mongobench::runner::cell::identity::{Verification, verify};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::dataset::digest;
use mongobench::runner::server::connect;
use mongobench::workload::flights::{self, Flight, Params};
use mongobench::workload::ycsb::{self, Properties};
use mongodb::bson::{Document, doc};
use support::runs;

/// Every document of `database.collection`, by `_id` order.
async fn all_documents(
    client: &mongodb::Client,
    database: &str,
    collection: &str,
) -> Vec<Document> {
    let mut docs: Vec<Document> = client
        .database(database)
        .collection::<Document>(collection)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.sort_by_key(|d| d.get("_id").map(ToString::to_string).unwrap_or_default());
    docs
}

fn settings(measured: RunLength, warmup: RunLength) -> RunSettings {
    RunSettings {
        warmup,
        ..runs::settings(4, measured)
    }
}

/// Which server a test runs on: FerretDB on PostgreSQL or SecantusDB on WiredTiger.
type Server = fn(&str) -> support::PrivateMongo;
const FERRETDB: Server = support::private_mongo;
const WIREDTIGER: Server = support::private_secantus;

/// Runs one cell of `plan` on a fresh private `server` seeded to `documents`, then checks the
/// collection against `expected` (the seeded documents, in `_id` order) and the digest.
async fn run_and_check_restore(
    server: Server,
    name: &str,
    plan: WorkloadPlan,
    documents: u64,
    expected: Vec<Document>,
    (database, collection): (&str, &str),
) -> CellResult {
    let server = server(name);
    let target = connect(name, &server.uri, 4, Duration::from_secs(10))
        .await
        .unwrap();
    let mut seeded = runs::seeded(&target, &plan, documents, 4).await;
    assert_eq!(
        all_documents(&target.client, database, collection).await,
        expected,
        "seeding wrote the generated documents"
    );
    let seeded_digest = seeded.digest.clone();
    let result = run_cell(
        &target,
        &server.uri,
        &plan,
        &settings(RunLength::Operations(400), RunLength::Operations(100)),
        runs::cell(name, &plan.name()),
        &mut seeded,
        &CellProgress::default(),
    )
    .await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);
    assert_eq!(
        result
            .dataset
            .restores
            .iter()
            .map(|r| r.after.as_str())
            .collect::<Vec<_>>(),
        ["warmup", "measured"]
    );
    for r in &result.dataset.restores {
        assert_eq!(
            r.reseeded, None,
            "the restore after {} did not verify",
            r.after
        );
    }
    let documents_after = all_documents(&target.client, database, collection).await;
    assert_eq!(documents_after.len(), expected.len());
    for (got, want) in documents_after.iter().zip(&expected) {
        assert_eq!(
            got, want,
            "a document differs from the seeded one after the run"
        );
    }
    assert_eq!(
        digest(&target.client, database, collection, runs::LIMIT)
            .await
            .unwrap(),
        seeded_digest,
        "the digest after restoring equals the seeded digest"
    );
    assert_eq!(result.dataset.digest.as_ref(), Some(&seeded_digest));
    assert_eq!(
        seeded.digest, seeded_digest,
        "nothing had to be seeded again"
    );
    result
}

#[tokio::test]
async fn a_flights_run_with_inserts_updates_and_deletes_is_restored_exactly() {
    flights_restore(FERRETDB, "sha256-sum").await;
}

#[tokio::test]
async fn a_flights_run_on_wiredtiger_is_restored_exactly_and_digested_by_the_server() {
    flights_restore(WIREDTIGER, "dbHash").await;
}

async fn flights_restore(server: Server, digest_method: &str) {
    let documents = 300;
    let params = Params {
        // Many writes, so that the restore has work: every write variant occurs.
        find_percent: 10,
        update_percent: 40,
        delete_percent: 30,
        insert_percent: 20,
        ..Params::default()
    };
    let expected: Vec<Document> = (0..documents)
        .map(|seq| Flight::seeded(params.dataset_seed, seq).to_document())
        .collect();
    let result = run_and_check_restore(
        server,
        "restore-flights",
        WorkloadPlan::Flights(Box::new(params)),
        documents,
        expected,
        (flights::DATABASE, flights::COLLECTION),
    )
    .await;
    let measured = result.dataset.restores.last().unwrap();
    assert!(
        measured.removed > 0 && measured.rewritten > 0,
        "the run inserted and changed documents: {measured:?}"
    );
    assert_eq!(verify(&result), Ok(Verification::Verified));
    assert_eq!(
        result.dataset.digest.as_ref().map(|d| d.method.as_str()),
        Some(digest_method)
    );
}

async fn ycsb_restore(server: Server, workload: &str) -> CellResult {
    let plan = runs::ycsb(workload);
    let WorkloadPlan::Ycsb { raw, seed } = &plan else {
        unreachable!()
    };
    let records = 300;
    let mut props = raw.clone();
    props.set("recordcount", records.to_string());
    let props = Properties::from_raw(&props).unwrap();
    let mut expected: Vec<Document> = (0..records)
        .map(|k| ycsb::load_document(&props, *seed, k))
        .collect();
    expected.sort_by_key(|d| d.get("_id").map(ToString::to_string).unwrap_or_default());
    run_and_check_restore(
        server,
        &format!("restore-{workload}"),
        plan,
        records,
        expected,
        ("ycsb", "usertable"),
    )
    .await
}

#[tokio::test]
async fn ycsb_a_updates_are_restored_exactly() {
    let r = ycsb_restore(FERRETDB, "workloada").await;
    assert!(r.dataset.restores[1].rewritten > 0);
    assert_eq!(verify(&r), Ok(Verification::Verified));
}

#[tokio::test]
async fn ycsb_d_inserts_are_removed_exactly() {
    ycsb_d_restore(FERRETDB).await;
}

#[tokio::test]
async fn ycsb_d_inserts_on_wiredtiger_are_removed_exactly() {
    ycsb_d_restore(WIREDTIGER).await;
}

async fn ycsb_d_restore(server: Server) {
    let r = ycsb_restore(server, "workloadd").await;
    let inserted = r.measured.as_ref().unwrap().operations["INSERT"].completed;
    assert_eq!(r.dataset.restores[1].removed, inserted);
    assert!(matches!(verify(&r), Ok(Verification::NotReproducible(_))));
}

#[tokio::test]
async fn ycsb_e_inserts_are_removed_exactly() {
    let r = ycsb_restore(FERRETDB, "workloade").await;
    assert!(r.dataset.restores[1].removed > 0);
}

#[tokio::test]
async fn ycsb_e_scans_and_inserts_on_wiredtiger_are_restored_exactly() {
    let r = ycsb_restore(WIREDTIGER, "workloade").await;
    assert!(r.dataset.restores[1].removed > 0);
    assert!(r.measured.as_ref().unwrap().operations["SCAN"].completed > 0);
}

#[tokio::test]
async fn ycsb_f_read_modify_writes_are_restored_exactly() {
    let r = ycsb_restore(FERRETDB, "workloadf").await;
    assert!(r.dataset.restores[1].rewritten > 0);
    assert_eq!(verify(&r), Ok(Verification::Verified));
}

/// A warm-up in rounds (`workload.warmupUntilSettled`) on WiredTiger, YCSB D: each round
/// starts from the seeded state (its inserts are removed after it, so the next round's same
/// keys insert cleanly), and the rounds end when one settles or they run out.
#[tokio::test]
async fn a_warmup_in_rounds_restores_each_round_and_stops_when_settled_or_out_of_rounds() {
    let server = support::private_secantus("warmup-rounds");
    let target = connect("warmup-rounds", &server.uri, 4, Duration::from_secs(10))
        .await
        .unwrap();
    let plan = runs::ycsb("workloadd");
    let mut seeded = runs::seeded(&target, &plan, 300, 4).await;
    let seeded_digest = seeded.digest.clone();
    let round = RunLength::Duration(Duration::from_secs(7));
    // A tolerance of 0: no round settles (its last two seconds would have to complete exactly
    // as many operations as the two before), so all 3 run. Then a tolerance no drift exceeds
    // (the API allows at most 50 %, which a stall of a loaded machine can exceed within one
    // round): the first round settles.
    for (tolerance_percent, rounds, settled) in [(0.0, 3, false), (1e9, 1, true)] {
        let settings = RunSettings {
            warmup_settle: Some(WarmupSettle {
                max_rounds: 3,
                tolerance_percent,
            }),
            ..settings(RunLength::Operations(400), round)
        };
        let r = run_cell(
            &target,
            &server.uri,
            &plan,
            &settings,
            runs::cell("warmup-rounds", &plan.name()),
            &mut seeded,
            &CellProgress::default(),
        )
        .await;
        assert_eq!(r.status, CellStatus::Complete, "{:?}", r.status);
        assert!(r.is_valid(), "{:?}", r.invalid_reasons);
        assert_eq!(r.warmup_rounds, Some(WarmupRounds { rounds, settled }));
        let after: Vec<&str> = r
            .dataset
            .restores
            .iter()
            .map(|r| r.after.as_str())
            .collect();
        let mut expected = vec!["warmup"; rounds as usize];
        expected.push("measured");
        assert_eq!(after, expected);
        for restore in &r.dataset.restores[..rounds as usize] {
            assert!(restore.removed > 0, "each round inserted: {restore:?}");
            assert_eq!(restore.reseeded, None, "the restore did not verify");
        }
        assert_eq!(r.warmup_per_second.len(), 7, "{:?}", r.warmup_per_second);
        assert_eq!(r.measured.as_ref().unwrap().overall.errors.duplicate_key, 0);
        assert_eq!(seeded.digest, seeded_digest);
    }
}

/// D and E through two sizes with two repetitions each: every cell complete and valid, no
/// duplicate key anywhere (the run-phase inserts of one size never meet the next size's load).
#[tokio::test]
async fn ycsb_d_and_e_grow_through_two_sizes_without_a_duplicate_key() {
    for workload in ["workloadd", "workloade"] {
        let server = support::private_mongo(&format!("sizes-{workload}"));
        let targets = runs::connect_all(&[("t", server.uri.as_str())], 4).await;
        let bench = runs::benchmark(
            workload,
            runs::ycsb(workload),
            settings(RunLength::Operations(150), RunLength::Operations(30)),
            &[200, 400],
            2,
        );
        let results = runs::run_benchmark(&bench, &targets).await;
        assert_eq!(results.len(), 4);
        for r in &results {
            runs::assert_valid(r);
            let errors = &r.measured.as_ref().unwrap().overall.errors;
            assert_eq!(errors.duplicate_key, 0, "{}: {errors:?}", r.cell);
        }
        let count = targets[0]
            .target
            .client
            .database("ycsb")
            .collection::<Document>("usertable")
            .count_documents(doc! {})
            .await
            .unwrap();
        assert_eq!(count, 400, "{workload}: the table ends in S(400)");
    }
}

/// Every repetition of an operation-bounded flights run sends byte-identical traffic: the
/// restore puts back the data and with it insertBase.
#[tokio::test]
async fn repetitions_of_an_operation_bounded_run_send_identical_traffic() {
    let server = support::private_mongo("identical-reps");
    let targets = runs::connect_all(&[("t", server.uri.as_str())], 4).await;
    let bench = runs::benchmark(
        "identical",
        WorkloadPlan::Flights(Box::default()),
        settings(RunLength::Operations(200), RunLength::Operations(40)),
        &[300],
        3,
    );
    let results = runs::run_benchmark(&bench, &targets).await;
    assert_eq!(results.len(), 3);
    for r in &results {
        assert!(r.is_valid(), "{}: {:?}", r.cell, r.status);
        assert_eq!(r.fingerprint, results[0].fingerprint);
        assert_eq!(r.identity, results[0].identity);
        assert_eq!(r.dataset.digest, results[0].dataset.digest);
    }
}

/// `reuseDataset`: a stored dataset of the same identity is kept when its digest verifies, and
/// seeded afresh when a document was changed behind the runner's back.
#[tokio::test]
async fn reuse_keeps_a_verified_dataset_and_refuses_a_changed_one() {
    let server = support::private_mongo("reuse");
    let target = connect("reuse", &server.uri, 4, Duration::from_secs(10))
        .await
        .unwrap();
    let plan = runs::ycsb("workloadc");
    let first = runs::seeded(&target, &plan, 200, 4).await;
    let reuse = |client| {
        let plan = plan.clone();
        async move {
            mongobench::runner::dataset::prepare(client, &plan, 4, 200, None, true, runs::LIMIT)
                .await
                .unwrap()
        }
    };
    let kept = reuse(&target).await;
    assert_eq!((kept.action, &kept.digest), ("reused", &first.digest));

    let coll = target
        .client
        .database("ycsb")
        .collection::<Document>("usertable");
    let one = coll.find_one(doc! {}).await.unwrap().unwrap();
    coll.update_one(
        doc! {"_id": one.get("_id").unwrap().clone()},
        doc! {"$set": {"field0": "changed"}},
    )
    .await
    .unwrap();
    let again = reuse(&target).await;
    assert_eq!(
        again.action, "fresh",
        "a dataset whose digest changed is not reused"
    );
    assert_eq!(again.digest, first.digest);
}
