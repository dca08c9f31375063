//! Latency histograms (µs, 3 significant digits, auto-resizing) and the figures read from them.
//!
//! The figures follow the rules of HdrHistogram-Java 2.1.4 as YCSB 0.17.0 exports them
//! (specs/ycsb.md §7.2), so a mongobench p99 and a YCSB p99 of the same samples are the same
//! number:
//! - percentile p of N samples: the count C = max(1, trunc(p/100·N + 0.5)); the value is the
//!   highest value equivalent to the first bucket whose cumulative count reaches C (the lowest
//!   equivalent for p = 0);
//! - mean: Σ count · medianEquivalent(bucket) / N (exact below 2048 µs);
//! - min: 0 if a 0 was recorded, else the lowest equivalent of the smallest bucket;
//! - max: the highest equivalent of the largest bucket.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant decimal digits every latency histogram keeps (values below 2048 µs are exact).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A new, empty latency histogram: values in µs, 3 significant digits, lowest discernible
/// value 1, and no upper bound (it resizes itself as larger values arrive, as YCSB's does).
pub fn new_histogram() -> Histogram<u64> {
    // Cannot fail: 3 significant digits is inside the 0..=5 range hdrhistogram accepts.
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is a valid precision")
}

/// Value at percentile `p` (0 to 100) by HdrHistogram-Java 2.1.4's rule; 0 for an empty
/// histogram.
pub fn value_at_percentile(histogram: &Histogram<u64>, p: f64) -> u64 {
    let total = histogram.len();
    if total == 0 {
        return 0;
    }
    let p = p.min(100.0);
    // The float expression and the truncating cast mirror the Java code on purpose.
    let wanted = (((p / 100.0) * total as f64 + 0.5) as u64).max(1);
    let mut cumulative = 0u64;
    for bucket in histogram.iter_recorded() {
        cumulative += bucket.count_at_value();
        if cumulative >= wanted {
            let value = bucket.value_iterated_to();
            return if p == 0.0 {
                histogram.lowest_equivalent(value)
            } else {
                histogram.highest_equivalent(value)
            };
        }
    }
    // Unreachable while counts add up to `total`; the largest value is the honest fallback.
    histogram.highest_equivalent(histogram.max())
}

/// Mean by HdrHistogram-Java's rule (median equivalents weighted by count); `None` when empty.
pub fn mean(histogram: &Histogram<u64>) -> Option<f64> {
    let total = histogram.len();
    if total == 0 {
        return None;
    }
    let sum: f64 = histogram
        .iter_recorded()
        .map(|b| (histogram.median_equivalent(b.value_iterated_to()) * b.count_at_value()) as f64)
        .sum();
    Some(sum / total as f64)
}

/// Smallest recorded value (0 if a 0 was recorded, else its bucket's lowest equivalent);
/// `None` when empty.
pub fn min(histogram: &Histogram<u64>) -> Option<u64> {
    histogram
        .iter_recorded()
        .next()
        .map(|b| histogram.lowest_equivalent(b.value_iterated_to()))
}

/// Largest recorded value (its bucket's highest equivalent); `None` when empty.
pub fn max(histogram: &Histogram<u64>) -> Option<u64> {
    histogram
        .iter_recorded()
        .last()
        .map(|b| histogram.highest_equivalent(b.value_iterated_to()))
}

/// The figures a report shows for one histogram. All latencies in µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LatencySummary {
    /// Samples recorded.
    pub count: u64,
    /// Mean (µs).
    pub mean: f64,
    /// Smallest sample (µs).
    pub min: u64,
    /// Median (µs).
    pub p50: u64,
    /// 95th percentile (µs).
    pub p95: u64,
    /// 99th percentile (µs).
    pub p99: u64,
    /// 99.9th percentile (µs).
    pub p999: u64,
    /// Largest sample (µs).
    pub max: u64,
}

