//! The verdicts' error rates within Monte-Carlo bounds (docs/results.md, "How often a verdict
//! is wrong"). With 10,000 runs a rate's standard error is 0.22 points at 5 % and 0.4 at 80 %.

use super::*;
use crate::verdict::sequential::Need;
use crate::verdict::stats::{log_ratio_sd, two_stage_pairs};

/// Runs per scenario.
const RUNS: usize = 10_000;
const SEED: u64 = 40;

fn precision(targets: usize, ratio_sd_percent: f64, effect_percent: f64, rule: Rule) -> Scenario {
    Scenario {
        targets,
        ratio_sd_percent,
        effect_percent,
        schedule: Schedule::Precision {
            planned: 3,
            goal_percent: 3.0,
            max_slots: 30,
            rule,
        },
    }
}

/// [`precision`] of the two-stage design up to `max_slots`.
fn two_stage_up_to(targets: usize, effect_percent: f64, max_slots: usize) -> Scenario {
    Scenario {
        schedule: Schedule::Precision {
            planned: 3,
            goal_percent: 3.0,
            max_slots,
            rule: Rule::TwoStage,
        },
        ..precision(targets, 2.0, effect_percent, Rule::TwoStage)
    }
}

fn fixed(targets: usize, ratio_sd_percent: f64, slots: usize) -> Scenario {
    Scenario {
        targets,
        ratio_sd_percent,
        effect_percent: 0.0,
        schedule: Schedule::Fixed { slots },
    }
}

#[test]
fn stopping_when_the_mde_reaches_the_goal_calls_too_many_a_a_runs_different() {
    // The rule the two-stage design replaced, at a ratio SD of 2 % and a 3 % goal: it stops
    // on runs whose spread came out low, and its false "different" exceed the level.
    let o = simulate(&precision(2, 2.0, 0.0, Rule::UntilMdeReached), RUNS, SEED);
    assert!(o.false_rate() > 0.065, "{o:?}");
}

#[test]
fn the_two_stage_design_holds_the_level_family_wise() {
    for targets in [2, 4] {
        for sd in [0.5, 2.0, 4.0] {
            let o = simulate(&precision(targets, sd, 0.0, Rule::TwoStage), RUNS, SEED);
            assert!(
                o.false_rate() <= 0.055,
                "{targets} targets, ratio SD {sd}%: {o:?}"
            );
        }
    }
}

#[test]
fn fixed_repetitions_hold_the_level_and_find_their_reported_mde() {
    for (targets, slots) in [(2, 3), (3, 5), (4, 10)] {
        let o = simulate(&fixed(targets, 2.0, slots), RUNS, SEED);
        assert!(
            o.false_rate() <= 0.055,
            "{targets} targets, {slots} slots: {o:?}"
        );
        let power = o.power_at_reported_mde();
        assert!(
            (0.75..=0.85).contains(&power),
            "{targets} targets, {slots} slots: power {power} at the reported MDE"
        );
    }
}

#[test]
fn the_two_stage_design_finds_its_reported_mde_and_the_goal() {
    for targets in [2, 3] {
        let o = simulate(&precision(targets, 2.0, 0.0, Rule::TwoStage), RUNS, SEED);
        let power = o.power_at_reported_mde();
        assert!(
            (0.75..=0.85).contains(&power),
            "{targets} targets: power {power} at the reported MDE"
        );
        // A true difference of the goal itself: the design promises at least 80 % where the
        // slots it asks for are not cut short by maxRepetitions (30 cuts a tenth of these
        // pilots' spreads short: the power is then lower, and the MDE stated says so).
        let o = simulate(&two_stage_up_to(targets, 3.0, 100), RUNS, SEED);
        assert!(o.power() >= 0.79, "{targets} targets: {o:?}");
        let capped = simulate(&two_stage_up_to(targets, 3.0, 30), RUNS, SEED);
        assert!(capped.power() < o.power(), "{capped:?}");
    }
}

#[test]
fn the_stopping_rule_states_the_mde_the_test_reports() {
    // A pilot of 3 and 5 pairs in all: the design's MDE is the two-stage test's.
    let pairs = [
        (100.0, 103.0),
        (120.0, 123.0),
        (90.0, 93.5),
        (110.0, 112.9),
        (105.0, 108.6),
    ];
    let design = TwoStage::new(3, 1.0, 2, 30);
    let Need::Slots {
        slots, mde_percent, ..
    } = design.need(&pairs)
    else {
        panic!("{:?}", design.need(&pairs));
    };
    let test = Delta::paired(&pairs, Some(3)).unwrap();
    assert_eq!(Some(mde_percent), test.mde_percent(ALPHA / 2.0));
    assert_eq!(
        Some(slots),
        two_stage_pairs(log_ratio_sd(&pairs[..3]), 3, 1.0, ALPHA / 2.0, 30)
    );
    assert_eq!(design.need(&pairs[..2]), Need::Pilot { pairs: 2 });
}
