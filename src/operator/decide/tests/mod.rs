//! Tests of the pure decision: every step, order, failure and restart case.
use super::*;
use crate::api::CellPhase;
use crate::operator::build::servers::tests::bench;
use crate::operator::observe::ServerPod;
use crate::operator::testing;

const SPEC: &str = "\
targets:
  - {name: a, image: 'mongo:8.0.4', distribution: community}
  - {name: b, image: 'mongo:9.0.1', distribution: community}
platforms:
  - {name: p, nodeSelector: {pool: p}}
  - {name: q, nodeSelector: {pool: q}}
replicaSet: {members: 3, storageSize: 1Gi}
dataset: {sizes: [1k]}
workload: {type: flights}
repetitions: 2
";

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + s).unwrap()
}

fn settings(s: i64) -> Settings {
    Settings {
        now: at(s),
        stall_deadline: Duration::from_secs(60),
        resync: Duration::from_secs(30),
    }
}

fn slot(t: &str, p: &str) -> Slot {
    (t.to_owned(), p.to_owned())
}

fn servers(t: &str, p: &str) -> Action {
    Action::CreateServers {
        target: t.into(),
        platform: p.into(),
    }
}

fn runner(t: &str, p: &str, done: &[&str]) -> Action {
    runners(&[t], p, done)
}

/// The runner of `targets` on `p` (one target, or every target of the platform).
fn runners(targets: &[&str], p: &str, done: &[&str]) -> Action {
    Action::StartRunner {
        platform: p.into(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        completed_cells: done.iter().map(|s| s.to_string()).collect(),
    }
}

/// The Job key of target `t`'s own runner on `p`.
fn job(t: &str, p: &str) -> RunnerKey {
    RunnerKey::Target(slot(t, p))
}

fn add_result(o: &mut Observed, t: &str, p: &str, rep: u32) {
    let id = crate::plan::cell_id(t, p, "1k", rep);
    let result = testing::result("bench", t, p, "1k", rep, 10, &[("find", 1000, 100)], None);
    o.results.insert(
        id.clone(),
        ObservedResult::Document {
            config_map: format!("bench-{id}"),
            result: Box::new(result),
        },
    );
}

fn pods(o: &mut Observed, t: &str, p: &str, problem: Option<PodProblem>, created: i64) {
    for i in 0..3 {
        o.server_pods.push(ServerPod {
            name: format!("bench-{t}-{p}-{i}"),
            slot: slot(t, p),
            node: problem.is_none().then(|| format!("{p}-{i}")),
            created: Some(at(created)),
            problem: problem.clone(),
        });
    }
}

fn phases(d: &Decision) -> Vec<CellPhase> {
    d.status.cells.iter().map(|c| c.phase).collect()
}

fn cond<'a>(d: &'a Decision, t: &str) -> (&'a str, &'a str, &'a str) {
    let c = d.status.condition(t).unwrap();
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

#[test]
fn a_new_benchmark_provisions_the_first_target_of_every_platform() {
    let b = bench("bench", SPEC);
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(d.actions, [servers("a", "p"), servers("a", "q")]);
    assert_eq!(d.status.phase, Some(Phase::Provisioning));
    assert_eq!(d.status.progress.as_deref(), Some("0/8"));
    assert_eq!(
        d.status.counts,
        Some(CellCounts {
            total: 8,
            pending: 8,
            running: 0,
            completed: 0,
            invalid: 0,
            failed: 0
        })
    );
    assert_eq!(
        cond(&d, "Reconciling"),
        ("True", "Provisioning", "0/8 cells finished")
    );
    assert_eq!(
        cond(&d, "Ready"),
        ("False", "Provisioning", "0/8 cells finished")
    );
    assert_eq!(cond(&d, "Stalled").0, "False");
    assert_eq!(cond(&d, "ServersReady").0, "False");
    assert_eq!(d.status.observed_generation, Some(1));
    assert_eq!(d.status.run_id.as_deref(), Some("0f3c9a527d1e"));
    assert_eq!(d.status.baseline.as_deref(), Some("a"));
    assert_eq!(d.status.started_at, None);
    assert_eq!(d.requeue_after, Some(Duration::from_secs(30)));
    let ids: Vec<&str> = d.status.cells.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a.p.1k.r1",
            "a.p.1k.r2",
            "b.p.1k.r1",
            "b.p.1k.r2",
            "a.q.1k.r1",
            "a.q.1k.r2",
            "b.q.1k.r1",
            "b.q.1k.r2"
        ]
    );
}

