//! The order of the targets in each slot (docs/results.md, "Paired slots"): the runner runs
//! them so and the operator reports each cell's place from it, so both read this one function.

use crate::workload::rng::{Stream, key};

/// Stream tag of the slot orders (apart from every workload stream's tag).
const TAG_SLOT_ORDER: u64 = 0x5107;

/// The order in which `targets` targets run in `slot` (from 1) of the size at `size_index`:
/// a permutation of `0..targets` (Fisher–Yates over a stream of the seed), the same for the
/// same seed, size and slot.
pub fn order(seed: u64, size_index: usize, slot: u32, targets: usize) -> Vec<usize> {
    let mut stream = Stream::new(key(
        seed ^ (size_index as u64).wrapping_mul(0x9E37_79B9),
        TAG_SLOT_ORDER,
        u64::from(slot),
    ));
    let mut out: Vec<usize> = (0..targets).collect();
    for i in (1..targets).rev() {
        out.swap(i, stream.index(i + 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations_repeatable_and_balanced() {
        let mut first = [0u32; 3];
        for slot in 1..=3000 {
            let o = order(7, 0, slot, 3);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [0, 1, 2], "slot {slot}: {o:?}");
            assert_eq!(o, order(7, 0, slot, 3));
            first[o[0]] += 1;
        }
        // Each target goes first in about a third of the slots (±5 standard deviations).
        for n in first {
            assert!((800..=1200).contains(&n), "{first:?}");
        }
        let orders = |seed, size| {
            (1..=16)
                .map(|s| order(seed, size, s, 2))
                .collect::<Vec<_>>()
        };
        assert_ne!(orders(7, 0), orders(8, 0), "another seed, other orders");
        assert_ne!(orders(7, 0), orders(7, 1), "another size, other orders");
        assert_eq!(order(7, 0, 1, 1), [0]);
        assert!(order(7, 0, 1, 0).is_empty());
    }
}
