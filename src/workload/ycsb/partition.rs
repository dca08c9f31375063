//! How a phase's operations split over threads and client pods (specs/ycsb.md §2, §8).

/// The thread count YCSB actually runs for a phase of `operations` operations (0 = unbounded):
/// `threads` lowered to `operations` when larger, with YCSB's stdout warning text.
pub fn effective_threads(threads: u32, operations: u64) -> (u32, Option<&'static str>) {
    if operations != 0 && u64::from(threads) > operations {
        (
            operations as u32,
            Some(
                "Warning: the threadcount is bigger than recordcount, the threadcount will be recordcount!",
            ),
        )
    } else {
        (threads, None)
    }
}

/// Per-thread quota: `operations / threads`, the first `operations % threads` threads one more.
pub fn quota(operations: u64, threads: u32, index: u32) -> u64 {
    let threads = u64::from(threads.max(1));
    operations / threads + u64::from(u64::from(index) < operations % threads)
}

/// The load slice of client pod `index` of `count` over `recordcount` records
/// (§8 recommendation): `(insertstart, insertcount)`.
pub fn client_slice(recordcount: u64, index: u32, count: u32) -> (u64, u64) {
    let (index, count) = (u64::from(index), u64::from(count.max(1)));
    let base = recordcount / count;
    let extra = recordcount % count;
    let start = index * base + index.min(extra);
    (start, base + u64::from(index < extra))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_clamp_and_quotas() {
        assert_eq!(effective_threads(8, 5).0, 5);
        assert!(effective_threads(8, 5).1.is_some());
        assert_eq!(effective_threads(8, 0), (8, None));
        assert_eq!(effective_threads(4, 1000), (4, None));
        let q: Vec<u64> = (0..4).map(|i| quota(10, 4, i)).collect();
        assert_eq!(q, [3, 3, 2, 2]);
        assert_eq!(client_slice(10, 0, 3), (0, 4));
        assert_eq!(client_slice(10, 1, 3), (4, 3));
        assert_eq!(client_slice(10, 2, 3), (7, 3));
    }
}