#[test]
fn sequential_runs_one_slot_at_a_time() {
    let b = bench("bench", &format!("{SPEC}parallelism: Sequential\n"));
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(d.actions, [servers("a", "p")]);
    let mut o = Observed::default();
    o.stateful_sets.insert(slot("a", "p"), 3);
    add_result(&mut o, "a", "p", 1);
    add_result(&mut o, "a", "p", 2);
    pods(&mut o, "a", "p", None, 0);
    // (a, p) done: its servers go; (b, p) waits for the nodes of p to be free.
    let d = decide(&b, &o, &settings(5)).unwrap();
    assert_eq!(
        d.actions,
        [Action::DeleteServers {
            target: "a".into(),
            platform: "p".into()
        }]
    );
    assert_eq!(cond(&d, "ServersReady").1, "WaitingForNodes");
    // Once they are gone, the next target gets its servers.
    o.stateful_sets.clear();
    o.server_pods.clear();
    let d = decide(&b, &o, &settings(10)).unwrap();
    assert_eq!(d.actions, [servers("b", "p")]);
}

#[test]
fn unready_servers_wait_and_ready_servers_get_a_runner() {
    let b = bench("bench", SPEC);
    let mut o = Observed::default();
    o.stateful_sets.insert(slot("a", "p"), 1);
    o.stateful_sets.insert(slot("a", "q"), 3);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [Action::CreateRunnerAccess, runner("a", "q", &[])]
    );
    assert_eq!(d.status.phase, Some(Phase::Provisioning));
    assert_eq!(
        cond(&d, "ServersReady"),
        (
            "False",
            "Provisioning",
            "target a on platform p: 1/3 members ready"
        )
    );
    // The runner's first cell is the one it works on.
    assert_eq!(
        phases(&d),
        [
            CellPhase::Pending,
            CellPhase::Pending,
            CellPhase::Pending,
            CellPhase::Pending,
            CellPhase::Running,
            CellPhase::Pending,
            CellPhase::Pending,
            CellPhase::Pending
        ]
    );
    assert_eq!(d.status.counts.as_ref().unwrap().running, 1);
    assert!(d.status.started_at.is_some());
    // With the access in place only the Job is created.
    o.runner_access = true;
    o.stateful_sets.insert(slot("a", "p"), 3);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, [runner("a", "p", &[]), runner("a", "q", &[])]);
    assert_eq!(d.status.phase, Some(Phase::Seeding));
    assert_eq!(
        cond(&d, "ServersReady"),
        (
            "True",
            "Ready",
            "replica sets ready: a on p (3/3), a on q (3/3)"
        )
    );
    assert_eq!(
        cond(&d, "DataSeeded"),
        (
            "False",
            "Seeding",
            "a runner is seeding its first dataset size"
        )
    );
}

#[test]
fn running_jobs_are_left_alone_and_results_are_counted() {
    let b = bench("bench", SPEC);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    for p in ["p", "q"] {
        o.stateful_sets.insert(slot("a", p), 3);
        o.jobs.insert(job("a", p), JobState::Active);
    }
    add_result(&mut o, "a", "p", 1);
    add_result(&mut o, "a", "q", 1);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(d.status.phase, Some(Phase::Running));
    assert_eq!(d.status.progress.as_deref(), Some("2/8"));
    assert_eq!(
        cond(&d, "ServersReady"),
        (
            "True",
            "Ready",
            "replica sets ready: a on p (3/3), a on q (3/3)"
        )
    );
    assert_eq!(cond(&d, "DataSeeded").0, "True");
    assert_eq!(phases(&d)[..2], [CellPhase::Completed, CellPhase::Running]);
    let done = &d.status.cells[0];
    assert_eq!(done.ops_per_second, Some(100.0));
    assert_eq!(
        done.result_ref.as_ref().unwrap().config_map,
        "bench-a.p.1k.r1"
    );
    assert_eq!(d.status.targets.len(), 2);
    assert_eq!(d.status.targets[0].ready_members, Some(3));
    assert_eq!(d.status.targets[0].server_version.as_deref(), Some("8.0.4"));
    assert_eq!(d.status.targets[0].nodes[0].name, "p-node-0");
    // Plans that lag behind the results are brought up to date (for a retried pod);
    // plans that are current are left alone.
    o.plans.insert(job("a", "p"), vec![]);
    o.plans.insert(job("a", "q"), vec!["a.q.1k.r1".into()]);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [Action::UpdatePlan {
            platform: "p".into(),
            targets: vec!["a".into()],
            completed_cells: vec!["a.p.1k.r1".into()]
        }]
    );
    o.plans.clear();
    // A member lost mid-run shows, without stopping the runner.
    o.stateful_sets.insert(slot("a", "q"), 2);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(
        cond(&d, "ServersReady"),
        (
            "False",
            "MembersNotReady",
            "target a on platform q: 2/3 members ready while its runner works"
        )
    );
    assert_eq!(cond(&d, "Stalled").0, "False");
}

