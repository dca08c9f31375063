//! The workload of a run in the generators' own terms ([`WorkloadPlan`]) and the settings of
//! its phases ([`RunSettings`]), as the runner takes them from the spec (`convert.rs`). Pure
//! data: how the settings become driver options is the runner's (`ExecOptions::from_settings`).

use std::time::Duration;

use crate::api::RunLength;

use super::sweep::SweepPlan;
use crate::workload::flights::{self, Params};
use crate::workload::ycsb::RawProperties;

/// The workload of a run, in the generators' own terms.
#[derive(Debug, Clone)]
pub enum WorkloadPlan {
    Flights(Box<Params>),
    Ycsb { raw: RawProperties, seed: u64 },
}

impl WorkloadPlan {
    /// The run seed (`spec.workload.seed`).
    pub fn seed(&self) -> u64 {
        match self {
            WorkloadPlan::Flights(p) => p.seed,
            WorkloadPlan::Ycsb { seed, .. } => *seed,
        }
    }

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
    /// Longest wait for one database operation (`workload.operationTimeout`).
    pub operation_timeout: Duration,
    /// A load sweep: `measured` is then each step's length and `target_ops_per_sec` the first
    /// step's rate (the warm-up's).
    pub sweep: Option<SweepPlan>,
}

impl RunSettings {
    /// These settings with the measured phase paced to `rate` in all (a sweep step's).
    pub fn at_rate(&self, rate: u64) -> RunSettings {
        RunSettings {
            target_ops_per_sec: Some(rate as f64),
            ..self.clone()
        }
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
