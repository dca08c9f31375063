//! Load sweeps (`workload.sweep`) on a real server, SecantusDB (WiredTiger): a search finds the
//! knee a fixed reply delay sets, the same in two runs within its precision; a server behind
//! that delay has a lower knee than the same server without it, with a verdict on the knees.
//! Every step is a measured phase of its own, restored after it. The tests take turns (one
//! lock), so that none measures the load of another.
mod support;

use std::time::Duration;

use mongobench::api::{RunLength, Sweep};
use mongobench::plan::RunSettings;
use mongobench::plan::sweep::SweepPlan;
use mongobench::result::CellResult;
use mongobench::verdict::{CompareOptions, Verdict, compare, headline};
use support::proxy::DelayProxy;
use support::runs;

/// Two workers, each with one operation in flight: behind [`DELAY`] they complete at most
/// 2 / (10 ms + the round trip) operations per second (about 166 here), whatever the machine
/// does.
const WORKERS: u32 = 2;
const DELAY: Duration = Duration::from_millis(10);
const RECORDS: u64 = 500;

static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// SecantusDB names itself a replica set's primary at its own port: without directConnection
/// the client would follow that name around the proxy.
fn upstream(server: &support::PrivateMongo) -> String {
    format!("{}?directConnection=true", server.uri)
}

fn settings(sweep: &str) -> RunSettings {
    let sweep: Sweep = serde_yaml::from_str(sweep).expect("a sweep");
    let plan = SweepPlan::of(&sweep).expect("a valid sweep");
    RunSettings {
        warmup: RunLength::Duration(Duration::from_millis(500)),
        target_ops_per_sec: plan.first_rate().map(|r| r as f64),
        sweep: Some(plan.clone()),
        ..runs::settings(
            plan.first_workers().unwrap_or(WORKERS),
            RunLength::Duration(plan.step),
        )
    }
}

/// The knee's achieved rate of a valid sweep cell, after checking its record: every step
/// restored, the knee bounded by a saturated step above it, the cell's figures the knee's.
fn knee(r: &CellResult) -> f64 {
    let sweep = r.sweep.as_ref().expect("a sweep record");
    assert!(sweep.bounded, "a saturated step above the knee: {sweep:?}");
    unbounded_knee(r)
}

