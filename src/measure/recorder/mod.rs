//! The [`Recorder`]: latency histograms, error counts and per-second completions per operation
//! label, merged across workers after the phase.
//!
//! Uses the measure folder's `error_kind` and `latency`; nothing outside it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::measure::error_kind::{ErrorCounts, ErrorKind};
use crate::measure::latency::new_histogram;

/// What the main latency histograms measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LatencyMode {
    /// From the moment the operation was sent until it completed (closed loop; YCSB's default).
    ServiceTime,
    /// From the moment the schedule intended the operation to start until it completed (open
    /// loop, or a throttled closed loop). The service time is kept beside it as `uncorrected`.
    Intended,
}

/// When one operation was due, sent and completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// When the schedule wanted it to start; `None` without a schedule. Under
    /// [`LatencyMode::Intended`] a missing value counts as `sent`.
    pub intended: Option<Instant>,
    /// When the first command went out.
    pub sent: Instant,
    /// When the last reply came back.
    pub done: Instant,
}

/// Latencies of one outcome (successes or failures) of one label.
#[derive(Debug, Clone, PartialEq)]
pub struct Latencies {
    /// The headline latency in µs: service time or intended-start latency per [`LatencyMode`].
    pub latency: Histogram<u64>,
    /// Service time in µs, kept only under [`LatencyMode::Intended`].
    pub uncorrected: Option<Histogram<u64>>,
}

impl Latencies {
    fn new(mode: LatencyMode) -> Latencies {
        Latencies {
            latency: new_histogram(),
            uncorrected: (mode == LatencyMode::Intended).then(new_histogram),
        }
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.latency.len()
    }

    fn record(&mut self, mode: LatencyMode, timing: &Timing, overflows: &mut u64) {
        let service = micros(timing.done.saturating_duration_since(timing.sent));
        match mode {
            LatencyMode::ServiceTime => record_value(&mut self.latency, service, overflows),
            LatencyMode::Intended => {
                let from = timing.intended.unwrap_or(timing.sent);
                let intended = micros(timing.done.saturating_duration_since(from));
                record_value(&mut self.latency, intended, overflows);
                if let Some(uncorrected) = &mut self.uncorrected {
                    record_value(uncorrected, service, overflows);
                }
            }
        }
    }

    fn add(&mut self, other: &Latencies) -> Result<(), MergeError> {
        self.latency.add(&other.latency).map_err(merge_error)?;
        if let (Some(mine), Some(theirs)) = (&mut self.uncorrected, &other.uncorrected) {
            mine.add(theirs).map_err(merge_error)?;
        }
        Ok(())
    }
}

/// Everything recorded for one label (or for all top-level operations together).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRecord {
    ok: Latencies,
    failed: Option<Latencies>,
    errors: ErrorCounts,
    per_second: Vec<u64>,
    overflows: u64,
}

impl LabelRecord {
    fn new(mode: LatencyMode) -> LabelRecord {
        LabelRecord {
            ok: Latencies::new(mode),
            failed: None,
            errors: ErrorCounts::default(),
            per_second: Vec::new(),
            overflows: 0,
        }
    }

    /// Latencies of successful operations.
    pub fn ok(&self) -> &Latencies {
        &self.ok
    }

    /// Latencies of failed operations (YCSB's `<NAME>-FAILED`); `None` if none failed.
    pub fn failed(&self) -> Option<&Latencies> {
        self.failed.as_ref()
    }

    /// Failures by kind.
    pub fn errors(&self) -> &ErrorCounts {
        &self.errors
    }

    /// Completed operations (successful and failed) per wall-clock second since the phase
    /// start: element `i` counts completions in `[i, i + 1)` s. The last element usually covers
    /// a partial second.
    pub fn per_second(&self) -> &[u64] {
        &self.per_second
    }

    /// Successful operations.
    pub fn succeeded(&self) -> u64 {
        self.ok.count()
    }

    /// Completed operations, successful or not.
    pub fn completed(&self) -> u64 {
        self.ok.count() + self.failed.as_ref().map_or(0, Latencies::count)
    }

