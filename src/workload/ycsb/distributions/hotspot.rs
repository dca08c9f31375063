//! `requestdistribution=hotspot` (specs/ycsb.md §4.7): a hot set of the lowest key numbers gets
//! `hotspotopnfraction` of the draws.

use crate::workload::ycsb::rng::Rng;

/// YCSB's `HotspotIntegerGenerator` over `[lb, ub]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hotspot {
    lb: u64,
    hot: u64,
    cold: u64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    /// `hot = trunc((ub − lb + 1) × data_fraction)`; fractions must already be in `[0, 1]`
    /// (the properties layer turns out-of-range values into 0 with a warning, as YCSB does).
    /// Returns `None` when a set that would be drawn from is empty (YCSB divides by zero there).
    pub fn new(lb: u64, ub: u64, data_fraction: f64, opn_fraction: f64) -> Option<Hotspot> {
        let (lb, ub) = if lb > ub { (ub, lb) } else { (lb, ub) };
        let interval = ub - lb + 1;
        let hot = (interval as f64 * data_fraction) as u64;
        let cold = interval - hot;
        let hot_needed = opn_fraction > 0.0;
        let cold_needed = opn_fraction < 1.0;
        if (hot_needed && hot == 0) || (cold_needed && cold == 0) {
            return None;
        }
        Some(Hotspot {
            lb,
            hot,
            cold,
            hot_opn_fraction: opn_fraction,
        })
    }

    /// Size of the hot set.
    pub fn hot_len(&self) -> u64 {
        self.hot
    }

    /// Draws one key number: one double picks hot or cold, one integer picks inside the set.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        if rng.next_f64() < self.hot_opn_fraction {
            self.lb + rng.range(0, self.hot - 1)
        } else {
            self.lb + self.hot + rng.range(0, self.cold - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_put_eighty_percent_on_the_lowest_fifth() {
        let h = Hotspot::new(0, 999, 0.2, 0.8).expect("valid hotspot");
        assert_eq!(h.hot_len(), 200);
        let mut rng = Rng::new(3);
        let draws = 1_000_000;
        let mut hot = 0u32;
        for _ in 0..draws {
            let k = h.sample(&mut rng);
            assert!(k < 1000);
            if k < 200 {
                hot += 1;
            }
        }
        let sigma = (0.8f64 * 0.2 / f64::from(draws)).sqrt();
        assert!((f64::from(hot) / f64::from(draws) - 0.8).abs() < 5.0 * sigma);
    }

    #[test]
    fn empty_needed_set_is_refused() {
        assert_eq!(Hotspot::new(0, 999, 0.0, 0.8), None);
        assert_eq!(Hotspot::new(0, 999, 1.0, 0.5), None);
        assert!(Hotspot::new(0, 999, 0.0, 0.0).is_some());
    }
}
