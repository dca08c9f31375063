//! What the cluster holds for one benchmark, read fresh at the start of every pass: server
//! StatefulSets and pods, runner Jobs (with the termination message of a failed runner), the
//! runners' ServiceAccount, the result ConfigMaps of the current run, and, for a platform
//! whose runners have not started, its Nodes (whether its replica sets fit at once). [`Observed`] is plain
//! data so the decision that follows is a pure function; [`observe`] is the only part that
//! reads the API.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Node, Pod, ServiceAccount};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use super::Error;
use super::build::names::{self, Component};
pub use super::decide::placement::{NodeCapacity, PlatformNodes};
use crate::api::units::{parse_quantity_bytes, parse_quantity_millis};
use crate::api::{MongoBenchmark, Platform};
use crate::result::CellResult;
use crate::runner::activity::{self, Activity};

pub mod facts;

/// One target on one platform: `(target name, platform name)` as the spec writes them.
pub type Slot = (String, String);

/// What one runner Job runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunnerKey {
    /// One target on a platform.
    Target(Slot),
    /// Every target of a platform (named as the spec writes it), interleaved.
    Platform(String),
}

impl RunnerKey {
    /// The key of the runner of `targets` on `platform`.
    pub fn of<S: AsRef<str>>(platform: &str, targets: &[S]) -> RunnerKey {
        match targets {
            [one] => RunnerKey::Target((one.as_ref().to_owned(), platform.to_owned())),
            _ => RunnerKey::Platform(platform.to_owned()),
        }
    }

    /// The platform it runs on.
    pub fn platform(&self) -> &str {
        match self {
            RunnerKey::Target((_, p)) | RunnerKey::Platform(p) => p,
        }
    }
}

/// The state of a runner Job.
#[derive(Debug, Clone, PartialEq)]
pub enum JobState {
    /// Pods are pending or running (or being retried).
    Active,
    /// The runner exited 0.
    Succeeded,
    /// The runner failed after its retries; the message is the pod's termination message
    /// (or the Job's own reason when no pod said anything).
    Failed {
        /// Why.
        message: String,
    },
}

/// Why a server pod is not running.
#[derive(Debug, Clone, PartialEq)]
pub enum PodProblem {
    /// The scheduler found no node (its message says why).
    Unschedulable {
        /// The scheduler's message.
        message: String,
    },
    /// The image cannot be pulled.
    ImagePull {
        /// The image reference.
        image: String,
        /// `ErrImagePull`, `ImagePullBackOff`, `InvalidImageName`.
        reason: String,
        /// The kubelet's message.
        message: String,
    },
    /// A container keeps exiting and the kubelet backs off restarting it.
    CrashLoop {
        /// The container.
        container: String,
        /// Restarts so far.
        restarts: i32,
        /// Why it last ended (`OOMKilled`, `Error`, ...), with its exit code.
        last: String,
    },
}

/// A server pod of the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPod {
    /// Pod name.
    pub name: String,
    /// Its slot.
    pub slot: Slot,
    /// Node it is bound to.
    pub node: Option<String>,
    /// When it was created (problems count from then).
    pub created: Option<Timestamp>,
    /// Why it cannot run, if it cannot.
    pub problem: Option<PodProblem>,
}

/// A runner pod that cannot run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerPod {
    /// Pod name.
    pub name: String,
    /// Its runner.
    pub runner: RunnerKey,
    /// When it was created (problems count from then).
    pub created: Option<Timestamp>,
    /// Why it cannot run.
    pub problem: PodProblem,
}

/// Whose pods a refused creation was for.
#[derive(Debug, Clone, PartialEq)]
pub enum Creator {
    /// The StatefulSet of a slot.
    Servers(Slot),
    /// A runner Job.
    Runner(RunnerKey),
}

