//! The settle criterion of a warm-up: whether its throughput had levelled off by its end. The
//! runner applies it to each round of `workload.warmupUntilSettled`; the reports apply it to
//! every cell's recorded warm-up. Throughput that still climbs (caches filling, JIT-like
//! warm-up of a server, connection pools growing) or falls (checkpoints, eviction catching up)
//! at the end of a warm-up carries on into the measured phase and widens the spread between
//! repetitions.

/// Fewest whole seconds the criterion judges: its middle and last thirds then hold 2 each.
pub const MIN_SECONDS: usize = 6;

/// The change, in percent, of the mean operations per second of the warm-up's last third over
/// its middle third (the first third, the ramp from zero, is left out); `None` for a warm-up of
/// fewer than [`MIN_SECONDS`] whole seconds or with no operation in its middle third. The last
/// second is left out first: it is partial. When the rest is not a multiple of 3 seconds, the
/// first third takes the extra ones.
pub fn drift_percent(per_second: &[u64]) -> Option<f64> {
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

/// The drift of a warm-up beyond `tolerance_percent` either way; `None` when it settled or is
/// too short to judge.
pub fn beyond(per_second: &[u64], tolerance_percent: f64) -> Option<f64> {
    // The margin keeps a drift of exactly the tolerance (105 / 100 - 1 is 5.000000000000004 %)
    // settled.
    drift_percent(per_second).filter(|d| d.abs() > tolerance_percent + 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_compares_the_last_third_with_the_middle_third() {
        // Middle [100, 100], last [110, 120]: 115 / 100 - 1.
        let d = drift_percent(&[0, 50, 100, 100, 110, 120, 7]).unwrap();
        assert!((d - 15.0).abs() < 1e-9, "{d}");
        // 7 whole seconds and a partial one: thirds of 2, the first takes 3 ([0, 10, 20]);
        // middle [200, 200], last [190, 190].
        let d = drift_percent(&[0, 10, 20, 200, 200, 190, 190, 3]).unwrap();
        assert!((d + 5.0).abs() < 1e-9, "{d}");
        assert_eq!(drift_percent(&[5; 6]), None);
        assert_eq!(drift_percent(&[9, 9, 0, 0, 4, 4, 4]), None);
        assert_eq!(drift_percent(&[3; 60]), Some(0.0));
    }

    #[test]
    fn only_a_drift_beyond_the_tolerance_counts() {
        assert_eq!(beyond(&[0, 50, 100, 100, 105, 105, 1], 5.0), None);
        assert_eq!(beyond(&[0, 50, 100, 100, 95, 95, 1], 5.0), None);
        let d = beyond(&[0, 50, 100, 100, 106, 106, 1], 5.0).unwrap();
        assert!((d - 6.0).abs() < 1e-9, "{d}");
        assert_eq!(beyond(&[0, 50, 100, 100, 106, 106, 1], 10.0), None);
        let d = beyond(&[0, 50, 100, 100, 90, 90, 1], 5.0).unwrap();
        assert!((d + 10.0).abs() < 1e-9, "{d}");
        assert_eq!(beyond(&[100; 3], 5.0), None);
    }
}
