//! Events on the MongoBenchmark, one per step and only on transitions: computed by comparing
//! the stored status with the new one ([`transitions`], pure), so a pass that changes nothing
//! publishes nothing, and a restarted operator (which reads the stored status) repeats none.

use std::collections::BTreeSet;

use crate::api::{CellPhase, CellStatus, MongoBenchmarkStatus, StatusPhase, condition_types as ct};
use crate::operator::render::names;

/// An event to publish on the benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// Warning (else Normal).
    pub warning: bool,
    /// PascalCase reason, e.g. `CellCompleted`.
    pub reason: String,
    /// What happened.
    pub note: String,
    /// The object the event is about besides the benchmark (in its namespace). Events with
    /// the same reason are told apart by it: the event recorder folds repeats of one
    /// (reason, related object) into a series, so each cell's events name its result
    /// ConfigMap.
    pub related: Option<Related>,
}

/// A namespaced object an event refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// `apiVersion`, e.g. `v1`.
    pub api_version: &'static str,
    /// Kind, e.g. `ConfigMap`.
    pub kind: &'static str,
    /// Name.
    pub name: String,
}

impl Related {
    /// A ConfigMap.
    pub fn config_map(name: String) -> Related {
        Related {
            api_version: "v1",
            kind: "ConfigMap",
            name,
        }
    }
}

fn normal(reason: &str, note: String) -> EventSpec {
    EventSpec {
        warning: false,
        reason: reason.to_owned(),
        note,
        related: None,
    }
}

fn warning(reason: &str, note: String) -> EventSpec {
    EventSpec {
        warning: true,
        reason: reason.to_owned(),
        note,
        related: None,
    }
}

impl EventSpec {
    fn about(mut self, related: Option<Related>) -> EventSpec {
        self.related = related;
        self
    }
}

fn condition<'a>(s: &'a MongoBenchmarkStatus, t: &str) -> Option<(&'a str, &'a str, &'a str)> {
    s.condition(t)
        .map(|c| (c.status.as_str(), c.reason.as_str(), c.message.as_str()))
}

/// The events between the stored status `old` and the new status `new` of benchmark
/// `benchmark`, in a stable order.
pub fn transitions(
    benchmark: &str,
    old: Option<&MongoBenchmarkStatus>,
    new: &MongoBenchmarkStatus,
) -> Vec<EventSpec> {
    let empty = MongoBenchmarkStatus::default();
    let old = old.unwrap_or(&empty);
    let mut out = server_events(old, new);
    out.extend(not_interleaved_events(old, new));
    out.extend(seeded_events(benchmark, old, new));
    out.extend(activity_events(benchmark, old, new));
    out.extend(cell_events(benchmark, old, new));
    out.extend(phase_event(old, new));
    out
}

/// A cell's events refer to its result ConfigMap (the name the runner gives it, also when a
/// failed cell has none).
fn result_of(benchmark: &str, id: &str) -> Option<Related> {
    Some(Related::config_map(names::result_name(benchmark, id)))
}

/// Servers ready, stalled, or no longer stalled.
fn server_events(old: &MongoBenchmarkStatus, new: &MongoBenchmarkStatus) -> Vec<EventSpec> {
    let mut out = Vec::new();
    let was = condition(old, ct::SERVERS_READY);
    if let Some(("True", "Ready", message)) = condition(new, ct::SERVERS_READY)
        && was.map(|c| (c.0, c.1)) != Some(("True", "Ready"))
    {
        out.push(normal("ServersReady", message.to_owned()));
    }
    match (condition(old, ct::STALLED), condition(new, ct::STALLED)) {
        (old_stall, Some(("True", reason, message)))
            if old_stall.map(|c| (c.0, c.1)) != Some(("True", reason)) =>
        {
            out.push(warning(reason, message.to_owned()));
        }
        (Some(("True", _, _)), Some(("False", _, _))) => {
            out.push(normal("Progressing", "no longer stalled".to_owned()));
        }
        _ => {}
    }
    out
}

/// A platform whose targets will not run interleaved, and why; the event refers to the
/// platform's first runner Job, so two platforms' warnings are not folded into one series.
fn not_interleaved_events(
    old: &MongoBenchmarkStatus,
    new: &MongoBenchmarkStatus,
) -> Vec<EventSpec> {
    new.runners
        .iter()
        .filter(|r| !r.interleaved)
        .filter(|r| {
            let before = old.runners.iter().find(|o| o.platform == r.platform);
            !before.is_some_and(|o| !o.interleaved && o.reason == r.reason)
        })
        .map(|r| {
            let related = r.jobs.first().map(|job| Related {
                api_version: "batch/v1",
                kind: "Job",
                name: job.clone(),
            });
            warning("NotInterleaved", r.message.clone()).about(related)
        })
        .collect()
}

