use super::*;
use crate::result::testing::{simultaneous_result, slotted_result};
use crate::verdict::stats::Method;

fn cell(target: &str, slot: u32, series: &[u64], side: Option<u32>) -> CellResult {
    simultaneous_result(target, slot, series, side)
}

fn refs(cells: &[CellResult]) -> Vec<&CellResult> {
    cells.iter().collect()
}

#[test]
fn each_slot_is_the_ratio_over_the_common_seconds_and_shared_noise_cancels() {
    // The machine's speed moves a lot from slot to slot and second to second; the candidate
    // is 5 % faster in every second of it.
    let speeds = [
        [1000, 800, 1200, 900],
        [600, 700, 660, 620],
        [1500, 1400, 1460, 1600],
    ];
    let base: Vec<CellResult> = speeds
        .iter()
        .enumerate()
        .map(|(k, s)| cell("a", k as u32 + 1, s, None))
        .collect();
    let cand: Vec<CellResult> = speeds
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let faster: Vec<u64> = s.iter().map(|v| v * 105 / 100).collect();
            cell("b", k as u32 + 1, &faster, None)
        })
        .collect();
    let (delta, d) = compare_throughput(&refs(&base), &refs(&cand), None).unwrap();
    let delta = delta.unwrap();
    assert!((delta.percent - 5.0).abs() < 1e-9, "{delta:?}");
    assert_eq!(delta.pairs, Some(3));
    assert_eq!(d.slots, 3);
    assert!((d.correlation.unwrap() - 1.0).abs() < 1e-12);
    assert!(d.ratio_trend_percent.unwrap().abs() < 1e-9);
    assert_eq!(d.side_effect_percent, None);
    assert_eq!(
        d.notes,
        [
            "the targets kept their places (different nodes, or no --cpu-sets): no crossover, so a \
          difference of places is not told apart from one of targets"
        ]
    );
}

#[test]
fn traded_sides_are_estimated_and_removed_and_uncorrelated_series_are_named() {
    // Side 0 makes its target 10 % faster; the candidate is 2 % faster; the seconds of the two
    // targets move independently (one rises while the other falls).
    let up = [1000, 1100, 1000, 1100];
    let down = [1100, 1000, 1100, 1000];
    let mut base = Vec::new();
    let mut cand = Vec::new();
    for (k, cand_side) in [0, 1, 1, 0].into_iter().enumerate() {
        let slot = k as u32 + 1;
        let speed = |side: u32, factor: f64, s: &[u64]| -> Vec<u64> {
            let f = if side == 0 { 1.10 } else { 1.0 } * factor;
            s.iter().map(|&v| (v as f64 * f).round() as u64).collect()
        };
        base.push(cell(
            "a",
            slot,
            &speed(1 - cand_side, 1.0, &up),
            Some(1 - cand_side),
        ));
        cand.push(cell(
            "b",
            slot,
            &speed(cand_side, 1.02, &down),
            Some(cand_side),
        ));
    }
    let (delta, d) = compare_throughput(&refs(&base), &refs(&cand), None).unwrap();
    let delta = delta.unwrap();
    assert!((delta.percent - 2.0).abs() < 0.05, "{delta:?}");
    assert!(
        (d.side_effect_percent.unwrap() - 10.0).abs() < 0.05,
        "{d:?}"
    );
    assert_eq!(delta.df, Some(2.0));
    assert!(d.correlation.unwrap() < LOW_CORRELATION, "{d:?}");
    assert_eq!(d.notes.len(), 2);
    assert!(d.notes[0].starts_with("the per-second series correlate little (median r -1.00)"));
    assert_eq!(
        d.notes[1],
        "4 slots on traded sides leave the crossover model 2 degrees of freedom: a target \
         disturbed in just the slots it spent on one side passes for a side effect, with a narrow \
         interval; plan 6 to 8 slots"
    );
}

