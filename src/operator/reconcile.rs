//! The "what next" decision: a pure function of the MongoBenchmark, what the cluster holds
//! ([`Observed`]) and the time, returning the actions to take and the status to show.
//!
//! Work is done in slots (one target on one platform, one runner Job). Which slots are active:
//! - `PerPlatform`: on every platform, the first slot (in target order) not finished; so the
//!   platforms proceed at once and a platform's targets one after another on the same nodes.
//! - `Sequential`: the first unfinished slot of all, platform by platform.
//!
//! An active slot of a provisioned target gets its servers first (only once no other target's
//! server pods remain on the platform, when servers are deleted after their cells) and its
//! runner once every member is ready; an external target's slot gets its runner at once. A
//! slot is finished when each of its cells has a result or its runner failed. Finished slots
//! lose their servers under `cleanupPolicy: DeleteServers`. `suspend: true` creates nothing new.
//!
//! Server pods that stay unschedulable, or cannot pull their image, past the stall deadline
//! make the benchmark `Stalled` (reason `Unschedulable` or `ImagePullFailed`, naming the
//! target, the platform and the image); before the deadline the problem is shown in the
//! `ServersReady` condition and the pass is repeated at the deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::Error;
use super::observe::{JobState, Observed, ObservedResult, PodProblem, Slot};
use super::status::{self, CellOutcome, condition};
use crate::api::{
    CellCounts, CleanupPolicy, MongoBenchmark, MongoBenchmarkStatus, NodeInfo, Parallelism, Phase,
    TargetStatus, condition_types as ct,
};
use crate::plan::{self, Cell};
use crate::result::CellResult;

/// Something to change in the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Create the replica set (StatefulSet, Service, NetworkPolicy) of a slot.
    CreateServers {
        /// Target name.
        target: String,
        /// Platform name.
        platform: String,
    },
    /// Create the runners' ServiceAccount, Role and RoleBinding.
    CreateRunnerAccess,
    /// Create the plan ConfigMap and the Job of a slot.
    StartRunner {
        /// Target name.
        target: String,
        /// Platform name.
        platform: String,
        /// Cells that already have a result: the runner skips them.
        completed_cells: Vec<String>,
    },
    /// Rewrite the plan of a running slot so that a retried runner pod skips the cells that
    /// have results since the Job started.
    UpdatePlan {
        /// Target name.
        target: String,
        /// Platform name.
        platform: String,
        /// Cells that have a result.
        completed_cells: Vec<String>,
    },
    /// Delete the replica set of a slot (its volumes go with it).
    DeleteServers {
        /// Target name.
        target: String,
        /// Platform name.
        platform: String,
    },
    /// Delete the MongoBenchmark itself (`ttlSecondsAfterFinished` has passed); everything
    /// it owns goes with it.
    DeleteBenchmark,
}

/// Settings of a decision that do not come from the cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The current time.
    pub now: Timestamp,
    /// How long server pods may be unschedulable or fail to pull before `Stalled`.
    pub stall_deadline: Duration,
    /// Re-check interval of an unfinished benchmark.
    pub resync: Duration,
}

/// The outcome of a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// What to change, in order.
    pub actions: Vec<Action>,
    /// The status the benchmark should show.
    pub status: MongoBenchmarkStatus,
    /// When to look again without a change; `None` waits for one.
    pub requeue_after: Option<Duration>,
}

/// Where an active slot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Waiting for its servers (or for the nodes to be free of the previous target's).
    Provisioning,
    /// Runner started, no result yet.
    Seeding,
    /// Runner started, some results.
    Running,
}

/// A problem keeping a slot's servers from running.
struct ServerIssue {
    reason: &'static str,
    message: String,
    stalled: bool,
}

fn outcome_of<'a>(
    cell: &Cell,
    observed: &'a Observed,
    job: Option<&'a JobState>,
) -> CellOutcome<'a> {
    match observed.results.get(&cell.id) {
        Some(ObservedResult::Document { config_map, result }) => match &result.status {
            crate::result::CellStatus::Complete => CellOutcome::Completed { result, config_map },
            crate::result::CellStatus::Incomplete { reason } => CellOutcome::Failed {
                message: reason,
                config_map: Some(config_map),
            },
        },
        Some(ObservedResult::Unreadable {
            config_map,
            message,
        }) => CellOutcome::Failed {
            message,
            config_map: Some(config_map),
        },
        None => match job {
            Some(JobState::Failed { message }) => CellOutcome::Failed {
                message,
                config_map: None,
            },
            Some(JobState::Succeeded) => CellOutcome::Failed {
                message: "the runner finished without writing a result for this cell",
                config_map: None,
            },
            _ => CellOutcome::Pending,
        },
    }
}

fn slot_key(target: &str, platform: &str) -> Slot {
    (target.to_owned(), platform.to_owned())
}

