use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

// Reference values: mpmath (30 digits), Student's t through the regularized incomplete
// beta function, quantiles by root finding.
#[test]
fn t_distribution_matches_an_independent_computation() {
    for (df, q975, q80) in [
        (1.0, 12.706204736174693, 1.3763819204711739),
        (2.0, 4.302652729749462, 1.0606601717798215),
        (4.0, 2.776445105197793, 0.9409645772351814),
        (5.5, 2.5018586175892397, 0.9119511921290531),
        (30.0, 2.042272456301238, 0.8537672614712978),
        (120.0, 1.9799304050824405, 0.8446268377431312),
    ] {
        assert!(close(t_quantile(0.975, df), q975), "df {df}");
        assert!(close(t_quantile(0.8, df), q80), "df {df}");
        assert!(close(t_quantile(0.025, df), -q975), "df {df}");
    }
    assert!(close(t_cdf(2.5, 4.0), 0.9666167275940059));
    assert!(close(t_cdf(1.0, 8.0), 0.8267032464563329));
    assert!(close(t_cdf(-3.0, 5.5), 0.013361740330922957));
    assert_eq!(t_cdf(0.0, 3.0), 0.5);
    assert_eq!(t_critical_95(0.5), None);
    assert!(close(t_critical_95(8.0).unwrap(), 2.306004135204166));
}

#[test]
fn summary_of_five_samples() {
    // 10, 12, 14, 16, 18: mean 14, squared deviations 16+4+0+4+16 = 40, s² = 40/4 = 10;
    // t₀.₉₇₅(4) · √10 / √5 = 3.926486322955114.
    let s = Summary::of(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
    assert_eq!(s.n, 5);
    assert_eq!(s.mean, 14.0);
    assert!(close(s.std_dev.unwrap(), 3.1622776601683795));
    assert!(close(s.ci95_half_width.unwrap(), 3.926486322955114));
    assert!(close(s.cv.unwrap(), 0.22587697572631282));
    let (low, high) = s.ci95().unwrap();
    assert!(close(low, 14.0 - 3.926486322955114));
    assert!(close(high, 14.0 + 3.926486322955114));
}

#[test]
fn one_sample_has_a_mean_and_nothing_else() {
    let s = Summary::of(&[42.5]).unwrap();
    assert_eq!(
        s,
        Summary {
            n: 1,
            mean: 42.5,
            std_dev: None,
            ci95_half_width: None,
            cv: None
        }
    );
}

#[test]
fn bad_samples_are_refused() {
    assert_eq!(Summary::of(&[]), Err(StatsError::Empty));
    assert!(matches!(
        Summary::of(&[1.0, f64::NAN]),
        Err(StatsError::NotFinite { index: 1, .. })
    ));
}

#[test]
fn paired_test_of_slots_that_share_their_drift() {
    // The baseline drifts 90..120 between slots; the candidate is 2.6–3.9 % above it in
    // each. Reference values: mpmath (30 digits), paired t on ln(candidate / baseline).
    let pairs = [
        (100.0, 103.0),
        (120.0, 123.0),
        (90.0, 93.5),
        (110.0, 112.9),
        (105.0, 108.6),
    ];
    let d = Delta::paired(&pairs, None).unwrap();
    assert!(close(d.percent, 3.089490899555648), "{}", d.percent);
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, 2.380697634633557), "{low}");
    assert!(close(high, 3.803191221217983), "{high}");
    assert!((d.p_value.unwrap() - 2.554377292692005e-4).abs() < 1e-12);
    assert!(close(d.mde_percent(ALPHA).unwrap(), 0.928028373422778));
    assert!(close(d.ratio_cv.unwrap(), 0.005561426691598339));
    assert_eq!((d.df, d.pairs), (Some(4.0), Some(5)));
    // The same samples as independent groups: the drift is all Welch sees.
    let base = Summary::of(&pairs.map(|p| p.0)).unwrap();
    let cand = Summary::of(&pairs.map(|p| p.1)).unwrap();
    let welch = Delta::between(&base, &cand).unwrap();
    assert!(welch.mde_percent(ALPHA).unwrap() > 15.0, "{welch:?}");
    assert!(welch.p_value.unwrap() > 0.5, "{welch:?}");
}

