//! The operator provisions examples/sharded-9-vs-8.yaml on the real control plane: for the
//! first target, a config server set and two shard sets (StatefulSets with their headless
//! Services and NetworkPolicies, every member pinned to the platform's pool and spread one
//! per node within its set), the routers (a Deployment behind a Service) and a
//! PodDisruptionBudget per part; the runner Job gets the cluster's layout to bring up and the
//! routers' URI. The second target waits: the two clusters' six sets do not fit the pool at
//! once. When the first target's cells land, every part of it is deleted and the second
//! target's cluster comes.
//!
//! The routers run on the target's pool here (the example puts them on the client pool, whose
//! pods this test environment does not run); the initiation itself needs real mongod and
//! mongos processes, which the test environment does not have (docs/specs/testenv.md,
//! "Sharded clusters").
mod operator_common;
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::Api;
use mongobench::operator::render::names::{self, Part};
use operator_common as common;
use serde_json::{Value, json};

const BENCH: &str = "sharded-9-vs-8";
const PLATFORM: &str = "x86-icelake";

fn value<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

fn part(target: &str, part: Part) -> String {
    names::part_name(BENCH, target, PLATFORM, part)
}

/// The parts of `target` that are replica sets, in order.
fn sets(target: &str) -> Vec<String> {
    [Part::Config, Part::Shard(0), Part::Shard(1)]
        .into_iter()
        .map(|p| part(target, p))
        .collect()
}

/// Waits until `count` pods of `target`'s part `role` run; returns their nodes.
async fn placed(env: &support::KubeEnv, target: &str, role: &str, count: usize) -> Vec<String> {
    let selector = format!(
        "app.kubernetes.io/component=server,mongobench.io/target={target},mongobench.io/role={role}"
    );
    common::running_pod_nodes(env, &selector, count).await
}