#[test]
fn a_lost_job_is_recreated_without_its_completed_cells() {
    let b = bench("bench", SPEC);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("a", "q"), 3);
    o.jobs.insert(job("a", "q"), JobState::Active);
    add_result(&mut o, "a", "p", 1);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, [runner("a", "p", &["a.p.1k.r1"])]);
}

#[test]
fn a_failed_runner_fails_its_remaining_cells_and_the_others_go_on() {
    let b = bench("bench", SPEC);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.jobs.insert(
        job("a", "p"),
        JobState::Failed {
            message: "target a: connection refused".into(),
        },
    );
    add_result(&mut o, "a", "p", 1);
    o.stateful_sets.insert(slot("a", "q"), 3);
    o.jobs.insert(job("a", "q"), JobState::Active);
    let d = decide(&b, &o, &settings(0)).unwrap();
    // (a, p) is finished: its servers go and b gets its turn on p (after the pods leave).
    assert_eq!(
        d.actions,
        [
            servers("b", "p"),
            Action::DeleteServers {
                target: "a".into(),
                platform: "p".into()
            }
        ]
    );
    let failed = &d.status.cells[1];
    assert_eq!(failed.phase, CellPhase::Failed);
    assert_eq!(
        failed.message.as_deref(),
        Some("target a: connection refused")
    );
    assert_eq!(d.status.cells[0].phase, CellPhase::Completed);
    assert_eq!(d.status.counts.as_ref().unwrap().failed, 1);
}

#[test]
fn the_end_is_completed_with_failures_counted_or_failed_when_nothing_succeeded() {
    let spec = SPEC.replace("  - {name: q, nodeSelector: {pool: q}}\n", "");
    let b = bench("bench", &spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs.insert(job("a", "p"), JobState::Succeeded);
    o.jobs.insert(
        job("b", "p"),
        JobState::Failed {
            message: "exit 2".into(),
        },
    );
    add_result(&mut o, "a", "p", 1);
    let mut incomplete =
        testing::result("bench", "a", "p", "1k", 2, 10, &[("find", 10, 100)], None);
    incomplete.status = crate::result::CellStatus::Incomplete {
        reason: "server closed the connection".into(),
    };
    o.results.insert(
        "a.p.1k.r2".into(),
        ObservedResult::Document {
            config_map: "bench-a.p.1k.r2".into(),
            result: Box::new(incomplete),
        },
    );
    let d = decide(&b, &o, &settings(100)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(d.status.phase, Some(Phase::Completed));
    assert_eq!(
        phases(&d),
        [
            CellPhase::Completed,
            CellPhase::Failed,
            CellPhase::Failed,
            CellPhase::Failed
        ]
    );
    assert_eq!(
        d.status.cells[1].message.as_deref(),
        Some("server closed the connection")
    );
    assert_eq!(d.status.cells[2].message.as_deref(), Some("exit 2"));
    assert_eq!(
        cond(&d, "Ready"),
        ("True", "Completed", "1 completed, 3 failed of 4 cells")
    );
    assert_eq!(cond(&d, "Reconciling").0, "False");
    assert_eq!(cond(&d, "Stalled").0, "False");
    assert_eq!(
        cond(&d, "WorkloadCompleted"),
        (
            "True",
            "AllCellsFinished",
            "1 completed, 3 failed of 4 cells"
        )
    );
    assert_eq!(d.status.completed_at, Some(status::now_seconds(at(100))));
    assert_eq!(d.requeue_after, None);

    o.results.remove("a.p.1k.r1");
    let d = decide(&b, &o, &settings(100)).unwrap();
    assert_eq!(d.status.phase, Some(Phase::Failed));
    assert_eq!(
        cond(&d, "Stalled"),
        (
            "True",
            "AllCellsFailed",
            "no cell succeeded: 0 completed, 4 failed of 4 cells"
        )
    );
    assert_eq!(
        d.status.cells[0].message.as_deref(),
        Some("the runner finished without writing a result for this cell")
    );
}

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
        [Action::CreateRunnerAccess, runner("a", "p", &[])]
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

#[test]
fn suspend_starts_nothing_new_but_lets_a_runner_finish() {
    let b = bench("bench", &format!("{SPEC}suspend: true\n"));
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(d.status.phase, Some(Phase::Suspended));
    assert_eq!(
        cond(&d, "Reconciling"),
        ("False", "Suspended", "spec.suspend is true")
    );
    assert_eq!(d.requeue_after, None);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("a", "q"), 3);
    o.jobs.insert(job("a", "p"), JobState::Active);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(d.status.phase, Some(Phase::Seeding));
}

#[test]
fn retained_servers_are_not_deleted() {
    let b = bench("bench", &format!("{SPEC}cleanupPolicy: Retain\n"));
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.jobs.insert(job("a", "p"), JobState::Succeeded);
    add_result(&mut o, "a", "p", 1);
    add_result(&mut o, "a", "p", 2);
    pods(&mut o, "a", "p", None, 0);
    let d = decide(&b, &o, &settings(0)).unwrap();
    // No deletion, and b does not wait for a's pods to leave p.
    assert_eq!(d.actions, [servers("b", "p"), servers("a", "q")]);
}

#[test]
fn external_targets_get_a_runner_at_once() {
    let spec = "\
targets: [{name: ext, external: {uriSecretRef: {name: s}}}]
platforms: [{name: local}]
dataset: {sizes: [10k, 20k]}
workload: {type: flights}
repetitions: 1
";
    let b = bench("bench", spec);
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [Action::CreateRunnerAccess, runner("ext", "local", &[])]
    );
    assert_eq!(d.status.phase, Some(Phase::Seeding));
    assert_eq!(cond(&d, "ServersReady").1, "NothingToProvision");
}