#[test]
fn six_slots_on_traded_sides_keep_four_degrees_of_freedom_and_no_note_about_them() {
    // The same target in every slot, side 0 10 % faster, the seconds moving together.
    let series = [1000, 1200, 900, 1100];
    let mut base = Vec::new();
    let mut cand = Vec::new();
    for (k, cand_side) in [0, 1, 1, 0, 0, 1].into_iter().enumerate() {
        let slot = k as u32 + 1;
        let on = |side: u32| -> Vec<u64> {
            let f = if side == 0 { 1.10 } else { 1.0 };
            series
                .iter()
                .map(|&v| (v as f64 * f).round() as u64)
                .collect()
        };
        base.push(cell("a", slot, &on(1 - cand_side), Some(1 - cand_side)));
        cand.push(cell("b", slot, &on(cand_side), Some(cand_side)));
    }
    let (delta, d) = compare_throughput(&refs(&base), &refs(&cand), None).unwrap();
    let delta = delta.unwrap();
    assert_eq!(delta.df, Some(4.0));
    assert!(delta.percent.abs() < 0.05, "{delta:?}");
    assert!(
        (d.side_effect_percent.unwrap() - 10.0).abs() < 0.05,
        "{d:?}"
    );
    assert!(d.notes.is_empty(), "{:?}", d.notes);
}

#[test]
fn cells_in_turn_or_fewer_than_two_slots_are_left_to_the_usual_comparison() {
    let base = [slotted_result("a", 1, 100.0), slotted_result("a", 2, 100.0)];
    let cand = [slotted_result("b", 1, 110.0), slotted_result("b", 2, 110.0)];
    assert!(compare_throughput(&refs(&base), &refs(&cand), None).is_none());
    let one = [cell("a", 1, &[10, 10], None)];
    let other = [cell("b", 1, &[11, 11], None)];
    assert!(compare_throughput(&refs(&one), &refs(&other), None).is_none());
}

#[test]
fn a_ratio_that_drifts_within_the_window_shows_its_trend() {
    // The candidate loses 1 % of its ratio each second: 8.6 % from the first to the tenth.
    let a = [1000u64; 10];
    let b: Vec<u64> = (0..10)
        .map(|t| (1000.0 * 0.99_f64.powi(t)).round() as u64)
        .collect();
    let trend = ratio_trend((&a, &b)).unwrap();
    let expected = (0.99_f64.ln() * 9.0).exp_m1() * 100.0;
    assert!((trend - expected).abs() < 0.05, "{trend} vs {expected}");
    assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), Some(2.5));
    assert_eq!(correlation((&[1, 2], &[2, 4])), None);
}

#[test]
fn under_a_precision_goal_the_window_ratios_are_tested_on_the_pilots_spread() {
    // Five slots whose window ratios b ÷ a are 1.02, 1.04, 1.03 (the pilot), then 1.10, 0.96:
    // the test takes the spread of the first three (2 degrees of freedom), the mean of all.
    let ratios = [1.02, 1.04, 1.03, 1.10, 0.96];
    let base: Vec<CellResult> = (1..=5).map(|k| cell("a", k, &[1000; 4], None)).collect();
    let cand: Vec<CellResult> = ratios
        .iter()
        .zip(1..)
        .map(|(r, k)| cell("b", k, &[(1000.0 * r) as u64; 4], None))
        .collect();
    let rates = window_rates(&refs(&base), &refs(&cand)).unwrap();
    assert_eq!(
        rates,
        [
            (1000.0, 1020.0),
            (1000.0, 1040.0),
            (1000.0, 1030.0),
            (1000.0, 1100.0),
            (1000.0, 960.0)
        ]
    );
    let (delta, _) = compare_throughput(&refs(&base), &refs(&cand), Some(3)).unwrap();
    let delta = delta.unwrap();
    assert_eq!(delta, Delta::paired(&rates, Some(3)).unwrap());
    assert_eq!(delta.method, Method::TwoStage { pilot: 3 });
    assert_eq!((delta.df, delta.pairs), (Some(2.0), Some(5)));
}
