//! `client.pods` on the real control plane: the runner becomes an Indexed Job whose pods (real
//! processes, run by the client-node kubelet harness against a private FerretDB) split the
//! workers, start each measured phase together and hand their measurements to pod 0, which
//! writes one merged result per cell. A split run sends exactly one pod's traffic; a pod killed
//! mid-cell makes that cell incomplete, naming it, and the benchmark goes on.
mod faults_common;
mod operator_common;
mod support;

use std::time::Duration;

use faults_common as faults;
use k8s_openapi::api::batch::v1::Job;
use mongobench::api::{CellPhase, StatusPhase};
use mongobench::result::CellResult;
use operator_common as common;
use serde_json::json;

/// A flights benchmark of the private server run by `pods` client pods.
fn benchmark(
    name: &str,
    pods: u32,
    workload: serde_json::Value,
    repetitions: u32,
) -> serde_json::Value {
    let mut doc = faults::benchmark(name, &["300"], repetitions);
    doc["spec"]["workload"] = workload;
    doc["spec"]["client"]["pods"] = json!(pods);
    doc
}

#[tokio::test]
async fn three_client_pods_run_as_an_indexed_job_and_send_one_pods_traffic() {
    let (env, _server, kubelet) = faults::environment("client-pods").await;
    let operator = common::start(&env, common::options(&env.namespace));
    let workload = json!({"type": "flights", "workers": 6, "operations": 600,
        "warmupOperations": 60, "seed": 9});

    common::apply(&env, &benchmark("split", 3, workload.clone(), 1)).await;
    let job: Job = common::exists(&env, &common::runner("split", "ferretdb", "local")).await;
    let spec = job.spec.clone().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!((spec.completions, spec.parallelism), (Some(3), Some(3)));
    let (_, split) = faults::ends_whole(&env, "split", 1, Duration::from_secs(300)).await;
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(started.len(), 3, "three real pods ran: {started:?}");

    common::apply(&env, &benchmark("single", 1, workload, 1)).await;
    let (_, single) = faults::ends_whole(&env, "single", 1, Duration::from_secs(300)).await;
    let (split, single) = (&split[0], &single[0]);
    assert_eq!(split.fingerprint, single.fingerprint);
    assert_eq!(split.identity, single.identity);
    assert_eq!(split.worker_operations, single.worker_operations);
    assert_eq!(
        support::runs::completed_per_label(split),
        support::runs::completed_per_label(single)
    );
    assert_eq!(split.dataset.digest, single.dataset.digest);
    let pods: Vec<(u32, u32, u32)> = split
        .client_pods
        .iter()
        .map(|p| (p.index, p.first_worker, p.workers))
        .collect();
    assert_eq!(pods, [(0, 0, 2), (1, 2, 2), (2, 4, 2)]);
    assert!(single.client_pods.is_empty());
    operator.kill().await;
}

#[tokio::test]
async fn a_client_pod_killed_mid_cell_makes_that_cell_incomplete_naming_it_and_the_run_goes_on() {
    let (env, _server, kubelet) = faults::environment("client-pod-killed").await;
    let operator = common::start(&env, common::options(&env.namespace));
    let workload = json!({"type": "flights", "workers": 3, "duration": "15s", "warmup": "0s",
        "operationTimeout": "6s", "seed": 9});
    common::apply(&env, &benchmark("podkill", 3, workload, 2)).await;

    common::status_until(
        &env,
        "podkill",
        Duration::from_secs(180),
        "a cell measuring",
        |s| {
            s.progress
                .as_deref()
                .is_some_and(|p| p.contains("measuring"))
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let job = common::runner("podkill", "ferretdb", "local");
    assert_eq!(
        faults::kill_runners(&format!("{}-{job}-2", env.namespace)),
        1,
        "the process of pod 2"
    );

    let status = common::status_until(&env, "podkill", Duration::from_secs(300), "the end", |s| {
        matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed))
    })
    .await;
    let cell = |rep: u32| {
        status
            .cells
            .iter()
            .find(|c| c.repetition == rep)
            .unwrap_or_else(|| panic!("cell r{rep} in {:?}", status.cells))
            .clone()
    };
    let first = cell(1);
    assert_eq!(first.phase, CellPhase::Failed, "{first:?}");
    let message = first.message.clone().unwrap_or_default();
    assert!(message.contains("client process 2 of 3"), "{message}");
    assert_eq!(
        first.ops_per_second, None,
        "a cell of fewer pods shows no figures"
    );
    let second = cell(2);
    assert_eq!(
        second.phase,
        CellPhase::Completed,
        "the run went on: {second:?}"
    );
    let results = faults::results(&env).await;
    let second: Vec<CellResult> = results
        .values()
        .map(|text| CellResult::from_json(text).unwrap())
        .filter(|r| r.cell.repetition == 2)
        .collect();
    assert_eq!(
        second[0].client_pods.len(),
        3,
        "{:?}",
        second[0].client_pods
    );
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(started.len(), 4, "pod 2 was replaced once: {started:?}");
    operator.kill().await;
}
