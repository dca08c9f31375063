//! The "what next" decision: a pure function of the MongoBenchmark, what the cluster holds
//! ([`Observed`]) and the time, returning the actions to take and the status to show.
//!
//! Work is done by runners, each one Job on one platform. Per platform, first, whether it can
//! hold all its targets at once ([`RunnerStatus`] in `status.runners` says which and why):
//! - yes when it has one target, when its targets are all external (they take no room), when
//!   only one of them is provisioned, or when its nodes hold every replica set at once
//!   ([`placement`]): then ONE runner runs every target of the platform,
//!   repetitions interleaved (A B C A B C), once all their replica sets are ready;
//! - no when they do not, or when the nodes cannot be read: one runner per target, one after
//!   another.
//!
//! Once a runner Job of the platform exists the choice stays as it started (a platform runner
//! means interleaved, a one-target runner of a platform with several targets means not), and
//! so it does once the replica sets of two or more targets were created together, or, when
//! its Jobs are gone, once the platform has results (as `status.runners` recorded); a
//! platform whose runners have not started follows its nodes.
//!
//! Which runners are active:
//! - `PerPlatform`: on every platform, the first runner (in target order) not finished; so the
//!   platforms proceed at once and, when not interleaved, a platform's targets one after
//!   another on the same nodes.
//! - `Sequential`: the first unfinished runner of all, platform by platform.
//!
//! An active runner gets the servers of its provisioned targets first (only once no other
//! target's server pods remain on the platform, when servers are deleted after their cells)
//! and its Job once every member of each is ready; a runner of external targets gets its Job
//! at once. A runner is finished when each of its cells has a result or its Job failed.
//! Finished runners lose their servers under `cleanupPolicy: DeleteServers`. `suspend: true`
//! creates nothing new.
//!
//! Server pods that stay unschedulable, or cannot pull their image, past the stall deadline
//! make the benchmark `Stalled` (reason `Unschedulable` or `ImagePullFailed`, naming the
//! target, the platform and the image), and so does a StatefulSet or runner Job whose pods
//! admission refuses (`FailedCreate`/`RunnerFailedCreate`, naming the object and quoting the
//! refusal); before the deadline the problem is shown in the `ServersReady` condition and the
//! pass is repeated at the deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use self::placement::MemberRequests;
use super::Error;
use super::build::names;
use super::observe::{
    Creator, JobState, Observed, ObservedResult, PlatformNodes, PodProblem, RunnerKey, ServerPod,
    Slot,
};
use super::status::{self, CellOutcome, condition};
use crate::api::{
    CellCounts, CleanupPolicy, MongoBenchmark, MongoBenchmarkStatus, NodeInfo, Parallelism, Phase,
    Platform, RunnerStatus, TargetStatus, condition_types as ct,
};
use crate::plan::{self, Cell};
use crate::result::CellResult;
use crate::runner::activity::Activity;
use crate::runner::slots;

