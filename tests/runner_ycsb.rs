//! YCSB load and run phases against the real MongoDB-wire server: each core workload's
//! operations in its proportions, run-phase inserts that never collide across runs (every run
//! starts from the restored load), loaded records that can be regenerated one by one, and
//! load-phase insert retries. Workloads D (latest) and E (scans) also run on SecantusDB
//! (WiredTiger).
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mongobench::api::RunLength;
use mongobench::api::WireCompressor;
use mongobench::plan::WorkloadPlan;
use mongobench::result::{CellResult, CellStatus, ClientPath};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::dataset::Seeded;
use mongobench::runner::dataset::seed_flights::{META_COLLECTION, META_DATABASE};
use mongobench::runner::dataset::seed_ycsb::{LoadError, LoadRecord, load};
use mongobench::runner::server::{ConnectedTarget, connect, connect_with};
use mongobench::workload::ycsb::{Properties, RawProperties, RecordBuilder};
use mongodb::bson::{Document, doc};
use support::runs;

const RECORDS: u64 = 500;

async fn loaded(server: &support::PrivateMongo, plan: &WorkloadPlan) -> (ConnectedTarget, Seeded) {
    let target = connect("ferretdb", &server.uri, 4, Duration::from_secs(10))
        .await
        .unwrap();
    let seeded = runs::seeded(&target, plan, RECORDS, 4).await;
    assert_eq!((seeded.action, seeded.documents), ("fresh", RECORDS));
    let count = target
        .client
        .database("ycsb")
        .collection::<Document>("usertable")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(
        count, RECORDS,
        "the load phase inserts exactly recordcount records"
    );
    (target, seeded)
}

async fn run(
    (target, seeded): &mut (ConnectedTarget, Seeded),
    uri: &str,
    plan: &WorkloadPlan,
    name: &str,
    operations: u64,
) -> CellResult {
    let settings = runs::settings(4, RunLength::Operations(operations));
    let result = run_cell(
        target,
        uri,
        plan,
        &settings,
        runs::cell(name, name),
        seeded,
        &CellProgress::default(),
    )
    .await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);
    result
}

/// Share of `label` among all top-level operations, in percent.
fn share(result: &CellResult, label: &str) -> f64 {
    let m = result.measured.as_ref().unwrap();
    let n = m.operations.get(label).map_or(0, |o| o.completed);
    n as f64 * 100.0 / m.overall.completed as f64
}

fn errors(result: &CellResult) -> u64 {
    let m = result.measured.as_ref().unwrap();
    m.overall.completed - m.overall.succeeded
}

#[tokio::test]
async fn workload_a_reads_and_updates_half_and_half() {
    let server = support::private_mongo("ycsb-a");
    let plan = runs::ycsb("workloada");
    let mut target = loaded(&server, &plan).await;
    let r = run(&mut target, &server.uri, &plan, "workloada", 2_000).await;
    assert_eq!(r.measured.as_ref().unwrap().overall.completed, 2_000);
    assert!(
        (share(&r, "READ") - 50.0).abs() < 5.0,
        "READ {}",
        share(&r, "READ")
    );
    assert!(
        (share(&r, "UPDATE") - 50.0).abs() < 5.0,
        "UPDATE {}",
        share(&r, "UPDATE")
    );
    assert_eq!(
        errors(&r),
        0,
        "every read found its record and every update matched"
    );
    assert_eq!(r.fingerprint.len(), 64);
}

#[tokio::test]
async fn a_result_says_how_its_workers_sent() {
    let server = support::private_mongo("ycsb-path");
    let plan = runs::ycsb("workloadc");
    let mut plain = loaded(&server, &plan).await;
    let r = run(&mut plain, &server.uri, &plan, "workloadc", 200).await;
    assert_eq!(r.client_path, Some(ClientPath::OwnConnections));

    // Wire compression is the driver's: the workers send through it, and the result says why.
    let compressing = connect_with(
        "ferretdb",
        &server.uri,
        4,
        Duration::from_secs(10),
        &[WireCompressor::Zlib],
    )
    .await
    .unwrap();
    let mut compressing = (compressing, plain.1.clone());
    let r = run(&mut compressing, &server.uri, &plan, "workloadc", 200).await;
    assert_eq!(
        r.client_path,
        Some(ClientPath::Driver {
            reason: "wire compression".into()
        })
    );
    assert_eq!(r.measured.as_ref().unwrap().overall.succeeded, 200);
}

