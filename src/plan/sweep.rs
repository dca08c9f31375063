//! The steps of a load sweep (`workload.sweep`) and where its knee lies: which load (a rate, or
//! a worker count) to run next given the steps so far, how a measured step is judged, and which
//! step is the knee. Pure: the runner measures each step.

use std::time::Duration;

use crate::api::UnitsError;
use crate::api::sweep::{Goal, Percentile, SUSTAINED_SHARE, Sweep};
use crate::result::{MeasuredPhase, SweepStep};

/// Highest rate a step may ask for (`workload.targetOpsPerSecond`'s bound).
const MAX_RATE: u64 = 100_000_000;

/// A sweep as the runner runs it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepPlan {
    pub steps: Steps,
    pub goal: Option<Goal>,
    /// Length of each step's measured phase.
    #[serde(with = "crate::workload::millis", rename = "stepMs")]
    pub step: Duration,
}

/// Where the steps' loads come from. A step's level is its rate, or its workers for a ladder
/// of workers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "of")]
pub enum Steps {
    /// Every rate, ascending.
    Ladder(Vec<u64>),
    /// Every worker count, ascending, each step a closed loop.
    Workers(Vec<u32>),
    /// Grow from `start` by `growth` until a step saturates, then bisect to `precision` (a
    /// fraction: 0.02 for 2 %), in at most `max_steps` steps.
    FindMax {
        start: u64,
        growth: f64,
        precision: f64,
        max_steps: u32,
    },
}

/// One step run: its level (rate, or workers) and whether it was saturated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ran {
    pub level: u64,
    pub saturated: bool,
}

impl SweepPlan {
    /// The plan of `sweep`.
    ///
    /// # Errors
    /// [`UnitsError`] when `stepDuration` or the latency bound does not parse.
    pub fn of(sweep: &Sweep) -> Result<SweepPlan, UnitsError> {
        let steps = match &sweep.find_max {
            Some(f) => Steps::FindMax {
                start: f.start,
                growth: f.growth(),
                precision: f.precision_percent() / 100.0,
                max_steps: f.max_steps(),
            },
            None if !sweep.workers.is_empty() => {
                let mut workers = sweep.workers.clone();
                workers.sort_unstable();
                workers.dedup();
                Steps::Workers(workers)
            }
            None => {
                let mut rates = sweep.rates.clone();
                rates.sort_unstable();
                rates.dedup();
                Steps::Ladder(rates)
            }
        };
        Ok(SweepPlan {
            steps,
            goal: sweep.latency.as_ref().map(|g| g.resolve()).transpose()?,
            step: sweep.step_duration()?,
        })
    }

    /// The sweep in one line, as the workload identity holds it: `rates 1000, 2000 ops/s; steps
    /// of 30 s; p99 ≤ 10ms` or `findMax from 1000 ops/s ×1.5 to 2%, at most 20 steps; …`.
    pub fn describe(&self) -> String {
        let steps = match &self.steps {
            Steps::Ladder(rates) => {
                let rates: Vec<String> = rates.iter().map(u64::to_string).collect();
                format!("rates {} ops/s", rates.join(", "))
            }
            Steps::Workers(workers) => {
                let workers: Vec<String> = workers.iter().map(u32::to_string).collect();
                format!("workers {}, closed loop", workers.join(", "))
            }
            Steps::FindMax {
                start,
                growth,
                precision,
                max_steps,
            } => format!(
                "findMax from {start} ops/s ×{growth} to {}%, at most {max_steps} steps",
                precision * 100.0
            ),
        };
        let goal = self
            .goal
            .as_ref()
            .map_or("no latency goal".to_owned(), Goal::describe);
        format!("{steps}; steps of {} s; {goal}", self.step.as_secs_f64())
    }

    /// The first step's rate (the warm-up runs at it); `None` for a ladder of workers.
    pub fn first_rate(&self) -> Option<u64> {
        match &self.steps {
            Steps::Ladder(rates) => rates.first().copied(),
            Steps::Workers(_) => None,
            Steps::FindMax { start, .. } => Some(*start),
        }
    }

