//! What the cluster holds for one benchmark, read fresh at the start of every pass: server
//! StatefulSets and pods, runner Jobs (with the termination message of a failed runner), the
//! runners' ServiceAccount, the result ConfigMaps of the current run, and, for a platform
//! whose runners have not started, its Nodes (whether its replica sets fit at once).
//!
//! [`Observed`] (`observed.rs`) is plain data, so the decision that follows is a pure function;
//! [`observe`] here and the node and fact readers (`nodes.rs`, `facts.rs`) are the only parts
//! that call the API; `pods.rs` and `results.rs` classify what was read. Uses `api/`, `plan/`,
//! `result/`, the runner's activity and the names of `build/`; never `decide/`.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod, ServiceAccount};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use crate::api::MongoBenchmark;
use crate::operator::Error;
use crate::operator::render::names::{self, Component};

pub mod facts;
mod nodes;
mod observed;
mod pods;
mod results;

pub use nodes::{NodeCapacity, PlatformNodes, node_capacity};
pub use observed::{
    Creator, FailedCreate, JobState, Observed, ObservedResult, PodProblem, RunnerKey, RunnerPod,
    ServerPod, Slot,
};
pub use pods::{job_state, pod_problem};
pub use results::{owned_result, read_result};

use pods::{Refusals, refusal_of};

/// Maps the target/platform labels of a child back to the spec's names.
fn slot_of(bench: &MongoBenchmark, labels: &BTreeMap<String, String>) -> Option<Slot> {
    let target = labels.get(names::TARGET_LABEL)?;
    let platform = labels.get(names::PLATFORM_LABEL)?;
    let t = bench
        .spec
        .targets
        .iter()
        .find(|t| &names::label_value(&t.name) == target)?;
    let p = bench
        .spec
        .platforms
        .iter()
        .find(|p| &names::label_value(&p.name) == platform)?;
    Some((t.name.clone(), p.name.clone()))
}

/// Maps the platform/target labels of a runner Job or plan back to the spec's names: with a
/// target label, that target's runner; without, the runner of every target of the platform.
fn runner_of(bench: &MongoBenchmark, labels: &BTreeMap<String, String>) -> Option<RunnerKey> {
    if labels.contains_key(names::TARGET_LABEL) {
        return slot_of(bench, labels).map(RunnerKey::Target);
    }
    let platform = labels.get(names::PLATFORM_LABEL)?;
    let p = bench
        .spec
        .platforms
        .iter()
        .find(|p| &names::label_value(&p.name) == platform)?;
    Some(RunnerKey::Platform(p.name.clone()))
}

/// The `FailedCreate` Events of namespace `ns`. Events the operator may not list (an install
/// from before it needed to) leave nothing to report rather than failing the pass.
async fn refusals(client: &Client, ns: &str) -> Result<Refusals, Error> {
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    let list = match events
        .list(&ListParams::default().fields("reason=FailedCreate"))
        .await
    {
        Ok(list) => list.items,
        Err(kube::Error::Api(s)) if matches!(s.code, 401 | 403) => return Ok(Refusals::new()),
        Err(e) => return Err(list_err("events", ns)(e)),
    };
    Ok(pods::latest_refusals(list))
}

fn list_err(what: &str, ns: &str) -> impl FnOnce(kube::Error) -> Error {
    let action = format!("listing {what} in namespace {ns}");
    move |e| Error::kube(action, e)
}

