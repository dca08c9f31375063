//! Client-side efficiency of the runner against a real MongoDB-wire server: operations per
//! client CPU-second for the flights mix and YCSB A at 16 and 256 workers, and the seeding
//! rate. Prints figures; asserts nothing (machines here are shared and noisy).
//!
//!   testenv/up mongo && cargo bench --bench throughput
//!
//! MONGODB_URI overrides the server (default: the testenv's FerretDB on 127.0.0.1:27018).
//! Each measurement uses its own database state: the bench drops `airline` and `ycsb` first.

use std::time::Duration;

use mongobench::api::RunLength;
use mongobench::result::{CellId, CellResult};
use mongobench::runner::cell::{CellProgress, RunSettings, WorkloadPlan, run_cell};
use mongobench::runner::connect::connect;
use mongobench::runner::{dataset, seed_flights, seed_ycsb};
use mongobench::workload::flights::Params;
use mongobench::workload::ycsb::RawProperties;

// Small collections: the test server scans every document for most queries, so larger ones
// would measure the server's scans, not the client.
const FLIGHTS_DOCS: u64 = 200;
const YCSB_RECORDS: u64 = 1_000;

fn cell(workload: &str, workers: u32) -> CellId {
    CellId {
        benchmark: "bench".into(),
        run_id: "bench".into(),
        workload: workload.into(),
        target: "server".into(),
        platform: "local".into(),
        size: format!("{workers}w"),
        repetition: 1,
    }
}

fn settings(workers: u32, seconds: u64) -> RunSettings {
    RunSettings {
        workers,
        measured: RunLength::Duration(Duration::from_secs(seconds)),
        warmup: RunLength::Duration(Duration::from_secs(1)),
        target_ops_per_sec: None,
        write_concern: None,
        read_preference: None,
    }
}

fn line(name: &str, workers: u32, r: &CellResult) {
    let m = r.measured.as_ref().expect("a measured phase");
    let cpu = r.client_cpu.as_ref().expect("client CPU");
    let cpu_s = (cpu.user_us + cpu.system_us) as f64 / 1e6;
    println!(
        "{name:<10} workers {workers:>3}: {:>9.1} ops/s, {:>8} ops, client CPU {:>6.2} s ({:>4.1}% of {} cores), {:>10.0} ops per client CPU-second",
        m.overall.ops_per_sec,
        m.overall.completed,
        cpu_s,
        cpu.utilization * 100.0,
        cpu.cores,
        m.overall.completed as f64 / cpu_s.max(1e-9),
    );
}

#[tokio::main]
async fn main() {
    let uri = std::env::var("MONGODB_URI").unwrap_or_else(|_| "mongodb://127.0.0.1:27018/".into());
    let target = connect("server", &uri, 256, Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{e} (start the server with `testenv/up mongo`)"));
    println!(
        "server {} ({}) at {uri}",
        target.server.version, target.server.topology
    );
    target.client.database("airline").drop().await.unwrap();
    target.client.database("ycsb").drop().await.unwrap();
    target.client.database("mongobench").drop().await.unwrap();

    let params = Params::default();
    let seeded = seed_flights::seed(&target.client, &params, 5_000)
        .await
        .unwrap();
    println!(
        "seeding flights: {:.0} documents/s ({} documents, {} workers)",
        seeded.docs_per_second, seeded.to, params.seed_workers
    );
    let raw = RawProperties::preset("workloada").unwrap();
    let loaded = seed_ycsb::load(&target.client, &raw, 1, YCSB_RECORDS, 16)
        .await
        .unwrap();
    println!(
        "loading YCSB: {:.0} records/s ({} records, 16 workers)",
        loaded.docs_per_second, loaded.to
    );

    // The seeded states the cells start from and restore to: flights back down to the small
    // collection the runs use.
    let flights = WorkloadPlan::Flights(Box::new(params.clone()));
    let ycsb = WorkloadPlan::Ycsb {
        raw: raw.clone(),
        seed: 1,
    };
    let mut flights_state =
        dataset::prepare(&target.client, &flights, 16, FLIGHTS_DOCS, None, false)
            .await
            .unwrap();
    let mut ycsb_state = dataset::prepare(&target.client, &ycsb, 16, YCSB_RECORDS, None, false)
        .await
        .unwrap();

    for workers in [16, 256] {
        let r = run_cell(
            &target,
            &uri,
            &flights,
            &settings(workers, 15),
            cell("flights", workers),
            &mut flights_state,
            &CellProgress::default(),
        )
        .await;
        line("flights", workers, &r);
        let r = run_cell(
            &target,
            &uri,
            &ycsb,
            &settings(workers, 15),
            cell("ycsb-a", workers),
            &mut ycsb_state,
            &CellProgress::default(),
        )
        .await;
        line("ycsb-a", workers, &r);
    }
}
