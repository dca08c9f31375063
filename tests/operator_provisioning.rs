//! The operator provisions the two reference studies on the real control plane: StatefulSets,
//! Services, NetworkPolicies and runner Jobs exist with exactly the pinning, anti-affinity,
//! tolerations, resources and arguments the spec asks for, and the real scheduler put every
//! server pod on a node of its platform, never two members of one replica set on one node.
//! The examples' GKE pool names are mapped to the testenv's pools (n2-icelake, c3-pool,
//! c4a-axion, client); everything else is the example as shipped.
mod operator_common;
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::Role;
use kube::api::{Api, ListParams};
use operator_common as common;
use serde_json::{Value, json};
use support::wait;

fn value<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

/// Waits until every member of `sts` is bound and Running; returns their nodes.
async fn placed(
    env: &support::KubeEnv,
    target: &str,
    platform: &str,
    members: usize,
) -> Vec<String> {
    let selector = format!(
        "app.kubernetes.io/component=server,mongobench.io/target={target},mongobench.io/platform={platform}"
    );
    common::running_pod_nodes(env, &selector, members).await
}

fn assert_spread(nodes: &[String], pool_prefix: &str) {
    for n in nodes {
        assert!(
            n.starts_with(pool_prefix),
            "a member landed on {n}, outside {pool_prefix}*: {nodes:?}"
        );
    }
    let distinct: BTreeSet<&String> = nodes.iter().collect();
    assert_eq!(
        distinct.len(),
        nodes.len(),
        "two members share a node: {nodes:?}"
    );
}

/// Checks a StatefulSet as read back from the API server.
fn assert_servers(
    sts: &StatefulSet,
    name: &str,
    node_selector: Value,
    tolerations: Value,
    storage: (&str, &str),
) {
    let v = value(sts);
    let spec = &v["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["serviceName"], name);
    assert_eq!(spec["podManagementPolicy"], "Parallel");
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"]["whenDeleted"],
        "Delete"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["nodeSelector"], node_selector);
    assert_eq!(
        pod.get("tolerations").cloned().unwrap_or(json!([])),
        tolerations
    );
    let term =
        &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(term.as_array().map(Vec::len), Some(1), "{pod}");
    assert_eq!(term[0]["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(term[0]["labelSelector"], spec["selector"]);
    let c = &pod["containers"][0];
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "3", "memory": "12Gi"}, "limits": {"cpu": "3", "memory": "12Gi"}})
    );
    // 12Gi limit → 0.5 × (12 − 1) = 5.5 GiB of WiredTiger cache.
    assert_eq!(
        c["args"],
        json!([
            "--replSet",
            name,
            "--bind_ip_all",
            "--auth",
            "--keyFile",
            "/etc/mongodb-keyfile/keyfile",
            "--wiredTigerCacheSizeGB",
            "5.5"
        ])
    );
    let claim = &spec["volumeClaimTemplates"][0]["spec"];
    assert_eq!(claim["storageClassName"], storage.0);
    assert_eq!(claim["resources"]["requests"]["storage"], storage.1);
    assert_eq!(
        v["metadata"]["ownerReferences"][0]["kind"],
        "MongoBenchmark"
    );
}

async fn assert_service_and_policy(env: &support::KubeEnv, name: &str, bench: &str) {
    let svc: Service = common::exists(env, name).await;
    let svc = value(&svc);
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(svc["spec"]["publishNotReadyAddresses"], true);
    let np: NetworkPolicy = common::exists(env, name).await;
    let np = value(&np);
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress"]));
    assert_eq!(
        np["spec"]["ingress"][0]["from"],
        json!([{"podSelector": {"matchLabels": {
            "app.kubernetes.io/name": "mongobench", "mongobench.io/benchmark": bench}}}])
    );
}

