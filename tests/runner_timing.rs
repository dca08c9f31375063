//! Coordinated omission: a server that stalls for one second (SIGSTOP, then SIGCONT) must show
//! in an open-loop run's percentiles, and costs exactly one slow operation per worker in a
//! closed loop.
mod support;

use std::time::Duration;

use mongobench::api::RunLength;
use mongobench::result::OperationResult;
use mongobench::result::{CellResult, CellStatus};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::server::connect;
use support::runs;

const WORKERS: u32 = 4;

/// Runs workload C for 6 s, stopping the server for 1 s from second 2.
async fn stalled_run(name: &str, rate: Option<f64>) -> CellResult {
    let server = support::private_mongo(name);
    let plan = runs::ycsb("workloadc");
    let target = connect("ferretdb", &server.uri, WORKERS, Duration::from_secs(10))
        .await
        .unwrap();
    let mut seeded = runs::seeded(&target, &plan, 200, WORKERS).await;

    let pid = server.pid().to_string();
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            std::process::Command::new("kill")
                .args(["-STOP", &pid])
                .status()
                .unwrap()
                .success()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(
            std::process::Command::new("kill")
                .args(["-CONT", &pid])
                .status()
                .unwrap()
                .success()
        );
    });
    let mut settings = runs::settings(WORKERS, RunLength::Duration(Duration::from_secs(6)));
    settings.target_ops_per_sec = rate;
    let result = run_cell(
        &target,
        &server.uri,
        &plan,
        &settings,
        runs::cell(name, "workloadc"),
        &mut seeded,
        &CellProgress::default(),
    )
    .await;
    stopper.await.unwrap();
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);
    result
}

fn overall(r: &CellResult) -> &OperationResult {
    &r.measured.as_ref().unwrap().overall
}

/// Samples of at least `min_us` in the overall latency histogram.
fn at_least(op: &OperationResult, min_us: u64) -> u64 {
    let h = &op.histograms.latency.0;
    h.iter_recorded()
        .filter(|v| v.value_iterated_to() >= min_us)
        .map(|v| v.count_at_value())
        .sum()
}

#[tokio::test]
async fn open_loop_latency_counts_the_stall_from_each_operations_intended_start() {
    let r = stalled_run("open-loop-stall", Some(200.0)).await;
    let op = overall(&r);
    let p99 = op.latency_us.as_ref().unwrap().p99;
    // ~200 operations fell due during the stall; each waited from its intended start, so
    // well over 1 % of the ~1,200 operations took hundreds of milliseconds.
    assert!(p99 >= 500_000, "p99 {p99} µs does not show a 1 s stall");
    assert!(
        at_least(op, 200_000) >= 100,
        "only {} slow operations",
        at_least(op, 200_000)
    );
    // The service time alone hides most of it: that is coordinated omission.
    let service_p99 = op.uncorrected_latency_us.as_ref().unwrap().p99;
    assert!(
        service_p99 < p99,
        "service-time p99 {service_p99} µs, intended p99 {p99} µs"
    );
}

#[tokio::test]
async fn closed_loop_records_the_stall_as_one_slow_operation_per_worker() {
    let r = stalled_run("closed-loop-stall", None).await;
    let op = overall(&r);
    // Each worker had one operation in flight when the server stopped; it took ~1 s. Nothing
    // else was sent while the workers waited.
    assert_eq!(
        at_least(op, 700_000),
        u64::from(WORKERS),
        "slow operations in a closed loop"
    );
    assert!(op.latency_us.as_ref().unwrap().max >= 900_000);
}
