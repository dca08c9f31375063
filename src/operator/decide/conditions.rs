//! The conditions a decision shows (`Ready`, `Reconciling`, `Stalled`, `ServersReady`,
//! `DataSeeded`, `WorkloadCompleted`, and `Precision` and `MeasurementAdvice` where they
//! apply), from where the benchmark is (`situation.rs`) and what the active runners reported.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

use super::situation::{BuildInput, Situation, Step};
use crate::api::{Comparison, MongoBenchmark, StatusPhase, condition_types as ct};
use crate::contract::RunnerStep;
use crate::operator::observe::{JobState, Observed};
use crate::operator::status::{self, condition};

/// Makes conditions that keep their transition time from the stored ones while unchanged.
struct Maker<'a> {
    old: &'a [Condition],
    generation: Option<i64>,
    now: Timestamp,
}

impl Maker<'_> {
    fn make(&self, type_: &str, status: bool, reason: &str, message: String) -> Condition {
        condition(
            self.old,
            type_,
            status,
            reason,
            message,
            self.generation,
            self.now,
        )
    }
}

/// The conditions of `bench` at `at`.
pub(super) fn conditions(
    bench: &MongoBenchmark,
    observed: &Observed,
    input: &BuildInput<'_>,
    at: &Situation<'_>,
    comparisons: &[Comparison],
) -> Vec<Condition> {
    let c = Maker {
        old: bench
            .status
            .as_ref()
            .map_or(&[][..], |s| s.conditions.as_slice()),
        generation: bench.metadata.generation,
        now: input.now,
    };
    let (reconciling, stalled) = progress(&c, at);
    let mut conditions = vec![
        ready(&c, at),
        reconciling,
        stalled,
        servers_ready(&c, at, input),
        data_seeded(&c, at, input, observed),
        workload_completed(&c, at),
    ];
    if let Some(goal) = &bench.spec.precision {
        let (reached, reason, message) = status::precision(goal.mde_percent, comparisons);
        conditions.push(c.make(ct::PRECISION, reached, reason, message));
    }
    let advice = crate::api::advice(&bench.spec);
    if !advice.is_empty() {
        let message: Vec<String> = advice
            .iter()
            .map(|a| format!("{}: {}", a.path, a.message))
            .collect();
        conditions.push(c.make(
            ct::MEASUREMENT_ADVICE,
            true,
            "SettingsAddNoise",
            message.join("; "),
        ));
    }
    conditions
}

fn ready(c: &Maker<'_>, at: &Situation<'_>) -> Condition {
    c.make(
        ct::READY,
        at.phase == StatusPhase::Completed,
        &format!("{:?}", at.phase),
        if at.all_done {
            at.tally.text()
        } else {
            at.happening()
        },
    )
}

/// `Reconciling` and `Stalled`.
fn progress(c: &Maker<'_>, at: &Situation<'_>) -> (Condition, Condition) {
    let tally = at.tally.text();
    match (at.phase, at.stall) {
        (StatusPhase::Completed, _) => (
            c.make(ct::RECONCILING, false, "Completed", tally.clone()),
            c.make(
                ct::STALLED,
                false,
                "Finished",
                format!("not stalled: every cell has finished ({tally})"),
            ),
        ),
        (StatusPhase::Failed, _) => (
            c.make(ct::RECONCILING, false, "Failed", tally.clone()),
            c.make(
                ct::STALLED,
                true,
                "AllCellsFailed",
                format!("no cell succeeded: {tally}"),
            ),
        ),
        (_, Some(issue)) => (
            c.make(ct::RECONCILING, false, "Stalled", issue.message.clone()),
            c.make(ct::STALLED, true, issue.reason, issue.message.clone()),
        ),
        (StatusPhase::Suspended, None) => (
            c.make(
                ct::RECONCILING,
                false,
                "Suspended",
                "spec.suspend is true".into(),
            ),
            c.make(
                ct::STALLED,
                false,
                "Suspended",
                "not stalled: suspended by spec.suspend".into(),
            ),
        ),
        (phase, None) => (
            c.make(ct::RECONCILING, true, &format!("{phase:?}"), at.happening()),
            c.make(
                ct::STALLED,
                false,
                "Progressing",
                format!("not stalled: {}", at.happening()),
            ),
        ),
    }
}

fn servers_ready(c: &Maker<'_>, at: &Situation<'_>, input: &BuildInput<'_>) -> Condition {
    if at.all_done {
        return c.make(
            ct::SERVERS_READY,
            true,
            "Finished",
            "every cell has finished".into(),
        );
    }
    if let Some(issue) = input
        .issues
        .iter()
        .find(|i| i.stalled)
        .or(input.issues.first())
    {
        let mut messages: Vec<&str> = input.issues.iter().map(|i| i.message.as_str()).collect();
        messages.sort_unstable();
        c.make(ct::SERVERS_READY, false, issue.reason, messages.join("; "))
    } else if input.ready_notes.is_empty() {
        c.make(
            ct::SERVERS_READY,
            true,
            "NothingToProvision",
            "the active targets are external or their runners have started".into(),
        )
    } else {
        c.make(
            ct::SERVERS_READY,
            true,
            "Ready",
            format!("replica sets ready: {}", input.ready_notes.join(", ")),
        )
    }
}

fn data_seeded(
    c: &Maker<'_>,
    at: &Situation<'_>,
    input: &BuildInput<'_>,
    observed: &Observed,
) -> Condition {
    if at.all_done {
        let measured = at.tally.completed + at.tally.invalid > 0;
        return c.make(ct::DATA_SEEDED, measured, "Finished", at.tally.text());
    }
    if input.steps.contains(&Step::Provisioning) || input.steps.is_empty() {
        c.make(
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
        c.make(
            ct::DATA_SEEDED,
            false,
            "BringingUpCluster",
            format!("target {}: {}", a.target, a.phase),
        )
    } else if input.steps.contains(&Step::Seeding) {
        c.make(
            ct::DATA_SEEDED,
            false,
            "Seeding",
            "a runner is seeding its first dataset size".into(),
        )
    } else {
        c.make(
            ct::DATA_SEEDED,
            true,
            "Seeded",
            "every active runner has measured at least one cell".into(),
        )
    }
}

fn workload_completed(c: &Maker<'_>, at: &Situation<'_>) -> Condition {
    if at.all_done {
        c.make(
            ct::WORKLOAD_COMPLETED,
            true,
            "AllCellsFinished",
            at.tally.text(),
        )
    } else {
        let (finished, total) = (at.tally.finished(), at.tally.total);
        c.make(
            ct::WORKLOAD_COMPLETED,
            false,
            "InProgress",
            format!("{finished}/{total} cells finished"),
        )
    }
}
