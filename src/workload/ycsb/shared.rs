//! Process-wide state of one YCSB phase, shared by all workers of a client (specs/ycsb.md §4.1,
//! §4.2): the run-phase insert key counter and the *acknowledged* counter whose `lastAcked` bounds
//! every key choice, plus a cache for the `latest` distribution's ζ.
//!
//! Acknowledgement differs from YCSB in one way (§10, default on): YCSB keeps a ring of 2^20 flags
//! and kills the process (exit 0, no report) when a key's slot is still taken; here out-of-order
//! acknowledgements wait in an ordered set with no limit, and [`SharedState::max_unacknowledged`]
//! reports the largest backlog so the runner can warn when YCSB would have died.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The size of YCSB's acknowledgement window (2^20 = 1,048,576 keys).
pub const YCSB_ACK_WINDOW: u64 = 1 << 20;

/// Shared insert and acknowledgement counters of one client process.
#[derive(Debug)]
pub struct SharedState {
    start: u64,
    next_insert: AtomicU64,
    /// `lastAcked + 1`: every key below it is acknowledged.
    frontier: AtomicU64,
    pending: Mutex<BTreeSet<u64>>,
    max_pending: AtomicU64,
    /// One past the highest key number handed to an insert (lanes included).
    high_water: AtomicU64,
    latest_zeta: OnceLock<(u64, f64)>,
}

impl SharedState {
    /// State for a phase whose run-phase inserts start at key `insert_start` (`recordcount` in
    /// YCSB; mongobench's runner starts after the records a collection already holds).
    /// `lastAcked` starts at `insert_start − 1`.
    pub fn new(insert_start: u64) -> Arc<SharedState> {
        Arc::new(SharedState {
            start: insert_start,
            next_insert: AtomicU64::new(insert_start),
            frontier: AtomicU64::new(insert_start),
            pending: Mutex::new(BTreeSet::new()),
            max_pending: AtomicU64::new(0),
            high_water: AtomicU64::new(insert_start),
            latest_zeta: OnceLock::new(),
        })
    }

    /// The first run-phase insert key number.
    pub fn insert_start(&self) -> u64 {
        self.start
    }

    /// Takes the next run-phase insert key number (YCSB's shared `transactioninsertkeysequence`).
    pub fn next_insert_key(&self) -> u64 {
        let k = self.next_insert.fetch_add(1, Ordering::Relaxed);
        self.note_insert_key(k);
        k
    }

    /// Records that key `k` was handed to an insert (per-worker lanes allocate keys themselves).
    pub(crate) fn note_insert_key(&self, k: u64) {
        self.high_water.fetch_max(k + 1, Ordering::Relaxed);
    }

    /// One past the highest key number any insert of this phase used (the insert start if none):
    /// a safe insert start for a later run, since a document count can be lower (failed
    /// inserts, unequal lanes).
    pub fn insert_high_water(&self) -> u64 {
        self.high_water.load(Ordering::Relaxed)
    }

    /// The highest key number below which every key is acknowledged, or `None` when no key is.
    pub fn last_acked(&self) -> Option<u64> {
        self.frontier.load(Ordering::Acquire).checked_sub(1)
    }

    /// Acknowledges key `k` once its insert call returned, whatever its outcome (YCSB
    /// acknowledges failed inserts too). Advances `lastAcked` over every contiguous acknowledged
    /// key. Acknowledging a key twice or one below the frontier changes nothing.
    pub fn acknowledge(&self, k: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut frontier = self.frontier.load(Ordering::Acquire);
        if k < frontier {
            return;
        }
        if k == frontier {
            frontier += 1;
            while pending.remove(&frontier) {
                frontier += 1;
            }
            self.frontier.store(frontier, Ordering::Release);
        } else {
            pending.insert(k);
            self.max_pending
                .fetch_max(pending.len() as u64, Ordering::Relaxed);
        }
    }

    /// The largest number of keys that were acknowledged out of order at one time; at
    /// [`YCSB_ACK_WINDOW`] or more, YCSB would have ended the process ("Too many unacknowledged
    /// insertion keys.").
    pub fn max_unacknowledged(&self) -> u64 {
        self.max_pending.load(Ordering::Relaxed)
    }

    /// ζ(`items`, θ) for the `latest` distribution, computed once per process (workers share it).
    pub(crate) fn latest_zeta(&self, items: u64, compute: impl FnOnce() -> f64) -> f64 {
        let (cached_items, z) = *self.latest_zeta.get_or_init(|| (items, compute()));
        debug_assert_eq!(
            cached_items, items,
            "latest ζ cached for another item count"
        );
        z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_starts_at_the_insert_start_and_last_acked_below_it() {
        let s = SharedState::new(1000);
        assert_eq!(s.last_acked(), Some(999));
        assert_eq!(s.next_insert_key(), 1000);
        assert_eq!(s.next_insert_key(), 1001);
        assert_eq!(s.insert_high_water(), 1002);
        assert_eq!(SharedState::new(0).last_acked(), None);
        assert_eq!(SharedState::new(7).insert_high_water(), 7);
    }

    #[test]
    fn last_acked_advances_only_over_contiguous_keys() {
        let s = SharedState::new(10);
        s.acknowledge(12);
        s.acknowledge(11);
        assert_eq!(s.last_acked(), Some(9), "10 still in flight");
        assert_eq!(s.max_unacknowledged(), 2);
        s.acknowledge(10);
        assert_eq!(s.last_acked(), Some(12));
        s.acknowledge(10); // duplicate: no effect
        s.acknowledge(14);
        assert_eq!(s.last_acked(), Some(12));
        s.acknowledge(13);
        assert_eq!(s.last_acked(), Some(14));
    }

    #[test]
    fn concurrent_acknowledgements_end_contiguous() {
        let s = SharedState::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..10_000 {
                        let k = s.next_insert_key();
                        s.acknowledge(k);
                    }
                });
            }
        });
        assert_eq!(s.last_acked(), Some(39_999));
    }
}
