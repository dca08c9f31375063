//! The randomness every flights draw comes from (specs/flights.md §1): SplitMix64 mixing for keys,
//! xoshiro256** streams, and exact integer helpers for ranges, choices, events and shuffles.
//!
//! Every helper is defined bit for bit so that an independent implementation of the spec produces
//! the same draws: ranges use the high half of a 128-bit product (no modulo bias, no rejection
//! loop, one draw each), events compare one draw against `floor(p * 2^64)`.

/// Tag of the document-content key (`key(datasetSeed, 1, seq)`).
pub const TAG_DOCUMENT: u64 = 1;
/// Tag of a worker's measured stream (`key(seed, 2, w)`).
pub const TAG_MEASURED: u64 = 2;
/// Tag of a worker's warm-up stream (`key(seed, 3, w)`).
pub const TAG_WARMUP: u64 = 3;
/// Tag of a worker's think-time jitter stream (`key(seed, 4, w)`).
pub const TAG_JITTER: u64 = 4;

/// SplitMix64's increment (the golden-ratio constant), used to seed [`Stream`].
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output finalizer: a bijection on 64-bit words.
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `key(s, tag, i) = mix64(mix64(s XOR mix64(tag)) + i)`: the seed of stream `i` of kind `tag`.
pub fn key(s: u64, tag: u64, i: u64) -> u64 {
    mix64(mix64(s ^ mix64(tag)).wrapping_add(i))
}

/// Scales one raw 64-bit draw onto `[lo, hi]` (inclusive): `lo + floor(raw * (hi - lo + 1) / 2^64)`.
///
/// `hi < lo` is a caller bug; it panics in debug builds.
pub fn scale(raw: u64, lo: u64, hi: u64) -> u64 {
    debug_assert!(lo <= hi, "empty range [{lo}, {hi}]");
    let span = u128::from(hi - lo) + 1;
    lo + ((u128::from(raw) * span) >> 64) as u64
}

/// The threshold `floor(p * 2^64)` of the event `P(p)`, exact for every `f64` p in `[0, 1]`
/// (multiplying by a power of two is exact; the cast truncates toward zero).
pub fn threshold(p: f64) -> u128 {
    debug_assert!((0.0..=1.0).contains(&p), "probability {p} outside [0, 1]");
    (p * 18_446_744_073_709_551_616.0) as u128
}

/// A xoshiro256** generator seeded from one 64-bit key (`stream(k)` in the spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    s: [u64; 4],
}

impl Stream {
    /// `stream(k)`: the four state words are the first four outputs of SplitMix64 started at `k`
    /// (each output is `mix64` of the state after adding the golden gamma). The words are
    /// distinct outputs of a bijection, so the state is never all zero.
    pub fn new(k: u64) -> Self {
        let mut sm = k;
        let mut s = [0u64; 4];
        for word in &mut s {
            sm = sm.wrapping_add(GOLDEN_GAMMA);
            *word = mix64(sm);
        }
        Stream { s }
    }

