//! Seeding the workload's collection: `--load` before a run, and `--bulk-load`, the measured
//! seeding floor.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bson::{Document, RawDocumentBuf, doc};
use mongobench_limit::wire;

use crate::args::Args;
use crate::cpu_and_rss;
use crate::generate::{Rng, flight, ycsb_fields, ycsb_key};
use crate::net::{checked, command, connect, roundtrip};

/// Record `n` of the workload's collection: a flight, or a YCSB key with its ten fields.
fn record(workload: &str, n: u64, rng: &mut Rng) -> Document {
    if workload == "flights" {
        flight(n as i64, rng)
    } else {
        let mut d = doc! {"_id": ycsb_key(n)};
        d.extend(ycsb_fields(rng));
        d
    }
}

pub(crate) async fn load(
    addr: &str,
    workload: &str,
    records: u64,
    seed: u64,
) -> Result<(), String> {
    let (db, coll) = if workload == "flights" {
        ("airline", "flights")
    } else {
        ("ycsb", "usertable")
    };
    let _ = command(addr, db, doc! {"drop": coll}).await?;
    let mut rng = Rng(seed ^ 0xD1CE);
    let mut next = 0u64;
    while next < records {
        let end = (next + 500).min(records);
        let docs: Vec<Document> = (next..end).map(|n| record(workload, n, &mut rng)).collect();
        let reply = command(
            addr,
            db,
            doc! {"insert": coll, "documents": docs, "ordered": false},
        )
        .await?;
        checked(&reply, "loading")?;
        next = end;
    }
    Ok(())
}

/// The seeding floor: `records` documents of the workload (generated as [`load`] generates
/// them) inserted in unordered batches of `batch`, `connections` batches in flight, each batch
/// encoded straight into its frame. Prints one line: documents, seconds, documents/s, MB/s of
/// frames, client CPU and peak RSS.
pub(crate) async fn bulk_load(args: &Args, batch: u64) -> i32 {
    let (db, coll) = if args.workload == "flights" {
        ("airline", "flights")
    } else {
        ("ycsb", "usertable")
    };
    if let Err(e) = command(&args.addr, db, doc! {"drop": coll}).await {
        eprintln!("limit-client: {e}");
        return 1;
    }
    let next = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let (cpu0, _) = cpu_and_rss();
    let t0 = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.connections.max(1) {
        let (next, bytes, addr, workload) = (
            next.clone(),
            bytes.clone(),
            args.addr.clone(),
            args.workload.clone(),
        );
        let (records, seed) = (args.records, args.seed);
        tasks.spawn(async move {
            let (mut r, mut w) = connect(&addr).await.map_err(|e| format!("{addr}: {e}"))?;
            let (mut frame_bytes, mut reply) = (Vec::new(), Vec::new());
            loop {
                let from = next.fetch_add(batch, Ordering::Relaxed);
                if from >= records {
                    return Ok::<(), String>(());
                }
                let mut rng = Rng(seed ^ from);
                let mut documents = bson::RawArrayBuf::new();
                for n in from..(from + batch).min(records) {
                    let d = record(&workload, n, &mut rng);
                    documents.push(RawDocumentBuf::from_document(&d).map_err(|e| e.to_string())?);
                }
                let mut body = RawDocumentBuf::new();
                body.append("insert", coll);
                body.append("documents", documents);
                body.append("ordered", false);
                body.append("$db", db);
                frame_bytes.clear();
                wire::encode_msg(&mut frame_bytes, 1, 0, body.as_bytes());
                roundtrip(&mut w, &mut r, &frame_bytes, &mut reply)
                    .await
                    .map_err(|e| e.to_string())?;
                let d = wire::reply_document(&reply).map_err(|e| e.to_string())?;
                checked(
                    &Document::try_from(d.as_ref()).map_err(|e| e.to_string())?,
                    "inserting",
                )?;
                bytes.fetch_add(frame_bytes.len() as u64, Ordering::Relaxed);
            }
        });
    }
    let mut failed = None;
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined.expect("a loading task does not panic") {
            failed.get_or_insert(e);
        }
    }
    if let Some(e) = failed {
        eprintln!("limit-client: {e}");
        return 1;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let (cpu1, rss) = cpu_and_rss();
    println!(
        "docs {} seconds {seconds:.3} docs_per_sec {:.1} mb_per_sec {:.1} cpu_seconds {:.3} max_rss_kb {rss}",
        args.records,
        args.records as f64 / seconds,
        bytes.load(Ordering::Relaxed) as f64 / seconds / 1e6,
        cpu1 - cpu0
    );
    0
}
