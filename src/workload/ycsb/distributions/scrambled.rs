//! `requestdistribution=zipfian`: YCSB's scrambled Zipfian (specs/ycsb.md §4.5). Ranks are drawn
//! from a Zipfian over 10^10 + 1 ranks with the precomputed ζ(10^10), then folded onto the key range
//! with `FNV64(rank) mod itemcount`. The result is much flatter than a Zipfian over `itemcount`; that
//! is what YCSB does, so it is reproduced as is.

use super::zipfian::{ZIPFIAN_CONSTANT, Zipfian};
use crate::workload::ycsb::keys::fnv64_unsigned;
use crate::workload::ycsb::rng::Rng;

/// Upper end of the inner rank range `[0, ITEM_COUNT]` (YCSB's `ITEM_COUNT`).
pub const ITEM_COUNT: u64 = 10_000_000_000;
/// YCSB's precomputed ζ(10^10, 0.99), used although the inner range has 10^10 + 1 ranks.
pub const ZETAN: f64 = 26.469_028_201_783_02;

/// Scrambled Zipfian over the inclusive key range `[min, max]`.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    min: u64,
    itemcount: u64,
    inner: Zipfian,
}

impl ScrambledZipfian {
    /// Chooser over `[min, max]` (inclusive), `itemcount = max − min + 1`.
    pub fn new(min: u64, max: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            min,
            itemcount: max - min + 1,
            inner: Zipfian::with_zetan(0, ITEM_COUNT + 1, ZIPFIAN_CONSTANT, ZETAN),
        }
    }

    /// The key range for a workload: `[insertstart, insertstart + insertcount + expectednewkeys]`.
    pub fn for_workload(insertstart: u64, insertcount: u64, expected_new_keys: u64) -> Self {
        ScrambledZipfian::new(insertstart, insertstart + insertcount + expected_new_keys)
    }

    /// The key of inner rank `rank`.
    pub fn fold(&self, rank: u64) -> u64 {
        self.min + fnv64_unsigned(rank) % self.itemcount
    }

    /// Draws one key number.
    pub fn sample(&mut self, rng: &mut Rng) -> u64 {
        let rank = self.inner.sample(rng, ITEM_COUNT + 1);
        self.fold(rank)
    }

    /// Number of keys in the range.
    pub fn itemcount(&self) -> u64 {
        self.itemcount
    }

    /// The inner rank sampler.
    pub fn inner(&self) -> &Zipfian {
        &self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ycsb::keys::key_name;

    // Hottest keys of the §4.5 table, re-derived with an independent Python FNV (run once).
    #[test]
    fn hottest_keys_match_spec_table() {
        let cases: [(u64, &[u64]); 5] = [
            (1000, &[144, 610, 213]),
            (1100, &[903, 403, 802, 302, 660]),
            (1_000_000, &[801_320, 216_074, 971_811]),
            (1_100_000, &[316_089, 7687, 932_893]),
            (10_000_000, &[9_253_993, 5_325_028, 7_111_922]),
        ];
        for (max, hottest) in cases {
            let z = ScrambledZipfian::new(0, max);
            for (rank, &key) in hottest.iter().enumerate() {
                assert_eq!(z.fold(rank as u64), key, "max {max} rank {rank}");
            }
        }
        let a = ScrambledZipfian::new(0, 1000);
        let names: Vec<String> = (0..3).map(|r| key_name(a.fold(r), true, 1)).collect();
        assert_eq!(
            names,
            [
                "user1573987489603120213",
                "user5817347222824138717",
                "user4153387984724034032"
            ]
        );
    }

    #[test]
    fn expected_new_keys_extend_the_inclusive_range() {
        // E: recordcount 1000, operationcount 1000, insertproportion 0.05 → 100 new keys.
        let z = ScrambledZipfian::for_workload(0, 1000, 100);
        assert_eq!(z.itemcount(), 1101);
        assert_eq!(z.inner().items(), ITEM_COUNT + 1);
    }

    #[test]
    fn inner_eta_copies_both_quirks() {
        let z = ScrambledZipfian::new(0, 1000);
        assert!(((z.inner().eta() - 0.212_200_033_809_674_06) / 0.212_2).abs() < 1e-15);
        assert_eq!(z.inner().zetan(), ZETAN);
    }
}
