//! The operator touches only what its benchmark owns, on the real API server: an object of one
//! of the benchmark's names that someone else made is neither taken over (server-side apply
//! with force would) nor deleted when the servers go; a Secret of a generated Secret's name
//! that the benchmark did not create is refused, not used as its keyfile or password; and a
//! result ConfigMap that no runner Job of the benchmark wrote is refused, whatever its labels,
//! owner and document say.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use mongobench::api::{CellPhase, StatusPhase};
use mongobench::operator::render::names;
use operator_common as common;
use serde_json::{Value, json};

async fn create<K>(env: &support::KubeEnv, object: Value) -> K
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
{
    let object: K = serde_json::from_value(object).unwrap();
    Api::<K>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &object)
        .await
        .unwrap()
}

/// Waits until the benchmark is Stalled with `reason`; returns the message.
async fn stalled(env: &support::KubeEnv, bench: &str, reason: &str) -> String {
    let status = common::status_until(env, bench, Duration::from_secs(60), reason, |s| {
        s.condition("Stalled")
            .is_some_and(|c| c.status == "True" && c.reason == reason)
    })
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Pending), "{status:#?}");
    status.condition("Stalled").unwrap().message.clone()
}

#[tokio::test]
async fn an_object_of_the_benchmarks_names_it_does_not_own_is_not_taken_over() {
    let env = common::setup("own-takeover").await;
    let server = common::server("taken", "mongodb-8.0", "phantom-pool");
    // Someone else's Service, of the name the benchmark's servers' Service will have.
    let planted: Service = create(
        &env,
        json!({"metadata": {"name": server, "labels": {"app": "someone-else"}},
               "spec": {"ports": [{"port": 1234}], "selector": {"app": "someone-else"}}}),
    )
    .await;
    let _operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &common::nowhere_benchmark("taken")).await;

    let message = stalled(&env, "taken", "NameTaken").await;
    assert_eq!(
        message,
        format!(
            "Service {}/{server} exists and MongoBenchmark taken does not own it: the operator \
             neither takes it over nor deletes it; delete or rename it (or the benchmark)",
            env.namespace
        )
    );
    let after: Service = common::exists(&env, &server).await;
    assert_eq!(after.owner_references(), [], "the Service was taken over");
    assert_eq!(
        after.metadata.resource_version,
        planted.metadata.resource_version
    );
    let sts = Api::<StatefulSet>::namespaced(env.client.clone(), &env.namespace)
        .get_opt(&server)
        .await
        .unwrap();
    assert!(
        sts.is_none(),
        "servers were created beside a Service not theirs"
    );

    // Its owner removes it: the benchmark goes on.
    Api::<Service>::namespaced(env.client.clone(), &env.namespace)
        .delete(&server, &DeleteParams::default())
        .await
        .unwrap();
    let sts: StatefulSet = common::exists(&env, &server).await;
    assert_eq!(sts.owner_references()[0].kind, "MongoBenchmark");
}

#[tokio::test]
async fn servers_are_deleted_after_their_cells_but_not_an_object_the_benchmark_does_not_own() {
    let env = common::setup("own-delete").await;
    let bench = "gone";
    let server = common::server(bench, "mongodb-8.0", "c3");
    let pvs = common::volumes(&env, "testenv-local", &server, 3, "1Gi").await;
    let _operator = common::start(&env, common::options(&env.namespace));
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [{"name": "mongodb-8.0", "image": "mongo:8.0.26", "distribution": "community"}],
                "platforms": [{"name": "c3", "nodeSelector": {"cloud.google.com/gke-nodepool": "c3-pool"},
                               "storageClassName": "testenv-local"}],
                "replicaSet": {"storageSize": "1Gi"},
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights"},
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "repetitions": 1
            }
        }),
    )
    .await;
    let job: Job = common::exists(&env, &common::runner(bench, "mongodb-8.0", "c3")).await;
    // The servers' NetworkPolicy is replaced by someone else's of the same name.
    let policies: Api<NetworkPolicy> = Api::namespaced(env.client.clone(), &env.namespace);
    policies
        .delete(&server, &DeleteParams::default())
        .await
        .unwrap();
    let planted: NetworkPolicy = create(
        &env,
        json!({"metadata": {"name": server},
               "spec": {"podSelector": {"matchLabels": {"app": "someone-else"}}}}),
    )
    .await;
    let plan = common::plan_of(&env, &job).await;
    common::write_cells(&env, &plan, "mongodb-8.0", &["1k"], 1).await;

    common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    common::gone::<StatefulSet>(&env, &server).await;
    common::gone::<Service>(&env, &server).await;
    let events: Api<Event> = Api::namespaced(env.client.clone(), &env.namespace);
    support::wait::until(Duration::from_secs(30), "the ServersDeleted event", || {
        let events = events.clone();
        async move {
            let list = events.list(&ListParams::default()).await.ok()?;
            list.items
                .iter()
                .any(|e| e.reason.as_deref() == Some("ServersDeleted"))
                .then_some(())
        }
    })
    .await;
    let left = policies.get_opt(&server).await.unwrap();
    assert_eq!(
        left.map(|p| p.metadata.uid),
        Some(planted.metadata.uid),
        "the NetworkPolicy the benchmark does not own was deleted"
    );
    common::delete_volumes(&env, &pvs).await;
}

