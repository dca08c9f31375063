//! The text report YCSB 0.17.0 prints at the end of a run (specs/ycsb.md §7.5), so existing
//! YCSB parsers and spreadsheets read mongobench results unchanged.
//!
//! Mapping from a result:
//! - `[OVERALL], RunTime(ms)` is the measured window (warm-up excluded), truncated to ms;
//!   `Throughput(ops/sec)` is 1000 · operations / RunTime, as YCSB computes it.
//! - JVM lines are the fixed `[TOTAL_GCs], Count, 0`, `[TOTAL_GC_TIME], Time(ms), 0`,
//!   `[TOTAL_GC_TIME_%], Time(%), 0.0`.
//! - Per label, `[NAME]` holds successful operations and every `Return=` count;
//!   `[NAME-FAILED]` the latencies of failed ones. Return codes: `OK`; `NOT_FOUND` for
//!   not-found failures; `ERROR` for every other failure (as the YCSB binding reports
//!   duplicate keys, timeouts and network errors).
//! - Plain names carry service time. A result measured from intended start times adds
//!   `[Intended-NAME]` and `[Intended-NAME-FAILED]` after all plain names, as YCSB's
//!   `measurement.interval=both` does.
//! - Labels are ordered READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE, VERIFY, CLEANUP, then
//!   any other label alphabetically.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::ReportError;
use super::java_format::{java_double, ordinal};
use crate::measure::latency::{max, mean, min, value_at_percentile};
use crate::measure::{ErrorKind, LatencyMode};
use crate::result::{CellResult, OperationResult};

/// YCSB's fixed label order; other labels follow alphabetically.
const YCSB_ORDER: [&str; 7] = [
    "READ",
    "UPDATE",
    "INSERT",
    "SCAN",
    "READ-MODIFY-WRITE",
    "VERIFY",
    "CLEANUP",
];

/// What YCSB's `hdrhistogram.percentiles` property would select.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbOptions {
    /// Percentile lines per measurement; YCSB 0.17.0's default is 95, 99.
    pub percentiles: Vec<f64>,
}

impl Default for YcsbOptions {
    fn default() -> Self {
        YcsbOptions {
            percentiles: vec![95.0, 99.0],
        }
    }
}

/// The YCSB 0.17.0 text report of one complete result, one `\n`-terminated line each.
///
/// # Errors
/// [`ReportError::Invalid`] for an incomplete result: YCSB parsers have no way to see the
/// mark, so an incomplete result is never rendered in this format.
pub fn render_ycsb(result: &CellResult, options: &YcsbOptions) -> Result<String, ReportError> {
    let measured = result.require_complete()?;
    let mut out = String::new();
    let runtime_ms = measured.duration_us / 1000;
    let throughput = 1000.0 * measured.overall.completed as f64 / runtime_ms as f64;
    line(&mut out, "OVERALL", "RunTime(ms)", &runtime_ms.to_string());
    line(
        &mut out,
        "OVERALL",
        "Throughput(ops/sec)",
        &java_double(throughput),
    );
    line(&mut out, "TOTAL_GCs", "Count", "0");
    line(&mut out, "TOTAL_GC_TIME", "Time(ms)", "0");
    line(&mut out, "TOTAL_GC_TIME_%", "Time(%)", "0.0");

    let mut labels: Vec<&str> = measured.operations.keys().map(String::as_str).collect();
    labels.sort_by_key(|l| {
        let rank = YCSB_ORDER
            .iter()
            .position(|o| o == l)
            .unwrap_or(YCSB_ORDER.len());
        (rank, *l)
    });
    let intended = measured.latency_mode == LatencyMode::Intended;

    for &label in &labels {
        let op = &measured.operations[label];
        // Plain names are service time: the uncorrected histogram when latency is intended.
        let ok = if intended {
            op.histograms.uncorrected.as_ref().map(|h| &h.0)
        } else {
            Some(&op.histograms.latency.0)
        };
        let empty = crate::measure::latency::new_histogram();
        measurement(&mut out, label, ok.unwrap_or(&empty), options);
        return_lines(&mut out, label, op);
        let failed = if intended {
            op.histograms.failed_uncorrected.as_ref()
        } else {
            op.histograms.failed.as_ref()
        };
        if let Some(failed) = failed.filter(|h| !h.0.is_empty()) {
            measurement(&mut out, &format!("{label}-FAILED"), &failed.0, options);
        }
    }
    if intended {
        for &label in &labels {
            let op = &measured.operations[label];
            if !op.histograms.latency.0.is_empty() {
                measurement(
                    &mut out,
                    &format!("Intended-{label}"),
                    &op.histograms.latency.0,
                    options,
                );
            }
            if let Some(failed) = op.histograms.failed.as_ref().filter(|h| !h.0.is_empty()) {
                measurement(
                    &mut out,
                    &format!("Intended-{label}-FAILED"),
                    &failed.0,
                    options,
                );
            }
        }
    }
    Ok(out)
}

