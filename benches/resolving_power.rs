//! Resolving power on real servers: whole comparisons of N slots of a YCSB workload against two
//! targets (by default the testenv's two SecantusDB servers, an A/A comparison), with the
//! cells of a slot run one after another (`--modes sequential`, the `PerPlatform` schedule) or
//! at the same time (`--modes simultaneous`, `parallelism: Simultaneous`), or both, the runs
//! of the two alternating so that they share the hour. Each run prints, for its first 3, 4, 5
//! and 10 slots, each target's coefficient of variation and the comparison's paired CV and
//! minimum detectable effect, then the product's verdict over all its slots; a last table
//! sums up every run (BENCHMARKS.md, "Resolving power").
//!
//! `--goal PERCENT` exits with 1 unless at least four runs in five (80 %, rounded up) of each
//! mode met it: an MDE at most PERCENT and "no significant difference" (an A/A), or, with
//! `--slower PERCENT` (target b behind a proxy that holds each reply that much longer than the
//! server took; target a behind a proxy that holds none) or `--tax PERCENT` (a thread burning
//! that share of target b's side of CPUs, following it as the targets trade sides), b called
//! slower.
//!
//!   testenv/up secantus secantus2 && cargo bench --bench resolving_power -- \
//!     --modes simultaneous --runs 5 --slots 4 --seconds 30 --goal 3 [--cpu-sets 0/1] \
//!     [--targets a=URI,b=URI] [--workers 4] [--records 500] [--warmup 5] [--workload C] \
//!     [--settle ROUNDS,PERCENT] [--slower 5 | --tax 5]
//!
//! `--simultaneous` is `--modes simultaneous`.

#[path = "../tests/support/proxy.rs"]
#[allow(dead_code)]
mod proxy;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mongobench::api::{CanaryPolicy, DEFAULT_OPERATION_TIMEOUT, DatasetSize, RunLength};
use mongobench::contract::{CpuSet, Schedule, parse_sides};
use mongobench::plan::{RunSettings, WarmupSettle, WorkloadPlan};
use mongobench::result::{CellResult, slot_pairs};
use mongobench::runner::benchmark::{self, Benchmark, Connected, Events};
use mongobench::runner::cell::CellProgress;
use mongobench::runner::dataset::Seeded;
use mongobench::runner::slot::sides::{assignment, pin};
use mongobench::verdict::stats::{ALPHA, Delta, Summary};
use mongobench::verdict::{CompareOptions, Verdict, compare};
use mongobench::workload::ycsb::RawProperties;

/// The seed of every run's workload, slot orders and sides.
const SEED: u64 = 7;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sequential,
    Simultaneous,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Sequential => "sequential",
            Mode::Simultaneous => "simultaneous",
        }
    }
}

struct Args {
    targets: Vec<(String, String)>,
    modes: Vec<Mode>,
    cpu_sets: Option<Vec<CpuSet>>,
    slots: u32,
    seconds: f64,
    workers: u32,
    records: u64,
    warmup: f64,
    /// Rounds of `warmup` until settled at most, with this tolerance; `None`: one warm-up.
    settle: Option<(u32, f64)>,
    /// The YCSB core workload's letter (A–F).
    workload: char,
    /// Whole comparisons per mode, each of `slots` fresh slots.
    runs: u32,
    goal: Option<f64>,
    /// Target b made this much slower by a proportional-delay proxy.
    slower: Option<f64>,
    /// A thread burning this share of target b's side.
    tax: Option<f64>,
}

