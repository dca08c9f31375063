//! What every run starts from, a Job's or a local one: the [`Benchmark`] of a plan (its run
//! definition parsed once) and its targets connected.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::contract::{JobPlan, RunDefinition};
use crate::plan::SettingsError;

use super::benchmark::{Benchmark, Connected};
use super::send::ExecOptions;
use super::server::{ConnectError, MONGOS, Sharding, connect_with, process_of_uri, redact_uri};
use super::slots::PrecisionGoal;

/// Why a plan cannot run, before anything is sent.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Settings(#[from] SettingsError),
    #[error("dataset size {size:?}: {error}")]
    Size {
        size: String,
        error: crate::api::UnitsError,
    },
    #[error("precision: {0}")]
    Precision(crate::api::UnitsError),
    #[error("{0}")]
    Connect(#[from] ConnectError),
    #[error("target {target}: --cpu-sets: {why}")]
    Side { target: String, why: String },
    #[error("target {target} is topology sharded, but {uri} reaches a {topology}, not a mongos")]
    NotMongos {
        target: String,
        uri: String,
        topology: String,
    },
}

/// The benchmark `plan` runs, everything derived from its run definition once.
///
/// # Errors
/// Settings the driver cannot use, a size or precision limit that does not parse.
pub fn benchmark(plan: &JobPlan) -> Result<Benchmark, SetupError> {
    let run: &RunDefinition = &plan.run;
    ExecOptions::from_settings(&run.settings)?;
    let sizes = run
        .sizes
        .iter()
        .map(|size| {
            crate::api::units::parse_dataset_size(size)
                .map(|parsed| (size.clone(), parsed))
                .map_err(|error| SetupError::Size {
                    size: size.clone(),
                    error,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let precision = run
        .precision
        .as_ref()
        .map(|p| PrecisionGoal::of_precision(p, run.repetitions))
        .transpose()
        .map_err(SetupError::Precision)?;
    let server_canaries: BTreeMap<String, Vec<String>> = plan
        .targets
        .iter()
        .filter(|t| !t.server_canaries.is_empty())
        .map(|t| (t.name.clone(), t.server_canaries.clone()))
        .collect();
    Ok(Benchmark {
        name: plan.benchmark.clone(),
        run_id: plan.run_id.clone(),
        platform: plan.platform.clone(),
        plan: run.workload.clone(),
        settings: run.settings.clone(),
        reuse_dataset: run.reuse_dataset,
        sizes,
        repetitions: run.repetitions,
        precision,
        canary_policy: run.canary_policy,
        server_canaries,
        baseline: run.baseline.clone(),
        completed: plan
            .completed_cells
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        schedule: run.schedule,
        sides: run.sides.clone(),
    })
}

/// Checks that every target of a plan with sides is a server of this machine whose process
/// this one may pin to a side.
///
/// # Errors
/// [`SetupError::Side`] naming the target and why.
pub fn check_sides(plan: &JobPlan, uris: &[(String, String)]) -> Result<(), SetupError> {
    if plan.run.sides.is_empty() {
        return Ok(());
    }
    for (name, uri) in uris {
        process_of_uri(uri).map_err(|why| SetupError::Side {
            target: name.clone(),
            why,
        })?;
    }
    Ok(())
}

/// Connects to each target of `plan` at its URI in `uris` (name, URI), refusing a sharded
/// target that is not reached through mongos.
///
/// # Errors
/// The first target that cannot be reached or is not what the plan says it is.
pub async fn connect_all(
    plan: &JobPlan,
    uris: &[(String, String)],
    timeout: Duration,
) -> Result<Vec<Connected>, SetupError> {
    let run = &plan.run;
    let workers = run.settings.most_workers();
    let mut out = Vec::new();
    for (name, uri) in uris {
        let mut target = connect_with(name, uri, workers, timeout, &run.wire_compressors).await?;
        let mongos = target.server.topology == MONGOS;
        let sharded = plan.target(name).and_then(|t| t.sharded.clone());
        if sharded.is_some() && !mongos {
            return Err(SetupError::NotMongos {
                target: name.clone(),
                uri: redact_uri(uri),
                topology: target.server.topology.clone(),
            });
        }
        if let (true, Some(workload)) = (mongos, &run.sharding) {
            target.sharding = Some(Arc::new(Sharding {
                workload: workload.clone(),
                topology: sharded.unwrap_or_else(|| "sharded".to_owned()),
            }));
        }
        tracing::info!(target = %name, version = %target.server.version, topology = %target.server.topology, "connected");
        out.push(Connected {
            target,
            uri: uri.clone(),
        });
    }
    Ok(out)
}