fn line(out: &mut String, metric: &str, measurement: &str, value: &str) {
    // Writing to a String cannot fail.
    let _ = writeln!(out, "[{metric}], {measurement}, {value}");
}

/// One histogram's lines, with YCSB 0.17.0's values for an empty histogram
/// (min 9223372036854775807, average NaN, max and percentiles 0).
fn measurement(out: &mut String, name: &str, h: &Histogram<u64>, options: &YcsbOptions) {
    line(out, name, "Operations", &h.len().to_string());
    line(
        out,
        name,
        "AverageLatency(us)",
        &java_double(mean(h).unwrap_or(f64::NAN)),
    );
    line(
        out,
        name,
        "MinLatency(us)",
        &min(h).unwrap_or(i64::MAX as u64).to_string(),
    );
    line(
        out,
        name,
        "MaxLatency(us)",
        &max(h).unwrap_or(0).to_string(),
    );
    for &p in &options.percentiles {
        line(
            out,
            name,
            &format!("{}PercentileLatency(us)", ordinal(p)),
            &value_at_percentile(h, p).to_string(),
        );
    }
}

fn return_lines(out: &mut String, label: &str, op: &OperationResult) {
    let not_found = op.errors.get(ErrorKind::NotFound);
    let error = op.errors.total() - not_found;
    for (code, count) in [
        ("OK", op.succeeded),
        ("NOT_FOUND", not_found),
        ("ERROR", error),
    ] {
        if count > 0 {
            line(out, label, &format!("Return={code}"), &count.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::measure::{Recorder, Timing};
    use crate::result::testing::{cell, with_measured};
    use crate::result::{CellStatus, LoopMode, MeasuredPhase};

    /// Records `ops` (label, service µs, late µs, outcome) and wraps them in a result with a
    /// measured window of `window`.
    fn result(
        mode: LatencyMode,
        window: Duration,
        ops: &[(&str, u64, u64, Result<(), ErrorKind>)],
    ) -> CellResult {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, mode);
        for (i, &(label, service, late, outcome)) in ops.iter().enumerate() {
            let intended = t0 + Duration::from_millis(i as u64);
            let sent = intended + Duration::from_micros(late);
            let done = sent + Duration::from_micros(service);
            r.record(
                label,
                Timing {
                    intended: Some(intended),
                    sent,
                    done,
                },
                outcome,
            );
        }
        let loop_mode = match mode {
            LatencyMode::ServiceTime => LoopMode::Closed,
            LatencyMode::Intended => LoopMode::Open,
        };
        let measured = MeasuredPhase::from_recorder(&r, window, loop_mode, None);
        with_measured(cell("psmdb-8.0", "n2", "1M", 1), measured, None)
    }

    #[test]
    fn closed_loop_report_matches_ycsb_0_17_0_text() {
        let r = result(
            LatencyMode::ServiceTime,
            Duration::from_micros(10_000_999),
            &[
                ("READ", 100, 0, Ok(())),
                ("READ", 200, 0, Ok(())),
                ("UPDATE", 1_000, 0, Ok(())),
                ("READ", 300, 0, Ok(())),
                ("READ", 400, 0, Ok(())),
                ("READ", 500, 0, Err(ErrorKind::NotFound)),
                ("UPDATE", 3_000, 0, Ok(())),
                ("UPDATE", 50, 0, Err(ErrorKind::Timeout)),
            ],
        );
        // RunTime 10000 ms (10 000 999 µs truncated); throughput 1000·8/10000 = 0.8.
        // READ: C(95) = trunc(0.95·4 + 0.5) = 4 → 400. UPDATE: 3000 is bucket [3000, 3001]
        // (median 3001), so mean (1000 + 3001) / 2 = 2000.5, max 3001, C(95) = 2 → 3001.
        let expected = "\
[OVERALL], RunTime(ms), 10000
[OVERALL], Throughput(ops/sec), 0.8
[TOTAL_GCs], Count, 0
[TOTAL_GC_TIME], Time(ms), 0
[TOTAL_GC_TIME_%], Time(%), 0.0
[READ], Operations, 4
[READ], AverageLatency(us), 250.0
[READ], MinLatency(us), 100
[READ], MaxLatency(us), 400
[READ], 95thPercentileLatency(us), 400
[READ], 99thPercentileLatency(us), 400
[READ], Return=OK, 4
[READ], Return=NOT_FOUND, 1
[READ-FAILED], Operations, 1
[READ-FAILED], AverageLatency(us), 500.0
[READ-FAILED], MinLatency(us), 500
[READ-FAILED], MaxLatency(us), 500
[READ-FAILED], 95thPercentileLatency(us), 500
[READ-FAILED], 99thPercentileLatency(us), 500
[UPDATE], Operations, 2
[UPDATE], AverageLatency(us), 2000.5
[UPDATE], MinLatency(us), 1000
[UPDATE], MaxLatency(us), 3001
[UPDATE], 95thPercentileLatency(us), 3001
[UPDATE], 99thPercentileLatency(us), 3001
[UPDATE], Return=OK, 2
[UPDATE], Return=ERROR, 1
[UPDATE-FAILED], Operations, 1
[UPDATE-FAILED], AverageLatency(us), 50.0
[UPDATE-FAILED], MinLatency(us), 50
[UPDATE-FAILED], MaxLatency(us), 50
[UPDATE-FAILED], 95thPercentileLatency(us), 50
[UPDATE-FAILED], 99thPercentileLatency(us), 50
";
        assert_eq!(render_ycsb(&r, &YcsbOptions::default()).unwrap(), expected);
    }

    #[test]
    fn open_loop_report_adds_intended_names_and_empty_blocks_use_0_17_0_values() {
        // Two SCANs: 100 µs service each, the second sent 900 µs late (intended 1000 µs).
        // One INSERT that failed with a duplicate key after 20 µs, sent on time.
        let r = result(
            LatencyMode::Intended,
            Duration::from_secs(3),
            &[
                ("SCAN", 100, 0, Ok(())),
                ("SCAN", 100, 900, Ok(())),
                ("INSERT", 20, 0, Err(ErrorKind::DuplicateKey)),
            ],
        );
        let options = YcsbOptions {
            percentiles: vec![50.0, 99.9],
        };
        // Throughput 1000·3/3000 = 1.0. INSERT has no success: an empty [INSERT] block with
        // YCSB 0.17.0's Min 9223372036854775807 and Avg NaN, then its Return line.
        let expected = "\
[OVERALL], RunTime(ms), 3000
[OVERALL], Throughput(ops/sec), 1.0
[TOTAL_GCs], Count, 0
[TOTAL_GC_TIME], Time(ms), 0
[TOTAL_GC_TIME_%], Time(%), 0.0
[INSERT], Operations, 0
[INSERT], AverageLatency(us), NaN
[INSERT], MinLatency(us), 9223372036854775807
[INSERT], MaxLatency(us), 0
[INSERT], 50thPercentileLatency(us), 0
[INSERT], 99.9PercentileLatency(us), 0
[INSERT], Return=ERROR, 1
[INSERT-FAILED], Operations, 1
[INSERT-FAILED], AverageLatency(us), 20.0
[INSERT-FAILED], MinLatency(us), 20
[INSERT-FAILED], MaxLatency(us), 20
[INSERT-FAILED], 50thPercentileLatency(us), 20
[INSERT-FAILED], 99.9PercentileLatency(us), 20
[SCAN], Operations, 2
[SCAN], AverageLatency(us), 100.0
[SCAN], MinLatency(us), 100
[SCAN], MaxLatency(us), 100
[SCAN], 50thPercentileLatency(us), 100
[SCAN], 99.9PercentileLatency(us), 100
[SCAN], Return=OK, 2
[Intended-INSERT-FAILED], Operations, 1
[Intended-INSERT-FAILED], AverageLatency(us), 20.0
[Intended-INSERT-FAILED], MinLatency(us), 20
[Intended-INSERT-FAILED], MaxLatency(us), 20
[Intended-INSERT-FAILED], 50thPercentileLatency(us), 20
[Intended-INSERT-FAILED], 99.9PercentileLatency(us), 20
[Intended-SCAN], Operations, 2
[Intended-SCAN], AverageLatency(us), 550.0
[Intended-SCAN], MinLatency(us), 100
[Intended-SCAN], MaxLatency(us), 1000
[Intended-SCAN], 50thPercentileLatency(us), 100
[Intended-SCAN], 99.9PercentileLatency(us), 1000
";
        assert_eq!(render_ycsb(&r, &options).unwrap(), expected);
    }

    #[test]
    fn other_labels_follow_the_ycsb_names_alphabetically() {
        let r = result(
            LatencyMode::ServiceTime,
            Duration::from_secs(1),
            &[
                ("find", 10, 0, Ok(())),
                ("aggregate", 10, 0, Ok(())),
                ("CLEANUP", 10, 0, Ok(())),
                ("READ", 10, 0, Ok(())),
            ],
        );
        let text = render_ycsb(&r, &YcsbOptions::default()).unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with("Operations, 1"))
            .map(|l| l.split(']').next().unwrap())
            .collect();
        assert_eq!(names, ["[READ", "[CLEANUP", "[aggregate", "[find"]);
    }

    #[test]
    fn incomplete_results_are_refused() {
        let mut r = result(LatencyMode::ServiceTime, Duration::from_secs(1), &[]);
        r.status = CellStatus::Incomplete {
            reason: "server killed".into(),
        };
        let e = render_ycsb(&r, &YcsbOptions::default()).unwrap_err();
        assert!(e.to_string().contains("incomplete (server killed)"), "{e}");
    }
}