/// A StatefulSet or Job whose controller cannot create its pods: admission (Pod Security,
/// a ResourceQuota, a webhook) refused them, so no Pod exists to say why, only the
/// controller's `FailedCreate` Event.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedCreate {
    /// Whose pods.
    pub creator: Creator,
    /// `StatefulSet` or `Job`.
    pub kind: &'static str,
    /// The object's name.
    pub name: String,
    /// When the object was created (the deadline counts from then).
    pub created: Option<Timestamp>,
    /// The latest refusal, as the controller reported it.
    pub message: String,
}

/// A result ConfigMap of the current run.
#[derive(Debug, Clone, PartialEq)]
pub enum ObservedResult {
    /// A readable result document (complete or incomplete).
    Document {
        /// ConfigMap name.
        config_map: String,
        /// The document.
        result: Box<CellResult>,
    },
    /// A ConfigMap labelled as a result whose document cannot be read.
    Unreadable {
        /// ConfigMap name.
        config_map: String,
        /// Why.
        message: String,
    },
}

impl ObservedResult {
    /// Name of the ConfigMap.
    pub fn config_map(&self) -> &str {
        match self {
            ObservedResult::Document { config_map, .. }
            | ObservedResult::Unreadable { config_map, .. } => config_map,
        }
    }
}

/// Everything a pass needs to know about one benchmark's children.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observed {
    /// Result documents by cell id.
    pub results: BTreeMap<String, ObservedResult>,
    /// Ready members of each slot's StatefulSet (present = the StatefulSet exists).
    pub stateful_sets: BTreeMap<Slot, u32>,
    /// Server pods of the benchmark, on any slot.
    pub server_pods: Vec<ServerPod>,
    /// Pods of active runner Jobs that cannot run (unschedulable, image not pullable).
    pub runner_pods: Vec<RunnerPod>,
    /// Server StatefulSets and active runner Jobs whose pods are refused at creation.
    pub failed_creates: Vec<FailedCreate>,
    /// Runner Jobs.
    pub jobs: BTreeMap<RunnerKey, JobState>,
    /// True when the runners' ServiceAccount exists (with its Role and RoleBinding).
    pub runner_access: bool,
    /// The `completedCells` of each runner's plan ConfigMap.
    pub plans: BTreeMap<RunnerKey, Vec<String>>,
    /// What each platform's runner last said it is doing (by platform name).
    pub activities: BTreeMap<String, Activity>,
    /// The nodes of each platform that has two or more provisioned targets and no runner Job
    /// yet: what decides whether its replica sets are created together (by platform name).
    pub nodes: BTreeMap<String, PlatformNodes>,
}

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

/// What a pass needs of a Node.
pub fn node_capacity(node: &Node) -> NodeCapacity {
    let status = node.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let quantity = |name: &str, parse: fn(&str) -> Result<u64, crate::api::UnitsError>| {
        allocatable
            .and_then(|a| a.get(name))
            .and_then(|q| parse(&q.0).ok())
    };
    NodeCapacity {
        name: node.name_any(),
        ready,
        schedulable: !node
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false),
        cpu_millis: quantity("cpu", parse_quantity_millis),
        memory_bytes: quantity("memory", parse_quantity_bytes),
        pods: quantity("pods", parse_quantity_bytes),
    }
}

/// The nodes matching `platform`'s effective node selector. A list the operator may not make
/// (401, 403, 404) is reported, not an error; other failures fail the pass, which is retried
/// rather than deciding on missing facts.
async fn platform_nodes(client: &Client, platform: &Platform) -> Result<PlatformNodes, Error> {
    let selector: Vec<String> = platform
        .effective_node_selector()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let nodes: Api<Node> = Api::all(client.clone());
    match nodes
        .list(&ListParams::default().labels(&selector.join(",")))
        .await
    {
        Ok(list) => Ok(PlatformNodes::Listed(
            list.items.iter().map(node_capacity).collect(),
        )),
        Err(kube::Error::Api(s)) if matches!(s.code, 401 | 403 | 404) => Ok(
            PlatformNodes::Unreadable(format!("listing nodes: {}", s.message)),
        ),
        Err(e) => Err(Error::kube(
            format!("listing the nodes of platform {}", platform.name),
            e,
        )),
    }
}

