//! A benchmark from start to end: provisioning, runners, results, failures, suspend, cleanup,
//! TTL, and a second decision on the written status.

use super::*;
use crate::api::{CellCounts, StatusPhase};

#[test]
fn a_new_benchmark_provisions_the_first_target_of_every_platform() {
    let b = bench("bench", SPEC);
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(d.actions, [servers("a", "p"), servers("a", "q")]);
    assert_eq!(d.status.phase, Some(StatusPhase::Provisioning));
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
fn a_sharded_target_waits_for_every_member_and_router() {
    let spec = SPEC.replace(
        "  - {name: a, image: 'mongo:8.0.4', distribution: community}",
        "  - {name: a, image: 'mongo:8.0.4', distribution: community, topology: sharded,\n     \
         shards: {count: 2, members: 1}, configServers: {members: 1}, mongos: {replicas: 1}}",
    ) + "workload:\n  type: flights\n  sharding:\n    collections:\n      - {collection: \
         flights, shardKey: {field: flight_id, type: hashed}}\n";
    let spec = spec.replace("workload: {type: flights}\n", "");
    let b = bench("bench", &spec);
    assert!(b.spec.targets[0].is_sharded());
    let mut o = Observed {
        runner_access: true,
        ..Observed::default()
    };
    // 1 config server + 2 shards of 1 + 1 router: 4 pods, 3 of them ready.
    o.stateful_sets.insert(slot("a", "p"), 3);
    o.stateful_sets.insert(slot("a", "q"), 4);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, [runner("a", "q", &[])]);
    assert_eq!(
        cond(&d, "ServersReady"),
        (
            "False",
            "Provisioning",
            "target a on platform p: 3/4 members ready"
        )
    );
    o.stateful_sets.insert(slot("a", "p"), 4);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(d.actions, [runner("a", "p", &[]), runner("a", "q", &[])]);
    let shape = d.status.targets.iter().find(|t| t.platform == "p").unwrap();
    assert_eq!(
        shape.topology.as_deref(),
        Some("sharded: 2 shards × 1 members, 1 config servers, 1 mongos")
    );
    // While its runner brings the cluster up, the step it is on is the DataSeeded condition
    // and the first cell's activity.
    o.jobs.insert(job("a", "p"), JobState::Active);
    let phase = "bringing up the sharded cluster: adding shard bench-a-p-shard-1";
    o.activities.insert(
        "p".into(),
        crate::contract::Activity {
            target: "a".into(),
            size: "1k".into(),
            cell: None,
            phase: phase.parse().unwrap(),
        },
    );
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        cond(&d, "DataSeeded"),
        ("False", "BringingUpCluster", &*format!("target a: {phase}"))
    );
    assert_eq!(d.status.cells[0].activity.as_deref(), Some(phase));
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
        [Change::DeleteServers {
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
        [Change::CreateRunnerAccess, runner("a", "q", &[])]
    );
    assert_eq!(d.status.phase, Some(StatusPhase::Provisioning));
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
    assert_eq!(d.status.phase, Some(StatusPhase::Seeding));
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
    assert_eq!(d.status.phase, Some(StatusPhase::Running));
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
        [Change::UpdatePlan {
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
            Change::DeleteServers {
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
    assert_eq!(d.status.phase, Some(StatusPhase::Completed));
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
    assert_eq!(
        d.status.completed_at,
        Some(crate::operator::status::now_seconds(at(100)))
    );
    assert_eq!(d.requeue_after, None);

    o.results.remove("a.p.1k.r1");
    let d = decide(&b, &o, &settings(100)).unwrap();
    assert_eq!(d.status.phase, Some(StatusPhase::Failed));
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
fn suspend_starts_nothing_new_but_lets_a_runner_finish() {
    let b = bench("bench", &format!("{SPEC}suspend: true\n"));
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(d.actions, []);
    assert_eq!(d.status.phase, Some(StatusPhase::Suspended));
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
    assert_eq!(d.status.phase, Some(StatusPhase::Seeding));
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
        [Change::CreateRunnerAccess, runner("ext", "local", &[])]
    );
    assert_eq!(d.status.phase, Some(StatusPhase::Seeding));
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
    assert_eq!(done.status.phase, Some(StatusPhase::Completed));
    assert_eq!(done.requeue_after, Some(Duration::from_secs(60)));
    assert_eq!(done.actions, []);
    let mut written = b.clone();
    written.status = Some(done.status);
    assert_eq!(
        decide(&written, &o, &settings(140)).unwrap().requeue_after,
        Some(Duration::from_secs(20))
    );
    let gone = decide(&written, &o, &settings(160)).unwrap();
    assert_eq!(gone.actions, [Change::DeleteBenchmark]);
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
    assert_eq!(end.status.phase, Some(StatusPhase::Completed));
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
