//! Document numbers (`seq`) and the identifiers derived from them (specs/flights.md §2, §3, §6).
//!
//! Seeded documents have `seq` in [0, N0); run-inserted documents sit in lanes at or above
//! `insertBase` (a multiple of 2^48), one lane per (phase, worker), so no two writers can ever
//! allocate the same `seq`, hence the same `_id`.

use mongodb::bson::oid::ObjectId;

/// The fixed epoch T0 = 2026-01-01T00:00:00Z in Unix seconds (0x6955B900).
pub const T0_UNIX_SECONDS: u32 = 0x6955_B900;
/// Seeded flight ids are 100000 + a permutation of [0, 900000).
const SEEDED_ID_BASE: u32 = 100_000;
/// How many seeded flight ids there are: seeded documents `seq` and `seq + 900000` share one.
pub const SEEDED_ID_RANGE: u64 = 900_000;
const SEEDED_ID_MULTIPLIER: u64 = 387_403;
const SEEDED_ID_OFFSET: u64 = 510_617;
/// Modular inverse of 387403 mod 900000 (387403 × 648067 = 251 063 100 001 ≡ 1 (mod 900000)).
const SEEDED_ID_INVERSE: u64 = 648_067;
/// Run-inserted flight ids are 1000000 + ((seq − insertBase) mod 10^9).
const INSERTED_ID_BASE: u64 = 1_000_000;
const INSERTED_ID_RANGE: u64 = 1_000_000_000;
/// Run lanes start at multiples of 2^48; phases are 2^40 apart inside a run.
pub const RUN_SPACING: u64 = 1 << 48;
/// Distance between the warm-up lane (phase 0) and the measured lane (phase 1).
pub const PHASE_SPACING: u64 = 1 << 40;
/// Planned `_id` misses use `seq = 2^63 + U[0, 2^32 − 1]`, never allocated.
pub const MISS_SEQ_BASE: u64 = 1 << 63;
/// Planned flight_id misses are drawn from [1, 99999], below every generated id.
pub const MISS_FLIGHT_ID_MAX: u64 = 99_999;

/// `_id` of document `seq`: T0 as 4 big-endian bytes, then `seq` as 8 big-endian bytes.
pub fn object_id(seq: u64) -> ObjectId {
    let mut bytes = [0u8; 12];
    bytes[..4].copy_from_slice(&T0_UNIX_SECONDS.to_be_bytes());
    bytes[4..].copy_from_slice(&seq.to_be_bytes());
    ObjectId::from_bytes(bytes)
}

/// The `seq` an `_id` was built from, or `None` if it is not a flights/v1 `_id` (wrong epoch).
pub fn seq_of_object_id(id: &ObjectId) -> Option<u64> {
    let bytes = id.bytes();
    if bytes[..4] != T0_UNIX_SECONDS.to_be_bytes() {
        return None;
    }
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&bytes[4..]);
    Some(u64::from_be_bytes(seq))
}

/// `flight_id` of seeded document `seq`: `100000 + ((seq mod 900000) × 387403 + 510617) mod
/// 900000`. Distinct for the first 900,000 documents, then repeating with period 900,000.
pub fn seeded_flight_id(seq: u64) -> i32 {
    let r = ((seq % SEEDED_ID_RANGE) * SEEDED_ID_MULTIPLIER + SEEDED_ID_OFFSET) % SEEDED_ID_RANGE;
    (SEEDED_ID_BASE as u64 + r) as i32
}

/// The smallest seeded `seq` whose flight_id is `flight_id` (all others are it plus multiples of
/// 900,000), or `None` if `flight_id` lies outside the seeded range 100000–999999.
pub fn first_seq_of_seeded_flight_id(flight_id: i64) -> Option<u64> {
    let r = u64::try_from(flight_id - i64::from(SEEDED_ID_BASE)).ok()?;
    if r >= SEEDED_ID_RANGE {
        return None;
    }
    let shifted = (r + SEEDED_ID_RANGE - SEEDED_ID_OFFSET) % SEEDED_ID_RANGE;
    Some(shifted * SEEDED_ID_INVERSE % SEEDED_ID_RANGE)
}

