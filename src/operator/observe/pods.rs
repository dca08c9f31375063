//! What pods and their controllers say, classified (pure): the state of a runner Job and why
//! it failed, why a pod cannot run, and the `FailedCreate` refusals of pods that admission
//! turned away before they existed.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::jiff::Timestamp;

use super::observed::{Creator, FailedCreate, JobState, PodProblem};

/// The state of a Job from its conditions and, when it failed, its pods' messages.
pub fn job_state(job: &Job, pods: &[Pod]) -> JobState {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let is_true = |t: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == t && c.status == "True")
    };
    if is_true("Complete") || is_true("SuccessCriteriaMet") {
        return JobState::Succeeded;
    }
    if !is_true("Failed") && !is_true("FailureTarget") {
        return JobState::Active;
    }
    let job_reason = conditions
        .iter()
        .find(|c| (c.type_ == "Failed" || c.type_ == "FailureTarget") && c.status == "True")
        .map(|c| {
            let reason = c.reason.clone().unwrap_or_default();
            match c.message.as_deref() {
                Some(m) if !m.is_empty() => format!("{reason}: {m}"),
                _ => reason,
            }
        })
        .unwrap_or_default();
    // The newest pod that terminated with a message says best why.
    let mut terminated: Vec<(Option<Timestamp>, String)> = pods
        .iter()
        .filter_map(|p| {
            let statuses = p.status.as_ref()?.container_statuses.as_ref()?;
            statuses.iter().find_map(|s| {
                let t = s.state.as_ref()?.terminated.as_ref()?;
                let message = t
                    .message
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .or_else(|| {
                        (t.exit_code != 0).then(|| {
                            format!(
                                "runner exited with code {}{}",
                                t.exit_code,
                                t.reason
                                    .as_deref()
                                    .map(|r| format!(" ({r})"))
                                    .unwrap_or_default()
                            )
                        })
                    })?;
                Some((t.finished_at.as_ref().map(|f| f.0), message))
            })
        })
        .collect();
    terminated.sort_by_key(|(at, _)| *at);
    let message = match terminated.pop() {
        Some((_, m)) => m,
        None if job_reason.is_empty() => "runner Job failed".to_owned(),
        None => job_reason,
    };
    JobState::Failed { message }
}

/// Why a pod cannot run, from its conditions and container statuses.
pub fn pod_problem(pod: &Pod) -> Option<PodProblem> {
    let status = pod.status.as_ref()?;
    for s in status.container_statuses.iter().flatten() {
        if let Some(w) = s.state.as_ref().and_then(|st| st.waiting.as_ref()) {
            let reason = w.reason.clone().unwrap_or_default();
            if reason == "CrashLoopBackOff" {
                let last = s
                    .last_state
                    .as_ref()
                    .and_then(|l| l.terminated.as_ref())
                    .map(|t| {
                        format!(
                            "{} (exit code {})",
                            t.reason.as_deref().unwrap_or("terminated"),
                            t.exit_code
                        )
                    })
                    .unwrap_or_else(|| "unknown".to_owned());
                return Some(PodProblem::CrashLoop {
                    container: s.name.clone(),
                    restarts: s.restart_count,
                    last,
                });
            }
            if matches!(
                reason.as_str(),
                "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName"
            ) {
                return Some(PodProblem::ImagePull {
                    image: s.image.clone(),
                    reason,
                    message: w.message.clone().unwrap_or_default(),
                });
            }
        }
    }
    let scheduled = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled")?;
    (scheduled.status == "False" && scheduled.reason.as_deref() == Some("Unschedulable")).then(
        || PodProblem::Unschedulable {
            message: scheduled.message.clone().unwrap_or_default(),
        },
    )
}

/// The latest `FailedCreate` Event of each object (kind, name): its time and message.
pub(super) type Refusals = BTreeMap<(String, String), (Option<Timestamp>, String)>;

/// The latest refusal of each object among `events` (`FailedCreate` Events).
pub(super) fn latest_refusals(events: Vec<Event>) -> Refusals {
    let mut out = Refusals::new();
    for e in events {
        let (Some(kind), Some(name)) = (e.involved_object.kind, e.involved_object.name) else {
            continue;
        };
        let at = e
            .last_timestamp
            .map(|t| t.0)
            .or(e.event_time.map(|t| t.0))
            .or(e.first_timestamp.map(|t| t.0))
            .or(e.metadata.creation_timestamp.map(|t| t.0));
        let message = e.message.unwrap_or_default();
        let entry = out.entry((kind, name)).or_insert((at, message.clone()));
        if at > entry.0 {
            *entry = (at, message);
        }
    }
    out
}

/// The refusal of the pods of `kind` `name` created at `created`, if an Event newer than the
/// object reports one (an older Event was about an earlier object of the same name).
pub(super) fn refusal_of(
    refusals: &Refusals,
    kind: &'static str,
    name: &str,
    created: Option<Timestamp>,
    creator: Creator,
) -> Option<FailedCreate> {
    let (at, message) = refusals.get(&(kind.to_owned(), name.to_owned()))?;
    if let (Some(at), Some(created)) = (at, created)
        && at < &created
    {
        return None;
    }
    Some(FailedCreate {
        creator,
        kind,
        name: name.to_owned(),
        created,
        message: message.clone(),
    })
}