#[test]
fn a_finished_benchmark_deletes_itself_after_its_ttl() {
    let spec = SPEC.replace("  - {name: q, nodeSelector: {pool: q}}\n", "");
    let b = bench("bench", &format!("{spec}ttlSecondsAfterFinished: 60\n"));
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    for t in ["a", "b"] {
        o.jobs.insert(job(t, "p"), JobState::Succeeded);
        add_result(&mut o, t, "p", 1);
        add_result(&mut o, t, "p", 2);
    }
    // Finished at 100: 60 s to go; then wait 20 s more at 140; at 160 it goes.
    let done = decide(&b, &o, &settings(100)).unwrap();
    assert_eq!(done.status.phase, Some(Phase::Completed));
    assert_eq!(done.requeue_after, Some(Duration::from_secs(60)));
    assert_eq!(done.actions, []);
    let mut written = b.clone();
    written.status = Some(done.status);
    assert_eq!(
        decide(&written, &o, &settings(140)).unwrap().requeue_after,
        Some(Duration::from_secs(20))
    );
    let gone = decide(&written, &o, &settings(160)).unwrap();
    assert_eq!(gone.actions, [Action::DeleteBenchmark]);
    assert_eq!(gone.requeue_after, None);
}

#[test]
fn deciding_again_on_the_written_status_changes_nothing() {
    // The same observations on top of the status just written give the same status:
    // no write, so no write loop. Also for a completed benchmark much later.
    let b = bench("bench", SPEC);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.jobs.insert(job("a", "p"), JobState::Active);
    add_result(&mut o, "a", "p", 1);
    let first = decide(&b, &o, &settings(0)).unwrap();
    let mut written = b.clone();
    written.status = Some(first.status.clone());
    let second = decide(&written, &o, &settings(500)).unwrap();
    assert_eq!(second.status, first.status);

    let mut done = Observed {
        runner_access: true,
        ..Default::default()
    };
    for t in ["a", "b"] {
        for p in ["p", "q"] {
            done.jobs.insert(job(t, p), JobState::Succeeded);
            add_result(&mut done, t, p, 1);
            add_result(&mut done, t, p, 2);
        }
    }
    let end = decide(&written, &done, &settings(1000)).unwrap();
    assert_eq!(end.status.phase, Some(Phase::Completed));
    assert_eq!(end.status.comparisons.len(), 2);
    // Two repetitions per side: no verdict, and the headline says why.
    assert_eq!(
        end.status.headline.as_deref(),
        Some("inconclusive: 2 repetitions")
    );
    let mut finished = b.clone();
    finished.status = Some(end.status.clone());
    let later = decide(&finished, &done, &settings(100_000)).unwrap();
    assert_eq!(later.status, end.status);
    assert_eq!(later.actions, []);
    assert_eq!(later.requeue_after, None);
}

/// `n` ready nodes of 4 CPU and 16 GiB (n2-standard-4).
fn nodes(n: usize) -> PlatformNodes {
    PlatformNodes::Listed(
        (0..n)
            .map(|i| crate::operator::decide::placement::NodeCapacity {
                name: format!("node-{i}"),
                ready: true,
                schedulable: true,
                cpu_millis: Some(4000),
                memory_bytes: Some(16 << 30),
                pods: Some(110),
            })
            .collect(),
    )
}

fn platform_job(p: &str) -> RunnerKey {
    RunnerKey::Platform(p.to_owned())
}

fn runner_status(d: &Decision, p: &str) -> RunnerStatus {
    d.status
        .runners
        .iter()
        .find(|r| r.platform == p)
        .cloned()
        .unwrap()
}

const EXTERNAL: &str = "\
targets:
  - {name: a, external: {uriSecretRef: {name: s}}}
  - {name: b, external: {uriSecretRef: {name: s}}}
