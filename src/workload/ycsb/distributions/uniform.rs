//! `requestdistribution=uniform` (specs/ycsb.md §4.3) and the other uniform choices (field, scan
//! length, field length): every integer of an inclusive range equally likely.

use crate::workload::ycsb::rng::Rng;

/// Uniform integers in `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uniform {
    lo: u64,
    hi: u64,
}

impl Uniform {
    /// The inclusive range `[lo, hi]`; `None` when `lo > hi`.
    pub fn new(lo: u64, hi: u64) -> Option<Uniform> {
        (lo <= hi).then_some(Uniform { lo, hi })
    }

    /// Draws one value.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        rng.range(self.lo, self.hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_lengths_of_workload_e_average_fifty_and_a_half() {
        let u = Uniform::new(1, 100).expect("valid range");
        let mut rng = Rng::new(4);
        let draws = 1_000_000u32;
        let mut sum = 0u64;
        for _ in 0..draws {
            let v = u.sample(&mut rng);
            assert!((1..=100).contains(&v));
            sum += v;
        }
        // Uniform 1..100: mean 50.5, standard deviation sqrt((100² − 1)/12) = 28.866.
        let mean = sum as f64 / f64::from(draws);
        assert!(
            (mean - 50.5).abs() < 5.0 * 28.866 / f64::from(draws).sqrt(),
            "{mean}"
        );
        assert_eq!(Uniform::new(3, 2), None);
    }
}
