//! Statistics across repetitions of a cell: mean, sample standard deviation, a 95 % confidence
//! interval from Student's t, the coefficient of variation, and the percent difference of two
//! means with a Welch confidence interval.
//!
//! The t quantiles come from a table (two-sided 95 %, i.e. t₀.₉₇₅, df 1–30, 40, 60, 120).
//! Degrees of freedom between table entries, including Welch's fractional ones, use the entry
//! at or below them: a slightly wider interval, never a narrower one.

use serde::{Deserialize, Serialize};

/// t₀.₉₇₅ for df = 1..=30.
const T975_SMALL: [f64; 30] = [
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
    2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
    2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
    2.048407, 2.045230, 2.042272,
];
/// t₀.₉₇₅ for larger df, ascending.
const T975_LARGE: [(u32, f64); 3] = [(40, 2.021075), (60, 2.000298), (120, 1.979930)];

/// Two-sided 95 % critical value of Student's t with `df` degrees of freedom (df rounded down
/// to a table entry); `None` for df < 1.
pub fn t_critical_95(df: f64) -> Option<f64> {
    if df.is_nan() || df < 1.0 {
        return None;
    }
    let df = df.floor();
    if df <= 30.0 {
        // df is an integer in 1..=30 here.
        return Some(T975_SMALL[df as usize - 1]);
    }
    let mut t = T975_SMALL[29];
    for (entry, value) in T975_LARGE {
        if df >= f64::from(entry) {
            t = value;
        }
    }
    Some(t)
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
    /// Half width of the 95 % confidence interval of the mean, t₀.₉₇₅(n − 1) · s / √n; `None`
    /// for one sample.
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
        let t = t_critical_95((n - 1) as f64).expect("n ≥ 2 gives df ≥ 1");
        Ok(Summary {
            n,
            mean,
            std_dev: Some(std_dev),
            ci95_half_width: Some(t * std_dev / (n as f64).sqrt()),
            cv: (mean != 0.0).then(|| std_dev / mean),
        })
    }

    /// The 95 % confidence interval of the mean, `(low, high)`.
    pub fn ci95(&self) -> Option<(f64, f64)> {
        self.ci95_half_width.map(|h| (self.mean - h, self.mean + h))
    }
}

/// Where a candidate stands against a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Direction {
    /// The whole confidence interval of the difference lies above 0.
    Higher,
    /// The whole confidence interval lies below 0.
    Lower,
    /// The confidence interval contains 0.
    NoSignificantDifference,
    /// No interval: one side has a single repetition.
    Unknown,
}

/// Percent difference of a candidate mean from a baseline mean, with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    /// (candidate − baseline) / baseline × 100.
    pub percent: f64,
    /// Welch interval of the difference of means, divided by the baseline mean, in percent.
    /// The baseline mean is treated as exact in the division, which understates the width a
    /// little when the baseline itself varies a lot. `None` when a side has one sample.
    pub ci95_percent: Option<(f64, f64)>,
    /// Welch–Satterthwaite degrees of freedom; `None` without an interval or when both sides
    /// have zero variance (the interval is then the point itself).
    pub welch_df: Option<f64>,
}

impl Delta {
    /// Percent difference of `candidate` from `baseline`.
    ///
    /// # Errors
    /// [`StatsError::ZeroBaseline`] when the baseline mean is 0.
    pub fn between(baseline: &Summary, candidate: &Summary) -> Result<Delta, StatsError> {
        if baseline.mean == 0.0 {
            return Err(StatsError::ZeroBaseline);
        }
        let percent = (candidate.mean - baseline.mean) / baseline.mean * 100.0;
        let (Some(sb), Some(sc)) = (baseline.std_dev, candidate.std_dev) else {
            return Ok(Delta {
                percent,
                ci95_percent: None,
                welch_df: None,
            });
        };
        let vb = sb * sb / baseline.n as f64;
        let vc = sc * sc / candidate.n as f64;
        let se = (vb + vc).sqrt();
        if se == 0.0 {
            return Ok(Delta {
                percent,
                ci95_percent: Some((percent, percent)),
                welch_df: None,
            });
        }
        let df = (vb + vc) * (vb + vc)
            / (vb * vb / (baseline.n - 1) as f64 + vc * vc / (candidate.n - 1) as f64);
        let t = t_critical_95(df).expect("Welch df is at least min(n) − 1 ≥ 1");
        let diff = candidate.mean - baseline.mean;
        let to_percent = |d: f64| d / baseline.mean * 100.0;
        Ok(Delta {
            percent,
            ci95_percent: Some((to_percent(diff - t * se), to_percent(diff + t * se))),
            welch_df: Some(df),
        })
    }

