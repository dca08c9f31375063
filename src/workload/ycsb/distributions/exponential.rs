//! `requestdistribution=exponential` (specs/ycsb.md §4.8): the distance back from the newest
//! acknowledged key is exponentially distributed.

use crate::workload::ycsb::rng::Rng;

/// YCSB's `ExponentialGenerator(percentile, recordcount × frac)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Exponential {
    gamma: f64,
}

impl Exponential {
    /// `gamma = −ln(1 − percentile/100) / (recordcount × frac)`.
    pub fn new(percentile: f64, recordcount: u64, frac: f64) -> Exponential {
        Exponential {
            gamma: -(1.0 - percentile / 100.0).ln() / (recordcount as f64 * frac),
        }
    }

    /// The rate parameter.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// One offset `−ln(U) / gamma` (not truncated; may be infinite when U = 0).
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        -rng.next_f64().ln() / self.gamma
    }

    /// A key number `last_acked − trunc(offset)`, redrawn while it would be negative.
    pub fn key(&self, rng: &mut Rng, last_acked: u64) -> u64 {
        loop {
            let offset = self.sample(rng);
            if offset < last_acked as f64 + 1.0 {
                let offset = offset as u64;
                if offset <= last_acked {
                    return last_acked - offset;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_gamma_mean_and_percentile() {
        // §4.8, recordcount 1000 with the defaults: gamma = 0.0034950, mean offset 286.1,
        // 95 % of draws within 857 keys (= recordcount × frac) of the newest.
        let e = Exponential::new(95.0, 1000, 0.857_142_857_1);
        assert!((e.gamma() - 0.003_495_0).abs() < 5e-8, "{}", e.gamma());
        let mut rng = Rng::new(8);
        let draws = 1_000_000u32;
        let (mut sum, mut within) = (0.0, 0u32);
        for _ in 0..draws {
            let x = e.sample(&mut rng);
            sum += x;
            if x < 857.142_857_1 {
                within += 1;
            }
        }
        let mean = sum / f64::from(draws);
        // The standard deviation of an exponential equals its mean (286.1).
        assert!(
            (mean - 286.1).abs() < 5.0 * 286.1 / f64::from(draws).sqrt() + 0.05,
            "{mean}"
        );
        let share = f64::from(within) / f64::from(draws);
        let sigma = (0.95f64 * 0.05 / f64::from(draws)).sqrt();
        assert!((share - 0.95).abs() < 5.0 * sigma, "{share}");
    }

    #[test]
    fn keys_never_exceed_or_underflow_the_acknowledged_range() {
        let e = Exponential::new(95.0, 1000, 0.857_142_857_1);
        let mut rng = Rng::new(1);
        for _ in 0..100_000 {
            assert!(e.key(&mut rng, 10) <= 10);
        }
    }
}
