//! Interleaving on the real control plane: two provisioned targets on the testenv's n2-icelake
//! pool (3 kwok nodes of 4 CPU and 16 GiB). When the members' requests leave room for both
//! replica sets (1.5 CPU and 6 GiB each: two members per node), both StatefulSets are created
//! at once, the real scheduler places all six members with each replica set spread, and ONE
//! runner Job runs both targets (its plan lists both, one URI variable each). With requests too
//! large for two (3 CPU and 12 GiB: one member per node), the targets run one after another
//! on the same nodes, and status and a Warning event say why. The test plays the runner by
//! writing result ConfigMaps.
mod operator_common;
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use mongobench::api::{RunnerStatus, StatusPhase};
use operator_common as common;
use serde_json::{Value, json};
use support::wait;

/// Both tests use the n2-icelake pool: one at a time, so neither's members take the other's
/// room.
static POOL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const PLATFORM: &str = "n2";

fn benchmark(name: &str, cpu: &str, memory: &str) -> Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [
                {"name": "mongodb-8.0", "image": "mongo:8.0.26", "distribution": "community"},
                {"name": "mongodb-8.3", "image": "mongo:8.3.4", "distribution": "community"}
            ],
            "platforms": [{"name": PLATFORM,
                           "nodeSelector": {"cloud.google.com/gke-nodepool": "n2-icelake"},
                           "storageClassName": "testenv-local"}],
            "replicaSet": {
                "members": 3,
                "storageSize": "1Gi",
                "resources": {"requests": {"cpu": cpu, "memory": memory},
                              "limits": {"cpu": cpu, "memory": memory}}
            },
            "dataset": {"sizes": ["1k"]},
            "workload": {"type": "flights"},
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "repetitions": 3
        }
    })
}

/// Pre-bound volumes for the members of both targets.
async fn volumes(env: &support::KubeEnv, bench: &str) -> Vec<String> {
    let mut pvs = Vec::new();
    for target in ["mongodb-8.0", "mongodb-8.3"] {
        let server = common::server(bench, target, PLATFORM);
        pvs.extend(common::volumes(env, "testenv-local", &server, 3, "1Gi").await);
    }
    pvs
}

/// The nodes of the running server pods of `target`, once there are `members` of them.
async fn placed(env: &support::KubeEnv, target: &str, members: usize) -> Vec<String> {
    let selector = format!("app.kubernetes.io/component=server,mongobench.io/target={target}");
    common::running_pod_nodes(env, &selector, members).await
}

fn assert_spread(nodes: &[String]) {
    for n in nodes {
        assert!(n.starts_with("n2-icelake-"), "a member landed on {n}");
    }
    let distinct: BTreeSet<&String> = nodes.iter().collect();
    assert_eq!(
        distinct.len(),
        nodes.len(),
        "two members share a node: {nodes:?}"
    );
}

async fn job_names(env: &support::KubeEnv) -> Vec<String> {
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.namespace);
    let mut names: Vec<String> = jobs
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|j| j.name_any())
        .collect();
    names.sort();
    names
}

/// Waits until no server pod of the test is left on the pool.
async fn servers_gone(env: &support::KubeEnv) {
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    wait::until(Duration::from_secs(120), "the server pods to go", || {
        let pods = pods.clone();
        async move {
            let list = pods
                .list(&ListParams::default().labels("app.kubernetes.io/component=server"))
                .await
                .ok()?;
            list.items.is_empty().then_some(())
        }
    })
    .await;
}

