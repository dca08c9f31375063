//! What one active runner needs next: its servers created (once the nodes are free of the
//! previous target's), then, once every member is ready, its Job; and, for a runner at work,
//! the cell it works on.

use std::time::Duration;

use super::decision::{Change, Settings};
use super::platform::{Unit, slot_key, who};
use super::problems::{ServerIssue, refused_servers, unready_servers};
use super::situation::Step;
use crate::api::{CleanupPolicy, MongoBenchmarkSpec};
use crate::contract::slot_order;
use crate::contract::{Activity, RunnerStep};
use crate::operator::observe::{JobState, Observed};
use crate::operator::status::CellOutcome;
use crate::plan::PlannedCell;

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
    let runner = Active {
        spec,
        unit,
        observed,
        settings,
    };
    let working = if completed_cells.is_empty() {
        Step::Seeding
    } else {
        Step::Running
    };
    if let Some(job) = observed.jobs.get(&unit.key) {
        runner.keep_running(job, completed_cells, working, work);
    } else if runner.provision(work) {
        runner.start(completed_cells, working, work);
    } else {
        work.steps.push(Step::Provisioning);
    }
}

/// One active runner and what its decision reads.
struct Active<'a> {
    spec: &'a MongoBenchmarkSpec,
    unit: &'a Unit,
    observed: &'a Observed,
    settings: &'a Settings,
}

impl Active<'_> {
    /// Its provisioned targets.
    fn provisioned(&self) -> impl Iterator<Item = &String> {
        let spec = self.spec;
        self.unit
            .targets
            .iter()
            .filter(move |t| spec.target(t).is_some_and(|t| t.is_provisioned()))
    }

    /// Ready pods a provisioned target needs: its replica set's members, or every member and
    /// router of a sharded target.
    fn wanted(&self, target: &str) -> u32 {
        match self.spec.target(target) {
            Some(t) if t.is_sharded() => {
                crate::operator::render::servers::sharded::ready_pods_wanted(t)
            }
            _ => self.spec.replica_set().members(),
        }
    }

    /// A runner whose Job exists: its plan kept current, and its servers still counted for
    /// ServersReady.
    fn keep_running(
        &self,
        job: &JobState,
        completed_cells: Vec<String>,
        working: Step,
        work: &mut Work,
    ) {
        let platform = &self.unit.platform;
        work.jobs_running = true;
        if *job == JobState::Active
            && self
                .observed
                .plans
                .get(&self.unit.key)
                .is_some_and(|p| *p != completed_cells)
        {
            work.actions.push(Change::UpdatePlan {
                platform: platform.clone(),
                targets: self.unit.targets.clone(),
                completed_cells,
            });
        }
        work.steps.push(working);
        for target in self.provisioned() {
            let members = self.wanted(target);
            let ready = self
                .observed
                .stateful_sets
                .get(&slot_key(target, platform))
                .copied()
                .unwrap_or(0);
            if ready >= members {
                work.ready_notes.push(ready_note(target, platform, members));
            } else {
                work.issues.push(ServerIssue {
                    reason: "MembersNotReady",
                    message: format!(
                        "target {target} on platform {platform}: {ready}/{members} members ready while its runner works"
                    ),
                    stalled: false,
                });
            }
        }
    }

    /// The servers of every provisioned target of the runner, created together; whether they
    /// are all ready.
    fn provision(&self, work: &mut Work) -> bool {
        let platform = &self.unit.platform;
        let mut all_ready = true;
        for target in self.provisioned() {
            let members = self.wanted(target);
            let slot = slot_key(target, platform);
            match self.observed.stateful_sets.get(&slot) {
                None => {
                    all_ready = false;
                    let issue = self.create_servers(target, members, work);
                    work.issues.push(issue);
                }
                Some(&ready) if ready < members => {
                    all_ready = false;
                    let pods = self.observed.server_pods.iter().filter(|p| p.slot == slot);
                    let (issue, left) = match refused_servers(&slot, self.observed, self.settings) {
                        Some(refused) => refused,
                        None => unready_servers(&slot, ready, members, pods, self.settings),
                    };
                    if let Some(left) = left {
                        work.next_deadline = Some(work.next_deadline.map_or(left, |d| d.min(left)));
                    }
                    work.issues.push(issue);
                }
                Some(_) => work.ready_notes.push(ready_note(target, platform, members)),
            }
        }
        all_ready
    }

    /// Creates the servers of `target` unless the previous target's still hold the nodes or
    /// the benchmark is suspended; the issue that says which.
    fn create_servers(&self, target: &str, members: u32, work: &mut Work) -> ServerIssue {
        let platform = &self.unit.platform;
        let others_on_platform = self
            .observed
            .server_pods
            .iter()
            .any(|p| p.slot.1 == *platform && !self.unit.targets.contains(&p.slot.0));
        let (reason, message) = if self.spec.cleanup_policy() == CleanupPolicy::DeleteServers
            && others_on_platform
        {
            (
                "WaitingForNodes",
                format!(
                    "target {target} on platform {platform}: waiting for the previous target's servers to leave the nodes"
                ),
            )
        } else if self.spec.suspend() {
            (
                "Suspended",
                format!("target {target} on platform {platform}: suspended before provisioning"),
            )
        } else {
            work.actions.push(Change::CreateServers {
                target: target.to_owned(),
                platform: platform.clone(),
            });
            (
                "Provisioning",
                format!("target {target} on platform {platform}: creating {members} members"),
            )
        };
        ServerIssue {
            reason,
            message,
            stalled: false,
        }
    }

    /// Servers ready, or nothing to provision: the runner's Job (and the runners' access),
    /// unless suspended.
    fn start(&self, completed_cells: Vec<String>, working: Step, work: &mut Work) {
        let unit = self.unit;
        if self.spec.suspend() {
            work.issues.push(ServerIssue {
                reason: "Suspended",
                message: format!(
                    "{} on platform {}: suspended before {} runner",
                    who(&unit.targets),
                    unit.platform,
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
        if !self.observed.runner_access && !work.actions.contains(&Change::CreateRunnerAccess) {
            work.actions.push(Change::CreateRunnerAccess);
        }
        work.actions.push(Change::StartRunner {
            platform: unit.platform.clone(),
            targets: unit.targets.clone(),
            completed_cells,
        });
        work.runner_started = true;
        work.jobs_running = true;
        work.steps.push(working);
    }
}

/// A ready replica set as ServersReady names it: `a on p (3/3)`.
fn ready_note(target: &str, platform: &str, members: u32) -> String {
    format!("{target} on {platform} ({members}/{members})")
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
        let in_slot = slot_order::order(seed, size.unwrap_or(0), c.repetition, unit.targets.len());
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
