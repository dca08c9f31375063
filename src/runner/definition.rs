//! What one runner executes ([`Benchmark`]: the run of one platform's targets, derived once
//! from its plan), the targets it runs against ([`Connected`]), and what its caller is told as
//! the run goes ([`Events`], [`PrecisionOutcome`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::api::{CanaryPolicy, DatasetSize, VerdictMetric};
use crate::contract::{CpuSet, Schedule};
use crate::plan::{self, PlannedCell, RunSettings, WorkloadPlan};
use crate::result::{CellId, CellResult, VerdictDesign};

use super::cell::CellProgress;
use super::dataset::Seeded;
use super::server::ConnectedTarget;
use super::sink::SinkError;
use super::slots::{PrecisionGoal, Standing};
use crate::verdict::sequential::Need;

/// What one runner executes.
#[derive(Debug, Clone)]
pub struct Benchmark {
    /// The MongoBenchmark's name (or the local run's).
    pub name: String,
    /// This execution's identifier.
    pub run_id: String,
    /// The platform the targets run on.
    pub platform: String,
    pub plan: WorkloadPlan,
    pub settings: RunSettings,
    /// `spec.dataset.reuseDataset`: keep a stored dataset of the same identity whose digest
    /// verifies, instead of seeding fresh at the first size.
    pub reuse_dataset: bool,
    /// Sizes as the spec writes them, ascending.
    pub sizes: Vec<(String, DatasetSize)>,
    pub repetitions: u32,
    /// `spec.precision`: slots added past `repetitions` (the pilot) until every comparison
    /// has the slots its pilot's spread asks for (`slots.rs`).
    pub precision: Option<PrecisionGoal>,
    /// `spec.canaryPolicy`: what a deviating noise canary does to its cell.
    pub canary_policy: CanaryPolicy,
    /// Per target, its server nodes' canaries (`host:port`), asked before each of its cells;
    /// only provisioned replica sets have them.
    pub server_canaries: BTreeMap<String, Vec<String>>,
    /// The target compared with the others (the spec's baseline; the first target when that
    /// is not among the targets run).
    pub baseline: String,
    /// Cells already done (their results exist): skipped.
    pub completed: BTreeSet<String>,
    /// How a slot's cells run: one after another, or at the same time.
    pub schedule: Schedule,
    /// Under [`Schedule::Simultaneous`] on this machine: a CPU set per target, which they
    /// trade slot by slot (empty: no sides).
    pub sides: Vec<CpuSet>,
    /// `spec.verdict.metrics`: the figures that get verdicts, recorded in every result with the
    /// pilot (`design`); a precision goal applies to each.
    pub metrics: Vec<VerdictMetric>,
}

/// Why a size stopped adding slots under a precision goal.
#[derive(Debug, Clone, PartialEq)]
pub enum PrecisionOutcome {
    /// Every comparison had the slots its pilot asked for after `repetitions` slots.
    Reached {
        repetitions: u32,
        widest_mde_percent: f64,
    },
    /// A limit came first; `standing` is where the size stood then.
    NotReached {
        repetitions: u32,
        limit: String,
        standing: Standing,
    },
}

impl std::fmt::Display for PrecisionOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrecisionOutcome::Reached {
                repetitions,
                widest_mde_percent,
            } => write!(
                f,
                "PrecisionReached: MDE {widest_mde_percent:.1}% after {repetitions} reps"
            ),
            PrecisionOutcome::NotReached {
                repetitions,
                limit,
                standing,
            } => {
                let mde = match standing {
                    Standing::Short {
                        target,
                        need: Need::Pilot { pairs },
                    } => format!("a pilot of {pairs} valid pairs, too few for an MDE ({target})"),
                    Standing::Short {
                        target,
                        need:
                            Need::Slots {
                                slots, mde_percent, ..
                            },
                    } => format!("MDE {mde_percent:.1}%, {slots} slots needed ({target})"),
                    Standing::Short {
                        target,
                        need: Need::Unreachable { mde_percent },
                    } => format!("MDE {mde_percent:.1}%, the goal out of reach ({target})"),
                    Standing::Reached { widest_mde_percent } => {
                        format!("MDE {widest_mde_percent:.1}%")
                    }
                };
                write!(
                    f,
                    "PrecisionNotReached: {mde} after {repetitions} reps ({limit})"
                )
            }
        }
    }
}

/// A target with the URI it was reached at.
pub struct Connected {
    pub target: ConnectedTarget,
    pub uri: String,
}

/// What the caller does as the run goes.
pub trait Events {
    /// A target is being brought to a size.
    fn seeding(&mut self, target: &str, size: &str, documents: u64);
    /// A target reached a size.
    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded);
    /// A cell starts; `progress` is live until [`Events::finished`].
    fn started(&mut self, cell: &PlannedCell, progress: &CellProgress);
    /// A cell ended with `result` (complete, invalid or incomplete). An error stops the run.
    fn finished(
        &mut self,
        cell: &PlannedCell,
        result: &CellResult,
    ) -> impl std::future::Future<Output = Result<(), SinkError>>;
    /// A size stopped adding slots under the precision goal.
    fn precision(&mut self, size: &str, outcome: &PrecisionOutcome) {
        tracing::info!(size, "{outcome}");
    }
}

impl Benchmark {
    /// The comparison's design every result records: the verdict metrics and, under a
    /// precision goal, the pilot (the planned slots, at least a verdict's minimum).
    pub(crate) fn design(&self) -> VerdictDesign {
        VerdictDesign {
            metrics: self.metrics.clone(),
            pilot_slots: self
                .precision
                .map(|goal| goal.design(self.repetitions).pilot as u32),
            precision_goal_percent: self.precision.map(|goal| goal.mde_percent),
        }
    }

    pub(crate) fn cell(
        &self,
        target: &str,
        size: &(String, DatasetSize),
        repetition: u32,
    ) -> PlannedCell {
        PlannedCell {
            id: plan::cell_id(target, &self.platform, &size.0, repetition),
            target: target.to_owned(),
            platform: self.platform.clone(),
            size: size.0.clone(),
            dataset: size.1,
            repetition,
        }
    }

    pub(crate) fn cell_id(&self, cell: &PlannedCell) -> CellId {
        CellId {
            benchmark: self.name.clone(),
            run_id: self.run_id.clone(),
            workload: self.plan.name(),
            target: cell.target.clone(),
            platform: cell.platform.clone(),
            size: cell.size.clone(),
            repetition: cell.repetition,
        }
    }
}
