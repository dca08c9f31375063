//! The two-period crossover model of simultaneous slots whose targets traded sides
//! (docs/results.md, "Simultaneous slots"): the difference of two targets with the effect of
//! the side each ran on removed, and that effect.

use super::delta::{ALPHA, Delta, Method};
use super::student_t::t_quantile;
use super::summary::{RESOLUTION, StatsError, Summary};

/// The side's effect as the crossover model estimates it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SideEffect {
    /// How much faster the first side makes the target on it than the second does, in percent.
    pub percent: f64,
    /// Its 95 % interval.
    pub ci95_percent: Option<(f64, f64)>,
}

/// Two-period crossover on the per-slot log ratios d = ln(candidate ÷ baseline): d = δ + γ·s
/// plus noise, with s = +1 in the slots where the candidate held the first side and −1 where
/// the baseline did. δ̂ = (m₊ + m₋)/2 is the difference of the targets with the side's effect
/// removed, γ̂ = (m₊ − m₋)/2 the side's; both have variance s²/4·(1/n₊ + 1/n₋) with s² the
/// residual variance on n − 2 degrees of freedom. Needs both arrangements and three slots.
///
/// Under a precision goal, whose runner added slots after a `pilot` of them as their spread
/// asked, s² is the pilot's alone (on pilot − 2 degrees of freedom), as in Stein's two-stage
/// test ([`Method::TwoStage`]): the slots the pilot asked for then leave the test at its level.
/// A pilot without both arrangements, or as long as the run, leaves s² to every slot.
///
/// # Errors
/// [`StatsError::Empty`] with fewer than three slots or one arrangement only, or a figure that
/// is not a finite positive number.
pub fn crossover(
    pairs: &[(f64, f64)],
    candidate_first: &[bool],
    pilot: Option<usize>,
) -> Result<(Delta, SideEffect), StatsError> {
    let mut logs = Vec::with_capacity(pairs.len());
    for (i, &(b, c)) in pairs.iter().enumerate() {
        for (j, v) in [b, c].into_iter().enumerate() {
            if !v.is_finite() || v <= 0.0 {
                return Err(StatsError::NotFinite {
                    index: 2 * i + j,
                    value: v,
                });
            }
        }
        logs.push((c / b).ln());
    }
    let n = pairs.len();
    let groups = arrangements(&logs, candidate_first);
    if n < 3 || groups.iter().any(Vec::is_empty) {
        return Err(StatsError::Empty);
    }
    let m = groups.each_ref().map(|g| mean(g));
    let pilot = pilot.filter(|&p| {
        let first = &candidate_first[..p.min(n)];
        (3..n).contains(&p) && first.contains(&true) && first.contains(&false)
    });
    let spread_of = pilot.map_or_else(
        || groups.clone(),
        |p| arrangements(&logs[..p], &candidate_first[..p]),
    );
    let residual: f64 = spread_of
        .iter()
        .map(|g| {
            let m = mean(g);
            g.iter().map(|d| (d - m) * (d - m)).sum::<f64>()
        })
        .sum();
    let df = (pilot.unwrap_or(n) - 2) as f64;
    let sd = (residual / df).sqrt().max(RESOLUTION);
    let se = sd / 2.0 * (1.0 / groups[0].len() as f64 + 1.0 / groups[1].len() as f64).sqrt();
    let (delta, gamma) = ((m[0] + m[1]) / 2.0, (m[0] - m[1]) / 2.0);
    let t = t_quantile(1.0 - ALPHA / 2.0, df);
    let to_percent = |log: f64| (log.exp() - 1.0) * 100.0;
    let interval = |x: f64| Some((to_percent(x - t * se), to_percent(x + t * se)));
    let ratios: Vec<f64> = pairs.iter().map(|&(b, c)| c / b).collect();
    let cv = Summary::of(&ratios).ok().and_then(|s| s.cv);
    Ok((
        Delta::on_log_ratio(Method::Crossover { pilot }, delta, se, df, n, cv),
        SideEffect {
            percent: to_percent(gamma),
            ci95_percent: interval(gamma),
        },
    ))
}

