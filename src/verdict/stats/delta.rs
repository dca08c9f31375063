//! The percent difference of a candidate from a baseline with its test, 95 % interval and
//! minimum detectable effect: Welch's test of two independent groups with Fieller's interval
//! of the ratio, or Student's paired test of slot-paired repetitions. Holm–Bonferroni adjusts
//! the p-values of one comparison together.

use serde::{Deserialize, Serialize};

use super::student_t::{t_quantile, two_sided_p};
use super::summary::{RESOLUTION, StatsError, Summary, floored};

/// Significance level of every test: a difference is significant when its (Holm-adjusted)
/// p-value is below it.
pub const ALPHA: f64 = 0.05;
/// Valid repetitions (or slot pairs) each side needs before a comparison gets a verdict.
pub const MIN_REPETITIONS: usize = 3;
/// Power at which the minimum detectable effect is stated.
pub const POWER: f64 = 0.8;

/// Holm–Bonferroni: the adjusted p-values of `p_values`, in the same order. The i-th smallest
/// of m values becomes max over j ≤ i of min(1, (m − j + 1) · p₍ⱼ₎).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Percent difference of a candidate from a baseline: of the means with Welch's test
/// ([`Delta::between`]), or of slot-paired repetitions with a paired t-test on the log ratios
/// ([`Delta::paired`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    /// (candidate − baseline) / baseline × 100; paired, the geometric mean of the per-slot
    /// ratios less 1, × 100.
    pub percent: f64,
    /// 95 % interval of the ratio of the means (Fieller's, with Welch's standard errors and
    /// degrees of freedom), less 1, in percent. It counts the baseline's own variation, holds 0
    /// exactly when Welch's test finds no difference at 5 %, and never reaches −100 % while
    /// the candidate's mean is clearly above 0. `None` when a side has one sample, or when the
    /// baseline's mean is not clearly away from 0 (the interval is then unbounded). Paired:
    /// exp(mean log ratio ± t · se) less 1.
    pub ci95_percent: Option<(f64, f64)>,
    /// Degrees of freedom of the test: Welch–Satterthwaite's, or pairs − 1; `None` without an
    /// interval.
    #[serde(alias = "welchDf")]
    pub df: Option<f64>,
    /// Two-sided p-value of the test, before any multiple-comparison adjustment.
    pub p_value: Option<f64>,
    /// The smallest difference (percent of the baseline) this pair of groups detects with
    /// [`POWER`] at level [`ALPHA`]: (t₁₋α/₂ + t_power) · se / baseline mean × 100; paired,
    /// exp((t₁₋α/₂ + t_power) · se of the mean log ratio) less 1, × 100.
    pub mde_percent: Option<f64>,
    /// Paired only: how many slots held a valid repetition of both targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// Paired only: coefficient of variation of the per-slot ratios candidate ÷ baseline (a
    /// fraction): the noise the paired test sees, after what the slot shared cancelled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_cv: Option<f64>,
}

impl Delta {
    /// Percent difference of `candidate` from `baseline`. Standard deviations below the
    /// [`RESOLUTION`] of their mean count as that resolution.
    ///
    /// # Errors
    /// [`StatsError::ZeroBaseline`] when the baseline mean is 0.
    pub fn between(baseline: &Summary, candidate: &Summary) -> Result<Delta, StatsError> {
        if baseline.mean == 0.0 {
            return Err(StatsError::ZeroBaseline);
        }
        let percent = (candidate.mean - baseline.mean) / baseline.mean * 100.0;
        let (Some(sb), Some(sc)) = (baseline.std_dev, candidate.std_dev) else {
            return Ok(Delta::point(percent));
        };
        let (sb, sc) = (floored(sb, baseline.mean), floored(sc, candidate.mean));
        let vb = sb * sb / baseline.n as f64;
        let vc = sc * sc / candidate.n as f64;
        let se = (vb + vc).sqrt();
        let df = (vb + vc) * (vb + vc)
            / (vb * vb / (baseline.n - 1) as f64 + vc * vc / (candidate.n - 1) as f64);
        let t = t_quantile(1.0 - ALPHA / 2.0, df);
        let diff = candidate.mean - baseline.mean;
        let to_percent = |d: f64| d / baseline.mean * 100.0;
        let statistic = diff.abs() / se;
        let ratio = fieller(baseline.mean, vb, candidate.mean, vc, t);
        Ok(Delta {
            percent,
            ci95_percent: ratio.map(|(low, high)| ((low - 1.0) * 100.0, (high - 1.0) * 100.0)),
            df: Some(df),
            p_value: Some(two_sided_p(statistic, df)),
            mde_percent: Some(to_percent((t + t_quantile(POWER, df)) * se).abs()),
            pairs: None,
            ratio_cv: None,
        })
    }