    /// Whether the candidate is significantly higher, lower, or neither.
    pub fn direction(&self) -> Direction {
        match self.ci95_percent {
            None => Direction::Unknown,
            Some((low, _)) if low > 0.0 => Direction::Higher,
            Some((_, high)) if high < 0.0 => Direction::Lower,
            Some(_) => Direction::NoSignificantDifference,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn t_table_lookups_round_the_degrees_of_freedom_down() {
        assert_eq!(t_critical_95(1.0), Some(12.706205));
        assert_eq!(t_critical_95(4.0), Some(2.776445));
        assert_eq!(t_critical_95(8.7), Some(2.306004));
        assert_eq!(t_critical_95(30.0), Some(2.042272));
        assert_eq!(t_critical_95(39.0), Some(2.042272));
        assert_eq!(t_critical_95(45.0), Some(2.021075));
        assert_eq!(t_critical_95(1000.0), Some(1.979930));
        assert_eq!(t_critical_95(0.5), None);
    }

    #[test]
    fn summary_of_five_samples() {
        // 10, 12, 14, 16, 18: mean 14, squared deviations 16+4+0+4+16 = 40, s² = 40/4 = 10.
        // Independent Python: statistics.stdev = 3.1622776601683795;
        // 2.776445 * 3.1622776601683795 / math.sqrt(5) = 3.9264861741829677.
        let s = Summary::of(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.mean, 14.0);
        assert!(close(s.std_dev.unwrap(), 3.1622776601683795));
        assert!(close(s.ci95_half_width.unwrap(), 3.9264861741829677));
        assert!(close(s.cv.unwrap(), 0.22587697572631282));
        let (low, high) = s.ci95().unwrap();
        assert!(close(low, 14.0 - 3.9264861741829677));
        assert!(close(high, 14.0 + 3.9264861741829677));
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
    fn welch_delta_of_two_known_samples() {
        // Baseline 98..102 (mean 100, s² 2.5), candidate 108..112 (mean 110, s² 2.5), n = 5:
        // se = √(0.5 + 0.5) = 1, df = 1² / (0.25/4 + 0.25/4) = 8, t(8) = 2.306004.
        let baseline = Summary::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
        let candidate = Summary::of(&[110.0, 108.0, 112.0, 111.0, 109.0]).unwrap();
        let d = Delta::between(&baseline, &candidate).unwrap();
        assert_eq!(d.percent, 10.0);
        assert!(close(d.welch_df.unwrap(), 8.0));
        let (low, high) = d.ci95_percent.unwrap();
        assert!(close(low, 7.693996), "{low}");
        assert!(close(high, 12.306004), "{high}");
        assert_eq!(d.direction(), Direction::Higher);
        // And the other way round: −9.0909…%, significantly lower.
        let back = Delta::between(&candidate, &baseline).unwrap();
        assert!(close(back.percent, -100.0 / 11.0));
        assert_eq!(back.direction(), Direction::Lower);
    }

    #[test]
    fn overlapping_samples_are_no_significant_difference() {
        // Means 100 and 101, s² = 2.5 each: CI of the difference 1 ± 2.306 crosses 0.
        let baseline = Summary::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
        let candidate = Summary::of(&[101.0, 103.0, 99.0, 102.0, 100.0]).unwrap();
        let d = Delta::between(&baseline, &candidate).unwrap();
        assert_eq!(d.direction(), Direction::NoSignificantDifference);
    }

    #[test]
    fn single_repetitions_give_a_delta_without_interval() {
        let d = Delta::between(
            &Summary::of(&[200.0]).unwrap(),
            &Summary::of(&[150.0]).unwrap(),
        )
        .unwrap();
        assert_eq!(d.percent, -25.0);
        assert_eq!(d.ci95_percent, None);
        assert_eq!(d.direction(), Direction::Unknown);
    }

    #[test]
    fn zero_variance_on_both_sides_gives_a_point_interval() {
        let d = Delta::between(
            &Summary::of(&[50.0, 50.0]).unwrap(),
            &Summary::of(&[75.0, 75.0]).unwrap(),
        )
        .unwrap();
        assert_eq!(d.ci95_percent, Some((50.0, 50.0)));
        assert_eq!(d.direction(), Direction::Higher);
    }

    #[test]
    fn zero_baseline_is_refused() {
        let zero = Summary::of(&[0.0, 0.0]).unwrap();
        let one = Summary::of(&[1.0, 1.0]).unwrap();
        assert_eq!(Delta::between(&zero, &one), Err(StatsError::ZeroBaseline));
    }
}
