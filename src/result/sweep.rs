//! A load sweep's steps and knee (docs/results.md, "Load sweeps"): the cell's `measured` and
//! its other figures are those of the knee step; this holds the curve.

use serde::{Deserialize, Serialize};

/// The steps of a sweep and which one is the knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SweepRecord {
    /// The latency goal, as `p99 ≤ 10ms` (` on read` when it bounds one operation class);
    /// absent when the sweep has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The goal's bound (µs); absent without a goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_us: Option<u64>,
    /// Every step, in the order they ran.
    pub steps: Vec<SweepStep>,
    /// Index in `steps` of the knee: the sustained step of the highest load below every
    /// saturated one. Absent when no such step ran (the cell is then invalid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<usize>,
    /// Whether a saturated step lies above the knee; `false` means the sweep never saturated
    /// and the knee is only a lower bound.
    pub bounded: bool,
}

/// One step of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SweepStep {
    /// The total rate the step was paced to (ops/s); absent for a closed-loop step of a ladder
    /// of workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ops_per_sec: Option<u64>,
    /// Its workers, over all client processes.
    pub workers: u32,
    /// The rate it achieved (ops/s).
    pub ops_per_sec: f64,
    /// Share of its operations that failed.
    pub error_rate: f64,
    /// Median latency of all operations, from the intended start (µs); absent when none
    /// completed.
    pub p50_us: Option<u64>,
    /// 99th percentile (µs).
    pub p99_us: Option<u64>,
    /// 99.9th percentile (µs).
    pub p999_us: Option<u64>,
    /// The goal's percentile of the goal's operation class (µs); absent without a goal or a
    /// completed operation of that class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_us: Option<u64>,
    /// Why the step did not sustain its rate; absent when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturated: Option<String>,
}

impl SweepStep {
    /// The step's load as a reader names it: `1000 ops/s`, or `16 workers`.
    pub fn load(&self) -> String {
        match self.target_ops_per_sec {
            Some(rate) => format!("{rate} ops/s"),
            None if self.workers == 1 => "1 worker".to_owned(),
            None => format!("{} workers", self.workers),
        }
    }
}

impl SweepRecord {
    /// The knee step.
    pub fn knee_step(&self) -> Option<&SweepStep> {
        self.knee.and_then(|k| self.steps.get(k))
    }
}
