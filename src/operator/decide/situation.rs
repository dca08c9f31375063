//! Where a benchmark is: where each active runner is ([`Step`]), what the runners reported
//! ([`BuildInput`]), how many cells are where ([`Tally`]), and the phase and stall that follow
//! ([`Situation`]), as the status and its conditions tell it.

use k8s_openapi::jiff::Timestamp;

use super::problems::ServerIssue;
use crate::api::{CellCounts, RunnerStatus, StatusPhase};
use crate::operator::status::CellOutcome;

/// Where an active runner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    /// Waiting for its servers (or for the nodes to be free of the previous target's).
    Provisioning,
    /// Runner started, no result yet.
    Seeding,
    /// Runner started, some results.
    Running,
}

pub(super) struct BuildInput<'a> {
    pub steps: &'a [Step],
    pub issues: &'a [ServerIssue],
    /// Runner pods that cannot run: they can stall the benchmark, but say nothing of servers.
    pub runner_issues: &'a [ServerIssue],
    pub ready_notes: &'a [String],
    pub jobs_running: bool,
    pub runner_started: bool,
    /// A runner under `spec.precision` is still working: it may add slots.
    pub adding_slots: bool,
    pub suspended: bool,
    pub now: Timestamp,
    pub runners: Vec<RunnerStatus>,
}

/// How many cells are where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tally {
    pub total: u32,
    /// With a complete, valid result.
    pub completed: u32,
    /// With a complete result that failed a validity gate.
    pub invalid: u32,
    pub failed: u32,
    pub running: u32,
}

impl Tally {
    pub(super) fn of(total: usize, outcomes: &[CellOutcome<'_>]) -> Tally {
        let count =
            |f: fn(&CellOutcome<'_>) -> bool| outcomes.iter().filter(|o| f(o)).count() as u32;
        Tally {
            total: total as u32,
            completed: count(
                |o| matches!(o, CellOutcome::Completed { result, .. } if result.is_valid()),
            ),
            invalid: count(
                |o| matches!(o, CellOutcome::Completed { result, .. } if !result.is_valid()),
            ),
            failed: count(|o| matches!(o, CellOutcome::Failed { .. })),
            running: count(|o| matches!(o, CellOutcome::Running { .. })),
        }
    }

    pub(super) fn finished(&self) -> u32 {
        self.completed + self.invalid + self.failed
    }

    /// `3 completed, 1 failed of 4 cells`, with the invalid ones when there are.
    pub(super) fn text(&self) -> String {
        let Tally {
            total,
            completed,
            invalid,
            failed,
            ..
        } = *self;
        if invalid > 0 {
            format!("{completed} completed, {invalid} invalid, {failed} failed of {total} cells")
        } else {
            format!("{completed} completed, {failed} failed of {total} cells")
        }
    }

    pub(super) fn counts(&self) -> CellCounts {
        CellCounts {
            total: self.total,
            pending: self.total - self.finished() - self.running,
            running: self.running,
            completed: self.completed,
            invalid: self.invalid,
            failed: self.failed,
        }
    }
}

/// The phase: finished (completed when any cell was measured), suspended while no runner
/// works, else the earliest step of the active runners.
pub(super) fn phase_of(tally: &Tally, all_done: bool, input: &BuildInput<'_>) -> StatusPhase {
    if all_done {
        if tally.completed + tally.invalid > 0 {
            StatusPhase::Completed
        } else {
            StatusPhase::Failed
        }
    } else if input.suspended && !input.jobs_running {
        StatusPhase::Suspended
    } else {
        match input.steps.iter().min() {
            Some(Step::Provisioning) => StatusPhase::Provisioning,
            Some(Step::Seeding) => StatusPhase::Seeding,
            Some(Step::Running) => StatusPhase::Running,
            None => StatusPhase::Pending,
        }
    }
}

/// Where the benchmark is, as the conditions tell it.
pub(super) struct Situation<'a> {
    pub phase: StatusPhase,
    pub tally: Tally,
    /// Every cell has finished and no runner may add slots.
    pub all_done: bool,
    /// The first problem that stalls the benchmark.
    pub stall: Option<&'a ServerIssue>,
}

impl Situation<'_> {
    /// What is happening, by phase and count only (so that the conditions do not change with
    /// every phase of a cell): `running cells: 3/12 cells finished`.
    pub(super) fn happening(&self) -> String {
        let step = match self.phase {
            StatusPhase::Pending => "nothing started yet",
            StatusPhase::Provisioning => "provisioning servers",
            StatusPhase::Seeding => "runners started",
            StatusPhase::Suspended => "suspended",
            _ => "running cells",
        };
        let (finished, total) = (self.tally.finished(), self.tally.total);
        format!("{step}: {finished}/{total} cells finished")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn input(steps: &[Step], suspended: bool, jobs_running: bool) -> BuildInput<'_> {
        BuildInput {
            steps,
            issues: &[],
            runner_issues: &[],
            ready_notes: &[],
            jobs_running,
            runner_started: false,
            adding_slots: false,
            suspended,
            now: Timestamp::UNIX_EPOCH,
            runners: Vec::new(),
        }
    }

