//! The measured phase of a cell: throughput, latency summaries and full histograms per
//! operation label and overall.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::histogram_codec::EncodedHistogram;
use crate::measure::{ErrorCounts, LabelRecord, Latencies, LatencyMode, LatencySummary, Recorder};

/// How operations were issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LoopMode {
    /// Each worker sends its next operation when the previous one completed.
    Closed,
    /// Operations start on a schedule at a target rate, whatever the server's speed.
    Open,
}

/// Full histograms of one label (V2+DEFLATE, base64 in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Histograms {
    /// Latency of successful operations (µs).
    pub latency: EncodedHistogram,
    /// Service time of successful operations (µs); only when latency is from the intended
    /// start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncorrected: Option<EncodedHistogram>,
    /// Latency of failed operations (µs); only when some failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<EncodedHistogram>,
    /// Service time of failed operations (µs); only when some failed and latency is from the
    /// intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_uncorrected: Option<EncodedHistogram>,
}

/// Everything measured for one operation label, or for all top-level operations together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationResult {
    /// Completed operations, successful and failed.
    pub completed: u64,
    /// Successful operations.
    pub succeeded: u64,
    /// Successful operations per second of the measured window: a server that fails fast
    /// does not look faster.
    pub ops_per_sec: f64,
    /// Failed ÷ completed operations (0 when none completed).
    pub error_rate: f64,
    /// Latency of successful operations (µs); `None` when none succeeded.
    pub latency_us: Option<LatencySummary>,
    /// Service time of successful operations (µs), when latency is from the intended start.
    pub uncorrected_latency_us: Option<LatencySummary>,
    /// Latency of failed operations (µs); `None` when none failed.
    pub failed_latency_us: Option<LatencySummary>,
    /// Failures by kind.
    pub errors: ErrorCounts,
    /// Completions per wall-clock second of the window (the last second may be partial).
    pub per_second: Vec<u64>,
    /// Latencies too large for the histogram, recorded as its largest value (normally 0).
    pub overflows: u64,
    /// The full histograms.
    pub histograms: Histograms,
}

impl OperationResult {
    /// Result of one recorded label over a window of `window`.
    pub fn from_record(record: &LabelRecord, window: Duration) -> OperationResult {
        let summary = |h: &Option<&hdrhistogram::Histogram<u64>>| h.and_then(LatencySummary::of);
        let ok: &Latencies = record.ok();
        let failed = record.failed();
        let seconds = window.as_secs_f64();
        OperationResult {
            completed: record.completed(),
            succeeded: record.succeeded(),
            ops_per_sec: if seconds > 0.0 {
                record.succeeded() as f64 / seconds
            } else {
                0.0
            },
            error_rate: if record.completed() > 0 {
                (record.completed() - record.succeeded()) as f64 / record.completed() as f64
            } else {
                0.0
            },
            latency_us: LatencySummary::of(&ok.latency),
            uncorrected_latency_us: summary(&ok.uncorrected.as_ref()),
            failed_latency_us: summary(&failed.map(|f| &f.latency)),
            errors: *record.errors(),
            per_second: record.per_second().to_vec(),
            overflows: record.overflows(),
            histograms: Histograms {
                latency: EncodedHistogram(ok.latency.clone()),
                uncorrected: ok.uncorrected.clone().map(EncodedHistogram),
                failed: failed.map(|f| EncodedHistogram(f.latency.clone())),
                failed_uncorrected: failed
                    .and_then(|f| f.uncorrected.clone())
                    .map(EncodedHistogram),
            },
        }
    }
}

/// The measured phase of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeasuredPhase {
    /// Closed or open loop.
    pub loop_mode: LoopMode,
    /// The target rate of an open or throttled loop (ops/s).
    pub target_ops_per_sec: Option<f64>,
    /// What the main histograms measure.
    pub latency_mode: LatencyMode,
    /// Length of the measured window (µs), warm-up excluded.
    pub duration_us: u64,
    /// All top-level operations together (nested measurements such as the READ inside a YCSB
    /// READ-MODIFY-WRITE are not counted twice).
    pub overall: OperationResult,
    /// Per operation label.
    pub operations: BTreeMap<String, OperationResult>,
}

