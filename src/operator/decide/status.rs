//! The status a decision shows: the phase from where the active runners are, the cell counts
//! and progress, the conditions (`Ready`, `Reconciling`, `Stalled`, `ServersReady`,
//! `DataSeeded`, `WorkloadCompleted`, `Precision`), comparisons and the headline, and what
//! was deployed per slot.

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use super::platform::slot_key;
use super::problems::ServerIssue;
use crate::api::{
    CellCounts, MongoBenchmark, MongoBenchmarkSpec, MongoBenchmarkStatus, NodeInfo, RunnerStatus,
    StatusPhase, TargetStatus, condition_types as ct,
};
use crate::contract::RunnerStep;
use crate::operator::observe::{JobState, Observed, Slot};
use crate::operator::render::jobs;
use crate::operator::status::{self, CellOutcome, condition};
use crate::plan::PlannedCell;
use crate::result::CellResult;

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
        phase == StatusPhase::Completed,
        &phase_name,
        if all_done {
            tally.clone()
        } else {
            format!("{finished}/{total} cells finished")
        },
    );
    let (reconciling, stalled) = match (phase, stall) {
        (StatusPhase::Completed, _) => (
            c(ct::RECONCILING, false, "Completed", tally.clone()),
            c(ct::STALLED, false, "Completed", String::new()),
        ),
        (StatusPhase::Failed, _) => (
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
        (StatusPhase::Suspended, None) => (
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
    } else if let Some(a) = observed.activities.iter().find_map(|(platform, a)| {
        let active = observed
            .jobs
            .iter()
            .any(|(k, state)| k.platform() == platform && *state == JobState::Active);
        (active && matches!(a.phase, RunnerStep::BringingUp(_))).then_some(a)
    }) {
        // A stall there shows where: the step the runner is on.
        c(
            ct::DATA_SEEDED,
            false,
            "BringingUpCluster",
            format!("target {}: {}", a.target, a.phase),
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
    let advice = crate::api::advice(spec);
    if !advice.is_empty() {
        let message: Vec<String> = advice
            .iter()
            .map(|a| format!("{}: {}", a.path, a.message))
            .collect();
        conditions.push(c(
            ct::MEASUREMENT_ADVICE,
            true,
            "SettingsAddNoise",
            message.join("; "),
        ));
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