/// Decides the next actions and the status of `bench`.
///
/// # Errors
/// [`Error::Spec`] when the spec cannot be expanded into cells.
pub fn decide(
    bench: &MongoBenchmark,
    observed: &Observed,
    settings: &Settings,
) -> Result<Decision, Error> {
    let spec = &bench.spec;
    let now = settings.now;
    let cells = plan::cells(spec).map_err(|e| Error::Spec(e.to_string()))?;
    let members = spec.replica_set().members();
    let suspended = spec.suspend();
    let delete_servers = spec.cleanup_policy() == CleanupPolicy::DeleteServers;

    // Slots in plan order (platform by platform, target by target).
    let mut slots: Vec<Slot> = Vec::new();
    for c in &cells {
        let key = slot_key(&c.target, &c.platform);
        if !slots.contains(&key) {
            slots.push(key);
        }
    }
    let mut outcomes: Vec<CellOutcome<'_>> = cells
        .iter()
        .map(|c| {
            outcome_of(
                c,
                observed,
                observed.jobs.get(&slot_key(&c.target, &c.platform)),
            )
        })
        .collect();
    let slot_done = |slot: &Slot, outcomes: &[CellOutcome<'_>]| {
        cells
            .iter()
            .zip(outcomes)
            .filter(|(c, _)| c.target == slot.0 && c.platform == slot.1)
            .all(|(_, o)| o.is_terminal())
    };
    let unfinished: Vec<&Slot> = slots.iter().filter(|s| !slot_done(s, &outcomes)).collect();
    let active: Vec<&Slot> = match spec.parallelism() {
        Parallelism::Sequential => unfinished.first().copied().into_iter().collect(),
        Parallelism::PerPlatform => {
            let mut seen: Vec<&str> = Vec::new();
            unfinished
                .iter()
                .copied()
                .filter(|s| {
                    let first = !seen.contains(&s.1.as_str());
                    seen.push(&s.1);
                    first
                })
                .collect()
        }
    };

    let mut actions = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut issues: Vec<ServerIssue> = Vec::new();
    let mut ready_notes: Vec<String> = Vec::new();
    let mut next_deadline: Option<Duration> = None;
    let mut runner_started = false;
    let mut jobs_running = false;

    for slot in &active {
        let (target_name, platform_name) = (&slot.0, &slot.1);
        let target = spec.target(target_name).expect("slots come from the spec");
        let job = observed.jobs.get(*slot);
        let has_results = cells.iter().any(|c| {
            c.target == *target_name
                && c.platform == *platform_name
                && observed.results.contains_key(&c.id)
        });
        let completed_cells: Vec<String> = cells
            .iter()
            .filter(|c| c.target == *target_name && c.platform == *platform_name)
            .filter(|c| observed.results.contains_key(&c.id))
            .map(|c| c.id.clone())
            .collect();
        if job.is_some() {
            jobs_running = true;
            if job == Some(&JobState::Active)
                && observed
                    .plans
                    .get(*slot)
                    .is_some_and(|p| *p != completed_cells)
            {
                actions.push(Action::UpdatePlan {
                    target: target_name.clone(),
                    platform: platform_name.clone(),
                    completed_cells: completed_cells.clone(),
                });
            }
            steps.push(if has_results {
                Step::Running
            } else {
                Step::Seeding
            });
            // The servers of a running slot still count for ServersReady.
            if target.is_provisioned() {
                let ready = observed.stateful_sets.get(*slot).copied().unwrap_or(0);
                if ready >= members {
                    ready_notes.push(format!(
                        "{target_name} on {platform_name} ({members}/{members})"
                    ));
                } else {
                    issues.push(ServerIssue {
                        reason: "MembersNotReady",
                        message: format!(
                            "target {target_name} on platform {platform_name}: {ready}/{members} members ready while its runner works"
                        ),
                        stalled: false,
                    });
                }
            }
            continue;
        }
        if target.is_provisioned() {
            match observed.stateful_sets.get(*slot) {
                None => {
                    steps.push(Step::Provisioning);
                    let others_on_platform = observed
                        .server_pods
                        .iter()
                        .any(|p| p.slot.1 == *platform_name && p.slot.0 != *target_name);
                    if delete_servers && others_on_platform {
                        issues.push(ServerIssue {
                            reason: "WaitingForNodes",
                            message: format!(
                                "target {target_name} on platform {platform_name}: waiting for the previous target's servers to leave the nodes"
                            ),
                            stalled: false,
                        });
                    } else if suspended {
                        issues.push(ServerIssue {
                            reason: "Suspended",
                            message: format!("target {target_name} on platform {platform_name}: suspended before provisioning"),
                            stalled: false,
                        });
                    } else {
                        actions.push(Action::CreateServers {
                            target: target_name.clone(),
                            platform: platform_name.clone(),
                        });
                        issues.push(ServerIssue {
                            reason: "Provisioning",
                            message: format!("target {target_name} on platform {platform_name}: creating {members} members"),
                            stalled: false,
                        });
                    }
                    continue;
                }
                Some(&ready) if ready < members => {
                    steps.push(Step::Provisioning);
                    let pods = observed.server_pods.iter().filter(|p| p.slot == **slot);
                    let mut issue = ServerIssue {
                        reason: "Provisioning",
                        message: format!(
                            "target {target_name} on platform {platform_name}: {ready}/{members} members ready"
                        ),
                        stalled: false,
                    };
                    for pod in pods {
                        let Some(problem) = &pod.problem else {
                            continue;
                        };
                        let age = pod
                            .created
                            .map(|c| now.duration_since(c).unsigned_abs())
                            .unwrap_or_default();
                        let stalled = age >= settings.stall_deadline;
                        if !stalled {
                            let left = settings.stall_deadline - age;
                            next_deadline = Some(next_deadline.map_or(left, |d| d.min(left)));
                        }
                        let (reason, message) = match problem {
                            PodProblem::Unschedulable { message } => (
                                "Unschedulable",
                                format!(
                                    "servers of target {target_name} on platform {platform_name} cannot be scheduled: pod {} has no node matching the platform ({message})",
                                    pod.name
                                ),
                            ),
                            PodProblem::ImagePull {
                                image,
                                reason,
                                message,
                            } => (
                                "ImagePullFailed",
                                format!(
                                    "servers of target {target_name} on platform {platform_name} cannot pull image {image}: {reason}: {message}"
                                ),
                            ),
                        };
                        issue = ServerIssue {
                            reason,
                            message,
                            stalled,
                        };
                        break;
                    }
                    issues.push(issue);
                    continue;
                }
                Some(_) => ready_notes.push(format!(
                    "{target_name} on {platform_name} ({members}/{members})"
                )),
            }
        }
        // Servers ready, or nothing to provision: the runner.
        if suspended {
            issues.push(ServerIssue {
                reason: "Suspended",
                message: format!(
                    "target {target_name} on platform {platform_name}: suspended before its runner"
                ),
                stalled: false,
            });
            continue;
        }
        if !observed.runner_access && !actions.contains(&Action::CreateRunnerAccess) {
            actions.push(Action::CreateRunnerAccess);
        }
        actions.push(Action::StartRunner {
            target: target_name.clone(),
            platform: platform_name.clone(),
            completed_cells,
        });
        runner_started = true;
        jobs_running = true;
        steps.push(if has_results {
            Step::Running
        } else {
            Step::Seeding
        });
    }

    // The first pending cell of each slot with a runner is the one it works on.
    for slot in &active {
        let started = observed.jobs.contains_key(*slot)
            || actions.iter().any(|a| matches!(a, Action::StartRunner { target, platform, .. } if target == &slot.0 && platform == &slot.1));
        if !started {
            continue;
        }
        if let Some(i) = cells.iter().zip(&outcomes).position(|(c, o)| {
            c.target == slot.0 && c.platform == slot.1 && *o == CellOutcome::Pending
        }) {
            outcomes[i] = CellOutcome::Running;
        }
    }

    // Cleanup of finished slots.
    if delete_servers {
        for slot in &slots {
            if observed.stateful_sets.contains_key(slot) && slot_done(slot, &outcomes) {
                actions.push(Action::DeleteServers {
                    target: slot.0.clone(),
                    platform: slot.1.clone(),
                });
            }
        }
    }

    let status = build_status(
        bench,
        observed,
        &cells,
        &outcomes,
        &BuildInput {
            steps: &steps,
            issues: &issues,
            ready_notes: &ready_notes,
            jobs_running,
            runner_started,
            suspended,
            now,
        },
    );
    let terminal = matches!(status.phase, Some(Phase::Completed | Phase::Failed));
    let idle_suspended = status.phase == Some(Phase::Suspended);
    let ttl = spec
        .ttl_seconds_after_finished
        .zip(status.completed_at.as_ref())
        .filter(|_| terminal)
        .map(|(ttl, done)| {
            let expires = done.0.as_second() + i64::from(ttl.max(0));
            Duration::from_secs(u64::try_from(expires - now.as_second()).unwrap_or(0))
        });
    let requeue_after = if let Some(left) = ttl {
        if left.is_zero() {
            actions.push(Action::DeleteBenchmark);
            None
        } else {
            Some(left)
        }
    } else if terminal || idle_suspended {
        None
    } else {
        Some(next_deadline.map_or(settings.resync, |d| {
            d.min(settings.resync) + Duration::from_millis(500)
        }))
    };
    Ok(Decision {
        actions,
        status,
        requeue_after,
    })
}