    /// The first step's workers, for a ladder of workers (the warm-up runs with them).
    pub fn first_workers(&self) -> Option<u32> {
        match &self.steps {
            Steps::Workers(workers) => workers.first().copied(),
            _ => None,
        }
    }

    /// Most steps the sweep runs.
    pub fn max_steps(&self) -> u32 {
        match &self.steps {
            Steps::Ladder(rates) => rates.len() as u32,
            Steps::Workers(workers) => workers.len() as u32,
            Steps::FindMax { max_steps, .. } => *max_steps,
        }
    }

    /// The level of the next step after `ran`; `None` when the sweep is over.
    pub fn next_level(&self, ran: &[Ran]) -> Option<u64> {
        match &self.steps {
            Steps::Ladder(rates) => rates.get(ran.len()).copied(),
            Steps::Workers(workers) => workers.get(ran.len()).map(|&w| u64::from(w)),
            &Steps::FindMax {
                start,
                growth,
                precision,
                max_steps,
            } => {
                if ran.len() >= max_steps as usize {
                    return None;
                }
                let Some(last) = ran.last() else {
                    return Some(start);
                };
                let Some(bad) = first_saturated(ran) else {
                    // Still growing: at least one op/s more, at most the bound.
                    let next = ((last.level as f64 * growth).round() as u64)
                        .max(last.level + 1)
                        .min(MAX_RATE);
                    return (next > last.level).then_some(next);
                };
                let good = last_good_below(ran, bad).map_or(0, |r| r.level);
                if good > 0 && (bad - good) as f64 <= good as f64 * precision {
                    return None;
                }
                let mid = (good + bad) / 2;
                (mid > good && mid < bad).then_some(mid)
            }
        }
    }
}

/// The lowest saturated level.
fn first_saturated(ran: &[Ran]) -> Option<u64> {
    ran.iter().filter(|r| r.saturated).map(|r| r.level).min()
}

/// The highest good step below `bad`.
fn last_good_below(ran: &[Ran], bad: u64) -> Option<&Ran> {
    ran.iter()
        .filter(|r| !r.saturated && r.level < bad)
        .max_by_key(|r| r.level)
}

/// Which step is the knee: the good step of the highest level below every saturated one (by
/// index into `ran`), and whether a saturated step bounds it from above. `None` when no step
/// below the first saturated one was good.
pub fn knee(ran: &[Ran]) -> Option<(usize, bool)> {
    let bad = first_saturated(ran);
    let below = bad.unwrap_or(u64::MAX);
    let (index, _) = ran
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.saturated && r.level < below)
        .max_by_key(|(_, r)| r.level)?;
    Some((index, bad.is_some()))
}

