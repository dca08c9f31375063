//! The operator's life-cycle on the real control plane, with the test playing the runner (it
//! writes result ConfigMaps exactly as the runner contract says): a platform no node matches
//! ends Stalled/Unschedulable naming it; deleting a benchmark mid-run leaves no object
//! behind; a completed benchmark makes no API writes; and an operator killed mid-run and
//! restarted resumes without redoing or duplicating a cell.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, PersistentVolumeClaim, Pod, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use mongobench::api::{CellPhase, KStatus, StatusPhase, kstatus};
use operator_common as common;
use serde_json::json;
use support::wait;

#[path = "operator_lifecycle/failed_runners.rs"]
mod failed_runners;

fn external_benchmark(name: &str, targets: &[&str], sizes: &str) -> serde_json::Value {
    let targets: Vec<_> = targets
        .iter()
        .map(|t| json!({"name": t, "external": {"uriSecretRef": {"name": "target-uri"}}}))
        .collect();
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": targets,
            "platforms": [{"name": "local"}],
            "dataset": {"sizes": serde_yaml::from_str::<serde_json::Value>(sizes).unwrap()},
            "workload": {"type": "flights", "duration": "10s", "warmup": "0s"},
            // Pinned to the client pool, where kwok leaves pods alone: the test is the runner.
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "repetitions": 1,
            "cleanupPolicy": "Retain"
        }
    })
}

async fn uri_secret(env: &support::KubeEnv) {
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &env.namespace);
    let s: Secret = serde_json::from_value(json!({
        "metadata": {"name": "target-uri"}, "stringData": {"uri": "mongodb://127.0.0.1:27018/"}
    }))
    .unwrap();
    secrets.create(&PostParams::default(), &s).await.unwrap();
}

async fn events_with_reason(env: &support::KubeEnv, reason: &str) -> Vec<Event> {
    let events: Api<Event> = Api::namespaced(env.client.clone(), &env.namespace);
    events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .collect()
}

#[tokio::test]
async fn a_platform_without_nodes_ends_stalled_unschedulable_naming_it() {
    let env = common::setup("op-unschedulable").await;
    let mut options = common::options(&env.namespace);
    options.stall_deadline = Duration::from_secs(3);
    options.resync = Duration::from_secs(2);
    let operator = common::start(&env, options);
    common::apply(&env, &common::nowhere_benchmark("nowhere")).await;
    let status = common::status_until(
        &env,
        "nowhere",
        Duration::from_secs(90),
        "Stalled=True",
        |s| s.condition_is_true("Stalled"),
    )
    .await;
    let stalled = status.condition("Stalled").unwrap();
    assert_eq!(stalled.reason, "Unschedulable");
    assert!(
        stalled
            .message
            .starts_with("servers of target mongodb-8.0 on platform phantom-pool cannot be scheduled: pod nowhere-mongodb-8-0-phantom-pool-"),
        "{}",
        stalled.message
    );
    // The scheduler's own explanation is passed on.
    assert!(
        stalled
            .message
            .contains("didn't match Pod's node affinity/selector"),
        "{}",
        stalled.message
    );
    assert_eq!(status.phase, Some(StatusPhase::Provisioning));
    assert_eq!(status.condition("Reconciling").unwrap().status, "False");
    let b = common::benchmarks(&env).get("nowhere").await.unwrap();
    assert_eq!(kstatus(&b), KStatus::Failed);
    // No runner was started for servers that never came up.
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.namespace);
    assert!(
        jobs.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    // And the stall was announced once, as a Warning.
    let events = wait::until(Duration::from_secs(30), "an Unschedulable event", || {
        let env = &env;
        async move {
            let e = events_with_reason(env, "Unschedulable").await;
            (!e.is_empty()).then_some(e)
        }
    })
    .await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    operator.kill().await;
}

