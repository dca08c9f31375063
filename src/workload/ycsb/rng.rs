//! The seedable randomness behind every YCSB draw.
//!
//! YCSB itself uses an unseedable per-thread `ThreadLocalRandom`, so its runs can only be compared
//! statistically (specs/ycsb.md §4.9). mongobench replaces it with one reproducible stream per worker
//! (§10 "Unseedable RNG"): SplitMix64 to derive stream keys and xoshiro256** to draw. This copy is
//! private to the YCSB generators on purpose, so that a change to another workload's randomness can
//! never change YCSB traffic.
//!
//! Stream keys: `key(s, tag, i) = mix64(mix64(s XOR mix64(tag)) + i)` (wrapping). A worker's stream
//! is `Rng::new(key(key(seed, phase_tag, client_index), TAG_WORKER, worker_index))`. A load-phase
//! record's values come from a stream of their own, `Rng::new(key(key(seed, TAG_LOAD, 0),
//! TAG_RECORD, keynum))`, the same in every client pod (see `record`).

/// Stream tag of the load phase.
pub(crate) const TAG_LOAD: u64 = 0x59_4c; // "YL"
/// Stream tag of the run (transaction) phase.
pub(crate) const TAG_RUN: u64 = 0x59_52; // "YR"
/// Second-level tag that selects one worker inside a client.
pub(crate) const TAG_WORKER: u64 = 0x59_57; // "YW"
/// Second-level tag that selects one load-phase record (by key number) under `key(seed, TAG_LOAD, 0)`.
pub(crate) const TAG_RECORD: u64 = 0x59_44; // "YD"
/// Tag of the key permutation of `mongobench.zipfian.mode=exact` (shared by every worker and pod).
pub(crate) const TAG_PERMUTATION: u64 = 0x59_50; // "YP"

/// The SplitMix64 output finalizer: a bijective 64-bit mixing function.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Derives the key of sub-stream `i` of `tag` under seed `s`.
pub(crate) fn key(s: u64, tag: u64, i: u64) -> u64 {
    mix64(mix64(s ^ mix64(tag)).wrapping_add(i))
}

/// A xoshiro256** stream seeded from the first four outputs of a SplitMix64 sequence.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Starts the stream for key `k`.
    pub fn new(k: u64) -> Rng {
        let mut state = k;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(state)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// One 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// One 32-bit output (the high half of a 64-bit output), the "fresh random int" of §5.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A uniform double in `[0, 1)` with 53 random bits (as Java's `nextDouble`).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `[lo, hi]` (inclusive; `lo <= hi`), from the high half of a 128-bit
    /// product: no modulo bias, no rejection, one draw.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi, "empty range [{lo}, {hi}]");
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + ((u128::from(self.next_u64()) * u128::from(span + 1)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from an independent Python implementation of SplitMix64 seeding and
    // xoshiro256** (run once): seed key 0 and 42.
    #[test]
    fn stream_matches_reference_outputs() {
        let mut r = Rng::new(0);
        assert_eq!(
            [r.next_u64(), r.next_u64(), r.next_u64()],
            [0x99ec5f36cb75f2b4, 0xbf6e1f784956452a, 0x1a5f849d4933e6e0]
        );
        let mut r = Rng::new(42);
        assert_eq!(r.next_u64(), 0x15780b2e0c2ec716);
    }

    #[test]
    fn key_derivation_matches_reference() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692161d100b05e5);
        assert_eq!(key(7, 2, 3), 0x19324f03abd71a5a);
    }

    #[test]
    fn range_stays_inclusive_and_covers_both_ends() {
        let mut r = Rng::new(1);
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let v = r.range(10, 13);
            assert!((10..=13).contains(&v));
            seen[(v - 10) as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
        assert_eq!(Rng::new(5).range(9, 9), 9);
    }

    #[test]
    fn doubles_lie_in_unit_interval() {
        let mut r = Rng::new(3);
        for _ in 0..10_000 {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