fn args() -> Args {
    let mut a = Args {
        targets: vec![
            ("a".into(), "mongodb://127.0.0.1:27020/".into()),
            ("b".into(), "mongodb://127.0.0.1:27021/".into()),
        ],
        modes: vec![Mode::Sequential],
        cpu_sets: None,
        slots: 4,
        seconds: 10.0,
        workers: 4,
        records: 500,
        warmup: 5.0,
        settle: None,
        workload: 'c',
        runs: 1,
        goal: None,
        slower: None,
        tax: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--targets" => {
                a.targets = value()
                    .split(',')
                    .map(|t| {
                        let (n, u) = t.split_once('=').expect("NAME=URI");
                        (n.to_owned(), u.to_owned())
                    })
                    .collect();
            }
            "--simultaneous" => a.modes = vec![Mode::Simultaneous],
            "--modes" => {
                a.modes = value()
                    .split(',')
                    .map(|m| match m {
                        "sequential" => Mode::Sequential,
                        "simultaneous" => Mode::Simultaneous,
                        other => panic!("--modes sequential,simultaneous, not {other:?}"),
                    })
                    .collect();
            }
            "--cpu-sets" => {
                a.cpu_sets =
                    Some(parse_sides(&value()).unwrap_or_else(|e| panic!("--cpu-sets {e}")));
            }
            "--slots" => a.slots = value().parse().expect("--slots N"),
            "--seconds" => a.seconds = value().parse().expect("--seconds S"),
            "--workers" => a.workers = value().parse().expect("--workers N"),
            "--records" => a.records = value().parse().expect("--records N"),
            "--warmup" => a.warmup = value().parse().expect("--warmup S"),
            "--settle" => {
                let v = value();
                let (rounds, tolerance) = v.split_once(',').expect("--settle ROUNDS,PERCENT");
                a.settle = Some((
                    rounds.parse().expect("rounds"),
                    tolerance.parse().expect("percent"),
                ));
            }
            "--workload" => {
                let v = value().to_ascii_lowercase();
                a.workload = v
                    .chars()
                    .next()
                    .filter(|c| ('a'..='f').contains(c) && v.len() == 1)
                    .unwrap_or_else(|| panic!("--workload A..F, not {v:?}"));
            }
            "--runs" => a.runs = value().parse().expect("--runs N"),
            "--goal" => a.goal = Some(value().parse().expect("--goal PERCENT")),
            "--slower" => a.slower = Some(value().parse().expect("--slower PERCENT")),
            "--tax" => a.tax = Some(value().parse().expect("--tax PERCENT")),
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    assert_eq!(a.targets.len(), 2, "--targets names two targets");
    assert!(
        a.tax.is_none() || a.cpu_sets.is_some(),
        "--tax burns a share of target b's side: give --cpu-sets"
    );
    assert!(
        a.slower.is_none() || a.cpu_sets.is_none(),
        "--slower's proxies run in this process, whose threads --cpu-sets would pin to a side"
    );
    a
}

/// A thread that burns `share` of one CPU set, moved to target b's side whenever a cell of b
/// starts.
struct Tax {
    side: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Tax {
    fn start(share: f64, sides: Vec<CpuSet>) -> Tax {
        let side = Arc::new(AtomicUsize::new(usize::MAX));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (side.clone(), stop.clone());
        std::thread::spawn(move || {
            let period = Duration::from_millis(10);
            let mut pinned = usize::MAX;
            while !st.load(Ordering::Relaxed) {
                let want = s.load(Ordering::Relaxed);
                if want != pinned && want < sides.len() {
                    pin(0, &sides[want]).expect("pinning the tax thread");
                    pinned = want;
                }
                let started = Instant::now();
                while started.elapsed() < period.mul_f64(share / 100.0) {
                    std::hint::spin_loop();
                }
                std::thread::sleep(period.mul_f64(1.0 - share / 100.0));
            }
        });
        Tax { side, stop }
    }
}

impl Drop for Tax {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

struct Quiet<'a> {
    /// Moves the tax to b's side in each slot.
    tax: Option<(&'a Tax, &'a str, usize)>,
}

impl Events for Quiet<'_> {
    fn seeding(&mut self, _: &str, _: &str, _: u64) {}
    fn seeded(&mut self, _: &str, _: &str, _: &Seeded) {}
    fn started(&mut self, cell: &mongobench::plan::PlannedCell, _: &CellProgress) {
        if let Some((tax, b, index)) = self.tax
            && cell.target == b
        {
            let side = assignment(SEED, 0, cell.repetition, 2)[index];
            tax.side.store(side, Ordering::Relaxed);
        }
    }
    async fn finished(
        &mut self,
        cell: &mongobench::plan::PlannedCell,
        r: &CellResult,
    ) -> Result<(), mongobench::runner::sink::SinkError> {
        let ops = r.measured.as_ref().map_or(0.0, |m| m.overall.ops_per_sec);
        eprintln!(
            "{}: {ops:.1} ops/s{}",
            cell.id,
            if r.is_valid() { "" } else { " (invalid)" }
        );
        Ok(())
    }
}

fn ops(c: &CellResult) -> Option<f64> {
    c.measured.as_ref().map(|m| m.overall.ops_per_sec)
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}%"))
}

