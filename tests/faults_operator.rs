//! Faults of the runner and the operator during a real run (the operator in-process, the
//! runner Job run by the client-node kubelet harness against a private FerretDB): the runner
//! killed while seeding and while measuring, and the leading operator replica killed mid-run or
//! cut off from the API server (its requests hang) mid-run.
//! After each, every cell is complete and valid, none lost or counted twice, and every cell of
//! a size ran on the same seeded data.
mod faults_common;
mod operator_common;
mod support;

use std::time::Duration;

use faults_common as faults;
use mongobench::api::CellPhase;
use mongobench::workload::flights;
use operator_common as common;

#[tokio::test]
async fn a_runner_killed_while_seeding_is_retried_and_brings_the_half_seeded_collection_to_its_size()
 {
    let (env, server, kubelet) = faults::environment("faults-seed").await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &faults::benchmark("seedkill", &["2000"], 2)).await;

    // Killed once the collection holds some of its documents, not all.
    let client = server.client().await;
    let flights = client
        .database(flights::DATABASE)
        .collection::<mongodb::bson::Document>(flights::COLLECTION);
    let mut held = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !(1..2_000).contains(&held) {
        assert!(
            std::time::Instant::now() < deadline,
            "seeding never seen under way"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        held = flights.estimated_document_count().await.unwrap_or(0);
    }
    assert_eq!(
        faults::kill_runners(&env.namespace),
        1,
        "one runner to kill"
    );
    eprintln!("killed the runner with {held} of 2000 documents seeded");

    let (_, results) = faults::ends_whole(&env, "seedkill", 2, Duration::from_secs(300)).await;
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(
        started.len(),
        2,
        "the Job ran its pod again once: {started:?}"
    );
    assert_eq!(
        flights.estimated_document_count().await.unwrap(),
        2_000,
        "the collection holds exactly its size"
    );
    assert!(results.iter().all(|r| r.dataset.digest.is_some()));
    operator.kill().await;
}

#[tokio::test]
async fn a_runner_killed_while_measuring_runs_that_cell_again_from_restored_data() {
    let (env, _server, kubelet) = faults::environment("faults-measure").await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &faults::benchmark("measurekill", &["300"], 3)).await;

    // Killed while measuring a later cell, once an earlier one has its result.
    let what = "a cell measuring after one completed";
    common::status_until(&env, "measurekill", Duration::from_secs(120), what, |s| {
        s.progress
            .as_deref()
            .is_some_and(|p| p.contains("measuring"))
            && s.cells.iter().any(|c| c.phase == CellPhase::Completed)
    })
    .await;
    let before = faults::results(&env).await;
    assert_eq!(
        faults::kill_runners(&env.namespace),
        1,
        "one runner to kill"
    );

    faults::ends_whole(&env, "measurekill", 3, Duration::from_secs(300)).await;
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(
        started.len(),
        2,
        "the Job ran its pod again once: {started:?}"
    );
    // The retry resumed: what was finished before the kill was not measured again.
    let after = faults::results(&env).await;
    assert!(!before.is_empty());
    for (name, document) in &before {
        assert_eq!(after.get(name), Some(document), "{name} was measured again");
    }
    operator.kill().await;
}

#[tokio::test]
async fn the_leader_killed_mid_run_hands_over_and_the_standby_finishes_every_cell_once() {
    let (env, _server, kubelet) = faults::environment("faults-leader").await;
    let replica = |identity: &str| {
        let mut o = common::options(&env.namespace);
        o.leader_election = Some(faults::election(&env.namespace, identity));
        common::start(&env, o)
    };
    let leader = replica("first");
    faults::until(Duration::from_secs(30), "the first replica to lead", || {
        leader
            .metrics
            .encode()
            .lines()
            .any(|l| l == "mongobench_leader 1")
    })
    .await;
    let standby = replica("second");
    common::apply(&env, &faults::benchmark("handover", &["100", "200"], 2)).await;

    faults::activity(&env, "handover", "measuring", Duration::from_secs(120)).await;
    leader.kill().await;

    faults::ends_whole(&env, "handover", 4, Duration::from_secs(300)).await;
    assert!(standby.metrics.reconciles() > 0, "the standby took over");
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(
        started.len(),
        1,
        "the runner was never started again: {started:?}"
    );
    standby.kill().await;
}

#[tokio::test]
async fn the_leader_cut_off_from_the_api_server_stops_before_the_standby_leads_and_every_cell_runs_once()
 {
    let (env, _server, kubelet) = faults::environment("faults-cutoff").await;
    let replicas = faults::Replicas::start(&env).await;
    common::apply(&env, &faults::benchmark("cutoff", &["100", "200"], 2)).await;

    faults::activity(&env, "cutoff", "measuring", Duration::from_secs(120)).await;
    let leader_reconciles = replicas.leader.metrics.reconciles();
    assert!(
        leader_reconciles > 0,
        "the leader was acting before the cut"
    );
    let standby = replicas.cut_leader_off().await;

    faults::ends_whole(&env, "cutoff", 4, Duration::from_secs(300)).await;
    assert!(standby.metrics.reconciles() > 0, "the standby took over");
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(
        started.len(),
        1,
        "the runner was never started again: {started:?}"
    );
    standby.kill().await;
}
