//! The error rates of the verdicts on synthetic runs (docs/results.md, "How often a verdict is
//! wrong"): seeded, pure and fast, so that tens of thousands of comparisons run in a unit
//! test. Each run draws per-slot throughputs of a baseline and its candidates, runs the
//! stopping rule of a precision goal ([`TwoStage`], or the rule it replaced) slot by slot, and
//! decides the comparison through the code the reports use: the paired test of
//! [`Delta::paired`], the tested metrics of `compare` and the family's Holm decision.
//!
//! A slot's throughputs share a drift (what the machine did at that time, which the paired
//! test cancels) and each target adds its own normal noise on the log scale, of standard
//! deviation `ratio_sd` ÷ √2, so that the per-slot log ratio has standard deviation
//! `ratio_sd`; the first candidate differs by `effect_percent`, the others not at all.

use super::compare::tested;
use super::comparison::{MetricVerdict, Verdict};
use super::family::decide;
use super::sequential::{Standing, TwoStage};
use super::stats::{ALPHA, Delta};
use crate::api::VerdictMetric;
use crate::workload::rng::{Stream, key};

/// Stream tag of the simulation's draws.
const TAG_SIMULATION: u64 = 0x5111;
/// Standard deviation of the drift a slot's targets share (log scale).
const SLOT_DRIFT: f64 = 0.1;

/// How many slots a simulated run has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// A fixed number of slots.
    Fixed {
        /// How many.
        slots: usize,
    },
    /// Planned slots, then slots added under a precision goal.
    Precision {
        /// Slots always run (the pilot).
        planned: usize,
        /// The goal MDE, percent.
        goal_percent: f64,
        /// Most slots.
        max_slots: usize,
        /// When it stops adding slots.
        rule: Rule,
    },
}

/// When a precision goal stops adding slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Stein's two-stage design ([`TwoStage`]), tested with the pilot's spread.
    TwoStage,
    /// The rule it replaced: stop once every comparison's MDE over the slots so far is at most
    /// the goal, then test all of them as fixed. Kept to show what it did.
    UntilMdeReached,
}

/// One kind of synthetic run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// Targets, the baseline among them (2 to 4).
    pub targets: usize,
    /// Standard deviation of a slot's log ratio of two targets, percent.
    pub ratio_sd_percent: f64,
    /// The first candidate's true difference from the baseline, percent (0: A/A).
    pub effect_percent: f64,
    /// How many slots.
    pub schedule: Schedule,
}

/// What the runs of a scenario gave.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Outcome {
    /// Runs simulated.
    pub runs: usize,
    /// Runs in which a candidate without a difference was called different (family-wise).
    pub false_different: usize,
    /// Runs in which the first candidate, with a true difference of `effect_percent`, was
    /// called different in its direction (0 without one).
    pub detected: usize,
    /// A/A only: runs in which the first candidate, moved by the MDE its run reported, was
    /// called different in that direction: the power at the reported MDE.
    pub detected_at_reported_mde: usize,
    /// Slots run, summed over the runs.
    pub slots: usize,
}

impl Outcome {
    /// Share of runs with a false "different".
    pub fn false_rate(&self) -> f64 {
        self.false_different as f64 / self.runs as f64
    }

    /// Share of runs that found the first candidate's true difference.
    pub fn power(&self) -> f64 {
        self.detected as f64 / self.runs as f64
    }

    /// Share of A/A runs that would have found a difference of their own reported MDE.
    pub fn power_at_reported_mde(&self) -> f64 {
        self.detected_at_reported_mde as f64 / self.runs as f64
    }

    /// Mean slots per run.
    pub fn mean_slots(&self) -> f64 {
        self.slots as f64 / self.runs as f64
    }
}

/// Runs `runs` comparisons of `scenario`, drawn from `seed`.
pub fn simulate(scenario: &Scenario, runs: usize, seed: u64) -> Outcome {
    let mut outcome = Outcome {
        runs,
        ..Outcome::default()
    };
    for run in 0..runs {
        let mut draws = Stream::new(key(seed, TAG_SIMULATION, run as u64));
        let slots = run_slots(scenario, &mut draws);
        outcome.slots += slots.len();
        let verdicts = decide_run(scenario, &slots, 1.0);
        let null_from = usize::from(scenario.effect_percent != 0.0);
        if verdicts[null_from..]
            .iter()
            .any(|v| v.verdict.is_difference())
        {
            outcome.false_different += 1;
        }
        let first = &verdicts[0];
        if scenario.effect_percent != 0.0 {
            outcome.detected += usize::from(found(first, scenario.effect_percent));
        } else if let Some(mde) = first.mde_percent {
            // The stopping rules read spreads only, which a constant shift of one candidate's
            // log ratios leaves alone: the same slots, moved by the reported MDE.
            let moved = decide_run(scenario, &slots, 1.0 + mde / 100.0);
            outcome.detected_at_reported_mde += usize::from(found(&moved[0], mde));
        }
    }
    outcome
}

