//! `mongobench.zipfian.mode=exact` (specs/ycsb.md §10): a true Zipfian over the key range with a
//! chosen θ, its ranks scattered over the keys by a seeded bijective permutation (no two ranks share
//! a key, unlike YCSB's FNV folding). Off by default; every worker and client pod builds the same
//! permutation from the run seed, so they share one hot set.

use super::zipfian::Zipfian;
use crate::workload::ycsb::rng::Rng;
use crate::workload::ycsb::rng::mix64;

/// A keyed bijection of `[0, n)`: a 4-round balanced Feistel network over the smallest even bit
/// width covering `n`, with cycle walking back into range (fewer than 4 steps on average).
#[derive(Debug, Clone, PartialEq)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    round_keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `[0, n)` for `key`.
    pub fn new(n: u64, key: u64) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut round_keys = [0; 4];
        for (i, k) in round_keys.iter_mut().enumerate() {
            *k = mix64(key ^ mix64(i as u64 + 1));
        }
        Permutation {
            n,
            half_bits,
            round_keys,
        }
    }

    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for k in self.round_keys {
            let f = mix64(right ^ k) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }

    /// The image of `x < n`.
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = self.encrypt(x);
        while y >= self.n {
            y = self.encrypt(y);
        }
        y
    }
}

/// True Zipfian(θ) over `[min, max]` with permuted ranks.
#[derive(Debug, Clone)]
pub struct ExactZipfian {
    min: u64,
    itemcount: u64,
    zipfian: Zipfian,
    permutation: Permutation,
}

impl ExactZipfian {
    /// Chooser over `[min, max]` (inclusive) with exponent `theta` ∈ (0, 1) and permutation key.
    pub fn new(min: u64, max: u64, theta: f64, permutation_key: u64) -> ExactZipfian {
        let itemcount = max - min + 1;
        ExactZipfian {
            min,
            itemcount,
            zipfian: Zipfian::new(0, itemcount, theta),
            permutation: Permutation::new(itemcount, permutation_key),
        }
    }

    /// The key that rank `rank` lands on.
    pub fn key_of_rank(&self, rank: u64) -> u64 {
        self.min + self.permutation.apply(rank)
    }

    /// Draws one key number.
    pub fn sample(&mut self, rng: &mut Rng) -> u64 {
        let rank = self
            .zipfian
            .sample(rng, self.itemcount)
            .min(self.itemcount - 1);
        self.key_of_rank(rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection_of_the_range() {
        for n in [1u64, 2, 3, 7, 1000, 1001, 4096, 5000] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n, "n {n}: {x} -> {y}");
                assert!(!seen[y as usize], "n {n}: {y} hit twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn different_keys_give_different_permutations() {
        let a: Vec<u64> = (0..100)
            .map(|x| Permutation::new(100, 1).apply(x))
            .collect();
        let b: Vec<u64> = (0..100)
            .map(|x| Permutation::new(100, 2).apply(x))
            .collect();
        assert_ne!(a, b);
    }

    #[test]
    fn hottest_key_gets_one_over_zeta_of_the_itemcount() {
        // A true Zipfian(0.99) over 1001 keys: P(rank 0) = 1/ζ(1001) = 1/7.730023676840303
        // (independent Python sum), far above the folded 3.86 % of the ycsb mode.
        let mut z = ExactZipfian::new(0, 1000, 0.99, 7);
        let hottest = z.key_of_rank(0);
        let mut rng = Rng::new(2);
        let draws = 1_000_000u32;
        let hits = (0..draws).filter(|_| z.sample(&mut rng) == hottest).count();
        let p = 1.0 / 7.730_023_676_840_303;
        let sigma = (p * (1.0 - p) / f64::from(draws)).sqrt();
        assert!((hits as f64 / f64::from(draws) - p).abs() < 5.0 * sigma);
    }
}