/// Checks the runner Job of a slot and returns its plan.
async fn assert_runner(
    env: &support::KubeEnv,
    bench: &str,
    target: &str,
    platform: &str,
) -> mongobench::contract::JobPlan {
    let job: Job = common::exists(env, &common::runner(bench, target, platform)).await;
    let v = value(&job);
    let pod = &v["spec"]["template"]["spec"];
    assert_eq!(
        pod["nodeSelector"],
        json!({"cloud.google.com/gke-nodepool": "client"})
    );
    assert_eq!(pod["serviceAccountName"], format!("{bench}-runner"));
    let c = &pod["containers"][0];
    assert_eq!(c["command"], json!(["mongobench"]));
    assert_eq!(
        c["args"],
        json!(["run", "--plan", "/etc/mongobench/plan.yaml"])
    );
    let server = common::server(bench, target, platform);
    let ns = &env.namespace;
    let hosts: Vec<String> = (0..3)
        .map(|i| format!("{server}-{i}.{server}.{ns}.svc.cluster.local:27017"))
        .collect();
    // Authentication is on by default: the credentials come from the benchmark's admin
    // Secret and enter the URI through the kubelet's $(VAR) expansion.
    let admin = |name: &str, key: &str| json!({"name": name, "valueFrom": {"secretKeyRef": {"name": format!("{bench}-admin"), "key": key}}});
    assert_eq!(
        c["env"],
        json!([
            admin("MONGOBENCH_TARGET_URI_USERNAME", "username"),
            admin("MONGOBENCH_TARGET_URI_PASSWORD", "password"),
            {"name": "MONGOBENCH_TARGET_URI",
             "value": format!(
                 "mongodb://$(MONGOBENCH_TARGET_URI_USERNAME):$(MONGOBENCH_TARGET_URI_PASSWORD)@{}/?replicaSet={server}&authSource=admin",
                 hosts.join(",")
             )}
        ])
    );
    let plan = common::plan_of(env, &job).await;
    assert_eq!(plan.targets.len(), 1);
    assert_eq!(
        (plan.targets[0].name.as_str(), plan.platform.as_str()),
        (target, platform)
    );
    assert_eq!(plan.targets[0].initiate_members, hosts);
    assert_eq!(
        plan.targets[0].replica_set_name.as_deref(),
        Some(server.as_str())
    );
    assert!(plan.completed_cells.is_empty());
    // The plan carries each member's node, as the scheduler placed it, with the node's labels.
    let facts = plan.targets[0]
        .facts
        .clone()
        .expect("facts of a provisioned target");
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), ns);
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(env.client.clone());
    assert_eq!(facts.members.len(), 3);
    for (i, m) in facts.members.iter().enumerate() {
        assert_eq!(m.member, hosts[i]);
        let pod = pods.get(&format!("{server}-{i}")).await.unwrap();
        let node_name = pod.spec.unwrap().node_name.unwrap();
        assert_eq!(m.node_name.as_deref(), Some(node_name.as_str()));
        let labels = nodes
            .get(&node_name)
            .await
            .unwrap()
            .metadata
            .labels
            .unwrap();
        assert_eq!(m.zone.as_ref(), labels.get("topology.kubernetes.io/zone"));
        assert_eq!(
            m.instance_type.as_ref(),
            labels.get("node.kubernetes.io/instance-type")
        );
        assert_eq!(
            m.cpu_platform.as_ref(),
            labels.get("mongobench.io/cpu-platform")
        );
        assert_eq!(m.architecture.as_ref(), labels.get("kubernetes.io/arch"));
        assert!(m.zone.is_some() && m.cpu_platform.is_some(), "{m:?}");
    }
    // Its pod is placed on the client pool.
    let job_name = common::runner(bench, target, platform);
    let node = wait::until(
        Duration::from_secs(60),
        "the runner pod to be bound",
        || {
            let pods = pods.clone();
            let job_name = job_name.clone();
            async move {
                let list = pods
                    .list(&ListParams::default().labels(&format!("job-name={job_name}")))
                    .await
                    .ok()?;
                list.items.first()?.spec.as_ref()?.node_name.clone()
            }
        },
    )
    .await;
    assert!(node.starts_with("client-"), "the runner landed on {node}");
    // The runner may change only its benchmark's result and activity ConfigMaps.
    let role: Role = common::exists(env, &format!("{bench}-runner")).await;
    let rules = value(&role)["rules"].clone();
    assert_eq!(rules[0]["verbs"], json!(["create"]));
    assert_eq!(rules[1]["verbs"], json!(["get", "patch"]));
    let allowed = rules[1]["resourceNames"].as_array().unwrap();
    let first_cell = mongobench::plan::cell_id(target, platform, &plan.run.sizes[0], 1);
    for name in [
        format!("{bench}-{first_cell}"),
        format!("{bench}-{platform}-activity"),
    ] {
        assert!(allowed.contains(&json!(name)), "{name} not in {allowed:?}");
    }
    plan
}