struct BuildInput<'a> {
    steps: &'a [Step],
    issues: &'a [ServerIssue],
    ready_notes: &'a [String],
    jobs_running: bool,
    runner_started: bool,
    suspended: bool,
    now: Timestamp,
}

fn build_status(
    bench: &MongoBenchmark,
    observed: &Observed,
    cells: &[Cell],
    outcomes: &[CellOutcome<'_>],
    input: &BuildInput<'_>,
) -> MongoBenchmarkStatus {
    let spec = &bench.spec;
    let old = bench.status.clone().unwrap_or_default();
    let generation = bench.metadata.generation;
    let now = input.now;
    let total = cells.len() as u32;
    let count = |f: fn(&CellOutcome<'_>) -> bool| outcomes.iter().filter(|o| f(o)).count() as u32;
    let completed = count(|o| matches!(o, CellOutcome::Completed { .. }));
    let failed = count(|o| matches!(o, CellOutcome::Failed { .. }));
    let running = count(|o| matches!(o, CellOutcome::Running));
    let finished = completed + failed;
    let all_done = finished == total;
    let stall = input.issues.iter().find(|i| i.stalled);

    let phase = if all_done {
        if completed > 0 {
            Phase::Completed
        } else {
            Phase::Failed
        }
    } else if input.suspended && !input.jobs_running {
        Phase::Suspended
    } else {
        match input.steps.iter().min() {
            Some(Step::Provisioning) => Phase::Provisioning,
            Some(Step::Seeding) => Phase::Seeding,
            Some(Step::Running) => Phase::Running,
            None => Phase::Pending,
        }
    };

    let progress = format!("{finished}/{total}");
    let tally = format!("{completed} completed, {failed} failed of {total} cells");
    let phase_name = format!("{phase:?}");
    let c = |type_: &str, status: bool, reason: &str, message: String| {
        condition(
            &old.conditions,
            type_,
            status,
            reason,
            message,
            generation,
            now,
        )
    };
    let ready = c(
        ct::READY,
        phase == Phase::Completed,
        &phase_name,
        if all_done {
            tally.clone()
        } else {
            format!("{progress} cells finished")
        },
    );
    let (reconciling, stalled) = match (phase, stall) {
        (Phase::Completed, _) => (
            c(ct::RECONCILING, false, "Completed", tally.clone()),
            c(ct::STALLED, false, "Completed", String::new()),
        ),
        (Phase::Failed, _) => (
            c(ct::RECONCILING, false, "Failed", tally.clone()),
            c(
                ct::STALLED,
                true,
                "AllCellsFailed",
                format!("no cell succeeded: {tally}"),
            ),
        ),
        (_, Some(issue)) => (
            c(ct::RECONCILING, false, "Stalled", issue.message.clone()),
            c(ct::STALLED, true, issue.reason, issue.message.clone()),
        ),
        (Phase::Suspended, None) => (
            c(
                ct::RECONCILING,
                false,
                "Suspended",
                "spec.suspend is true".into(),
            ),
            c(ct::STALLED, false, "Suspended", String::new()),
        ),
        (_, None) => (
            c(
                ct::RECONCILING,
                true,
                &phase_name,
                format!("{progress} cells finished"),
            ),
            c(ct::STALLED, false, "Progressing", String::new()),
        ),
    };
    let servers_ready = if all_done {
        c(
            ct::SERVERS_READY,
            true,
            "Finished",
            "every cell has finished".into(),
        )
    } else if let Some(issue) = input
        .issues
        .iter()
        .find(|i| i.stalled)
        .or(input.issues.first())
    {
        let mut messages: Vec<&str> = input.issues.iter().map(|i| i.message.as_str()).collect();
        messages.sort_unstable();
        c(ct::SERVERS_READY, false, issue.reason, messages.join("; "))
    } else if input.ready_notes.is_empty() {
        c(
            ct::SERVERS_READY,
            true,
            "NothingToProvision",
            "the active targets are external or their runners have started".into(),
        )
    } else {
        c(
            ct::SERVERS_READY,
            true,
            "Ready",
            format!("replica sets ready: {}", input.ready_notes.join(", ")),
        )
    };
    let data_seeded = if all_done {
        c(ct::DATA_SEEDED, completed > 0, "Finished", tally.clone())
    } else if input.steps.contains(&Step::Provisioning) || input.steps.is_empty() {
        c(
            ct::DATA_SEEDED,
            false,
            "WaitingForServers",
            "no runner has started on the current step".into(),
        )
    } else if input.steps.contains(&Step::Seeding) {
        c(
            ct::DATA_SEEDED,
            false,
            "Seeding",
            "a runner is seeding its first dataset size".into(),
        )
    } else {
        c(
            ct::DATA_SEEDED,
            true,
            "Seeded",
            "every active runner has measured at least one cell".into(),
        )
    };
    let workload_completed = c(
        ct::WORKLOAD_COMPLETED,
        all_done,
        if all_done {
            "AllCellsFinished"
        } else {
            "InProgress"
        },
        if all_done {
            tally.clone()
        } else {
            format!("{progress} cells finished")
        },
    );

    let cell_statuses: Vec<_> = cells
        .iter()
        .zip(outcomes)
        .map(|(cell, o)| status::cell_status(cell, *o))
        .collect();
    let complete_results: Vec<&CellResult> = outcomes
        .iter()
        .filter_map(|o| match o {
            CellOutcome::Completed { result, .. } => Some(*result),
            _ => None,
        })
        .collect();
    let comparisons = status::comparisons(spec, &complete_results);
    let headline = match stall {
        Some(issue) if !all_done => Some(format!("Stalled: {}", issue.message)),
        _ => status::headline(&comparisons, &cell_statuses),
    };

    let started_at = old.started_at.clone().or_else(|| {
        (input.runner_started || input.jobs_running || finished > 0)
            .then(|| status::now_seconds(now))
    });
    let completed_at = if all_done {
        old.completed_at
            .clone()
            .or_else(|| Some(status::now_seconds(now)))
    } else {
        None
    };

    MongoBenchmarkStatus {
        observed_generation: generation,
        phase: Some(phase),
        conditions: vec![
            ready,
            reconciling,
            stalled,
            servers_ready,
            data_seeded,
            workload_completed,
        ],
        progress: Some(progress),
        counts: Some(CellCounts {
            total,
            pending: total - finished - running,
            running,
            completed,
            failed,
        }),
        started_at,
        completed_at,
        run_id: Some(super::jobs::run_id(bench)),
        baseline: Some(spec.baseline().to_owned()),
        target_names: Some(spec.target_names()),
        platform_names: Some(spec.platform_names()),
        targets: target_statuses(observed, cells, outcomes),
        cells: cell_statuses,
        comparisons,
        headline,
    }
}

/// What was deployed per slot: ready members while the servers exist, and the server
/// version and nodes from the latest complete result.
fn target_statuses(
    observed: &Observed,
    cells: &[Cell],
    outcomes: &[CellOutcome<'_>],
) -> Vec<TargetStatus> {
    let mut by_slot: BTreeMap<usize, TargetStatus> = BTreeMap::new();
    let mut order: Vec<Slot> = Vec::new();
    for (cell, outcome) in cells.iter().zip(outcomes) {
        let key = slot_key(&cell.target, &cell.platform);
        let index = match order.iter().position(|s| *s == key) {
            Some(i) => i,
            None => {
                order.push(key.clone());
                order.len() - 1
            }
        };
        let CellOutcome::Completed { result, .. } = outcome else {
            continue;
        };
        let entry = by_slot.entry(index).or_default();
        entry.server_version = result.server.version.clone();
        entry.image_digest = result.server.image_digest.clone();
        entry.nodes = result
            .nodes
            .iter()
            .map(|n| NodeInfo {
                name: n.node_name.clone().unwrap_or_else(|| n.member.clone()),
                cpu_model: n.host.cpu_model.clone(),
                architecture: n.host.cpu_arch.clone(),
                kernel: n.host.kernel_version.clone(),
                zone: n.zone.clone(),
                instance_type: n.instance_type.clone(),
            })
            .collect();
    }
    for (i, slot) in order.iter().enumerate() {
        if let Some(&ready) = observed.stateful_sets.get(slot) {
            by_slot.entry(i).or_default().ready_members = Some(ready);
        }
    }
    by_slot
        .into_iter()
        .map(|(i, mut t)| {
            t.target = order[i].0.clone();
            t.platform = order[i].1.clone();
            t
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CellPhase;
    use crate::operator::observe::ServerPod;
    use crate::operator::servers::tests::bench;
    use crate::operator::testing;

    const SPEC: &str = "\
targets:
  - {name: a, image: 'mongo:8.0.4', distribution: community}
  - {name: b, image: 'mongo:9.0.1', distribution: community}
platforms:
  - {name: p, nodeSelector: {pool: p}}
  - {name: q, nodeSelector: {pool: q}}
replicaSet: {members: 3, storageSize: 1Gi}
dataset: {sizes: [1k]}
workload: {type: flights}
repetitions: 2
";

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    fn settings(s: i64) -> Settings {
        Settings {
            now: at(s),
            stall_deadline: Duration::from_secs(60),
            resync: Duration::from_secs(30),
        }
    }

    fn slot(t: &str, p: &str) -> Slot {
        (t.to_owned(), p.to_owned())
    }

    fn servers(t: &str, p: &str) -> Action {
        Action::CreateServers {
            target: t.into(),
            platform: p.into(),
        }
    }

    fn runner(t: &str, p: &str, done: &[&str]) -> Action {
        Action::StartRunner {
            target: t.into(),
            platform: p.into(),
            completed_cells: done.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn add_result(o: &mut Observed, t: &str, p: &str, rep: u32) {
        let id = crate::plan::cell_id(t, p, "1k", rep);
        let result = testing::result("bench", t, p, "1k", rep, 10, &[("find", 1000, 100)], None);
        o.results.insert(
            id.clone(),
            ObservedResult::Document {
                config_map: format!("bench-{id}"),
                result: Box::new(result),
            },
        );
    }

    fn pods(o: &mut Observed, t: &str, p: &str, problem: Option<PodProblem>, created: i64) {
        for i in 0..3 {
            o.server_pods.push(ServerPod {
                name: format!("bench-{t}-{p}-{i}"),
                slot: slot(t, p),
                node: problem.is_none().then(|| format!("{p}-{i}")),
                created: Some(at(created)),
                problem: problem.clone(),
            });
        }
    }

    fn phases(d: &Decision) -> Vec<CellPhase> {
        d.status.cells.iter().map(|c| c.phase).collect()
    }

    fn cond<'a>(d: &'a Decision, t: &str) -> (&'a str, &'a str, &'a str) {
        let c = d.status.condition(t).unwrap();
        (c.status.as_str(), c.reason.as_str(), c.message.as_str())
    }

    #[test]
    fn a_new_benchmark_provisions_the_first_target_of_every_platform() {
        let b = bench("bench", SPEC);
        let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
        assert_eq!(d.actions, [servers("a", "p"), servers("a", "q")]);
        assert_eq!(d.status.phase, Some(Phase::Provisioning));
        assert_eq!(d.status.progress.as_deref(), Some("0/8"));
        assert_eq!(
            d.status.counts,
            Some(CellCounts {
                total: 8,
                pending: 8,
                running: 0,
                completed: 0,
                failed: 0
            })
        );
        assert_eq!(
            cond(&d, "Reconciling"),
            ("True", "Provisioning", "0/8 cells finished")
        );
        assert_eq!(
            cond(&d, "Ready"),
            ("False", "Provisioning", "0/8 cells finished")
        );
        assert_eq!(cond(&d, "Stalled").0, "False");
        assert_eq!(cond(&d, "ServersReady").0, "False");
        assert_eq!(d.status.observed_generation, Some(1));
        assert_eq!(d.status.run_id.as_deref(), Some("0f3c9a527d1e"));
        assert_eq!(d.status.baseline.as_deref(), Some("a"));
        assert_eq!(d.status.started_at, None);
        assert_eq!(d.requeue_after, Some(Duration::from_secs(30)));
        let ids: Vec<&str> = d.status.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "a.p.1k.r1",
                "a.p.1k.r2",
                "b.p.1k.r1",
                "b.p.1k.r2",
                "a.q.1k.r1",
                "a.q.1k.r2",
                "b.q.1k.r1",
                "b.q.1k.r2"
            ]
        );
    }

    #[test]
    fn sequential_runs_one_slot_at_a_time() {
        let b = bench("bench", &format!("{SPEC}parallelism: Sequential\n"));
        let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
        assert_eq!(d.actions, [servers("a", "p")]);
        let mut o = Observed::default();
        o.stateful_sets.insert(slot("a", "p"), 3);
        add_result(&mut o, "a", "p", 1);
        add_result(&mut o, "a", "p", 2);
        pods(&mut o, "a", "p", None, 0);
        // (a, p) done: its servers go; (b, p) waits for the nodes of p to be free.
        let d = decide(&b, &o, &settings(5)).unwrap();
        assert_eq!(
            d.actions,
            [Action::DeleteServers {
                target: "a".into(),
                platform: "p".into()
            }]
        );
        assert_eq!(cond(&d, "ServersReady").1, "WaitingForNodes");
        // Once they are gone, the next target gets its servers.
        o.stateful_sets.clear();
        o.server_pods.clear();
        let d = decide(&b, &o, &settings(10)).unwrap();
        assert_eq!(d.actions, [servers("b", "p")]);
    }

    #[test]
    fn unready_servers_wait_and_ready_servers_get_a_runner() {
        let b = bench("bench", SPEC);
        let mut o = Observed::default();
        o.stateful_sets.insert(slot("a", "p"), 1);
        o.stateful_sets.insert(slot("a", "q"), 3);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(
            d.actions,
            [Action::CreateRunnerAccess, runner("a", "q", &[])]
        );
        assert_eq!(d.status.phase, Some(Phase::Provisioning));
        assert_eq!(
            cond(&d, "ServersReady"),
            (
                "False",
                "Provisioning",
                "target a on platform p: 1/3 members ready"
            )
        );
        // The runner's first cell is the one it works on.
        assert_eq!(
            phases(&d),
            [
                CellPhase::Pending,
                CellPhase::Pending,
                CellPhase::Pending,
                CellPhase::Pending,
                CellPhase::Running,
                CellPhase::Pending,
                CellPhase::Pending,
                CellPhase::Pending
            ]
        );
        assert_eq!(d.status.counts.as_ref().unwrap().running, 1);
        assert!(d.status.started_at.is_some());
        // With the access in place only the Job is created.
        o.runner_access = true;
        o.stateful_sets.insert(slot("a", "p"), 3);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(d.actions, [runner("a", "p", &[]), runner("a", "q", &[])]);
        assert_eq!(d.status.phase, Some(Phase::Seeding));
        assert_eq!(
            cond(&d, "ServersReady"),
            (
                "True",
                "Ready",
                "replica sets ready: a on p (3/3), a on q (3/3)"
            )
        );
        assert_eq!(
            cond(&d, "DataSeeded"),
            (
                "False",
                "Seeding",
                "a runner is seeding its first dataset size"
            )
        );
    }

    #[test]
    fn running_jobs_are_left_alone_and_results_are_counted() {
        let b = bench("bench", SPEC);
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        for p in ["p", "q"] {
            o.stateful_sets.insert(slot("a", p), 3);
            o.jobs.insert(slot("a", p), JobState::Active);
        }
        add_result(&mut o, "a", "p", 1);
        add_result(&mut o, "a", "q", 1);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(d.actions, []);
        assert_eq!(d.status.phase, Some(Phase::Running));
        assert_eq!(d.status.progress.as_deref(), Some("2/8"));
        assert_eq!(
            cond(&d, "ServersReady"),
            (
                "True",
                "Ready",
                "replica sets ready: a on p (3/3), a on q (3/3)"
            )
        );
        assert_eq!(cond(&d, "DataSeeded").0, "True");
        assert_eq!(phases(&d)[..2], [CellPhase::Completed, CellPhase::Running]);
        let done = &d.status.cells[0];
        assert_eq!(done.ops_per_second, Some(100.0));
        assert_eq!(
            done.result_ref.as_ref().unwrap().config_map,
            "bench-a.p.1k.r1"
        );
        assert_eq!(d.status.targets.len(), 2);
        assert_eq!(d.status.targets[0].ready_members, Some(3));
        assert_eq!(d.status.targets[0].server_version.as_deref(), Some("8.0.4"));
        assert_eq!(d.status.targets[0].nodes[0].name, "p-node-0");
        // Plans that lag behind the results are brought up to date (for a retried pod);
        // plans that are current are left alone.
        o.plans.insert(slot("a", "p"), vec![]);
        o.plans.insert(slot("a", "q"), vec!["a.q.1k.r1".into()]);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(
            d.actions,
            [Action::UpdatePlan {
                target: "a".into(),
                platform: "p".into(),
                completed_cells: vec!["a.p.1k.r1".into()]
            }]
        );
        o.plans.clear();
        // A member lost mid-run shows, without stopping the runner.
        o.stateful_sets.insert(slot("a", "q"), 2);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(d.actions, []);
        assert_eq!(
            cond(&d, "ServersReady"),
            (
                "False",
                "MembersNotReady",
                "target a on platform q: 2/3 members ready while its runner works"
            )
        );
        assert_eq!(cond(&d, "Stalled").0, "False");
    }

    #[test]
    fn a_lost_job_is_recreated_without_its_completed_cells() {
        let b = bench("bench", SPEC);
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        o.stateful_sets.insert(slot("a", "p"), 3);
        o.stateful_sets.insert(slot("a", "q"), 3);
        o.jobs.insert(slot("a", "q"), JobState::Active);
        add_result(&mut o, "a", "p", 1);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(d.actions, [runner("a", "p", &["a.p.1k.r1"])]);
    }

    #[test]
    fn a_failed_runner_fails_its_remaining_cells_and_the_others_go_on() {
        let b = bench("bench", SPEC);
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        o.stateful_sets.insert(slot("a", "p"), 3);
        o.jobs.insert(
            slot("a", "p"),
            JobState::Failed {
                message: "target a: connection refused".into(),
            },
        );
        add_result(&mut o, "a", "p", 1);
        o.stateful_sets.insert(slot("a", "q"), 3);
        o.jobs.insert(slot("a", "q"), JobState::Active);
        let d = decide(&b, &o, &settings(0)).unwrap();
        // (a, p) is finished: its servers go and b gets its turn on p (after the pods leave).
        assert_eq!(
            d.actions,
            [
                servers("b", "p"),
                Action::DeleteServers {
                    target: "a".into(),
                    platform: "p".into()
                }
            ]
        );
        let failed = &d.status.cells[1];
        assert_eq!(failed.phase, CellPhase::Failed);
        assert_eq!(
            failed.message.as_deref(),
            Some("target a: connection refused")
        );
        assert_eq!(d.status.cells[0].phase, CellPhase::Completed);
        assert_eq!(d.status.counts.as_ref().unwrap().failed, 1);
    }

    #[test]
    fn the_end_is_completed_with_failures_counted_or_failed_when_nothing_succeeded() {
        let spec = SPEC.replace("  - {name: q, nodeSelector: {pool: q}}\n", "");
        let b = bench("bench", &spec);
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        o.jobs.insert(slot("a", "p"), JobState::Succeeded);
        o.jobs.insert(
            slot("b", "p"),
            JobState::Failed {
                message: "exit 2".into(),
            },
        );
        add_result(&mut o, "a", "p", 1);
        let mut incomplete =
            testing::result("bench", "a", "p", "1k", 2, 10, &[("find", 10, 100)], None);
        incomplete.status = crate::result::CellStatus::Incomplete {
            reason: "server closed the connection".into(),
        };
        o.results.insert(
            "a.p.1k.r2".into(),
            ObservedResult::Document {
                config_map: "bench-a.p.1k.r2".into(),
                result: Box::new(incomplete),
            },
        );
        let d = decide(&b, &o, &settings(100)).unwrap();
        assert_eq!(d.actions, []);
        assert_eq!(d.status.phase, Some(Phase::Completed));
        assert_eq!(
            phases(&d),
            [
                CellPhase::Completed,
                CellPhase::Failed,
                CellPhase::Failed,
                CellPhase::Failed
            ]
        );
        assert_eq!(
            d.status.cells[1].message.as_deref(),
            Some("server closed the connection")
        );
        assert_eq!(d.status.cells[2].message.as_deref(), Some("exit 2"));
        assert_eq!(
            cond(&d, "Ready"),
            ("True", "Completed", "1 completed, 3 failed of 4 cells")
        );
        assert_eq!(cond(&d, "Reconciling").0, "False");
        assert_eq!(cond(&d, "Stalled").0, "False");
        assert_eq!(
            cond(&d, "WorkloadCompleted"),
            (
                "True",
                "AllCellsFinished",
                "1 completed, 3 failed of 4 cells"
            )
        );
        assert_eq!(d.status.completed_at, Some(status::now_seconds(at(100))));
        assert_eq!(d.requeue_after, None);

        o.results.remove("a.p.1k.r1");
        let d = decide(&b, &o, &settings(100)).unwrap();
        assert_eq!(d.status.phase, Some(Phase::Failed));
        assert_eq!(
            cond(&d, "Stalled"),
            (
                "True",
                "AllCellsFailed",
                "no cell succeeded: 0 completed, 4 failed of 4 cells"
            )
        );
        assert_eq!(
            d.status.cells[0].message.as_deref(),
            Some("the runner finished without writing a result for this cell")
        );
    }

    #[test]
    fn unschedulable_servers_stall_after_the_deadline_naming_the_platform() {
        let b = bench("bench", SPEC);
        let mut o = Observed::default();
        o.stateful_sets.insert(slot("a", "p"), 3);
        o.stateful_sets.insert(slot("a", "q"), 0);
        let problem = PodProblem::Unschedulable {
            message: "0/11 nodes are available".into(),
        };
        pods(&mut o, "a", "q", Some(problem), 0);
        // 20 s in: not yet stalled; look again at the deadline (40 s + a margin).
        let d = decide(&b, &o, &settings(20)).unwrap();
        assert_eq!(cond(&d, "Stalled").0, "False");
        assert_eq!(cond(&d, "ServersReady").1, "Unschedulable");
        assert_eq!(d.requeue_after, Some(Duration::from_millis(30_500)));
        let d = decide(&b, &o, &settings(45)).unwrap();
        assert_eq!(d.requeue_after, Some(Duration::from_millis(15_500)));
        // Past it: Stalled, and the platform still ready goes on.
        let d = decide(&b, &o, &settings(61)).unwrap();
        let message = "servers of target a on platform q cannot be scheduled: pod bench-a-q-0 has no node matching the platform (0/11 nodes are available)";
        assert_eq!(cond(&d, "Stalled"), ("True", "Unschedulable", message));
        assert_eq!(cond(&d, "Reconciling"), ("False", "Stalled", message));
        assert_eq!(
            d.status.headline.as_deref(),
            Some(&*format!("Stalled: {message}"))
        );
        assert_eq!(
            d.actions,
            [Action::CreateRunnerAccess, runner("a", "p", &[])]
        );
    }

    #[test]
    fn image_pull_failures_name_the_image() {
        let b = bench("bench", SPEC);
        let mut o = Observed::default();
        o.stateful_sets.insert(slot("a", "p"), 0);
        o.stateful_sets.insert(slot("a", "q"), 0);
        let problem = PodProblem::ImagePull {
            image: "mongo:8.0.4".into(),
            reason: "ImagePullBackOff".into(),
            message: "not found".into(),
        };
        pods(&mut o, "a", "p", Some(problem), 0);
        let d = decide(&b, &o, &settings(10)).unwrap();
        let (status, reason, message) = cond(&d, "ServersReady");
        assert_eq!((status, reason), ("False", "ImagePullFailed"));
        assert!(message.contains("servers of target a on platform p cannot pull image mongo:8.0.4: ImagePullBackOff: not found"), "{message}");
        assert_eq!(cond(&d, "Stalled").0, "False");
        let d = decide(&b, &o, &settings(70)).unwrap();
        assert_eq!(cond(&d, "Stalled").1, "ImagePullFailed");
    }

    #[test]
    fn suspend_starts_nothing_new_but_lets_a_runner_finish() {
        let b = bench("bench", &format!("{SPEC}suspend: true\n"));
        let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
        assert_eq!(d.actions, []);
        assert_eq!(d.status.phase, Some(Phase::Suspended));
        assert_eq!(
            cond(&d, "Reconciling"),
            ("False", "Suspended", "spec.suspend is true")
        );
        assert_eq!(d.requeue_after, None);
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        o.stateful_sets.insert(slot("a", "p"), 3);
        o.stateful_sets.insert(slot("a", "q"), 3);
        o.jobs.insert(slot("a", "p"), JobState::Active);
        let d = decide(&b, &o, &settings(0)).unwrap();
        assert_eq!(d.actions, []);
        assert_eq!(d.status.phase, Some(Phase::Seeding));
    }

    #[test]
    fn retained_servers_are_not_deleted() {
        let b = bench("bench", &format!("{SPEC}cleanupPolicy: Retain\n"));
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        o.stateful_sets.insert(slot("a", "p"), 3);
        o.jobs.insert(slot("a", "p"), JobState::Succeeded);
        add_result(&mut o, "a", "p", 1);
        add_result(&mut o, "a", "p", 2);
        pods(&mut o, "a", "p", None, 0);
        let d = decide(&b, &o, &settings(0)).unwrap();
        // No deletion, and b does not wait for a's pods to leave p.
        assert_eq!(d.actions, [servers("b", "p"), servers("a", "q")]);
    }

    #[test]
    fn external_targets_get_a_runner_at_once() {
        let spec = "\
targets: [{name: ext, external: {uriSecretRef: {name: s}}}]
platforms: [{name: local}]
dataset: {sizes: [10k, 20k]}
workload: {type: flights}
repetitions: 1
";
        let b = bench("bench", spec);
        let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
        assert_eq!(
            d.actions,
            [Action::CreateRunnerAccess, runner("ext", "local", &[])]
        );
        assert_eq!(d.status.phase, Some(Phase::Seeding));
        assert_eq!(cond(&d, "ServersReady").1, "NothingToProvision");
    }

    #[test]
    fn a_finished_benchmark_deletes_itself_after_its_ttl() {
        let spec = SPEC.replace("  - {name: q, nodeSelector: {pool: q}}\n", "");
        let b = bench("bench", &format!("{spec}ttlSecondsAfterFinished: 60\n"));
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        for t in ["a", "b"] {
            o.jobs.insert(slot(t, "p"), JobState::Succeeded);
            add_result(&mut o, t, "p", 1);
            add_result(&mut o, t, "p", 2);
        }
        // Finished at 100: 60 s to go; then wait 20 s more at 140; at 160 it goes.
        let done = decide(&b, &o, &settings(100)).unwrap();
        assert_eq!(done.status.phase, Some(Phase::Completed));
        assert_eq!(done.requeue_after, Some(Duration::from_secs(60)));
        assert_eq!(done.actions, []);
        let mut written = b.clone();
        written.status = Some(done.status);
        assert_eq!(
            decide(&written, &o, &settings(140)).unwrap().requeue_after,
            Some(Duration::from_secs(20))
        );
        let gone = decide(&written, &o, &settings(160)).unwrap();
        assert_eq!(gone.actions, [Action::DeleteBenchmark]);
        assert_eq!(gone.requeue_after, None);
    }

    #[test]
    fn deciding_again_on_the_written_status_changes_nothing() {
        // The same observations on top of the status just written give the same status:
        // no write, so no write loop. Also for a completed benchmark much later.
        let b = bench("bench", SPEC);
        let mut o = Observed {
            runner_access: true,
            ..Default::default()
        };
        o.stateful_sets.insert(slot("a", "p"), 3);
        o.jobs.insert(slot("a", "p"), JobState::Active);
        add_result(&mut o, "a", "p", 1);
        let first = decide(&b, &o, &settings(0)).unwrap();
        let mut written = b.clone();
        written.status = Some(first.status.clone());
        let second = decide(&written, &o, &settings(500)).unwrap();
        assert_eq!(second.status, first.status);

        let mut done = Observed {
            runner_access: true,
            ..Default::default()
        };
        for t in ["a", "b"] {
            for p in ["p", "q"] {
                done.jobs.insert(slot(t, p), JobState::Succeeded);
                add_result(&mut done, t, p, 1);
                add_result(&mut done, t, p, 2);
            }
        }
        let end = decide(&written, &done, &settings(1000)).unwrap();
        assert_eq!(end.status.phase, Some(Phase::Completed));
        assert_eq!(end.status.comparisons.len(), 2);
        assert_eq!(
            end.status.headline.as_deref(),
            Some("b: +0.0% ops/s vs a (1k, p)")
        );
        let mut finished = b.clone();
        finished.status = Some(end.status.clone());
        let later = decide(&finished, &done, &settings(100_000)).unwrap();
        assert_eq!(later.status, end.status);
        assert_eq!(later.actions, []);
        assert_eq!(later.requeue_after, None);
    }
}