    #[test]
    fn a_tally_counts_each_outcome_and_names_invalid_cells_only_when_there_are() {
        let outcomes = [
            CellOutcome::Failed {
                message: "exit 1",
                config_map: None,
            },
            CellOutcome::Running { activity: None },
            CellOutcome::Pending,
            CellOutcome::Pending,
        ];
        let tally = Tally::of(4, &outcomes);
        assert_eq!(
            tally,
            Tally {
                total: 4,
                completed: 0,
                invalid: 0,
                failed: 1,
                running: 1
            }
        );
        assert_eq!(tally.finished(), 1);
        assert_eq!(tally.text(), "0 completed, 1 failed of 4 cells");
        assert_eq!(
            tally.counts(),
            CellCounts {
                total: 4,
                pending: 2,
                running: 1,
                completed: 0,
                invalid: 0,
                failed: 1
            }
        );
        let with_invalid = Tally {
            completed: 2,
            invalid: 1,
            ..tally
        };
        assert_eq!(
            with_invalid.text(),
            "2 completed, 1 invalid, 1 failed of 4 cells"
        );
    }

    #[test]
    fn the_phase_is_the_earliest_step_until_every_cell_has_finished() {
        let tally = Tally {
            total: 2,
            completed: 0,
            invalid: 0,
            failed: 2,
            running: 0,
        };
        let steps = [Step::Running, Step::Provisioning];
        assert_eq!(
            phase_of(&tally, false, &input(&steps, false, true)),
            StatusPhase::Provisioning
        );
        assert_eq!(
            phase_of(&tally, false, &input(&[], false, false)),
            StatusPhase::Pending
        );
        // Suspended only while no runner works.
        assert_eq!(
            phase_of(&tally, false, &input(&[Step::Seeding], true, false)),
            StatusPhase::Suspended
        );
        assert_eq!(
            phase_of(&tally, false, &input(&[Step::Seeding], true, true)),
            StatusPhase::Seeding
        );
        // Finished: failed when no cell was measured, else completed.
        assert_eq!(
            phase_of(&tally, true, &input(&[], false, false)),
            StatusPhase::Failed
        );
        let one_invalid = Tally {
            invalid: 1,
            failed: 1,
            ..tally
        };
        assert_eq!(
            phase_of(&one_invalid, true, &input(&[], false, false)),
            StatusPhase::Completed
        );
    }

    #[test]
    fn what_is_happening_names_the_step_and_the_count() {
        let at = |phase| Situation {
            phase,
            tally: Tally {
                total: 12,
                completed: 2,
                invalid: 0,
                failed: 1,
                running: 1,
            },
            all_done: false,
            stall: None,
        };
        assert_eq!(
            at(StatusPhase::Running).happening(),
            "running cells: 3/12 cells finished"
        );
        assert_eq!(
            at(StatusPhase::Provisioning).happening(),
            "provisioning servers: 3/12 cells finished"
        );
    }
}
