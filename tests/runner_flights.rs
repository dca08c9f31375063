//! A real flights run against the MongoDB-wire server: the operation mix, the hit rate and
//! collision-free inserts, measured from the run's own results.
mod support;

use std::time::Duration;

use mongobench::result::{CellId, CellStatus};
use mongobench::runner::cell::{CellProgress, RunLength, RunSettings, WorkloadPlan, run_cell};
use mongobench::runner::connect::connect;
use mongobench::runner::seed_flights::seed;
use mongobench::workload::flights::Params;

fn cell(name: &str) -> CellId {
    CellId {
        benchmark: name.into(),
        run_id: "test".into(),
        workload: "flights/v1".into(),
        target: "ferretdb".into(),
        platform: "local".into(),
        size: "1k".into(),
        repetition: 1,
    }
}

#[tokio::test]
async fn a_ten_second_flights_run_keeps_the_mix_the_hit_rate_and_unique_inserts() {
    let server = support::private_mongo("flights-run");
    let target = connect("ferretdb", &server.uri, 8, Duration::from_secs(10))
        .await
        .unwrap();
    let params = Params::default();
    let seeded = seed(&target.client, &params, 1_000)
        .await
        .expect("seeding 1k");
    eprintln!(
        "seeded 1k documents at {:.0} docs/s",
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
        1_000,
        &progress,
    )
    .await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);

    let measured = result.measured.as_ref().unwrap();
    let total = measured.overall.completed as f64;
    for (label, op) in &measured.operations {
        eprintln!("{label}: {} ops, {:?}", op.completed, op.latency_us);
    }
    assert!(total > 500.0, "only {total} operations in 10 s");
    let share = |label: &str| {
        measured.operations.get(label).map_or(0, |o| o.completed) as f64 / total * 100.0
    };
    for (label, expected) in [
        ("find", 60.0),
        ("update", 20.0),
        ("delete", 10.0),
        ("insert", 10.0),
    ] {
        let got = share(label);
        assert!(
            (got - expected).abs() <= 2.0,
            "{label}: {got:.2}% of operations, expected {expected}% ± 2"
        );
    }
    // Nothing failed: in particular no duplicate key, so inserts never collided.
    assert_eq!(
        measured.overall.succeeded, measured.overall.completed,
        "errors: {:?}",
        measured.overall.errors
    );

    let finds = result.targeting.get("find").expect("find targeting");
    let aimed = (finds.aimed_hits + finds.planned_misses) as f64;
    let hit_rate = finds.aimed_hits as f64 / aimed;
    assert!(
        (hit_rate - 0.9).abs() < 0.03,
        "finds aimed at seeded documents {hit_rate:.3}, expected 0.9"
    );
    // A hit finds its document unless a delete of this run removed it first (stale miss).
    assert!(finds.found <= finds.aimed_hits);
    assert!(
        finds.found as f64 >= 0.97 * finds.aimed_hits as f64,
        "{finds:?}"
    );
    assert_eq!(result.fingerprint.len(), 64);
    assert!(!result.explain.is_empty(), "explain samples were taken");
}
