//! Where results go: a directory of JSON files (local runs) or one ConfigMap per cell owned by
//! the MongoBenchmark and controlled by the runner's Job (the Job's hand-off to the operator,
//! which takes a result only from a Job of the benchmark).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};

use crate::api::{API_VERSION, KIND};
use crate::contract::JobPlan;
use crate::contract::names::{self, RESULT_KEY, RUNNER_FIELD_MANAGER};
use crate::result::CellResult;

/// Why a result could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("encoding the result of {cell}")]
    Encode {
        cell: String,
        source: crate::result::ResultError,
    },
    #[error("writing result ConfigMap {namespace}/{name}")]
    ConfigMap {
        namespace: String,
        name: String,
        source: kube::Error,
    },
    #[error("starting the runtimes of the sides: {0}")]
    Runtime(String),
    #[error("{what} {}", path.display())]
    File {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

use crate::contract::names::JOB_NAME_ENV;

/// The runner's Job as the controlling owner of the results it writes, from the environment
/// the Job gives its pods; `None` outside a Job.
pub fn job_owner() -> Option<OwnerReference> {
    let uid = std::env::var(crate::contract::names::JOB_UID_ENV).ok()?;
    let name = std::env::var(JOB_NAME_ENV).ok()?;
    (!uid.is_empty() && !name.is_empty()).then(|| OwnerReference {
        api_version: "batch/v1".to_owned(),
        kind: "Job".to_owned(),
        name,
        uid,
        controller: Some(true),
        block_owner_deletion: None,
    })
}

/// The MongoBenchmark as the owner of what a runner writes (when the plan knows its uid).
/// Without `blockOwnerDeletion`, which would need update rights on the benchmark's
/// finalizers that the runner has no use for.
pub fn owner_reference(plan: &JobPlan) -> Option<OwnerReference> {
    plan.uid.as_ref().map(|uid| OwnerReference {
        api_version: API_VERSION.to_owned(),
        kind: KIND.to_owned(),
        name: plan.benchmark.clone(),
        uid: uid.clone(),
        controller: Some(false),
        block_owner_deletion: None,
    })
}

/// The result ConfigMap of one cell, owned by the benchmark and controlled by `job` (the
/// runner's Job, when run in one).
pub fn result_configmap(
    plan: &JobPlan,
    job: Option<OwnerReference>,
    cell: &str,
    result: &CellResult,
) -> Result<ConfigMap, SinkError> {
    let owners: Vec<OwnerReference> = owner_reference(plan).into_iter().chain(job).collect();
    Ok(ConfigMap {
        metadata: ObjectMeta {
            name: Some(names::result_name(&plan.benchmark, cell)),
            namespace: plan.namespace.clone(),
            labels: Some(names::result_labels(&plan.benchmark, &plan.run_id, cell)),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            RESULT_KEY.to_owned(),
            result.to_json().map_err(|source| SinkError::Encode {
                cell: cell.to_owned(),
                source,
            })?,
        )])),
        ..ConfigMap::default()
    })
}