    /// Latencies the histograms could not hold and recorded as their largest trackable value
    /// (practically never: the histograms resize themselves).
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    fn record(
        &mut self,
        mode: LatencyMode,
        start: Instant,
        timing: &Timing,
        outcome: Result<(), ErrorKind>,
    ) {
        match outcome {
            Ok(()) => self.ok.record(mode, timing, &mut self.overflows),
            Err(kind) => {
                self.errors.count(kind);
                self.failed
                    .get_or_insert_with(|| Latencies::new(mode))
                    .record(mode, timing, &mut self.overflows);
            }
        }
        let second = timing.done.saturating_duration_since(start).as_secs();
        let second = usize::try_from(second).unwrap_or(usize::MAX);
        if self.per_second.len() <= second {
            self.per_second.resize(second + 1, 0);
        }
        self.per_second[second] += 1;
    }

    fn add(&mut self, mode: LatencyMode, other: &LabelRecord) -> Result<(), MergeError> {
        self.ok.add(&other.ok)?;
        if let Some(theirs) = &other.failed {
            self.failed
                .get_or_insert_with(|| Latencies::new(mode))
                .add(theirs)?;
        }
        self.errors.add(&other.errors);
        if self.per_second.len() < other.per_second.len() {
            self.per_second.resize(other.per_second.len(), 0);
        }
        for (mine, theirs) in self.per_second.iter_mut().zip(&other.per_second) {
            *mine += theirs;
        }
        self.overflows += other.overflows;
        Ok(())
    }
}

/// Why two recorders could not be merged.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    /// The recorders were started at different instants, so their per-second buckets differ.
    #[error(
        "cannot merge recorders started at different instants ({offset:?} apart): create every \
         worker's recorder from the same phase start"
    )]
    StartMismatch {
        /// How far apart the starts are.
        offset: Duration,
    },
    /// The recorders measure different things.
    #[error(
        "cannot merge a {theirs:?} recorder into a {mine:?} recorder: every worker of a phase \
         must use the same latency mode"
    )]
    ModeMismatch {
        /// This recorder's mode.
        mine: LatencyMode,
        /// The other recorder's mode.
        theirs: LatencyMode,
    },
    /// hdrhistogram refused to add two histograms.
    #[error("cannot add latency histograms: {0}")]
    Histogram(String),
}

fn merge_error(e: hdrhistogram::AdditionError) -> MergeError {
    MergeError::Histogram(format!("{e:?}"))
}

/// Measurements of one phase by some of its workers (the runner shares a few recorders among
/// them, `runner::phase`). After the phase the runner merges them with [`Recorder::merge`],
/// which loses nothing because histograms add bucket by bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorder {
    start: Instant,
    mode: LatencyMode,
    overall: LabelRecord,
    labels: BTreeMap<String, LabelRecord>,
}

impl Recorder {
    /// An empty recorder for a phase that started at `start` (the same instant for every worker,
    /// so that per-second buckets line up).
    pub fn new(start: Instant, mode: LatencyMode) -> Recorder {
        Recorder {
            start,
            mode,
            overall: LabelRecord::new(mode),
            labels: BTreeMap::new(),
        }
    }

    /// The phase start the per-second buckets count from.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// What the main histograms measure.
    pub fn mode(&self) -> LatencyMode {
        self.mode
    }

    /// Records one top-level operation under `label` (it also counts towards
    /// [`Recorder::overall`]).
    pub fn record(&mut self, label: &str, timing: Timing, outcome: Result<(), ErrorKind>) {
        self.overall.record(self.mode, self.start, &timing, outcome);
        self.record_nested(label, timing, outcome);
    }

    /// Records a measurement that is part of a larger operation (YCSB's READ and UPDATE inside a
    /// READ-MODIFY-WRITE): it appears under `label` but not in the overall count.
    pub fn record_nested(&mut self, label: &str, timing: Timing, outcome: Result<(), ErrorKind>) {
        let mode = self.mode;
        let record = match self.labels.get_mut(label) {
            Some(record) => record,
            None => self
                .labels
                .entry(label.to_owned())
                .or_insert_with(|| LabelRecord::new(mode)),
        };
        record.record(mode, self.start, &timing, outcome);
    }

    /// Forgets everything recorded and restarts the per-second buckets at `start`: called at the
    /// end of the warm-up so that it never reaches the measured figures. An operation still in
    /// flight at that moment belongs to neither window: end its timer with
    /// [`OpTimer::discard`].
    pub fn reset(&mut self, start: Instant) {
        *self = Recorder::new(start, self.mode);
    }