/// The log ratios of the slots where the candidate held the first side, and of the others.
fn arrangements(logs: &[f64], candidate_first: &[bool]) -> [Vec<f64>; 2] {
    let mut groups: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (&d, &first) in logs.iter().zip(candidate_first) {
        groups[usize::from(!first)].push(d);
    }
    groups
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_side_effect_is_estimated_and_removed() {
        // The candidate is 2 % faster; the first side adds 4 % to whoever holds it.
        let ratio = |first: bool| 1.02 * if first { 1.04 / 1.0 } else { 1.0 / 1.04 };
        let sides = [true, false, false, true, true, false];
        let noise = [0.001, -0.002, 0.0015, -0.001, 0.0005, 0.0];
        let pairs: Vec<(f64, f64)> = sides
            .iter()
            .zip(noise)
            .map(|(&first, e)| (1000.0, 1000.0 * ratio(first) * f64::exp(e)))
            .collect();
        let (delta, side) = crossover(&pairs, &sides, None).unwrap();
        // δ = mean of the two arrangements' mean logs: ln 1.02 plus the noise's share.
        let logs: Vec<f64> = pairs.iter().map(|&(b, c)| (c / b).ln()).collect();
        let m_first = (logs[0] + logs[3] + logs[4]) / 3.0;
        let m_second = (logs[1] + logs[2] + logs[5]) / 3.0;
        assert!((delta.percent - ((m_first + m_second) / 2.0).exp_m1() * 100.0).abs() < 1e-9);
        assert!((delta.percent - 2.0).abs() < 0.1, "{delta:?}");
        assert!((side.percent - 4.0).abs() < 0.15, "{side:?}");
        assert_eq!((delta.pairs, delta.df), (Some(6), Some(4.0)));
        let (lo, hi) = delta.interval_percent(ALPHA).unwrap();
        assert!(lo < 2.0 && 2.0 < hi && hi - lo < 1.0, "{lo} {hi}");
        // The plain paired test sees the side's 4 % as noise: a far wider interval.
        let plain = Delta::paired(&pairs, None).unwrap();
        let (plo, phi) = plain.interval_percent(ALPHA).unwrap();
        assert!(phi - plo > 4.0 * (hi - lo), "{plo} {phi}");
    }

    #[test]
    fn under_a_precision_goal_the_residual_spread_is_the_pilots() {
        // Four pilot slots, their logs 0.03, 0.05 (candidate first) and 0.00, 0.02: residual
        // sum of squares 4 × 0.01², s² = 0.0002 on 2 degrees of freedom. Four more slots,
        // far noisier, move the means (0.04 and 0.01 over all) but not the spread.
        let sides = [true, false, true, false, true, false, true, false];
        let logs: [f64; 8] = [0.03, 0.00, 0.05, 0.02, 0.10, 0.06, -0.02, -0.04];
        let pairs: Vec<(f64, f64)> = logs.iter().map(|&d| (1000.0, 1000.0 * d.exp())).collect();
        let (delta, side) = crossover(&pairs, &sides, Some(4)).unwrap();
        assert_eq!(delta.method, Method::Crossover { pilot: Some(4) });
        assert_eq!((delta.pairs, delta.df), (Some(8), Some(2.0)));
        assert!(
            (delta.percent - 0.025f64.exp_m1() * 100.0).abs() < 1e-9,
            "{delta:?}"
        );
        assert!(
            (side.percent - 0.015f64.exp_m1() * 100.0).abs() < 1e-9,
            "{side:?}"
        );
        // se = s/2 · √(1/4 + 1/4) = 0.005.
        let t = t_quantile(1.0 - ALPHA / 2.0, 2.0);
        let (lo, hi) = delta.interval_percent(ALPHA).unwrap();
        assert!(
            (lo - (0.025 - t * 0.005f64).exp_m1() * 100.0).abs() < 1e-9,
            "{lo}"
        );
        assert!(
            (hi - (0.025 + t * 0.005f64).exp_m1() * 100.0).abs() < 1e-9,
            "{hi}"
        );
        // Without a pilot every slot's residual counts, on 6 degrees of freedom.
        let (all, _) = crossover(&pairs, &sides, None).unwrap();
        assert_eq!(
            (all.method, all.df),
            (Method::Crossover { pilot: None }, Some(6.0))
        );
        // A pilot of one arrangement only cannot estimate the spread: every slot's is taken.
        let skewed = [true, true, true, false, true, false, true, false];
        let (fallback, _) = crossover(&pairs, &skewed, Some(3)).unwrap();
        assert_eq!(fallback.method, Method::Crossover { pilot: None });
        assert_eq!(fallback.df, Some(6.0));
    }

    #[test]
    fn one_arrangement_or_two_slots_are_not_enough() {
        let pairs = [(1.0, 1.1), (1.0, 1.2), (1.0, 1.1)];
        assert_eq!(
            crossover(&pairs, &[true, true, true], None),
            Err(StatsError::Empty)
        );
        assert_eq!(
            crossover(&pairs[..2], &[true, false], None),
            Err(StatsError::Empty)
        );
        assert!(matches!(
            crossover(
                &[(1.0, 1.1), (0.0, 1.0), (1.0, 1.0)],
                &[true, false, true],
                None
            ),
            Err(StatsError::NotFinite { index: 2, .. })
        ));
    }
}
