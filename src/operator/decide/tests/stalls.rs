//! Problems that stall a benchmark past the deadline: unschedulable servers, images that
//! cannot be pulled, crash loops, runner pods that cannot run, pods refused at admission.

use super::*;

#[test]
fn unschedulable_servers_stall_after_the_deadline_naming_the_platform() {
    let b = bench("bench", SPEC);
    let mut o = Observed::default();
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("a", "q"), 0);
    let problem = PodProblem::Unschedulable {
        message: "0/11 nodes are available".into(),
    };
    pods(&mut o, "a", "q", Some(problem), 0);
    // 20 s in: not yet stalled; look again at the deadline (40 s + a margin).
    let d = decide(&b, &o, &settings(20)).unwrap();
    assert_eq!(cond(&d, "Stalled").0, "False");
    assert_eq!(cond(&d, "ServersReady").1, "Unschedulable");
    assert_eq!(d.requeue_after, Some(Duration::from_millis(30_500)));
    let d = decide(&b, &o, &settings(45)).unwrap();
    assert_eq!(d.requeue_after, Some(Duration::from_millis(15_500)));
    // Past it: Stalled, and the platform still ready goes on.
    let d = decide(&b, &o, &settings(61)).unwrap();
    let message = "servers of target a on platform q cannot be scheduled: pod bench-a-q-0: 0/11 nodes are available";
    assert_eq!(cond(&d, "Stalled"), ("True", "Unschedulable", message));
    assert_eq!(cond(&d, "Reconciling"), ("False", "Stalled", message));
    assert_eq!(
        d.status.headline.as_deref(),
        Some(&*format!("Stalled: {message}"))
    );
    assert_eq!(
        d.actions,
        [Change::CreateRunnerAccess, runner("a", "p", &[])]
    );
}

#[test]
fn image_pull_failures_name_the_image() {
    let b = bench("bench", SPEC);
    let mut o = Observed::default();
    o.stateful_sets.insert(slot("a", "p"), 0);
    o.stateful_sets.insert(slot("a", "q"), 0);
    let problem = PodProblem::ImagePull {
        image: "mongo:8.0.4".into(),
        reason: "ImagePullBackOff".into(),
        message: "not found".into(),
    };
    pods(&mut o, "a", "p", Some(problem), 0);
    let d = decide(&b, &o, &settings(10)).unwrap();
    let (status, reason, message) = cond(&d, "ServersReady");
    assert_eq!((status, reason), ("False", "ImagePullFailed"));
    assert!(message.contains("servers of target a on platform p cannot pull image mongo:8.0.4: ImagePullBackOff: not found"), "{message}");
    assert_eq!(cond(&d, "Stalled").0, "False");
    let d = decide(&b, &o, &settings(70)).unwrap();
    assert_eq!(cond(&d, "Stalled").1, "ImagePullFailed");
}

#[test]
fn crash_looping_servers_stall_naming_the_pod_and_an_out_of_memory_kill() {
    let b = bench("bench", SPEC);
    let mut o = Observed::default();
    o.stateful_sets.insert(slot("a", "p"), 2);
    o.stateful_sets.insert(slot("a", "q"), 3);
    for (last, reason) in [
        ("OOMKilled (exit code 137)", "OOMKilled"),
        ("Error (exit code 14)", "CrashLoopBackOff"),
    ] {
        o.server_pods.clear();
        pods(&mut o, "a", "p", None, 0);
        o.server_pods[2].problem = Some(PodProblem::CrashLoop {
            container: "mongod".into(),
            restarts: 5,
            last: last.into(),
        });
        let d = decide(&b, &o, &settings(10)).unwrap();
        assert_eq!(cond(&d, "ServersReady").1, reason);
        assert_eq!(cond(&d, "Stalled").0, "False");
        let d = decide(&b, &o, &settings(70)).unwrap();
        assert_eq!(
            cond(&d, "Stalled"),
            (
                "True",
                reason,
                format!(
                    "servers of target a on platform p: pod bench-a-p-2 container mongod keeps \
                     crashing, restarted 5 times, last: {last}"
                )
                .as_str()
            )
        );
    }
}

