//! When a running benchmark is expected to finish: the plan's estimate of the cells left
//! ([`EXPECTED_RATES`]), scaled by how long the finished cells took against their estimate.
//! Set again only when the count of finished cells (or of cells) changes, so a pass that
//! observed nothing new leaves it, and status, as they were.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::{CellOutcome, now_seconds};
use crate::api::{MongoBenchmarkSpec, MongoBenchmarkStatus};
use crate::plan::PlannedCell;
use crate::plan::duration::{EXPECTED_RATES, cell_seconds};

/// The expected completion time of `cells` (with their `outcomes`) started at `started_at`
/// (`None`: not started, or finished); `old`'s while its counts are unchanged.
pub fn estimated_completion(
    old: &MongoBenchmarkStatus,
    spec: &MongoBenchmarkSpec,
    cells: &[PlannedCell],
    outcomes: &[CellOutcome<'_>],
    started_at: Option<&Time>,
    now: Timestamp,
) -> Option<Time> {
    let started = started_at?.0;
    let done: Vec<bool> = outcomes.iter().map(CellOutcome::is_terminal).collect();
    let finished = done.iter().filter(|d| **d).count() as u32;
    let unchanged = old.counts.as_ref().is_some_and(|c| {
        c.total == cells.len() as u32 && c.completed + c.invalid + c.failed == finished
    });
    if unchanged && old.estimated_completion_time.is_some() {
        return old.estimated_completion_time.clone();
    }
    let planned = cell_seconds(spec, cells, &EXPECTED_RATES).ok()?;
    let seconds = remaining_seconds(&planned, &done, now.duration_since(started).as_secs_f64());
    let from = if finished == 0 { started } else { now };
    let eta = from
        .checked_add(SignedDuration::from_secs_f64(seconds))
        .ok()?;
    Some(now_seconds(eta))
}

/// Seconds left from the latest finish (or, before any, from the start): the planned seconds
/// of the cells not `done`, times the elapsed seconds over the planned seconds of those done;
/// before any is done, every cell's planned seconds.
pub fn remaining_seconds(planned: &[f64], done: &[bool], elapsed: f64) -> f64 {
    let (mut finished, mut left) = (0.0, 0.0);
    for (seconds, done) in planned.iter().zip(done) {
        if *done {
            finished += seconds;
        } else {
            left += seconds;
        }
    }
    if finished > 0.0 {
        left * elapsed.max(0.0) / finished
    } else {
        left
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CellCounts;

    #[test]
    fn the_cells_left_take_their_plan_at_the_pace_of_those_done() {
        let planned = [100.0, 100.0, 200.0, 100.0];
        // Nothing done: the whole plan.
        assert_eq!(remaining_seconds(&planned, &[false; 4], 50.0), 500.0);
        // 200 planned seconds took 300: the 300 left take 450.
        assert_eq!(
            remaining_seconds(&planned, &[true, true, false, false], 300.0),
            450.0
        );
        assert_eq!(remaining_seconds(&planned, &[true; 4], 300.0), 0.0);
    }

    #[test]
    fn the_eta_moves_only_when_a_cell_finishes() {
        let spec: MongoBenchmarkSpec = serde_yaml::from_str(
            "targets: [{name: a, external: {uriSecretRef: {name: s}}}]
platforms: [{name: p}]
dataset: {sizes: ['1000']}
workload: {type: flights, warmup: 10s, duration: 60s}
repetitions: 2
",
        )
        .unwrap();
        let cells = crate::plan::cells(&spec).unwrap();
        let started: Timestamp = "2026-12-01T10:00:00Z".parse().unwrap();
        let at = |s: &str| s.parse::<Timestamp>().unwrap();
        let pending = [CellOutcome::Pending, CellOutcome::Pending];
        let old = MongoBenchmarkStatus::default();
        // Planned: 45 to initiate, 1000 / 5000 to seed, then 10 + 60 + 30 per cell: 245.2 s.
        let eta = estimated_completion(
            &old,
            &spec,
            &cells,
            &pending,
            Some(&Time(started)),
            at("2026-12-01T10:01:00Z"),
        );
        assert_eq!(eta, Some(Time(at("2026-12-01T10:04:05Z"))));
        assert_eq!(
            estimated_completion(&old, &spec, &cells, &pending, None, started),
            None
        );
        // The same count a minute later: the same ETA.
        let running = MongoBenchmarkStatus {
            counts: Some(CellCounts {
                total: 2,
                pending: 2,
                ..CellCounts::default()
            }),
            estimated_completion_time: eta.clone(),
            ..MongoBenchmarkStatus::default()
        };
        let later = estimated_completion(
            &running,
            &spec,
            &cells,
            &pending,
            Some(&Time(started)),
            at("2026-12-01T10:02:00Z"),
        );
        assert_eq!(later, eta);
        // The first cell (145.2 planned seconds) took 290.4: the second's 100 take 200.
        let message = "exit 1";
        let one_done = [
            CellOutcome::Failed {
                message,
                config_map: None,
            },
            CellOutcome::Pending,
        ];
        let now = at("2026-12-01T10:04:50.400Z");
        let moved = estimated_completion(
            &running,
            &spec,
            &cells,
            &one_done,
            Some(&Time(started)),
            now,
        );
        assert_eq!(moved, Some(Time(at("2026-12-01T10:08:10Z"))));
    }
}
