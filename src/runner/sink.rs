//! Where results go: a directory of JSON files (local runs) or one ConfigMap per cell owned by
//! the MongoBenchmark (the Job's hand-off to the operator).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};

use crate::api::{API_VERSION, KIND};
use crate::plan::{JobPlan, sanitize};
use crate::result::CellResult;

/// Key of the result document in a result ConfigMap.
pub const RESULT_KEY: &str = "result.json";
/// Labels of result ConfigMaps.
pub const BENCHMARK_LABEL: &str = "mongobench.io/benchmark";
pub const CELL_LABEL: &str = "mongobench.io/cell";
pub const RUN_ID_LABEL: &str = "mongobench.io/run-id";
/// Field manager of the runner's writes.
pub const FIELD_MANAGER: &str = "mongobench-runner";

/// Name of the result ConfigMap of `cell` in `benchmark`.
pub fn configmap_name(benchmark: &str, cell: &str) -> String {
    let name = sanitize(&format!("{benchmark}-{cell}"));
    name.chars().take(253).collect()
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

/// The result ConfigMap of one cell.
pub fn result_configmap(
    plan: &JobPlan,
    cell: &str,
    result: &CellResult,
) -> serde_json::Result<ConfigMap> {
    let owner = owner_reference(plan);
    Ok(ConfigMap {
        metadata: ObjectMeta {
            name: Some(configmap_name(&plan.benchmark, cell)),
            namespace: plan.namespace.clone(),
            labels: Some(BTreeMap::from([
                (BENCHMARK_LABEL.to_owned(), sanitize(&plan.benchmark)),
                (CELL_LABEL.to_owned(), cell.to_owned()),
                (RUN_ID_LABEL.to_owned(), sanitize(&plan.run_id)),
            ])),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            RESULT_KEY.to_owned(),
            result.to_json().map_err(serde::ser::Error::custom)?,
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
) -> anyhow::Result<()> {
    let namespace = plan.namespace.as_deref().unwrap_or("default");
    let cm = result_configmap(plan, cell, result)?;
    let name = cm.metadata.name.clone().unwrap_or_default();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&cm),
        )
        .await
        .map_err(|e| anyhow::anyhow!("writing result ConfigMap {namespace}/{name}: {e}"))?;
    Ok(())
}

/// Writes one cell's result as `DIR/<cell>.json`.
pub fn write_file(dir: &Path, cell: &str, result: &CellResult) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    let path = dir.join(format!("{cell}.json"));
    std::fs::write(&path, result.to_json()?)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    Ok(path)
}