/// Seeded to a size: the first completed cell of a (target, platform, size).
fn seeded_events(
    benchmark: &str,
    old: &MongoBenchmarkStatus,
    new: &MongoBenchmarkStatus,
) -> Vec<EventSpec> {
    let measured = |c: &&CellStatus| matches!(c.phase, CellPhase::Completed | CellPhase::Invalid);
    let key = |c: &CellStatus| (c.target.clone(), c.platform.clone(), c.size.clone());
    let before: BTreeSet<_> = old.cells.iter().filter(measured).map(key).collect();
    let mut announced = BTreeSet::new();
    new.cells
        .iter()
        .filter(measured)
        .filter(|c| {
            let key = key(c);
            !before.contains(&key) && announced.insert(key)
        })
        .map(|c| {
            normal(
                "DataSeeded",
                format!(
                    "target {} on platform {} seeded to {}",
                    c.target, c.platform, c.size
                ),
            )
            .about(result_of(benchmark, &c.id))
        })
        .collect()
}

/// What the runners start on: seeding a cell's size, restoring its data, measuring it.
fn activity_events(
    benchmark: &str,
    old: &MongoBenchmarkStatus,
    new: &MongoBenchmarkStatus,
) -> Vec<EventSpec> {
    new.cells
        .iter()
        .filter_map(|c| {
            let activity = c.activity.as_deref()?;
            let before = old.cells.iter().find(|o| o.id == c.id);
            if before.and_then(|o| o.activity.as_deref()) == Some(activity) {
                return None;
            }
            let (reason, what) = activity_note(c, activity)?;
            // Each cell's event names its result ConfigMap, so that the recorder keeps one
            // series per cell instead of folding every cell's into the first one's.
            Some(
                normal(reason, format!("cell {}: {what}", c.id)).about(result_of(benchmark, &c.id)),
            )
        })
        .collect()
}

/// The reason and note of the activity a cell starts on; `None` for the phases shown in its
/// status only.
fn activity_note(c: &CellStatus, activity: &str) -> Option<(&'static str, String)> {
    Some(match activity {
        "seeding" => ("Seeding", format!("seeding {} to {}", c.target, c.size)),
        "restoring" => (
            "Restoring",
            format!("restoring {}'s data seeded to {}", c.target, c.size),
        ),
        "measuring" => (
            "Measuring",
            format!(
                "measuring {} at {}, repetition {}",
                c.target, c.size, c.repetition
            ),
        ),
        _ => return None,
    })
}

/// Cells done or failed.
fn cell_events(
    benchmark: &str,
    old: &MongoBenchmarkStatus,
    new: &MongoBenchmarkStatus,
) -> Vec<EventSpec> {
    new.cells
        .iter()
        .filter(|c| old.cells.iter().find(|o| o.id == c.id).map(|o| o.phase) != Some(c.phase))
        .filter_map(|c| {
            let said = |fallback: &str| {
                format!(
                    "cell {}: {}",
                    c.id,
                    c.message.as_deref().unwrap_or(fallback)
                )
            };
            let event = match c.phase {
                CellPhase::Completed => normal(
                    "CellCompleted",
                    match c.ops_per_second {
                        Some(ops) => format!("cell {}: {ops:.1} ops/s", c.id),
                        None => format!("cell {}: completed", c.id),
                    },
                ),
                CellPhase::Invalid => warning("CellInvalid", said("invalid")),
                CellPhase::Failed => warning("CellFailed", said("failed")),
                _ => return None,
            };
            Some(event.about(result_of(benchmark, &c.id)))
        })
        .collect()
}

