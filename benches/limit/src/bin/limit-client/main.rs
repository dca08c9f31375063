//! limit-client: the cheapest client of a benchmark's operation mix. Every command is encoded
//! once before the run (OP_MSG frames; an insert's `_id` and a delete's target are patched in
//! place), each connection keeps one operation in flight, and replies are read whole but not
//! decoded (the first reply of each kind is checked before the run).
//!
//!   limit-client --uri mongodb://127.0.0.1:27100/ --workload ycsb-a --connections 16 \
//!     --records 1000 --load --warmup 2 --seconds 10
//!   limit-client --uri mongodb://127.0.0.1:27100/ --stats     # the limit server's counters
//!
//! Workloads: `ycsb-a` (50% read, 50% update), `ycsb-c` (100% read), `ycsb-e` (95% scan of
//! 1–100 records, 5% insert): YCSB's core workloads on `ycsb.usertable`, zipfian keys, 10
//! fields of 100 bytes; `flights` (60% find, 20% update, 10% delete, 10% insert on
//! `airline.flights`, ~3 KB documents): the flights mix's shares, with `_id` filters.
//! Prints one line of `key value` pairs: the measured window's operations, seconds, client
//! CPU seconds (user + system), ops per CPU-second, CPU µs per operation and peak RSS.
//!
//! `args` reads the command line, `generate` makes the workloads' keys and documents, `frames`
//! encodes a mix's commands, `net` sends them, `load` seeds the collection; this file runs a
//! measured window and reports it.

mod args;
mod frames;
mod generate;
mod load;
mod net;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bson::{Document, doc};
use mongobench_limit::wire;

use args::{Args, parse_args};
use frames::{Patch, frames};
use load::{bulk_load, load};
use net::{checked, command, connect, roundtrip};

fn cpu_and_rss() -> (f64, i64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(u.ru_utime) + secs(u.ru_stime), u.ru_maxrss)
}

fn main() {
    let args = parse_args();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let code = runtime.block_on(run(args));
    std::process::exit(code);
}

async fn run(args: Args) -> i32 {
    if args.stats {
        return match command(&args.addr, "admin", doc! {"limitStats": 1}).await {
            Ok(d) => {
                let line: Vec<String> = d
                    .iter()
                    .filter(|(k, _)| *k != "ok")
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect();
                println!("{}", line.join(" "));
                0
            }
            Err(e) => {
                eprintln!("limit-client: {e}");
                1
            }
        };
    }
    if let Some(batch) = args.bulk_load {
        return bulk_load(&args, batch).await;
    }
    if args.load
        && let Err(e) = load(&args.addr, &args.workload, args.records, args.seed).await
    {
        eprintln!("limit-client: {e}");
        return 1;
    }
    let pool = Arc::new(frames(&args.workload, args.records, args.seed));
    // Check one reply of each kind before the run: the frames must be answered `ok`.
    let mut checked_kinds: Vec<&str> = Vec::new();
    for f in pool.iter() {
        if checked_kinds.contains(&f.kind) || f.patch != Patch::None {
            continue;
        }
        checked_kinds.push(f.kind);
        let (mut r, mut w) = match connect(&args.addr).await {
            Ok(c) => c,
            Err(e) => {
                eprintln!("limit-client: {}: {e}", args.addr);
                return 1;
            }
        };
        let mut buf = Vec::new();
        let reply = match roundtrip(&mut w, &mut r, &f.bytes, &mut buf).await {
            Ok(()) => wire::reply_document(&buf)
                .map_err(|e| e.to_string())
                .and_then(|d| Document::try_from(d.as_ref()).map_err(|e| e.to_string())),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = reply.and_then(|d| checked(&d, f.kind)) {
            eprintln!("limit-client: the server refused a {} frame: {e}", f.kind);
            return 1;
        }
    }

    let ops = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..args.connections {
        let (pool, ops, errors, stop, addr) = (
            pool.clone(),
            ops.clone(),
            errors.clone(),
            stop.clone(),
            args.addr.clone(),
        );
        tasks.spawn(async move {
            let (mut r, mut w) = match connect(&addr).await {
                Ok(x) => x,
                Err(_) => {
                    errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            };
            let mut buf = Vec::with_capacity(64 * 1024);
            let mut scratch: Vec<u8> = Vec::new();
            // Fresh ids: per connection, far above the loaded range.
            let mut next_id: i64 = (c as i64 + 1) << 40;
            let mut last_id: Option<i64> = None;
            let mut i = c * pool.len() / args.connections.max(1);
            while !stop.load(Ordering::Relaxed) {
                let f = &pool[i % pool.len()];
                i += 1;
                let bytes: &[u8] = match f.patch {
                    Patch::None => &f.bytes,
                    Patch::NewInt(at) => {
                        scratch.clone_from(&f.bytes);
                        scratch[at..at + 8].copy_from_slice(&next_id.to_le_bytes());
                        last_id = Some(next_id);
                        next_id += 1;
                        &scratch
                    }
                    Patch::NewDigits(at) => {
                        scratch.clone_from(&f.bytes);
                        scratch[at..at + 19].copy_from_slice(format!("{next_id:019}").as_bytes());
                        next_id += 1;
                        &scratch
                    }
                    Patch::LastInt(at) => {
                        scratch.clone_from(&f.bytes);
                        let id = last_id.take().unwrap_or(-1);
                        scratch[at..at + 8].copy_from_slice(&id.to_le_bytes());
                        &scratch
                    }
                };
                if roundtrip(&mut w, &mut r, bytes, &mut buf).await.is_err() {
                    errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                ops.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
    let (ops0, (cpu0, _), t0) = (ops.load(Ordering::Relaxed), cpu_and_rss(), Instant::now());
    tokio::time::sleep(Duration::from_secs_f64(args.seconds)).await;
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
    i32::from(errors.load(Ordering::Relaxed) > 0)
}
