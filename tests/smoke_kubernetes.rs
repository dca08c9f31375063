//! Proves the testenv control plane is real: a real API server (version, structural-schema
//! checks, its own certificate, which the testenv's kubeconfig verifies), a real scheduler
//! (node pools, taints) and a real controller manager (StatefulSets).
mod support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use support::wait;

#[tokio::test]
async fn api_server_reports_a_1_3x_version() {
    let (client, _) = support::kube_client().await;
    let v = client.apiserver_version().await.expect("GET /version");
    assert_eq!(v.major, "1");
    assert!(
        v.minor.starts_with('3') && v.minor.len() == 2,
        "minor version {} is not 3x",
        v.minor
    );
    assert!(
        v.git_version.starts_with("v1.3"),
        "gitVersion {}",
        v.git_version
    );
}

#[tokio::test]
async fn the_kubeconfig_verifies_the_api_servers_certificate_so_nothing_warns() {
    let (client, kubeconfig) = support::kube_client().await;
    // The client above connected through it, verifying the certificate.
    client.apiserver_version().await.expect("GET /version");
    let config = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
    let cluster = config.clusters[0].cluster.clone().unwrap();
    assert_eq!(cluster.insecure_skip_tls_verify, None, "{kubeconfig:?}");
    let ca = std::path::PathBuf::from(cluster.certificate_authority.expect("a CA file"));
    assert!(ca.ends_with("pki/apiserver.crt"), "{ca:?}");
    // A subcommand and kubectl through it: no bypass warning, no TLS error.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(["get", "-A", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("Server cert bypassed"), "{err}");
    let out = std::process::Command::new(support::kubectl())
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(["get", "--raw", "/readyz"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn crd(group: &str, properties: serde_json::Value) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": properties}}}]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn api_server_accepts_a_structural_crd_and_refuses_a_non_structural_one() {
    let (client, _) = support::kube_client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    let suffix = support::kube("crd-check").await.namespace;

    let good = crd(
        &format!("good-{suffix}.smoke.test"),
        json!({"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}),
    );
    crds.create(&PostParams::default(), &good)
        .await
        .expect("a structural CRD is accepted");

    // A property without a type is not structural: the API server must refuse it.
    let bad = crd(
        &format!("bad-{suffix}.smoke.test"),
        json!({"spec": {"type": "object", "properties": {"size": {"description": "no type"}}}}),
    );
    match crds.create(&PostParams::default(), &bad).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "unexpected refusal: {status:?}");
            assert!(
                status.message.contains("type"),
                "refusal does not name the missing type: {}",
                status.message
            );
        }
        other => panic!("a non-structural CRD was not refused: {other:?}"),
    }
}

fn pod(name: &str, spec: serde_json::Value) -> Pod {
    let mut spec = spec;
    spec["containers"] = json!([{"name": "main", "image": "registry.invalid/none:1"}]);
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
}

async fn node_of(pods: &Api<Pod>, name: &str) -> String {
    wait::until(
        Duration::from_secs(60),
        &format!("pod {name} to be bound"),
        || async { pods.get(name).await.ok().and_then(|p| p.spec?.node_name) },
    )
    .await
}

#[tokio::test]
async fn scheduler_pins_arm_pods_to_the_arm_pool_and_keeps_others_off_it() {
    let env = support::kube("scheduler-pinning").await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    let pp = PostParams::default();

    let arm = pod(
        "arm",
        json!({
            "nodeSelector": {"kubernetes.io/arch": "arm64", "cloud.google.com/gke-nodepool": "c4a-axion"},
            "tolerations": [{"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}]
        }),
    );
    pods.create(&pp, &arm).await.unwrap();
    let node = node_of(&pods, "arm").await;
    assert!(
        node.starts_with("c4a-axion-"),
        "the arm pod landed on {node}"
    );

    // Selecting the Arm pool without tolerating its taint must leave the pod unschedulable.
    let untolerated = pod(
        "arm-untolerated",
        json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "c4a-axion"}}),
    );
    pods.create(&pp, &untolerated).await.unwrap();
    let reason = wait::until(
        Duration::from_secs(60),
        "the scheduler to refuse arm-untolerated",
        || async {
            let p = pods.get("arm-untolerated").await.ok()?;
            let cond = p
                .status?
                .conditions?
                .into_iter()
                .find(|c| c.type_ == "PodScheduled")?;
            (cond.status == "False").then_some(cond.reason.unwrap_or_default())
        },
    )
    .await;
    assert_eq!(reason, "Unschedulable");

    // Pods without the toleration spread over the other pools but never onto the tainted one.
    for i in 0..8 {
        pods.create(&pp, &pod(&format!("free-{i}"), json!({})))
            .await
            .unwrap();
    }
    for i in 0..8 {
        let node = node_of(&pods, &format!("free-{i}")).await;
        assert!(
            !node.starts_with("c4a-axion-"),
            "free-{i} landed on the tainted Arm node {node}"
        );
    }
    let bound = pods
        .get("arm-untolerated")
        .await
        .unwrap()
        .spec
        .unwrap()
        .node_name;
    assert_eq!(bound, None, "arm-untolerated was bound after all");
}

#[tokio::test]
async fn controller_manager_turns_a_statefulset_into_running_pods() {
    let env = support::kube("statefulset").await;
    let sts: Api<StatefulSet> = Api::namespaced(env.client.clone(), &env.namespace);
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    let set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "nodeSelector": {"cloud.google.com/gke-nodepool": "n2-icelake"},
                    "containers": [{"name": "mongod", "image": "mongo:8.0"}]
                }
            }
        }
    }))
    .unwrap();
    sts.create(&PostParams::default(), &set).await.unwrap();

    let ready = wait::until(
        Duration::from_secs(90),
        "3 ready replicas of StatefulSet db",
        || async {
            let s = sts.get("db").await.ok()?.status?;
            (s.ready_replicas == Some(3)).then_some(s)
        },
    )
    .await;
    assert_eq!(ready.replicas, 3);

    let mut names: Vec<String> = pods
        .list(&ListParams::default().labels("app=db"))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|p| p.metadata.name.unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
}
