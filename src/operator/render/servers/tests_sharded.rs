//! The objects of a sharded target: every set pinned and sized, the routers' Deployment,
//! Service and budgets, and the layout the runner initiates.

use super::sharded::{cluster_layout, ready_pods_wanted, sharded_objects};
use crate::operator::fixtures::{SHARDED, bench};
use serde_json::json;

fn value<T: serde::Serialize>(t: &T) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn config_servers_and_shards_are_replica_sets_of_their_own_on_the_target_pool() {
    let b = bench("sh", SHARDED);
    let objects = sharded_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
    let names: Vec<String> = objects
        .sets
        .iter()
        .map(|s| s.stateful_set.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "sh-mongodb-9-0-x86-config",
            "sh-mongodb-9-0-x86-shard-0",
            "sh-mongodb-9-0-x86-shard-1"
        ]
    );
    for (set, (role, flag)) in objects.sets.iter().zip([
        ("config", "--configsvr"),
        ("shard-0", "--shardsvr"),
        ("shard-1", "--shardsvr"),
    ]) {
        let sts = value(&set.stateful_set);
        let name = sts["metadata"]["name"].as_str().unwrap();
        assert_eq!(sts["spec"]["replicas"], 3);
        // Each set selects its own pods only: the role label tells them apart.
        assert_eq!(
            sts["spec"]["selector"]["matchLabels"]["mongobench.io/role"],
            role
        );
        assert_eq!(
            sts["spec"]["selector"]["matchLabels"]["mongobench.io/target"],
            "mongodb-9.0"
        );
        let pod = &sts["spec"]["template"]["spec"];
        assert_eq!(
            pod["nodeSelector"],
            json!({"cloud.google.com/gke-nodepool": "n2-icelake", "kubernetes.io/arch": "amd64"})
        );
        assert_eq!(
            pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
                ["labelSelector"]["matchLabels"]["mongobench.io/role"],
            role
        );
        assert_eq!(
            pod["containers"][0]["args"],
            json!([
                "--replSet",
                name,
                flag,
                "--port",
                "27017",
                "--bind_ip_all",
                "--auth",
                "--keyFile",
                "/etc/mongodb-keyfile/keyfile",
                "--wiredTigerCacheSizeGB",
                "1.5"
            ])
        );
        assert_eq!(
            pod["containers"][0]["resources"],
            json!({"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"cpu": "1", "memory": "4Gi"}})
        );
        // The runner asks only a replica set target's members for noise canaries.
        assert_eq!(pod["containers"].as_array().map(Vec::len), Some(1));
        assert_eq!(pod.get("shareProcessNamespace"), None);
        assert_eq!(set.service.metadata.name.as_deref(), Some(name));
        assert_eq!(set.network_policy.metadata.name.as_deref(), Some(name));
    }
}

#[test]
fn routers_are_a_deployment_behind_a_service_on_the_client_pool() {
    let b = bench("sh", SHARDED);
    let objects = sharded_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
    let d = value(&objects.mongos);
    assert_eq!(d["metadata"]["name"], "sh-mongodb-9-0-x86-mongos");
    assert_eq!(d["spec"]["replicas"], 2);
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(
        pod["nodeSelector"],
        json!({"cloud.google.com/gke-nodepool": "clients"})
    );
    let container = &pod["containers"][0];
    assert_eq!(container["command"], json!(["mongos"]));
    assert_eq!(
        container["args"],
        json!([
            "--configdb",
            "sh-mongodb-9-0-x86-config/\
                sh-mongodb-9-0-x86-config-0.sh-mongodb-9-0-x86-config.lab.svc.cluster.local:27017,\
                sh-mongodb-9-0-x86-config-1.sh-mongodb-9-0-x86-config.lab.svc.cluster.local:27017,\
                sh-mongodb-9-0-x86-config-2.sh-mongodb-9-0-x86-config.lab.svc.cluster.local:27017",
            "--bind_ip_all",
            "--port",
            "27017",
            "--keyFile",
            "/etc/mongodb-keyfile/keyfile"
        ])
    );
    assert_eq!(
        container["resources"],
        json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}})
    );
    // The keyfile is copied by the init container, readable through fsGroup.
    assert_eq!(pod["initContainers"][0]["name"], "keyfile");
    assert_eq!(pod["securityContext"]["fsGroup"], 999);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["automountServiceAccountToken"], false);
    // The routers reach the benchmark's own pods (the config servers and shards) and DNS.
    let policy = value(&objects.mongos_policy);
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(
        policy["spec"]["egress"][0]["ports"],
        json!([{"protocol": "TCP", "port": 27017}])
    );
    let service = value(&objects.mongos_service);
    assert_eq!(service["metadata"]["name"], "sh-mongodb-9-0-x86-mongos");
    assert_eq!(service["spec"]["clusterIP"], serde_json::Value::Null);
    assert_eq!(service["spec"]["selector"]["mongobench.io/role"], "mongos");
    assert_eq!(service["spec"]["ports"][0]["port"], 27017);
}

#[test]
fn every_part_has_a_budget_that_allows_no_eviction() {
    let b = bench("sh", SHARDED);
    let objects = sharded_objects(&b, &b.spec.targets[0], &b.spec.platforms[0]).unwrap();
    let budgets: Vec<(String, serde_json::Value)> = objects
        .budgets
        .iter()
        .map(|p| (p.metadata.name.clone().unwrap(), value(&p.spec)))
        .collect();
    assert_eq!(budgets.len(), 4);
    for ((name, spec), role) in budgets
        .iter()
        .zip(["config", "shard-0", "shard-1", "mongos"])
    {
        assert_eq!(*name, format!("sh-mongodb-9-0-x86-{role}"));
        assert_eq!(spec["maxUnavailable"], 0);
        assert_eq!(spec["selector"]["matchLabels"]["mongobench.io/role"], role);
    }
}

#[test]
fn the_layout_names_each_set_and_its_members() {
    let b = bench("sh", SHARDED);
    let layout = cluster_layout("sh", "lab", &b.spec.targets[0], &b.spec.platforms[0]);
    assert_eq!(layout.config.name, "sh-mongodb-9-0-x86-config");
    assert_eq!(layout.shards.len(), 2);
    assert_eq!(layout.shards[1].name, "sh-mongodb-9-0-x86-shard-1");
    assert_eq!(
        layout.shards[1].members[2],
        "sh-mongodb-9-0-x86-shard-1-2.sh-mongodb-9-0-x86-shard-1.lab.svc.cluster.local:27017"
    );
    // 3 config servers + 2 shards × 3 members + 2 routers.
    assert_eq!(ready_pods_wanted(&b.spec.targets[0]), 11);
}