    /// Adds `other`'s measurements to these.
    ///
    /// # Errors
    /// [`MergeError`] when the recorders have different starts or modes.
    pub fn merge(&mut self, other: &Recorder) -> Result<(), MergeError> {
        if self.start != other.start {
            let offset = if self.start > other.start {
                self.start - other.start
            } else {
                other.start - self.start
            };
            return Err(MergeError::StartMismatch { offset });
        }
        if self.mode != other.mode {
            return Err(MergeError::ModeMismatch {
                mine: self.mode,
                theirs: other.mode,
            });
        }
        self.overall.add(self.mode, &other.overall)?;
        for (label, theirs) in &other.labels {
            self.labels
                .entry(label.clone())
                .or_insert_with(|| LabelRecord::new(self.mode))
                .add(self.mode, theirs)?;
        }
        Ok(())
    }

    /// Merges all `recorders` into one.
    ///
    /// # Errors
    /// [`MergeError`] as for [`Recorder::merge`]; `None` is returned for an empty list.
    pub fn merge_all<'a>(
        recorders: impl IntoIterator<Item = &'a Recorder>,
    ) -> Result<Option<Recorder>, MergeError> {
        let mut iter = recorders.into_iter();
        let Some(first) = iter.next() else {
            return Ok(None);
        };
        let mut merged = first.clone();
        for other in iter {
            merged.merge(other)?;
        }
        Ok(Some(merged))
    }

    /// All top-level operations together, across labels.
    pub fn overall(&self) -> &LabelRecord {
        &self.overall
    }

    /// The record of one label.
    pub fn label(&self, label: &str) -> Option<&LabelRecord> {
        self.labels.get(label)
    }

    /// Every label with its record, in label order.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &LabelRecord)> {
        self.labels.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// Times one operation from when it is sent; it must end in exactly one of
/// [`OpTimer::success`], [`OpTimer::failure`] or [`OpTimer::discard`], and says so in the log
/// when dropped without one, so that no sample vanishes silently.
#[derive(Debug)]
pub struct OpTimer<'l> {
    label: &'l str,
    intended: Option<Instant>,
    sent: Instant,
    nested: bool,
    finished: bool,
}

impl<'l> OpTimer<'l> {
    /// Starts timing a top-level operation now; `intended` is its scheduled start, if any.
    pub fn start(label: &'l str, intended: Option<Instant>) -> OpTimer<'l> {
        OpTimer {
            label,
            intended,
            sent: Instant::now(),
            nested: false,
            finished: false,
        }
    }

    /// Starts timing a measurement that is part of a larger operation (see
    /// [`Recorder::record_nested`]).
    pub fn start_nested(label: &'l str, intended: Option<Instant>) -> OpTimer<'l> {
        OpTimer {
            nested: true,
            ..OpTimer::start(label, intended)
        }
    }

    /// The operation succeeded: records its latency now.
    pub fn success(self, recorder: &mut Recorder) {
        self.finish(recorder, Ok(()));
    }

    /// The operation failed: records its latency as a failure of `kind` now.
    pub fn failure(self, recorder: &mut Recorder, kind: ErrorKind) {
        self.finish(recorder, Err(kind));
    }

    /// The sample must not count (the phase ended while it was in flight).
    pub fn discard(mut self) {
        self.finished = true;
    }

    fn finish(mut self, recorder: &mut Recorder, outcome: Result<(), ErrorKind>) {
        self.finished = true;
        let timing = Timing {
            intended: self.intended,
            sent: self.sent,
            done: Instant::now(),
        };
        if self.nested {
            recorder.record_nested(self.label, timing, outcome);
        } else {
            recorder.record(self.label, timing, outcome);
        }
    }
}

impl Drop for OpTimer<'_> {
    fn drop(&mut self) {
        if !self.finished {
            tracing::warn!(
                label = self.label,
                "operation timer dropped without success(), failure() or discard(): its sample \
                 is lost"
            );
        }
    }
}

fn micros(d: Duration) -> u64 {
    // Truncating, as YCSB does: (end − start) / 1000 in integer nanoseconds.
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn record_value(histogram: &mut Histogram<u64>, value: u64, overflows: &mut u64) {
    if histogram.record(value).is_err() {
        histogram.saturating_record(value);
        *overflows += 1;
    }
}

#[cfg(test)]
mod tests;