#[tokio::test]
async fn deleting_a_benchmark_mid_run_leaves_no_object_behind() {
    let env = common::setup("op-deletion").await;
    let bench = "doomed";
    let server = common::server(bench, "mongodb-8.0", "c3");
    let pvs = common::volumes(&env, "testenv-local", &server, 3, "1Gi").await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [{"name": "mongodb-8.0", "image": "mongo:8.0.26", "distribution": "community"}],
                "platforms": [{"name": "c3", "nodeSelector": {"cloud.google.com/gke-nodepool": "c3-pool"},
                               "storageClassName": "testenv-local"}],
                "replicaSet": {"storageSize": "1Gi"},
                "dataset": {"sizes": ["1k", "2k"]},
                "workload": {"type": "flights"},
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "repetitions": 1
            }
        }),
    )
    .await;
    // Mid-run: servers up, runner started, one result in.
    let job: Job = common::exists(&env, &common::runner(bench, "mongodb-8.0", "c3")).await;
    let plan = common::plan_of(&env, &job).await;
    common::write_result(
        &env,
        &plan,
        "mongodb-8.0.c3.1k.r1",
        &common::result_for(&plan, "1k", 1, 100),
    )
    .await;
    common::status_until(&env, bench, Duration::from_secs(60), "1/2 cells", |s| {
        s.progress.as_deref() == Some("1/2")
    })
    .await;
    // The running Job's plan now lists the cell, so a retried runner pod would skip it.
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    let plan_cm = mongobench::operator::render::names::plan_name(bench, "mongodb-8.0", "c3");
    wait::until(
        Duration::from_secs(30),
        "the plan to list the finished cell",
        || {
            let cms = cms.clone();
            let plan_cm = plan_cm.clone();
            async move {
                let cm = cms.get(&plan_cm).await.ok()?;
                let plan: mongobench::contract::JobPlan =
                    serde_yaml::from_str(&cm.data?[mongobench::operator::render::names::PLAN_KEY])
                        .ok()?;
                (plan.completed_cells == ["mongodb-8.0.c3.1k.r1"]).then_some(())
            }
        },
    )
    .await;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.namespace);
    assert_eq!(
        pvcs.list(&ListParams::default()).await.unwrap().items.len(),
        3
    );

    common::benchmarks(&env)
        .delete(bench, &DeleteParams::default())
        .await
        .unwrap();

    let c = env.client.clone();
    let ns = env.namespace.clone();
    wait::until(
        Duration::from_secs(120),
        "every object of the benchmark to be gone",
        || {
            let (c, ns) = (c.clone(), ns.clone());
            async move {
                let lp = ListParams::default();
                let mut left: Vec<String> = Vec::new();
                macro_rules! collect {
                    ($k:ty, $skip:expr) => {
                        for o in Api::<$k>::namespaced(c.clone(), &ns)
                            .list(&lp)
                            .await
                            .ok()?
                            .items
                        {
                            let name = o.name_any();
                            if !$skip(&name) {
                                left.push(format!("{} {name}", stringify!($k)));
                            }
                        }
                    };
                }
                let none = |_: &str| false;
                collect!(StatefulSet, none);
                collect!(Service, none);
                collect!(NetworkPolicy, none);
                collect!(Job, none);
                collect!(Pod, none);
                collect!(PersistentVolumeClaim, none);
                collect!(ConfigMap, |n: &str| n == "kube-root-ca.crt");
                collect!(ServiceAccount, |n: &str| n == "default");
                collect!(Role, none);
                collect!(RoleBinding, none);
                collect!(mongobench::api::MongoBenchmark, none);
                if !left.is_empty() {
                    eprintln!("still there: {left:?}");
                }
                left.is_empty().then_some(())
            }
        },
    )
    .await;
    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}