#[test]
fn paired_test_of_equal_servers_finds_no_difference_and_swaps_symmetrically() {
    let pairs = [(100.0, 101.0), (102.0, 100.0), (98.0, 99.0), (101.0, 100.0)];
    let d = Delta::paired(&pairs, None).unwrap();
    assert!(close(d.percent, -0.24096560645776673), "{}", d.percent);
    assert!(close(d.p_value.unwrap(), 0.7679780036380697));
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, -2.5851454437105404), "{low}");
    assert!(close(high, 2.1596243043347375), "{high}");
    // Swapping the sides inverts every ratio: the same test, the interval mirrored.
    let swapped = Delta::paired(&pairs.map(|(b, c)| (c, b)), None).unwrap();
    assert!(close(swapped.p_value.unwrap(), d.p_value.unwrap()));
    assert!(close(
        (1.0 + swapped.percent / 100.0) * (1.0 + d.percent / 100.0),
        1.0
    ));
}

#[test]
fn two_stage_pairs_for_a_goal() {
    // sd 2 % of log ratios, goal 3 %, a pilot of 3: ((t₀.₉₇₅(2) + t₀.₈(2)) · 0.02 / ln 1.03)²
    // = 13.169 (mpmath), so 14 pairs; a pilot of 5: 6.327, so 7; a pilot of 5 in a family
    // of two (level 2.5 %): 9.010, so 10.
    assert_eq!(two_stage_pairs(0.02, 3, 3.0, ALPHA, 100), Some(14));
    assert_eq!(two_stage_pairs(0.02, 5, 3.0, ALPHA, 100), Some(7));
    assert_eq!(two_stage_pairs(0.02, 5, 3.0, ALPHA / 2.0, 100), Some(10));
    // Never fewer than the pilot, nor than a verdict needs; none past the limit.
    assert_eq!(two_stage_pairs(0.0, 5, 50.0, ALPHA, 100), Some(5));
    assert_eq!(
        two_stage_pairs(0.0, 2, 50.0, ALPHA, 100),
        Some(MIN_REPETITIONS)
    );
    assert_eq!(two_stage_pairs(0.02, 3, 3.0, ALPHA, 13), None);
}

#[test]
fn the_two_stage_test_takes_its_spread_from_the_pilot() {
    // The drifting slots above with a pilot of 3: the mean of all 5 log ratios, the standard
    // deviation of the first 3 (0.0068150), 2 degrees of freedom, se = sd / √5 (mpmath).
    let pairs = [
        (100.0, 103.0),
        (120.0, 123.0),
        (90.0, 93.5),
        (110.0, 112.9),
        (105.0, 108.6),
    ];
    let d = Delta::paired(&pairs, Some(3)).unwrap();
    assert_eq!(d.method, Method::TwoStage { pilot: 3 });
    assert_eq!((d.df, d.pairs), (Some(2.0), Some(5)));
    assert!(close(d.percent, 3.089490899555648), "{}", d.percent);
    assert!((d.p_value.unwrap() - 0.00988468088924262).abs() < 1e-12);
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, 1.7464511098827729), "{low}");
    assert!(close(high, 4.450258638036257), "{high}");
    let (low, high) = d.interval_percent(ALPHA / 2.0).unwrap();
    assert!(close(low, 1.1581329494628812), "{low}");
    assert!(close(high, 5.057723230606494), "{high}");
    assert!(close(d.mde_percent(ALPHA).unwrap(), 1.6480490519764128));
    // The spread at its upper 80 % bound, s · √(2 / χ²₀.₂(2)) with χ²₀.₂(2) = 0.44629.
    assert!(close(
        d.mde_upper_percent(ALPHA).unwrap(),
        3.520946198237406
    ));
    // A pilot as long as the pairs is the paired test.
    assert_eq!(Delta::paired(&pairs, Some(5)), Delta::paired(&pairs, None));
    assert_eq!(Delta::paired(&pairs, None).unwrap().method, Method::Paired);
}

#[test]
fn chi_square_matches_an_independent_computation() {
    // mpmath: the 0.2 quantiles, and P(X ≤ 3).
    for (df, q20, cdf3) in [
        (2.0, 0.44628710262841954, 0.7768698398515702),
        (4.0, 1.6487766180659693, 0.4421745996289254),
        (5.5, 2.702765558732288, 0.2412797732459043),
        (9.0, 5.380053211773292, 0.035705027314910874),
        (29.0, 22.475051977511214, 2.636058766316061e-10),
    ] {
        assert!(close(chi_square_quantile(0.2, df), q20), "df {df}");
        assert!((chi_square_cdf(3.0, df) - cdf3).abs() < 1e-12, "df {df}");
    }
}

