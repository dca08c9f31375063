//! Platforms whose targets run interleaved by one runner, or one after another: what decides,
//! and that a started choice holds.

use super::*;
use crate::api::RunnerStatus;
use crate::operator::observe::{NodeCapacity, PlatformNodes};

/// `n` ready nodes of 4 CPU and 16 GiB (n2-standard-4).
fn nodes(n: usize) -> PlatformNodes {
    PlatformNodes::Listed(
        (0..n)
            .map(|i| NodeCapacity {
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

fn runner_status(d: &Decision, p: &str) -> RunnerStatus {
    d.status
        .runners
        .iter()
        .find(|r| r.platform == p)
        .cloned()
        .unwrap()
}

#[test]
fn a_platform_of_external_targets_gets_one_runner_for_both_interleaved() {
    let b = bench("bench", EXTERNAL);
    let d = decide(&b, &Observed::default(), &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [
            Change::CreateRunnerAccess,
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
        crate::contract::slot_order::order(b.spec.workload.seed(), 0, 1, 2),
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
    assert_eq!(d.status.phase, Some(StatusPhase::Running));
    // A plan that lags behind is brought up to date for a retried pod.
    o.plans.insert(platform_job("local"), vec![]);
    let d = decide(&b, &o, &settings(0)).unwrap();
    assert_eq!(
        d.actions,
        [Change::UpdatePlan {
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
    assert_eq!(d.status.phase, Some(StatusPhase::Completed));
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
        [Change::CreateRunnerAccess, runners(&["a", "b"], "p", &[])]
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
            Change::DeleteServers {
                target: "a".into(),
                platform: "p".into()
            },
            Change::DeleteServers {
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
    let on_p = |d: &Decision| -> Vec<Change> {
        d.actions
            .iter()
            .filter(|a| match a {
                Change::CreateServers { platform, .. }
                | Change::StartRunner { platform, .. }
                | Change::UpdatePlan { platform, .. }
                | Change::DeleteServers { platform, .. } => platform == "p",
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
