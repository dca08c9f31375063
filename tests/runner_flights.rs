//! A real flights run against the MongoDB-wire server: the operation mix, the hit rate and
//! collision-free inserts, measured from the run's own results.
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use mongobench::api::RunLength;
use mongobench::measure::server::CpuSource;
use mongobench::plan::{RunSettings, WorkloadPlan};
use mongobench::result::{CellId, CellStatus};
use mongobench::runner::cell::{CellProgress, run_cell};
use mongobench::runner::server::connect;
use mongobench::workload::flights::{self, Params};

fn cell(name: &str) -> CellId {
    CellId {
        benchmark: name.into(),
        run_id: "test".into(),
        workload: "flights/v1".into(),
        target: "ferretdb".into(),
        platform: "local".into(),
        size: "300".into(),
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
    let plan = WorkloadPlan::Flights(Box::new(params.clone()));
    let mut seeded = support::runs::seeded(&target, &plan, 300, 8).await;
    eprintln!("seeded 300 documents in {:.1} s", seeded.seconds);

    let settings = RunSettings {
        workers: 8,
        measured: RunLength::Duration(Duration::from_secs(10)),
        warmup: RunLength::Duration(Duration::from_secs(2)),
        ..support::runs::settings(8, RunLength::Operations(0))
    };
    let progress = CellProgress::default();
    let result = run_cell(
        &target,
        &server.uri,
        &plan,
        &settings,
        cell("mix"),
        &mut seeded,
        &progress,
    )
    .await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);
    // The two-second warm-up's completions are kept for the report, a count per second (a
    // first second may hold none on a loaded machine: connections and logins come first).
    assert_eq!(
        result.warmup_per_second.len(),
        2,
        "{:?}",
        result.warmup_per_second
    );
    assert!(
        result.warmup_per_second.iter().sum::<u64>() > 0,
        "no warm-up operation completed: {:?}",
        result.warmup_per_second
    );

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

    // FerretDB scans every document for every non-_id filter, so a 10-second run holds tens of
    // operations, too few for a statistical check of the 60/20/10/10 mix (the generator's own
    // tests check it over 100,000 draws). Instead: regenerate each worker's traffic from the
    // recorded per-worker counts and require the run to have executed exactly that mix, with
    // exactly the generated hit targets.
    let dataset = flights::DatasetInfo::fresh(1, 300);
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut hits, mut misses) = (0, 0);
    // Seeded documents some delete of the run aimed at, and the finds aimed at the others.
    let mut deleted = std::collections::BTreeSet::new();
    let mut find_targets = Vec::new();
    let params = Params {
        workers: 8,
        ..Params::default()
    };
    assert_eq!(result.worker_operations.len(), 8);
    for (w, &count) in result.worker_operations.iter().enumerate() {
        let mut worker =
            flights::Worker::new(&params, &dataset, w as u32, flights::RunPhase::Measured).unwrap();
        for _ in 0..count {
            let planned = worker.next_planned();
            *kinds.entry(planned.operation.label).or_default() += 1;
            if planned.operation.label == "find" {
                match planned.target {
                    flights::Target::Hit { seq } => {
                        hits += 1;
                        find_targets.push(seq);
                    }
                    flights::Target::PlannedMiss => misses += 1,
                    flights::Target::None => {}
                }
            }
            if planned.operation.label == "delete"
                && let flights::Target::Hit { seq } = planned.target
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
    // No planned miss found anything, and every find aimed at a document no delete of this run
    // aimed at found it (300 documents: each flight_id belongs to one document).
    let never_deleted = find_targets
        .iter()
        .filter(|seq| !deleted.contains(*seq))
        .count() as u64;
    assert!(finds.found <= finds.aimed_hits, "{finds:?}");
    assert!(
        finds.found >= never_deleted,
        "{finds:?}: {never_deleted} finds aimed at documents no delete touched"
    );
    // Fingerprint v2: `v2:` and 32 hex characters (specs/flights.md §8).
    assert!(
        result.fingerprint.starts_with("v2:"),
        "{}",
        result.fingerprint
    );
    assert_eq!(result.fingerprint.len(), 35);
    assert!(!result.explain.is_empty(), "explain samples were taken");
    // FerretDB has none of these: the result names each, with what was done instead.
    let fallbacks: Vec<&str> = result
        .fallbacks
        .iter()
        .map(|f| f.capability.as_str())
        .collect();
    assert_eq!(
        fallbacks,
        [
            "dbHash",
            "serverStatus.extra_info",
            "serverStatus.wiredTiger",
            "replSetGetStatus",
            "explain.winningPlan"
        ]
    );
    // The result says when it was measured and by which release (the history export's time
    // and version columns).
    let started = result.started_at.as_deref().expect("startedAt is recorded");
    assert!(
        started.parse::<k8s_openapi::jiff::Timestamp>().is_ok() && started.ends_with('Z'),
        "{started}"
    );
    assert_eq!(
        result.mongobench_version.as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
}

/// On WiredTiger (SecantusDB) the finds by flight id are index scans, the digest is the
/// server's `dbHash` and the server reports its cache: the result carries the plan and the
/// figures FerretDB cannot give, and names the one it lacks (CPU times in `extra_info`), whose
/// place the operating system's count of its process takes.
#[tokio::test]
async fn a_flights_run_on_wiredtiger_explains_index_scans_and_reports_its_cache() {
    let server = support::private_secantus("flights-wt");
    let target = connect("wiredtiger", &server.uri, 8, Duration::from_secs(10))
        .await
        .unwrap();
    let plan = WorkloadPlan::Flights(Box::default());
    let mut seeded = support::runs::seeded(&target, &plan, 1_000, 8).await;
    let settings = RunSettings {
        workers: 8,
        measured: RunLength::Duration(Duration::from_secs(3)),
        warmup: RunLength::Duration(Duration::from_secs(1)),
        ..support::runs::settings(8, RunLength::Operations(0))
    };
    let result = run_cell(
        &target,
        &server.uri,
        &plan,
        &settings,
        cell("wiredtiger"),
        &mut seeded,
        &CellProgress::default(),
    )
    .await;
    assert_eq!(result.status, CellStatus::Complete, "{:?}", result.status);
    assert!(result.is_valid(), "{:?}", result.invalid_reasons);
    // F1: flights/v1's find by flight id (specs/flights.md §5).
    let by_id = result
        .explain
        .get("F1")
        .unwrap_or_else(|| panic!("no explain of the finds by flight id: {:?}", result.explain));
    assert!(
        by_id.stages.iter().any(|s| s == "IXSCAN"),
        "a find by flight id reads an index: {by_id:?}"
    );
    assert!(!by_id.indexes.is_empty(), "{by_id:?}");
    assert_eq!(
        result.dataset.digest.as_ref().map(|d| d.method.as_str()),
        Some("dbHash")
    );
    let stats = result.server_stats.as_ref().expect("server figures");
    assert!(
        stats.members.iter().all(|m| m.cache_fill.is_some()),
        "serverStatus wiredTiger gives the cache fill: {stats:?}"
    );
    let fallbacks: Vec<&str> = result
        .fallbacks
        .iter()
        .map(|f| f.capability.as_str())
        .collect();
    assert_eq!(fallbacks, ["serverStatus.extra_info"], "{stats:?}");
    // Its CPU comes from the operating system instead: the server runs on this machine.
    assert_eq!(
        result.fallbacks[0].fallback,
        "server CPU from the operating system (procfs, read by runner)"
    );
    assert_eq!(stats.cpu_sources, [CpuSource::Procfs], "{stats:?}");
    assert!(stats.cpu_us_per_op.is_some_and(|c| c > 0.0), "{stats:?}");
}