/// [`knee`], without a saturated step above it.
fn unbounded_knee(r: &CellResult) -> f64 {
    runs::assert_valid(r);
    let sweep = r.sweep.as_ref().expect("a sweep record");
    let knee = sweep.knee_step().expect("a knee");
    let above = sweep.steps.iter().filter(|s| s.saturated.is_some());
    assert!(
        above
            .clone()
            .all(|s| s.target_ops_per_sec > knee.target_ops_per_sec)
    );
    assert!(above.clone().all(|s| s.workers >= knee.workers));
    // The warm-up's restore and one per step.
    let measured: Vec<_> = r
        .dataset
        .restores
        .iter()
        .filter(|x| x.after == "measured")
        .collect();
    assert_eq!(
        measured.len(),
        sweep.steps.len(),
        "{:?}",
        r.dataset.restores
    );
    let m = r.measured.as_ref().expect("the knee's measured phase");
    assert_eq!(m.overall.ops_per_sec, knee.ops_per_sec);
    assert_eq!(
        m.target_ops_per_sec,
        knee.target_ops_per_sec.map(|r| r as f64)
    );
    eprintln!(
        "{}: knee {:.1} ops/s at {}, {} steps: {:?}",
        r.cell,
        knee.ops_per_sec,
        knee.load(),
        sweep.steps.len(),
        sweep
            .steps
            .iter()
            .map(|s| (s.load(), s.ops_per_sec.round(), s.saturated.is_some()))
            .collect::<Vec<_>>()
    );
    knee.ops_per_sec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_finds_the_knee_a_delay_sets_the_same_in_two_runs_within_its_precision() {
    let _turn = TURN.lock().await;
    let server = support::private_secantus("sweep-twice");
    let proxy = DelayProxy::start(&upstream(&server), DELAY);
    let precision = 0.05;
    let sweep =
        "{findMax: {start: 40, growth: 2, precisionPercent: 5, maxSteps: 12}, stepDuration: 2s}";
    let mut knees = Vec::new();
    for run in 1..=2 {
        let bench = runs::benchmark(
            &format!("sweep-twice-{run}"),
            runs::ycsb("workloada"),
            settings(sweep),
            &[RECORDS],
            1,
        );
        let connected = runs::connect_all(&[("delayed", &proxy.uri)], WORKERS).await;
        let results = runs::run_benchmark(&bench, &connected).await;
        knees.push(knee(&results[0]));
    }
    // The delay caps two workers below 200 ops/s; the knee lies at or below that.
    for k in &knees {
        assert!((100.0..=200.0).contains(k), "{knees:?}");
    }
    let (lo, hi) = (knees[0].min(knees[1]), knees[0].max(knees[1]));
    assert!(
        hi - lo <= lo * precision,
        "{knees:?} differ by more than 5 %"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_behind_a_delay_sustains_less_and_the_verdict_compares_the_knees() {
    let _turn = TURN.lock().await;
    let server = support::private_secantus("sweep-compare");
    let plain = DelayProxy::start(&upstream(&server), Duration::ZERO);
    let proxy = DelayProxy::start(&upstream(&server), DELAY);
    let sweep = "{findMax: {start: 40, growth: 2, precisionPercent: 10, maxSteps: 12}, \
                 latency: {p99: 50ms}, stepDuration: 1s}";
    let bench = runs::benchmark(
        "sweep-compare",
        runs::ycsb("workloada"),
        settings(sweep),
        &[RECORDS],
        3,
    );
    let targets = [
        ("direct", plain.uri.as_str()),
        ("delayed", proxy.uri.as_str()),
    ];
    let connected = runs::connect_all(&targets, WORKERS).await;
    let results = runs::run_benchmark(&bench, &connected).await;
    let of = |t: &str| -> Vec<f64> {
        results
            .iter()
            .filter(|r| r.cell.target == t)
            .map(knee)
            .collect()
    };
    let (direct, delayed) = (of("direct"), of("delayed"));
    let slowest_direct = direct.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        delayed.iter().all(|&d| d < slowest_direct),
        "direct {direct:?}, delayed {delayed:?}"
    );
    for r in &results {
        let goal = r.sweep.as_ref().and_then(|s| s.goal.as_deref());
        assert_eq!(goal, Some("p99 ≤ 50ms"));
    }
    let c = compare(
        &results,
        &CompareOptions {
            baseline: "direct".into(),
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let row = &c.groups[0].rows[1];
    assert_eq!(row.verdict, Verdict::Slower, "{row:?}");
    let line = headline(&c).unwrap();
    eprintln!("{line}");
    assert!(
        line.starts_with("delayed sustains -")
            && line.contains("ops/s vs direct at p99 ≤ 50ms, 500,"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladder_of_workers_runs_every_step_in_a_closed_loop_and_more_workers_carry_more() {
    let _turn = TURN.lock().await;
    let server = support::private_secantus("sweep-workers");
    let proxy = DelayProxy::start(&upstream(&server), DELAY);
    let bench = runs::benchmark(
        "sweep-workers",
        runs::ycsb("workloada"),
        settings("{workers: [4, 1, 2], latency: {p50: 1s}, stepDuration: 2s}"),
        &[RECORDS],
        1,
    );
    // The connections of the ladder's top.
    let connected = runs::connect_all(&[("delayed", &proxy.uri)], 4).await;
    let results = runs::run_benchmark(&bench, &connected).await;
    let r = &results[0];
    unbounded_knee(r);
    let sweep = r.sweep.as_ref().unwrap();
    let loads: Vec<(Option<u64>, u32)> = sweep
        .steps
        .iter()
        .map(|s| (s.target_ops_per_sec, s.workers))
        .collect();
    assert_eq!(loads, [(None, 1), (None, 2), (None, 4)]);
    // Never saturated: the knee is the top step, a lower bound.
    assert_eq!((sweep.knee, sweep.bounded), (Some(2), false));
    assert_eq!(
        r.identity.parameters.get("run.sweep").map(String::as_str),
        Some("workers 1, 2, 4, closed loop; steps of 2 s; p50 ≤ 1000ms")
    );
    // Behind the delay each worker completes about one operation per 10 ms and a bit: twice
    // the workers carry nearly twice the load.
    let achieved: Vec<f64> = sweep.steps.iter().map(|s| s.ops_per_sec).collect();
    for pair in achieved.windows(2) {
        assert!(pair[1] > 1.6 * pair[0], "{achieved:?}");
    }
    let m = r.measured.as_ref().unwrap();
    assert_eq!(m.target_ops_per_sec, None, "the knee step ran closed loop");
    assert_eq!(r.worker_operations.len(), 4, "the knee step's 4 workers");
}
