//! What one active runner needs next: its servers created (once the nodes are free of the
//! previous target's), then, once every member is ready, its Job; and, for a runner at work,
//! the cell it works on.

use std::time::Duration;

use super::decision::{Change, Settings};
use super::platform::{Unit, slot_key, who};
use super::problems::{ServerIssue, refused_servers, unready_servers};
use super::status::Step;
use crate::api::{CleanupPolicy, MongoBenchmarkSpec};
use crate::contract::{Activity, RunnerStep};
use crate::operator::observe::{JobState, Observed};
use crate::operator::status::CellOutcome;
use crate::plan::PlannedCell;
use crate::runner::slots;

/// The pending cell (an index into `cells`) an activity is about, with its phase: the cell it
/// names, or while seeding, the first pending cell of the target and size in `order`.
fn running_cell<'a, K: Ord>(
    activity: &'a Activity,
    cells: &[PlannedCell],
    pending: &[usize],
    order: impl Fn(&PlannedCell) -> K,
) -> Option<(usize, &'a RunnerStep)> {
    let i = match &activity.cell {
        Some(id) => pending.iter().copied().find(|&i| cells[i].id == *id)?,
        None => pending
            .iter()
            .copied()
            .filter(|&i| cells[i].target == activity.target && cells[i].size == activity.size)
            .min_by_key(|&i| order(&cells[i]))?,
    };
    Some((i, &activity.phase))
}

/// Where the active runners are and what they need, gathered runner by runner in plan order.
#[derive(Default)]
pub(super) struct Work {
    /// What to change, in order.
    pub actions: Vec<Change>,
    /// Where each active runner is.
    pub steps: Vec<Step>,
    /// What keeps their servers from running.
    pub issues: Vec<ServerIssue>,
    /// Their ready replica sets, e.g. `a on p (3/3)`.
    pub ready_notes: Vec<String>,
    /// How long until the first of their problems stalls the benchmark.
    pub next_deadline: Option<Duration>,
    /// A runner starts in this pass.
    pub runner_started: bool,
    /// A runner Job exists or starts in this pass.
    pub jobs_running: bool,
}