/// Every seeded `seq` below `documents` whose flight_id equals that of `seq`: `seq mod 900000`
/// plus multiples of 900,000.
pub fn seqs_sharing_flight_id(seq: u64, documents: u64) -> Vec<u64> {
    (seq % SEEDED_ID_RANGE..documents)
        .step_by(SEEDED_ID_RANGE as usize)
        .collect()
}

/// `flight_id` of a run-inserted document: `1000000 + ((seq − insertBase) mod 10^9)`, above the
/// seeded range so id-based operations keep their per-id work while the collection grows.
pub fn inserted_flight_id(seq: u64, insert_base: u64) -> i32 {
    (INSERTED_ID_BASE + seq.wrapping_sub(insert_base) % INSERTED_ID_RANGE) as i32
}

/// `insertBase` of a run: `(floor(maxSeq / 2^48) + 1) × 2^48`, with `maxSeq` decoded from the
/// collection's largest `_id`; `None` (an empty collection) gives 2^48 like a fresh dataset.
pub fn insert_base(max_seq: Option<u64>) -> u64 {
    match max_seq {
        None => RUN_SPACING,
        Some(m) => (m / RUN_SPACING + 1) * RUN_SPACING,
    }
}

/// Which lane of a run a worker inserts into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunPhase {
    /// Warm-up: phase number 0, worker streams `key(seed, 3, w)`; not measured.
    Warmup,
    /// Measured window: phase number 1, worker streams `key(seed, 2, w)`.
    Measured,
}

impl RunPhase {
    /// The spec's phase number (0 warm-up, 1 measured) used in insert allocation.
    pub fn number(self) -> u64 {
        match self {
            RunPhase::Warmup => 0,
            RunPhase::Measured => 1,
        }
    }
}

/// One worker's insert allocator: its k-th document (k = 0, 1, …) gets
/// `seq = insertBase + phase × 2^40 + k × W + w`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertLane {
    insert_base: u64,
    lane_base: u64,
    workers: u64,
    next: u64,
}

impl InsertLane {
    /// The lane of worker `worker` (0-based) of `workers` in `phase` for a run at `insert_base`.
    pub fn new(insert_base: u64, phase: RunPhase, workers: u32, worker: u32) -> Self {
        debug_assert!(worker < workers, "worker {worker} of {workers}");
        InsertLane {
            insert_base,
            lane_base: insert_base + phase.number() * PHASE_SPACING + u64::from(worker),
            workers: u64::from(workers),
            next: 0,
        }
    }

    /// The next document number of this lane, and its flight_id.
    pub fn allocate(&mut self) -> (u64, i32) {
        let seq = self.lane_base + self.next * self.workers;
        self.next += 1;
        (seq, inserted_flight_id(seq, self.insert_base))
    }