platforms: [{name: local}]
dataset: {sizes: [1k]}
workload: {type: flights}
repetitions: 2
";

#[test]
fn a_platform_of_external_targets_gets_one_runner_for_both_interleaved() {
    let b = bench("bench", EXTERNAL);
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [
            Action::CreateRunnerAccess,
            runners(&["a", "b"], "local", &[])
        ]
    );
    assert_eq!(
        d.status.runners,
        [RunnerStatus {
            platform: "local".into(),
            targets: vec!["a".into(), "b".into()],
            interleaved: true,
            reason: "AllExternal".into(),
            message: "every target on platform local is external: no replica set to place".into(),
            jobs: vec!["bench-run-local".into()],
        }]
    );
    // Cells in plan order a.r1, a.r2, b.r1, b.r2; slot 1's seeded order is b a, so the
    // runner starts with b.r1.
    assert_eq!(
        crate::runner::slots::order(b.spec.workload.seed(), 0, 1, 2),
        [1, 0]
    );
    assert_eq!(
        phases(&d),
        [
            CellPhase::Pending,
            CellPhase::Pending,
            CellPhase::Running,
            CellPhase::Pending
        ]
    );

    // b.r1 done: the runner works on a.r1 (the rest of slot 1), not b.r2.
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs.insert(platform_job("local"), JobState::Active);
    add_result(&mut o, "b", "local", 1);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(
        phases(&d),
        [
            CellPhase::Running,
            CellPhase::Pending,
            CellPhase::Completed,
            CellPhase::Pending
        ]
    );
    assert_eq!(d.status.phase, Some(Phase::Running));
    // A plan that lags behind is brought up to date for a retried pod.
    o.plans.insert(platform_job("local"), vec![]);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [Action::UpdatePlan {
            platform: "local".into(),
            targets: vec!["a".into(), "b".into()],
            completed_cells: vec!["b.local.1k.r1".into()]
        }]
    );
    // A lost Job is created again, skipping the cells that have results.
    o.jobs.clear();
    o.plans.clear();
    add_result(&mut o, "a", "local", 1);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [runners(
            &["a", "b"],
            "local",
            &["a.local.1k.r1", "b.local.1k.r1"]
        )]
    );
    // A failed runner fails the remaining cells of both targets.
    o.jobs.insert(
        platform_job("local"),
        JobState::Failed {
            message: "target b: connection refused".into(),
        },
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(
        phases(&d),
        [
            CellPhase::Completed,
            CellPhase::Failed,
            CellPhase::Completed,
            CellPhase::Failed
        ]
    );
    assert_eq!(
        d.status.cells[3].message.as_deref(),
        Some("target b: connection refused")
    );
    assert_eq!(d.status.phase, Some(Phase::Completed));
}

