//! The percent difference of a candidate from a baseline with its test: Welch's test of two
//! independent groups with Fieller's interval of the ratio, Student's paired test of
//! slot-paired repetitions, or Stein's two-stage test of pairs whose number a pilot's spread
//! decided. Intervals and minimum detectable effects are given at the level a verdict judges
//! the test at (`holm`), so they are computed on demand from the test's spread.

use serde::Serialize;

use super::chi_square::chi_square_quantile;
use super::student_t::{t_quantile, two_sided_p};
use super::summary::{RESOLUTION, StatsError, Summary, floored};

/// Significance level of a comparison's family of tests: a difference is significant when its
/// Holm-adjusted p-value is below it.
pub const ALPHA: f64 = 0.05;
/// Valid repetitions (or slot pairs) each side needs before a comparison gets a verdict.
pub const MIN_REPETITIONS: usize = 3;
/// Power at which the minimum detectable effect is stated.
pub const POWER: f64 = 0.8;
/// Confidence of the upper bound of the spread at which the cautious MDE is stated.
pub const SPREAD_CONFIDENCE: f64 = 0.8;

/// How a difference is tested; the design decides it before the data (docs/results.md,
/// "Verdicts").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "test")]
pub enum Method {
    /// Student's paired t-test on the per-slot log ratios, over every pair.
    Paired,
    /// Stein's two-stage test: the spread (and the degrees of freedom) of the first `pilot`
    /// pairs, the mean of every pair; exact at the level whatever number of pairs the pilot's
    /// spread asked for.
    TwoStage {
        /// Pairs of the pilot stage.
        pilot: usize,
    },
    /// Welch's t-test of two independent groups, Fieller's interval of the ratio of the means.
    Welch,
    /// The two-period crossover model of simultaneous slots whose targets traded sides: the
    /// per-slot log ratios with the side's effect removed (`crossover`); under a precision
    /// goal, the residual spread of the first `pilot` slots, as in Stein's test.
    Crossover {
        /// Slots of the pilot stage, whose spread the test takes.
        #[serde(skip_serializing_if = "Option::is_none")]
        pilot: Option<usize>,
    },
}

impl Method {
    /// The method in words, as the reports state it.
    pub fn text(self) -> String {
        match self {
            Method::Paired => "Student's paired t-test on the per-slot log ratios".to_owned(),
            Method::TwoStage { pilot } => format!(
                "Stein's two-stage paired t-test (the spread of the first {pilot} slots, \
                 {} degrees of freedom)",
                pilot - 1
            ),
            Method::Welch => {
                "Welch's t-test of independent groups with Fieller's interval".to_owned()
            }
            Method::Crossover { pilot } => {
                let mut text = "the two-period crossover model of the per-slot log ratios of \
                                simultaneous slots, the side's effect removed"
                    .to_owned();
                if let Some(pilot) = pilot {
                    text += &format!(
                        " (the residual spread of the first {pilot} slots, {} degrees of freedom)",
                        pilot - 2
                    );
                }
                text
            }
        }
    }
}

/// What an interval and an MDE are computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Spread {
    /// Mean and standard error of the log ratios.
    Log { mean: f64, se: f64 },
    /// Welch: the two means and their squared standard errors.
    Means { mb: f64, vb: f64, mc: f64, vc: f64 },
}

/// Percent difference of a candidate from a baseline and its test, before any
/// multiple-comparison adjustment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    /// (candidate − baseline) / baseline × 100; paired, the geometric mean of the per-slot
    /// ratios less 1, × 100.
    pub percent: f64,
    /// The test.
    pub method: Method,
    /// Degrees of freedom of the test: Welch–Satterthwaite's, pairs − 1, or the pilot's
    /// pairs − 1; `None` without a test.
    pub df: Option<f64>,
    /// Two-sided p-value of the test, before any multiple-comparison adjustment.
    pub p_value: Option<f64>,
    /// Paired only: how many slots held a valid repetition of both targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// Paired only: coefficient of variation of the per-slot ratios candidate ÷ baseline (a
    /// fraction): the noise the paired test sees, after what the slot shared cancelled out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_cv: Option<f64>,
    #[serde(skip)]
    spread: Option<Spread>,
}