/// The end, or a pause.
fn phase_event(old: &MongoBenchmarkStatus, new: &MongoBenchmarkStatus) -> Option<EventSpec> {
    if new.phase == old.phase {
        return None;
    }
    let progress = new.progress.clone().unwrap_or_default();
    match new.phase {
        Some(StatusPhase::Completed) => Some(normal(
            "Completed",
            format!(
                "{progress} cells finished{}",
                new.headline
                    .as_deref()
                    .map(|h| format!("; {h}"))
                    .unwrap_or_default()
            ),
        )),
        Some(StatusPhase::Failed) => Some(warning(
            "Failed",
            format!("no cell succeeded ({progress} finished)"),
        )),
        Some(StatusPhase::Suspended) => {
            Some(normal("Suspended", "spec.suspend is true".to_owned()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use k8s_openapi::jiff::Timestamp;

    fn cond(t: &str, status: &str, reason: &str, message: &str) -> Condition {
        Condition {
            type_: t.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            observed_generation: Some(1),
        }
    }

    fn cell(id: &str, size: &str, phase: CellPhase) -> CellStatus {
        CellStatus {
            id: id.into(),
            target: "t".into(),
            platform: "p".into(),
            size: size.into(),
            repetition: 1,
            phase,
            ops_per_second: (phase == CellPhase::Completed).then_some(1234.56),
            message: (phase == CellPhase::Failed).then(|| "exit 1".to_owned()),
            ..CellStatus::default()
        }
    }

    #[test]
    fn an_unchanged_status_publishes_nothing() {
        let s = MongoBenchmarkStatus {
            phase: Some(StatusPhase::Completed),
            conditions: vec![cond("ServersReady", "True", "Ready", "ok")],
            cells: vec![cell("a", "1k", CellPhase::Completed)],
            ..Default::default()
        };
        assert_eq!(transitions("b", Some(&s), &s), []);
    }

    #[test]
    fn each_step_is_announced_once() {
        let old = MongoBenchmarkStatus {
            phase: Some(StatusPhase::Running),
            conditions: vec![cond("ServersReady", "False", "Provisioning", "1/3")],
            cells: vec![
                cell("a1", "1k", CellPhase::Running),
                cell("a2", "1k", CellPhase::Pending),
                cell("b1", "2k", CellPhase::Pending),
            ],
            ..Default::default()
        };
        let new = MongoBenchmarkStatus {
            phase: Some(StatusPhase::Completed),
            progress: Some("3/3".into()),
            headline: Some("t at 1k: p 1235 ops/s".into()),
            conditions: vec![cond(
                "ServersReady",
                "True",
                "Ready",
                "replica sets ready: t on p (3/3)",
            )],
            cells: vec![
                cell("a1", "1k", CellPhase::Completed),
                cell("a2", "1k", CellPhase::Completed),
                cell("b1", "2k", CellPhase::Failed),
            ],
            ..Default::default()
        };
        let events = transitions("b", Some(&old), &new);
        let seen: Vec<(bool, &str, &str)> = events
            .iter()
            .map(|e| (e.warning, e.reason.as_str(), e.note.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (false, "ServersReady", "replica sets ready: t on p (3/3)"),
                (false, "DataSeeded", "target t on platform p seeded to 1k"),
                (false, "CellCompleted", "cell a1: 1234.6 ops/s"),
                (false, "CellCompleted", "cell a2: 1234.6 ops/s"),
                (true, "CellFailed", "cell b1: exit 1"),
                (
                    false,
                    "Completed",
                    "3/3 cells finished; t at 1k: p 1235 ops/s"
                ),
            ]
        );
    }

    #[test]
    fn seeding_restoring_and_measuring_a_cell_are_announced_once_each() {
        let doing = |activities: [Option<&str>; 2]| MongoBenchmarkStatus {
            phase: Some(StatusPhase::Running),
            cells: activities
                .iter()
                .zip(["a1", "a2"])
                .map(|(a, id)| CellStatus {
                    activity: a.map(str::to_owned),
                    ..cell(id, "1k", CellPhase::Running)
                })
                .collect(),
            ..Default::default()
        };
        let notes = |old: [Option<&str>; 2], new: [Option<&str>; 2]| -> Vec<(String, String)> {
            transitions("b", Some(&doing(old)), &doing(new))
                .into_iter()
                .map(|e| (e.reason, e.note))
                .collect()
        };
        let pair = |r: &str, n: &str| (r.to_owned(), n.to_owned());
        assert_eq!(
            notes([None, None], [Some("seeding"), None]),
            [pair("Seeding", "cell a1: seeding t to 1k")]
        );
        assert_eq!(notes([Some("seeding"), None], [Some("seeding"), None]), []);
        assert_eq!(
            notes(
                [Some("seeding"), None],
                [Some("restoring"), Some("measuring")]
            ),
            [
                pair("Restoring", "cell a1: restoring t's data seeded to 1k"),
                pair("Measuring", "cell a2: measuring t at 1k, repetition 1")
            ]
        );
        // Each names its cell's result ConfigMap: the recorder keeps a series per cell.
        let related: Vec<Option<String>> = transitions(
            "b",
            Some(&doing([Some("seeding"), None])),
            &doing([Some("restoring"), Some("restoring")]),
        )
        .into_iter()
        .map(|e| e.related.map(|r| r.name))
        .collect();
        assert_eq!(related, [Some("b-a1".to_owned()), Some("b-a2".to_owned())]);
        // The other phases of a cell are in its status only.
        assert_eq!(
            notes(
                [Some("measuring"), None],
                [Some("explaining"), Some("warmup")]
            ),
            []
        );
    }

    #[test]
    fn a_platform_not_interleaved_warns_once_with_the_reason() {
        let runners = |interleaved: bool, reason: &str| crate::api::RunnerStatus {
            platform: "n2".into(),
            targets: vec!["a".into(), "b".into()],
            interleaved,
            reason: reason.into(),
            message: format!("platform n2: {reason}"),
            jobs: vec!["b-run-a-n2".into(), "b-run-b-n2".into()],
        };
        let short = MongoBenchmarkStatus {
            runners: vec![runners(false, "InsufficientCapacity")],
            ..Default::default()
        };
        assert_eq!(
            transitions("b", None, &short),
            [EventSpec {
                warning: true,
                reason: "NotInterleaved".into(),
                note: "platform n2: InsufficientCapacity".into(),
                related: Some(Related {
                    api_version: "batch/v1",
                    kind: "Job",
                    name: "b-run-a-n2".into()
                })
            }]
        );
        assert_eq!(transitions("b", Some(&short), &short), []);
        // Interleaved: nothing to warn about.
        let fits = MongoBenchmarkStatus {
            runners: vec![runners(true, "Fits")],
            ..Default::default()
        };
        assert_eq!(transitions("b", Some(&short), &fits), []);
        assert_eq!(transitions("b", None, &fits), []);
    }

    #[test]
    fn a_phase_change_is_announced_only_for_the_end_or_a_pause() {
        let at = |phase: StatusPhase| MongoBenchmarkStatus {
            phase: Some(phase),
            progress: Some("1/4".into()),
            ..Default::default()
        };
        assert_eq!(
            phase_event(&at(StatusPhase::Running), &at(StatusPhase::Suspended)),
            Some(EventSpec {
                warning: false,
                reason: "Suspended".into(),
                note: "spec.suspend is true".into(),
                related: None
            })
        );
        assert_eq!(
            phase_event(&at(StatusPhase::Suspended), &at(StatusPhase::Suspended)),
            None
        );
        assert_eq!(
            phase_event(&at(StatusPhase::Pending), &at(StatusPhase::Running)),
            None
        );
        assert_eq!(
            phase_event(&at(StatusPhase::Running), &at(StatusPhase::Completed)),
            Some(EventSpec {
                warning: false,
                reason: "Completed".into(),
                note: "1/4 cells finished".into(),
                related: None
            })
        );
    }

    #[test]
    fn only_seeding_restoring_and_measuring_have_an_activity_event() {
        let c = CellStatus {
            repetition: 2,
            ..cell("a1", "1k", CellPhase::Running)
        };
        assert_eq!(
            activity_note(&c, "measuring"),
            Some(("Measuring", "measuring t at 1k, repetition 2".to_owned()))
        );
        assert_eq!(
            activity_note(&c, "restoring"),
            Some(("Restoring", "restoring t's data seeded to 1k".to_owned()))
        );
        assert_eq!(activity_note(&c, "warmup"), None);
    }

    #[test]
    fn stalls_warn_once_and_recovery_is_noted() {
        let ok = MongoBenchmarkStatus {
            conditions: vec![cond("Stalled", "False", "Progressing", "")],
            ..Default::default()
        };
        let stalled = MongoBenchmarkStatus {
            conditions: vec![cond(
                "Stalled",
                "True",
                "Unschedulable",
                "platform arm cannot schedule",
            )],
            ..Default::default()
        };
        let e = transitions("b", Some(&ok), &stalled);
        assert_eq!(
            e,
            [EventSpec {
                warning: true,
                reason: "Unschedulable".into(),
                note: "platform arm cannot schedule".into(),
                related: None
            }]
        );
        assert_eq!(transitions("b", Some(&stalled), &stalled), []);
        assert_eq!(
            transitions("b", Some(&stalled), &ok),
            [EventSpec {
                warning: false,
                reason: "Progressing".into(),
                note: "no longer stalled".into(),
                related: None
            }]
        );
        // A first status that is already failed warns too.
        let failed = MongoBenchmarkStatus {
            phase: Some(StatusPhase::Failed),
            progress: Some("2/2".into()),
            ..Default::default()
        };
        assert_eq!(
            transitions("b", None, &failed),
            [EventSpec {
                warning: true,
                reason: "Failed".into(),
                note: "no cell succeeded (2/2 finished)".into(),
                related: None
            }]
        );
    }
}