/// Reads the children and results of `bench`.
///
/// Jobs are read before results: a runner writes every result before it exits, so a Job
/// seen finished has all its results in the list that follows.
///
/// # Errors
/// [`Error::Kube`] when a list fails; [`Error::Incomplete`] without a namespace.
pub async fn observe(
    client: &Client,
    bench: &MongoBenchmark,
    run_id: &str,
) -> Result<Observed, Error> {
    let name = bench.name_any();
    let ns = bench
        .namespace()
        .ok_or_else(|| Error::Incomplete(name.clone()))?;
    let children = ListParams::default().labels(&names::children_selector(&name));
    let mut observed = Observed::default();

    let refused = refusals(client, &ns).await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let all_pods = pods
        .list(&children)
        .await
        .map_err(list_err("pods", &ns))?
        .items;
    let component = |p: &Pod, c: Component| {
        p.labels().get(names::COMPONENT_LABEL).map(String::as_str) == Some(c.as_str())
    };
    for job in jobs.list(&children).await.map_err(list_err("jobs", &ns))? {
        let Some(runner) = runner_of(bench, job.labels()) else {
            continue;
        };
        let job_name = job.name_any();
        let its_pods: Vec<Pod> = all_pods
            .iter()
            .filter(|p| {
                component(p, Component::Runner)
                    && p.labels().get("job-name").map(String::as_str) == Some(job_name.as_str())
            })
            .cloned()
            .collect();
        let state = job_state(&job, &its_pods);
        let live = its_pods.iter().any(|p| {
            matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                None | Some("Pending" | "Running")
            )
        });
        if state == JobState::Active && !live {
            let created = job.metadata.creation_timestamp.as_ref().map(|t| t.0);
            let creator = Creator::Runner(runner.clone());
            if let Some(f) = refusal_of(&refused, "Job", &job_name, created, creator) {
                observed.failed_creates.push(f);
            }
        }
        if state == JobState::Active {
            for pod in &its_pods {
                if let Some(problem) = pod_problem(pod) {
                    observed.runner_pods.push(RunnerPod {
                        name: pod.name_any(),
                        runner: runner.clone(),
                        created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
                        problem,
                    });
                }
            }
        }
        observed.jobs.insert(runner, state);
    }
    // Whether a platform's replica sets fit at once matters only before its first runner.
    let provisioned = bench
        .spec
        .targets
        .iter()
        .filter(|t| t.is_provisioned())
        .count();
    if provisioned >= 2 {
        for platform in &bench.spec.platforms {
            if observed.jobs.keys().any(|k| k.platform() == platform.name) {
                continue;
            }
            let nodes = nodes::platform_nodes(client, platform).await?;
            observed.nodes.insert(platform.name.clone(), nodes);
        }
    }
    for pod in all_pods.iter().filter(|p| component(p, Component::Server)) {
        let Some(slot) = slot_of(bench, pod.labels()) else {
            continue;
        };
        observed.server_pods.push(ServerPod {
            name: pod.name_any(),
            slot,
            node: pod.spec.as_ref().and_then(|s| s.node_name.clone()),
            created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
            problem: pod_problem(pod),
        });
    }
    let sts: Api<StatefulSet> = Api::namespaced(client.clone(), &ns);
    for s in sts
        .list(&children)
        .await
        .map_err(list_err("statefulsets", &ns))?
    {
        if s.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if let Some(slot) = slot_of(bench, s.labels()) {
            let wanted = s.spec.as_ref().and_then(|sp| sp.replicas).unwrap_or(1);
            // Its own pods: a sharded target's slot has several StatefulSets.
            let prefix = format!("{}-", s.name_any());
            let existing = observed
                .server_pods
                .iter()
                .filter(|p| p.slot == slot && p.name.starts_with(&prefix))
                .count();
            if existing < usize::try_from(wanted).unwrap_or(0) {
                let created = s.metadata.creation_timestamp.as_ref().map(|t| t.0);
                let creator = Creator::Servers(slot.clone());
                if let Some(f) =
                    refusal_of(&refused, "StatefulSet", &s.name_any(), created, creator)
                {
                    observed.failed_creates.push(f);
                }
            }
            let ready = s
                .status
                .as_ref()
                .and_then(|st| st.ready_replicas)
                .unwrap_or(0);
            // A sharded target's sets share its slot: their ready members add up.
            *observed.stateful_sets.entry(slot).or_insert(0) += u32::try_from(ready).unwrap_or(0);
        }
    }
    if bench
        .spec
        .targets
        .iter()
        .any(|t| t.is_sharded() && t.is_provisioned())
    {
        // The routers of sharded targets count with their slot's members.
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
        for d in deployments
            .list(&children)
            .await
            .map_err(list_err("deployments", &ns))?
        {
            if d.metadata.deletion_timestamp.is_some() {
                continue;
            }
            if let Some(slot) = slot_of(bench, d.labels()) {
                let ready = d
                    .status
                    .as_ref()
                    .and_then(|st| st.ready_replicas)
                    .unwrap_or(0);
                *observed.stateful_sets.entry(slot).or_insert(0) +=
                    u32::try_from(ready).unwrap_or(0);
            }
        }
    }
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), &ns);
    observed.runner_access = sas
        .get_opt(&names::runner_account(&name))
        .await
        .map_err(|e| {
            Error::kube(
                format!(
                    "reading ServiceAccount {ns}/{}",
                    names::runner_account(&name)
                ),
                e,
            )
        })?
        .is_some();

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    for cm in cms
        .list(&children)
        .await
        .map_err(list_err("configmaps", &ns))?
    {
        let Some(runner) = runner_of(bench, cm.labels()) else {
            continue;
        };
        let plan = cm
            .data
            .as_ref()
            .and_then(|d| d.get(names::PLAN_KEY))
            .and_then(|text| serde_yaml::from_str::<crate::contract::JobPlan>(text).ok());
        if let Some(plan) = plan {
            observed.plans.insert(runner, plan.completed_cells);
        }
    }
    let written = ListParams::default().labels(&names::run_selector(&name, run_id));
    for cm in cms
        .list(&written)
        .await
        .map_err(list_err("configmaps", &ns))?
    {
        if let Some(cell) = cm.labels().get(names::CELL_LABEL).cloned() {
            let result = owned_result(read_result(&cm), &name, run_id, &cell);
            observed.results.insert(cell, result);
        } else if let Some((platform, a)) = results::read_activity(bench, &cm) {
            observed.activities.insert(platform, a);
        }
    }
    Ok(observed)
}

#[cfg(test)]
mod tests;