impl MeasuredPhase {
    /// The measured phase from the merged recorder of all workers and the window length.
    pub fn from_recorder(
        recorder: &Recorder,
        window: Duration,
        loop_mode: LoopMode,
        target_ops_per_sec: Option<f64>,
    ) -> MeasuredPhase {
        MeasuredPhase {
            loop_mode,
            target_ops_per_sec,
            latency_mode: recorder.mode(),
            duration_us: u64::try_from(window.as_micros()).unwrap_or(u64::MAX),
            overall: OperationResult::from_record(recorder.overall(), window),
            operations: recorder
                .labels()
                .map(|(label, record)| {
                    (
                        label.to_owned(),
                        OperationResult::from_record(record, window),
                    )
                })
                .collect(),
        }
    }

    /// The measured window.
    pub fn duration(&self) -> Duration {
        Duration::from_micros(self.duration_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{ErrorKind, Timing};
    use std::time::Instant;

    #[test]
    fn phase_from_a_recorder_carries_counts_rates_and_histograms() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, LatencyMode::Intended);
        let at = |ms: u64, took_us: u64, late_us: u64| Timing {
            intended: Some(t0 + Duration::from_millis(ms)),
            sent: t0 + Duration::from_millis(ms) + Duration::from_micros(late_us),
            done: t0
                + Duration::from_millis(ms)
                + Duration::from_micros(late_us)
                + Duration::from_micros(took_us),
        };
        r.record("find", at(100, 200, 0), Ok(()));
        r.record("find", at(1_100, 300, 1_000), Ok(()));
        r.record("insert", at(1_200, 50, 0), Err(ErrorKind::DuplicateKey));
        let phase =
            MeasuredPhase::from_recorder(&r, Duration::from_secs(2), LoopMode::Open, Some(1.5));

        assert_eq!(phase.duration_us, 2_000_000);
        assert_eq!(phase.latency_mode, LatencyMode::Intended);
        assert_eq!(phase.overall.completed, 3);
        assert_eq!(phase.overall.succeeded, 2);
        // Two of the three succeeded within 2 s; one of three failed.
        assert_eq!(phase.overall.ops_per_sec, 1.0);
        assert_eq!(phase.overall.error_rate, 1.0 / 3.0);
        assert_eq!(phase.overall.per_second, [1, 2]);
        let find = &phase.operations["find"];
        assert_eq!(find.ops_per_sec, 1.0);
        // Intended latencies 200 and 1300 µs; service times 200 and 300 µs.
        let l = find.latency_us.unwrap();
        assert_eq!((l.min, l.max, l.mean), (200, 1_300, 750.0));
        let u = find.uncorrected_latency_us.unwrap();
        assert_eq!((u.min, u.max), (200, 300));
        assert!(find.failed_latency_us.is_none() && find.histograms.failed.is_none());
        let insert = &phase.operations["insert"];
        assert_eq!((insert.ops_per_sec, insert.error_rate), (0.0, 1.0));
        assert_eq!(insert.errors.duplicate_key, 1);
        assert_eq!(insert.latency_us, None);
        assert_eq!(insert.failed_latency_us.unwrap().max, 50);
        assert_eq!(
            insert
                .histograms
                .failed_uncorrected
                .as_ref()
                .unwrap()
                .0
                .count_at(50),
            1
        );
    }

    #[test]
    fn zero_length_window_has_zero_rate() {
        let r = Recorder::new(Instant::now(), LatencyMode::ServiceTime);
        let phase = MeasuredPhase::from_recorder(&r, Duration::ZERO, LoopMode::Closed, None);
        assert_eq!(phase.overall.ops_per_sec, 0.0);
        assert!(phase.operations.is_empty());
    }
}
