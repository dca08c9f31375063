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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bson::{Bson, Document, RawDocumentBuf, doc};
use mongobench_limit::wire;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

fn usage() -> ! {
    eprintln!(
        "usage: limit-client --uri URI (--stats | --workload ycsb-a|ycsb-c|ycsb-e|flights \
         [--connections N] [--records N] [--load] [--warmup S] [--seconds S] [--seed N] \
         [--bulk-load BATCH])"
    );
    std::process::exit(2);
}

struct Args {
    addr: String,
    workload: String,
    connections: usize,
    records: u64,
    load: bool,
    warmup: f64,
    seconds: f64,
    seed: u64,
    stats: bool,
    /// Only load `records` documents in inserts of this many, `connections` at a time.
    bulk_load: Option<u64>,
}

fn parse_args() -> Args {
    let mut a = Args {
        addr: "127.0.0.1:27100".into(),
        workload: "ycsb-a".into(),
        connections: 16,
        records: 1000,
        load: false,
        warmup: 0.0,
        seconds: 10.0,
        seed: 1,
        stats: false,
        bulk_load: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--uri" => a.addr = address(&value()),
            "--workload" => a.workload = value(),
            "--connections" => a.connections = value().parse().unwrap_or_else(|_| usage()),
            "--records" => a.records = value().parse().unwrap_or_else(|_| usage()),
            "--warmup" => a.warmup = value().parse().unwrap_or_else(|_| usage()),
            "--seconds" => a.seconds = value().parse().unwrap_or_else(|_| usage()),
            "--seed" => a.seed = value().parse().unwrap_or_else(|_| usage()),
            "--load" => a.load = true,
            "--bulk-load" => a.bulk_load = Some(value().parse().unwrap_or_else(|_| usage())),
            "--stats" => a.stats = true,
            _ => usage(),
        }
    }
    a
}

/// `host:port` of a `mongodb://host:port/...` URI (or of `host:port`).
fn address(uri: &str) -> String {
    let rest = uri.strip_prefix("mongodb://").unwrap_or(uri);
    let host = rest.split(['/', '?']).next().unwrap_or(rest);
    let host = host.rsplit('@').next().unwrap_or(host);
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:27017")
    }
}

/// SplitMix64: the client's only source of randomness, seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// YCSB's zipfian distribution (theta 0.99) over [0, n), scrambled by FNV-1a like YCSB's
/// ScrambledZipfianGenerator, so popular keys spread over the key space.
struct Zipfian {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    fn new(n: u64) -> Zipfian {
        let theta = 0.99;
        let zeta = |n: u64| (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zetan = zeta(n);
        let zeta2 = zeta(2.min(n));
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Zipfian {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
        }
    }

