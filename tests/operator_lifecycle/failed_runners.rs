//! A runner that fails or is never scheduled: its remaining cells fail with its message while
//! the other runners go on, or the benchmark ends Stalled naming its pod.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use mongobench::api::{CellPhase, KStatus, StatusPhase, kstatus};
use serde_json::json;

use super::{common, events_with_reason, external_benchmark, support, uri_secret, wait};

/// Plays the kubelet for one pod of a Job: the runner container exits 1 with `message` as its
/// termination message.
async fn fail_runner_pod(
    env: &support::KubeEnv,
    job: &str,
    seen: &[String],
    message: &str,
) -> String {
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    let pod = wait::until(Duration::from_secs(120), "a new runner pod", || {
        let pods = pods.clone();
        async move {
            let list = pods
                .list(&ListParams::default().labels(&format!("job-name={job}")))
                .await
                .ok()?;
            list.items.into_iter().find(|p| {
                !seen.contains(&p.name_any())
                    && p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some()
            })
        }
    })
    .await;
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    pods.patch_status(
        &pod.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {
            "phase": "Failed",
            "containerStatuses": [{
                "name": "runner", "image": "registry.invalid/mongobench:test", "imageID": "",
                "ready": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 1, "reason": "Error", "message": message,
                                         "startedAt": now, "finishedAt": now}}
            }]
        }})),
    )
    .await
    .unwrap();
    pod.name_any()
}

#[tokio::test]
async fn a_failed_runner_fails_its_remaining_cells_with_its_message_and_the_rest_goes_on() {
    let env = common::setup("op-runner-fails").await;
    uri_secret(&env).await;
    let bench = "fails";
    let operator = common::start(&env, common::options(&env.namespace));
    // Two platforms, each with one runner for both targets.
    let mut doc = external_benchmark(bench, &["ext-a", "ext-b"], "[10k, 20k]");
    doc["spec"]["platforms"] = json!([{"name": "local"}, {"name": "spare"}]);
    common::apply(&env, &doc).await;
    let local = common::platform_runner(bench, "local");
    let job: Job = common::exists(&env, &local).await;
    let plan = common::plan_of(&env, &job).await;
    common::write_result(
        &env,
        &plan,
        "ext-a.local.10k.r1",
        &common::result_of(&plan, "ext-a", "10k", 1, 1000),
    )
    .await;
    // The runner fails before ext-b's first cell, twice (backoffLimit 1): the Job fails for
    // real, and with it every remaining cell of both its targets.
    let message = "target ext-b: seeding to 10k failed: connection refused";
    let first = fail_runner_pod(&env, &local, &[], message).await;
    fail_runner_pod(&env, &local, &[first], message).await;
    let status = common::status_until(
        &env,
        bench,
        Duration::from_secs(120),
        "the failed cells",
        |s| s.cells.iter().any(|c| c.phase == CellPhase::Failed),
    )
    .await;
    for id in [
        "ext-a.local.20k.r1",
        "ext-b.local.10k.r1",
        "ext-b.local.20k.r1",
    ] {
        let failed = status.cells.iter().find(|c| c.id == id).unwrap();
        assert_eq!(failed.phase, CellPhase::Failed, "{id}");
        assert_eq!(failed.message.as_deref(), Some(message), "{id}");
    }
    assert_eq!(status.cells[0].phase, CellPhase::Completed);
    // The other platform's runner goes on, and the benchmark ends Completed, failures counted.
    let job: Job = common::exists(&env, &common::platform_runner(bench, "spare")).await;
    let spare = common::plan_of(&env, &job).await;
    for target in ["ext-a", "ext-b"] {
        for size in ["10k", "20k"] {
            let id = mongobench::plan::cell_id(target, "spare", size, 1);
            common::write_result(
                &env,
                &spare,
                &id,
                &common::result_of(&spare, target, size, 1, 900),
            )
            .await;
        }
    }
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    let counts = status.counts.clone().unwrap();
    assert_eq!((counts.completed, counts.failed), (5, 3));
    assert_eq!(
        status.condition("Ready").unwrap().message,
        "5 completed, 3 failed of 8 cells"
    );
    let warnings = events_with_reason(&env, "CellFailed").await;
    let mut notes: Vec<&str> = warnings.iter().filter_map(|e| e.note.as_deref()).collect();
    notes.sort();
    assert_eq!(
        notes,
        [
            format!("cell ext-a.local.20k.r1: {message}"),
            format!("cell ext-b.local.10k.r1: {message}"),
            format!("cell ext-b.local.20k.r1: {message}"),
        ]
    );
    operator.kill().await;
}

#[tokio::test]
async fn a_runner_that_no_node_takes_ends_stalled_naming_its_pod() {
    let env = common::setup("op-runner-unschedulable").await;
    uri_secret(&env).await;
    let mut options = common::options(&env.namespace);
    options.stall_deadline = Duration::from_secs(3);
    options.resync = Duration::from_secs(2);
    let operator = common::start(&env, options);
    let mut doc = external_benchmark("stranded", &["ext"], "[1k]");
    doc["spec"]["client"] =
        json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "no-such-pool"}});
    common::apply(&env, &doc).await;
    let status = common::status_until(
        &env,
        "stranded",
        Duration::from_secs(90),
        "Stalled=True",
        |s| s.condition_is_true("Stalled"),
    )
    .await;
    let stalled = status.condition("Stalled").unwrap();
    assert_eq!(stalled.reason, "RunnerUnschedulable");
    assert!(
        stalled
            .message
            .starts_with("the runner of target ext on platform local cannot be scheduled: pod stranded-run-ext-local-"),
        "{}",
        stalled.message
    );
    assert!(
        stalled
            .message
            .contains("didn't match Pod's node affinity/selector"),
        "{}",
        stalled.message
    );
    // The servers are not to blame.
    assert_ne!(
        status.condition("ServersReady").unwrap().reason,
        "RunnerUnschedulable"
    );
    let b = common::benchmarks(&env).get("stranded").await.unwrap();
    assert_eq!(kstatus(&b), KStatus::Failed);
    operator.kill().await;
}