/// One run's outcome.
struct Outcome {
    mode: Mode,
    verdict: Verdict,
    percent: f64,
    mde: Option<f64>,
    ratio_cv: Option<f64>,
    correlation: Option<f64>,
}

#[tokio::main]
async fn main() {
    let args = args();
    // With --slower, both targets reach their servers through a proxy: b's holds each reply
    // that much longer than the server took, a's holds none, so both pay the same forwarding.
    // A replica set's member names itself at its own port, so the client is told to stay on
    // the address it was given (else it would follow that name around the proxy).
    let proxies = args.slower.map(|percent| {
        [0.0, percent].map(|p| {
            let i = usize::from(p > 0.0);
            let uri = &args.targets[i].1;
            let direct = if uri.contains('?') { '&' } else { '?' };
            let upstream = format!("{uri}{direct}directConnection=true");
            proxy::ProportionalProxy::start(&upstream, p / 100.0)
        })
    });
    let mut connected = Vec::new();
    for (i, (name, uri)) in args.targets.iter().enumerate() {
        let uri = proxies.as_ref().map_or(uri.clone(), |p| p[i].uri.clone());
        let target =
            mongobench::runner::server::connect(name, &uri, args.workers, Duration::from_secs(10))
                .await
                .unwrap_or_else(|e| panic!("connecting to {name} at {uri}: {e}"));
        connected.push(Connected { target, uri });
    }
    let tax = args
        .tax
        .zip(args.cpu_sets.clone())
        .map(|(share, sides)| Tax::start(share, sides));
    let mut outcomes = Vec::new();
    for run in 1..=args.runs {
        for &mode in &args.modes {
            outcomes.push(one_run(&args, &connected, run, mode, tax.as_ref()).await);
        }
    }
    summary(&args, &outcomes);
}

/// The table of every run, and with a goal whether each mode met it (exit 1 if one did not).
fn summary(args: &Args, outcomes: &[Outcome]) {
    println!("| run | mode | verdict | Δ b | MDE | paired CV | correlation |");
    println!("| ---: | --- | --- | ---: | ---: | ---: | ---: |");
    for (i, o) in outcomes.iter().enumerate() {
        println!(
            "| {} | {} | {} | {:+.2}% | {} | {} | {} |",
            i / args.modes.len() + 1,
            o.mode.name(),
            o.verdict.text(),
            o.percent,
            pct(o.mde),
            pct(o.ratio_cv.map(|c| c * 100.0)),
            o.correlation.map_or("-".into(), |r| format!("{r:.2}")),
        );
    }
    let Some(goal) = args.goal else { return };
    let expected = if args.slower.is_some() || args.tax.is_some() {
        Verdict::Slower
    } else {
        Verdict::NoSignificantDifference
    };
    let need = (args.runs as f64 * 0.8).ceil() as usize;
    let mut met = true;
    for &mode in &args.modes {
        let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.mode == mode).collect();
        let within = runs
            .iter()
            .filter(|o| o.mde.is_some_and(|m| m <= goal))
            .count();
        let called = runs.iter().filter(|o| o.verdict == expected).count();
        let ok = within >= need && called >= need;
        met &= ok;
        println!(
            "{}: MDE at most {goal}% in {within} of {} runs, {} in {called}; needed {need} \
             each: {}",
            mode.name(),
            runs.len(),
            expected.text(),
            if ok { "met" } else { "not met" }
        );
    }
    if !met {
        std::process::exit(1);
    }
}

