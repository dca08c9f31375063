//! The operator runs on exactly the permissions `manifests/rbac.yaml` grants: an in-process
//! operator authenticated as a ServiceAccount bound to that ClusterRole takes a provisioned
//! benchmark from apply to Completed (nodes read, servers created and deleted, runner access
//! and Job, status, events, leader Lease) without a single failed pass.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use mongobench::api::Phase;
use mongobench::operator::leader::LeaderElection;
use operator_common as common;
use serde::Deserialize;
use serde_json::json;

/// The ClusterRole of manifests/rbac.yaml.
fn manifest_cluster_role() -> ClusterRole {
    let text = std::fs::read_to_string(common::repo("manifests/rbac.yaml")).unwrap();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let v = serde_json::to_value(serde_yaml::Value::deserialize(doc).unwrap()).unwrap();
        if v["kind"] == "ClusterRole" {
            return serde_json::from_value(v).unwrap();
        }
    }
    panic!("manifests/rbac.yaml has no ClusterRole");
}

#[tokio::test]
async fn the_manifest_cluster_role_is_enough_for_a_whole_benchmark() {
    let env = common::setup("op-rbac").await;
    let ns = env.namespace.clone();
    // The ClusterRole as shipped (under a name of this test's own), bound to a fresh
    // ServiceAccount.
    let mut role = manifest_cluster_role();
    let role_name = format!("mongobench-operator-{ns}");
    role.metadata.name = Some(role_name.clone());
    let roles: Api<ClusterRole> = Api::all(env.client.clone());
    roles.create(&PostParams::default(), &role).await.unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": role_name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": ns}]
    }))
    .unwrap();
    let bindings: Api<ClusterRoleBinding> = Api::all(env.client.clone());
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let sas: Api<ServiceAccount> = Api::namespaced(env.client.clone(), &ns);
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "operator"}})).unwrap(),
    )
    .await
    .unwrap();
    let token = sas
        .create_token_request(
            "operator",
            &PostParams::default(),
            &serde_json::from_value(json!({"spec": {"audiences": [], "expirationSeconds": 3600}}))
                .unwrap(),
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token;
    let kc = Kubeconfig::read_from(&env.kubeconfig).unwrap();
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.expect("a token").into()),
        ..Default::default()
    };
    let operator_client = kube::Client::try_from(config).unwrap();

    let bench = "rbac";
    let mut pvs = Vec::new();
    for target in ["mongodb-8.0", "mongodb-8.3"] {
        let server = common::server(bench, target, "c3");
        pvs.extend(common::volumes(&env, "testenv-local", &server, 3, "1Gi").await);
    }
    let mut options = common::options(&ns);
    options.leader_election = Some(LeaderElection::new(ns.clone(), "rbac-test"));
    let operator = mongobench::operator::Operator::new(operator_client, options);
    let metrics = operator.metrics();
    let task = tokio::spawn(operator.run());

    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [{"name": "mongodb-8.0", "image": "mongo:8.0.26", "distribution": "community"},
                            {"name": "mongodb-8.3", "image": "mongo:8.3.4", "distribution": "community"}],
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
    // The operator read the pool's nodes (the ClusterRole lets it): both replica sets fit on
    // c3, so one runner runs both targets.
    let job: Job = common::exists(&env, &common::platform_runner(bench, "c3")).await;
    let plan = common::plan_of(&env, &job).await;
    for target in ["mongodb-8.0", "mongodb-8.3"] {
        common::write_result(
            &env,
            &plan,
            &format!("{target}.c3.1k.r1"),
            &common::result_of(&plan, target, "1k", 1, 100),
        )
        .await;
    }
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(Phase::Completed)
    })
    .await;
    assert_eq!(status.progress.as_deref(), Some("2/2"));
    assert_eq!(
        (
            status.runners[0].interleaved,
            status.runners[0].reason.as_str()
        ),
        (true, "Fits"),
        "{:?}",
        status.runners
    );
    // Servers deleted after their cell, events published, not one failed pass.
    let events: Api<Event> = Api::namespaced(env.client.clone(), &ns);
    let reasons = support::wait::until(Duration::from_secs(30), "the ServersDeleted event", || {
        let events = events.clone();
        async move {
            let reasons: Vec<String> = events
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .filter_map(|e| e.reason)
                .collect();
            reasons
                .iter()
                .any(|r| r == "ServersDeleted")
                .then_some(reasons)
        }
    })
    .await;
    for reason in [
        "ServersCreated",
        "ServersReady",
        "RunnerStarted",
        "CellCompleted",
        "Completed",
    ] {
        assert!(
            reasons.iter().any(|r| r == reason),
            "no {reason} event in {reasons:?}"
        );
    }
    let text = metrics.encode();
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("mongobench_reconcile_errors_total{")),
        "passes failed under the manifest's ClusterRole:\n{text}"
    );
    task.abort();
    let _ = task.await;
    let _ = bindings.delete(&role_name, &DeleteParams::default()).await;
    let _ = roles.delete(&role_name, &DeleteParams::default()).await;
    common::delete_volumes(&env, &pvs).await;
}