pub mod placement;

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
    /// Create the plan ConfigMap and the Job of a runner.
    StartRunner {
        /// Platform name.
        platform: String,
        /// Its targets, in spec order: one, or every target of the platform (interleaved).
        targets: Vec<String>,
        /// Cells that already have a result: the runner skips them.
        completed_cells: Vec<String>,
    },
    /// Rewrite the plan of a running runner so that a retried runner pod skips the cells that
    /// have results since the Job started.
    UpdatePlan {
        /// Platform name.
        platform: String,
        /// Its targets.
        targets: Vec<String>,
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

/// Reasons of [`RunnerStatus`], documented on its `reason` field.
pub mod runner_reasons {
    /// The platform has one target.
    pub const SINGLE_TARGET: &str = "SingleTarget";
    /// Every target of the platform is external.
    pub const ALL_EXTERNAL: &str = "AllExternal";
    /// One target is provisioned, the others are external.
    pub const ONE_REPLICA_SET: &str = "OneReplicaSet";
    /// The platform's nodes hold every replica set at once.
    pub const FITS: &str = "Fits";
    /// They do not.
    pub const INSUFFICIENT_CAPACITY: &str = "InsufficientCapacity";
    /// The platform's nodes could not be read.
    pub const NODES_UNREADABLE: &str = "NodesUnreadable";
    /// The runners started this way before the reason was recorded.
    pub const STARTED: &str = "Started";
}

/// How the targets of one platform are run.
#[derive(Debug, Clone, PartialEq)]
struct PlatformPlan {
    interleaved: bool,
    reason: String,
    message: String,
}

impl PlatformPlan {
    fn new(interleaved: bool, reason: &str, message: String) -> PlatformPlan {
        PlatformPlan {
            interleaved,
            reason: reason.to_owned(),
            message,
        }
    }
}

/// Whether `platform` runs its targets interleaved, from its nodes and what has started
/// (module docs).
fn platform_plan(
    bench: &MongoBenchmark,
    platform: &Platform,
    observed: &Observed,
    has_results: bool,
) -> Result<PlatformPlan, Error> {
    use runner_reasons as r;
    let spec = &bench.spec;
    let name = platform.name.as_str();
    if spec.targets.len() == 1 {
        return Ok(PlatformPlan::new(
            true,
            r::SINGLE_TARGET,
            format!("platform {name} has one target"),
        ));
    }
    let provisioned = spec.targets.iter().filter(|t| t.is_provisioned()).count() as u32;
    let not_interleaved = "its targets run one after another, not interleaved";
    let computed = match provisioned {
        0 => Some(PlatformPlan::new(
            true,
            r::ALL_EXTERNAL,
            format!("every target on platform {name} is external: no replica set to place"),
        )),
        1 => Some(PlatformPlan::new(
            true,
            r::ONE_REPLICA_SET,
            format!("one replica set to place on platform {name}, the other targets are external"),
        )),
        _ => match observed.nodes.get(name) {
            Some(PlatformNodes::Listed(nodes)) => {
                let rs = spec.replica_set();
                let requests = MemberRequests::of(&rs)
                    .map_err(|e| Error::Spec(format!("spec.replicaSet.resources: {e}")))?;
                let fit = placement::fit(nodes, provisioned, rs.members(), &requests);
                let said = placement::describe(name, &fit, rs.members(), &requests);
                Some(if fit.fits() {
                    PlatformPlan::new(true, r::FITS, said)
                } else {
                    PlatformPlan::new(
                        false,
                        r::INSUFFICIENT_CAPACITY,
                        format!("{said}: {not_interleaved}"),
                    )
                })
            }
            Some(PlatformNodes::Unreadable(why)) => Some(PlatformPlan::new(
                false,
                r::NODES_UNREADABLE,
                format!("the nodes of platform {name} cannot be read ({why}): {not_interleaved}"),
            )),
            None => None,
        },
    };
    let old = bench
        .status
        .as_ref()
        .and_then(|s| s.runners.iter().find(|r| r.platform == name));
    let pinned = if observed
        .jobs
        .contains_key(&RunnerKey::Platform(name.to_owned()))
    {
        Some(true)
    } else if observed.jobs.keys().any(|k| k.platform() == name) {
        Some(false)
    } else if provisioned >= 2
        && observed
            .stateful_sets
            .keys()
            .filter(|(_, p)| p == name)
            .count()
            >= 2
    {
        Some(true)
    } else if has_results {
        // Its Jobs are gone (deleted by hand) but it had started: as status recorded.
        old.map(|o| o.interleaved)
    } else {
        None
    };
    Ok(match (pinned, computed) {
        (None, Some(plan)) => plan,
        (None, None) => PlatformPlan::new(
            false,
            r::NODES_UNREADABLE,
            format!("the nodes of platform {name} were not read: {not_interleaved}"),
        ),
        // Started: what status said when it started, else what explains it now.
        (Some(mode), computed) => match old.filter(|o| o.interleaved == mode) {
            Some(o) => PlatformPlan::new(mode, &o.reason, o.message.clone()),
            None => match computed.filter(|c| c.interleaved == mode) {
                Some(plan) => plan,
                None if mode => PlatformPlan::new(
                    true,
                    r::STARTED,
                    format!(
                        "the replica sets of platform {name} were created together, its targets run interleaved"
                    ),
                ),
                None => PlatformPlan::new(
                    false,
                    r::STARTED,
                    format!(
                        "the runners of platform {name} started one target at a time: {not_interleaved}"
                    ),
                ),
            },
        },
    })
}

/// One runner: its targets on a platform, and the key of its Job.
#[derive(Debug, Clone)]
struct Unit {
    platform: String,
    targets: Vec<String>,
    key: RunnerKey,
}

/// `target a` or `targets a, b`.
fn who(targets: &[String]) -> String {
    match targets {
        [one] => format!("target {one}"),
        _ => format!("targets {}", targets.join(", ")),
    }
}

/// Where an active runner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Waiting for its servers (or for the nodes to be free of the previous target's).
    Provisioning,
    /// Runner started, no result yet.
    Seeding,
    /// Runner started, some results.
    Running,
}