#[test]
fn holm_levels_agree_with_the_adjusted_p_values() {
    // 0.01 < 0.05/4 is significant at its step; 0.03 ≥ 0.05/3 stops the procedure, and 0.04
    // and 0.5 are judged at the level it stopped at (adjusted: 0.04, 0.09, 0.09, 0.5).
    let p = [0.01, 0.04, 0.03, 0.5];
    let levels = holm_levels(&p);
    let expected = [0.0125, ALPHA / 3.0, ALPHA / 3.0, ALPHA / 3.0];
    for (l, e) in levels.iter().zip(expected) {
        assert!(close(*l, e), "{levels:?}");
    }
    // Marginal: 0.03 and 0.04 each below 5 %, neither below its Holm step; 0.01 and 0.04
    // both are (0.01 < 0.025, then 0.04 < 0.05).
    assert_eq!(holm_levels(&[0.03, 0.04]), vec![0.025, 0.025]);
    assert_eq!(holm_levels(&[0.04, 0.01]), vec![0.05, 0.025]);
    for (p, adjusted, level) in adjusted_and_levels(&[0.001, 0.2, 0.012, 0.03, 0.049]) {
        assert_eq!(
            adjusted < ALPHA,
            p < level,
            "p {p}, adjusted {adjusted}, level {level}"
        );
    }
}

fn adjusted_and_levels(p: &[f64]) -> Vec<(f64, f64, f64)> {
    let adjusted = holm(p);
    let levels = holm_levels(p);
    (0..p.len())
        .map(|i| (p[i], adjusted[i], levels[i]))
        .collect()
}

#[test]
fn paired_edge_cases() {
    assert!(matches!(Delta::paired(&[], None), Err(StatsError::Empty)));
    assert!(matches!(
        Delta::paired(&[(0.0, 1.0)], None),
        Err(StatsError::ZeroBaseline)
    ));
    assert!(matches!(
        Delta::paired(&[(1.0, 2.0), (1.0, -1.0)], None),
        Err(StatsError::NotFinite { index: 3, .. })
    ));
    let one = Delta::paired(&[(200.0, 150.0)], None).unwrap();
    assert_eq!(
        (one.percent, one.pairs, one.p_value),
        (-25.0, Some(1), None)
    );
    // Identical ratios in every slot still give an interval, at the resolution.
    let same = Delta::paired(&[(100.0, 110.0), (200.0, 220.0), (50.0, 55.0)], None).unwrap();
    let (low, high) = same.interval_percent(ALPHA).unwrap();
    assert!(low < 10.0 && high > 10.0 && high - low < 1.0, "{same:?}");
}

#[test]
fn welch_test_of_two_known_samples() {
    // Baseline 98..102 (mean 100, s² 2.5), candidate 108..112 (mean 110, s² 2.5), n = 5:
    // se = √(0.5 + 0.5) = 1, df = 1² / (0.25/4 + 0.25/4) = 8.
    let baseline = Summary::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
    let candidate = Summary::of(&[110.0, 108.0, 112.0, 111.0, 109.0]).unwrap();
    let d = Delta::between(&baseline, &candidate).unwrap();
    assert_eq!(d.percent, 10.0);
    assert!(close(d.df.unwrap(), 8.0));
    // Fieller with t₀.₉₇₅(8) = 2.306004135204166 (mpmath): θ ∈ [1.07604…, 1.12453…].
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, 7.604708027292601), "{low}");
    assert!(close(high, 12.453801735231536), "{high}");
    // p = 2 · (1 − F₈(10)); MDE = t₀.₉₇₅(8) + t₀.₈(8) = 3.194893652971186 (se = 1 = 1 %).
    assert!((d.p_value.unwrap() - 8.48818152762849e-6).abs() < 1e-15);
    assert!(close(d.mde_percent(ALPHA).unwrap(), 3.194893652971186));
    // The spread at its upper 80 % bound: × √(8 / χ²₀.₂(8)) (mpmath).
    assert!(close(d.mde_upper_percent(ALPHA).unwrap(), 4.21624714278980));
    assert_eq!(d.method, Method::Welch);
    let back = Delta::between(&candidate, &baseline).unwrap();
    assert!(close(back.percent, -100.0 / 11.0));
    assert!(close(back.p_value.unwrap(), d.p_value.unwrap()));
}

#[test]
fn overlapping_samples_have_a_large_p_value() {
    // Means 100 and 101, s² = 2.5 each: t = 1 with 8 degrees of freedom.
    let baseline = Summary::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
    let candidate = Summary::of(&[101.0, 103.0, 99.0, 102.0, 100.0]).unwrap();
    let d = Delta::between(&baseline, &candidate).unwrap();
    assert!(close(d.p_value.unwrap(), 0.346_593_507_087_334_3));
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, -1.2911653383655792), "{low}");
    assert!(close(high, 3.344887938501378), "{high}");
}