    fn next(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        let uz = u * self.zetan;
        let rank = if uz < 1.0 {
            0
        } else if uz < 1.0 + 0.5f64.powf(self.theta) {
            1
        } else {
            ((self.n as f64) * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
        };
        fnv(rank.min(self.n - 1)) % self.n
    }
}

fn fnv(x: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

fn ycsb_key(n: u64) -> String {
    format!("user{:019}", fnv(n))
}

/// Ten fields of 100 bytes, as YCSB's core workloads write them.
fn ycsb_fields(rng: &mut Rng) -> Document {
    let mut d = Document::new();
    for f in 0..10 {
        let bytes: Vec<u8> = (0..100).map(|_| b' ' + (rng.below(95) as u8)).collect();
        d.insert(
            format!("field{f}"),
            bson::Binary {
                subtype: bson::spec::BinarySubtype::Generic,
                bytes,
            },
        );
    }
    d
}

const AIRPORTS: [&str; 8] = ["ATL", "DFW", "DEN", "ORD", "LAX", "JFK", "LAS", "MCO"];

fn flight(seq: i64, rng: &mut Rng) -> Document {
    let passengers: Vec<Bson> = (0..30)
        .map(|i| {
            Bson::Document(doc! {
                "name": format!("passenger {seq}-{i}"),
                "seat": format!("{}{}", 1 + rng.below(40), (b'A' + rng.below(6) as u8) as char),
                "ticket": format!("{:013}", rng.below(10_000_000_000_000)),
            })
        })
        .collect();
    doc! {
        "_id": seq,
        "flight_id": format!("FL{:05}", seq % 5000),
        "flight_code": format!("AB{}", seq % 9000),
        "origin": AIRPORTS[rng.below(8) as usize],
        "destination": AIRPORTS[rng.below(8) as usize],
        "flight_date": bson::DateTime::from_millis(1_700_000_000_000 + (seq % 365) * 86_400_000),
        "gate": format!("G{}", rng.below(60)),
        "status": "scheduled",
        "seats_available": 180 - (rng.below(60) as i32),
        "passengers": passengers,
    }
}

/// How a frame is changed before each send.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Patch {
    None,
    /// A fresh `_id`: an int64 at this offset (flights) …
    NewInt(usize),
    /// … or 19 ASCII digits (YCSB's string keys).
    NewDigits(usize),
    /// The `_id` this connection inserted last (an int64).
    LastInt(usize),
}

struct Frame {
    bytes: Vec<u8>,
    patch: Patch,
    kind: &'static str,
}

const NEW_INT: i64 = 0x5A5A_5A5A_5A5A_5A5A;
const NEW_DIGITS: &str = "user9876543210987654321";
const LAST_INT: i64 = 0x3C3C_3C3C_3C3C_3C3C;

fn frame(kind: &'static str, db: &str, mut body: Document) -> Frame {
    body.insert("$db", db);
    let raw = RawDocumentBuf::from_document(&body).expect("a command serialises");
    let mut bytes = Vec::new();
    wire::encode_msg(&mut bytes, 1, 0, raw.as_bytes());
    let find = |needle: &[u8]| bytes.windows(needle.len()).position(|w| w == needle);
    let patch = if let Some(at) = find(&NEW_INT.to_le_bytes()) {
        Patch::NewInt(at)
    } else if let Some(at) = find(&LAST_INT.to_le_bytes()) {
        Patch::LastInt(at)
    } else if let Some(at) = find(&NEW_DIGITS.as_bytes()[4..]) {
        Patch::NewDigits(at)
    } else {
        Patch::None
    };
    Frame { bytes, patch, kind }
}

/// The pool of frames a run cycles through, in the mix's proportions.
fn frames(workload: &str, records: u64, seed: u64) -> Vec<Frame> {
    const POOL: usize = 4096;
    let mut rng = Rng(seed);
    let zipf = Zipfian::new(records.max(2));
    let mut out = Vec::with_capacity(POOL);
    for _ in 0..POOL {
        let p = rng.unit();
        let f = match workload {
            "ycsb-a" | "ycsb-c" => {
                let key = ycsb_key(zipf.next(&mut rng));
                if workload == "ycsb-a" && p < 0.5 {
                    let field = format!("field{}", rng.below(10));
                    let value = ycsb_fields(&mut rng).get(&field).cloned().expect("a field");
                    frame(
                        "update",
                        "ycsb",
                        doc! {"update": "usertable", "updates": [{"q": {"_id": key}, "u": {"$set": {field: value}}}], "ordered": true},
                    )
                } else {
                    frame(
                        "read",
                        "ycsb",
                        doc! {"find": "usertable", "filter": {"_id": key}, "limit": 1, "singleBatch": true},
                    )
                }
            }
            "ycsb-e" => {
                if p < 0.95 {
                    let key = ycsb_key(zipf.next(&mut rng));
                    let n = 1 + rng.below(100) as i32;
                    frame(
                        "scan",
                        "ycsb",
                        doc! {"find": "usertable", "filter": {"_id": {"$gte": key}}, "sort": {"_id": 1}, "limit": n, "batchSize": n},
                    )
                } else {
                    let mut d = doc! {"_id": NEW_DIGITS};
                    d.extend(ycsb_fields(&mut rng));
                    frame(
                        "insert",
                        "ycsb",
                        doc! {"insert": "usertable", "documents": [d], "ordered": true},
                    )
                }
            }
            "flights" => {
                let seq = rng.below(records) as i64;
                if p < 0.6 {
                    frame(
                        "find",
                        "airline",
                        doc! {"find": "flights", "filter": {"_id": seq}, "projection": {"flight_id": 1, "flight_code": 1, "origin": 1, "destination": 1, "gate": 1, "status": 1, "_id": 0}, "limit": 1, "singleBatch": true},
                    )
                } else if p < 0.8 {
                    frame(
                        "update",
                        "airline",
                        doc! {"update": "flights", "updates": [{"q": {"_id": seq}, "u": {"$inc": {"seats_available": -1}, "$set": {"status": "boarding"}}, "multi": false}]},
                    )
                } else if p < 0.9 {
                    frame(
                        "delete",
                        "airline",
                        doc! {"delete": "flights", "deletes": [{"q": {"_id": LAST_INT}, "limit": 1}]},
                    )
                } else {
                    let mut d = flight(0, &mut rng);
                    d.insert("_id", NEW_INT);
                    frame(
                        "insert",
                        "airline",
                        doc! {"insert": "flights", "documents": [d], "ordered": false},
                    )
                }
            }
            _ => usage(),
        };
        out.push(f);
    }
    out
}

async fn roundtrip(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    frame: &[u8],
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    write.write_all(frame).await?;
    let mut len = [0u8; 4];
    read.read_exact(&mut len).await?;
    let n = i32::from_le_bytes(len) as usize;
    if !(16..=wire::MAX_MESSAGE).contains(&n) {
        return Err(std::io::Error::other(format!("reply length {n}")));
    }
    buf.clear();
    buf.extend_from_slice(&len);
    buf.resize(n, 0);
    read.read_exact(&mut buf[4..]).await?;
    Ok(())
}

async fn connect(
    addr: &str,
) -> std::io::Result<(
    BufReader<tokio::net::tcp::OwnedReadHalf>,
    tokio::net::tcp::OwnedWriteHalf,
)> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (r, w) = stream.into_split();
    Ok((BufReader::with_capacity(64 * 1024, r), w))
}

/// Sends one command and decodes its reply (setup and checks only).
async fn command(addr: &str, db: &str, body: Document) -> Result<Document, String> {
    let f = frame("command", db, body);
    let (mut r, mut w) = connect(addr).await.map_err(|e| format!("{addr}: {e}"))?;
    let mut buf = Vec::new();
    roundtrip(&mut w, &mut r, &f.bytes, &mut buf)
        .await
        .map_err(|e| e.to_string())?;
    let reply = wire::reply_document(&buf).map_err(|e| e.to_string())?;
    Document::try_from(reply.as_ref()).map_err(|e| e.to_string())
}

fn checked(reply: &Document, what: &str) -> Result<(), String> {
    let ok = reply.get("ok").and_then(Bson::as_f64).unwrap_or(0.0) == 1.0;
    if !ok || reply.contains_key("writeErrors") {
        return Err(format!("{what}: {reply}"));
    }
    Ok(())
}

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

async fn load(addr: &str, workload: &str, records: u64, seed: u64) -> Result<(), String> {
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
async fn bulk_load(args: &Args, batch: u64) -> i32 {
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