    /// How many documents this lane has allocated.
    pub fn allocated(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seqs_sharing_a_flight_id_repeat_every_900000() {
        assert_eq!(seqs_sharing_flight_id(5, 1000), [5]);
        assert_eq!(
            seqs_sharing_flight_id(900_007, 2_000_000),
            [7, 900_007, 1_800_007]
        );
        assert_eq!(seqs_sharing_flight_id(7, 900_007), [7]);
        for s in seqs_sharing_flight_id(123, 3_000_000) {
            assert_eq!(seeded_flight_id(s), seeded_flight_id(123));
        }
    }

    use super::*;
    use std::collections::HashSet;

    #[test]
    fn object_id_layout_and_round_trip() {
        assert_eq!(object_id(0).to_hex(), "6955b9000000000000000000");
        assert_eq!(
            object_id(0x0102_0304_0506_0708).to_hex(),
            "6955b9000102030405060708"
        );
        assert_eq!(seq_of_object_id(&object_id(123_456)), Some(123_456));
        assert_eq!(seq_of_object_id(&object_id(u64::MAX)), Some(u64::MAX));
        let foreign = ObjectId::parse_str("65a1b2c3d4e5f60718293a4b").unwrap();
        assert_eq!(seq_of_object_id(&foreign), None);
    }

    #[test]
    fn seeded_flight_ids_by_hand() {
        // seq 0: 100000 + 510617 = 610617.
        assert_eq!(seeded_flight_id(0), 610_617);
        // seq 1: (387403 + 510617) mod 900000 = 898020.
        assert_eq!(seeded_flight_id(1), 998_020);
        // seq 2: (774806 + 510617) mod 900000 = 385423.
        assert_eq!(seeded_flight_id(2), 485_423);
        // Period 900000.
        assert_eq!(seeded_flight_id(900_000), 610_617);
        assert_eq!(seeded_flight_id(900_001), 998_020);
    }

    #[test]
    fn seeded_flight_ids_are_a_permutation_of_the_plgm_range() {
        let ids: HashSet<i32> = (0..900_000).map(seeded_flight_id).collect();
        assert_eq!(ids.len(), 900_000);
        assert_eq!(ids.iter().min(), Some(&100_000));
        assert_eq!(ids.iter().max(), Some(&999_999));
    }

    #[test]
    fn inverse_recovers_the_first_seq() {
        assert_eq!(
            SEEDED_ID_MULTIPLIER * SEEDED_ID_INVERSE % SEEDED_ID_RANGE,
            1
        );
        for seq in [0u64, 1, 2, 17, 899_999, 900_000, 1_234_567] {
            let fid = seeded_flight_id(seq);
            assert_eq!(
                first_seq_of_seeded_flight_id(fid.into()),
                Some(seq % 900_000)
            );
        }
        assert_eq!(first_seq_of_seeded_flight_id(99_999), None);
        assert_eq!(first_seq_of_seeded_flight_id(1_000_000), None);
        assert_eq!(first_seq_of_seeded_flight_id(-5), None);
    }

    #[test]
    fn insert_base_rounds_up_to_the_next_run() {
        assert_eq!(insert_base(None), 1 << 48);
        assert_eq!(insert_base(Some(999_999)), 1 << 48);
        assert_eq!(insert_base(Some((1 << 48) + (1 << 40) + 5)), 2 << 48);
        assert_eq!(insert_base(Some((2 << 48) - 1)), 2 << 48);
        assert_eq!(insert_base(Some(2 << 48)), 3 << 48);
    }

    #[test]
    fn lanes_allocate_per_the_formula() {
        let base = 1u64 << 48;
        let mut lane = InsertLane::new(base, RunPhase::Measured, 16, 3);
        assert_eq!(
            lane.allocate(),
            (base + (1 << 40) + 3, 1_000_000 + 511_627_779)
        );
        assert_eq!(lane.allocate().0, base + (1 << 40) + 16 + 3);
        assert_eq!(lane.allocated(), 2);
        let mut warm = InsertLane::new(base, RunPhase::Warmup, 16, 0);
        assert_eq!(warm.allocate(), (base, 1_000_000));
        assert_eq!(warm.allocate(), (base + 16, 1_000_016));
    }

    #[test]
    fn lanes_of_different_workers_and_phases_never_collide() {
        let base = insert_base(Some(8_000_000));
        let mut seen = HashSet::new();
        for phase in [RunPhase::Warmup, RunPhase::Measured] {
            for w in 0..7 {
                let mut lane = InsertLane::new(base, phase, 7, w);
                for _ in 0..1000 {
                    let (seq, _) = lane.allocate();
                    assert!(seq >= base, "inserted seq {seq} below insertBase");
                    assert!(seen.insert(seq), "seq {seq} allocated twice");
                }
            }
        }
        assert_eq!(seen.len(), 2 * 7 * 1000);
        // The next run's lanes start above everything this run could allocate.
        let max = *seen.iter().max().unwrap();
        assert_eq!(insert_base(Some(max)), base + (1 << 48));
    }
}
