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
//! cannot run (`problems.rs`); the status that results (`status.rs`: where the benchmark is in
//! `situation.rs`, its conditions in `conditions.rs`). Pure: uses what
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

mod conditions;
mod decision;
mod placement;
mod platform;
mod problems;
mod runner;
mod situation;
mod status;

pub use decision::{Change, Decision, Settings};
pub use platform::runner_reasons;

use platform::{Unit, slot_key};
use problems::runner_issues;
use runner::Work;
use situation::BuildInput;
use status::build_status;

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
    // With a precision goal, the runners' added slots are cells once they have a result.
    let cells = plan::cells_with_added(spec, |id| observed.results.contains_key(id))
        .map_err(SpecError::from)?;
    let (plans, units) = platform::units(bench, &cells, observed)?;
    let runners = Runners::new(spec, observed, &cells, &units);
    let mut outcomes = runners.outcomes();
    let unfinished: Vec<usize> = (0..units.len())
        .filter(|&u| !runners.done(u, &outcomes))
        .collect();
    let active = active_runners(spec.parallelism(), &units, &unfinished);

    let mut work = Work::default();
    for &u in &active {
        runner::act(
            spec,
            &units[u],
            runners.completed_cells(u),
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
    for &u in active.iter().filter(|&&u| runners.started(u, &actions)) {
        let pending = runners.pending(u, &outcomes);
        runner::mark_running(spec, &units[u], &cells, &pending, observed, &mut outcomes);
    }
    if spec.cleanup_policy() == CleanupPolicy::DeleteServers {
        actions.extend(runners.cleanup(&outcomes));
    }

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
            suspended: spec.suspend(),
            now: settings.now,
            runners: platform::runner_statuses(bench, plans, &units),
        },
    );
    let requeue_after = requeue(spec, &status, settings, next_deadline, &mut actions);
    Ok(Decision {
        actions,
        status,
        requeue_after,
    })
}

/// The cells and the runners (`units`) that run them, with the runner of each cell: what
/// the cells' outcomes say of each runner.
struct Runners<'a> {
    spec: &'a MongoBenchmarkSpec,
    observed: &'a Observed,
    cells: &'a [PlannedCell],
    units: &'a [Unit],
    /// The runner (an index into `units`) of each cell.
    unit_of: Vec<usize>,
}

impl<'a> Runners<'a> {
    fn new(
        spec: &'a MongoBenchmarkSpec,
        observed: &'a Observed,
        cells: &'a [PlannedCell],
        units: &'a [Unit],
    ) -> Runners<'a> {
        let by_slot: BTreeMap<Slot, usize> = units
            .iter()
            .enumerate()
            .flat_map(|(i, u)| u.targets.iter().map(move |t| (slot_key(t, &u.platform), i)))
            .collect();
        let unit_of = cells
            .iter()
            .map(|c| by_slot[&slot_key(&c.target, &c.platform)])
            .collect();
        Runners {
            spec,
            observed,
            cells,
            units,
            unit_of,
        }
    }

    /// What is known of each cell: its result, else what its runner's Job says.
    fn outcomes(&self) -> Vec<CellOutcome<'a>> {
        self.cells
            .iter()
            .zip(&self.unit_of)
            .map(|(c, &u)| outcome_of(c, self.observed, self.job(u)))
            .collect()
    }

    fn job(&self, u: usize) -> Option<&'a JobState> {
        self.observed.jobs.get(&self.units[u].key)
    }

    /// The indices of runner `u`'s cells.
    fn cells_of(&self, u: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.cells.len()).filter(move |&i| self.unit_of[i] == u)
    }

    /// Whether runner `u` is finished. One under a precision goal may add slots after its
    /// planned cells: it is done only when its Job is too.
    fn done(&self, u: usize, outcomes: &[CellOutcome<'_>]) -> bool {
        let adding = self.spec.precision.is_some() && self.job(u) == Some(&JobState::Active);
        !adding && self.cells_of(u).all(|i| outcomes[i].is_terminal())
    }

    /// The ids of runner `u`'s cells that have a result.
    fn completed_cells(&self, u: usize) -> Vec<String> {
        self.cells_of(u)
            .map(|i| &self.cells[i].id)
            .filter(|id| self.observed.results.contains_key(*id))
            .cloned()
            .collect()
    }

    /// Runner `u`'s pending cells (indices into the cells).
    fn pending(&self, u: usize, outcomes: &[CellOutcome<'_>]) -> Vec<usize> {
        self.cells_of(u)
            .filter(|&i| outcomes[i] == CellOutcome::Pending)
            .collect()
    }

    /// Whether runner `u`'s Job exists or is among the `actions` that start one.
    fn started(&self, u: usize, actions: &[Change]) -> bool {
        let unit = &self.units[u];
        self.job(u).is_some()
            || actions.iter().any(|a| {
                matches!(a, Change::StartRunner { platform, targets, .. }
                    if *platform == unit.platform && *targets == unit.targets)
            })
    }

    /// The deletion of the servers that finished runners leave (under
    /// `cleanupPolicy: DeleteServers`).
    fn cleanup(&self, outcomes: &[CellOutcome<'_>]) -> Vec<Change> {
        (0..self.units.len())
            .filter(|&u| self.done(u, outcomes))
            .flat_map(|u| {
                let unit = &self.units[u];
                unit.targets
                    .iter()
                    .filter(|t| {
                        let slot = slot_key(t, &unit.platform);
                        self.observed.stateful_sets.contains_key(&slot)
                    })
                    .map(|t| Change::DeleteServers {
                        target: t.clone(),
                        platform: unit.platform.clone(),
                    })
            })
            .collect()
    }
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
