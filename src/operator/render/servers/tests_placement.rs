//! `placement: SharedNodes`: member i of every provisioned target follows member i of the
//! anchor (the baseline, when provisioned) onto its node.

use super::*;
use crate::operator::fixtures::bench;
use serde_json::json;

const TWO_SETS: &str = "\
targets:
  - {name: mongo-9.0, image: 'mongo:9.0.4', distribution: community}
  - {name: psmdb-8.0, image: 'percona/percona-server-mongodb:8.0.34-15', distribution: percona}
platforms:
  - {name: x86, nodeSelector: {cloud.google.com/gke-nodepool: n2-icelake}}
replicaSet:
  resources: {requests: {cpu: '2', memory: 8Gi}, limits: {cpu: '2', memory: 8Gi}}
  storageSize: 50Gi
dataset: {sizes: [1M]}
workload: {type: flights}
baseline: psmdb-8.0
parallelism: Simultaneous
";

fn affinity(b: &MongoBenchmark, target: usize) -> serde_json::Value {
    let objects = server_objects(b, &b.spec.targets[target], &b.spec.platforms[0], "img").unwrap();
    serde_json::to_value(&objects.stateful_set).unwrap()["spec"]["template"]["spec"]["affinity"]
        .clone()
}

#[test]
fn shared_nodes_put_each_member_beside_the_baselines_member_of_its_ordinal() {
    let b = bench("study", &format!("{TWO_SETS}placement: SharedNodes\n"));
    let follower = affinity(&b, 0);
    assert_eq!(
        follower["podAffinity"],
        json!({"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {
                "app.kubernetes.io/name": "mongobench",
                "app.kubernetes.io/instance": "study",
                "app.kubernetes.io/component": "server",
                "app.kubernetes.io/managed-by": "mongobench-operator",
                "mongobench.io/benchmark": "study",
                "mongobench.io/target": "psmdb-8.0",
                "mongobench.io/platform": "x86"
            }},
            "matchLabelKeys": ["apps.kubernetes.io/pod-index"],
            "topologyKey": "kubernetes.io/hostname"
        }]})
    );
    // Members of one set still each have a node of their own.
    assert!(
        follower["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"].is_array()
    );
    // The anchor follows nobody, and under OwnNodes nobody does.
    assert_eq!(affinity(&b, 1)["podAffinity"], serde_json::Value::Null);
    let own = bench("study", TWO_SETS);
    assert_eq!(affinity(&own, 0)["podAffinity"], serde_json::Value::Null);
}