impl LatencySummary {
    /// Summary of `histogram`; `None` when it holds no sample.
    pub fn of(histogram: &Histogram<u64>) -> Option<LatencySummary> {
        Some(LatencySummary {
            count: histogram.len(),
            mean: mean(histogram)?,
            min: min(histogram)?,
            p50: value_at_percentile(histogram, 50.0),
            p95: value_at_percentile(histogram, 95.0),
            p99: value_at_percentile(histogram, 99.0),
            p999: value_at_percentile(histogram, 99.9),
            max: max(histogram)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram_of(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn percentiles_of_one_to_one_hundred_are_exact_below_2048() {
        let values: Vec<u64> = (1..=100).collect();
        let h = histogram_of(&values);
        // C = trunc(p/100·100 + 0.5): p50 → 50th value, p95 → 95th, p99 → 99th,
        // p99.9 → trunc(100.4) = 100th.
        assert_eq!(value_at_percentile(&h, 50.0), 50);
        assert_eq!(value_at_percentile(&h, 95.0), 95);
        assert_eq!(value_at_percentile(&h, 99.0), 99);
        assert_eq!(value_at_percentile(&h, 99.9), 100);
        assert_eq!(value_at_percentile(&h, 100.0), 100);
        assert_eq!(value_at_percentile(&h, 0.0), 1);
    }

    #[test]
    fn percentile_count_rounds_half_up() {
        // N = 10. p = 25: trunc(2.5 + 0.5) = 3 → the 3rd value. p = 15: trunc(1.5 + 0.5) = 2 →
        // the 2nd. p = 14: trunc(1.4 + 0.5) = 1 → the 1st (YCSB master's ceil rule would take
        // the 2nd).
        let h = histogram_of(&[10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
        assert_eq!(value_at_percentile(&h, 25.0), 30);
        assert_eq!(value_at_percentile(&h, 15.0), 20);
        assert_eq!(value_at_percentile(&h, 14.0), 10);
    }

    #[test]
    fn values_above_2048_report_their_bucket_bounds() {
        // 3000 lies in the 2048..4095 range, where buckets are 2 wide: [3000, 3001].
        // 5001 lies in 4096..8191, 4 wide: [5000, 5003]. 10_001 in 8192..16383, 8 wide:
        // [10000, 10007].
        let h = histogram_of(&[3000, 5001, 10_001]);
        assert_eq!(min(&h), Some(3000));
        assert_eq!(max(&h), Some(10_007));
        assert_eq!(value_at_percentile(&h, 50.0), 5003);
        // Median equivalents: 3000 + 1 = 3001, 5000 + 2 = 5002, 10000 + 4 = 10004.
        assert_eq!(mean(&h), Some((3001.0 + 5002.0 + 10_004.0) / 3.0));
    }

    #[test]
    fn min_is_zero_when_a_zero_was_recorded() {
        let h = histogram_of(&[0, 7, 9]);
        assert_eq!(min(&h), Some(0));
        assert_eq!(mean(&h), Some(16.0 / 3.0));
    }

    #[test]
    fn empty_histogram_has_no_summary_and_zero_percentiles() {
        let h = new_histogram();
        assert_eq!(LatencySummary::of(&h), None);
        assert_eq!(value_at_percentile(&h, 99.0), 0);
        assert_eq!(min(&h), None);
        assert_eq!(max(&h), None);
    }

    #[test]
    fn summary_of_a_known_histogram() {
        // 1000 samples: 990 of 100 µs, 9 of 2500 µs (bucket [2500, 2501]), 1 of 40_000 µs
        // (16384..32767 is 16 wide, 32768..65535 is 32 wide: bucket [40000, 40031]).
        let mut h = new_histogram();
        h.record_n(100, 990).unwrap();
        h.record_n(2500, 9).unwrap();
        h.record(40_000).unwrap();
        let s = LatencySummary::of(&h).unwrap();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min, 100);
        assert_eq!(s.p50, 100);
        assert_eq!(s.p95, 100);
        assert_eq!(s.p99, 100); // C = 990
        assert_eq!(s.p999, 2501); // C = trunc(999.5) = 999
        assert_eq!(s.max, 40_031);
        // (990·100 + 9·2501 + 1·40016) / 1000
        assert_eq!(s.mean, (99_000.0 + 22_509.0 + 40_016.0) / 1000.0);
    }
}
