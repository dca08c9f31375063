//! What the cluster holds for one benchmark, read fresh at the start of every pass: server
//! StatefulSets and pods, runner Jobs (with the termination message of a failed runner), the
//! runners' ServiceAccount, the result ConfigMaps of the current run, and, for a platform
//! whose runners have not started, its Nodes (whether its replica sets fit at once). Only
//! StatefulSets, Deployments, Jobs, plans and the ServiceAccount the benchmark controls (by
//! uid) count, and only results its runner Jobs wrote (`results.rs`).
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
use kube::{Client, Resource, ResourceExt};

use crate::api::MongoBenchmark;
use crate::operator::Error;
use crate::operator::render::meta::controlled_by;
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
    let reader = Reader {
        client,
        bench,
        children: ListParams::default().labels(&names::children_selector(&name)),
        ns,
    };
    let mut observed = Observed::default();
    let refused = refusals(client, &reader.ns).await?;
    let pods: Api<Pod> = reader.api();
    let all_pods = pods
        .list(&reader.children)
        .await
        .map_err(list_err("pods", &reader.ns))?
        .items;
    let job_uids = reader.read_jobs(&all_pods, &refused, &mut observed).await?;
    reader.read_nodes(&mut observed).await?;
    observed.server_pods = reader.server_pods(&all_pods);
    reader.read_stateful_sets(&refused, &mut observed).await?;
    reader.read_routers(&mut observed).await?;
    observed.runner_access = reader.runner_access().await?;
    observed.plans = reader.plans().await?;
    reader
        .read_results(run_id, &job_uids, &mut observed)
        .await?;
    Ok(observed)
}

fn has_component(pod: &Pod, c: Component) -> bool {
    pod.labels().get(names::COMPONENT_LABEL).map(String::as_str) == Some(c.as_str())
}

/// Reads what one benchmark has in its namespace. Only what it controls counts: objects of
/// its labels made by anyone else are not its servers, runners or plans.
struct Reader<'a> {
    client: &'a Client,
    bench: &'a MongoBenchmark,
    ns: String,
    /// Selects the benchmark's children.
    children: ListParams,
}

