//! The verdicts' error rates on synthetic runs (`mongobench::verdict::simulation`), as
//! docs/results.md, "How often a verdict is wrong", tabulates them: false "different" of A/A
//! runs (family-wise), the power at the MDE each run reported, the power at true differences
//! of 1 to 10 %, and the slots run, for fixed repetitions and for a precision goal under the
//! two-stage design and under the rule it replaced.
//!
//! `cargo bench --bench verdict_simulation [-- RUNS]` (default 20,000 runs a row; `--profile
//! dev` builds it without optimising, as the tests run).

use std::time::Instant;

use mongobench::verdict::simulation::{Rule, Scenario, Schedule, simulate};

const SEED: u64 = 40;

fn row(label: &str, scenario: Scenario, runs: usize) {
    let started = Instant::now();
    let aa = simulate(&scenario, runs, SEED);
    let powers: Vec<String> = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|&effect| {
            let o = simulate(
                &Scenario {
                    effect_percent: effect,
                    ..scenario
                },
                runs,
                SEED + 1,
            );
            format!("{:5.1}", o.power() * 100.0)
        })
        .collect();
    println!(
        "| {label} | {} | {:.1} | {:5.2} | {:5.1} | {} | {:5.1} | {:.1} s |",
        scenario.targets,
        scenario.ratio_sd_percent,
        aa.false_rate() * 100.0,
        aa.power_at_reported_mde() * 100.0,
        powers.join(" | "),
        aa.mean_slots(),
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    println!("{runs} runs a row, seed {SEED}");
    println!(
        "| schedule | targets | ratio SD % | false different % | power at reported MDE % | \
         power at 1 % | 2 % | 5 % | 10 % | mean slots | time |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for slots in [3, 5, 10] {
        for targets in [2, 4] {
            let fixed = Scenario {
                targets,
                ratio_sd_percent: 2.0,
                effect_percent: 0.0,
                schedule: Schedule::Fixed { slots },
            };
            row(&format!("fixed {slots} slots"), fixed, runs);
        }
    }
    for (name, rule) in [
        ("until MDE ≤ 3 % (before)", Rule::UntilMdeReached),
        ("two-stage, goal 3 %", Rule::TwoStage),
    ] {
        for targets in [2, 4] {
            for sd in [0.5, 2.0, 4.0] {
                let scenario = Scenario {
                    targets,
                    ratio_sd_percent: sd,
                    effect_percent: 0.0,
                    schedule: Schedule::Precision {
                        planned: 3,
                        goal_percent: 3.0,
                        max_slots: 30,
                        rule,
                    },
                };
                row(name, scenario, runs);
            }
        }
    }
}