#[tokio::test]
async fn two_replica_sets_that_fit_are_created_together_and_run_by_one_interleaved_runner() {
    let _pool = POOL.lock().await;
    let env = common::setup("op-interleaved").await;
    let bench = "together";
    let pvs = volumes(&env, bench).await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &benchmark(bench, "1500m", "6Gi")).await;

    // Both replica sets are created in the same pass, a few API calls apart. (One after
    // another, the second would come only once the first's cells had run, minutes later.)
    // The test may look between those calls, so it compares creation times.
    let first = common::server(bench, "mongodb-8.0", PLATFORM);
    let second = common::server(bench, "mongodb-8.3", PLATFORM);
    let created = |set: &StatefulSet| set.metadata.creation_timestamp.clone().unwrap().0;
    let first_at = created(&common::exists::<StatefulSet>(&env, &first).await);
    let second_at = created(&common::exists::<StatefulSet>(&env, &second).await);
    let apart = second_at.duration_since(first_at);
    assert!(
        !apart.is_negative(),
        "the second replica set was created {apart:#} before the first"
    );
    assert!(
        apart.as_secs() <= 10,
        "the second replica set was created {apart:#} after the first, not in the same pass"
    );
    // The real scheduler places all six members: each replica set spread over the three
    // nodes, so every node holds one member of each.
    let a = placed(&env, "mongodb-8.0", 3).await;
    let b = placed(&env, "mongodb-8.3", 3).await;
    assert_spread(&a);
    assert_spread(&b);

    // One runner for both targets, once both are ready.
    let runner = common::platform_runner(bench, PLATFORM);
    let job: Job = common::exists(&env, &runner).await;
    assert_eq!(job_names(&env).await, std::slice::from_ref(&runner));
    let env_vars = serde_json::to_value(&job).unwrap()["spec"]["template"]["spec"]["containers"][0]
        ["env"]
        .clone();
    let ns = &env.namespace;
    // Authentication is on by default: each target's variable names its credentials, which
    // come from the benchmark's admin Secret.
    let uri = |server: &str, var: &str| {
        let hosts: Vec<String> = (0..3)
            .map(|i| format!("{server}-{i}.{server}.{ns}.svc.cluster.local:27017"))
            .collect();
        format!(
            "mongodb://$({var}_USERNAME):$({var}_PASSWORD)@{}/?replicaSet={server}&authSource=admin",
            hosts.join(",")
        )
    };
    let admin_secret = common::generated_secret(&env, bench, "admin").await;
    let admin = |name: String, key: &str| json!({"name": name, "valueFrom": {"secretKeyRef": {"name": admin_secret, "key": key}}});
    let mut expected = Vec::new();
    for (server, var) in [
        (&first, "MONGOBENCH_TARGET_URI"),
        (&second, "MONGOBENCH_TARGET_URI_1"),
    ] {
        expected.push(admin(format!("{var}_USERNAME"), "username"));
        expected.push(admin(format!("{var}_PASSWORD"), "password"));
        expected.push(json!({"name": var, "value": uri(server, var)}));
    }
    // The Job's uid and name, with which the runner's results name their Job.
    expected.extend(common::job_env());
    assert_eq!(env_vars, json!(expected));
    let plan = common::plan_of(&env, &job).await;
    let listed: Vec<(&str, &str, Option<&str>)> = plan
        .targets
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.uri_env.as_str(),
                t.replica_set_name.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("mongodb-8.0", "MONGOBENCH_TARGET_URI", Some(first.as_str())),
            (
                "mongodb-8.3",
                "MONGOBENCH_TARGET_URI_1",
                Some(second.as_str())
            )
        ]
    );
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Seeding", |s| {
        s.phase == Some(StatusPhase::Seeding)
    })
    .await;
    assert_eq!(
        status.runners,
        [RunnerStatus {
            platform: PLATFORM.into(),
            targets: vec!["mongodb-8.0".into(), "mongodb-8.3".into()],
            interleaved: true,
            reason: "Fits".into(),
            message: "platform n2 holds all 2 replica sets at once (3 ready nodes; 3 members \
                      each, one per node, each member requesting cpu 1500m, memory 6Gi)"
                .into(),
            jobs: vec![runner.clone()],
        }]
    );
    assert_eq!(
        status.condition("ServersReady").unwrap().message,
        "replica sets ready: mongodb-8.0 on n2 (3/3), mongodb-8.3 on n2 (3/3)"
    );

    // The runner's cells land interleaved; the replica sets stay until the last one.
    for rep in 1..=3 {
        for (target, ops) in [("mongodb-8.0", 1000), ("mongodb-8.3", 1100)] {
            let id = mongobench::plan::cell_id(target, PLATFORM, "1k", rep);
            common::write_result(
                &env,
                &plan,
                &id,
                &common::result_of(&plan, target, "1k", rep, ops),
            )
            .await;
        }
    }
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    assert_eq!(status.progress.as_deref(), Some("6/6"));
    assert_eq!(status.comparisons.len(), 1);
    // Both replica sets deleted after the runner's cells.
    servers_gone(&env).await;
    assert_eq!(job_names(&env).await, [runner]);
    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}

