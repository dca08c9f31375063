//! The status a decision shows: the phase from where the active runners are, the cell counts
//! and progress, the conditions (`conditions.rs`), comparisons and the headline, and what was
//! deployed per slot.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::conditions::conditions;
use super::platform::slot_key;
use super::situation::{BuildInput, Situation, Tally, phase_of};
use crate::api::{
    MongoBenchmark, MongoBenchmarkSpec, MongoBenchmarkStatus, NodeInfo, TargetStatus,
};
use crate::operator::observe::{Observed, Slot};
use crate::operator::render::jobs;
use crate::operator::status::{self, CellOutcome};
use crate::plan::PlannedCell;
use crate::result::CellResult;

/// The count, and while cells run, what the runners do: `3/12, a.x86.1k.r2 measuring`.
fn progress(cells: &[PlannedCell], outcomes: &[CellOutcome<'_>], tally: &Tally) -> String {
    let doing = cells.iter().zip(outcomes).filter_map(|(c, o)| match o {
        CellOutcome::Running { activity: Some(a) } => Some(format!("{} {a}", c.id)),
        _ => None,
    });
    std::iter::once(format!("{}/{}", tally.finished(), tally.total))
        .chain(doing)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The status of `bench` from its cells' outcomes and what the active runners reported.
pub(super) fn build_status(
    bench: &MongoBenchmark,
    observed: &Observed,
    cells: &[PlannedCell],
    outcomes: &[CellOutcome<'_>],
    input: &BuildInput<'_>,
) -> MongoBenchmarkStatus {
    let spec = &bench.spec;
    let old = bench.status.clone().unwrap_or_default();
    let tally = Tally::of(cells.len(), outcomes);
    let all_done = tally.finished() == tally.total && !input.adding_slots;
    let at = Situation {
        phase: phase_of(&tally, all_done, input),
        tally,
        all_done,
        stall: input
            .issues
            .iter()
            .chain(input.runner_issues)
            .find(|i| i.stalled),
    };
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
    let headline = match at.stall {
        Some(issue) if !all_done => Some(format!("Stalled: {}", issue.message)),
        _ => status::headline(compared.as_ref(), &cell_statuses),
    };
    let times = Times::of(&old, spec, cells, outcomes, input, &at);
    MongoBenchmarkStatus {
        observed_generation: bench.metadata.generation,
        phase: Some(at.phase),
        conditions: conditions(bench, observed, input, &at, &comparisons),
        progress: Some(progress(cells, outcomes, &tally)),
        counts: Some(tally.counts()),
        started_at: times.started_at,
        completed_at: times.completed_at,
        estimated_completion_time: times.estimated_completion_time,
        run_id: Some(jobs::run_id(bench)),
        baseline: Some(spec.baseline().to_owned()),
        target_names: Some(spec.target_names()),
        platform_names: Some(spec.platform_names()),
        targets: target_statuses(spec, observed, cells, outcomes),
        runners: input.runners.clone(),
        knees: status::knees(&cell_statuses),
        cells: cell_statuses,
        comparisons,
        headline,
        generated_secrets: old.generated_secrets.clone(),
    }
}

/// When the benchmark started, when it should finish, and when it finished.
struct Times {
    started_at: Option<Time>,
    estimated_completion_time: Option<Time>,
    completed_at: Option<Time>,
}

impl Times {
    /// Started once a runner starts or a cell finishes, kept from `old` after; finished once
    /// every cell has.
    fn of(
        old: &MongoBenchmarkStatus,
        spec: &MongoBenchmarkSpec,
        cells: &[PlannedCell],
        outcomes: &[CellOutcome<'_>],
        input: &BuildInput<'_>,
        at: &Situation<'_>,
    ) -> Times {
        let now = input.now;
        let started_at = old.started_at.clone().or_else(|| {
            (input.runner_started || input.jobs_running || at.tally.finished() > 0)
                .then(|| status::now_seconds(now))
        });
        let estimated_completion_time = status::estimated_completion(
            old,
            spec,
            cells,
            outcomes,
            started_at.as_ref().filter(|_| !at.all_done),
            now,
        );
        let completed_at = if at.all_done {
            old.completed_at
                .clone()
                .or_else(|| Some(status::now_seconds(now)))
        } else {
            None
        };
        Times {
            started_at,
            estimated_completion_time,
            completed_at,
        }
    }
}

/// What was deployed per slot: ready members while the servers exist, and the server
/// version and nodes from the latest complete result.
fn target_statuses(
    spec: &MongoBenchmarkSpec,
    observed: &Observed,
    cells: &[PlannedCell],
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
            t.topology = spec.target(&t.target).and_then(|x| x.topology_text());
            t
        })
        .collect()
}
