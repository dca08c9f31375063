//! Which share of a runner's work one client process does when `client.pods` processes run
//! it together (an Indexed Job's pods, or `mongobench run --client-processes N`): process `i`
//! of `N` runs workers `[i·W/N, (i+1)·W/N)` under their global indices, so the union of the
//! processes' streams is exactly the stream of one process with all `W` workers; seeding
//! splits a document range the same way.

use std::ops::Range;

/// Environment variable with a pod's index in an Indexed Job (set by Kubernetes).
pub const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// Client process `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSlice {
    pub index: u32,
    pub count: u32,
}

impl ClientSlice {
    /// The only process of a one-process run.
    pub const WHOLE: ClientSlice = ClientSlice { index: 0, count: 1 };

    /// Process `index` of `count`.
    ///
    /// # Errors
    /// A message naming both when `count` is 0 or `index` is not below it.
    pub fn new(index: u32, count: u32) -> Result<ClientSlice, String> {
        if count == 0 || index >= count {
            return Err(format!(
                "client process index {index} is not below the process count {count}"
            ));
        }
        Ok(ClientSlice { index, count })
    }

    /// Whether this process coordinates the others (seeds, restores, verifies, writes results).
    pub fn is_coordinator(&self) -> bool {
        self.index == 0
    }

    /// The global indices of the workers this process runs out of `workers`.
    pub fn workers(&self, workers: u32) -> Range<u32> {
        let share = |i: u32| (u64::from(i) * u64::from(workers) / u64::from(self.count)) as u32;
        share(self.index)..share(self.index + 1)
    }

    /// This process's share of the documents `range`, split like the workers.
    pub fn documents(&self, range: Range<u64>) -> Range<u64> {
        let n = range.end.saturating_sub(range.start);
        let share =
            |i: u32| range.start + (u128::from(n) * u128::from(i) / u128::from(self.count)) as u64;
        share(self.index)..share(self.index + 1)
    }

    /// Every process of this run, in index order.
    pub fn all(&self) -> impl Iterator<Item = ClientSlice> + use<> {
        let count = self.count;
        (0..count).map(move |index| ClientSlice { index, count })
    }
}

impl std::fmt::Display for ClientSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "client process {} of {}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_split_into_contiguous_ranges_covering_every_worker_once() {
        let ranges: Vec<_> = ClientSlice::new(0, 3)
            .unwrap()
            .all()
            .map(|s| s.workers(16))
            .collect();
        assert_eq!(ranges, [0..5, 5..10, 10..16]);
        assert_eq!(ClientSlice::WHOLE.workers(16), 0..16);
        let two: Vec<_> = ClientSlice::new(1, 2)
            .unwrap()
            .all()
            .map(|s| s.workers(3))
            .collect();
        assert_eq!(two, [0..1, 1..3]);
    }

    #[test]
    fn documents_split_like_workers_from_the_range_start() {
        let parts: Vec<_> = ClientSlice::new(0, 3)
            .unwrap()
            .all()
            .map(|s| s.documents(1000..2000))
            .collect();
        assert_eq!(parts, [1000..1333, 1333..1666, 1666..2000]);
        assert_eq!(ClientSlice::WHOLE.documents(5..9), 5..9);
        assert_eq!(ClientSlice::new(1, 2).unwrap().documents(7..7), 7..7);
    }

    #[test]
    fn an_index_at_or_past_the_count_is_refused() {
        assert_eq!(
            ClientSlice::new(3, 3).unwrap_err(),
            "client process index 3 is not below the process count 3"
        );
        assert!(ClientSlice::new(0, 0).is_err());
        assert!(ClientSlice::new(0, 1).unwrap().is_coordinator());
        assert!(!ClientSlice::new(2, 3).unwrap().is_coordinator());
    }
}
