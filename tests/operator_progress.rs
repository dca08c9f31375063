//! What a user watching a running benchmark sees, on the real control plane with the test
//! playing the runner (its activity ConfigMap and result ConfigMaps, as the runner writes
//! them): an Event series per cell, each with its own cell's message; conditions that say
//! what is happening; an expected completion time in status and in `kubectl get -o wide`;
//! and the running cell's phase and throughput in the operator's /metrics until it finishes.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use mongobench::api::StatusPhase;
use mongobench::contract::Activity;
use mongobench::contract::JobPlan;
use mongobench::contract::names::activity_name;
use mongobench::runner::activity::activity_configmap;
use operator_common as common;
use serde_json::json;
use support::wait;

fn benchmark() -> serde_json::Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": "watched"},
        "spec": {
            "targets": [{"name": "ferret", "external": {"uriSecretRef": {"name": "target-uri"}}}],
            "platforms": [{"name": "local"}],
            "dataset": {"sizes": ["1k"]},
            "workload": {"type": "flights", "duration": "10s", "warmup": "0s"},
            // Pinned to the client pool, where kwok leaves pods alone: the test is the runner.
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "repetitions": 3,
            "cleanupPolicy": "Retain"
        }
    })
}

/// Publishes `phase` of repetition `rep` as the runner does.
async fn activity(env: &support::KubeEnv, plan: &JobPlan, rep: u32, phase: &str, ops: Option<u64>) {
    let cm = activity_configmap(
        plan,
        Activity {
            target: "ferret".into(),
            size: "1k".into(),
            cell: Some(mongobench::plan::cell_id("ferret", "local", "1k", rep)),
            phase: phase.parse().unwrap(),
            ops_per_second: ops,
        },
    );
    Api::<ConfigMap>::namespaced(env.client.clone(), &env.namespace)
        .patch(
            &activity_name(&plan.benchmark, &plan.platform),
            &PatchParams::apply("runner-in-test").force(),
            &Patch::Apply(&cm),
        )
        .await
        .unwrap();
}

/// The notes and referred objects of the events with `reason`, once there are `count`.
async fn events(env: &support::KubeEnv, reason: &str, count: usize) -> Vec<(String, String)> {
    let api: Api<Event> = Api::namespaced(env.client.clone(), &env.namespace);
    wait::until(
        Duration::from_secs(30),
        &format!("{count} {reason} events"),
        || {
            let api = api.clone();
            async move {
                let mut found: Vec<(String, String)> = api
                    .list(&ListParams::default())
                    .await
                    .ok()?
                    .items
                    .into_iter()
                    .filter(|e| e.reason.as_deref() == Some(reason))
                    .map(|e| {
                        let related = e.related.and_then(|r| r.name).unwrap_or_default();
                        (e.note.unwrap_or_default(), related)
                    })
                    .collect();
                found.sort();
                (found.len() >= count).then_some(found)
            }
        },
    )
    .await
}

/// The value of the /metrics line that starts with `prefix`, if any.
fn metric(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|v| v.trim().parse().unwrap())
}

#[tokio::test]
async fn a_running_benchmark_tells_what_it_does_and_when_it_will_end() {
    let env = common::setup("op-progress").await;
    common::uri_secret(&env, "target-uri", "mongodb://127.0.0.1:27018/").await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &benchmark()).await;
    let job: Job = common::exists(&env, &common::runner("watched", "ferret", "local")).await;
    let plan = common::plan_of(&env, &job).await;

    // Two cells restored one after the other: two series, each its own cell's.
    activity(&env, &plan, 1, "restoring", None).await;
    common::status_until(
        &env,
        "watched",
        Duration::from_secs(30),
        "r1 restoring",
        |s| s.progress.as_deref() == Some("0/3, ferret.local.1k.r1 restoring"),
    )
    .await;
    activity(&env, &plan, 2, "restoring", None).await;
    let restoring = events(&env, "Restoring", 2).await;
    assert_eq!(
        restoring,
        [1, 2]
            .map(|rep| (
                format!("cell ferret.local.1k.r{rep}: restoring ferret's data seeded to 1k"),
                format!("watched-ferret.local.1k.r{rep}"),
            ))
            .to_vec()
    );

    // Measuring: the phase and the rate in /metrics, the conditions, the ETA.
    activity(&env, &plan, 2, "measuring", Some(777)).await;
    let status = common::status_until(&env, "watched", Duration::from_secs(30), "measuring", |s| {
        s.progress.as_deref() == Some("0/3, ferret.local.1k.r2 measuring")
    })
    .await;
    let labels = format!(
        r#"benchmark_namespace="{}",benchmark="watched",target="ferret",platform="local",size="1k",cell="ferret.local.1k.r2""#,
        env.namespace
    );
    let text = operator.metrics.encode();
    assert_eq!(
        metric(
            &text,
            &format!("mongobench_running_cell{{{labels},phase=\"measuring\"}} ")
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            &format!("mongobench_running_cell_ops_per_second{{{labels}}} ")
        ),
        Some(777.0),
        "{text}"
    );
    let stalled = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Stalled")
        .unwrap();
    assert_eq!(
        (
            stalled.status.as_str(),
            stalled.reason.as_str(),
            stalled.message.as_str()
        ),
        (
            "False",
            "Progressing",
            "not stalled: runners started: 0/3 cells finished"
        )
    );
    let eta = status
        .estimated_completion_time
        .clone()
        .expect("an ETA while running")
        .0;
    let started = status.started_at.clone().unwrap().0;
    assert!(eta > started, "ETA {eta} before the start {started}");
    // kubectl's wide view shows it.
    let out = std::process::Command::new(support::kubectl())
        .arg(format!("--kubeconfig={}", env.kubeconfig.display()))
        .args([
            "get",
            "mbench",
            "watched",
            "-n",
            &env.namespace,
            "-o",
            "wide",
        ])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.lines().next().unwrap().ends_with("ETA"), "{table}");
    assert!(
        table.lines().nth(1).unwrap().ends_with(&eta.to_string()),
        "{table}"
    );

    // The cells finish: their figures, no running cell, no ETA, nothing stalled.
    for rep in 1..=3 {
        let id = mongobench::plan::cell_id("ferret", "local", "1k", rep);
        common::write_result(
            &env,
            &plan,
            &id,
            &common::result_for(&plan, "1k", rep, 1000),
        )
        .await;
    }
    let done = common::status_until(&env, "watched", Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    assert_eq!(done.estimated_completion_time, None);
    let stalled = done
        .conditions
        .iter()
        .find(|c| c.type_ == "Stalled")
        .unwrap();
    assert_eq!(
        (stalled.reason.as_str(), stalled.message.as_str()),
        (
            "Finished",
            "not stalled: every cell has finished (3 completed, 0 failed of 3 cells)"
        )
    );
    let text = operator.metrics.encode();
    assert!(!text.contains("mongobench_running_cell{"), "{text}");
    assert!(
        !text.contains("mongobench_running_cell_ops_per_second{"),
        "{text}"
    );
    operator.kill().await;
}
