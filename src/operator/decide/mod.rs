//! The "what next" decision: a pure function of the MongoBenchmark, what the cluster holds
//! ([`Observed`]) and the time, returning the actions to take and the status to show.
//!
//! Work is done by runners, each one Job on one platform. Per platform, first, whether it can
//! hold all its targets at once ([`RunnerStatus`] in `status.runners` says which and why):
//! - yes when it has one target, when its targets are all external (they take no room), when
//!   only one of them is provisioned, or when its nodes hold every replica set at once
//!   (`placement.rs`): then ONE runner runs every target of the platform,
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
//!
//! The steps, one file each: per platform, how it runs and its runners (`platform.rs`, with
//! `placement.rs`); what each active runner needs next (`runner.rs`); why servers or runners
//! cannot run (`problems.rs`); the status that results (`status.rs`). Pure: uses what
//! `observe/` read, the folding of `status/` and the names of `build/`, never the API.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::api::{
    CleanupPolicy, MongoBenchmark, MongoBenchmarkSpec, MongoBenchmarkStatus, Parallelism,
    StatusPhase,
};
use crate::operator::Error;
use crate::operator::error::SpecError;
use crate::operator::observe::{JobState, Observed, ObservedResult, Slot};
use crate::operator::status::CellOutcome;
use crate::plan::{self, PlannedCell};

mod decision;
mod placement;
mod platform;
mod problems;
mod runner;
mod status;

pub use decision::{Change, Decision, Settings};
pub use platform::runner_reasons;

use platform::{Unit, slot_key};
use problems::runner_issues;
use runner::Work;
use status::{BuildInput, build_status};

/// What is known of `cell`: its result, else what its runner's Job says.
fn outcome_of<'a>(
    cell: &PlannedCell,
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
        .map_err(SpecError::from)?;
    let suspended = spec.suspend();
    let delete_servers = spec.cleanup_policy() == CleanupPolicy::DeleteServers;

    let (plans, units) = platform::units(bench, &cells, observed)?;
    let unit_of: BTreeMap<Slot, usize> = units
        .iter()
        .enumerate()
        .flat_map(|(i, u)| u.targets.iter().map(move |t| (slot_key(t, &u.platform), i)))
        .collect();
    let unit_index = |c: &PlannedCell| unit_of[&slot_key(&c.target, &c.platform)];
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
    let active = active_runners(spec.parallelism(), &units, &unfinished);

    let mut work = Work::default();
    for &u in &active {
        let completed_cells: Vec<String> = cells
            .iter()
            .filter(|c| unit_index(c) == u && observed.results.contains_key(&c.id))
            .map(|c| c.id.clone())
            .collect();
        runner::act(
            spec,
            &units[u],
            completed_cells,
            observed,
            settings,
            &mut work,
        );
    }
    let Work {
        mut actions,
        steps,
        issues,
        ready_notes,
        mut next_deadline,
        runner_started,
        jobs_running,
    } = work;

    // The cell each started runner works on.
    for &u in &active {
        let unit = &units[u];
        let started = observed.jobs.contains_key(&unit.key)
            || actions.iter().any(|a| {
                matches!(a, Change::StartRunner { platform, targets, .. }
                    if *platform == unit.platform && *targets == unit.targets)
            });
        if !started {
            continue;
        }
        let pending: Vec<usize> = cells
            .iter()
            .enumerate()
            .filter(|(i, c)| unit_index(c) == u && outcomes[*i] == CellOutcome::Pending)
            .map(|(i, _)| i)
            .collect();
        runner::mark_running(spec, unit, &cells, &pending, observed, &mut outcomes);
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
                    actions.push(Change::DeleteServers {
                        target: target.clone(),
                        platform: unit.platform.clone(),
                    });
                }
            }
        }
    }

    let runners = platform::runner_statuses(bench, plans, &units);
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
    let requeue_after = requeue(spec, &status, settings, next_deadline, &mut actions);
    Ok(Decision {
        actions,
        status,
        requeue_after,
    })
}

/// The runners to work on now, among the `unfinished` ones (module docs, "Which runners are
/// active").
fn active_runners(parallelism: Parallelism, units: &[Unit], unfinished: &[usize]) -> Vec<usize> {
    match parallelism {
        Parallelism::Sequential => unfinished.first().copied().into_iter().collect(),
        Parallelism::PerPlatform | Parallelism::Simultaneous => {
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
    }
}

/// When to look again without a change: at the next stall deadline or resync while work goes
/// on, never for a finished or idle suspended benchmark, at its expiry under
/// `ttlSecondsAfterFinished`; once that has passed, the benchmark's deletion is added to
/// `actions` instead.
fn requeue(
    spec: &MongoBenchmarkSpec,
    status: &MongoBenchmarkStatus,
    settings: &Settings,
    next_deadline: Option<Duration>,
    actions: &mut Vec<Change>,
) -> Option<Duration> {
    let terminal = matches!(
        status.phase,
        Some(StatusPhase::Completed | StatusPhase::Failed)
    );
    let idle_suspended = status.phase == Some(StatusPhase::Suspended);
    let ttl = spec
        .ttl_seconds_after_finished
        .zip(status.completed_at.as_ref())
        .filter(|_| terminal)
        .map(|(ttl, done)| {
            let expires = done.0.as_second() + i64::from(ttl.max(0));
            Duration::from_secs(u64::try_from(expires - settings.now.as_second()).unwrap_or(0))
        });
    if let Some(left) = ttl {
        if left.is_zero() {
            actions.push(Change::DeleteBenchmark);
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
    }
}

#[cfg(test)]
mod tests;
