//! Whether a warm-up had levelled off: the measured settle criterion the reports apply to a
//! cell's `warmupPerSecond`. Throughput that still climbs (caches filling, JIT-like warm-up of
//! a server, connection pools growing) or falls (checkpoints, eviction catching up) at the end
//! of the warm-up carries on into the measured phase and widens the spread between
//! repetitions; such a cell is named with its drift so that `workload.warmup` can be set
//! longer.

use crate::result::CellResult;

/// Largest drift, in percent, of a warm-up that counts as settled.
pub const SETTLE_TOLERANCE_PERCENT: f64 = 5.0;

/// Fewest seconds the criterion judges: its middle and last thirds then hold 2 seconds each.
pub const MIN_SECONDS: usize = 6;

/// The change, in percent, of the mean operations per second of the warm-up's last third over
/// its middle third (the first third, the ramp from zero, is left out); `None` for a warm-up of
/// fewer than [`MIN_SECONDS`] seconds or with no operation in its middle third. The last
/// second is left out first: after a warm-up of a number of operations it is partial. When the
/// rest is not a multiple of 3 seconds, the first third takes the extra ones.
pub fn warmup_drift_percent(per_second: &[u64]) -> Option<f64> {
    let per_second = per_second.split_last().map_or(&[][..], |(_, rest)| rest);
    if per_second.len() < MIN_SECONDS {
        return None;
    }
    let third = per_second.len() / 3;
    let last = &per_second[per_second.len() - third..];
    let middle = &per_second[per_second.len() - 2 * third..per_second.len() - third];
    let mean = |s: &[u64]| s.iter().sum::<u64>() as f64 / s.len() as f64;
    let before = mean(middle);
    (before > 0.0).then(|| (mean(last) / before - 1.0) * 100.0)
}

/// The drift of a warm-up that had not settled (beyond [`SETTLE_TOLERANCE_PERCENT`] either
/// way); `None` when it settled or is too short to judge.
pub fn unsettled(per_second: &[u64]) -> Option<f64> {
    // The margin keeps a drift of exactly the tolerance (105 / 100 - 1 is 5.000000000000004 %)
    // settled.
    warmup_drift_percent(per_second).filter(|d| d.abs() > SETTLE_TOLERANCE_PERCENT + 1e-9)
}

/// One line per complete cell whose warm-up had not settled, for the text report: empty when
/// every warm-up settled or was too short to judge.
pub fn render_unsettled(results: &[CellResult]) -> String {
    let mut out = String::new();
    for r in results.iter().filter(|r| r.is_complete()) {
        if let Some(d) = unsettled(&r.warmup_per_second) {
            out.push_str(&format!(
                "{}: warm-up not settled, its last third of seconds {d:+.1}% against its middle \
                 third (beyond ±{SETTLE_TOLERANCE_PERCENT}%); a longer workload.warmup keeps \
                 the drift out of the measured phase\n",
                r.cell
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::study::study;

    #[test]
    fn drift_compares_the_last_third_with_the_middle_third() {
        // Middle [100, 100], last [110, 120]: 115 / 100 - 1.
        let d = warmup_drift_percent(&[0, 50, 100, 100, 110, 120, 7]).unwrap();
        assert!((d - 15.0).abs() < 1e-9, "{d}");
        // 7 whole seconds and a partial one: thirds of 2, the first takes 3 ([0, 10, 20]); middle [200, 200], last
        // [190, 190].
        let d = warmup_drift_percent(&[0, 10, 20, 200, 200, 190, 190, 3]).unwrap();
        assert!((d + 5.0).abs() < 1e-9, "{d}");
        assert_eq!(warmup_drift_percent(&[5; 6]), None);
        assert_eq!(warmup_drift_percent(&[9, 9, 0, 0, 4, 4, 4]), None);
        assert_eq!(warmup_drift_percent(&[3; 60]), Some(0.0));
    }

    #[test]
    fn only_a_drift_beyond_the_tolerance_is_unsettled() {
        assert_eq!(unsettled(&[0, 50, 100, 100, 105, 105, 1]), None);
        assert_eq!(unsettled(&[0, 50, 100, 100, 95, 95, 1]), None);
        let d = unsettled(&[0, 50, 100, 100, 106, 106, 1]).unwrap();
        assert!((d - 6.0).abs() < 1e-9, "{d}");
        let d = unsettled(&[0, 50, 100, 100, 90, 90, 1]).unwrap();
        assert!((d + 10.0).abs() < 1e-9, "{d}");
        assert_eq!(unsettled(&[100; 3]), None);
    }

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
                 third (beyond ±5%); a longer workload.warmup keeps the drift out of the \
                 measured phase\n",
                results[0].cell
            )
        );
    }
}
