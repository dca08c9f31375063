//! Merging the measured phases of client processes that ran one cell together (each its own
//! share of the workers, started together): histograms are added bucket by bucket, so the
//! merged percentiles are those of every sample; counts are summed, per-second series are
//! summed second by second from the common start, and rates are recomputed over the longest
//! window.

use std::collections::BTreeMap;

use super::histogram_codec::EncodedHistogram;
use super::measured::{Histograms, MeasuredPhase, OperationResult};
use crate::measure::{ClientCpuUsage, ErrorCounts, LatencySummary, SATURATION_THRESHOLD};

/// Why parts cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no measured phase to merge")]
    Empty,
    /// The parts differ in this setting.
    #[error("the parts were measured differently: {0}")]
    Mismatch(&'static str),
    /// A histogram of this label would not add.
    #[error("histograms of {label:?} cannot be added: {message}")]
    Histogram {
        /// The operation label.
        label: String,
        /// Why.
        message: String,
    },
}

impl MeasuredPhase {
    /// One measured phase from `parts` measured by processes that started together.
    ///
    /// # Errors
    /// [`MergeError`] when there are no parts, they differ in loop or latency mode or target
    /// rate, or a histogram cannot be added.
    pub fn merge(parts: &[MeasuredPhase]) -> Result<MeasuredPhase, MergeError> {
        let first = parts.first().ok_or(MergeError::Empty)?;
        for p in &parts[1..] {
            if p.loop_mode != first.loop_mode {
                return Err(MergeError::Mismatch("loop mode"));
            }
            if p.latency_mode != first.latency_mode {
                return Err(MergeError::Mismatch("latency mode"));
            }
            if p.target_ops_per_sec != first.target_ops_per_sec {
                return Err(MergeError::Mismatch("target rate"));
            }
        }
        let duration_us = parts.iter().map(|p| p.duration_us).max().unwrap_or(0);
        let seconds = duration_us as f64 / 1e6;
        let overall: Vec<&OperationResult> = parts.iter().map(|p| &p.overall).collect();
        let mut labels: BTreeMap<&str, Vec<&OperationResult>> = BTreeMap::new();
        for p in parts {
            for (label, op) in &p.operations {
                labels.entry(label).or_default().push(op);
            }
        }
        Ok(MeasuredPhase {
            loop_mode: first.loop_mode,
            target_ops_per_sec: first.target_ops_per_sec,
            latency_mode: first.latency_mode,
            duration_us,
            overall: merge_operation("overall", &overall, seconds)?,
            operations: labels
                .into_iter()
                .map(|(label, ops)| Ok((label.to_owned(), merge_operation(label, &ops, seconds)?)))
                .collect::<Result<_, MergeError>>()?,
        })
    }
}

fn merge_operation(
    label: &str,
    parts: &[&OperationResult],
    seconds: f64,
) -> Result<OperationResult, MergeError> {
    let add = |pick: fn(&Histograms) -> Option<&EncodedHistogram>| {
        let mut sum: Option<EncodedHistogram> = None;
        for h in parts.iter().filter_map(|p| pick(&p.histograms)) {
            match &mut sum {
                None => sum = Some(h.clone()),
                Some(s) => s.0.add(&h.0).map_err(|e| MergeError::Histogram {
                    label: label.to_owned(),
                    message: e.to_string(),
                })?,
            }
        }
        Ok::<_, MergeError>(sum)
    };
    let latency = add(|h| Some(&h.latency))?.ok_or(MergeError::Empty)?;
    let uncorrected = add(|h| h.uncorrected.as_ref())?;
    let failed = add(|h| h.failed.as_ref())?;
    let failed_uncorrected = add(|h| h.failed_uncorrected.as_ref())?;
    let completed: u64 = parts.iter().map(|p| p.completed).sum();
    let succeeded: u64 = parts.iter().map(|p| p.succeeded).sum();
    let mut errors = ErrorCounts::default();
    let mut per_second: Vec<u64> = Vec::new();
    for p in parts {
        errors.add(&p.errors);
        add_series(&mut per_second, &p.per_second);
    }
    Ok(OperationResult {
        completed,
        succeeded,
        ops_per_sec: if seconds > 0.0 {
            succeeded as f64 / seconds
        } else {
            0.0
        },
        error_rate: if completed > 0 {
            (completed - succeeded) as f64 / completed as f64
        } else {
            0.0
        },
        latency_us: LatencySummary::of(&latency.0),
        uncorrected_latency_us: uncorrected.as_ref().and_then(|h| LatencySummary::of(&h.0)),
        failed_latency_us: failed.as_ref().and_then(|h| LatencySummary::of(&h.0)),
        errors,
        per_second,
        overflows: parts.iter().map(|p| p.overflows).sum(),
        histograms: Histograms {
            latency,
            uncorrected,
            failed,
            failed_uncorrected,
        },
    })
}

