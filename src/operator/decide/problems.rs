//! Why servers or runners cannot run, in the words of the conditions: pods the scheduler cannot
//! place, images that cannot be pulled, containers that keep crashing, pods admission refused;
//! and how long each may last before it stalls the benchmark.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::decision::Settings;
use crate::operator::observe::{Creator, Observed, PodProblem, RunnerKey, ServerPod, Slot};

/// A problem keeping the servers of a target on a platform from running.
pub(super) struct ServerIssue {
    pub reason: &'static str,
    pub message: String,
    pub stalled: bool,
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
pub(super) fn refused_servers(
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
pub(super) fn runner_issues(
    observed: &Observed,
    settings: &Settings,
) -> (Vec<ServerIssue>, Option<Duration>) {
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
pub(super) fn unready_servers<'a>(
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