#[test]
fn single_repetitions_give_a_delta_without_interval_or_test() {
    let d = Delta::between(
        &Summary::of(&[200.0]).unwrap(),
        &Summary::of(&[150.0]).unwrap(),
    )
    .unwrap();
    assert_eq!(d.percent, -25.0);
    assert_eq!(
        (d.interval_percent(ALPHA), d.p_value, d.mde_percent(ALPHA)),
        (None, None, None)
    );
}

#[test]
fn a_far_slower_candidate_stays_above_minus_100_percent() {
    // The Welch interval of the difference, divided by the baseline mean, gave
    // [−119.8 %, −79.7 %] here (mpmath); Fieller's ratio (t₀.₉₇₅(2.000169…)) stays above
    // −100 %.
    let d = Delta::between(
        &Summary::of(&[700.0, 760.0, 823.0]).unwrap(),
        &Summary::of(&[1.5, 1.9, 2.3]).unwrap(),
    )
    .unwrap();
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, -99.88298673846994), "{low}");
    assert!(close(high, -99.5966995781487), "{high}");
    assert!(d.p_value.unwrap() < 0.05);
}

#[test]
fn a_baseline_not_clearly_above_zero_has_no_interval() {
    // Mean 50.5 with s² = 4900.5 over 2 samples: within t standard errors of 0.
    let d = Delta::between(
        &Summary::of(&[1.0, 100.0]).unwrap(),
        &Summary::of(&[50.0, 60.0]).unwrap(),
    )
    .unwrap();
    assert_eq!(d.interval_percent(ALPHA), None);
    assert!(d.p_value.is_some());
}

#[test]
fn the_interval_holds_zero_exactly_when_welch_finds_no_difference() {
    let base = [100.0, 104.0, 97.0, 101.0];
    for shift in [0.0, 1.0, 3.0, 4.0, 5.0, 6.0, 8.0, 20.0, -5.0, -6.0] {
        let candidate: Vec<f64> = base.iter().map(|x| x * 1.01 + shift).collect();
        let d = Delta::between(
            &Summary::of(&base).unwrap(),
            &Summary::of(&candidate).unwrap(),
        )
        .unwrap();
        let (low, high) = d.interval_percent(ALPHA).unwrap();
        let holds_zero = low <= 0.0 && high >= 0.0;
        assert_eq!(
            holds_zero,
            d.p_value.unwrap() >= ALPHA,
            "shift {shift}: [{low}, {high}], p {}",
            d.p_value.unwrap()
        );
        assert!(low <= d.percent && d.percent <= high);
    }
}

#[test]
fn zero_variance_never_gives_a_point_interval() {
    // Both sides identical across repetitions: each counts as varying by 0.1 % of its mean
    // (s = 0.05 and 0.075), se = √(0.00125 + 0.0028125), df = 1.7422680412371134.
    let d = Delta::between(
        &Summary::of(&[50.0, 50.0]).unwrap(),
        &Summary::of(&[75.0, 75.0]).unwrap(),
    )
    .unwrap();
    assert!(close(d.df.unwrap(), 1.7422680412371134));
    let (low, high) = d.interval_percent(ALPHA).unwrap();
    assert!(close(low, 49.25574403603503), "{low}");
    assert!(close(high, 50.74796715741668), "{high}");
    let s = Summary::of(&[50.0, 50.0, 50.0]).unwrap();
    assert!(s.ci95_half_width.unwrap() > 0.0);
}

#[test]
fn holm_adjusts_in_rank_order_and_stays_monotone() {
    // Ranks: 0.01 × 4 = 0.04; 0.03 × 3 = 0.09; 0.04 × 2 = 0.08 → 0.09; 0.5 × 1 = 0.5.
    let adjusted = holm(&[0.01, 0.04, 0.03, 0.5]);
    let expected = [0.04, 0.09, 0.09, 0.5];
    for (a, e) in adjusted.iter().zip(expected) {
        assert!(close(*a, e), "{adjusted:?}");
    }
    assert_eq!(holm(&[0.6, 0.7]), vec![1.0, 1.0]);
    assert!(holm(&[]).is_empty());
}

#[test]
fn zero_baseline_is_refused() {
    let zero = Summary::of(&[0.0, 0.0]).unwrap();
    let one = Summary::of(&[1.0, 1.0]).unwrap();
    assert_eq!(Delta::between(&zero, &one), Err(StatsError::ZeroBaseline));
}
