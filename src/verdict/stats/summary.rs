//! One figure over the repetitions of a cell: mean, sample standard deviation, the 95 %
//! confidence interval of the mean and the coefficient of variation.

use serde::{Deserialize, Serialize};

use super::student_t::t_quantile;

/// Measurement resolution as a fraction of the mean: a group whose repetitions vary less than
/// this is taken to vary this much, so identical repetitions never give a point interval.
pub const RESOLUTION: f64 = 1e-3;

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
pub(super) fn floored(std_dev: f64, mean: f64) -> f64 {
    std_dev.max(RESOLUTION * mean.abs())
}