impl Delta {
    /// Percent difference of `candidate` from `baseline` with Welch's test. Standard
    /// deviations below the [`RESOLUTION`] of their mean count as that resolution.
    ///
    /// # Errors
    /// [`StatsError::ZeroBaseline`] when the baseline mean is 0.
    pub fn between(baseline: &Summary, candidate: &Summary) -> Result<Delta, StatsError> {
        if baseline.mean == 0.0 {
            return Err(StatsError::ZeroBaseline);
        }
        let percent = (candidate.mean - baseline.mean) / baseline.mean * 100.0;
        let (Some(sb), Some(sc)) = (baseline.std_dev, candidate.std_dev) else {
            return Ok(Delta::point(percent, Method::Welch));
        };
        let (sb, sc) = (floored(sb, baseline.mean), floored(sc, candidate.mean));
        let vb = sb * sb / baseline.n as f64;
        let vc = sc * sc / candidate.n as f64;
        let se = (vb + vc).sqrt();
        let df = (vb + vc) * (vb + vc)
            / (vb * vb / (baseline.n - 1) as f64 + vc * vc / (candidate.n - 1) as f64);
        let statistic = (candidate.mean - baseline.mean).abs() / se;
        Ok(Delta {
            percent,
            method: Method::Welch,
            df: Some(df),
            p_value: Some(two_sided_p(statistic, df)),
            pairs: None,
            ratio_cv: None,
            spread: Some(Spread::Means {
                mb: baseline.mean,
                vb,
                mc: candidate.mean,
                vc,
            }),
        })
    }

    /// A test of a mean log ratio `mean` with standard error `se` on `df` degrees of freedom,
    /// over `pairs` slots whose ratios have coefficient of variation `ratio_cv`.
    pub(super) fn on_log_ratio(
        method: Method,
        mean: f64,
        se: f64,
        df: f64,
        pairs: usize,
        ratio_cv: Option<f64>,
    ) -> Delta {
        Delta {
            percent: log_percent(mean),
            method,
            df: Some(df),
            p_value: Some(two_sided_p(mean.abs() / se, df)),
            pairs: Some(pairs),
            ratio_cv,
            spread: Some(Spread::Log { mean, se }),
        }
    }

    /// A difference without a test: one repetition (or pair) on a side.
    fn point(percent: f64, method: Method) -> Delta {
        Delta {
            percent,
            method,
            df: None,
            p_value: None,
            pairs: None,
            ratio_cv: None,
            spread: None,
        }
    }

    /// Percent difference over repetitions paired by slot: `pairs` holds (baseline,
    /// candidate) of each slot in which both ran, in slot order. The test is on d =
    /// ln(candidate ÷ baseline), so what a slot shares (the machine's state at that time)
    /// cancels out, and the estimate and its interval are symmetric in which side is the
    /// baseline. With `pilot` set and more pairs than it, Stein's two-stage test: the standard
    /// deviation of the first `pilot` pairs, with their degrees of freedom, and the mean of
    /// every pair; else Student's paired t-test. The standard deviation of d is taken to be
    /// at least [`RESOLUTION`].
    ///
    /// # Errors
    /// [`StatsError::Empty`] for no pairs, [`StatsError::NotFinite`] for a value that is not a
    /// finite positive number (its index in the flattened pairs), [`StatsError::ZeroBaseline`]
    /// for a baseline of 0.
    pub fn paired(pairs: &[(f64, f64)], pilot: Option<usize>) -> Result<Delta, StatsError> {
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
        let (method, spread_of) = match pilot {
            Some(p) if p >= 2 && p < n => (Method::TwoStage { pilot: p }, &logs[..p]),
            _ => (Method::Paired, &logs[..]),
        };
        if n < 2 {
            let mut d = Delta::point(percent, method);
            d.pairs = Some(n);
            return Ok(d);
        }
        let sd = log_sd(spread_of).max(RESOLUTION);
        debug_assert_eq!(spread_of.len() == n, method == Method::Paired);
        let se = sd / (n as f64).sqrt();
        let df = (spread_of.len() - 1) as f64;
        let ratios = Summary::of(&pairs.iter().map(|&(b, c)| c / b).collect::<Vec<_>>())?;
        Ok(Delta {
            percent,
            method,
            df: Some(df),
            p_value: Some(two_sided_p(mean.abs() / se, df)),
            pairs: Some(n),
            ratio_cv: ratios.cv,
            spread: Some(Spread::Log { mean, se }),
        })
    }