#[tokio::test]
async fn a_completed_benchmark_makes_no_writes() {
    let env = common::setup("op-idle").await;
    uri_secret(&env).await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &external_benchmark("idle", &["ferret"], "[10k, 20k]")).await;
    let job: Job = common::exists(&env, &common::runner("idle", "ferret", "local")).await;
    let v = serde_json::to_value(&job).unwrap();
    assert_eq!(
        v["spec"]["template"]["spec"]["containers"][0]["env"],
        json!([{"name": "MONGOBENCH_TARGET_URI", "valueFrom": {"secretKeyRef": {"name": "target-uri", "key": "uri"}}}])
    );
    let plan = common::plan_of(&env, &job).await;
    for (size, ops) in [("10k", 2000), ("20k", 1500)] {
        let id = mongobench::plan::cell_id("ferret", "local", size, 1);
        common::write_result(&env, &plan, &id, &common::result_for(&plan, size, 1, ops)).await;
    }
    let status = common::status_until(&env, "idle", Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    assert_eq!(status.progress.as_deref(), Some("2/2"));
    assert_eq!(status.cells[0].ops_per_second, Some(200.0));
    assert_eq!(status.cells[1].ops_per_second, Some(150.0));
    assert_eq!(
        status.headline.as_deref(),
        Some("ferret at 20k: local 150 ops/s")
    );
    assert!(status.condition_is_true("Ready"));
    // Let the last events and the final pass settle.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let writes = operator.metrics.writes();
    let reconciles = operator.metrics.reconciles();
    let api = common::benchmarks(&env);
    // Poke the benchmark (a label change) and touch a result ConfigMap: both trigger passes.
    let poked = api
        .patch(
            "idle",
            &PatchParams::apply("idle-test-poke"),
            &Patch::Apply(
                json!({"apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
                                  "metadata": {"labels": {"poked": "yes"}}}),
            ),
        )
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    let result_cm = mongobench::operator::render::names::result_name("idle", "ferret.local.10k.r1");
    cms.patch(
        &result_cm,
        &PatchParams::apply("idle-test-poke"),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"annotations": {"poked": "yes"}}})),
    )
    .await
    .unwrap();
    let events_before = Api::<Event>::namespaced(env.client.clone(), &env.namespace)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .len();
    tokio::time::sleep(Duration::from_secs(60)).await;

    assert!(
        operator.metrics.reconciles() > reconciles,
        "the operator did not look at the benchmark during the window"
    );
    assert_eq!(
        operator.metrics.writes(),
        writes,
        "the operator wrote to the API while idle"
    );
    let after = api.get("idle").await.unwrap();
    assert_eq!(
        after.resource_version(),
        poked.resource_version(),
        "the benchmark was written"
    );
    let events_after = Api::<Event>::namespaced(env.client.clone(), &env.namespace)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .len();
    assert_eq!(
        events_after, events_before,
        "events were published while idle"
    );
    operator.kill().await;
}