#[test]
fn provisioned_targets_that_fit_are_created_together_and_share_one_runner() {
    let b = bench("bench", SPEC);
    let mut o = Observed::default();
    o.nodes.insert("p".into(), nodes(3));
    o.nodes.insert(
        "q".into(),
        PlatformNodes::Unreadable("listing nodes: nodes is forbidden".into()),
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    // p holds both replica sets: both at once; q's nodes are unknown: one after another.
    assert_eq!(
        d.actions,
        [servers("a", "p"), servers("b", "p"), servers("a", "q")]
    );
    assert_eq!(
        d.status.runners,
        [
            RunnerStatus {
                platform: "p".into(),
                targets: vec!["a".into(), "b".into()],
                interleaved: true,
                reason: "Fits".into(),
                message: "platform p holds all 2 replica sets at once (3 ready nodes; 3 members \
                          each, one per node, each member without cpu or memory requests)"
                    .into(),
                jobs: vec!["bench-run-p".into()],
            },
            RunnerStatus {
                platform: "q".into(),
                targets: vec!["a".into(), "b".into()],
                interleaved: false,
                reason: "NodesUnreadable".into(),
                message: "the nodes of platform q cannot be read (listing nodes: nodes is \
                          forbidden): its targets run one after another, not interleaved"
                    .into(),
                jobs: vec!["bench-run-a-q".into(), "bench-run-b-q".into()],
            }
        ]
    );
    let mut written = b.clone();
    written.status = Some(d.status.clone());

    // One replica set ready, the other not: no runner yet.
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("b", "p"), 1);
    o.stateful_sets.insert(slot("a", "q"), 0);
    let d = decide(&written, &o, &settings(5)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(
        cond(&d, "ServersReady").2,
        "target a on platform q: 0/3 members ready; target b on platform p: 1/3 members ready"
    );
    // Both ready: ONE runner for both targets of p.
    o.stateful_sets.insert(slot("b", "p"), 3);
    let d = decide(&written, &o, &settings(10)).unwrap();
    assert_eq!(
        d.actions,
        [Action::CreateRunnerAccess, runners(&["a", "b"], "p", &[])]
    );
    assert_eq!(
        cond(&d, "ServersReady").2,
        "target a on platform q: 0/3 members ready"
    );

    // Running; a's cells are done but b's are not: both replica sets stay until the runner
    // has finished, then both go.
    o.runner_access = true;
    o.jobs.insert(platform_job("p"), JobState::Active);
    add_result(&mut o, "a", "p", 1);
    add_result(&mut o, "a", "p", 2);
    add_result(&mut o, "b", "p", 1);
    let d = decide(&written, &o, &settings(20)).unwrap();
    assert_eq!(d.actions, []);
    add_result(&mut o, "b", "p", 2);
    o.jobs.insert(platform_job("p"), JobState::Succeeded);
    let d = decide(&written, &o, &settings(30)).unwrap();
    assert_eq!(
        d.actions,
        [
            Action::DeleteServers {
                target: "a".into(),
                platform: "p".into()
            },
            Action::DeleteServers {
                target: "b".into(),
                platform: "p".into()
            }
        ]
    );
}

#[test]
fn a_platform_that_holds_one_replica_set_runs_its_targets_one_after_another() {
    let spec = SPEC.replace(
        "replicaSet: {members: 3, storageSize: 1Gi}",
        "replicaSet:\n  members: 3\n  storageSize: 1Gi\n  \
         resources: {requests: {cpu: '3', memory: 12Gi}, limits: {cpu: '3', memory: 12Gi}}",
    );
    let b = bench("bench", &spec);
    let mut o = Observed::default();
    o.nodes.insert("p".into(), nodes(3));
    o.nodes.insert("q".into(), nodes(6));
    let d = decide(&b, &o, &settings(0)).unwrap();
    // p: today's sequence, a first; q has room for both.
    assert_eq!(
        d.actions,
        [servers("a", "p"), servers("a", "q"), servers("b", "q")]
    );
    let p = runner_status(&d, "p");
    assert!(!p.interleaved);
    assert_eq!(p.reason, "InsufficientCapacity");
    assert_eq!(
        p.message,
        "platform p holds 1 of 2 replica sets at once (3 ready nodes; 3 members each, one per \
         node, each member requesting cpu 3, memory 12Gi): its targets run one after another, \
         not interleaved"
    );
    assert_eq!(p.jobs, ["bench-run-a-p", "bench-run-b-p"]);
    let q = runner_status(&d, "q");
    assert_eq!((q.interleaved, q.reason.as_str()), (true, "Fits"));
    let events = crate::operator::status::events::transitions("bench", None, &d.status);
    let warned: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e.warning)
        .map(|e| (e.reason.as_str(), e.note.as_str()))
        .collect();
    assert_eq!(warned, [("NotInterleaved", p.message.as_str())]);

    // a's servers ready: a's own runner; then, a done, its servers go and b's come.
    let on_p = |d: &Decision| -> Vec<Action> {
        d.actions
            .iter()
            .filter(|a| match a {
                Action::CreateServers { platform, .. }
                | Action::StartRunner { platform, .. }
                | Action::UpdatePlan { platform, .. }
                | Action::DeleteServers { platform, .. } => platform == "p",
                _ => false,
            })
            .cloned()
            .collect()
    };
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.runner_access = true;
    let d = decide(&b, &o, &settings(5)).unwrap();
    assert_eq!(on_p(&d), [runner("a", "p", &[])]);
    o.jobs.insert(job("a", "p"), JobState::Active);
    o.nodes.remove("p");
    add_result(&mut o, "a", "p", 1);
    add_result(&mut o, "a", "p", 2);
    o.jobs.insert(job("a", "p"), JobState::Succeeded);
    o.stateful_sets.remove(&slot("a", "p"));
    let d = decide(&b, &o, &settings(10)).unwrap();
    assert_eq!(on_p(&d), [servers("b", "p")]);
    // The slot Job keeps p one after another even with room now; status says why it started.
    o.nodes.insert("p".into(), nodes(6));
    let d = decide(&b, &o, &settings(10)).unwrap();
    assert_eq!(on_p(&d), [servers("b", "p")]);
    let p = runner_status(&d, "p");
    assert_eq!((p.interleaved, p.reason.as_str()), (false, "Started"));
    assert_eq!(
        p.message,
        "the runners of platform p started one target at a time: its targets run one after \
         another, not interleaved"
    );
}

