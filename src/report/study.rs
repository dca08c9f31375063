//! A study for report tests that varies the way real runs do: three targets of different
//! speed and operation counts, one with failed operations and no CPU figures, different
//! repetition counts, an invalid and an incomplete cell, two sizes, uneven per-second
//! series, latency tails, and a target whose `find` plan differs. Figures come from the real
//! recorder, so every summary agrees with its histograms.
//!
//! Golden files live in `tests/fixtures/report/`; `MONGOBENCH_BLESS=1 cargo test --lib
//! report::` rewrites them (review the diff before committing).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::measure::server::ExplainSummary;
use crate::measure::{ErrorKind, LatencyMode, Recorder, Timing};
use crate::result::testing::{cell, identity, with_measured};
use crate::result::{CellResult, CellStatus, LoopMode, MeasuredPhase, MemberFigures, ServerStats};

/// Seconds of every measured phase of the study.
pub(crate) const WINDOW_SECS: u32 = 10;

/// One planned cell: target, size, repetition, mean rate (ops/s).
type Plan = (&'static str, &'static str, u32, f64);

const PLAN: [Plan; 15] = [
    ("psmdb-8.0", "1M", 1, 240.0),
    ("psmdb-8.0", "1M", 2, 246.0),
    ("psmdb-8.0", "1M", 3, 236.0),
    ("mongo-9.0", "1M", 1, 262.0),
    ("mongo-9.0", "1M", 2, 270.0),
    ("mongo-9.0", "1M", 3, 258.0),
    ("mongo-9.0", "1M", 4, 266.0),
    ("ferretdb", "1M", 1, 180.0),
    ("ferretdb", "1M", 2, 184.0),
    ("ferretdb", "1M", 3, 177.0),
    ("ferretdb", "1M", 4, 181.0),
    ("psmdb-8.0", "4M", 1, 150.0),
    ("psmdb-8.0", "4M", 2, 154.0),
    ("mongo-9.0", "4M", 1, 171.0),
    ("mongo-9.0", "4M", 2, 166.0),
];

