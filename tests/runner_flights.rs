//! A real flights run against the MongoDB-wire server: the operation mix, the hit rate and
//! collision-free inserts, measured from the run's own results.
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::time::Duration;

use mongobench::result::{CellId, CellStatus};
use mongobench::runner::cell::{CellProgress, RunLength, RunSettings, WorkloadPlan, run_cell};
use mongobench::runner::connect::connect;
use mongobench::runner::seed_flights::seed;
use mongobench::workload::flights::{self, Params};

/// Seeded documents: enough that this run's deletes leave most of them alone (see the end).
const DOCS: u64 = 2_000;

fn cell(name: &str) -> CellId {
    CellId {
        benchmark: name.into(),
        run_id: "test".into(),
        workload: "flights/v1".into(),
        target: "ferretdb".into(),
        platform: "local".into(),
        size: DOCS.to_string(),
        repetition: 1,
    }
}

#[tokio::test]
async fn a_ten_second_flights_run_executes_exactly_the_generated_mix_targets_and_unique_inserts() {
    let server = support::private_mongo("flights-run");
    let target = connect("ferretdb", &server.uri, 8, Duration::from_secs(10))
        .await
        .unwrap();
    let params = Params::default();
    let seeded = seed(&target.client, &params, DOCS).await.expect("seeding");
    eprintln!(
        "seeded {DOCS} documents at {:.0} docs/s",
        seeded.docs_per_second
    );

    let settings = RunSettings {
        workers: 8,
        measured: RunLength::Duration(Duration::from_secs(10)),
        warmup: RunLength::Duration(Duration::from_secs(1)),
        target_ops_per_sec: None,
        write_concern: None,
        read_preference: None,
    };
    let plan = WorkloadPlan::Flights(Box::new(params));
    let progress = CellProgress::default();
    let result = run_cell(
        &target,
        &server.uri,
        &plan,
        &settings,
        cell("mix"),
        DOCS,
        &progress,
    )
    .await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);

    let measured = result.measured.as_ref().unwrap();
    for (label, op) in &measured.operations {
        eprintln!("{label}: {} ops, {:?}", op.completed, op.latency_us);
    }
    // Nothing failed: in particular no duplicate key, so inserts never collided.
    assert_eq!(
        measured.overall.succeeded, measured.overall.completed,
        "errors: {:?}",
        measured.overall.errors
    );
    assert!(
        measured.overall.completed >= 16,
        "only {} operations",
        measured.overall.completed
    );

    // A 10-second run holds from tens of operations (FerretDB on SQLite) to a few thousand
    // (on PostgreSQL), too few for a statistical check of the 60/20/10/10 mix (the generator's
    // own tests check it over 100,000 draws). Instead: regenerate each worker's traffic from the
    // recorded per-worker counts and require the run to have executed exactly that mix, with
    // exactly the generated hit targets.
    let dataset = flights::DatasetInfo::fresh(1, DOCS);
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut hits, mut misses) = (0, 0);
    // Seeded documents a delete of this run aimed at, and the documents aimed finds aimed at.
    let mut deleted = BTreeSet::new();
    let mut aimed_finds = Vec::new();
    let params = Params {
        workers: 8,
        ..Params::default()
    };
    assert_eq!(result.worker_operations.len(), 8);
    for (w, &count) in result.worker_operations.iter().enumerate() {
        let mut worker =
            flights::Worker::new(&params, &dataset, w as u32, flights::Phase::Measured).unwrap();
        for _ in 0..count {
            let planned = worker.next_planned();
            *kinds.entry(planned.operation.label).or_default() += 1;
            if planned.operation.label == "find" {
                match planned.target {
                    flights::Target::Hit { seq } => {
                        hits += 1;
                        aimed_finds.push(seq);
                    }
                    flights::Target::PlannedMiss => misses += 1,
                    flights::Target::None => {}
                }
            }
            if let ("delete", flights::Target::Hit { seq }) =
                (planned.operation.label, planned.target)
            {
                deleted.insert(seq);
            }
        }
    }
    // The warm-up deletes too, from streams of its own. How many operations each worker ran in
    // it is not recorded, only their total: regenerate that many for every worker (a superset).
    let warmup_ops = progress.ops.completed.load(Ordering::Relaxed) - measured.overall.completed;
    for w in 0..8 {
        let mut worker =
            flights::Worker::new(&params, &dataset, w, flights::Phase::Warmup).unwrap();
        for _ in 0..warmup_ops {
            let planned = worker.next_planned();
            if let ("delete", flights::Target::Hit { seq }) =
                (planned.operation.label, planned.target)
            {
                deleted.insert(seq);
            }
        }
    }
    let recorded: BTreeMap<&str, u64> = measured
        .operations
        .iter()
        .map(|(l, o)| (l.as_str(), o.completed))
        .collect();
    assert_eq!(
        recorded, kinds,
        "the run executed a different mix than the generator produced"
    );

    let finds = result.targeting.get("find").copied().unwrap_or_default();
    assert_eq!((finds.aimed_hits, finds.planned_misses), (hits, misses));
    // Every find aimed at a seeded document found it, unless a delete of this run removed that
    // document first (workers run concurrently, so any delete of the same document may have come
    // first); no planned miss found anything.
    let may_miss = aimed_finds.iter().filter(|s| deleted.contains(s)).count() as u64;
    eprintln!(
        "{finds:?}; {} of {DOCS} documents deleted at most; {may_miss} aimed finds at them",
        deleted.len()
    );
    assert!(finds.found <= finds.aimed_hits, "{finds:?}");
    assert!(
        finds.found + may_miss >= finds.aimed_hits,
        "{finds:?}: only {may_miss} aimed finds were at documents a delete removed"
    );
    assert_eq!(result.fingerprint.len(), 64);
    assert!(!result.explain.is_empty(), "explain samples were taken");
}