    /// A difference without a test: one repetition on a side.
    fn point(percent: f64) -> Delta {
        Delta {
            percent,
            ci95_percent: None,
            df: None,
            p_value: None,
            mde_percent: None,
            pairs: None,
            ratio_cv: None,
        }
    }

    /// Percent difference of a candidate from a baseline over repetitions paired by slot:
    /// `pairs` holds (baseline, candidate) of each slot in which both ran. The test is
    /// Student's paired t-test on d = ln(candidate ÷ baseline), so what a slot shares (the
    /// machine's state at that time) cancels out; a slot's ratio is scale-free, and the log
    /// makes the estimate and its interval symmetric in which side is the baseline. The
    /// standard deviation of d is taken to be at least [`RESOLUTION`].
    ///
    /// # Errors
    /// [`StatsError::Empty`] for no pairs, [`StatsError::NotFinite`] for a value that is not a
    /// finite positive number (its index in the flattened pairs), [`StatsError::ZeroBaseline`]
    /// for a baseline of 0.
    pub fn paired(pairs: &[(f64, f64)]) -> Result<Delta, StatsError> {
        if pairs.is_empty() {
            return Err(StatsError::Empty);
        }
        for (i, &(b, c)) in pairs.iter().enumerate() {
            if b == 0.0 {
                return Err(StatsError::ZeroBaseline);
            }
            for (j, v) in [b, c].into_iter().enumerate() {
                if !v.is_finite() || v <= 0.0 {
                    return Err(StatsError::NotFinite {
                        index: 2 * i + j,
                        value: v,
                    });
                }
            }
        }
        let logs: Vec<f64> = pairs.iter().map(|&(b, c)| (c / b).ln()).collect();
        let n = logs.len();
        let mean = logs.iter().sum::<f64>() / n as f64;
        let percent = (mean.exp() - 1.0) * 100.0;
        if n < 2 {
            let mut d = Delta::point(percent);
            d.pairs = Some(n);
            return Ok(d);
        }
        let sd = (logs.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / (n - 1) as f64)
            .sqrt()
            .max(RESOLUTION);
        let se = sd / (n as f64).sqrt();
        let df = (n - 1) as f64;
        let t = t_quantile(1.0 - ALPHA / 2.0, df);
        let ratios = Summary::of(&pairs.iter().map(|&(b, c)| c / b).collect::<Vec<_>>())?;
        let to_percent = |log: f64| (log.exp() - 1.0) * 100.0;
        Ok(Delta {
            percent,
            ci95_percent: Some((to_percent(mean - t * se), to_percent(mean + t * se))),
            df: Some(df),
            p_value: Some(two_sided_p(mean.abs() / se, df)),
            mde_percent: Some(to_percent((t + t_quantile(POWER, df)) * se)),
            pairs: Some(n),
            ratio_cv: ratios.cv,
        })
    }

    /// How far the 95 % interval reaches from `percent`, in percentage points: the larger of
    /// its two sides (the interval of a ratio is not symmetric), so `percent ± margin` holds it.
    pub fn ci95_margin_percent(&self) -> Option<f64> {
        self.ci95_percent
            .map(|(low, high)| (self.percent - low).max(high - self.percent))
    }
}

/// The fewest slot pairs (at least [`MIN_REPETITIONS`], at most `max`) whose paired
/// comparison has an MDE of at most `goal_percent`, when the standard deviation of the
/// per-slot log ratios is `sd_log`: the smallest n with exp((t₀.₉₇₅(n−1) + t₀.₈(n−1)) ·
/// sd_log / √n) − 1 ≤ goal. `None` when even `max` pairs do not reach it.
pub fn pairs_for_mde(sd_log: f64, goal_percent: f64, max: usize) -> Option<usize> {
    let goal = (1.0 + goal_percent / 100.0).ln();
    let sd = sd_log.max(RESOLUTION);
    (MIN_REPETITIONS..=max).find(|&n| {
        let df = (n - 1) as f64;
        let t = t_quantile(1.0 - ALPHA / 2.0, df) + t_quantile(POWER, df);
        t * sd / (n as f64).sqrt() <= goal
    })
}

/// Fieller's interval for the ratio `mc / mb` of two independent means whose squared standard
/// errors are `vc` and `vb`, at critical value `t`: every θ with (mc − θ·mb)² ≤ t²·(vc + θ²·vb).
/// `None` when `mb` is within `t` standard errors of 0: the set is then unbounded.
fn fieller(mb: f64, vb: f64, mc: f64, vc: f64, t: f64) -> Option<(f64, f64)> {
    let t2 = t * t;
    let a = mb * mb - t2 * vb;
    if a <= 0.0 {
        return None;
    }
    // The discriminant over 4 is t²·(vb·mc² + vc·a), never negative once a > 0.
    let half = (t2 * (vb * mc * mc + vc * a)).sqrt();
    let (one, other) = ((mc * mb - half) / a, (mc * mb + half) / a);
    Some((one.min(other), one.max(other)))
}