impl Reader<'_> {
    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// The runner Jobs: each one's state, the refusals of its pods and the problems of its
    /// live pods. Returns the Jobs' uids.
    async fn read_jobs(
        &self,
        all_pods: &[Pod],
        refused: &Refusals,
        observed: &mut Observed,
    ) -> Result<Vec<String>, Error> {
        let bench = self.bench;
        let jobs: Api<Job> = self.api();
        let mut job_uids = Vec::new();
        for job in jobs
            .list(&self.children)
            .await
            .map_err(list_err("jobs", &self.ns))?
        {
            if !controlled_by(job.meta(), bench) {
                continue;
            }
            let Some(runner) = runner_of(bench, job.labels()) else {
                continue;
            };
            job_uids.extend(job.metadata.uid.clone());
            let job_name = job.name_any();
            let its_pods: Vec<Pod> = all_pods
                .iter()
                .filter(|p| {
                    has_component(p, Component::Runner)
                        && p.labels().get("job-name").map(String::as_str) == Some(job_name.as_str())
                })
                .cloned()
                .collect();
            let state = job_state(&job, &its_pods);
            if state == JobState::Active {
                note_active_job(&job, &its_pods, &runner, refused, observed);
            }
            observed.jobs.insert(runner, state);
        }
        Ok(job_uids)
    }

    /// Whether a platform's replica sets fit at once matters only before its first runner.
    async fn read_nodes(&self, observed: &mut Observed) -> Result<(), Error> {
        let spec = &self.bench.spec;
        if spec.targets.iter().filter(|t| t.is_provisioned()).count() < 2 {
            return Ok(());
        }
        for platform in &spec.platforms {
            if observed.jobs.keys().any(|k| k.platform() == platform.name) {
                continue;
            }
            let nodes = nodes::platform_nodes(self.client, platform).await?;
            observed.nodes.insert(platform.name.clone(), nodes);
        }
        Ok(())
    }

    fn server_pods(&self, all_pods: &[Pod]) -> Vec<ServerPod> {
        all_pods
            .iter()
            .filter(|p| has_component(p, Component::Server))
            .filter_map(|pod| {
                Some(ServerPod {
                    name: pod.name_any(),
                    slot: slot_of(self.bench, pod.labels())?,
                    node: pod.spec.as_ref().and_then(|s| s.node_name.clone()),
                    created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
                    problem: pod_problem(pod),
                })
            })
            .collect()
    }

    /// The server StatefulSets: their ready members per slot, and the refusals of their pods.
    async fn read_stateful_sets(
        &self,
        refused: &Refusals,
        observed: &mut Observed,
    ) -> Result<(), Error> {
        let sts: Api<StatefulSet> = self.api();
        for s in sts
            .list(&self.children)
            .await
            .map_err(list_err("statefulsets", &self.ns))?
        {
            if s.metadata.deletion_timestamp.is_some() || !controlled_by(s.meta(), self.bench) {
                continue;
            }
            let Some(slot) = slot_of(self.bench, s.labels()) else {
                continue;
            };
            if let Some(f) = stateful_set_refusal(&s, &slot, refused, &observed.server_pods) {
                observed.failed_creates.push(f);
            }
            let ready = s
                .status
                .as_ref()
                .and_then(|st| st.ready_replicas)
                .unwrap_or(0);
            // A sharded target's sets share its slot: their ready members add up.
            *observed.stateful_sets.entry(slot).or_insert(0) += u32::try_from(ready).unwrap_or(0);
        }
        Ok(())
    }

    /// The routers of sharded targets count with their slot's members.
    async fn read_routers(&self, observed: &mut Observed) -> Result<(), Error> {
        let spec = &self.bench.spec;
        if !spec
            .targets
            .iter()
            .any(|t| t.is_sharded() && t.is_provisioned())
        {
            return Ok(());
        }
        let deployments: Api<Deployment> = self.api();
        for d in deployments
            .list(&self.children)
            .await
            .map_err(list_err("deployments", &self.ns))?
        {
            if d.metadata.deletion_timestamp.is_some() || !controlled_by(d.meta(), self.bench) {
                continue;
            }
            if let Some(slot) = slot_of(self.bench, d.labels()) {
                let ready = d
                    .status
                    .as_ref()
                    .and_then(|st| st.ready_replicas)
                    .unwrap_or(0);
                *observed.stateful_sets.entry(slot).or_insert(0) +=
                    u32::try_from(ready).unwrap_or(0);
            }
        }
        Ok(())
    }

    /// Whether the runners' ServiceAccount exists (and is the benchmark's).
    async fn runner_access(&self) -> Result<bool, Error> {
        let account = names::runner_account(&self.bench.name_any());
        let sas: Api<ServiceAccount> = self.api();
        Ok(sas
            .get_opt(&account)
            .await
            .map_err(|e| Error::kube(format!("reading ServiceAccount {}/{account}", self.ns), e))?
            .is_some_and(|sa| controlled_by(sa.meta(), self.bench)))
    }

    /// The cells each runner's plan skips.
    async fn plans(&self) -> Result<BTreeMap<RunnerKey, Vec<String>>, Error> {
        let cms: Api<ConfigMap> = self.api();
        let mut plans = BTreeMap::new();
        for cm in cms
            .list(&self.children)
            .await
            .map_err(list_err("configmaps", &self.ns))?
        {
            let Some(runner) =
                runner_of(self.bench, cm.labels()).filter(|_| controlled_by(cm.meta(), self.bench))
            else {
                continue;
            };
            let plan = cm
                .data
                .as_ref()
                .and_then(|d| d.get(names::PLAN_KEY))
                .and_then(|text| serde_yaml::from_str::<crate::contract::JobPlan>(text).ok());
            if let Some(plan) = plan {
                plans.insert(runner, plan.completed_cells);
            }
        }
        Ok(plans)
    }

    /// The results of run `run_id` (only those its runner Jobs, `job_uids`, wrote count) and
    /// what the runners report they are doing.
    async fn read_results(
        &self,
        run_id: &str,
        job_uids: &[String],
        observed: &mut Observed,
    ) -> Result<(), Error> {
        let name = self.bench.name_any();
        let cms: Api<ConfigMap> = self.api();
        let written = ListParams::default().labels(&names::run_selector(&name, run_id));
        for cm in cms
            .list(&written)
            .await
            .map_err(list_err("configmaps", &self.ns))?
        {
            if let Some(cell) = cm.labels().get(names::CELL_LABEL).cloned() {
                let result = match results::not_from_runner(self.bench, &cm, job_uids) {
                    Some(refused) => refused,
                    None => owned_result(read_result(&cm), &name, run_id, &cell),
                };
                observed.results.insert(cell, result);
            } else if let Some((platform, a)) = results::read_activity(self.bench, &cm) {
                observed.activities.insert(platform, a);
            }
        }
        Ok(())
    }
}

/// What an active Job's pods say: admission refused them (none is live), or a pod cannot run.
fn note_active_job(
    job: &Job,
    its_pods: &[Pod],
    runner: &RunnerKey,
    refused: &Refusals,
    observed: &mut Observed,
) {
    let live = its_pods.iter().any(|p| {
        matches!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            None | Some("Pending" | "Running")
        )
    });
    if !live {
        let created = job.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let creator = Creator::Runner(runner.clone());
        if let Some(f) = refusal_of(refused, "Job", &job.name_any(), created, creator) {
            observed.failed_creates.push(f);
        }
    }
    for pod in its_pods {
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

/// The refusal of the pods a StatefulSet lacks, if admission refused them. Its own pods
/// only: a sharded target's slot has several StatefulSets.
fn stateful_set_refusal(
    s: &StatefulSet,
    slot: &Slot,
    refused: &Refusals,
    server_pods: &[ServerPod],
) -> Option<FailedCreate> {
    let wanted = s.spec.as_ref().and_then(|sp| sp.replicas).unwrap_or(1);
    let prefix = format!("{}-", s.name_any());
    let existing = server_pods
        .iter()
        .filter(|p| p.slot == *slot && p.name.starts_with(&prefix))
        .count();
    if existing >= usize::try_from(wanted).unwrap_or(0) {
        return None;
    }
    let created = s.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let creator = Creator::Servers(slot.clone());
    refusal_of(refused, "StatefulSet", &s.name_any(), created, creator)
}

#[cfg(test)]
mod tests;
