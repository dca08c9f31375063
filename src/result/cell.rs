//! Which cell of the matrix a result belongs to, how its run ended, and the time slot it ran
//! in when the targets of its run were interleaved.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether a cell's result can be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum CellStatus {
    /// Every phase ran to its end.
    Complete,
    /// The run stopped early; its figures are partial and must not be reported as valid.
    Incomplete {
        /// What stopped it (target, phase, error).
        #[serde(rename = "incompleteReason")]
        reason: String,
    },
}

/// Which cell of the matrix a result belongs to.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct CellId {
    /// Name of the MongoBenchmark (or of the local run).
    pub benchmark: String,
    /// Identifier of this execution of the benchmark.
    pub run_id: String,
    /// Workload name and version (`flights/v1`, `ycsb-a`).
    pub workload: String,
    /// Target name (the deployment under test).
    pub target: String,
    /// Platform name (node pool / hardware).
    pub platform: String,
    /// Dataset size as the spec names it (`1M`).
    pub size: String,
    /// Repetition number, from 1.
    pub repetition: u32,
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} {} target={} platform={} size={} repetition={}",
            self.benchmark,
            self.run_id,
            self.workload,
            self.target,
            self.platform,
            self.size,
            self.repetition
        )
    }
}

/// A cell measured at the same time as the others of its slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Simultaneous {
    /// When every cell of the slot began its measured phase (Unix milliseconds, the runner's
    /// clock): their per-second series are aligned from it.
    pub window_start_unix_ms: u64,
    /// The side the target ran on in this slot (0, 1, …), where the targets trade places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<u32>,
    /// That side's CPUs (`0-1,4`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_cpus: Option<String>,
}

/// Where a cell ran among the interleaved targets of its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Slot {
    /// The slot, from 1: slot k holds repetition k of every target.
    pub number: u32,
    /// The cell's place within its slot, from 0, in the slot's seeded random order.
    pub position: u32,
}

/// How a run's comparison was fixed before it ran (docs/results.md, "Verdicts"): the
/// declared verdict metrics and, under a precision goal, the pilot stage whose spread decides
/// how many slots run and which the two-stage test takes its spread from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerdictDesign {
    /// `spec.verdict.metrics`: the figures that get verdicts.
    pub metrics: Vec<crate::api::VerdictMetric>,
    /// With `spec.precision`: the slots of the pilot (the planned repetitions). Absent without
    /// a precision goal: every slot was planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pilot_slots: Option<u32>,
    /// With `spec.precision`: its goal (`mdePercent`), which also set the deviation the noise
    /// canaries were judged against (docs/results.md, "Noise canaries").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_goal_percent: Option<f64>,
}
