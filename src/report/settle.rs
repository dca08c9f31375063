//! Cells whose warm-up had not levelled off, by the settle criterion of `measure::settle`
//! applied to each cell's `warmupPerSecond`: such a cell is named with its drift so that
//! `workload.warmup` can be set longer, or `workload.warmupUntilSettled` be used.

use crate::measure::settle;
use crate::result::CellResult;

/// Largest drift, in percent, of a warm-up that counts as settled: the one a warm-up in
/// rounds uses unless told otherwise.
pub const SETTLE_TOLERANCE_PERCENT: f64 = crate::api::warmup::DEFAULT_TOLERANCE_PERCENT;

/// The drift of a cell's warm-up that had not settled: for a warm-up run in rounds until
/// settled, that of its last round when the rounds ran out; otherwise beyond
/// [`SETTLE_TOLERANCE_PERCENT`] either way. `None` when it settled or is too short to judge.
pub fn unsettled(cell: &CellResult) -> Option<f64> {
    match cell.warmup_rounds {
        Some(r) if r.settled => None,
        Some(_) => settle::drift_percent(&cell.warmup_per_second),
        None => settle::beyond(&cell.warmup_per_second, SETTLE_TOLERANCE_PERCENT),
    }
}

/// What was wrong with the warm-up of `cell`, whose drift was `d`.
pub fn describe(cell: &CellResult, d: f64) -> String {
    match cell.warmup_rounds {
        Some(r) => format!(
            "warm-up not settled after {} rounds (workload.warmupUntilSettled.maxRounds), the \
             last round's last third of seconds {d:+.1}% against its middle third",
            r.rounds
        ),
        None => format!(
            "warm-up not settled, its last third of seconds {d:+.1}% against its middle third \
             (beyond ±{SETTLE_TOLERANCE_PERCENT}%); a longer workload.warmup, or \
             workload.warmupUntilSettled, keeps the drift out of the measured phase"
        ),
    }
}

/// One line per complete cell whose warm-up had not settled, for the text report: empty when
/// every warm-up settled or was too short to judge.
pub fn render_unsettled(results: &[CellResult]) -> String {
    let mut out = String::new();
    for r in results.iter().filter(|r| r.is_complete()) {
        if let Some(d) = unsettled(r) {
            out.push_str(&format!("{}: {}\n", r.cell, describe(r, d)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::study::study;
    use crate::result::WarmupRounds;

    #[test]
    fn the_text_names_each_unsettled_cell_once() {
        let mut results = study();
        assert_eq!(render_unsettled(&results), "");
        results[0].warmup_per_second = vec![10, 50, 100, 100, 90, 90, 40];
        results[1].warmup_per_second = vec![10, 50, 100, 100, 101, 101, 40];
        assert_eq!(
            render_unsettled(&results),
            format!(
                "{}: warm-up not settled, its last third of seconds -10.0% against its middle \
                 third (beyond ±5%); a longer workload.warmup, or workload.warmupUntilSettled, \
                 keeps the drift out of the measured phase\n",
                results[0].cell
            )
        );
    }

    #[test]
    fn a_warmup_in_rounds_is_named_only_when_its_rounds_ran_out() {
        let mut results = study();
        // Settled by its own tolerance (say 10 %), though beyond the reports' 5 %.
        results[0].warmup_per_second = vec![10, 50, 100, 100, 108, 108, 40];
        results[0].warmup_rounds = Some(WarmupRounds {
            rounds: 2,
            settled: true,
        });
        results[1].warmup_per_second = vec![10, 50, 100, 100, 103, 103, 40];
        results[1].warmup_rounds = Some(WarmupRounds {
            rounds: 5,
            settled: false,
        });
        assert_eq!(
            render_unsettled(&results),
            format!(
                "{}: warm-up not settled after 5 rounds (workload.warmupUntilSettled.maxRounds), \
                 the last round's last third of seconds +3.0% against its middle third\n",
                results[1].cell
            )
        );
    }
}