#[tokio::test]
async fn percona_study_provisions_pinned_spread_replica_sets_one_target_after_another() {
    let env = common::setup("op-percona").await;
    common::storage_class(&env.client, "pd-ssd").await;
    let bench = "percona-9-vs-8";
    let platform = "x86-icelake";
    let mut pvs = Vec::new();
    for target in ["mongodb-9.0", "psmdb-8.0", "psmdb-8.3"] {
        pvs.extend(
            common::volumes(
                &env,
                "pd-ssd",
                &common::server(bench, target, platform),
                3,
                "100Gi",
            )
            .await,
        );
    }
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &common::example("examples/percona-9-vs-8.yaml")).await;

    // The first target only: the platform's nodes take one replica set at a time.
    let first = common::server(bench, "mongodb-9.0", platform);
    let sts: StatefulSet = common::exists(&env, &first).await;
    let n2 = json!({"cloud.google.com/gke-nodepool": "n2-icelake", "kubernetes.io/arch": "amd64"});
    assert_servers(&sts, &first, n2.clone(), json!([]), ("pd-ssd", "100Gi"));
    let second = common::server(bench, "psmdb-8.0", platform);
    let statefulsets: Api<StatefulSet> = Api::namespaced(env.client.clone(), &env.namespace);
    assert!(
        statefulsets.get_opt(&second).await.unwrap().is_none(),
        "the second target started early"
    );
    assert_service_and_policy(&env, &first, bench).await;
    assert_spread(
        &placed(&env, "mongodb-9.0", platform, 3).await,
        "n2-icelake-",
    );

    // Servers ready → the runner, on the client pool.
    let plan = assert_runner(&env, bench, "mongodb-9.0", platform).await;
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Seeding", |s| {
        s.phase == Some(mongobench::api::StatusPhase::Seeding)
    })
    .await;
    assert_eq!(status.progress.as_deref(), Some("0/27"));
    let ready = status.condition("ServersReady").unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Ready")
    );

    // The runner's nine cells land: the first replica set goes, the second comes on the
    // same nodes.
    common::write_cells(&env, &plan, "mongodb-9.0", &["1M", "4M", "8M"], 3).await;
    let sts: StatefulSet = common::exists(&env, &second).await;
    assert_servers(&sts, &second, n2, json!([]), ("pd-ssd", "100Gi"));
    assert!(
        statefulsets.get_opt(&first).await.unwrap().is_none(),
        "the first replica set was kept"
    );
    assert_spread(&placed(&env, "psmdb-8.0", platform, 3).await, "n2-icelake-");
    let status = common::status_until(&env, bench, Duration::from_secs(60), "9/27 cells", |s| {
        s.progress.as_deref() == Some("9/27")
    })
    .await;
    assert_eq!(status.cells.len(), 27);
    assert_eq!(status.baseline.as_deref(), Some("psmdb-8.0"));

    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}

#[tokio::test]
async fn ycsb_study_provisions_both_architectures_at_once() {
    let env = common::setup("op-ycsb").await;
    common::storage_class(&env.client, "hyperdisk-balanced").await;
    let bench = "ycsb-x86-vs-arm";
    let mut pvs = Vec::new();
    for platform in ["x86-c3", "arm-axion"] {
        pvs.extend(
            common::volumes(
                &env,
                "hyperdisk-balanced",
                &common::server(bench, "mongodb-8.0", platform),
                3,
                "50Gi",
            )
            .await,
        );
    }
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &common::example("examples/ycsb-x86-vs-arm.yaml")).await;

    let x86 = common::server(bench, "mongodb-8.0", "x86-c3");
    let arm = common::server(bench, "mongodb-8.0", "arm-axion");
    let sts: StatefulSet = common::exists(&env, &x86).await;
    assert_servers(
        &sts,
        &x86,
        json!({"cloud.google.com/gke-nodepool": "c3-pool", "kubernetes.io/arch": "amd64"}),
        json!([]),
        ("hyperdisk-balanced", "50Gi"),
    );
    let sts: StatefulSet = common::exists(&env, &arm).await;
    assert_servers(
        &sts,
        &arm,
        json!({"cloud.google.com/gke-nodepool": "c4a-axion",
               "cloud.google.com/machine-family": "c4a",
               "kubernetes.io/arch": "arm64"}),
        json!([{"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}]),
        ("hyperdisk-balanced", "50Gi"),
    );
    assert_service_and_policy(&env, &x86, bench).await;
    assert_service_and_policy(&env, &arm, bench).await;
    assert_spread(&placed(&env, "mongodb-8.0", "x86-c3", 3).await, "c3-pool-");
    assert_spread(
        &placed(&env, "mongodb-8.0", "arm-axion", 3).await,
        "c4a-axion-",
    );
    assert_runner(&env, bench, "mongodb-8.0", "x86-c3").await;
    assert_runner(&env, bench, "mongodb-8.0", "arm-axion").await;

    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}