/// Adds to `work` what the active runner `unit` needs next; `completed_cells` are its cells
/// that have a result.
pub(super) fn act(
    spec: &MongoBenchmarkSpec,
    unit: &Unit,
    completed_cells: Vec<String>,
    observed: &Observed,
    settings: &Settings,
    work: &mut Work,
) {
    // Ready pods a provisioned target needs: its replica set's members, or every member and
    // router of a sharded target.
    let rs_members = spec.replica_set().members();
    let wanted = |target: &str| match spec.target(target) {
        Some(t) if t.is_sharded() => {
            crate::operator::render::servers::sharded::ready_pods_wanted(t)
        }
        _ => rs_members,
    };
    let suspended = spec.suspend();
    let delete_servers = spec.cleanup_policy() == CleanupPolicy::DeleteServers;
    let platform_name = &unit.platform;
    let provisioned: Vec<&String> = unit
        .targets
        .iter()
        .filter(|t| spec.target(t).is_some_and(|t| t.is_provisioned()))
        .collect();
    let job = observed.jobs.get(&unit.key);
    let working = if completed_cells.is_empty() {
        Step::Seeding
    } else {
        Step::Running
    };
    if job.is_some() {
        work.jobs_running = true;
        if job == Some(&JobState::Active)
            && observed
                .plans
                .get(&unit.key)
                .is_some_and(|p| *p != completed_cells)
        {
            work.actions.push(Change::UpdatePlan {
                platform: platform_name.clone(),
                targets: unit.targets.clone(),
                completed_cells: completed_cells.clone(),
            });
        }
        work.steps.push(working);
        // The servers of a running runner still count for ServersReady.
        for target_name in provisioned {
            let members = wanted(target_name);
            let ready = observed
                .stateful_sets
                .get(&slot_key(target_name, platform_name))
                .copied()
                .unwrap_or(0);
            if ready >= members {
                work.ready_notes.push(format!(
                    "{target_name} on {platform_name} ({members}/{members})"
                ));
            } else {
                work.issues.push(ServerIssue {
                    reason: "MembersNotReady",
                    message: format!(
                        "target {target_name} on platform {platform_name}: {ready}/{members} members ready while its runner works"
                    ),
                    stalled: false,
                });
            }
        }
        return;
    }
    // The servers of every provisioned target of the runner, created together.
    let mut all_ready = true;
    for target_name in provisioned {
        let members = wanted(target_name);
        let slot = slot_key(target_name, platform_name);
        match observed.stateful_sets.get(&slot) {
            None => {
                all_ready = false;
                let others_on_platform = observed
                    .server_pods
                    .iter()
                    .any(|p| p.slot.1 == *platform_name && !unit.targets.contains(&p.slot.0));
                if delete_servers && others_on_platform {
                    work.issues.push(ServerIssue {
                        reason: "WaitingForNodes",
                        message: format!(
                            "target {target_name} on platform {platform_name}: waiting for the previous target's servers to leave the nodes"
                        ),
                        stalled: false,
                    });
                } else if suspended {
                    work.issues.push(ServerIssue {
                        reason: "Suspended",
                        message: format!("target {target_name} on platform {platform_name}: suspended before provisioning"),
                        stalled: false,
                    });
                } else {
                    work.actions.push(Change::CreateServers {
                        target: target_name.clone(),
                        platform: platform_name.clone(),
                    });
                    work.issues.push(ServerIssue {
                        reason: "Provisioning",
                        message: format!("target {target_name} on platform {platform_name}: creating {members} members"),
                        stalled: false,
                    });
                }
            }
            Some(&ready) if ready < members => {
                all_ready = false;
                let pods = observed.server_pods.iter().filter(|p| p.slot == slot);
                let (issue, left) = match refused_servers(&slot, observed, settings) {
                    Some(refused) => refused,
                    None => unready_servers(&slot, ready, members, pods, settings),
                };
                if let Some(left) = left {
                    work.next_deadline = Some(work.next_deadline.map_or(left, |d| d.min(left)));
                }
                work.issues.push(issue);
            }
            Some(_) => work.ready_notes.push(format!(
                "{target_name} on {platform_name} ({members}/{members})"
            )),
        }
    }
    if !all_ready {
        work.steps.push(Step::Provisioning);
        return;
    }
    // Servers ready, or nothing to provision: the runner.
    if suspended {
        work.issues.push(ServerIssue {
            reason: "Suspended",
            message: format!(
                "{} on platform {platform_name}: suspended before {} runner",
                who(&unit.targets),
                if unit.targets.len() == 1 {
                    "its"
                } else {
                    "their"
                }
            ),
            stalled: false,
        });
        return;
    }
    if !observed.runner_access && !work.actions.contains(&Change::CreateRunnerAccess) {
        work.actions.push(Change::CreateRunnerAccess);
    }
    work.actions.push(Change::StartRunner {
        platform: platform_name.clone(),
        targets: unit.targets.clone(),
        completed_cells,
    });
    work.runner_started = true;
    work.jobs_running = true;
    work.steps.push(working);
}

/// Marks as running the cell the started runner `unit` works on, among its `pending` cells
/// (indices into `cells`): the cell it names (or, while it seeds, the first of the size it
/// seeds); without word from it, its first pending cell in the order it runs them (sizes
/// ascending, then slots, then its targets in the slot's seeded order: A B, B A, ...).
pub(super) fn mark_running<'a>(
    spec: &MongoBenchmarkSpec,
    unit: &Unit,
    cells: &[PlannedCell],
    pending: &[usize],
    observed: &'a Observed,
    outcomes: &mut [CellOutcome<'a>],
) {
    let seed = spec.workload.seed();
    let order = |c: &PlannedCell| {
        let size = spec.dataset.sizes.iter().position(|s| *s == c.size);
        let in_slot = slots::order(seed, size.unwrap_or(0), c.repetition, unit.targets.len());
        let target = unit.targets.iter().position(|t| *t == c.target);
        (
            size,
            c.repetition,
            target.and_then(|t| in_slot.iter().position(|&i| i == t)),
        )
    };
    let named = observed
        .activities
        .get(&unit.platform)
        .and_then(|a| running_cell(a, cells, pending, order));
    let first = pending.iter().copied().min_by_key(|&i| order(&cells[i]));
    match (named, first) {
        (Some((i, activity)), _) => {
            outcomes[i] = CellOutcome::Running {
                activity: Some(activity),
            }
        }
        (None, Some(i)) => outcomes[i] = CellOutcome::Running { activity: None },
        (None, None) => {}
    }
}
