//! Statistics across repetitions of a cell: mean, sample standard deviation, a 95 % confidence
//! interval from Student's t, the coefficient of variation, and the percent difference of two
//! targets: of two independent means with Welch's test, or of repetitions paired by the slot
//! they ran in with a paired t-test on the log ratios; each with its 95 % interval, p-value and
//! minimum detectable effect. Holm–Bonferroni adjusts the p-values of one benchmark's
//! comparisons together.
//!
//! Student's t distribution is computed (regularized incomplete beta), not tabulated, so
//! Welch's fractional degrees of freedom get their exact quantiles. The rules built on these
//! functions (how many repetitions a verdict needs, the significance level) are in
//! docs/results.md.

use serde::{Deserialize, Serialize};

/// Significance level of every test: a difference is significant when its (Holm-adjusted)
/// p-value is below it.
pub const ALPHA: f64 = 0.05;
/// Valid repetitions (or slot pairs) each side needs before a comparison gets a verdict.
pub const MIN_REPETITIONS: usize = 3;
/// Power at which the minimum detectable effect is stated.
pub const POWER: f64 = 0.8;
/// Measurement resolution as a fraction of the mean: a group whose repetitions vary less than
/// this is taken to vary this much, so identical repetitions never give a point interval.
pub const RESOLUTION: f64 = 1e-3;

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        let odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        for step in [even, odd] {
            d = 1.0 + step * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + step / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1].
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast below the mean of the distribution; use symmetry above it.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` > 0 degrees of freedom (fractional allowed).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile of Student's t with `df` > 0 degrees of freedom, for p in (0, 1).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while t_cdf(high, df) < p {
        low = high;
        high *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if t_cdf(mid, df) < p {
            low = mid;
        } else {
            high = mid;
        }
        if high - low <= 1e-13 * high.max(1.0) {
            break;
        }
    }
    0.5 * (low + high)
}

/// Two-sided 95 % critical value of Student's t with `df` degrees of freedom; `None` for
/// df < 1 (or NaN).
pub fn t_critical_95(df: f64) -> Option<f64> {
    (df >= 1.0).then(|| t_quantile(0.975, df))
}

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

/// Why statistics could not be computed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StatsError {
    /// No sample at all.
    #[error("no samples: a statistic needs at least one repetition")]
    Empty,
    /// A sample is NaN or infinite.
    #[error("sample {index} is {value}, expected a finite number")]
    NotFinite {
        /// Position of the sample.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A percent difference against a zero baseline.
    #[error("the baseline mean is 0: a percent difference against it is undefined")]
    ZeroBaseline,
}

/// Summary of one figure (ops/s, p99, CPU per op) over the repetitions of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); `None` for one sample.
    pub std_dev: Option<f64>,
    /// Half width of the 95 % confidence interval of the mean, t₀.₉₇₅(n − 1) · s / √n, with s
    /// at least [`RESOLUTION`] of the mean; `None` for one sample.
    pub ci95_half_width: Option<f64>,
    /// Coefficient of variation s / mean (a fraction, not a percentage); `None` for one sample
    /// or a zero mean.
    pub cv: Option<f64>,
}

impl Summary {
    /// Summary of `samples`.
    ///
    /// # Errors
    /// [`StatsError::Empty`] for no samples, [`StatsError::NotFinite`] for NaN or infinity.
    pub fn of(samples: &[f64]) -> Result<Summary, StatsError> {
        if samples.is_empty() {
            return Err(StatsError::Empty);
        }
        if let Some((index, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NotFinite { index, value });
        }
        let n = samples.len();
        let mean = samples.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Ok(Summary {
                n,
                mean,
                std_dev: None,
                ci95_half_width: None,
                cv: None,
            });
        }
        let variance =
            samples.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
        let std_dev = variance.sqrt();
        let t = t_quantile(0.975, (n - 1) as f64);
        Ok(Summary {
            n,
            mean,
            std_dev: Some(std_dev),
            ci95_half_width: Some(t * floored(std_dev, mean) / (n as f64).sqrt()),
            cv: (mean != 0.0).then(|| std_dev / mean),
        })
    }

    /// The 95 % confidence interval of the mean, `(low, high)`.
    pub fn ci95(&self) -> Option<(f64, f64)> {
        self.ci95_half_width.map(|h| (self.mean - h, self.mean + h))
    }
}

/// A standard deviation no smaller than the measurement resolution of `mean`.
fn floored(std_dev: f64, mean: f64) -> f64 {
    std_dev.max(RESOLUTION * mean.abs())
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

/// Two-sided p-value of a t statistic.
fn two_sided_p(statistic: f64, df: f64) -> f64 {
    (2.0 * (1.0 - t_cdf(statistic, df))).clamp(0.0, 1.0)
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

#[cfg(test)]
mod tests {
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
        let d = Delta::paired(&pairs).unwrap();
        assert!(close(d.percent, 3.089490899555648), "{}", d.percent);
        let (low, high) = d.ci95_percent.unwrap();
        assert!(close(low, 2.380697634633557), "{low}");
        assert!(close(high, 3.803191221217983), "{high}");
        assert!((d.p_value.unwrap() - 2.554377292692005e-4).abs() < 1e-12);
        assert!(close(d.mde_percent.unwrap(), 0.928028373422778));
        assert!(close(d.ratio_cv.unwrap(), 0.005561426691598339));
        assert_eq!((d.df, d.pairs), (Some(4.0), Some(5)));
        // The same samples as independent groups: the drift is all Welch sees.
        let base = Summary::of(&pairs.map(|p| p.0)).unwrap();
        let cand = Summary::of(&pairs.map(|p| p.1)).unwrap();
        let welch = Delta::between(&base, &cand).unwrap();
        assert!(welch.mde_percent.unwrap() > 15.0, "{welch:?}");
        assert!(welch.p_value.unwrap() > 0.5, "{welch:?}");
    }

    #[test]
    fn paired_test_of_equal_servers_finds_no_difference_and_swaps_symmetrically() {
        let pairs = [(100.0, 101.0), (102.0, 100.0), (98.0, 99.0), (101.0, 100.0)];
        let d = Delta::paired(&pairs).unwrap();
        assert!(close(d.percent, -0.24096560645776673), "{}", d.percent);
        assert!(close(d.p_value.unwrap(), 0.7679780036380697));
        let (low, high) = d.ci95_percent.unwrap();
        assert!(close(low, -2.5851454437105404), "{low}");
        assert!(close(high, 2.1596243043347375), "{high}");
        // Swapping the sides inverts every ratio: the same test, the interval mirrored.
        let swapped = Delta::paired(&pairs.map(|(b, c)| (c, b))).unwrap();
        assert!(close(swapped.p_value.unwrap(), d.p_value.unwrap()));
        assert!(close(
            (1.0 + swapped.percent / 100.0) * (1.0 + d.percent / 100.0),
            1.0
        ));
    }

    #[test]
    fn pairs_needed_for_a_goal() {
        // sd 2 % of log ratios, goal 3 %: n = 6 gives (2.5706 + 0.9195) · 0.02 / √6 = 0.02850
        // ≤ ln 1.03 = 0.02956, n = 5 gives (2.7764 + 0.9410) · 0.02 / √5 = 0.03325.
        assert_eq!(pairs_for_mde(0.02, 3.0, 100), Some(6));
        // The paired test of the drifting slots above (sd of log ratios 0.5556 %) reaches 1 %
        // at 5 pairs: exactly the MDE it reported, 0.928 %.
        assert_eq!(pairs_for_mde(0.005556462555974376, 1.0, 100), Some(5));
        assert_eq!(pairs_for_mde(0.005556462555974376, 0.9, 100), Some(6));
        // Never fewer than a verdict needs; none when the limit is too small.
        assert_eq!(pairs_for_mde(0.0, 50.0, 100), Some(MIN_REPETITIONS));
        assert_eq!(pairs_for_mde(0.5, 1.0, 30), None);
    }

    #[test]
    fn paired_edge_cases() {
        assert!(matches!(Delta::paired(&[]), Err(StatsError::Empty)));
        assert!(matches!(
            Delta::paired(&[(0.0, 1.0)]),
            Err(StatsError::ZeroBaseline)
        ));
        assert!(matches!(
            Delta::paired(&[(1.0, 2.0), (1.0, -1.0)]),
            Err(StatsError::NotFinite { index: 3, .. })
        ));
        let one = Delta::paired(&[(200.0, 150.0)]).unwrap();
        assert_eq!(
            (one.percent, one.pairs, one.p_value),
            (-25.0, Some(1), None)
        );
        // Identical ratios in every slot still give an interval, at the resolution.
        let same = Delta::paired(&[(100.0, 110.0), (200.0, 220.0), (50.0, 55.0)]).unwrap();
        let (low, high) = same.ci95_percent.unwrap();
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
        let (low, high) = d.ci95_percent.unwrap();
        assert!(close(low, 7.604708027292601), "{low}");
        assert!(close(high, 12.453801735231536), "{high}");
        assert!(close(d.ci95_margin_percent().unwrap(), 2.453801735231536));
        // p = 2 · (1 − F₈(10)); MDE = t₀.₉₇₅(8) + t₀.₈(8) = 3.194893652971186 (se = 1 = 1 %).
        assert!((d.p_value.unwrap() - 8.48818152762849e-6).abs() < 1e-15);
        assert!(close(d.mde_percent.unwrap(), 3.194893652971186));
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
        let (low, high) = d.ci95_percent.unwrap();
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
            (d.ci95_percent, d.p_value, d.mde_percent),
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
        let (low, high) = d.ci95_percent.unwrap();
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
        assert_eq!(d.ci95_percent, None);
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
            let (low, high) = d.ci95_percent.unwrap();
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
        let (low, high) = d.ci95_percent.unwrap();
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
}