#[tokio::test]
async fn workload_c_only_reads() {
    let server = support::private_mongo("ycsb-c");
    let plan = runs::ycsb("workloadc");
    let mut target = loaded(&server, &plan).await;
    let r = run(&mut target, &server.uri, &plan, "workloadc", 1_000).await;
    assert_eq!(share(&r, "READ"), 100.0);
    assert_eq!(errors(&r), 0);
}

#[tokio::test]
async fn workload_d_inserts_new_keys_and_a_second_run_never_collides() {
    workload_d(support::private_mongo("ycsb-d")).await;
}

#[tokio::test]
async fn workload_d_on_wiredtiger_inserts_new_keys_and_a_second_run_never_collides() {
    workload_d(support::private_secantus("ycsb-d-wt")).await;
}

async fn workload_d(server: support::PrivateMongo) {
    let plan = runs::ycsb("workloadd");
    let mut target = loaded(&server, &plan).await;
    let coll = target
        .0
        .client
        .database("ycsb")
        .collection::<Document>("usertable");
    let first = run(&mut target, &server.uri, &plan, "workloadd", 1_000).await;
    assert!(
        (share(&first, "READ") - 95.0).abs() < 3.0,
        "READ {}",
        share(&first, "READ")
    );
    assert!(
        (share(&first, "INSERT") - 5.0).abs() < 3.0,
        "INSERT {}",
        share(&first, "INSERT")
    );
    assert_eq!(
        errors(&first),
        0,
        "no duplicate key and no read of a missing record"
    );
    let inserted = first.measured.as_ref().unwrap().operations["INSERT"].completed;
    let restore = &first.dataset.restores[0];
    assert_eq!(
        (restore.removed, restore.reseeded.as_deref()),
        (inserted, None),
        "the restore removed exactly the inserted records and the digest verified"
    );
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), RECORDS);

    // The second run inserts the same keys again, into the restored table: no collision.
    let second = run(&mut target, &server.uri, &plan, "workloadd", 1_000).await;
    let dup = second
        .measured
        .as_ref()
        .unwrap()
        .overall
        .errors
        .duplicate_key;
    assert_eq!(dup, 0, "the second run re-used keys of the first");
    assert_eq!(errors(&second), 0);
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), RECORDS);
}

#[tokio::test]
async fn workload_e_scans_short_ranges_and_inserts() {
    workload_e(support::private_mongo("ycsb-e")).await;
}

#[tokio::test]
async fn workload_e_on_wiredtiger_scans_short_ranges_and_inserts() {
    workload_e(support::private_secantus("ycsb-e-wt")).await;
}

async fn workload_e(server: support::PrivateMongo) {
    let plan = runs::ycsb("workloade");
    let mut target = loaded(&server, &plan).await;
    let r = run(&mut target, &server.uri, &plan, "workloade", 300).await;
    assert!(
        (share(&r, "SCAN") - 95.0).abs() < 4.0,
        "SCAN {}",
        share(&r, "SCAN")
    );
    assert!(
        (share(&r, "INSERT") - 5.0).abs() < 4.0,
        "INSERT {}",
        share(&r, "INSERT")
    );
    assert_eq!(errors(&r), 0, "every scan returned records");
}

#[tokio::test]
async fn workload_f_read_modify_writes_record_their_read_and_update() {
    let server = support::private_mongo("ycsb-f");
    let plan = runs::ycsb("workloadf");
    let mut target = loaded(&server, &plan).await;
    let r = run(&mut target, &server.uri, &plan, "workloadf", 1_000).await;
    let m = r.measured.as_ref().unwrap();
    let rmw = m.operations["READ-MODIFY-WRITE"].completed;
    let reads = m.operations["READ"].completed;
    let updates = m.operations["UPDATE"].completed;
    assert!(
        (rmw as f64 / 10.0 - 50.0).abs() < 5.0,
        "READ-MODIFY-WRITE {rmw} of 1000"
    );
    // As YCSB reports it: READ counts plain reads and the reads inside read-modify-writes
    // (≈100 % of operations), UPDATE the updates inside them (≈50 %).
    assert_eq!(reads, 1_000, "READ {reads}");
    assert_eq!(updates, rmw);
    assert_eq!(
        m.overall.completed, 1_000,
        "nested calls are not counted twice"
    );
    assert_eq!(errors(&r), 0);
}