#[test]
fn a_started_platform_runner_stays_interleaved_and_keeps_its_reason() {
    let b = bench("bench", SPEC);
    let mut o = Observed::default();
    o.nodes.insert("p".into(), nodes(3));
    o.nodes.insert("q".into(), nodes(3));
    let first = decide(&b, &o, &settings(0)).unwrap();
    let mut written = b.clone();
    written.status = Some(first.status.clone());
    // The runner of p started; the nodes are not read any more (or a node went away).
    o.nodes.remove("p");
    o.nodes.insert("q".into(), nodes(2));
    for t in ["a", "b"] {
        o.stateful_sets.insert(slot(t, "p"), 3);
        o.stateful_sets.insert(slot(t, "q"), 3);
    }
    o.jobs.insert(platform_job("p"), JobState::Active);
    o.runner_access = true;
    let d = decide(&written, &o, &settings(5)).unwrap();
    assert_eq!(runner_status(&d, "p"), runner_status(&first, "p"));
    // q's replica sets were created together: it stays interleaved though its nodes shrank.
    assert_eq!(runner_status(&d, "q"), runner_status(&first, "q"));
    assert_eq!(d.actions, [runners(&["a", "b"], "q", &[])]);
}

#[test]
fn sequential_runs_one_platform_runner_at_a_time() {
    let b = bench(
        "bench",
        &format!("{EXTERNAL}parallelism: Sequential\n").replace(
            "platforms: [{name: local}]",
            "platforms: [{name: local}, {name: other}]",
        ),
    );
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, [runners(&["a", "b"], "local", &[])]);
    o.jobs.insert(platform_job("local"), JobState::Succeeded);
    for t in ["a", "b"] {
        add_result(&mut o, t, "local", 1);
        add_result(&mut o, t, "local", 2);
    }
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, [runners(&["a", "b"], "other", &[])]);
}

#[test]
fn a_platform_with_results_keeps_its_order_when_its_jobs_are_deleted() {
    let spec = SPEC.replace("  - {name: q, nodeSelector: {pool: q}}\n", "");
    let b = bench("bench", &spec);
    // Started one after another (its nodes could not be read).
    let mut o = Observed::default();
    o.nodes.insert(
        "p".into(),
        PlatformNodes::Unreadable("listing nodes: forbidden".into()),
    );
    let first = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(first.actions, [servers("a", "p")]);
    let mut written = b.clone();
    written.status = Some(first.status.clone());
    // a is done and its Job deleted by hand; now the nodes would hold both.
    o.nodes.insert("p".into(), nodes(3));
    add_result(&mut o, "a", "p", 1);
    add_result(&mut o, "a", "p", 2);
    let d = decide(&written, &o, &settings(10)).unwrap();
    // b alone: no servers again for a, no runner for both.
    assert_eq!(d.actions, [servers("b", "p")]);
    assert_eq!(runner_status(&d, "p"), runner_status(&first, "p"));
}