/// Whether `v` calls its candidate faster by a true difference of `effect` (> 0).
fn found(v: &MetricVerdict, effect: f64) -> bool {
    v.verdict == Verdict::significant(VerdictMetric::Throughput, effect)
}

/// One slot: the baseline's throughput, then each candidate's.
type Slot = Vec<f64>;

fn normal(draws: &mut Stream) -> f64 {
    // Box–Muller over two uniforms in (0, 1).
    let uniform = |d: &mut Stream| ((d.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (u, v) = (uniform(draws), uniform(draws));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn draw_slot(scenario: &Scenario, draws: &mut Stream) -> Slot {
    let sd = scenario.ratio_sd_percent / 100.0 / std::f64::consts::SQRT_2;
    let drift = SLOT_DRIFT * normal(draws);
    (0..scenario.targets)
        .map(|t| {
            let effect = if t == 1 {
                (1.0 + scenario.effect_percent / 100.0).ln()
            } else {
                0.0
            };
            1000.0 * (drift + effect + sd * normal(draws)).exp()
        })
        .collect()
}

/// The slots of one run: the planned ones, then as the stopping rule asks.
fn run_slots(scenario: &Scenario, draws: &mut Stream) -> Vec<Slot> {
    let (planned, max) = match scenario.schedule {
        Schedule::Fixed { slots } => (slots, slots),
        Schedule::Precision {
            planned, max_slots, ..
        } => (planned, max_slots),
    };
    let mut slots: Vec<Slot> = (0..planned).map(|_| draw_slot(scenario, draws)).collect();
    while slots.len() < max && !stops(scenario, &slots) {
        slots.push(draw_slot(scenario, draws));
    }
    slots
}

/// Each candidate's (baseline, candidate) pairs, the first candidate's scaled by `shift`.
fn pairs(slots: &[Slot], shift: f64) -> Vec<Vec<(f64, f64)>> {
    let candidates = slots.first().map_or(0, |s| s.len() - 1);
    (1..=candidates)
        .map(|c| {
            let k = if c == 1 { shift } else { 1.0 };
            slots.iter().map(|s| (s[0], s[c] * k)).collect()
        })
        .collect()
}

fn stops(scenario: &Scenario, slots: &[Slot]) -> bool {
    let Schedule::Precision {
        planned,
        goal_percent,
        max_slots,
        rule,
    } = scenario.schedule
    else {
        return true;
    };
    let comparisons = pairs(slots, 1.0);
    match rule {
        Rule::TwoStage => matches!(
            TwoStage::new(planned, goal_percent, comparisons.len(), max_slots)
                .standing(&comparisons),
            Standing::Reached { .. }
        ),
        Rule::UntilMdeReached => comparisons.iter().all(|p| {
            Delta::paired(p, None)
                .ok()
                .and_then(|d| d.mde_percent(ALPHA))
                .is_some_and(|m| m <= goal_percent)
        }),
    }
}

/// The verdicts of one run's comparison, as `compare` reaches them from paired cells.
fn decide_run(scenario: &Scenario, slots: &[Slot], shift: f64) -> Vec<MetricVerdict> {
    let pilot = match scenario.schedule {
        Schedule::Precision {
            planned,
            rule: Rule::TwoStage,
            ..
        } => Some(planned.max(super::stats::MIN_REPETITIONS)),
        _ => None,
    };
    let mut verdicts: Vec<MetricVerdict> = pairs(slots, shift)
        .iter()
        .map(|p| {
            tested(
                VerdictMetric::Throughput,
                Delta::paired(p, pilot).ok(),
                true,
            )
        })
        .collect();
    decide(
        verdicts
            .iter_mut()
            .filter(|v| v.verdict == Verdict::NoSignificantDifference)
            .collect(),
    );
    verdicts
}

#[cfg(test)]
mod tests;
