//! One cell of the matrix against one connected target: warm up, measure, take server figures
//! and explain plans, and assemble the result. A cell that cannot finish still yields a
//! result, marked incomplete with the target, the phase and the error: never a partial result
//! that passes as valid.

use std::sync::Arc;

use mongodb::bson::doc;
use mongodb::options::{Acknowledgment, ReadPreference, WriteConcern};

pub use crate::api::RunLength;
use crate::measure::ClientCpuMeter;
use crate::result::{self, CellId, CellResult, CellStatus, LoopMode, MeasuredPhase};
use crate::workload::flights::{self, Params};
use crate::workload::ycsb::{self, RawProperties, SharedState};

use super::connect::Target;
use super::execute::ExecOptions;
use super::explain::{explain_all, flights_samples, ycsb_samples};
use super::phase::{PhaseConfig, PhaseOutcome, Progress, Stop, run_phase};
use super::seed_flights::dataset_info;
use super::server_stats::{Members, coll_stats};
use super::source::{Source, fingerprint};

/// The workload of a run, in the generators' own terms.
#[derive(Debug, Clone)]
pub enum WorkloadPlan {
    Flights(Box<Params>),
    Ycsb { raw: RawProperties, seed: u64 },
}

impl WorkloadPlan {
    /// `flights/v1` or `ycsb/workloada` (the preset's file name).
    pub fn name(&self) -> String {
        match self {
            WorkloadPlan::Flights(_) => flights::VERSION.to_owned(),
            WorkloadPlan::Ycsb { raw, .. } => {
                format!("ycsb/{}", raw.preset_name().unwrap_or("custom"))
            }
        }
    }
}

/// Settings of the warm-up and measured phases.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub workers: u32,
    pub measured: RunLength,
    pub warmup: RunLength,
    /// Open loop at this total rate; `None` is a closed loop.
    pub target_ops_per_sec: Option<f64>,
    /// `default` (server default), `majority`, or a number of members.
    pub write_concern: Option<String>,
    /// `primary` (default), `primaryPreferred`, `secondary`, `secondaryPreferred`, `nearest`.
    pub read_preference: Option<String>,
}

/// Why the settings cannot be used (checked before anything is sent).
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("workload.writeConcern: {0:?} is not `default`, `majority` or a member count")]
    WriteConcern(String),
    #[error(
        "workload.readPreference: {0:?} is not one of primary, primaryPreferred, secondary, secondaryPreferred, nearest"
    )]
    ReadPreference(String),
}

impl RunSettings {
    pub fn exec_options(&self) -> Result<ExecOptions, SettingsError> {
        let write_concern = match self.write_concern.as_deref() {
            None | Some("default") => None,
            Some("majority") => Some(WriteConcern::builder().w(Acknowledgment::Majority).build()),
            Some(n) => {
                let n: u32 = n
                    .parse()
                    .map_err(|_| SettingsError::WriteConcern(n.to_owned()))?;
                Some(WriteConcern::builder().w(Acknowledgment::Nodes(n)).build())
            }
        };
        let read_preference = match self.read_preference.as_deref() {
            None | Some("primary") => None,
            Some("primaryPreferred") => Some(ReadPreference::PrimaryPreferred { options: None }),
            Some("secondary") => Some(ReadPreference::Secondary { options: None }),
            Some("secondaryPreferred") => {
                Some(ReadPreference::SecondaryPreferred { options: None })
            }
            Some("nearest") => Some(ReadPreference::Nearest { options: None }),
            Some(other) => return Err(SettingsError::ReadPreference(other.to_owned())),
        };
        Ok(ExecOptions {
            read_preference,
            write_concern,
        })
    }
}

/// What a caller watches while a cell runs.
#[derive(Debug, Default)]
pub struct CellProgress {
    /// `warmup`, `measuring`, `explaining`.
    pub phase: Arc<std::sync::Mutex<&'static str>>,
    pub ops: Arc<Progress>,
}

impl CellProgress {
    fn set(&self, phase: &'static str) {
        *self.phase.lock().expect("progress lock") = phase;
    }
}

/// What every phase of one cell generates against.
struct CellInputs<'a> {
    plan: &'a WorkloadPlan,
    settings: &'a RunSettings,
    dataset: flights::DatasetInfo,
    records: u64,
}