/// Judges a step of `workers` paced to `rate` (`None`: a closed loop) that measured
/// `measured`: saturated when it achieved less than [`SUSTAINED_SHARE`] of its rate, when more
/// than `error_budget` of its operations failed, or when it broke `goal` (every reason that
/// applies, in that order).
pub fn judge(
    (workers, rate): (u32, Option<u64>),
    measured: &MeasuredPhase,
    goal: Option<&Goal>,
    error_budget: f64,
) -> SweepStep {
    let overall = &measured.overall;
    let latency = overall.latency_us.as_ref();
    let mut why = Vec::new();
    if let Some(rate) = rate
        && overall.ops_per_sec < rate as f64 * SUSTAINED_SHARE
    {
        why.push(format!(
            "achieved {:.0} of {rate} ops/s (below {:.0}%)",
            overall.ops_per_sec,
            SUSTAINED_SHARE * 100.0
        ));
    }
    if overall.error_rate > error_budget {
        why.push(format!(
            "{:.2}% of operations failed (budget {:.0}%)",
            overall.error_rate * 100.0,
            error_budget * 100.0
        ));
    }
    let mut goal_us = None;
    if let Some(goal) = goal {
        let class = if goal.op == "any" {
            Some(overall)
        } else {
            measured
                .operations
                .iter()
                .find(|(label, _)| goal.names(label))
                .map(|(_, r)| r)
        };
        let summary = class.and_then(|c| c.latency_us.as_ref());
        goal_us = summary.map(|s| match goal.percentile {
            Percentile::P50 => s.p50,
            Percentile::P95 => s.p95,
            Percentile::P99 => s.p99,
            Percentile::P999 => s.p999,
        });
        match goal_us {
            None => why.push(format!("no {} operation completed", goal.op)),
            Some(us) if us > goal.bound_us => why.push(format!(
                "{} {:.1}ms broke {}",
                goal.percentile.as_str(),
                us as f64 / 1000.0,
                goal.describe()
            )),
            Some(_) => {}
        }
    }
    SweepStep {
        target_ops_per_sec: rate,
        workers,
        ops_per_sec: overall.ops_per_sec,
        error_rate: overall.error_rate,
        p50_us: latency.map(|l| l.p50),
        p99_us: latency.map(|l| l.p99),
        p999_us: latency.map(|l| l.p999),
        goal_us,
        saturated: (!why.is_empty()).then(|| why.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find_max(start: u64, growth: f64, precision: f64, max_steps: u32) -> SweepPlan {
        SweepPlan {
            steps: Steps::FindMax {
                start,
                growth,
                precision,
                max_steps,
            },
            goal: None,
            step: Duration::from_secs(1),
        }
    }

    fn ran(level: u64, saturated: bool) -> Ran {
        Ran { level, saturated }
    }

    /// The rates a search runs against a server that sustains up to `capacity`.
    fn search(plan: &SweepPlan, capacity: u64) -> Vec<u64> {
        let mut done = Vec::new();
        while let Some(level) = plan.next_level(&done) {
            done.push(ran(level, level > capacity));
        }
        done.iter().map(|r| r.level).collect()
    }

    #[test]
    fn a_search_grows_then_bisects_to_the_precision() {
        let plan = find_max(1000, 1.5, 0.02, 20);
        // 1000, 1500, 2250, 3375 good; 5063 saturated; then halves between the two.
        assert_eq!(
            search(&plan, 4200),
            [1000, 1500, 2250, 3375, 5063, 4219, 3797, 4008, 4113, 4166]
        );
        // 4166 good and 4219 saturated: 53 apart, within 2 % of 4166 (83).
        let ran: Vec<Ran> = search(&plan, 4200)
            .into_iter()
            .map(|level| ran(level, level > 4200))
            .collect();
        assert_eq!(knee(&ran), Some((9, true)));
    }

    #[test]
    fn a_first_step_that_saturates_is_bisected_down_from_zero() {
        let plan = find_max(1000, 2.0, 0.1, 20);
        assert_eq!(search(&plan, 300), [1000, 500, 250, 375, 312, 281, 296]);
    }

    #[test]
    fn a_search_stops_at_max_steps_and_at_the_rate_bound() {
        assert_eq!(
            search(&find_max(1000, 2.0, 0.02, 3), 1_000_000),
            [1000, 2000, 4000]
        );
        let top = search(&find_max(60_000_000, 2.0, 0.02, 5), u64::MAX);
        assert_eq!(top, [60_000_000, 100_000_000]);
        // Growth that rounds to no change still moves by one.
        assert_eq!(search(&find_max(1, 1.1, 0.02, 4), 1_000), [1, 2, 3, 4]);
    }

    #[test]
    fn a_ladder_runs_every_rate_and_the_knee_is_below_the_first_saturated_step() {
        let plan =
            SweepPlan::of(&serde_yaml::from_str("{rates: [4000, 1000, 2000, 8000]}").unwrap())
                .unwrap();
        assert_eq!(
            (plan.first_rate(), plan.first_workers()),
            (Some(1000), None)
        );
        assert_eq!(plan.max_steps(), 4);
        assert_eq!(
            plan.describe(),
            "rates 1000, 2000, 4000, 8000 ops/s; steps of 30 s; no latency goal"
        );
        let searching = SweepPlan {
            goal: Some(goal(Percentile::P99, 10_000, "read")),
            ..find_max(1000, 1.5, 0.02, 20)
        };
        assert_eq!(
            searching.describe(),
            "findMax from 1000 ops/s ×1.5 to 2%, at most 20 steps; steps of 1 s; p99 ≤ 10ms on read"
        );
        // Saturated at 4000; 8000 is (by noise) good, but lies above a saturated step.
        let ran = [
            ran(1000, false),
            ran(2000, false),
            ran(4000, true),
            ran(8000, false),
        ];
        assert_eq!(search(&plan, 3000), [1000, 2000, 4000, 8000]);
        assert_eq!(knee(&ran), Some((1, true)));
        // Never saturated: the knee is the last step, unbounded.
        assert_eq!(knee(&ran[..2]), Some((1, false)));
        // Saturated from the first step: no knee.
        assert_eq!(knee(&ran[2..3]), None);
        let crowd = SweepPlan::of(&serde_yaml::from_str("{workers: [16, 4, 8]}").unwrap()).unwrap();
        assert_eq!((crowd.first_rate(), crowd.first_workers()), (None, Some(4)));
        assert_eq!(search(&crowd, 8), [4, 8, 16]);
        assert_eq!(
            crowd.describe(),
            "workers 4, 8, 16, closed loop; steps of 30 s; no latency goal"
        );
    }

    /// 950 operations in one second: 900 finds of 1 ms, 50 updates of 20 ms, `failed` of the
    /// finds failed.
    fn step(failed: usize) -> MeasuredPhase {
        use crate::measure::ErrorKind;
        let mut ops = Vec::new();
        for i in 0..900 {
            ops.push((
                "find",
                1000,
                if i < failed {
                    Err(ErrorKind::Timeout)
                } else {
                    Ok(())
                },
            ));
        }
        ops.extend(std::iter::repeat_n(("update", 20_000, Ok(())), 50));
        let cell = crate::result::testing::cell("t", "p", "1k", 1);
        crate::result::testing::result_from(cell, Duration::from_secs(1), &ops, None)
            .measured
            .unwrap()
    }

    fn goal(percentile: Percentile, bound_us: u64, op: &str) -> Goal {
        Goal {
            percentile,
            bound_us,
            op: op.into(),
        }
    }

    #[test]
    fn a_step_is_saturated_below_nine_tenths_of_its_rate_over_the_error_budget_or_past_the_goal() {
        let good = judge(
            (16, Some(1000)),
            &step(0),
            Some(&goal(Percentile::P50, 2000, "any")),
            0.01,
        );
        assert_eq!(good.saturated, None);
        assert_eq!(
            (good.target_ops_per_sec, good.ops_per_sec),
            (Some(1000), 950.0)
        );
        // A closed loop has no rate to fall short of.
        let closed = judge((4, None), &step(0), None, 0.01);
        assert_eq!(
            (closed.workers, closed.target_ops_per_sec, closed.saturated),
            (4, None, None)
        );
        assert_eq!(good.goal_us, good.p50_us);
        assert!(good.p50_us.is_some_and(|us| (1000..1010).contains(&us)));
        // 950 of 1100 is below 990.
        assert_eq!(
            judge((16, Some(1100)), &step(0), None, 0.01)
                .saturated
                .as_deref(),
            Some("achieved 950 of 1100 ops/s (below 90%)")
        );
        // 5.3 % of all operations take 20 ms: the p99 of any breaks 10 ms, that of finds not.
        let slow = judge(
            (16, Some(1000)),
            &step(0),
            Some(&goal(Percentile::P99, 10_000, "any")),
            0.01,
        );
        assert_eq!(
            slow.saturated.as_deref(),
            Some("p99 20.0ms broke p99 ≤ 10ms")
        );
        let finds = judge(
            (16, Some(1000)),
            &step(0),
            Some(&goal(Percentile::P99, 10_000, "find")),
            0.01,
        );
        assert_eq!(finds.saturated, None);
        // 20 of 950 failed: 2.11 %.
        let failing = judge(
            (16, Some(1000)),
            &step(20),
            Some(&goal(Percentile::P99, 10_000, "update")),
            0.01,
        );
        assert_eq!(
            failing.saturated.as_deref(),
            Some("2.11% of operations failed (budget 1%); p99 20.0ms broke p99 ≤ 10ms on update")
        );
        let absent = judge(
            (16, Some(1000)),
            &step(0),
            Some(&goal(Percentile::P99, 10_000, "scan")),
            0.01,
        );
        assert_eq!(
            absent.saturated.as_deref(),
            Some("no scan operation completed")
        );
    }
}
