//! Zipfian ranks (§4) as YCSB draws them: Gray et al.'s formula with θ = 0.99 over ζ(n, θ).
//! A file of its own because both the checked model (a zipfian `int` keeps its ranks) and the
//! generators (a `ref` computes them per document) need it.

use std::sync::OnceLock;

/// YCSB's zipfian constant θ.
const THETA: f64 = 0.99;
/// Terms of ζ summed one by one; above it the Euler–Maclaurin tail is added (as YCSB's faster ζ),
/// which makes a rank O(1) even when its range changes with every document.
const ZETA_HEAD: usize = 1000;
/// `2^-53`: turns the top 53 bits of a draw into a double in [0, 1).
const UNIT: f64 = 1.0 / 9_007_199_254_740_992.0;

/// ζ(k, θ) for k = 0 ..= [`ZETA_HEAD`], summed in order.
fn zeta_head() -> &'static [f64] {
    static HEAD: OnceLock<Vec<f64>> = OnceLock::new();
    HEAD.get_or_init(|| {
        let mut sums = Vec::with_capacity(ZETA_HEAD + 1);
        let mut sum = 0.0;
        sums.push(sum);
        for k in 1..=ZETA_HEAD {
            sum += 1.0 / (k as f64).powf(THETA);
            sums.push(sum);
        }
        sums
    })
}

/// ζ(n, θ) = Σ_{k=1..n} k^−θ: the exact head, then the Euler–Maclaurin tail (integral plus the
/// B2 and B4 corrections, within 1e-12 relative of the sum).
fn zeta(n: u64) -> f64 {
    let head = zeta_head();
    if n <= ZETA_HEAD as u64 {
        return head[n as usize];
    }
    let m = ZETA_HEAD as f64;
    let x = n as f64;
    let f = |x: f64| x.powf(-THETA);
    let d1 = |x: f64| -THETA * x.powf(-THETA - 1.0);
    let d3 = |x: f64| -THETA * (THETA + 1.0) * (THETA + 2.0) * x.powf(-THETA - 3.0);
    let integral = (x.powf(1.0 - THETA) - m.powf(1.0 - THETA)) / (1.0 - THETA);
    head[ZETA_HEAD] + integral + (f(x) - f(m)) / 2.0 + (d1(x) - d1(m)) / 12.0
        - (d3(x) - d3(m)) / 720.0
}

/// Zipfian ranks over `n` items with θ = 0.99 (Gray et al., as YCSB draws them): one draw each,
/// rank 0 the most popular.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Zipf {
    /// Items ranked; at least 1.
    pub(super) n: u64,
    zetan: f64,
    eta: f64,
}

impl Zipf {
    pub(super) fn new(n: u64) -> Zipf {
        let n = n.max(1);
        let zetan = zeta(n);
        let zeta2 = zeta_head()[2];
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - THETA)) / (1.0 - zeta2 / zetan);
        Zipf { n, zetan, eta }
    }

    /// The rank in [0, n − 1] for one raw draw.
    pub(super) fn rank(&self, draw: u64) -> u64 {
        if self.n == 1 {
            return 0;
        }
        let u = (draw >> 11) as f64 * UNIT;
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < zeta_head()[2] {
            return 1;
        }
        let alpha = 1.0 / (1.0 - THETA);
        // `as u64` saturates and maps NaN to 0; the clamp keeps rounding inside the range.
        ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(alpha)) as u64).min(self.n - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Stream;

    #[test]
    fn zeta_matches_sequential_sums_and_the_tail_is_continuous() {
        // Sequential sums of the ycsb module's reference values.
        assert!((zeta(10) - 2.956_107_516_510_363_6).abs() < 1e-14);
        assert!((zeta(100) - 5.294_568_831_377_164).abs() < 1e-13);
        let exact: f64 = (1..=1100u64).map(|k| 1.0 / (k as f64).powf(THETA)).sum();
        assert!(((zeta(1100) - exact) / exact).abs() < 1e-12);
        assert!((zeta(1100) - 7.831_080_373_249_152_5).abs() < 1e-11);
    }

    #[test]
    fn zipf_ranks_stay_in_range_and_rank_zero_has_share_one_over_zeta() {
        for n in [1u64, 2, 3, 10, 999, 5000, u64::MAX] {
            let z = Zipf::new(n);
            assert_eq!(z.rank(0), 0);
            assert!(z.rank(u64::MAX) < n, "n = {n}");
        }
        let z = Zipf::new(999);
        let mut s = Stream::new(11);
        let draws = 200_000;
        let zeros = (0..draws).filter(|_| z.rank(s.next_u64()) == 0).count();
        let p = 1.0 / zeta(999);
        let share = zeros as f64 / draws as f64;
        assert!((share - p).abs() < 0.005, "share {share}, expected {p}");
    }
}