/// The state of a Job from its conditions and, when it failed, its pods' messages.
pub fn job_state(job: &Job, pods: &[Pod]) -> JobState {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let is_true = |t: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == t && c.status == "True")
    };
    if is_true("Complete") || is_true("SuccessCriteriaMet") {
        return JobState::Succeeded;
    }
    if !is_true("Failed") && !is_true("FailureTarget") {
        return JobState::Active;
    }
    let job_reason = conditions
        .iter()
        .find(|c| (c.type_ == "Failed" || c.type_ == "FailureTarget") && c.status == "True")
        .map(|c| {
            let reason = c.reason.clone().unwrap_or_default();
            match c.message.as_deref() {
                Some(m) if !m.is_empty() => format!("{reason}: {m}"),
                _ => reason,
            }
        })
        .unwrap_or_default();
    // The newest pod that terminated with a message says best why.
    let mut terminated: Vec<(Option<Timestamp>, String)> = pods
        .iter()
        .filter_map(|p| {
            let statuses = p.status.as_ref()?.container_statuses.as_ref()?;
            statuses.iter().find_map(|s| {
                let t = s.state.as_ref()?.terminated.as_ref()?;
                let message = t
                    .message
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .or_else(|| {
                        (t.exit_code != 0).then(|| {
                            format!(
                                "runner exited with code {}{}",
                                t.exit_code,
                                t.reason
                                    .as_deref()
                                    .map(|r| format!(" ({r})"))
                                    .unwrap_or_default()
                            )
                        })
                    })?;
                Some((t.finished_at.as_ref().map(|f| f.0), message))
            })
        })
        .collect();
    terminated.sort_by_key(|(at, _)| *at);
    let message = match terminated.pop() {
        Some((_, m)) => m,
        None if job_reason.is_empty() => "runner Job failed".to_owned(),
        None => job_reason,
    };
    JobState::Failed { message }
}

/// Why a pod cannot run, from its conditions and container statuses.
pub fn pod_problem(pod: &Pod) -> Option<PodProblem> {
    let status = pod.status.as_ref()?;
    for s in status.container_statuses.iter().flatten() {
        if let Some(w) = s.state.as_ref().and_then(|st| st.waiting.as_ref()) {
            let reason = w.reason.clone().unwrap_or_default();
            if reason == "CrashLoopBackOff" {
                let last = s
                    .last_state
                    .as_ref()
                    .and_then(|l| l.terminated.as_ref())
                    .map(|t| {
                        format!(
                            "{} (exit code {})",
                            t.reason.as_deref().unwrap_or("terminated"),
                            t.exit_code
                        )
                    })
                    .unwrap_or_else(|| "unknown".to_owned());
                return Some(PodProblem::CrashLoop {
                    container: s.name.clone(),
                    restarts: s.restart_count,
                    last,
                });
            }
            if matches!(
                reason.as_str(),
                "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName"
            ) {
                return Some(PodProblem::ImagePull {
                    image: s.image.clone(),
                    reason,
                    message: w.message.clone().unwrap_or_default(),
                });
            }
        }
    }
    let scheduled = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled")?;
    (scheduled.status == "False" && scheduled.reason.as_deref() == Some("Unschedulable")).then(
        || PodProblem::Unschedulable {
            message: scheduled.message.clone().unwrap_or_default(),
        },
    )
}