    /// The interval of the difference at confidence 1 − `alpha` (two-sided), in percent:
    /// paired, exp(d̄ ± t₁₋α/₂ · se) − 1; Welch, Fieller's interval of the ratio less 1. It
    /// holds 0 exactly when the test's p-value is at least `alpha`. `None` without a test, or
    /// when the baseline's mean is not clearly away from 0 (Fieller's set is then unbounded).
    pub fn interval_percent(&self, alpha: f64) -> Option<(f64, f64)> {
        let t = t_quantile(1.0 - alpha / 2.0, self.df?);
        match self.spread? {
            Spread::Log { mean, se } => {
                Some((log_percent(mean - t * se), log_percent(mean + t * se)))
            }
            Spread::Means { mb, vb, mc, vc } => fieller(mb, vb, mc, vc, t)
                .map(|(low, high)| ((low - 1.0) * 100.0, (high - 1.0) * 100.0)),
        }
    }

    /// The smallest difference (percent of the baseline) this test detects with [`POWER`] at
    /// two-sided level `alpha`: (t₁₋α/₂ + t_power) · se, as a ratio less 1 when paired, as a
    /// share of the baseline's mean with Welch.
    pub fn mde_percent(&self, alpha: f64) -> Option<f64> {
        self.mde_with(alpha, 1.0)
    }

    /// [`Delta::mde_percent`] with the spread at its upper [`SPREAD_CONFIDENCE`] confidence
    /// bound, s · √(ν / χ²₁₋c(ν)): what the MDE could be, with that confidence, had the
    /// repetitions not happened to vary less than the machine does.
    pub fn mde_upper_percent(&self, alpha: f64) -> Option<f64> {
        let df = self.df?;
        self.mde_with(
            alpha,
            (df / chi_square_quantile(1.0 - SPREAD_CONFIDENCE, df)).sqrt(),
        )
    }

    fn mde_with(&self, alpha: f64, spread_factor: f64) -> Option<f64> {
        let df = self.df?;
        let k = (t_quantile(1.0 - alpha / 2.0, df) + t_quantile(POWER, df)) * spread_factor;
        Some(match self.spread? {
            Spread::Log { se, .. } => log_percent(k * se),
            Spread::Means { mb, vb, vc, .. } => (k * (vb + vc).sqrt() / mb * 100.0).abs(),
        })
    }
}

/// The standard deviation of the per-slot log ratios of `pairs` (at least two, every figure
/// positive), at least [`RESOLUTION`]: the spread the paired test takes.
pub fn log_ratio_sd(pairs: &[(f64, f64)]) -> f64 {
    let logs: Vec<f64> = pairs.iter().map(|&(b, c)| (c / b).ln()).collect();
    log_sd(&logs).max(RESOLUTION)
}

/// The MDE, percent, of a paired test of `n` pairs whose log ratios have standard deviation
/// `sd`, with `df` degrees of freedom, at two-sided level `alpha`: exp((t₁₋α/₂ + t_power) · sd
/// / √n) − 1, as [`Delta::mde_percent`] gives it.
pub fn paired_mde_percent(sd: f64, n: usize, df: f64, alpha: f64) -> f64 {
    let k = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(POWER, df);
    log_percent(k * sd / (n as f64).sqrt())
}

/// Sample standard deviation of `logs` (at least two).
fn log_sd(logs: &[f64]) -> f64 {
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    (logs.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// A log ratio as a percent change.
fn log_percent(log: f64) -> f64 {
    (log.exp() - 1.0) * 100.0
}

/// Stein's second stage: the pairs a paired comparison needs so that its MDE at two-sided
/// level `alpha` is at most `goal_percent`, when the first `pilot` pairs' log ratios have
/// standard deviation `pilot_sd_log`: the smallest n ≥ max(pilot, [`MIN_REPETITIONS`]) with
/// (t₁₋α/₂(pilot − 1) + t_power(pilot − 1)) · sd / √n ≤ ln(1 + goal). `None` when it is more
/// than `max`.
pub fn two_stage_pairs(
    pilot_sd_log: f64,
    pilot: usize,
    goal_percent: f64,
    alpha: f64,
    max: usize,
) -> Option<usize> {
    let df = (pilot.max(2) - 1) as f64;
    let k = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(POWER, df);
    let goal = (1.0 + goal_percent / 100.0).ln();
    let exact = (k * pilot_sd_log.max(RESOLUTION) / goal).powi(2);
    // The ceiling, less a rounding error's worth, so that an exact square stays itself.
    let n = ((exact - 1e-9).ceil().max(0.0) as usize)
        .max(pilot)
        .max(MIN_REPETITIONS);
    (n <= max).then_some(n)
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