#[tokio::test]
async fn a_sharded_target_gets_its_sets_routers_and_budgets_pinned_then_leaves_with_its_cells() {
    let env = common::setup("op-sharded").await;
    common::storage_class(&env.client, "pd-ssd").await;
    let mut pvs = Vec::new();
    for target in ["mongodb-9.0", "psmdb-8.0"] {
        for set in sets(target) {
            pvs.extend(common::volumes(&env, "pd-ssd", &set, 3, "50Gi").await);
        }
    }
    let mut doc = common::example("examples/sharded-9-vs-8.yaml");
    for target in doc["spec"]["targets"].as_array_mut().unwrap() {
        target["mongos"]["pool"] = json!("target");
    }
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &doc).await;

    let first = "mongodb-9.0";
    let n2 = json!({"cloud.google.com/gke-nodepool": "n2-icelake", "kubernetes.io/arch": "amd64"});
    for (set, (role, flag)) in sets(first).iter().zip([
        ("config", "--configsvr"),
        ("shard-0", "--shardsvr"),
        ("shard-1", "--shardsvr"),
    ]) {
        let sts: StatefulSet = common::exists(&env, set).await;
        let v = value(&sts);
        assert_eq!(v["spec"]["replicas"], 3);
        assert_eq!(v["spec"]["serviceName"], set.as_str());
        assert_eq!(
            v["spec"]["selector"]["matchLabels"]["mongobench.io/role"],
            role
        );
        let pod = &v["spec"]["template"]["spec"];
        assert_eq!(pod["nodeSelector"], n2);
        let args = pod["containers"][0]["args"].as_array().unwrap();
        assert_eq!(
            args[..5],
            [
                json!("--replSet"),
                json!(set),
                json!(flag),
                json!("--port"),
                json!("27017")
            ]
        );
        let service: Service = common::exists(&env, set).await;
        assert_eq!(value(&service)["spec"]["clusterIP"], "None");
        let _: NetworkPolicy = common::exists(&env, set).await;
        let budget: PodDisruptionBudget = common::exists(&env, set).await;
        assert_eq!(value(&budget)["spec"]["maxUnavailable"], 0);
        // One member per node within the set, on the platform's pool.
        let nodes = placed(&env, first, role, 3).await;
        assert!(
            nodes.iter().all(|n| n.starts_with("n2-icelake-")),
            "{nodes:?}"
        );
        assert_eq!(nodes.iter().collect::<BTreeSet<_>>().len(), 3, "{nodes:?}");
    }
    let mongos = part(first, Part::Mongos);
    let deployment: Deployment = common::exists(&env, &mongos).await;
    let v = value(&deployment);
    assert_eq!(v["spec"]["replicas"], 2);
    let container = &v["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["command"], json!(["mongos"]));
    assert_eq!(container["args"][0], "--configdb");
    assert!(
        container["args"][1].as_str().unwrap().starts_with(&format!(
            "{}/{}-0.",
            sets(first)[0],
            sets(first)[0]
        )),
        "{container}"
    );
    let service: Service = common::exists(&env, &mongos).await;
    assert_eq!(
        value(&service)["spec"]["selector"]["mongobench.io/role"],
        "mongos"
    );
    let _: PodDisruptionBudget = common::exists(&env, &mongos).await;
    let routers = placed(&env, first, "mongos", 2).await;
    assert!(
        routers.iter().all(|n| n.starts_with("n2-icelake-")),
        "{routers:?}"
    );

    // The second cluster does not fit beside the first: it waits.
    let statefulsets: Api<StatefulSet> = Api::namespaced(env.client.clone(), &env.namespace);
    assert!(
        statefulsets
            .get_opt(&sets("psmdb-8.0")[0])
            .await
            .unwrap()
            .is_none(),
        "the second target started early"
    );

    // Every member and router ready → the runner, with the cluster to bring up.
    let job: Job = common::exists(&env, &common::runner(BENCH, first, PLATFORM)).await;
    let plan = common::plan_of(&env, &job).await;
    let target = &plan.targets[0];
    assert!(target.initiate_members.is_empty());
    let cluster = target.cluster.as_ref().expect("the cluster layout");
    assert_eq!(cluster.config.name, sets(first)[0]);
    let shard_names: Vec<&str> = cluster.shards.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        shard_names,
        [sets(first)[1].as_str(), sets(first)[2].as_str()]
    );
    let ns = &env.namespace;
    assert_eq!(
        cluster.shards[1].members[2],
        format!("{0}-2.{0}.{ns}.svc.cluster.local:27017", sets(first)[2])
    );
    let env_vars = value(&job)["spec"]["template"]["spec"]["containers"][0]["env"].clone();
    let uri = env_vars
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == target.uri_env.as_str())
        .unwrap()["value"]
        .clone();
    assert_eq!(
        uri,
        format!(
            "mongodb://$({0}_USERNAME):$({0}_PASSWORD)@{mongos}.{ns}.svc.cluster.local:27017/\
             ?authSource=admin",
            target.uri_env
        )
    );
    let status = common::status_until(&env, BENCH, Duration::from_secs(60), "ServersReady", |s| {
        s.condition("ServersReady")
            .is_some_and(|c| c.status == "True")
    })
    .await;
    let shape = status
        .targets
        .iter()
        .find(|t| t.target == first)
        .expect("the first target's status");
    assert_eq!(
        shape.topology.as_deref(),
        Some("sharded: 2 shards × 3 members, 3 config servers, 2 mongos")
    );
    assert_eq!(shape.ready_members, Some(11));

    // The first target's cells land: all of its parts go, the second cluster comes.
    common::write_cells(&env, &plan, first, &["1M", "4M"], 3).await;
    for set in sets(first) {
        common::gone::<StatefulSet>(&env, &set).await;
        common::gone::<PodDisruptionBudget>(&env, &set).await;
    }
    common::gone::<Deployment>(&env, &mongos).await;
    common::gone::<Service>(&env, &mongos).await;
    let _: StatefulSet = common::exists(&env, &sets("psmdb-8.0")[0]).await;
    let _: Deployment = common::exists(&env, &part("psmdb-8.0", Part::Mongos)).await;

    operator.kill().await;
    common::delete_volumes(&env, &pvs).await;
}