#[tokio::test]
async fn every_loaded_record_is_its_load_document() {
    let server = support::private_mongo("ycsb-records");
    let plan = runs::ycsb("workloada");
    let (target, _) = loaded(&server, &plan).await;
    let WorkloadPlan::Ycsb { raw, seed } = &plan else {
        unreachable!()
    };
    let mut raw = raw.clone();
    raw.set("recordcount", RECORDS.to_string());
    let records = RecordBuilder::new(&Properties::from_raw(&raw).unwrap(), *seed);
    let stored: BTreeMap<String, Document> = {
        use futures::TryStreamExt;
        target
            .client
            .database("ycsb")
            .collection::<Document>("usertable")
            .find(doc! {})
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
            .into_iter()
            .map(|d| (d.get_str("_id").unwrap().to_owned(), d))
            .collect()
    };
    assert_eq!(stored.len() as u64, RECORDS);
    // Loaded by 4 workers; each record is what the record's own stream generates, byte for byte
    // as the server stores it.
    for k in 0..RECORDS {
        let expected = records.load_document(k);
        let key = expected.get_str("_id").unwrap();
        assert_eq!(stored.get(key), Some(&expected), "record {k}");
    }
}

/// Records that an empty `ycsb.usertable` was loaded, so that a load adds to what is there
/// instead of dropping the table first.
async fn loaded_empty(client: &mongodb::Client) {
    client
        .database(META_DATABASE)
        .collection::<LoadRecord>(META_COLLECTION)
        .insert_one(LoadRecord {
            id: "ycsb.usertable".into(),
            workload: "ycsb".into(),
            records: 0,
        })
        .await
        .unwrap();
}

/// A workload A load of 5 records with `retries` retries one second apart.
fn retrying(retries: u32) -> RawProperties {
    let mut raw = RawProperties::preset("workloada").unwrap();
    raw.set("core_workload_insertion_retry_limit", retries.to_string());
    raw.set("core_workload_insertion_retry_interval", "1");
    raw
}

#[tokio::test]
async fn a_failed_load_insert_is_retried_until_it_succeeds() {
    let server = support::private_mongo("ycsb-retry");
    let target = connect("ferretdb", &server.uri, 1, Duration::from_secs(10))
        .await
        .unwrap();
    let raw = retrying(2);
    let mut sized = raw.clone();
    sized.set("recordcount", "5");
    let records = RecordBuilder::new(&Properties::from_raw(&sized).unwrap(), 7);
    let coll = target
        .client
        .database("ycsb")
        .collection::<Document>("usertable");
    // Record 0, the first one the only worker inserts, is in the way: its first insert fails
    // with a duplicate key. Clearing it half a second later lets the retry succeed.
    loaded_empty(&target.client).await;
    let blocker = doc! {"_id": records.key(0), "stale": true};
    coll.insert_one(blocker).await.unwrap();
    let clearer = {
        let coll = coll.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            coll.delete_one(doc! {"stale": true}).await.unwrap();
        })
    };
    let started = Instant::now();
    let report = load(&target, &raw, 7, 5, 1, support::runs::LIMIT, None, None)
        .await
        .expect("the retry of record 0 succeeds");
    clearer.await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "the retry waited the interval × [0.8, 1.2): {:?}",
        started.elapsed()
    );
    assert_eq!((report.from, report.to), (0, 5));
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 5);
    let first = coll
        .find_one(doc! {"_id": records.key(0)})
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        first,
        records.load_document(0),
        "the same record was retried"
    );
}

#[tokio::test]
async fn a_load_insert_that_keeps_failing_fails_the_load_after_its_retries() {
    let server = support::private_mongo("ycsb-retry-fails");
    let target = connect("ferretdb", &server.uri, 1, Duration::from_secs(10))
        .await
        .unwrap();
    let raw = retrying(1);
    let mut sized = raw.clone();
    sized.set("recordcount", "5");
    let records = RecordBuilder::new(&Properties::from_raw(&sized).unwrap(), 7);
    let coll = target
        .client
        .database("ycsb")
        .collection::<Document>("usertable");
    loaded_empty(&target.client).await;
    coll.insert_one(doc! {"_id": records.key(3), "stale": true})
        .await
        .unwrap();
    let started = Instant::now();
    let err = load(&target, &raw, 7, 5, 1, support::runs::LIMIT, None, None)
        .await
        .expect_err("record 3 never goes in");
    assert!(started.elapsed() >= Duration::from_millis(800));
    match &err {
        LoadError::Failed {
            failed,
            attempted,
            retries,
            first,
        } => {
            assert_eq!((*failed, *attempted, *retries), (1, 4, 1));
            assert!(first.contains(&records.key(3)), "{first}");
        }
        other => panic!("{other}"),
    }
    // The worker stopped at record 3, as a YCSB load thread does.
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 4);
}
