//! Time slots of an interleaved run (docs/results.md, "Paired slots"): slot k runs repetition
//! k of every target, in an order drawn from the workload's seed, so that what the machine
//! does at that time weighs on every target alike and no target always goes first. After the
//! planned repetitions, a precision goal (`spec.precision`) decides whether another slot is
//! needed.

use std::time::Duration;

use crate::api::units::UnitsError;
use crate::api::{MongoBenchmarkSpec, Precision};
use crate::result::{CellResult, slot_pairs};
use crate::verdict::stats::{Delta, MIN_REPETITIONS};
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

/// `spec.precision` in the runner's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecisionGoal {
    pub mde_percent: f64,
    pub max_repetitions: u32,
    /// From the runner's start; `None` is no limit.
    pub max_duration: Option<Duration>,
}

impl PrecisionGoal {
    /// The goal of `spec`, if it sets one.
    ///
    /// # Errors
    /// A `maxDuration` that does not parse.
    pub fn of(spec: &MongoBenchmarkSpec) -> Result<Option<PrecisionGoal>, UnitsError> {
        spec.precision
            .as_ref()
            .map(|p| PrecisionGoal::of_precision(p, spec.repetitions()))
            .transpose()
    }

    /// The goal `precision` sets for a run of `repetitions` planned repetitions.
    ///
    /// # Errors
    /// A `maxDuration` that does not parse.
    pub fn of_precision(
        precision: &Precision,
        repetitions: u32,
    ) -> Result<PrecisionGoal, UnitsError> {
        Ok(PrecisionGoal {
            mde_percent: precision.mde_percent,
            max_repetitions: precision.max_repetitions().max(repetitions),
            max_duration: precision.max_duration()?,
        })
    }
}

/// Where a size stands against the goal after some slots.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    /// Every comparison's MDE is at most the goal; the widest is given.
    Reached { widest_mde_percent: f64 },
    /// A comparison is above the goal, or has too few pairs to state an MDE.
    Short {
        /// The target whose comparison is furthest from the goal.
        target: String,
        /// Its MDE; `None` with fewer than [`MIN_REPETITIONS`] valid pairs.
        mde_percent: Option<f64>,
    },
}

/// The MDE of each candidate's paired comparison with `baseline` over `results` (one size's
/// cells of one run), in the order the candidates first appear; `None` with fewer than
/// [`MIN_REPETITIONS`] valid pairs.
pub fn paired_mdes(results: &[CellResult], baseline: &str) -> Vec<(String, Option<f64>)> {
    let of =
        |t: &str| -> Vec<&CellResult> { results.iter().filter(|c| c.cell.target == t).collect() };
    let mut candidates: Vec<&str> = Vec::new();
    for c in results {
        let t = c.cell.target.as_str();
        if t != baseline && !candidates.contains(&t) {
            candidates.push(t);
        }
    }
    let ops = |c: &CellResult| c.measured.as_ref().map(|m| m.overall.ops_per_sec);
    candidates
        .into_iter()
        .map(|t| {
            let pairs = slot_pairs(of(baseline), of(t), ops);
            let mde = (pairs.len() >= MIN_REPETITIONS)
                .then(|| Delta::paired(&pairs).ok()?.mde_percent)
                .flatten();
            (t.to_owned(), mde)
        })
        .collect()
}

/// How `results` (one size's cells of one run) stand against `goal`.
pub fn standing(results: &[CellResult], baseline: &str, goal: f64) -> Standing {
    let mdes = paired_mdes(results, baseline);
    // The worst: no MDE yet, else the widest.
    let worst = mdes
        .iter()
        .max_by(|a, b| match (a.1, b.1) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Greater,
            (_, None) => std::cmp::Ordering::Less,
            (Some(x), Some(y)) => x.total_cmp(&y),
        })
        .cloned();
    match worst {
        Some((_, Some(mde))) if mde <= goal => Standing::Reached {
            widest_mde_percent: mde,
        },
        Some((target, mde_percent)) => Standing::Short {
            target,
            mde_percent,
        },
        None => Standing::Short {
            target: baseline.to_owned(),
            mde_percent: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::slotted_result;

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

    #[test]
    fn standing_needs_three_pairs_then_the_widest_mde_under_the_goal() {
        let two = [
            slotted_result("a", 1, 100.0),
            slotted_result("b", 1, 103.0),
            slotted_result("a", 2, 120.0),
            slotted_result("b", 2, 123.0),
        ];
        assert_eq!(
            standing(&two, "a", 3.0),
            Standing::Short {
                target: "b".into(),
                mde_percent: None
            }
        );
        // The five slots of stats' paired test: MDE 0.928 %.
        let mut five = two.to_vec();
        for (slot, base, cand) in [(3, 90.0, 93.5), (4, 110.0, 112.9), (5, 105.0, 108.6)] {
            five.push(slotted_result("a", slot, base));
            five.push(slotted_result("b", slot, cand));
        }
        let Standing::Reached { widest_mde_percent } = standing(&five, "a", 1.0) else {
            panic!("{:?}", standing(&five, "a", 1.0));
        };
        assert!((widest_mde_percent - 0.928028373422778).abs() < 1e-9);
        assert!(matches!(
            standing(&five, "a", 0.5),
            Standing::Short { ref target, mde_percent: Some(m) } if target == "b" && m > 0.9
        ));
    }
}