#[tokio::test]
async fn a_secret_of_a_generated_name_the_benchmark_did_not_create_is_refused_not_used() {
    let env = common::setup("own-secret").await;
    let bench = "keyed";
    let _operator = common::start(&env, common::options(&env.namespace));
    // Suspended, it creates nothing: its uid, and so its Secrets' names, are known first.
    let mut doc = common::nowhere_benchmark(bench);
    doc["spec"]["suspend"] = json!(true);
    common::apply(&env, &doc).await;
    let admin = common::generated_secret(&env, bench, "admin").await;
    let keyfile = common::generated_secret(&env, bench, "keyfile").await;
    let uid = common::benchmarks(&env)
        .get(bench)
        .await
        .unwrap()
        .uid()
        .unwrap();
    assert_eq!(admin, format!("{bench}-{}-admin", &uid[..8]));
    let planted: Secret = create(
        &env,
        json!({"metadata": {"name": admin},
               "stringData": {"username": "mongobench", "password": "known-to-whoever-planted-it"}}),
    )
    .await;
    doc["spec"]["suspend"] = json!(false);
    common::apply(&env, &doc).await;

    let message = stalled(&env, bench, "SecretNotOwned").await;
    assert_eq!(
        message,
        format!(
            "Secret {}/{admin} exists, and this benchmark did not create it (its \
             status.generatedSecrets does not list it): the operator uses no keyfile or \
             password it did not generate; delete the Secret and the operator creates it",
            env.namespace
        )
    );
    let server = common::server(bench, "mongodb-8.0", "phantom-pool");
    let sts = Api::<StatefulSet>::namespaced(env.client.clone(), &env.namespace)
        .get_opt(&server)
        .await
        .unwrap();
    assert!(
        sts.is_none(),
        "servers were created with a planted password"
    );
    let status = common::benchmarks(&env)
        .get(bench)
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.generated_secrets, std::slice::from_ref(&keyfile));

    // Deleted, it is generated afresh, and the servers use the benchmark's own.
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &env.namespace);
    secrets
        .delete(&admin, &DeleteParams::default())
        .await
        .unwrap();
    let sts: StatefulSet = common::exists(&env, &server).await;
    let created = secrets.get(&admin).await.unwrap();
    assert_ne!(created.metadata.uid, planted.metadata.uid);
    assert_eq!(created.owner_references()[0].uid, uid);
    let pod = sts.spec.unwrap().template.spec.unwrap();
    let referenced = serde_json::to_string(&pod).unwrap();
    assert!(referenced.contains(&format!("\"{admin}\"")), "{referenced}");
    assert!(
        referenced.contains(&format!("\"{keyfile}\"")),
        "{referenced}"
    );
    let status = common::status_until(&env, bench, Duration::from_secs(30), "both recorded", |s| {
        s.generated_secrets.len() == 2
    })
    .await;
    assert_eq!(status.generated_secrets, [keyfile, admin]);
}

#[tokio::test]
async fn a_result_no_runner_job_of_the_benchmark_wrote_is_refused() {
    let env = common::setup("own-result").await;
    common::uri_secret(&env, "uri", "mongodb://127.0.0.1:1/").await;
    let _operator = common::start(&env, common::options(&env.namespace));
    let bench = "planted";
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [{"name": "ext", "external": {"uriSecretRef": {"name": "uri"}}}],
                "platforms": [{"name": "local"}],
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights"},
                // Its pod waits on a client node no kubelet runs: the test writes the results.
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "repetitions": 2
            }
        }),
    )
    .await;
    let job: Job = common::exists(&env, &common::runner(bench, "ext", "local")).await;
    let plan = common::plan_of(&env, &job).await;
    let id = |rep| mongobench::plan::cell_id("ext", "local", "1k", rep);

    // Anyone who may create ConfigMaps can write r1's result: the labels, the benchmark as
    // owner and a complete document are all as a runner writes them; no Job of it controls it.
    let forged = common::result_for(&plan, "1k", 1, 9_999_000);
    let config_map = names::result_name(bench, &id(1));
    create::<ConfigMap>(
        &env,
        json!({
            "metadata": {
                "name": config_map,
                "labels": {"mongobench.io/benchmark": bench, "mongobench.io/cell": id(1),
                           "mongobench.io/run-id": plan.run_id},
                "ownerReferences": [{"apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
                                     "name": bench, "uid": plan.uid}]
            },
            "data": {"result.json": forged.to_json().unwrap()}
        }),
    )
    .await;
    // r2 is the runner's.
    common::write_result(
        &env,
        &plan,
        &id(2),
        &common::result_for(&plan, "1k", 2, 1000),
    )
    .await;

    let status = common::status_until(&env, bench, Duration::from_secs(60), "both cells", |s| {
        // Running is not an end: the cell whose result the operator has not read yet is
        // the runner's current one (a CI run read status between two results).
        s.cells.len() == 2
            && s.cells.iter().all(|c| {
                matches!(
                    c.phase,
                    CellPhase::Completed | CellPhase::Invalid | CellPhase::Failed
                )
            })
    })
    .await;
    let cell = |rep: u32| status.cells.iter().find(|c| c.repetition == rep).unwrap();
    assert_eq!(cell(2).phase, CellPhase::Completed);
    assert_eq!(cell(1).phase, CellPhase::Failed, "{:?}", cell(1));
    assert_eq!(
        cell(1).message.as_deref(),
        Some(
            format!(
                "result ConfigMap {config_map}: not written by a runner Job of this benchmark \
                 (no Job of it controls the ConfigMap); refused"
            )
            .as_str()
        )
    );
    assert_eq!(
        cell(1).ops_per_second,
        None,
        "the forged figures reached the status"
    );
}