/// Writes (server-side apply) the result ConfigMap of one cell.
pub async fn write_configmap(
    client: &kube::Client,
    plan: &JobPlan,
    cell: &str,
    result: &CellResult,
) -> Result<(), SinkError> {
    let namespace = plan.namespace.as_deref().unwrap_or("default");
    let cm = result_configmap(plan, job_owner(), cell, result)?;
    let name = cm.metadata.name.clone().unwrap_or_default();
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    let params = PatchParams::apply(RUNNER_FIELD_MANAGER).force();
    // A measured cell is worth waiting for: an API server that restarts (a control-plane
    // upgrade) is waited out rather than losing the cell; a refusal is not retried.
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(500);
    loop {
        match api.patch(&name, &params, &Patch::Apply(&cm)).await {
            Ok(_) => return Ok(()),
            Err(e) if started.elapsed() + pause < patience(&e) => {
                tracing::warn!(error = %e, configmap = %name, "writing a result; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(8));
            }
            Err(source) => {
                return Err(SinkError::ConfigMap {
                    namespace: namespace.to_owned(),
                    name,
                    source,
                });
            }
        }
    }
}

/// Cells of `plan` whose complete result of this run is already written, by an earlier attempt
/// of the runner's pod that was killed: a retry of the Job skips them rather than measuring
/// them again. A cell whose result cannot be read, or that another Job (or anyone else) wrote,
/// is run again: the operator takes results only from its Jobs, and a result of an earlier
/// Job it took is in the plan's `completedCells`.
pub async fn written_cells(client: &kube::Client, plan: &JobPlan) -> Vec<String> {
    let job = job_owner();
    let namespace = plan.namespace.as_deref().unwrap_or("default");
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    let mut out = Vec::new();
    for target in &plan.targets {
        for cell in plan.planned_cell_ids(&target.name) {
            if plan.completed_cells.contains(&cell) {
                continue;
            }
            let name = names::result_name(&plan.benchmark, &cell);
            let ours = |cm: &ConfigMap| match &job {
                Some(job) => cm
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.uid == job.uid),
                None => true,
            };
            let document = match api.get_opt(&name).await {
                Ok(cm) => cm.filter(ours).and_then(|cm| cm.data?.remove(RESULT_KEY)),
                Err(e) => {
                    tracing::warn!(error = %e, configmap = %name, "reading an earlier result");
                    None
                }
            };
            let written = document
                .and_then(|text| CellResult::from_json(&text).ok())
                .is_some_and(|r| {
                    r.is_complete()
                        && r.cell.benchmark == plan.benchmark
                        && r.cell.run_id == plan.run_id
                });
            if written {
                out.push(cell);
            }
        }
    }
    out
}

/// How long a result write is retried while the API server cannot be reached.
pub const RESULT_WRITE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// How long a refusal is retried: a freshly started API server denies requests its
/// authorizer's caches do not cover yet.
pub const FORBIDDEN_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// How long an API error may be retried: no answer at all, a server error or throttling may
/// pass by themselves; a refusal only briefly; anything else (an invalid object) never.
fn patience(e: &kube::Error) -> std::time::Duration {
    match e {
        kube::Error::Api(status) if status.code >= 500 || status.code == 429 => {
            RESULT_WRITE_PATIENCE
        }
        kube::Error::Api(status) if status.code == 403 => FORBIDDEN_PATIENCE,
        kube::Error::HyperError(_) | kube::Error::Service(_) => RESULT_WRITE_PATIENCE,
        _ => std::time::Duration::ZERO,
    }
}

/// Writes one cell's result as `DIR/<cell>.json`.
pub fn write_file(dir: &Path, cell: &str, result: &CellResult) -> Result<PathBuf, SinkError> {
    std::fs::create_dir_all(dir).map_err(|source| SinkError::File {
        what: "creating",
        path: dir.to_owned(),
        source,
    })?;
    let path = dir.join(format!("{cell}.json"));
    let text = result.to_json().map_err(|source| SinkError::Encode {
        cell: cell.to_owned(),
        source,
    })?;
    std::fs::write(&path, text).map_err(|source| SinkError::File {
        what: "writing",
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;
    use std::time::Duration;

    #[test]
    fn unreachable_failing_and_throttling_api_servers_are_waited_out_refusals_briefly() {
        let api = |code| kube::Error::Api(Status::failure("m", "r").with_code(code).boxed());
        assert_eq!(patience(&api(503)), RESULT_WRITE_PATIENCE);
        assert_eq!(patience(&api(500)), RESULT_WRITE_PATIENCE);
        assert_eq!(patience(&api(429)), RESULT_WRITE_PATIENCE);
        let refused = kube::Error::Service("connection refused".into());
        assert_eq!(patience(&refused), RESULT_WRITE_PATIENCE);
        assert_eq!(patience(&api(403)), FORBIDDEN_PATIENCE);
        assert_eq!(patience(&api(422)), Duration::ZERO);
        assert_eq!(patience(&api(404)), Duration::ZERO);
        let other = kube::Error::LinesCodecMaxLineLengthExceeded;
        assert_eq!(patience(&other), Duration::ZERO);
    }
}