impl CellInputs<'_> {
    /// Each worker's source (and flights think time) for a phase of `length`.
    fn sources(
        &self,
        ycsb_shared: &Arc<SharedState>,
        length: RunLength,
        warmup: bool,
    ) -> Result<(Vec<Source>, Vec<Option<flights::ThinkTime>>), String> {
        let workers = self.settings.workers.max(1);
        let counts = match length {
            RunLength::Operations(t) => Some(flights::operations_per_worker(t, workers)),
            RunLength::Duration(_) => None,
        };
        let mut sources = Vec::new();
        let mut think = Vec::new();
        match self.plan {
            WorkloadPlan::Flights(params) => {
                let params = Params {
                    workers,
                    ..(**params).clone()
                };
                let phase = if warmup {
                    flights::Phase::Warmup
                } else {
                    flights::Phase::Measured
                };
                for w in 0..workers {
                    let worker = flights::Worker::new(&params, &self.dataset, w, phase)
                        .map_err(|e| e.to_string())?;
                    sources.push(Source::flights(
                        worker,
                        counts.as_ref().map(|c| c[w as usize]),
                    ));
                    think.push(Some(flights::ThinkTime::new(&params, w)));
                }
            }
            WorkloadPlan::Ycsb { raw, seed } => {
                let mut raw = raw.clone();
                raw.set("recordcount", self.records.to_string());
                raw.set(
                    "operationcount",
                    counts
                        .map(|c| c.iter().sum::<u64>())
                        .unwrap_or(0)
                        .to_string(),
                );
                if matches!(length, RunLength::Duration(_)) {
                    // Unbounded by count: the phase's own deadline ends it.
                    raw.set("maxexecutiontime", "1000000000");
                }
                let props = ycsb::Properties::from_raw(&raw).map_err(|e| e.to_string())?;
                // Warm-up draws from its own stream so it never repeats the measured traffic.
                let seed = if warmup {
                    seed ^ 0x5741_524d_5550
                } else {
                    *seed
                };
                for w in 0..workers {
                    let worker =
                        ycsb::Worker::new(&props, seed, w, workers, ycsb::Phase::Run, ycsb_shared)
                            .map_err(|e| e.to_string())?;
                    sources.push(Source::ycsb(worker));
                    think.push(None);
                }
            }
        }
        Ok((sources, think))
    }

    /// Runs one phase of `length` (`warmup` or the measured phase).
    async fn phase(
        &self,
        name: &'static str,
        target: &Target,
        exec: &ExecOptions,
        ycsb_shared: &Arc<SharedState>,
        length: RunLength,
        progress: &CellProgress,
    ) -> Result<PhaseOutcome, (&'static str, String)> {
        let (src, think) = self
            .sources(ycsb_shared, length, name == "warmup")
            .map_err(|e| (name, e))?;
        let config = PhaseConfig {
            stop: stop(length),
            target_ops_per_sec: self.settings.target_ops_per_sec,
            exec: exec.clone(),
        };
        Ok(run_phase(&target.client, src, think, &config, progress.ops.clone()).await)
    }
}

fn stop(length: RunLength) -> Stop {
    match length {
        RunLength::Duration(d) => Stop::After(d),
        RunLength::Operations(_) => Stop::Exhausted,
    }
}

/// Runs one cell on `target` (already seeded to `records` documents).
pub async fn run_cell(
    target: &Target,
    uri: &str,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    cell: CellId,
    records: u64,
    progress: &CellProgress,
) -> CellResult {
    let mut result = CellResult::empty(cell, CellStatus::Complete);
    result.server = result::ServerInfo {
        version: Some(target.server.version.clone()),
        topology: Some(target.server.topology.clone()),
        ..Default::default()
    };
    result.dataset.seeded_documents = records;
    if let Err((phase, error)) =
        fill(&mut result, target, uri, plan, settings, records, progress).await
    {
        result.status = CellStatus::Incomplete {
            reason: format!("target {}: {phase}: {error}", target.name),
        };
    }
    result
}

