//! `requestdistribution=sequential` (specs/ycsb.md §4.3): `insertstart + (c++ mod insertcount)`.
//!
//! YCSB shares one counter `c` between all threads, so which thread gets which value depends on
//! scheduling. mongobench keeps the generator deterministic per worker by striding: worker `w` of
//! `W` uses `c = w, w + W, w + 2W, …`, which is the round-robin hand-out a fair scheduler gives.

/// One worker's share of the shared sequential counter.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequential {
    start: u64,
    interval: u64,
    counter: u64,
    stride: u64,
}

impl Sequential {
    /// Keys `[start, start + interval − 1]` for worker `worker` of `workers` (`interval ≥ 1`).
    pub fn new(start: u64, interval: u64, worker: u64, workers: u64) -> Sequential {
        Sequential {
            start,
            interval,
            counter: worker,
            stride: workers.max(1),
        }
    }

    /// The next key number.
    pub fn next_key(&mut self) -> u64 {
        let key = self.start + self.counter % self.interval;
        self.counter = self.counter.wrapping_add(self.stride);
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_worker_cycles_through_the_range() {
        let mut s = Sequential::new(10, 3, 0, 1);
        let keys: Vec<u64> = (0..7).map(|_| s.next_key()).collect();
        assert_eq!(keys, [10, 11, 12, 10, 11, 12, 10]);
    }

    #[test]
    fn workers_interleave_like_a_shared_counter() {
        let mut w0 = Sequential::new(0, 5, 0, 2);
        let mut w1 = Sequential::new(0, 5, 1, 2);
        let mut merged = Vec::new();
        for _ in 0..4 {
            merged.push(w0.next_key());
            merged.push(w1.next_key());
        }
        assert_eq!(merged, [0, 1, 2, 3, 4, 0, 1, 2]);
    }
}