/// The latest `FailedCreate` Event of each object (kind, name): its time and message.
type Refusals = BTreeMap<(String, String), (Option<Timestamp>, String)>;

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
    let mut out = Refusals::new();
    for e in list {
        let (Some(kind), Some(name)) = (e.involved_object.kind, e.involved_object.name) else {
            continue;
        };
        let at = e
            .last_timestamp
            .map(|t| t.0)
            .or(e.event_time.map(|t| t.0))
            .or(e.first_timestamp.map(|t| t.0))
            .or(e.metadata.creation_timestamp.map(|t| t.0));
        let message = e.message.unwrap_or_default();
        let entry = out.entry((kind, name)).or_insert((at, message.clone()));
        if at > entry.0 {
            *entry = (at, message);
        }
    }
    Ok(out)
}

/// The refusal of the pods of `kind` `name` created at `created`, if an Event newer than the
/// object reports one (an older Event was about an earlier object of the same name).
fn refusal_of(
    refusals: &Refusals,
    kind: &'static str,
    name: &str,
    created: Option<Timestamp>,
    creator: Creator,
) -> Option<FailedCreate> {
    let (at, message) = refusals.get(&(kind.to_owned(), name.to_owned()))?;
    if let (Some(at), Some(created)) = (at, created)
        && at < &created
    {
        return None;
    }
    Some(FailedCreate {
        creator,
        kind,
        name: name.to_owned(),
        created,
        message: message.clone(),
    })
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
            let nodes = platform_nodes(client, platform).await?;
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
            let existing = observed
                .server_pods
                .iter()
                .filter(|p| p.slot == slot)
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
            observed
                .stateful_sets
                .insert(slot, u32::try_from(ready).unwrap_or(0));
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
            .and_then(|text| serde_yaml::from_str::<crate::plan::JobPlan>(text).ok());
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
        } else if let Some((platform, a)) = read_activity(bench, &cm) {
            observed.activities.insert(platform, a);
        }
    }
    Ok(observed)
}

/// The platform (spec name) and activity of an activity ConfigMap.
fn read_activity(bench: &MongoBenchmark, cm: &ConfigMap) -> Option<(String, Activity)> {
    let labels = cm.labels();
    if labels.get(activity::COMPONENT_LABEL).map(String::as_str)
        != Some(activity::ACTIVITY_COMPONENT)
    {
        return None;
    }
    let platform = labels.get(activity::PLATFORM_LABEL)?;
    let name = bench
        .spec
        .platforms
        .iter()
        .find(|p| crate::plan::sanitize(&p.name) == *platform)?
        .name
        .clone();
    Some((name, Activity::from_data(cm.data.as_ref()?)?))
}

/// `observed` unless its document is of another benchmark, run or cell than the ConfigMap's
/// labels say (a stale copy, a forged or mislabelled ConfigMap): that one is refused, naming
/// what it holds, and never counts as this cell's result.
pub fn owned_result(
    observed: ObservedResult,
    benchmark: &str,
    run_id: &str,
    cell: &str,
) -> ObservedResult {
    let ObservedResult::Document { config_map, result } = observed else {
        return observed;
    };
    let id = &result.cell;
    let holds = crate::plan::cell_id(&id.target, &id.platform, &id.size, id.repetition);
    if id.benchmark == benchmark && id.run_id == run_id && holds == cell {
        return ObservedResult::Document { config_map, result };
    }
    ObservedResult::Unreadable {
        message: format!(
            "result ConfigMap {config_map}: its document is cell {holds} of benchmark {} run {}, \
             not cell {cell} of benchmark {benchmark} run {run_id}; refused",
            id.benchmark, id.run_id
        ),
        config_map,
    }
}

