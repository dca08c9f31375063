//! Operation choice (specs/ycsb.md §4.9): one uniform double per operation against the normalised
//! weights in the order READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE, as YCSB's
//! `DiscreteGenerator` walks them.

use crate::workload::ycsb::rng::Rng;

/// A choice among values with positive weights (non-positive weights must be dropped by the caller).
#[derive(Debug, Clone, PartialEq)]
pub struct Discrete<T: Copy> {
    values: Vec<(f64, T)>,
    sum: f64,
}

impl<T: Copy> Discrete<T> {
    /// Values in walk order with their (positive) weights; `None` when there is none.
    pub fn new(values: Vec<(f64, T)>) -> Option<Discrete<T>> {
        if values.is_empty() {
            return None;
        }
        let sum = values.iter().map(|(w, _)| w).sum();
        Some(Discrete { values, sum })
    }

    /// The value for uniform draw `u` ∈ [0, 1): walk the values subtracting each normalised weight.
    pub fn pick(&self, mut u: f64) -> T {
        for &(weight, value) in &self.values {
            let p = weight / self.sum;
            if u < p {
                return value;
            }
            u -= p;
        }
        // Rounding can leave u just above the last share; YCSB would throw, the last value is meant.
        self.values[self.values.len() - 1].1
    }

    /// Draws one value.
    pub fn sample(&self, rng: &mut Rng) -> T {
        self.pick(rng.next_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_normalised_weights_in_order() {
        let d = Discrete::new(vec![(0.95, 'r'), (0.05, 'u'), (0.05, 'i')]).expect("non-empty");
        // Normalised: r 0.904762, u 0.047619, i 0.047619.
        assert_eq!(d.pick(0.0), 'r');
        assert_eq!(d.pick(0.9047), 'r');
        assert_eq!(d.pick(0.9048), 'u');
        assert_eq!(d.pick(0.9523), 'u');
        assert_eq!(d.pick(0.9524), 'i');
        assert_eq!(d.pick(0.999_999_999_999), 'i');
    }

    #[test]
    fn empty_is_refused() {
        assert_eq!(Discrete::<char>::new(vec![]), None);
    }
}