#[test]
fn the_cell_a_runner_names_runs_with_its_activity_in_progress() {
    // Two external targets interleaved on one platform, two sizes, two repetitions.
    let spec = "\
targets:
  - {name: a, external: {uriSecretRef: {name: s}}}
  - {name: b, external: {uriSecretRef: {name: s}}}
platforms: [{name: local}]
dataset: {sizes: [1k, 2k]}
workload: {type: flights}
repetitions: 2
";
    let b = bench("bench", spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs
        .insert(RunnerKey::Platform("local".into()), JobState::Active);
    let running = |d: &Decision| -> Vec<(String, Option<String>)> {
        d.status
            .cells
            .iter()
            .filter(|c| c.phase == CellPhase::Running)
            .map(|c| (c.id.clone(), c.activity.clone()))
            .collect()
    };
    // No word from the runner: the first cell in its order (slot 1's seeded order is b a),
    // no activity.
    assert_eq!(
        crate::runner::slots::order(b.spec.workload.seed(), 0, 1, 2),
        [1, 0]
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(running(&d), [("b.local.1k.r1".to_owned(), None)]);
    assert_eq!(d.status.progress.as_deref(), Some("0/8"));

    // Seeding b to 1k: the first cell of b at 1k.
    let seeding = |target: &str, size: &str| Activity {
        target: target.into(),
        size: size.into(),
        cell: None,
        phase: "seeding".into(),
    };
    o.activities.insert("local".into(), seeding("b", "1k"));
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        running(&d),
        [("b.local.1k.r1".to_owned(), Some("seeding".to_owned()))]
    );
    assert_eq!(
        d.status.progress.as_deref(),
        Some("0/8, b.local.1k.r1 seeding")
    );

    // Measuring a named cell.
    o.activities.insert(
        "local".into(),
        Activity {
            cell: Some("a.local.1k.r2".into()),
            phase: "measuring".into(),
            ..seeding("a", "1k")
        },
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        running(&d),
        [("a.local.1k.r2".to_owned(), Some("measuring".to_owned()))]
    );
    assert_eq!(
        d.status.progress.as_deref(),
        Some("0/8, a.local.1k.r2 measuring")
    );
    // The conditions count cells only, so they do not change with every phase.
    assert_eq!(cond(&d, "Reconciling").2, "0/8 cells finished");

    // Word about a cell that has its result already is stale: the first pending cell runs.
    let id = crate::plan::cell_id("a", "local", "1k", 2);
    let result = testing::result(
        "bench",
        "a",
        "local",
        "1k",
        2,
        10,
        &[("find", 1000, 100)],
        None,
    );
    o.results.insert(
        id.clone(),
        ObservedResult::Document {
            config_map: format!("bench-{id}"),
            result: Box::new(result),
        },
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(running(&d), [("b.local.1k.r1".to_owned(), None)]);
    assert_eq!(d.status.progress.as_deref(), Some("1/8"));
}

/// A result of `t` on `local` in slot `rep` with `ops` operations over 10 s.
fn add_slotted(o: &mut Observed, t: &str, rep: u32, ops: u64) {
    let id = crate::plan::cell_id(t, "local", "1k", rep);
    let mut result = testing::result(
        "bench",
        t,
        "local",
        "1k",
        rep,
        10,
        &[("find", ops, 100)],
        None,
    );
    result.slot = Some(crate::result::Slot {
        number: rep,
        position: u32::from(t == "b"),
    });
    o.results.insert(
        id.clone(),
        ObservedResult::Document {
            config_map: format!("bench-{id}"),
            result: Box::new(result),
        },
    );
}

#[test]
fn a_precision_goal_keeps_the_runner_going_and_its_added_slots_are_cells() {
    let spec = format!(
        "{}precision: {{mdePercent: 3, maxRepetitions: 6}}\n",
        EXTERNAL.replace("repetitions: 2", "repetitions: 3")
    );
    let b = bench("bench", &spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs.insert(platform_job("local"), JobState::Active);
    // Four slots so far: b is 10 % faster than a in each, a drifting between slots.
    for (rep, ops) in [(1, 10_000), (2, 12_000), (3, 9_000), (4, 11_000)] {
        add_slotted(&mut o, "a", rep, ops);
        add_slotted(&mut o, "b", rep, ops * 11 / 10);
    }
    let d = decide(&b, &o, &settings(0)).unwrap();
    // The planned three slots are done, but the runner may add more: still running, and
    // the fourth slot's cells count.
    assert_eq!(d.status.phase, Some(Phase::Running));
    assert_eq!(d.status.counts.as_ref().unwrap().total, 8);
    assert_eq!(d.status.counts.as_ref().unwrap().completed, 8);
    let c = &d.status.comparisons[0];
    assert_eq!((c.repetitions, c.paired_slots), (4, Some(4)));
    let (status, reason, message) = cond(&d, "Precision");
    assert_eq!((status, reason), ("True", "PrecisionReached"), "{message}");
    assert!(
        message.starts_with("MDE 0.") && message.contains("after 4 reps (b vs a at 1k on local)"),
        "{message}"
    );

    // The runner ended: the benchmark is complete.
    o.jobs.insert(platform_job("local"), JobState::Succeeded);
    let d = decide(&b, &o, &settings(10)).unwrap();
    assert_eq!(d.status.phase, Some(Phase::Completed));
    assert_eq!(d.status.counts.as_ref().unwrap().total, 8);

    // Without a goal, the planned cells alone decide: a fourth slot is not a cell.
    let plain = bench(
        "bench",
        &EXTERNAL.replace("repetitions: 2", "repetitions: 3"),
    );
    let d = decide(&plain, &o, &settings(10)).unwrap();
    assert_eq!(d.status.counts.as_ref().unwrap().total, 6);
    assert!(d.status.condition("Precision").is_none());
}

#[test]
fn a_precision_goal_not_reached_says_by_how_much() {
    let spec = format!(
        "{}precision: {{mdePercent: 3}}\n",
        EXTERNAL.replace("repetitions: 2", "repetitions: 3")
    );
    let b = bench("bench", &spec);
    let mut o = Observed {
        runner_access: true,
        ..Default::default()
    };
    o.jobs.insert(platform_job("local"), JobState::Succeeded);
    // Ratios 1.1, 0.9, 1.05: far too noisy for 3 %.
    for (rep, a, b) in [(1, 10_000, 11_000), (2, 10_000, 9_000), (3, 10_000, 10_500)] {
        add_slotted(&mut o, "a", rep, a);
        add_slotted(&mut o, "b", rep, b);
    }
    let d = decide(&b, &o, &settings(0)).unwrap();
    let (status, reason, message) = cond(&d, "Precision");
    assert_eq!((status, reason), ("False", "PrecisionNotReached"));
    assert!(
        message.starts_with("MDE ")
            && message.ends_with("after 3 reps (b vs a at 1k on local); goal 3%"),
        "{message}"
    );
}
