//! What every phase of one cell generates against in this client process ([`CellInputs`]):
//! the plan and settings, the seeded dataset's shape, and this process's workers; and what a
//! caller watches while a cell runs ([`CellProgress`]).

use std::sync::Arc;
use std::time::Instant;

use crate::api::RunLength;
use crate::contract::CellStep;
use crate::plan::{RunSettings, WorkloadPlan};
use crate::runner::crew::ClientSlice;
use crate::runner::send::{
    Changes, ExecOptions, PhaseConfig, PhaseOutcome, Progress, Source, Stop, run_phase,
    template_names,
};
use crate::runner::server::ConnectedTarget;
use crate::workload::custom;
use crate::workload::flights::{self, Params};
use crate::workload::ycsb::{self, SharedState};

use super::failure::CellFailure;
use super::identity::measured_properties;

/// What a caller watches while a cell runs.
#[derive(Debug, Default, Clone)]
pub struct CellProgress {
    /// The step the cell is in.
    pub step: Arc<std::sync::Mutex<CellStep>>,
    pub ops: Arc<Progress>,
    /// The warm-up round running or last run, from 1 (`workload.warmupUntilSettled` runs
    /// several); 0 before the warm-up.
    pub warmup_round: Arc<std::sync::atomic::AtomicU32>,
}

impl CellProgress {
    pub(super) fn set(&self, step: CellStep) {
        *self.step.lock().expect("progress lock") = step;
    }
}

/// What every phase of one cell generates against, in this client process.
pub(crate) struct CellInputs<'a> {
    pub plan: &'a WorkloadPlan,
    pub settings: &'a RunSettings,
    pub dataset: flights::DatasetInfo,
    pub records: u64,
    /// The workers of this process.
    pub slice: ClientSlice,
}

impl<'a> CellInputs<'a> {
    /// The generators' view of a collection holding `records` seeded documents.
    pub fn new(
        plan: &'a WorkloadPlan,
        settings: &'a RunSettings,
        records: u64,
        slice: ClientSlice,
    ) -> CellInputs<'a> {
        let dataset = match plan {
            WorkloadPlan::Flights(params) => {
                flights::DatasetInfo::fresh(params.dataset_seed, records)
            }
            WorkloadPlan::Ycsb { .. } | WorkloadPlan::Custom(_) => {
                flights::DatasetInfo::fresh(0, records)
            }
        };
        CellInputs {
            plan,
            settings,
            dataset,
            records,
            slice,
        }
    }

    /// The source (and flights think time) of each worker of this process for a phase of
    /// `length`.
    pub(super) fn sources(
        &self,
        ycsb_shared: &Arc<SharedState>,
        length: RunLength,
        warmup: bool,
    ) -> Result<(Vec<Source>, Vec<Option<flights::ThinkTime>>), String> {
        let settings = if warmup {
            self.settings.for_warmup()
        } else {
            self.settings.clone()
        };
        let workers = settings.workers.max(1);
        let counts = match length {
            RunLength::Operations(t) => Some(flights::operations_per_worker(t, workers)),
            RunLength::Duration(_) => None,
        };
        let mut sources = Vec::new();
        let mut think = Vec::new();
        let changes = Arc::new(Changes::new(self.records));
        match self.plan {
            WorkloadPlan::Flights(params) => {
                let params = Params {
                    workers,
                    ..(**params).clone()
                };
                let phase = if warmup {
                    flights::RunPhase::Warmup
                } else {
                    flights::RunPhase::Measured
                };
                for w in self.slice.workers(workers) {
                    let worker = flights::Worker::new(&params, &self.dataset, w, phase)
                        .map_err(|e| e.to_string())?;
                    sources.push(Source::flights(
                        worker,
                        counts.as_ref().map(|c| c[w as usize]),
                        changes.clone(),
                    ));
                    think.push(Some(flights::ThinkTime::new(&params, w)));
                }
            }
            WorkloadPlan::Custom(plan) => {
                let phase = plan.phase(warmup);
                let seeded = plan.counts(self.records)?;
                changes.custom_collections(&plan.workload.written_collections(phase));
                let names = template_names(&plan.workload);
                for w in self.slice.workers(workers) {
                    let worker = custom::Worker::new(
                        &plan.workload,
                        plan.seed,
                        plan.dataset_seed,
                        phase,
                        w,
                        workers,
                        &seeded,
                    );
                    sources.push(Source::custom(
                        worker,
                        counts.as_ref().map(|c| c[w as usize]),
                        changes.clone(),
                        names.clone(),
                    ));
                    think.push(None);
                }
            }
            WorkloadPlan::Ycsb { raw, seed } => {
                let raw = measured_properties(raw, self.records, length);
                let props = ycsb::Properties::from_raw(&raw).map_err(|e| e.to_string())?;
                // Warm-up draws from its own stream so it never repeats the measured traffic.
                let seed = if warmup {
                    seed ^ 0x5741_524d_5550
                } else {
                    *seed
                };
                for w in self.slice.workers(workers) {
                    let worker = ycsb::Worker::new(
                        &props,
                        seed,
                        w,
                        workers,
                        ycsb::YcsbPhase::Run,
                        ycsb_shared,
                    )
                    .map_err(|e| e.to_string())?;
                    sources.push(Source::ycsb(worker, changes.clone()));
                    think.push(None);
                }
            }
        }
        Ok((sources, think))
    }

    /// Runs this process's workers of one phase of `length` (`warmup` or the measured phase)
    /// from `start_at` (now if `None`). YCSB run-phase inserts start at the record count: the
    /// collection holds exactly the seeded records.
    pub async fn phase(
        &self,
        name: &'static str,
        target: &ConnectedTarget,
        length: RunLength,
        start_at: Option<Instant>,
        progress: &CellProgress,
    ) -> Result<PhaseOutcome, CellFailure> {
        let warmup = name == "warmup";
        let settings = if warmup {
            self.settings.for_warmup()
        } else {
            self.settings.clone()
        };
        let exec = ExecOptions::from_settings(&settings)
            .map_err(|e| CellFailure::at("settings", e.to_string()))?;
        let shared = SharedState::new(self.records);
        let (src, think) = self
            .sources(&shared, length, warmup)
            .map_err(|e| CellFailure::at(name, e))?;
        let workers = settings.workers.max(1);
        let config = PhaseConfig {
            stop: stop(length),
            target_ops_per_sec: settings.target_ops_per_sec,
            exec,
            first_worker: self.slice.workers(workers).start,
            total_workers: workers,
            start_at,
        };
        Ok(run_phase(target, src, think, &config, progress.ops.clone()).await)
    }
}

fn stop(length: RunLength) -> Stop {
    match length {
        RunLength::Duration(d) => Stop::After(d),
        RunLength::Operations(_) => Stop::Exhausted,
    }
}

/// Everything the workers of a phase may have changed (they note it together).
pub(crate) fn changes_of(sources: &[Source]) -> Arc<Changes> {
    sources
        .first()
        .map_or_else(Default::default, |s| s.changes().clone())
}
