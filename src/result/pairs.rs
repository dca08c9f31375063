//! Cells of two targets paired by the slot they ran in (docs/results.md, "Paired slots"): the
//! comparison and the runner's precision goal read the same pairs.

use std::collections::BTreeMap;

use super::document::CellResult;

/// (baseline, candidate) figures of each slot in which both targets have a valid cell with
/// the figure, in slot order. Cells pair when their run, workload, platform, size and slot
/// number are equal; cells without a slot (their target ran alone) never pair.
pub fn slot_pairs<'r>(
    baseline: impl IntoIterator<Item = &'r CellResult>,
    candidate: impl IntoIterator<Item = &'r CellResult>,
    figure: impl Fn(&CellResult) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let key = |c: &CellResult| {
        let slot = c.slot?;
        let id = &c.cell;
        Some((
            id.run_id.clone(),
            id.workload.clone(),
            id.platform.clone(),
            id.size.clone(),
            slot.number,
        ))
    };
    let mut base = BTreeMap::new();
    for c in baseline.into_iter().filter(|c| c.is_valid()) {
        if let (Some(k), Some(v)) = (key(c), figure(c)) {
            base.insert(k, v);
        }
    }
    let mut out: Vec<_> = candidate
        .into_iter()
        .filter(|c| c.is_valid())
        .filter_map(|c| Some((key(c)?, base.get(&key(c)?).copied()?, figure(c)?)))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, b, c)| (b, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::cell;
    use crate::result::{CellStatus, Slot};

    fn at(target: &str, repetition: u32, slot: Option<u32>, valid: bool) -> CellResult {
        let mut r = CellResult::empty(cell(target, "n2", "1M", repetition), CellStatus::Complete);
        r.slot = slot.map(|number| Slot {
            number,
            position: 0,
        });
        if !valid {
            r.invalid_reasons.push("an election".into());
        }
        r
    }

    #[test]
    fn pairs_are_cells_of_one_slot_both_valid() {
        let base = [
            at("a", 1, Some(1), true),
            at("a", 2, Some(2), true),
            at("a", 3, Some(3), false),
            at("a", 4, None, true),
        ];
        let cand = [
            at("b", 2, Some(2), true),
            at("b", 1, Some(1), true),
            at("b", 3, Some(3), true),
            at("b", 4, None, true),
        ];
        // The figure: the repetition number, 10× for the candidate.
        let pairs = slot_pairs(&base, &cand, |c| {
            let r = f64::from(c.cell.repetition);
            Some(if c.cell.target == "b" { 10.0 * r } else { r })
        });
        assert_eq!(pairs, [(1.0, 10.0), (2.0, 20.0)]);
    }
}