/// A number in [0, 1) that looks random and is the same on every run.
fn noise(i: u64, salt: u64) -> f64 {
    let x = (i ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_mul(0xbf58_476d_1ce4_e5b9)
        .rotate_left(31)
        .wrapping_mul(0x94d0_49bb_1331_11eb);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The measured phase of one cell: completions per second around `rate` (a slower first
/// second, then ±6 %), 9 finds to 1 insert, latencies slower for slower targets with a tail,
/// and every `fail_every`-th find not found.
fn measured(rate: f64, salt: u64, fail_every: Option<u64>) -> MeasuredPhase {
    let t0 = Instant::now();
    let mut recorder = Recorder::new(t0, LatencyMode::ServiceTime);
    let scale = 240.0 / rate;
    let mut i = 0u64;
    for second in 0..WINDOW_SECS {
        let swing = if second == 0 {
            0.85
        } else {
            1.0 + 0.06 * (f64::from(second) * 1.7 + salt as f64).sin()
        };
        let n = (rate * swing).round() as u64;
        for k in 0..n {
            let done = t0
                + Duration::from_secs(u64::from(second))
                + Duration::from_micros(k * 1_000_000 / n);
            let u = noise(i, salt);
            let tail = if u > 0.999 {
                30.0
            } else if u > 0.99 {
                8.0
            } else {
                0.8 + 0.4 * u
            };
            let (label, base) = if i % 10 == 9 {
                ("insert", 400.0)
            } else {
                ("find", 120.0)
            };
            let latency = Duration::from_micros((base * scale * tail) as u64);
            let outcome = match fail_every {
                Some(every) if label == "find" && i.is_multiple_of(every) => {
                    Err(ErrorKind::NotFound)
                }
                _ => Ok(()),
            };
            let sent = done.checked_sub(latency).unwrap_or(t0);
            recorder.record(
                label,
                Timing {
                    intended: None,
                    sent,
                    done: sent + latency,
                },
                outcome,
            );
            i += 1;
        }
    }
    MeasuredPhase::from_recorder(
        &recorder,
        Duration::from_secs(u64::from(WINDOW_SECS)),
        LoopMode::Closed,
        None,
    )
}

/// Spreads server CPU over the members (the primary does most), names the primary, and reads
/// one page into the cache every `ops_per_page_read` operations on each member.
fn with_secondaries(
    mut r: CellResult,
    primary_us_per_op: u64,
    ops_per_page_read: u64,
) -> CellResult {
    let ops = r.measured.as_ref().map_or(0, |m| m.overall.completed);
    let window = Duration::from_secs(u64::from(WINDOW_SECS));
    let stats = r
        .server_stats
        .take()
        .expect("with_measured sets server stats");
    let members = stats.members.iter().enumerate().map(|(i, m)| {
        let mut delta = m.delta;
        let cpu = primary_us_per_op * ops / if i == 0 { 1 } else { 4 + i as u64 };
        delta.process_counters.user_time_us = Some(cpu * 3 / 4);
        delta.process_counters.system_time_us = Some(cpu - cpu * 3 / 4);
        delta.cache_counters.pages_read_into_cache = Some(ops / ops_per_page_read);
        MemberFigures::reported(m.member.clone(), delta, Some(&r.nodes[i].host))
    });
    let mut stats = ServerStats::compute(members, window, ops);
    stats.primary = Some(r.nodes[0].member.clone());
    r.server_stats = Some(stats);
    r
}

fn explain(stages: &[&str], indexes: &[&str], keys: u64, docs: u64) -> ExplainSummary {
    ExplainSummary {
        stages: stages.iter().map(|s| s.to_string()).collect(),
        indexes: indexes.iter().map(|s| s.to_string()).collect(),
        keys_examined: Some(keys),
        docs_examined: Some(docs),
        n_returned: Some(1),
        execution_time_ms: Some(0),
    }
}

/// One cell of the study, `index` in the plan.
fn planned(index: usize, &(target, size, repetition, rate): &Plan) -> CellResult {
    let ferret = target == "ferretdb";
    let salt = index as u64 + 1;
    let phase = measured(rate, salt, ferret.then_some(200));
    let mut r = with_measured(cell(target, "n2", size, repetition), phase, None);
    if !ferret {
        let cpu = if target == "psmdb-8.0" { 50 } else { 45 };
        // 4M does not fit the cache: one operation in 20 reads a page (I/O-bound).
        let ops_per_page_read = if size == "1M" { 5_000 } else { 20 };
        r = with_secondaries(r, cpu, ops_per_page_read);
    }
    let documents: u64 = if size == "1M" { 1_000_000 } else { 4_000_000 };
    r.dataset.seeded_documents = documents;
    r.identity = identity(&[
        ("documents", &documents.to_string()),
        ("run.measured", "10 s"),
        ("run.warmup", "5 s"),
    ]);
    let (version, image) = match target {
        "psmdb-8.0" => ("8.0.4", "percona/percona-server-mongodb:8.0.4"),
        "mongo-9.0" => ("9.0.1", "mongo:9.0.1"),
        _ => ("7.0.77", "ghcr.io/ferretdb/ferretdb:1.24"),
    };
    r.server.version = Some(version.into());
    r.server.image = Some(image.into());
    let digest = target
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    r.server.image_digest = Some(format!("sha256:{digest:064x}"));
    r.mongobench_version = Some("0.1.0".into());
    for (i, node) in r.nodes.iter_mut().enumerate() {
        node.zone = Some(format!("europe-west4-{}", ['a', 'b', 'c'][i]));
    }
    let start: Timestamp = "2026-05-04T09:30:00Z".parse().expect("a valid time");
    let offset = SignedDuration::from_secs(index as i64 * 45);
    r.started_at = Some(start.checked_add(offset).expect("in range").to_string());
    if target == "mongo-9.0" && size == "1M" {
        r.explain
            .insert("find".into(), explain(&["COLLSCAN"], &[], 0, 1_000_000));
    }
    if ferret {
        r.explain.insert("find".into(), explain(&[], &[], 0, 1));
    }
    r
}

/// The study's results, in the order `mongobench report` sorts them.
pub(crate) fn study() -> Vec<CellResult> {
    let mut results: Vec<CellResult> = PLAN
        .iter()
        .enumerate()
        .map(|(i, p)| planned(i, p))
        .collect();
    for r in &mut results {
        match (
            r.cell.target.as_str(),
            r.cell.size.as_str(),
            r.cell.repetition,
        ) {
            ("mongo-9.0", "1M", 2) => r.invalid_reasons = vec!["election: term 3 → 4".into()],
            ("ferretdb", "1M", 4) => {
                r.status = CellStatus::Incomplete {
                    reason: "target ferretdb: measured phase: connection reset by peer".into(),
                };
                r.measured = None;
                r.server_stats = None;
                r.explain.clear();
                r.fingerprint = String::new();
            }
            _ => {}
        }
    }
    results.sort_by(|a, b| a.cell.cmp(&b.cell));
    results
}

/// Compares `actual` with the golden file `name`, or rewrites it under `MONGOBENCH_BLESS`.
pub(crate) fn golden(name: &str, actual: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests/fixtures/report", name]
        .iter()
        .collect();
    if std::env::var_os("MONGOBENCH_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with MONGOBENCH_BLESS=1 cargo test --lib report::",
            path.display()
        )
    });
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} differs from the rendered text from line {}:\n  rendered: {:?}\n  golden:   {:?}\n\
             rewrite it with MONGOBENCH_BLESS=1 cargo test --lib report:: and review the diff",
            path.display(),
            line + 1,
            actual.lines().nth(line),
            expected.lines().nth(line)
        );
    }
}