#[tokio::test]
async fn a_restarted_operator_resumes_without_repeating_a_cell() {
    let env = common::setup("op-restart").await;
    uri_secret(&env).await;
    let bench = "resume";
    let first = common::start(&env, common::options(&env.namespace));
    common::apply(
        &env,
        &external_benchmark(bench, &["ext-a", "ext-b"], "[10k, 20k]"),
    )
    .await;
    // Two external targets: one runner for both, interleaved.
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.namespace);
    let runner = common::platform_runner(bench, "local");
    let job: Job = common::exists(&env, &runner).await;
    let plan = common::plan_of(&env, &job).await;
    let listed: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listed, ["ext-a", "ext-b"]);
    common::write_result(
        &env,
        &plan,
        "ext-a.local.10k.r1",
        &common::result_of(&plan, "ext-a", "10k", 1, 1000),
    )
    .await;
    common::status_until(&env, bench, Duration::from_secs(60), "1/4", |s| {
        s.progress.as_deref() == Some("1/4")
    })
    .await;

    // Killed mid-run; meanwhile the runner's Job is lost.
    first.kill().await;
    jobs.delete(&runner, &DeleteParams::foreground())
        .await
        .unwrap();
    wait::until(Duration::from_secs(60), "the Job to be gone", || {
        let jobs = jobs.clone();
        let runner = runner.clone();
        async move { jobs.get_opt(&runner).await.ok()?.is_none().then_some(()) }
    })
    .await;

    let second = common::start(&env, common::options(&env.namespace));
    // The Job comes back, told to skip the cell that has its result.
    let job: Job = common::exists(&env, &runner).await;
    let replan = common::plan_of(&env, &job).await;
    assert_eq!(replan.completed_cells, ["ext-a.local.10k.r1"]);
    assert_eq!(replan.run_id, plan.run_id);
    assert_eq!(replan.targets, plan.targets);
    common::write_result(
        &env,
        &replan,
        "ext-b.local.10k.r1",
        &common::result_of(&replan, "ext-b", "10k", 1, 1100),
    )
    .await;
    common::status_until(&env, bench, Duration::from_secs(60), "2/4", |s| {
        s.progress.as_deref() == Some("2/4")
    })
    .await;
    second.kill().await;
    let third = common::start(&env, common::options(&env.namespace));
    for (target, ops) in [("ext-a", 900), ("ext-b", 950)] {
        let id = mongobench::plan::cell_id(target, "local", "20k", 1);
        common::write_result(
            &env,
            &replan,
            &id,
            &common::result_of(&replan, target, "20k", 1, ops),
        )
        .await;
    }
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    let ids: Vec<&str> = status.cells.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "ext-a.local.10k.r1",
            "ext-a.local.20k.r1",
            "ext-b.local.10k.r1",
            "ext-b.local.20k.r1"
        ]
    );
    assert!(status.cells.iter().all(|c| c.phase == CellPhase::Completed));
    let counts = status.counts.unwrap();
    assert_eq!((counts.total, counts.completed, counts.failed), (4, 4, 0));
    assert_eq!(status.comparisons.len(), 2);
    assert_eq!(status.runners.len(), 1);
    assert!(status.runners[0].interleaved);
    assert_eq!(status.runners[0].reason, "AllExternal");
    assert_eq!(status.runners[0].jobs, std::slice::from_ref(&runner));
    // Each cell was announced exactly once across the three operator processes.
    let events = wait::until(Duration::from_secs(30), "four CellCompleted events", || {
        let env = &env;
        async move {
            let e = events_with_reason(env, "CellCompleted").await;
            (e.len() >= 4).then_some(e)
        }
    })
    .await;
    let mut notes: Vec<String> = events.iter().filter_map(|e| e.note.clone()).collect();
    notes.sort();
    assert_eq!(notes.len(), 4, "{notes:?}");
    for (note, id) in notes.iter().zip([
        "ext-a.local.10k.r1",
        "ext-a.local.20k.r1",
        "ext-b.local.10k.r1",
        "ext-b.local.20k.r1",
    ]) {
        assert!(note.starts_with(&format!("cell {id}: ")), "{note}");
    }
    // One Job for the platform, never a duplicate nor a Job per target.
    let names: Vec<String> = jobs
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|j| j.name_any())
        .collect();
    assert_eq!(names, [runner]);
    third.kill().await;
}

#[tokio::test]
async fn a_crash_looping_server_ends_stalled_oom_killed_naming_its_pod() {
    let env = common::setup("op-crash-loop").await;
    let mut options = common::options(&env.namespace);
    options.stall_deadline = Duration::from_secs(3);
    options.resync = Duration::from_secs(2);
    let operator = common::start(&env, options);
    let server = common::server("crashing", "mongodb-8.0", "c3");
    let pvs = common::volumes(&env, "testenv-local", &server, 1, "1Gi").await;
    // The testenv's kwok crash-loops pods of this image, last OOMKilled (testenv/kwok).
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": "crashing"},
            "spec": {
                "targets": [{"name": "mongodb-8.0", "image": "testenv.invalid/crash:oom-killed",
                             "distribution": "community"}],
                "platforms": [{"name": "c3", "nodeSelector": {"cloud.google.com/gke-nodepool": "c3-pool"},
                               "storageClassName": "testenv-local"}],
                "replicaSet": {"members": 1, "storageSize": "1Gi",
                               "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}},
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights"}
            }
        }),
    )
    .await;
    let status = common::status_until(
        &env,
        "crashing",
        Duration::from_secs(90),
        "Stalled=True",
        |s| s.condition_is_true("Stalled"),
    )
    .await;
    let stalled = status.condition("Stalled").unwrap();
    assert_eq!(stalled.reason, "OOMKilled", "{}", stalled.message);
    assert!(
        stalled
            .message
            .contains(&format!("pod {server}-0 container mongod keeps crashing"))
            && stalled.message.contains("last: OOMKilled (exit code 137)"),
        "{}",
        stalled.message
    );
    assert_eq!(status.phase, Some(StatusPhase::Provisioning));
    let events = wait::until(Duration::from_secs(30), "an OOMKilled event", || {
        let env = &env;
        async move {
            let e = events_with_reason(env, "OOMKilled").await;
            (!e.is_empty()).then_some(e)
        }
    })
    .await;
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}
