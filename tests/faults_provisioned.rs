//! Faults on the provisioned, authenticated path: the operator creates the replica set (one
//! member, authentication on: its keyfile and admin Secrets), the client-node kubelet harness
//! runs the member as SecantusDB and the runner for real, and the runner logs in as the
//! generated root user. Its member killed while a cell is measured, its runner killed while
//! measuring, and the leading operator replica cut off from the API server mid-run: after each,
//! every cell is in status once and has one result, none lost or counted twice; the cell whose
//! member died is incomplete naming its target and phase, every other one complete and valid.
mod faults_common;
mod operator_common;
mod support;

use std::time::Duration;

use faults_common as faults;
use mongobench::api::{CellPhase, StatusPhase};
use mongobench::result::CellStatus;
use operator_common as common;

#[tokio::test]
async fn a_member_killed_mid_cell_fails_that_cell_and_the_others_run_on_the_member_back_as_itself()
{
    let bench = "memberkill";
    let (env, kubelet, volumes) = faults::provisioned_environment("faults-member", bench).await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &faults::provisioned(bench, &["100"], 3)).await;

    // Killed once one cell has its result and another is being measured.
    let what = "a cell measuring after one completed";
    let measuring = common::status_until(&env, bench, Duration::from_secs(240), what, |s| {
        s.cells
            .iter()
            .any(|c| c.activity.as_deref() == Some("measuring"))
            && s.cells.iter().any(|c| c.phase == CellPhase::Completed)
    })
    .await;
    let killed = measuring
        .cells
        .iter()
        .find(|c| c.activity.as_deref() == Some("measuring"))
        .unwrap()
        .id
        .clone();
    let member = kubelet.members.lock().unwrap()[0].clone();
    // SAFETY: kill(2) on the member process the harness started for this test.
    assert_eq!(unsafe { libc::kill(member.pid as i32, libc::SIGKILL) }, 0);

    let status = common::status_until(&env, bench, Duration::from_secs(300), "the end", |s| {
        matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed))
    })
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    assert_eq!(status.cells.len(), 3, "every cell once: {:?}", status.cells);
    let results = common::cell_results(&env, &format!("mongobench.io/benchmark={bench}")).await;
    assert_eq!(results.len(), 3, "one result per cell");
    for cell in &status.cells {
        let result = results.iter().find(|r| {
            mongobench::plan::cell_id(
                &r.cell.target,
                &r.cell.platform,
                &r.cell.size,
                r.cell.repetition,
            ) == cell.id
        });
        let result = result.unwrap_or_else(|| panic!("no result of {}", cell.id));
        if cell.id == killed {
            assert_eq!(cell.phase, CellPhase::Failed, "{cell:?}");
            let CellStatus::Incomplete { reason } = &result.status else {
                panic!(
                    "the cell whose member died is complete: {:?}",
                    result.status
                );
            };
            assert!(reason.starts_with("target secantus: "), "{reason}");
            assert_eq!(cell.message.as_deref(), Some(reason.as_str()));
        } else {
            assert_eq!(cell.phase, CellPhase::Completed, "{cell:?}");
            assert!(
                result.is_complete() && result.invalid_reasons.is_empty(),
                "{result:?}"
            );
        }
    }
    // The StatefulSet replaced the failed member; it came back at its address, with its data.
    let members = kubelet.members.lock().unwrap().clone();
    assert_eq!(members.len(), 2, "{members:?}");
    assert_eq!(members[1].address, member.address);
    operator.kill().await;
    common::delete_volumes(&env, &volumes).await;
}

#[tokio::test]
async fn a_runner_killed_while_measuring_the_provisioned_set_runs_that_cell_again_and_loses_none() {
    let bench = "runnerkill";
    let (env, kubelet, volumes) =
        faults::provisioned_environment("faults-prov-runner", bench).await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &faults::provisioned(bench, &["100"], 3)).await;

    let what = "a cell measuring after one completed";
    common::status_until(&env, bench, Duration::from_secs(240), what, |s| {
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

    faults::ends_whole(&env, bench, 3, Duration::from_secs(300)).await;
    let after = faults::results(&env).await;
    for (name, document) in &before {
        assert_eq!(after.get(name), Some(document), "{name} was measured again");
    }
    // The member once, the runner's pod twice (the Job retried it).
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(started.len(), 3, "{started:?}");
    assert_eq!(kubelet.members.lock().unwrap().len(), 1);
    operator.kill().await;
    common::delete_volumes(&env, &volumes).await;
}

#[tokio::test]
async fn the_leader_cut_off_mid_run_on_the_provisioned_set_stops_before_the_standby_leads() {
    let bench = "provcut";
    let (env, kubelet, volumes) = faults::provisioned_environment("faults-prov-cut", bench).await;
    let replicas = faults::Replicas::start(&env).await;
    common::apply(&env, &faults::provisioned(bench, &["100", "200"], 2)).await;

    faults::activity(&env, bench, "measuring", Duration::from_secs(240)).await;
    let standby = replicas.cut_leader_off().await;

    faults::ends_whole(&env, bench, 4, Duration::from_secs(300)).await;
    assert!(standby.metrics.reconciles() > 0, "the standby took over");
    // One member, one runner: nothing was started twice.
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(started.len(), 2, "{started:?}");
    standby.kill().await;
    common::delete_volumes(&env, &volumes).await;
}