    /// One 64-bit output (`next()`).
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// `U[lo, hi]`, inclusive; one draw.
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        scale(self.next_u64(), lo, hi)
    }

    /// `U[0, len - 1]`: an index into a non-empty list; one draw.
    pub fn index(&mut self, len: usize) -> usize {
        debug_assert!(len > 0, "index into an empty list");
        self.uniform(0, len as u64 - 1) as usize
    }

    /// `choice(L) = L[U[0, |L| - 1]]`; one draw.
    pub fn choice<'a, T>(&mut self, list: &'a [T]) -> &'a T {
        &list[self.index(list.len())]
    }

    /// `P(p)` for a threshold from [`threshold`]: `next() < floor(p * 2^64)`; one draw.
    pub fn event(&mut self, threshold: u128) -> bool {
        u128::from(self.next_u64()) < threshold
    }

    /// Partial shuffle of `k` out of `list` in place: for i = 0 … k-1, `j = U[i, |L| - 1]`, swap
    /// L\[i\] and L\[j\]. The result is `list[..k]`; the rest of `list` stays meaningful too (the
    /// flights spare seat is the entry then at position k). `k` draws.
    pub fn partial_shuffle<T>(&mut self, list: &mut [T], k: usize) {
        debug_assert!(k <= list.len(), "shuffle of {k} out of {}", list.len());
        let last = list.len() as u64 - 1;
        for i in 0..k {
            let j = self.uniform(i as u64, last) as usize;
            list.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Expected values come from src/workload/flights/testdata/reference.py (an independent
    //! Python implementation of the spec), and the two published vectors noted below.
    use super::*;

    #[test]
    fn mix64_matches_reference_values() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
        assert_eq!(mix64(0x0123_4567_89ab_cdef), 0xb2c0_58e4_ebb5_112c);
        // Published SplitMix64 vector: first output of the generator seeded with 0.
        assert_eq!(mix64(GOLDEN_GAMMA), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn key_matches_reference_values() {
        assert_eq!(key(1, TAG_DOCUMENT, 0), 0x98dc_caa3_1a8b_af69);
        assert_eq!(key(1, TAG_MEASURED, 0), 0x6495_0d26_293f_f4ff);
        assert_eq!(key(42, TAG_WARMUP, 7), 0xcddb_b961_9ae0_fbef);
    }

    #[test]
    fn stream_first_outputs_match_reference_values() {
        let mut s = Stream::new(0);
        let got: Vec<u64> = (0..4).map(|_| s.next_u64()).collect();
        assert_eq!(
            got,
            [
                0x99ec_5f36_cb75_f2b4,
                0xbf6e_1f78_4956_452a,
                0x1a5f_849d_4933_e6e0,
                0x6aa5_94f1_262d_2d2c
            ]
        );
        let mut s = Stream::new(key(1, TAG_MEASURED, 0));
        let got: Vec<u64> = (0..4).map(|_| s.next_u64()).collect();
        assert_eq!(
            got,
            [
                0x6fbd_0f4e_9de5_dbbd,
                0x06a7_f457_7ed6_36c2,
                0x9b82_76f0_b68b_f8c9,
                0xe98f_d2f4_22cd_1a45
            ]
        );
    }

    #[test]
    fn xoshiro_core_matches_published_vector() {
        // Reference xoshiro256** from state {1, 2, 3, 4}.
        let mut s = Stream { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..4).map(|_| s.next_u64()).collect();
        assert_eq!(got, [11520, 0, 1_509_978_240, 1_215_971_899_390_074_240]);
    }

    #[test]
    fn uniform_choice_event_and_shuffle_match_reference_values() {
        let mut s = Stream::new(12345);
        let got: Vec<u64> = (0..8).map(|_| s.uniform(0, 99)).collect();
        assert_eq!(got, [74, 13, 96, 4, 55, 1, 15, 29]);
        let mut s = Stream::new(12345);
        let t = threshold(0.9);
        let got: Vec<bool> = (0..8).map(|_| s.event(t)).collect();
        assert_eq!(got, [true, true, false, true, true, true, true, true]);
        let mut s = Stream::new(7);
        let mut list: Vec<u32> = (0..10).collect();
        s.partial_shuffle(&mut list, 3);
        assert_eq!(list[..3], [7, 3, 8]);
    }

    #[test]
    fn scale_edges() {
        // A one-value range always yields that value.
        assert_eq!(scale(0, 5, 5), 5);
        assert_eq!(scale(u64::MAX, 5, 5), 5);
        // The extreme draws map to the ends of the range.
        assert_eq!(scale(0, 30, 900), 30);
        assert_eq!(scale(u64::MAX, 30, 900), 900);
        // 2^63 is exactly half way: lo + floor(span / 2) = 0 + floor(100 / 2).
        assert_eq!(scale(1 << 63, 0, 99), 50);
        // Just below half way: floor((2^63 - 1) * 100 / 2^64) = 49.
        assert_eq!(scale((1 << 63) - 1, 0, 99), 49);
        // The full 64-bit range returns the draw itself (span 2^64 does not overflow).
        assert_eq!(scale(0xdead_beef, 0, u64::MAX), 0xdead_beef);
        assert_eq!(scale(u64::MAX, 0, u64::MAX), u64::MAX);
        // Ranges near the top of u64: seq = 2^63 + U[0, 2^32 - 1].
        assert_eq!(
            scale(u64::MAX, 1 << 63, (1 << 63) + 0xFFFF_FFFF),
            (1 << 63) + 0xFFFF_FFFF
        );
    }

    #[test]
    fn threshold_edges() {
        assert_eq!(threshold(0.0), 0);
        assert_eq!(threshold(1.0), 1u128 << 64);
        assert_eq!(threshold(0.5), 1u128 << 63);
        // 0.9 as a double is 8106479329266893 / 2^53, so floor(0.9 * 2^64) = 8106479329266893 * 2^11.
        assert_eq!(threshold(0.9), 8_106_479_329_266_893u128 << 11);
        // P(0) never fires even on the smallest draw; P(1) always fires even on the largest.
        let mut zero = Stream { s: [0, 0, 0, 0] }; // outputs 0 forever
        assert!(!zero.event(threshold(0.0)));
        assert!(u128::from(u64::MAX) < threshold(1.0));
        // P(0.5): 2^63 - 1 fires, 2^63 does not.
        assert!(u128::from((1u64 << 63) - 1) < threshold(0.5));
        assert!(u128::from(1u64 << 63) >= threshold(0.5));
    }
}
