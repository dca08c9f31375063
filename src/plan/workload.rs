//! The workload of a run in the generators' own terms ([`WorkloadPlan`]) and the settings of
//! its phases ([`RunSettings`]), as the runner takes them from the spec (`convert.rs`). Pure
//! data: how the settings become driver options is the runner's (`ExecOptions::from_settings`).

use std::time::Duration;

use crate::api::RunLength;

use super::custom::{CustomPlan, PhaseLoad};
use super::sweep::{Steps, SweepPlan};
use crate::workload::flights::{self, Params};
use crate::workload::ycsb::RawProperties;

/// The workload of a run, in the generators' own terms.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum WorkloadPlan {
    Flights(Box<Params>),
    Ycsb { raw: RawProperties, seed: u64 },
    Custom(Box<CustomPlan>),
}

impl WorkloadPlan {
    /// The run seed (`spec.workload.seed`).
    pub fn seed(&self) -> u64 {
        match self {
            WorkloadPlan::Flights(p) => p.seed,
            WorkloadPlan::Ycsb { seed, .. } => *seed,
            WorkloadPlan::Custom(c) => c.seed,
        }
    }

    /// `flights/v1`, `ycsb/workloada` (the preset's file name) or `custom/v1`.
    pub fn name(&self) -> String {
        match self {
            WorkloadPlan::Flights(_) => flights::VERSION.to_owned(),
            WorkloadPlan::Ycsb { raw, .. } => {
                format!("ycsb/{}", raw.preset_name().unwrap_or("custom"))
            }
            WorkloadPlan::Custom(_) => crate::workload::custom::VERSION.to_owned(),
        }
    }
}

/// Settings of the warm-up and measured phases.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
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
    /// Longest wait for one database operation (`workload.operationTimeout`).
    #[serde(with = "crate::workload::millis", rename = "operationTimeoutMs")]
    pub operation_timeout: Duration,
    /// A load sweep: `measured` is then each step's length and `target_ops_per_sec` the first
    /// step's rate (the warm-up's).
    pub sweep: Option<SweepPlan>,
    /// The warm-up's own workers and rate (a custom workload's warm-up phase); `None`: those of
    /// the measured phase.
    pub warmup_load: Option<PhaseLoad>,
    /// Warm-up rounds until throughput settles (`workload.warmupUntilSettled`); `None`: one
    /// warm-up of `warmup`.
    pub warmup_settle: Option<WarmupSettle>,
}

/// Rounds of `warmup`, each restored after, until the last one's drift is within
/// `tolerance_percent` or `max_rounds` have run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WarmupSettle {
    pub max_rounds: u32,
    pub tolerance_percent: f64,
}

impl RunSettings {
    /// These settings for the sweep step of `level`: paced to that rate in all, or with that
    /// many workers in a closed loop for a ladder of workers. Unchanged without a sweep.
    pub fn at_step(&self, level: u64) -> RunSettings {
        match self.sweep.as_ref().map(|s| &s.steps) {
            None => self.clone(),
            Some(Steps::Workers(_)) => RunSettings {
                workers: u32::try_from(level).unwrap_or(u32::MAX),
                target_ops_per_sec: None,
                ..self.clone()
            },
            Some(_) => RunSettings {
                target_ops_per_sec: Some(level as f64),
                ..self.clone()
            },
        }
    }

    /// These settings for the warm-up: its own workers and rate where it has them.
    pub fn for_warmup(&self) -> RunSettings {
        match self.warmup_load {
            None => self.clone(),
            Some(load) => RunSettings {
                workers: load.workers,
                target_ops_per_sec: load.target_ops_per_sec,
                ..self.clone()
            },
        }
    }

    /// Most workers any phase runs (a ladder's top, a larger warm-up): the connections a
    /// target needs.
    pub fn most_workers(&self) -> u32 {
        let measured = match self.sweep.as_ref().map(|s| &s.steps) {
            Some(Steps::Workers(workers)) => workers.iter().max().copied().unwrap_or(self.workers),
            _ => self.workers,
        };
        measured.max(self.warmup_load.map_or(0, |l| l.workers))
    }
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
