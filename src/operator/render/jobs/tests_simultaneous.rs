//! A runner of simultaneous cells: its Job's deadline counts each slot's cells once.

use super::*;
use crate::operator::fixtures::{STUDY, bench};

#[test]
fn a_simultaneous_slot_counts_one_cells_time_in_the_deadline() {
    let in_turn = bench("study", STUDY);
    let together = bench("study", &format!("{STUDY}parallelism: Simultaneous\n"));
    let deadline = |b: &MongoBenchmark| {
        let targets: Vec<&Target> = b.spec.targets.iter().collect();
        active_deadline_seconds(b, &targets, &b.spec.platforms[0]).unwrap()
    };
    // The second target's 4 cells (2 sizes × 2 repetitions) of 60 s warm-up, 10 min measured
    // and 300 s overhead each, doubled, run beside the first's.
    assert_eq!(
        deadline(&in_turn) - deadline(&together),
        2 * 4 * (60 + 600 + 300)
    );
}