#[test]
fn a_runner_pod_that_cannot_pull_its_image_stalls_after_the_deadline() {
    let b = bench("bench", SPEC);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("a", "q"), 3);
    o.jobs.insert(job("a", "p"), JobState::Active);
    o.jobs.insert(job("a", "q"), JobState::Active);
    o.runner_pods.push(crate::operator::observe::RunnerPod {
        name: "bench-run-a-p-x1".into(),
        runner: job("a", "p"),
        created: Some(at(0)),
        problem: PodProblem::ImagePull {
            image: "registry.example/mongobench:0.1.0".into(),
            reason: "ErrImagePull".into(),
            message: "not found".into(),
        },
    });
    let d = decide(&b, &o, &settings(10)).unwrap();
    assert_eq!(cond(&d, "Stalled").0, "False");
    // Looked at again when the deadline passes (resync 30 s comes first here).
    let d = decide(&b, &o, &settings(40)).unwrap();
    assert_eq!(d.requeue_after, Some(Duration::from_millis(20_500)));
    let d = decide(&b, &o, &settings(60)).unwrap();
    assert_eq!(
        cond(&d, "Stalled"),
        (
            "True",
            "RunnerImagePullFailed",
            "the runner of target a on platform p cannot pull image \
             registry.example/mongobench:0.1.0: ErrImagePull: not found"
        )
    );
    assert_eq!(cond(&d, "ServersReady").0, "True");
}

#[test]
fn pods_refused_at_admission_stall_naming_the_statefulset_or_the_job() {
    use crate::operator::observe::{Creator, FailedCreate};
    let b = bench("bench", SPEC);
    let quota = "pods \"x\" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0";
    let mut o = Observed::default();
    o.stateful_sets.insert(slot("a", "p"), 0);
    o.stateful_sets.insert(slot("a", "q"), 3);
    o.failed_creates.push(FailedCreate {
        creator: Creator::Servers(slot("a", "p")),
        kind: "StatefulSet",
        name: "bench-a-p".into(),
        created: Some(at(0)),
        message: quota.into(),
    });
    let message = format!(
        "servers of target a on platform p: StatefulSet bench-a-p cannot create its pods: {quota}"
    );
    let d = decide(&b, &o, &settings(20)).unwrap();
    assert_eq!(cond(&d, "Stalled").0, "False");
    assert_eq!(
        cond(&d, "ServersReady"),
        ("False", "FailedCreate", message.as_str())
    );
    assert_eq!(d.requeue_after, Some(Duration::from_millis(30_500)));
    let d = decide(&b, &o, &settings(60)).unwrap();
    assert_eq!(
        cond(&d, "Stalled"),
        ("True", "FailedCreate", message.as_str())
    );

    // A runner Job whose pod is refused: the servers are fine, the runner stalls.
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("a", "q"), 3);
    o.jobs.insert(job("a", "p"), JobState::Active);
    o.jobs.insert(job("a", "q"), JobState::Active);
    o.failed_creates.push(FailedCreate {
        creator: Creator::Runner(job("a", "q")),
        kind: "Job",
        name: "bench-run-a-q".into(),
        created: Some(at(0)),
        message: quota.into(),
    });
    let d = decide(&b, &o, &settings(40)).unwrap();
    assert_eq!(cond(&d, "Stalled").0, "False");
    assert_eq!(d.requeue_after, Some(Duration::from_millis(20_500)));
    let d = decide(&b, &o, &settings(61)).unwrap();
    assert_eq!(
        cond(&d, "Stalled"),
        (
            "True",
            "RunnerFailedCreate",
            format!(
                "the runner of target a on platform q: Job bench-run-a-q cannot create its pod: {quota}"
            )
            .as_str()
        )
    );
    assert_eq!(cond(&d, "ServersReady").0, "True");
}