/// Adds `other` to `sum` second by second (both counted from the same start), `sum` growing to
/// the longer of the two.
pub fn add_series(sum: &mut Vec<u64>, other: &[u64]) {
    if other.len() > sum.len() {
        sum.resize(other.len(), 0);
    }
    for (s, n) in sum.iter_mut().zip(other) {
        *s += n;
    }
}

impl ClientCpuUsage {
    /// The CPU use of processes that ran one phase together: their times and cores summed over
    /// the longest wall time; saturated when any process was, since one saturated process
    /// limits the workers it runs whatever the others did.
    pub fn merge(parts: &[ClientCpuUsage]) -> Option<ClientCpuUsage> {
        let wall_us = parts.iter().map(|p| p.wall_us).max()?;
        let user_us: u64 = parts.iter().map(|p| p.user_us).sum();
        let system_us: u64 = parts.iter().map(|p| p.system_us).sum();
        let cores: u32 = parts.iter().map(|p| p.cores).sum();
        let budget = wall_us as f64 * f64::from(cores.max(1));
        let utilization = if budget > 0.0 {
            (user_us + system_us) as f64 / budget
        } else {
            0.0
        };
        Some(ClientCpuUsage {
            user_us,
            system_us,
            wall_us,
            cores,
            utilization,
            client_saturated: utilization >= SATURATION_THRESHOLD
                || parts.iter().any(|p| p.client_saturated),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::measure::{ErrorKind, LatencyMode, Recorder, Timing};
    use crate::result::LoopMode;

    /// A recorder started at `t0` holding `ops`: (label, completed at ms, took µs, outcome).
    fn recorder(t0: Instant, ops: &[(&str, u64, u64, Result<(), ErrorKind>)]) -> Recorder {
        let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
        for &(label, at_ms, took_us, outcome) in ops {
            let end = t0 + Duration::from_millis(at_ms);
            let timing = Timing {
                intended: None,
                sent: end - Duration::from_micros(took_us),
                done: end,
            };
            r.record(label, timing, outcome);
        }
        r
    }

    fn phase(r: &Recorder, window_ms: u64) -> MeasuredPhase {
        MeasuredPhase::from_recorder(r, Duration::from_millis(window_ms), LoopMode::Closed, None)
    }

    #[test]
    fn merged_parts_equal_one_recorder_of_every_sample() {
        let t0 = Instant::now();
        let a = [
            ("find", 100, 250, Ok(())),
            ("find", 1_200, 900, Ok(())),
            ("update", 1_500, 4_000, Err(ErrorKind::Timeout)),
        ];
        let b = [
            ("find", 300, 120, Ok(())),
            ("insert", 2_100, 75, Ok(())),
            ("find", 2_500, 33_000, Err(ErrorKind::NotFound)),
        ];
        let all: Vec<_> = a.iter().chain(&b).copied().collect();
        let merged = MeasuredPhase::merge(&[
            phase(&recorder(t0, &a), 2_000),
            phase(&recorder(t0, &b), 3_000),
        ])
        .unwrap();
        let whole = phase(&recorder(t0, &all), 3_000);
        assert_eq!(merged, whole);
        assert_eq!(merged.overall.completed, 6);
        assert_eq!(merged.overall.per_second, [2, 2, 2]);
        assert_eq!(merged.operations["find"].per_second, [2, 1, 1]);
        assert_eq!(merged.overall.errors.timeout, 1);
        assert_eq!(merged.overall.ops_per_sec, 4.0 / 3.0);
    }

    #[test]
    fn different_modes_and_no_parts_are_refused() {
        let t0 = Instant::now();
        let closed = phase(&recorder(t0, &[("find", 1, 10, Ok(()))]), 1_000);
        let mut open = closed.clone();
        open.loop_mode = LoopMode::Open;
        assert_eq!(
            MeasuredPhase::merge(&[closed, open]),
            Err(MergeError::Mismatch("loop mode"))
        );
        assert_eq!(MeasuredPhase::merge(&[]), Err(MergeError::Empty));
    }

    #[test]
    fn client_cpu_sums_time_and_cores_and_keeps_any_saturation() {
        let cpu = |user_us, wall_us, cores, saturated| ClientCpuUsage {
            user_us,
            system_us: 100_000,
            wall_us,
            cores,
            utilization: 0.0,
            client_saturated: saturated,
        };
        let merged = ClientCpuUsage::merge(&[
            cpu(900_000, 1_000_000, 1, false),
            cpu(400_000, 1_100_000, 2, false),
        ])
        .unwrap();
        assert_eq!(merged.user_us, 1_300_000);
        assert_eq!(merged.system_us, 200_000);
        assert_eq!(merged.wall_us, 1_100_000);
        assert_eq!(merged.cores, 3);
        assert_eq!(merged.utilization, 1_500_000.0 / 3_300_000.0);
        assert!(!merged.client_saturated);
        let one_saturated = ClientCpuUsage::merge(&[
            cpu(100, 1_000_000, 4, false),
            cpu(950_000, 1_000_000, 1, true),
        ])
        .unwrap();
        assert!(one_saturated.client_saturated);
        assert_eq!(ClientCpuUsage::merge(&[]), None);
    }
}