async fn fill(
    result: &mut CellResult,
    target: &Target,
    uri: &str,
    plan: &WorkloadPlan,
    settings: &RunSettings,
    records: u64,
    progress: &CellProgress,
) -> Result<(), (&'static str, String)> {
    let exec = settings
        .exec_options()
        .map_err(|e| ("settings", e.to_string()))?;
    let (database, collection) = match plan {
        WorkloadPlan::Flights(_) => (flights::DATABASE.to_owned(), flights::COLLECTION.to_owned()),
        WorkloadPlan::Ycsb { raw, .. } => {
            let props = ycsb::Properties::from_raw(raw).map_err(|e| ("settings", e.to_string()))?;
            (props.database, props.table)
        }
    };
    result.dataset.namespace = Some(format!("{database}.{collection}"));

    let prepare = "preparing";
    let dataset = match plan {
        WorkloadPlan::Flights(params) => dataset_info(&target.client, params)
            .await
            .map_err(|e| (prepare, e.to_string()))?,
        WorkloadPlan::Ycsb { .. } => flights::DatasetInfo::fresh(0, records),
    };
    // YCSB run-phase inserts continue after everything already in the table (earlier runs'
    // inserts included), so a second run never inserts a duplicate key.
    let existing = match plan {
        WorkloadPlan::Ycsb { .. } => target
            .client
            .database(&database)
            .collection::<mongodb::bson::Document>(&collection)
            .count_documents(doc! {})
            .await
            .map_err(|e| (prepare, e.to_string()))?,
        WorkloadPlan::Flights(_) => records,
    };
    let ycsb_shared = SharedState::new(existing.max(records));
    let members = Members::of(target, uri)
        .await
        .map_err(|e| (prepare, e.to_string()))?;
    result.nodes = members
        .nodes()
        .await
        .map_err(|e| (prepare, e.to_string()))?;

    let inputs = CellInputs {
        plan,
        settings,
        dataset,
        records,
    };
    // Warm-up: its own streams and insert lane; nothing is recorded.
    if !matches!(settings.warmup, RunLength::Duration(d) if d.is_zero())
        && settings.warmup != RunLength::Operations(0)
    {
        progress.set("warmup");
        let outcome = inputs
            .phase(
                "warmup",
                target,
                &exec,
                &ycsb_shared,
                settings.warmup,
                progress,
            )
            .await?;
        if let Some(fatal) = outcome.fatal {
            return Err(("warmup", fatal));
        }
    }

    progress.set("measuring");
    let measuring = "measured phase";
    let before = members
        .server_status()
        .await
        .map_err(|e| (measuring, e.to_string()))?;
    let cpu = ClientCpuMeter::start().map_err(|e| (measuring, e.to_string()))?;
    let PhaseOutcome {
        recorder,
        sources: used,
        wall,
        targeting,
        fatal,
    } = inputs
        .phase(
            measuring,
            target,
            &exec,
            &ycsb_shared,
            settings.measured,
            progress,
        )
        .await?;
    let client_cpu = cpu.finish().map_err(|e| (measuring, e.to_string()))?;
    let loop_mode = if settings.target_ops_per_sec.is_some() {
        LoopMode::Open
    } else {
        LoopMode::Closed
    };
    let measured =
        MeasuredPhase::from_recorder(&recorder, wall, loop_mode, settings.target_ops_per_sec);
    let operations = measured.overall.completed;
    result.measured = Some(measured);
    result.client_cpu = Some(client_cpu);
    result.targeting = targeting;
    result.worker_operations = used.iter().map(Source::generated).collect();
    result.fingerprint = fingerprint(&plan.name(), used);
    if let Some(fatal) = fatal {
        return Err((measuring, fatal));
    }
    let after = members
        .server_status()
        .await
        .map_err(|e| (measuring, e.to_string()))?;
    result.server_stats = Some(
        members
            .stats(&before, &after, &result.nodes, wall, operations)
            .map_err(|e| (measuring, e.to_string()))?,
    );
    result.dataset.coll_stats = coll_stats(target, &database, &collection)
        .await
        .map_err(|e| ("collecting statistics", e.to_string()))?;

    progress.set("explaining");
    let samples: Vec<(String, mongodb::bson::Document)> = match plan {
        WorkloadPlan::Flights(params) => {
            let params = Params {
                workers: settings.workers.max(1),
                ..(**params).clone()
            };
            flights_samples(&params, &dataset, params.explain_samples)
                .into_iter()
                .map(|(v, c)| (v.code().to_owned(), c))
                .collect()
        }
        WorkloadPlan::Ycsb { .. } => {
            let (mut src, _) = inputs
                .sources(
                    &SharedState::new(records),
                    RunLength::Operations(200),
                    false,
                )
                .map_err(|e| ("explaining", e))?;
            let mut steps = Vec::new();
            while let Some(step) = src[0].next_step() {
                steps.push(step);
            }
            ycsb_samples(steps.iter().flat_map(|s| {
                s.calls
                    .iter()
                    .copied()
                    .zip(s.operation.commands.iter().map(|c| &c.body))
            }))
            .into_iter()
            .map(|(call, body)| (call.label().to_owned(), body))
            .collect()
        }
    };
    result.explain = explain_all(target, &database, samples).await;
    Ok(())
}