#[tokio::test]
async fn replica_sets_too_large_for_two_run_one_after_another_and_status_says_so() {
    let _pool = POOL.lock().await;
    let env = common::setup("op-one-by-one").await;
    let bench = "apart";
    let pvs = volumes(&env, bench).await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &benchmark(bench, "3", "12Gi")).await;

    let first = common::server(bench, "mongodb-8.0", PLATFORM);
    let second = common::server(bench, "mongodb-8.3", PLATFORM);
    common::exists::<StatefulSet>(&env, &first).await;
    assert_spread(&placed(&env, "mongodb-8.0", 3).await);
    let message = "platform n2 holds 1 of 2 replica sets at once (3 ready nodes; 3 members \
                   each, one per node, each member requesting cpu 3, memory 12Gi): its targets \
                   run one after another, not interleaved";
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Seeding", |s| {
        s.phase == Some(StatusPhase::Seeding)
    })
    .await;
    assert_eq!(
        status.runners,
        [RunnerStatus {
            platform: PLATFORM.into(),
            targets: vec!["mongodb-8.0".into(), "mongodb-8.3".into()],
            interleaved: false,
            reason: "InsufficientCapacity".into(),
            message: message.into(),
            jobs: vec![
                common::runner(bench, "mongodb-8.0", PLATFORM),
                common::runner(bench, "mongodb-8.3", PLATFORM)
            ],
        }]
    );
    let events: Api<Event> = Api::namespaced(env.client.clone(), &env.namespace);
    let warning = wait::until(Duration::from_secs(30), "the NotInterleaved event", || {
        let events = events.clone();
        async move {
            events
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("NotInterleaved"))
        }
    })
    .await;
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.note.as_deref(), Some(message));

    // The first target's own runner; the second has no servers yet.
    let job: Job = common::exists(&env, &common::runner(bench, "mongodb-8.0", PLATFORM)).await;
    let statefulsets: Api<StatefulSet> = Api::namespaced(env.client.clone(), &env.namespace);
    assert!(statefulsets.get_opt(&second).await.unwrap().is_none());
    let plan = common::plan_of(&env, &job).await;
    assert_eq!(plan.targets.len(), 1);
    for rep in 1..=3 {
        let id = mongobench::plan::cell_id("mongodb-8.0", PLATFORM, "1k", rep);
        common::write_result(
            &env,
            &plan,
            &id,
            &common::result_for(&plan, "1k", rep, 1000),
        )
        .await;
    }
    // Then the second, on the same nodes once the first's members have left them.
    common::exists::<StatefulSet>(&env, &second).await;
    assert_spread(&placed(&env, "mongodb-8.3", 3).await);
    let job: Job = common::exists(&env, &common::runner(bench, "mongodb-8.3", PLATFORM)).await;
    let plan = common::plan_of(&env, &job).await;
    for rep in 1..=3 {
        let id = mongobench::plan::cell_id("mongodb-8.3", PLATFORM, "1k", rep);
        common::write_result(
            &env,
            &plan,
            &id,
            &common::result_for(&plan, "1k", rep, 1100),
        )
        .await;
    }
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    assert_eq!(status.progress.as_deref(), Some("6/6"));
    // Still not interleaved, and why.
    assert_eq!(status.runners[0].reason, "InsufficientCapacity");
    assert_eq!(status.runners[0].message, message);
    servers_gone(&env).await;
    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}
