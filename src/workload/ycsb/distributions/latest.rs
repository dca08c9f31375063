//! `requestdistribution=latest` (specs/ycsb.md §4.6): a Zipfian over the distance from the newest
//! acknowledged key, so the most recent insert is the most popular record.

use super::zipfian::{ZIPFIAN_CONSTANT, Zipfian};
use crate::workload::ycsb::rng::Rng;

/// YCSB's `SkewedLatestGenerator` over an acknowledged-key counter.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// Built when the highest acknowledged key is `last_acked` (normally `recordcount − 1`):
    /// a Zipfian over `last_acked` items with ζ(`last_acked`) computed once, or supplied by a
    /// cache shared between workers (`zetan`).
    pub fn new(last_acked: u64, zetan: Option<f64>) -> SkewedLatest {
        let zipfian = match zetan {
            Some(z) => Zipfian::with_zetan(0, last_acked, ZIPFIAN_CONSTANT, z),
            None => Zipfian::new(0, last_acked, ZIPFIAN_CONSTANT),
        };
        SkewedLatest { zipfian }
    }

    /// Draws a key number in `[1, last_acked]` (key 0 is never produced when `last_acked > 0`),
    /// growing ζ incrementally when `last_acked` has grown (with YCSB's `eta` bug).
    pub fn sample(&mut self, rng: &mut Rng, last_acked: u64) -> u64 {
        last_acked - self.zipfian.sample(rng, last_acked).min(last_acked)
    }

    /// The underlying rank sampler.
    pub fn zipfian(&self) -> &Zipfian {
        &self.zipfian
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_key_has_one_over_zeta_share_and_key_zero_never_appears() {
        // §4.6 reference: recordcount 1000 → key 999 with P = 12.94 %, key 998 with 6.52 %
        // (0.5^0.99 / ζ(999) from an independent Python sum).
        let mut latest = SkewedLatest::new(999, None);
        let mut rng = Rng::new(5);
        let draws = 1_000_000u32;
        let (mut k999, mut k998) = (0u32, 0u32);
        for _ in 0..draws {
            match latest.sample(&mut rng, 999) {
                0 => panic!("key 0 produced"),
                999 => k999 += 1,
                998 => k998 += 1,
                _ => {}
            }
        }
        for (count, p) in [
            (k999, 0.129_401_566_830_591_76),
            (k998, 0.065_150_812_953_049_89),
        ] {
            let sigma = (p * (1.0 - p) / f64::from(draws)).sqrt();
            let share = f64::from(count) / f64::from(draws);
            assert!(
                (share - p).abs() < 5.0 * sigma,
                "share {share} expected {p}"
            );
        }
    }

    #[test]
    fn never_returns_a_key_beyond_the_acknowledged_one() {
        let mut latest = SkewedLatest::new(99, None);
        let mut rng = Rng::new(9);
        for last in 99..2_000 {
            for _ in 0..50 {
                assert!(latest.sample(&mut rng, last) <= last);
            }
        }
        assert!((latest.zipfian().zetan() - super::super::zipfian::zeta(1999, 0.99)).abs() < 1e-12);
    }
}
