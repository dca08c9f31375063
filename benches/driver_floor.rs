//! The driver's floor: the cheapest loop the MongoDB driver allows for a YCSB workload, so that
//! mongobench's client cost can be split into the wire's (the limit client), the driver's
//! (this) and mongobench's own (generation, fingerprint, timing, judging).
//!
//!   cargo bench --bench driver_floor -- --uri mongodb://127.0.0.1:27151/ \
//!     [--workload a] [--workers 16] [--records 1000] [--warmup 3] [--seconds 15]
//!
//! It loads the records with mongobench's own loader, generates 20,000 operations of the
//! workload with mongobench's generator (seed 1), and then has each worker send them in turn,
//! from its own offset, through `Database::run_raw_command`: the bodies are encoded once and
//! only cloned per operation, replies are not judged, nothing is timed or fingerprinted. Prints
//! one line in the limit client's format (tools/bench/run reads it): `ops N seconds S ops_per_sec X
//! cpu_seconds C ops_per_cpu_second Y cpu_us_per_op Z max_rss_kb R errors E`, CPU and RSS from
//! getrusage over the window after the warm-up. Asserts nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mongobench::api::DEFAULT_OPERATION_TIMEOUT;
use mongobench::runner::dataset::seed_ycsb;
use mongobench::runner::server::connect;
use mongobench::workload::Command;
use mongobench::workload::ycsb::{self, Properties, RawProperties, SharedState, YcsbPhase};

const POOL: u64 = 20_000;

struct Args {
    uri: String,
    workload: String,
    workers: u32,
    records: u64,
    warmup: f64,
    seconds: f64,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        uri: String::new(),
        workload: "a".into(),
        workers: 16,
        records: 1_000,
        warmup: 3.0,
        seconds: 15.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--bench" {
            continue; // cargo bench passes it to harness = false targets
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag}: {v:?} is not a number"))
        };
        match flag.as_str() {
            "--uri" => a.uri = value,
            "--workload" => a.workload = value,
            "--workers" => a.workers = number(&value)? as u32,
            "--records" => a.records = number(&value)? as u64,
            "--warmup" => a.warmup = number(&value)?,
            "--seconds" => a.seconds = number(&value)?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if a.uri.is_empty() {
        return Err("--uri is required".into());
    }
    Ok(a)
}

fn cpu_and_rss() -> (f64, i64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(u.ru_utime) + secs(u.ru_stime), u.ru_maxrss)
}

/// The run phase's first [`POOL`] operations of one worker, as mongobench would send them.
fn pool(raw: &RawProperties, records: u64) -> Result<Vec<Vec<Command>>, String> {
    let mut raw = raw.clone();
    raw.set("recordcount", records.to_string());
    raw.set("operationcount", POOL.to_string());
    let props = Properties::from_raw(&raw).map_err(|e| e.to_string())?;
    let shared = SharedState::new(records);
    let mut worker =
        ycsb::Worker::new(&props, 1, 0, 1, YcsbPhase::Run, &shared).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(op) = worker.next() {
        out.push(op.operation.commands);
        worker.complete();
    }
    Ok(out)
}

#[tokio::main]
async fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("driver_floor: {e}");
            std::process::exit(2);
        }
    };
    let raw = RawProperties::preset(&a.workload).unwrap_or_else(|e| {
        eprintln!("driver_floor: --workload: {e}");
        std::process::exit(2)
    });
    let target = connect("floor", &a.uri, a.workers, DEFAULT_OPERATION_TIMEOUT)
        .await
        .unwrap_or_else(|e| {
            eprintln!("driver_floor: {e}");
            std::process::exit(1)
        });
    if let Err(e) = seed_ycsb::load(
        &target,
        &raw,
        1,
        a.records,
        16,
        DEFAULT_OPERATION_TIMEOUT,
        None,
        None,
    )
    .await
    {
        eprintln!("driver_floor: loading {} records: {e}", a.records);
        std::process::exit(1);
    }
    let props = Properties::from_raw(&raw).expect("a preset parses");
    let pool = Arc::new(pool(&raw, a.records).unwrap_or_else(|e| {
        eprintln!("driver_floor: generating operations: {e}");
        std::process::exit(1)
    }));
    let ops = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..a.workers {
        let (pool, ops, errors, stop) = (pool.clone(), ops.clone(), errors.clone(), stop.clone());
        let db = target.client.database(&props.database);
        tasks.spawn(async move {
            let mut i = w as usize * pool.len() / a.workers.max(1) as usize;
            while !stop.load(Ordering::Relaxed) {
                for command in &pool[i % pool.len()] {
                    if db.run_raw_command(command.body.clone()).await.is_err() {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                i += 1;
                ops.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    tokio::time::sleep(Duration::from_secs_f64(a.warmup)).await;
    let (ops0, (cpu0, _), t0) = (ops.load(Ordering::Relaxed), cpu_and_rss(), Instant::now());
    tokio::time::sleep(Duration::from_secs_f64(a.seconds)).await;
    let (ops1, (cpu1, rss), elapsed) = (
        ops.load(Ordering::Relaxed),
        cpu_and_rss(),
        t0.elapsed().as_secs_f64(),
    );
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    let (n, cpu) = (ops1 - ops0, cpu1 - cpu0);
    println!(
        "ops {n} seconds {elapsed:.3} ops_per_sec {:.1} cpu_seconds {cpu:.3} ops_per_cpu_second {:.1} cpu_us_per_op {:.2} max_rss_kb {rss} errors {}",
        n as f64 / elapsed,
        n as f64 / cpu.max(1e-9),
        cpu * 1e6 / (n.max(1) as f64),
        errors.load(Ordering::Relaxed)
    );
    std::process::exit(i32::from(errors.load(Ordering::Relaxed) > 0));
}