/// A problem keeping the servers of a target on a platform from running.
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

/// The pending cell (an index into `cells`) an activity is about, with its phase: the cell it
/// names, or while seeding, the first pending cell of the target and size in `order`.
fn running_cell<'a, K: Ord>(
    activity: &'a Activity,
    cells: &[Cell],
    pending: &[usize],
    order: impl Fn(&Cell) -> K,
) -> Option<(usize, &'a str)> {
    let i = match &activity.cell {
        Some(id) => pending.iter().copied().find(|&i| cells[i].id == *id)?,
        None => pending
            .iter()
            .copied()
            .filter(|&i| cells[i].target == activity.target && cells[i].size == activity.size)
            .min_by_key(|&i| order(&cells[i]))?,
    };
    Some((i, activity.phase.as_str()))
}

fn slot_key(target: &str, platform: &str) -> Slot {
    (target.to_owned(), platform.to_owned())
}

/// Decides the next actions and the status of `bench`.
///
/// # Errors
/// [`Error::Spec`] when the spec cannot be expanded into cells or its resources do not parse.
pub fn decide(
    bench: &MongoBenchmark,
    observed: &Observed,
    settings: &Settings,
) -> Result<Decision, Error> {
    let spec = &bench.spec;
    let now = settings.now;
    // With a precision goal, the runners' added slots are cells once they have a result.
    let cells = plan::cells_with_added(spec, |id| observed.results.contains_key(id))
        .map_err(|e| Error::Spec(e.to_string()))?;
    let members = spec.replica_set().members();
    let suspended = spec.suspend();
    let delete_servers = spec.cleanup_policy() == CleanupPolicy::DeleteServers;
    let bench_name = bench.metadata.name.clone().unwrap_or_default();

    // Per platform, how its targets run; then the runners in plan order (platform by
    // platform, target by target).
    let target_names: Vec<String> = spec.targets.iter().map(|t| t.name.clone()).collect();
    let mut plans: Vec<(&Platform, PlatformPlan)> = Vec::new();
    let mut units: Vec<Unit> = Vec::new();
    for platform in &spec.platforms {
        let has_results = cells
            .iter()
            .any(|c| c.platform == platform.name && observed.results.contains_key(&c.id));
        let plan = platform_plan(bench, platform, observed, has_results)?;
        let groups: Vec<Vec<String>> = if plan.interleaved {
            vec![target_names.clone()]
        } else {
            target_names.iter().map(|t| vec![t.clone()]).collect()
        };
        for targets in groups {
            units.push(Unit {
                key: RunnerKey::of(&platform.name, &targets),
                platform: platform.name.clone(),
                targets,
            });
        }
        plans.push((platform, plan));
    }
    let unit_of: BTreeMap<Slot, usize> = units
        .iter()
        .enumerate()
        .flat_map(|(i, u)| u.targets.iter().map(move |t| (slot_key(t, &u.platform), i)))
        .collect();
    let unit_index = |c: &Cell| unit_of[&slot_key(&c.target, &c.platform)];
    let mut outcomes: Vec<CellOutcome<'_>> = cells
        .iter()
        .map(|c| outcome_of(c, observed, observed.jobs.get(&units[unit_index(c)].key)))
        .collect();
    // A runner under a precision goal may add slots after its planned cells: its unit is
    // done only when its Job is too.
    let unit_done = |u: usize, outcomes: &[CellOutcome<'_>]| {
        let adding =
            spec.precision.is_some() && observed.jobs.get(&units[u].key) == Some(&JobState::Active);
        !adding
            && cells
                .iter()
                .zip(outcomes)
                .filter(|(c, _)| unit_index(c) == u)
                .all(|(_, o)| o.is_terminal())
    };
    let unfinished: Vec<usize> = (0..units.len())
        .filter(|&u| !unit_done(u, &outcomes))
        .collect();
    let active: Vec<usize> = match spec.parallelism() {
        Parallelism::Sequential => unfinished.first().copied().into_iter().collect(),
        Parallelism::PerPlatform => {
            let mut seen: Vec<&str> = Vec::new();
            unfinished
                .iter()
                .copied()
                .filter(|&u| {
                    let platform = units[u].platform.as_str();
                    let first = !seen.contains(&platform);
                    seen.push(platform);
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

    for &u in &active {
        let unit = &units[u];
        let platform_name = &unit.platform;
        let provisioned: Vec<&String> = unit
            .targets
            .iter()
            .filter(|t| spec.target(t).is_some_and(|t| t.is_provisioned()))
            .collect();
        let job = observed.jobs.get(&unit.key);
        let completed_cells: Vec<String> = cells
            .iter()
            .filter(|c| unit_index(c) == u && observed.results.contains_key(&c.id))
            .map(|c| c.id.clone())
            .collect();
        let working = if completed_cells.is_empty() {
            Step::Seeding
        } else {
            Step::Running
        };
        if job.is_some() {
            jobs_running = true;
            if job == Some(&JobState::Active)
                && observed
                    .plans
                    .get(&unit.key)
                    .is_some_and(|p| *p != completed_cells)
            {
                actions.push(Action::UpdatePlan {
                    platform: platform_name.clone(),
                    targets: unit.targets.clone(),
                    completed_cells: completed_cells.clone(),
                });
            }
            steps.push(working);
            // The servers of a running runner still count for ServersReady.
            for target_name in provisioned {
                let ready = observed
                    .stateful_sets
                    .get(&slot_key(target_name, platform_name))
                    .copied()
                    .unwrap_or(0);
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
        // The servers of every provisioned target of the runner, created together.
        let mut all_ready = true;
        for target_name in provisioned {
            let slot = slot_key(target_name, platform_name);
            match observed.stateful_sets.get(&slot) {
                None => {
                    all_ready = false;
                    let others_on_platform = observed
                        .server_pods
                        .iter()
                        .any(|p| p.slot.1 == *platform_name && !unit.targets.contains(&p.slot.0));
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
                }
                Some(&ready) if ready < members => {
                    all_ready = false;
                    let pods = observed.server_pods.iter().filter(|p| p.slot == slot);
                    let (issue, left) = match refused_servers(&slot, observed, settings) {
                        Some(refused) => refused,
                        None => unready_servers(&slot, ready, members, pods, settings),
                    };
                    if let Some(left) = left {
                        next_deadline = Some(next_deadline.map_or(left, |d| d.min(left)));
                    }
                    issues.push(issue);
                }
                Some(_) => ready_notes.push(format!(
                    "{target_name} on {platform_name} ({members}/{members})"
                )),
            }
        }
        if !all_ready {
            steps.push(Step::Provisioning);
            continue;
        }
        // Servers ready, or nothing to provision: the runner.
        if suspended {
            issues.push(ServerIssue {
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
            continue;
        }
        if !observed.runner_access && !actions.contains(&Action::CreateRunnerAccess) {
            actions.push(Action::CreateRunnerAccess);
        }
        actions.push(Action::StartRunner {
            platform: platform_name.clone(),
            targets: unit.targets.clone(),
            completed_cells,
        });
        runner_started = true;
        jobs_running = true;
        steps.push(working);
    }

    // The cell a runner works on: its first pending one in the order it runs them (sizes
    // ascending, then slots, then its targets in the slot's seeded order: A B, B A, ...).
    let seed = spec.workload.seed();
    for &u in &active {
        let unit = &units[u];
        let started = observed.jobs.contains_key(&unit.key)
            || actions.iter().any(|a| {
                matches!(a, Action::StartRunner { platform, targets, .. }
                    if *platform == unit.platform && *targets == unit.targets)
            });
        if !started {
            continue;
        }
        let order = |c: &Cell| {
            let size = spec.dataset.sizes.iter().position(|s| *s == c.size);
            let in_slot = slots::order(seed, size.unwrap_or(0), c.repetition, unit.targets.len());
            let target = unit.targets.iter().position(|t| *t == c.target);
            (
                size,
                c.repetition,
                target.and_then(|t| in_slot.iter().position(|&i| i == t)),
            )
        };
        let pending: Vec<usize> = cells
            .iter()
            .enumerate()
            .filter(|(i, c)| unit_index(c) == u && outcomes[*i] == CellOutcome::Pending)
            .map(|(i, _)| i)
            .collect();
        // The cell the runner names (or, while it seeds, the first of the size it seeds);
        // without word from it, the first in its order.
        let named = observed
            .activities
            .get(&unit.platform)
            .and_then(|a| running_cell(a, &cells, &pending, order));
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

    // Cleanup of finished runners.
    if delete_servers {
        for (u, unit) in units.iter().enumerate() {
            if !unit_done(u, &outcomes) {
                continue;
            }
            for target in &unit.targets {
                if observed
                    .stateful_sets
                    .contains_key(&slot_key(target, &unit.platform))
                {
                    actions.push(Action::DeleteServers {
                        target: target.clone(),
                        platform: unit.platform.clone(),
                    });
                }
            }
        }
    }

    let runners: Vec<RunnerStatus> = plans
        .into_iter()
        .map(|(platform, plan)| RunnerStatus {
            platform: platform.name.clone(),
            targets: target_names.clone(),
            interleaved: plan.interleaved,
            reason: plan.reason,
            message: plan.message,
            jobs: units
                .iter()
                .filter(|u| u.platform == platform.name)
                .map(|u| names::runner_job_name(&bench_name, &u.platform, &u.targets))
                .collect(),
        })
        .collect();
    let (runner_issues, runner_deadline) = runner_issues(observed, settings);
    if let Some(left) = runner_deadline {
        next_deadline = Some(next_deadline.map_or(left, |d| d.min(left)));
    }
    let status = build_status(
        bench,
        observed,
        &cells,
        &outcomes,
        &BuildInput {
            steps: &steps,
            issues: &issues,
            runner_issues: &runner_issues,
            ready_notes: &ready_notes,
            jobs_running,
            runner_started,
            adding_slots: spec.precision.is_some()
                && units
                    .iter()
                    .any(|u| observed.jobs.get(&u.key) == Some(&JobState::Active)),
            suspended,
            now,
            runners,
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

/// The runner a key names, in words.
fn runner_words(key: &RunnerKey) -> String {
    match key {
        RunnerKey::Target((target, platform)) => {
            format!("target {target} on platform {platform}")
        }
        RunnerKey::Platform(platform) => format!("platform {platform}"),
    }
}

/// Why the StatefulSet of `slot` cannot create its pods (admission refused them), and how long
/// until that stalls the benchmark; `None` when nothing refused them.
fn refused_servers(
    slot: &Slot,
    observed: &Observed,
    settings: &Settings,
) -> Option<(ServerIssue, Option<Duration>)> {
    let refusal = observed
        .failed_creates
        .iter()
        .find(|f| f.creator == Creator::Servers(slot.clone()))?;
    let (stalled, left) = deadline(refusal.created, settings);
    let issue = ServerIssue {
        reason: "FailedCreate",
        message: format!(
            "servers of target {} on platform {}: {} {} cannot create its pods: {}",
            slot.0, slot.1, refusal.kind, refusal.name, refusal.message
        ),
        stalled,
    };
    Some((issue, left))
}

/// Why each runner pod with a problem cannot run, or each runner Job cannot create its pod,
/// and how long until the first stalls the benchmark.
fn runner_issues(observed: &Observed, settings: &Settings) -> (Vec<ServerIssue>, Option<Duration>) {
    let mut issues = Vec::new();
    let mut next: Option<Duration> = None;
    for refusal in &observed.failed_creates {
        let Creator::Runner(key) = &refusal.creator else {
            continue;
        };
        let (stalled, left) = deadline(refusal.created, settings);
        if let Some(left) = left {
            next = Some(next.map_or(left, |d| d.min(left)));
        }
        issues.push(ServerIssue {
            reason: "RunnerFailedCreate",
            message: format!(
                "the runner of {}: {} {} cannot create its pod: {}",
                runner_words(key),
                refusal.kind,
                refusal.name,
                refusal.message
            ),
            stalled,
        });
    }
    for pod in &observed.runner_pods {
        let (stalled, left) = deadline(pod.created, settings);
        if let Some(left) = left {
            next = Some(next.map_or(left, |d| d.min(left)));
        }
        let runner = runner_words(&pod.runner);
        let (reason, message) =
            problem_text(&format!("the runner of {runner}"), &pod.name, &pod.problem);
        let reason = match reason {
            "Unschedulable" => "RunnerUnschedulable",
            "ImagePullFailed" => "RunnerImagePullFailed",
            "OOMKilled" => "RunnerOOMKilled",
            _ => "RunnerCrashLoopBackOff",
        };
        issues.push(ServerIssue {
            reason,
            message,
            stalled,
        });
    }
    (issues, next)
}

/// The condition reason and message of `problem` of pod `pod`, which runs `whose` work
/// (`servers of target a on platform p`, `the runner of platform p`).
fn problem_text(whose: &str, pod: &str, problem: &PodProblem) -> (&'static str, String) {
    match problem {
        PodProblem::Unschedulable { message } => (
            "Unschedulable",
            format!("{whose} cannot be scheduled: pod {pod}: {message}"),
        ),
        PodProblem::ImagePull {
            image,
            reason,
            message,
        } => (
            "ImagePullFailed",
            format!("{whose} cannot pull image {image}: {reason}: {message}"),
        ),
        PodProblem::CrashLoop {
            container,
            restarts,
            last,
        } => (
            if last.starts_with("OOMKilled") {
                "OOMKilled"
            } else {
                "CrashLoopBackOff"
            },
            format!(
                "{whose}: pod {pod} container {container} keeps crashing, restarted {restarts} times, last: {last}"
            ),
        ),
    }
}

/// Whether a problem of a pod created at `created` has outlasted the stall deadline, and how
/// long it has left otherwise.
fn deadline(created: Option<Timestamp>, settings: &Settings) -> (bool, Option<Duration>) {
    let age = created
        .map(|c| settings.now.duration_since(c).unsigned_abs())
        .unwrap_or_default();
    let stalled = age >= settings.stall_deadline;
    (stalled, (!stalled).then(|| settings.stall_deadline - age))
}

/// Why the servers of `slot` are not all ready, from the first pod with a problem, and how
/// long until that problem stalls the benchmark (`None` when it already has, or when no pod
/// has a problem).
fn unready_servers<'a>(
    slot: &Slot,
    ready: u32,
    members: u32,
    pods: impl Iterator<Item = &'a ServerPod>,
    settings: &Settings,
) -> (ServerIssue, Option<Duration>) {
    let (target, platform) = (&slot.0, &slot.1);
    for pod in pods {
        let Some(problem) = &pod.problem else {
            continue;
        };
        let (stalled, left) = deadline(pod.created, settings);
        let whose = format!("servers of target {target} on platform {platform}");
        let (reason, message) = problem_text(&whose, &pod.name, problem);
        let issue = ServerIssue {
            reason,
            message,
            stalled,
        };
        return (issue, left);
    }
    let issue = ServerIssue {
        reason: "Provisioning",
        message: format!("target {target} on platform {platform}: {ready}/{members} members ready"),
        stalled: false,
    };
    (issue, None)
}

struct BuildInput<'a> {
    steps: &'a [Step],
    issues: &'a [ServerIssue],
    /// Runner pods that cannot run: they can stall the benchmark, but say nothing of servers.
    runner_issues: &'a [ServerIssue],
    ready_notes: &'a [String],
    jobs_running: bool,
    runner_started: bool,
    /// A runner under `spec.precision` is still working: it may add slots.
    adding_slots: bool,
    suspended: bool,
    now: Timestamp,
    runners: Vec<RunnerStatus>,
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
    let completed =
        count(|o| matches!(o, CellOutcome::Completed { result, .. } if result.is_valid()));
    let invalid =
        count(|o| matches!(o, CellOutcome::Completed { result, .. } if !result.is_valid()));
    let failed = count(|o| matches!(o, CellOutcome::Failed { .. }));
    let running = count(|o| matches!(o, CellOutcome::Running { .. }));
    let finished = completed + invalid + failed;
    let all_done = finished == total && !input.adding_slots;
    let stall = input
        .issues
        .iter()
        .chain(input.runner_issues)
        .find(|i| i.stalled);

    let phase = if all_done {
        if completed + invalid > 0 {
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

    // The count, and while cells run, what the runners do: `3/12, a.x86.1k.r2 measuring`.
    let doing: Vec<String> = cells
        .iter()
        .zip(outcomes)
        .filter_map(|(c, o)| match o {
            CellOutcome::Running { activity: Some(a) } => Some(format!("{} {a}", c.id)),
            _ => None,
        })
        .collect();
    let progress = std::iter::once(format!("{finished}/{total}"))
        .chain(doing)
        .collect::<Vec<_>>()
        .join(", ");
    let tally = if invalid > 0 {
        format!("{completed} completed, {invalid} invalid, {failed} failed of {total} cells")
    } else {
        format!("{completed} completed, {failed} failed of {total} cells")
    };
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
            format!("{finished}/{total} cells finished")
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
                format!("{finished}/{total} cells finished"),
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
        c(
            ct::DATA_SEEDED,
            completed + invalid > 0,
            "Finished",
            tally.clone(),
        )
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
            format!("{finished}/{total} cells finished")
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
    let compared = status::compare(spec, &complete_results);
    let comparisons = status::comparisons(compared.as_ref());
    let headline = match stall {
        Some(issue) if !all_done => Some(format!("Stalled: {}", issue.message)),
        _ => status::headline(compared.as_ref(), &cell_statuses),
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

    let mut conditions = vec![
        ready,
        reconciling,
        stalled,
        servers_ready,
        data_seeded,
        workload_completed,
    ];
    if let Some(goal) = &spec.precision {
        let (reached, reason, message) = status::precision(goal.mde_percent, &comparisons);
        conditions.push(c(ct::PRECISION, reached, reason, message));
    }

    MongoBenchmarkStatus {
        observed_generation: generation,
        phase: Some(phase),
        conditions,
        progress: Some(progress),
        counts: Some(CellCounts {
            total,
            pending: total - finished - running,
            running,
            completed,
            invalid,
            failed,
        }),
        started_at,
        completed_at,
        run_id: Some(super::build::jobs::run_id(bench)),
        baseline: Some(spec.baseline().to_owned()),
        target_names: Some(spec.target_names()),
        platform_names: Some(spec.platform_names()),
        targets: target_statuses(observed, cells, outcomes),
        runners: input.runners.clone(),
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
                // Kubernetes' name for it where known (`arm64`, not `aarch64`).
                architecture: n.architecture.clone().or_else(|| n.host.cpu_arch.clone()),
                cpu_platform: n.cpu_platform.clone(),
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
mod tests;
