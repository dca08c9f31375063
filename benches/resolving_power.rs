//! Resolving power on real servers: one interleaved run of N slots of YCSB A against two
//! targets (one server under two names by default: an A/A comparison), then, for the first 3,
//! 5 and 10 slots, each target's coefficient of variation and the comparison's minimum
//! detectable effect as two independent groups (Welch's test, the analysis before slots were
//! paired) and paired by slot (the comparison's analysis now), side by side on the same cells.
//! Prints a Markdown table (BENCHMARKS.md, "Resolving power") and the product's verdict.
//! `--runs N` repeats the whole comparison; with `--goal PERCENT` it exits with 1 unless every
//! run found no significant difference with a paired MDE at most that: the A/A goal of the
//! resolving-power work, measured with cells longer than CI can afford.
//!
//!   testenv/up mongo-sqlite && cargo bench --bench resolving_power -- \
//!     --targets a=mongodb://127.0.0.1:27019/,b=mongodb://127.0.0.1:27019/ \
//!     --slots 10 --seconds 1 --workers 4 --records 500 [--warmup 0.3] [--settle ROUNDS,PERCENT] \
//!     [--workload A] [--runs 1] [--goal 5]

use std::time::Duration;

use mongobench::api::{CanaryPolicy, DEFAULT_OPERATION_TIMEOUT, DatasetSize, RunLength};
use mongobench::plan::{RunSettings, WarmupSettle, WorkloadPlan};
use mongobench::result::{CellResult, slot_pairs};
use mongobench::runner::benchmark::{self, Benchmark, Connected, Events};
use mongobench::runner::cell::CellProgress;
use mongobench::runner::dataset::Seeded;
use mongobench::verdict::stats::{Delta, Summary};
use mongobench::verdict::{CompareOptions, Verdict, compare};
use mongobench::workload::ycsb::RawProperties;

struct Args {
    targets: Vec<(String, String)>,
    slots: u32,
    seconds: f64,
    workers: u32,
    records: u64,
    warmup: f64,
    /// Rounds of `warmup` until settled at most, with this tolerance; `None`: one warm-up.
    settle: Option<(u32, f64)>,
    /// The YCSB core workload's letter (A–F).
    workload: char,
    /// Whole comparisons run one after the other, each of `slots` fresh slots.
    runs: u32,
    /// With it, every run's paired MDE at all its slots must be at most this (percent) and its
    /// verdict "no significant difference", or the bench exits with 1.
    goal: Option<f64>,
}

fn args() -> Args {
    let mut a = Args {
        targets: vec![
            ("a".into(), "mongodb://127.0.0.1:27019/".into()),
            ("b".into(), "mongodb://127.0.0.1:27019/".into()),
        ],
        slots: 10,
        seconds: 1.0,
        workers: 4,
        records: 500,
        warmup: 0.3,
        settle: None,
        workload: 'a',
        runs: 1,
        goal: None,
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
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    assert_eq!(a.targets.len(), 2, "--targets names two targets");
    a
}

struct Quiet;
impl Events for Quiet {
    fn seeding(&mut self, _: &str, _: &str, _: u64) {}
    fn seeded(&mut self, _: &str, _: &str, _: &Seeded) {}
    fn started(&mut self, _: &mongobench::plan::PlannedCell, _: &CellProgress) {}
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

#[tokio::main]
async fn main() {
    let args = args();
    let mut connected = Vec::new();
    for (name, uri) in &args.targets {
        let target =
            mongobench::runner::server::connect(name, uri, args.workers, Duration::from_secs(10))
                .await
                .unwrap_or_else(|e| panic!("connecting to {name} at {uri}: {e}"));
        connected.push(Connected {
            target,
            uri: uri.clone(),
        });
    }
    let mut met = true;
    for run in 1..=args.runs {
        met &= one_run(&args, &connected, run).await;
    }
    if let Some(goal) = args.goal {
        println!(
            "{} runs of {} slots: every one no significant difference with a paired MDE at most \
             {goal}%: {}",
            args.runs,
            args.slots,
            if met { "yes" } else { "no" }
        );
        if !met {
            std::process::exit(1);
        }
    }
}

/// One comparison of `slots` slots: its table and, for `--runs`/`--goal`, the product's
/// verdict over all its slots; returns whether it met the goal (true without one).
async fn one_run(args: &Args, connected: &[Connected], run: u32) -> bool {
    let bench = Benchmark {
        name: "resolving-power".into(),
        run_id: format!("bench-{run}"),
        platform: "local".into(),
        plan: WorkloadPlan::Ycsb {
            raw: RawProperties::preset(&format!("workload{}", args.workload)).expect("preset"),
            seed: 7,
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
        canary_policy: CanaryPolicy::Flag,
        server_canaries: Default::default(),
        baseline: args.targets[0].0.clone(),
        completed: Default::default(),
    };
    let results = benchmark::run(&bench, connected, &mut Quiet)
        .await
        .expect("the run goes to its end");
    let (a, b) = (&args.targets[0].0, &args.targets[1].0);
    println!(
        "YCSB {}, {} records, {} workers, {} s measured per cell after {} s of warm-up{}, {} \
         slots of {a} and {b}",
        args.workload.to_ascii_uppercase(),
        args.records,
        args.workers,
        args.seconds,
        args.warmup,
        args.settle
            .map_or(String::new(), |(rounds, tolerance)| format!(
                " in at most {rounds} rounds until settled within {tolerance}% (rounds run: {:?})",
                results
                    .iter()
                    .map(|r| r.warmup_rounds.map_or(0, |w| w.rounds))
                    .collect::<Vec<_>>()
            )),
        args.slots
    );
    println!();
    println!(
        "| slots | CV {a} | CV {b} | MDE independent (Welch) | paired CV | MDE paired | Δ paired |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for k in [3, 5, 10].into_iter().filter(|&k| k <= args.slots) {
        let first = |t: &str| -> Vec<&CellResult> {
            results
                .iter()
                .filter(|r| r.cell.target == t && r.cell.repetition <= k && r.is_valid())
                .collect()
        };
        let summary =
            |t: &str| Summary::of(&first(t).iter().filter_map(|c| ops(c)).collect::<Vec<_>>()).ok();
        let (sa, sb) = (summary(a), summary(b));
        let welch = sa.zip(sb).and_then(|(x, y)| Delta::between(&x, &y).ok());
        let paired = Delta::paired(&slot_pairs(first(a), first(b), ops)).ok();
        println!(
            "| {k} | {} | {} | {} | {} | {} | {} |",
            pct(sa.and_then(|s| s.cv).map(|c| c * 100.0)),
            pct(sb.and_then(|s| s.cv).map(|c| c * 100.0)),
            pct(welch.and_then(|d| d.mde_percent)),
            pct(paired.and_then(|d| d.ratio_cv).map(|c| c * 100.0)),
            pct(paired.and_then(|d| d.mde_percent)),
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
    let delta = row.throughput_delta.expect("a tested difference");
    let mde = delta.mde_percent;
    println!();
    println!(
        "run {run}: {} {:+.2}%, MDE {} after {} slots, paired CV {}",
        row.verdict.text(),
        delta.percent,
        pct(mde),
        row.repetitions,
        pct(delta.ratio_cv.map(|c| c * 100.0)),
    );
    println!();
    args.goal.is_none_or(|goal| {
        row.verdict == Verdict::NoSignificantDifference && mde.is_some_and(|m| m <= goal)
    })
}