/// One comparison of `slots` slots in `mode`: its table and the product's verdict.
async fn one_run(
    args: &Args,
    connected: &[Connected],
    run: u32,
    mode: Mode,
    tax: Option<&Tax>,
) -> Outcome {
    let bench = Benchmark {
        name: "resolving-power".into(),
        run_id: format!("bench-{}-{run}", mode.name()),
        platform: "local".into(),
        plan: WorkloadPlan::Ycsb {
            raw: RawProperties::preset(&format!("workload{}", args.workload)).expect("preset"),
            seed: SEED,
        },
        settings: RunSettings {
            workers: args.workers,
            measured: RunLength::Duration(Duration::from_secs_f64(args.seconds)),
            warmup: RunLength::Duration(Duration::from_secs_f64(args.warmup)),
            target_ops_per_sec: None,
            write_concern: None,
            read_preference: None,
            operation_timeout: DEFAULT_OPERATION_TIMEOUT,
            sweep: None,
            warmup_load: None,
            warmup_settle: args
                .settle
                .map(|(max_rounds, tolerance_percent)| WarmupSettle {
                    max_rounds,
                    tolerance_percent,
                }),
        },
        reuse_dataset: false,
        sizes: vec![(
            args.records.to_string(),
            DatasetSize::Documents(args.records),
        )],
        repetitions: args.slots,
        precision: None,
        metrics: vec![mongobench::api::VerdictMetric::Throughput],
        canary_policy: CanaryPolicy::Flag,
        server_canaries: Default::default(),
        baseline: args.targets[0].0.clone(),
        completed: Default::default(),
        schedule: match mode {
            Mode::Sequential => Schedule::InTurn,
            Mode::Simultaneous => Schedule::Simultaneous,
        },
        sides: match mode {
            Mode::Simultaneous => args.cpu_sets.clone().unwrap_or_default(),
            Mode::Sequential => Vec::new(),
        },
    };
    let (a, b) = (&args.targets[0].0, &args.targets[1].0);
    let mut events = Quiet {
        tax: tax.map(|t| (t, b.as_str(), 1)),
    };
    let results = benchmark::run(&bench, connected, &mut events)
        .await
        .expect("the run goes to its end");
    let sides: Vec<String> = bench.sides.iter().map(ToString::to_string).collect();
    println!(
        "run {run}, {}: YCSB {}, {} records, {} workers, {} s measured per cell after {} s of \
         warm-up, {} slots of {a} and {b}{}",
        mode.name(),
        args.workload.to_ascii_uppercase(),
        args.records,
        args.workers,
        args.seconds,
        args.warmup,
        args.slots,
        if sides.is_empty() {
            String::new()
        } else {
            format!(", sides {}", sides.join("/"))
        },
    );
    println!();
    println!("| slots | CV {a} | CV {b} | paired CV | MDE paired | Δ paired |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for k in [3, 4, 5, 10].into_iter().filter(|&k| k <= args.slots) {
        let first = |t: &str| -> Vec<&CellResult> {
            results
                .iter()
                .filter(|r| r.cell.target == t && r.cell.repetition <= k && r.is_valid())
                .collect()
        };
        let summary =
            |t: &str| Summary::of(&first(t).iter().filter_map(|c| ops(c)).collect::<Vec<_>>()).ok();
        let (sa, sb) = (summary(a), summary(b));
        let paired = Delta::paired(&slot_pairs(first(a), first(b), ops), None).ok();
        println!(
            "| {k} | {} | {} | {} | {} | {} |",
            pct(sa.and_then(|s| s.cv).map(|c| c * 100.0)),
            pct(sb.and_then(|s| s.cv).map(|c| c * 100.0)),
            pct(paired.and_then(|d| d.ratio_cv).map(|c| c * 100.0)),
            pct(paired.and_then(|d| d.mde_percent(ALPHA))),
            paired.map_or("-".into(), |d| format!("{:+.2}%", d.percent)),
        );
    }
    let comparison = compare(
        &results,
        &CompareOptions {
            baseline: a.clone(),
            ..CompareOptions::default()
        },
    )
    .expect("a comparison of the run's cells");
    let row = comparison.groups[0]
        .rows
        .iter()
        .find(|r| &r.target == b)
        .expect("the second target's row");
    let text = mongobench::report::render_comparison(&comparison);
    println!();
    for line in text.lines().filter(|l| l.starts_with(&format!("  {b}:"))) {
        println!("{line}");
    }
    let delta = row.throughput_delta;
    let throughput = row.verdict_on(mongobench::api::VerdictMetric::Throughput);
    let mde = throughput.and_then(|v| v.mde_percent);
    println!(
        "run {run}, {}: {} {}, MDE {} after {} slots",
        mode.name(),
        row.verdict.text(),
        delta.map_or("-".into(), |d| format!("{:+.2}%", d.percent)),
        pct(mde),
        row.repetitions,
    );
    println!();
    Outcome {
        mode,
        verdict: row.verdict,
        percent: delta.map_or(0.0, |d| d.percent),
        mde,
        ratio_cv: delta.and_then(|d| d.ratio_cv),
        correlation: row.simultaneous.as_ref().and_then(|s| s.correlation),
    }
}
