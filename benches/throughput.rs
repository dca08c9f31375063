//! Client-side efficiency of the runner against a real MongoDB-wire server: operations per
//! client CPU-second for the flights mix and YCSB A at 16 and 256 workers, and the seeding
//! rate. Prints figures; asserts nothing (machines here are shared and noisy).
//!
//!   testenv/up mongo && cargo bench --bench throughput
//!
//! MONGODB_URI overrides the server (default: the testenv's FerretDB on 127.0.0.1:27018).
//! Each measurement uses its own database state: the bench drops `airline` and `ycsb` first.
//!
//! With `--servers`, it compares servers instead: flights (default parameters: plgm6 indexes)
//! and YCSB A throughput at each size, on each server, one after the other:
//!
//!   testenv/up mongo mongo-sqlite && cargo bench --bench throughput -- \
//!     --servers pg=mongodb://127.0.0.1:27018/,sqlite=mongodb://127.0.0.1:27019/ \
//!     --docs 10000,100000 --workers 16 --seconds 20 --cell-limit 240 [--workloads ycsb-a,flights]
//!
//! Every cell starts from freshly seeded data. A cell that has not finished after
//! `--cell-limit` seconds (warm-up, measured phase and the wait for operations still in flight
//! together) is abandoned and reported as an upper bound from the operations completed so far;
//! the server's later cells of that workload are skipped, since it is still busy with the
//! abandoned operations (restart it before measuring anything else on it).

use std::time::Duration;

use mongobench::api::{DEFAULT_OPERATION_TIMEOUT, RunLength};
use mongobench::plan::{RunSettings, WorkloadPlan};
use mongobench::result::{CellId, CellResult};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::dataset::{self, seed_flights, seed_ycsb};
use mongobench::runner::server::{ConnectedTarget, connect};
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
        operation_timeout: DEFAULT_OPERATION_TIMEOUT,
        sweep: None,
        warmup_load: None,
        warmup_settle: None,
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
    if let Some(compare) = Compare::from_args() {
        compare.run().await;
        return;
    }
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
    let seeded = seed_flights::seed(
        &target.client,
        &params,
        5_000,
        DEFAULT_OPERATION_TIMEOUT,
        None,
        None,
    )
    .await
    .unwrap();
    println!(
        "seeding flights: {:.0} documents/s ({} documents, {} workers)",
        seeded.docs_per_second, seeded.to, params.seed_workers
    );
    let raw = RawProperties::preset("workloada").unwrap();
    let loaded = seed_ycsb::load(
        &target,
        &raw,
        1,
        YCSB_RECORDS,
        16,
        DEFAULT_OPERATION_TIMEOUT,
        None,
        None,
    )
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
    let mut flights_state = dataset::prepare(
        &target,
        &flights,
        16,
        FLIGHTS_DOCS,
        None,
        false,
        DEFAULT_OPERATION_TIMEOUT,
    )
    .await
    .unwrap();
    let mut ycsb_state = dataset::prepare(
        &target,
        &ycsb,
        16,
        YCSB_RECORDS,
        None,
        false,
        DEFAULT_OPERATION_TIMEOUT,
    )
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

/// `--servers NAME=URI,...`: the servers side by side.
struct Compare {
    servers: Vec<(String, String)>,
    workloads: Vec<String>,
    docs: Vec<u64>,
    workers: u32,
    seconds: u64,
    cell_limit: Duration,
}