/// The result document of a result ConfigMap.
pub fn read_result(cm: &ConfigMap) -> ObservedResult {
    let config_map = cm.name_any();
    let text = cm
        .data
        .as_ref()
        .and_then(|d| d.get(names::RESULT_KEY))
        .cloned();
    match text {
        None => ObservedResult::Unreadable {
            message: format!(
                "result ConfigMap {config_map} has no key {}",
                names::RESULT_KEY
            ),
            config_map,
        },
        Some(text) => match CellResult::from_json(&text) {
            Ok(result) => ObservedResult::Document {
                config_map,
                result: Box::new(result),
            },
            Err(e) => ObservedResult::Unreadable {
                message: format!("result ConfigMap {config_map}: {e}"),
                config_map,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(conditions: serde_json::Value) -> Job {
        serde_json::from_value(
            json!({"metadata": {"name": "j"}, "status": {"conditions": conditions}}),
        )
        .unwrap()
    }

    fn terminated_pod(exit: i32, message: Option<&str>, finished: &str) -> Pod {
        let mut terminated = json!({"exitCode": exit, "reason": "Error", "finishedAt": finished});
        if let Some(m) = message {
            terminated["message"] = json!(m);
        }
        serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"containerStatuses": [{
                "name": "runner", "image": "i", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"terminated": terminated}
            }]}
        }))
        .unwrap()
    }

    #[test]
    fn job_states_follow_the_job_conditions() {
        assert_eq!(job_state(&job(json!([])), &[]), JobState::Active);
        assert_eq!(
            job_state(&job(json!([{"type": "Complete", "status": "True"}])), &[]),
            JobState::Succeeded
        );
        let failed = job(json!([{"type": "Failed", "status": "True",
            "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]));
        assert_eq!(
            job_state(&failed, &[]),
            JobState::Failed {
                message: "BackoffLimitExceeded: Job has reached the specified backoff limit".into()
            }
        );
        // The newest terminated pod's message wins over the Job's reason.
        let pods = [
            terminated_pod(
                1,
                Some("target psmdb-8.0: connection refused"),
                "2026-01-01T00:00:10Z",
            ),
            terminated_pod(
                1,
                Some("target psmdb-8.0: seeding failed"),
                "2026-01-01T00:01:10Z",
            ),
        ];
        assert_eq!(
            job_state(&failed, &pods),
            JobState::Failed {
                message: "target psmdb-8.0: seeding failed".into()
            }
        );
        // Without a message, the exit code says something.
        assert_eq!(
            job_state(
                &failed,
                &[terminated_pod(137, None, "2026-01-01T00:00:10Z")]
            ),
            JobState::Failed {
                message: "runner exited with code 137 (Error)".into()
            }
        );
    }

    #[test]
    fn pod_problems_name_the_image_or_the_scheduler_message() {
        let unschedulable: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/11 nodes are available"}]}
        }))
        .unwrap();
        assert_eq!(
            pod_problem(&unschedulable),
            Some(PodProblem::Unschedulable {
                message: "0/11 nodes are available".into()
            })
        );
        let pull: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"phase": "Pending", "containerStatuses": [{
                "name": "mongod", "image": "mongo:9.9.9", "imageID": "", "ready": false,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}
            }]}
        }))
        .unwrap();
        assert_eq!(
            pod_problem(&pull),
            Some(PodProblem::ImagePull {
                image: "mongo:9.9.9".into(),
                reason: "ImagePullBackOff".into(),
                message: "Back-off pulling image".into()
            })
        );
        let running: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
        }))
        .unwrap();
        assert_eq!(pod_problem(&running), None);
        let crashing = |last: serde_json::Value| -> Pod {
            serde_json::from_value(json!({
                "metadata": {"name": "p"},
                "status": {"phase": "Running", "containerStatuses": [{
                    "name": "mongod", "image": "percona/percona-server-mongodb:8.0.34-15",
                    "imageID": "", "ready": false, "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
                    "lastState": last
                }]}
            }))
            .unwrap()
        };
        assert_eq!(
            pod_problem(&crashing(
                json!({"terminated": {"reason": "OOMKilled", "exitCode": 137}})
            )),
            Some(PodProblem::CrashLoop {
                container: "mongod".into(),
                restarts: 4,
                last: "OOMKilled (exit code 137)".into()
            })
        );
        assert_eq!(
            pod_problem(&crashing(json!({}))),
            Some(PodProblem::CrashLoop {
                container: "mongod".into(),
                restarts: 4,
                last: "unknown".into()
            })
        );
    }

    #[test]
    fn nodes_give_their_allocatable_readiness_and_cordon() {
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": "n2-icelake-0"},
            "spec": {"unschedulable": true},
            "status": {
                "allocatable": {"cpu": "3920m", "memory": "16Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}]
            }
        }))
        .unwrap();
        assert_eq!(
            node_capacity(&node),
            NodeCapacity {
                name: "n2-icelake-0".into(),
                ready: true,
                schedulable: false,
                cpu_millis: Some(3920),
                memory_bytes: Some(16 << 30),
                pods: Some(110),
            }
        );
        let bare: Node = serde_json::from_value(json!({"metadata": {"name": "new"}})).unwrap();
        assert_eq!(
            node_capacity(&bare),
            NodeCapacity {
                name: "new".into(),
                ready: false,
                schedulable: true,
                ..NodeCapacity::default()
            }
        );
    }

    #[test]
    fn runner_labels_map_back_to_their_runner() {
        let b = crate::operator::build::servers::tests::bench(
            "study",
            crate::operator::build::servers::tests::STUDY,
        );
        let slot = names::runner_labels("study", "x86", &["psmdb-8.0"]);
        assert_eq!(
            runner_of(&b, &slot),
            Some(RunnerKey::Target(("psmdb-8.0".into(), "x86".into())))
        );
        let platform = names::runner_labels("study", "x86", &["psmdb-8.0", "ext"]);
        assert_eq!(
            runner_of(&b, &platform),
            Some(RunnerKey::Platform("x86".into()))
        );
        let unknown = names::runner_labels("study", "gone", &["psmdb-8.0", "ext"]);
        assert_eq!(runner_of(&b, &unknown), None);
    }

    #[test]
    fn a_document_of_another_benchmark_run_or_cell_is_refused() {
        let document = |benchmark: &str, run: &str, repetition: u32| {
            let mut id = crate::result::testing::cell("ext", "local", "1k", repetition);
            id.benchmark = benchmark.into();
            id.run_id = run.into();
            ObservedResult::Document {
                config_map: "b-cm".into(),
                result: Box::new(CellResult::empty(id, crate::result::CellStatus::Complete)),
            }
        };
        let cell = crate::plan::cell_id("ext", "local", "1k", 1);
        assert!(matches!(
            owned_result(document("b", "r1", 1), "b", "r1", &cell),
            ObservedResult::Document { .. }
        ));
        for (other, why) in [
            (
                document("other", "r1", 1),
                "cell ext.local.1k.r1 of benchmark other run r1",
            ),
            (
                document("b", "r0", 1),
                "cell ext.local.1k.r1 of benchmark b run r0",
            ),
            (
                document("b", "r1", 2),
                "cell ext.local.1k.r2 of benchmark b run r1",
            ),
        ] {
            assert_eq!(
                owned_result(other, "b", "r1", &cell),
                ObservedResult::Unreadable {
                    config_map: "b-cm".into(),
                    message: format!(
                        "result ConfigMap b-cm: its document is {why}, not cell ext.local.1k.r1 \
                         of benchmark b run r1; refused"
                    ),
                }
            );
        }
    }

    #[test]
    fn unreadable_results_say_why() {
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "b-c"}, "data": {"result.json": "{\"schemaVersion\": 7}"}
        }))
        .unwrap();
        match read_result(&cm) {
            ObservedResult::Unreadable { message, .. } => assert!(
                message.starts_with("result ConfigMap b-c: result document has schemaVersion 7"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        let empty: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": "b-d"}})).unwrap();
        assert_eq!(
            read_result(&empty),
            ObservedResult::Unreadable {
                config_map: "b-d".into(),
                message: "result ConfigMap b-d has no key result.json".into()
            }
        );
    }
}
