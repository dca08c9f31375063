//! Pieces of YCSB 0.17.0's periodic status line (specs/ycsb.md §7.7) that depend on
//! measurement: the per-measurement interval summary, Java's `DecimalFormat("#.##")`, and the
//! remaining-time text. The runner assembles the line (timestamp, elapsed seconds, operation
//! counts) around them.

use hdrhistogram::Histogram;

use crate::measure::latency::{max, mean, min, value_at_percentile};

/// Java `new DecimalFormat("#.##").format(x)`: at most two decimals, rounded half-even on the
/// exact binary value, no trailing zeros, no grouping, `.` as separator; `NaN` for NaN.
pub fn java_hash_dot_2(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞" } else { "-∞" }.into();
    }
    // Rust's fixed-precision formatting rounds the exact binary value, ties to even, as
    // DecimalFormat's default HALF_EVEN does.
    let fixed = format!("{x:.2}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    match trimmed {
        "-0" => "-0".into(),
        "" => "0".into(),
        t => t.into(),
    }
}

/// `[NAME: Count=n, Max=x, Min=y, Avg=z, 90=…, 99=…, 99.9=…, 99.99=…]` for the histogram of
/// one status interval, with YCSB 0.17.0's values for an empty interval (Max 0,
/// Min 9223372036854775807, Avg NaN, percentiles 0).
pub fn status_summary(name: &str, interval: &Histogram<u64>) -> String {
    let p = |q: f64| java_hash_dot_2(value_at_percentile(interval, q) as f64);
    format!(
        "[{name}: Count={}, Max={}, Min={}, Avg={}, 90={}, 99={}, 99.9={}, 99.99={}]",
        interval.len(),
        max(interval).unwrap_or(0),
        min(interval).unwrap_or(i64::MAX as u64),
        java_hash_dot_2(mean(interval).unwrap_or(f64::NAN)),
        p(90.0),
        p(99.0),
        p(99.9),
        p(99.99),
    )
}

/// YCSB's "est completion in" text for `seconds` remaining, trailing space included: days,
/// hours, and (below one day) minutes, each only when non-zero and singular for 1; seconds
/// only when nothing else was printed, with YCSB's quirk of `second` for any one-digit count.
pub fn remaining_text(seconds: u64) -> String {
    let days = seconds / 86_400;
    let hours = seconds % 86_400 / 3_600;
    let minutes = seconds % 3_600 / 60;
    let mut out = String::new();
    let mut unit = |n: u64, one: &str, many: &str| {
        out.push_str(&format!("{n} {} ", if n == 1 { one } else { many }));
    };
    if days > 0 {
        unit(days, "day", "days");
    }
    if hours > 0 {
        unit(hours, "hour", "hours");
    }
    if days == 0 && minutes > 0 {
        unit(minutes, "minute", "minutes");
    }
    if out.is_empty() {
        let secs = seconds % 60;
        let word = if secs < 10 { "second" } else { "seconds" };
        out = format!("{secs} {word} ");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency::new_histogram;

    #[test]
    fn decimal_format_vectors_from_the_spec() {
        assert_eq!(java_hash_dot_2(1234.5678), "1234.57");
        assert_eq!(java_hash_dot_2(2.0), "2");
        assert_eq!(java_hash_dot_2(0.125), "0.12");
        assert_eq!(java_hash_dot_2(0.005), "0.01");
        assert_eq!(java_hash_dot_2(1.005), "1");
        assert_eq!(java_hash_dot_2(f64::NAN), "NaN");
    }

    #[test]
    fn decimal_format_more_cases() {
        assert_eq!(java_hash_dot_2(0.375), "0.38"); // exact tie, 7 is odd → up
        assert_eq!(java_hash_dot_2(2.5), "2.5");
        assert_eq!(java_hash_dot_2(0.0), "0");
        assert_eq!(java_hash_dot_2(0.001), "0");
        assert_eq!(java_hash_dot_2(1415.0), "1415");
        assert_eq!(java_hash_dot_2(98.10000000000001), "98.1");
    }

    #[test]
    fn interval_summary_of_known_samples_and_of_an_empty_interval() {
        let mut h = new_histogram();
        for v in [100, 200, 300, 400, 3000] {
            h.record(v).unwrap();
        }
        // Mean (100 + 200 + 300 + 400 + 3001) / 5 = 800.2; C(90) = trunc(4.5 + 0.5) = 5 →
        // 3001 (bucket [3000, 3001]); C(99) = C(99.9) = C(99.99) = 5 → 3001.
        assert_eq!(
            status_summary("READ", &h),
            "[READ: Count=5, Max=3001, Min=100, Avg=800.2, 90=3001, 99=3001, 99.9=3001, \
             99.99=3001]"
        );
        assert_eq!(
            status_summary("UPDATE", &new_histogram()),
            "[UPDATE: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0, 99=0, 99.9=0, \
             99.99=0]"
        );
    }

    #[test]
    fn remaining_time_vectors_from_the_spec() {
        assert_eq!(remaining_text(5), "5 second ");
        assert_eq!(remaining_text(0), "0 second ");
        assert_eq!(remaining_text(12), "12 seconds ");
        assert_eq!(remaining_text(61), "1 minute ");
        assert_eq!(remaining_text(90_061), "1 day 1 hour ");
    }

    #[test]
    fn remaining_time_more_cases() {
        assert_eq!(remaining_text(3_600), "1 hour ");
        assert_eq!(remaining_text(3_661), "1 hour 1 minute ");
        assert_eq!(remaining_text(7_320), "2 hours 2 minutes ");
        assert_eq!(remaining_text(2 * 86_400 + 300), "2 days ");
        assert_eq!(remaining_text(59), "59 seconds ");
    }
}