impl Compare {
    /// `None` without `--servers` (cargo adds `--bench`, which is ignored).
    fn from_args() -> Option<Compare> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let value = |flag: &str| {
            args.iter().position(|a| a == flag).map(|i| {
                args.get(i + 1)
                    .unwrap_or_else(|| panic!("{flag} needs a value"))
            })
        };
        let list = |flag: &str, default: &str| -> Vec<u64> {
            value(flag)
                .map_or(default, |v| v.as_str())
                .split(',')
                .map(|n| {
                    n.parse()
                        .unwrap_or_else(|_| panic!("{flag}: {n} is not a number"))
                })
                .collect()
        };
        let servers = value("--servers")?
            .split(',')
            .map(|s| {
                let (name, uri) = s
                    .split_once('=')
                    .unwrap_or_else(|| panic!("--servers: expected NAME=URI, got {s}"));
                (name.to_owned(), uri.to_owned())
            })
            .collect();
        let workloads: Vec<String> = value("--workloads")
            .map_or("ycsb-a,flights", |v| v.as_str())
            .split(',')
            .map(str::to_owned)
            .collect();
        for w in &workloads {
            assert!(
                w == "ycsb-a" || w == "flights",
                "--workloads: {w} is not ycsb-a or flights"
            );
        }
        Some(Compare {
            servers,
            workloads,
            docs: list("--docs", "10000,100000"),
            workers: list("--workers", "16")[0] as u32,
            seconds: list("--seconds", "20")[0],
            cell_limit: Duration::from_secs(list("--cell-limit", "240")[0]),
        })
    }

    async fn run(&self) {
        println!(
            "{} workers, {} s measured after 1 s warm-up, at most {} s per cell; flights: default parameters (plgm6 indexes)",
            self.workers,
            self.seconds,
            self.cell_limit.as_secs()
        );
        let mut rows = Vec::new();
        for (name, uri) in &self.servers {
            let target = connect(name, uri, self.workers.max(16), Duration::from_secs(10))
                .await
                .unwrap_or_else(|e| panic!("{name} at {uri}: {e}"));
            println!("{name}: {uri}, reports version {}", target.server.version);
            // YCSB first, then flights: the flights cells are the ones that may be abandoned,
            // and nothing else runs on a server after that.
            for workload in ["ycsb-a", "flights"] {
                if !self.workloads.iter().any(|w| w == workload) {
                    continue;
                }
                let mut abandoned = false;
                for &docs in &self.docs {
                    let figure = if abandoned {
                        "skipped (server busy)".to_owned()
                    } else {
                        let (figure, finished) = self.cell(&target, uri, workload, docs).await;
                        abandoned = !finished;
                        figure
                    };
                    println!("{name:<8} {workload:<8} {docs:>7} docs: {figure}");
                    rows.push((name.clone(), workload, docs, figure));
                }
            }
        }
        println!("\n| server | workload | documents | ops/s |\n| --- | --- | ---: | --- |");
        for (name, workload, docs, figure) in rows {
            println!("| {name} | {workload} | {docs} | {figure} |");
        }
    }

    /// Seeds `docs` afresh and runs one cell; returns its figure and whether it finished.
    async fn cell(
        &self,
        target: &ConnectedTarget,
        uri: &str,
        workload: &str,
        docs: u64,
    ) -> (String, bool) {
        for db in ["airline", "ycsb", "mongobench"] {
            target.client.database(db).drop().await.unwrap();
        }
        let plan = if workload == "flights" {
            WorkloadPlan::Flights(Box::default())
        } else {
            let raw = RawProperties::preset("workloada").unwrap();
            WorkloadPlan::Ycsb { raw, seed: 1 }
        };
        let mut state = dataset::prepare(
            target,
            &plan,
            16,
            docs,
            None,
            false,
            DEFAULT_OPERATION_TIMEOUT,
        )
        .await
        .unwrap();
        let seeded = state.seconds;
        let progress = CellProgress::default();
        let run_settings = settings(self.workers, self.seconds);
        let started = std::time::Instant::now();
        let run = run_cell(
            target,
            uri,
            &plan,
            &run_settings,
            cell(workload, self.workers),
            &mut state,
            &progress,
        );
        match tokio::time::timeout(self.cell_limit, run).await {
            Ok(r) => {
                let m = r.measured.as_ref().expect("a measured phase");
                let figure = format!(
                    "{:.1} ({} ops; seeded in {seeded:.0} s)",
                    m.overall.ops_per_sec, m.overall.completed
                );
                (figure, true)
            }
            Err(_) => {
                let done = progress
                    .ops
                    .completed
                    .load(std::sync::atomic::Ordering::Relaxed);
                let elapsed = started.elapsed().as_secs_f64();
                let figure = format!(
                    "< {:.3} (abandoned after {elapsed:.0} s: {done} ops done, warm-up included; seeded in {seeded:.0} s)",
                    (done.max(1)) as f64 / elapsed
                );
                (figure, false)
            }
        }
    }
}
