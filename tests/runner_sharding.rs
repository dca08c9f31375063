//! The runner's side of sharded targets against a real server that is not a sharded cluster
//! (SecantusDB, a one-member replica set): what it reads and sends, and how it fails. No
//! sharding-capable server runs here (docs/specs/testenv.md, "Sharded clusters"); the steps
//! themselves are tested as a pure state machine in `plan/sharding`.
//!
//! - A target the spec calls sharded but whose URI reaches a replica set is refused before
//!   anything runs or is written.
//! - Bringing a cluster up reads each set's member 0 directly: sets that answer as initiated
//!   are not initiated again, and a router that never answers as one stops the runner with
//!   the step it waited at.
//! - Sharding a collection, or setting the balancer, on a server that does not shard fails
//!   with the server's own error, naming the step.
mod support;

use std::process::Command;
use std::time::Duration;

use mongobench::api::{Balancer, ShardKey, ShardKeyType};
use mongobench::plan::sharding::{ClusterLayout, SetLayout, collection_plan};
use mongobench::runner::server::sharding::{
    bring_up, read_collection, set_balancer, shard_collection,
};

/// `host:port` of a URI without user, path or options.
fn address(uri: &str) -> String {
    let rest = uri.split_once("://").unwrap().1;
    let authority = rest.split('/').next().unwrap();
    authority.rsplit('@').next().unwrap().to_owned()
}

#[test]
fn a_sharded_target_that_is_not_reached_through_mongos_is_refused_before_anything_runs() {
    let uri = support::secantus_uri();
    let dir = std::env::temp_dir().join(format!("mongobench-not-mongos-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("sharded.yaml");
    std::fs::write(
        &spec,
        "apiVersion: mongobench.io/v1alpha1
kind: MongoBenchmark
metadata: {name: not-mongos}
spec:
  targets: [{name: a, topology: sharded, external: {uriSecretRef: {name: s}}}]
  platforms: [{name: local}]
  dataset: {sizes: ['100']}
  workload:
    type: flights
    workers: 1
    duration: 1s
    warmup: 0s
    sharding:
      collections: [{collection: flights, shardKey: {field: flight_id, type: hashed}}]
  repetitions: 1
",
    )
    .unwrap();
    let out = dir.join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args(["run", "-f", spec.to_str().unwrap(), "--target"])
        .arg(format!("a={uri}"))
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "target a is topology sharded, but {uri} reaches a replicaSet:secantus, not a mongos"
        )),
        "{err}"
    );
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn bring_up_resumes_past_initiated_sets_and_names_the_router_it_waited_for() {
    let uri = support::secantus_uri();
    let member = address(&uri);
    let set = |name: &str| SetLayout {
        name: name.into(),
        members: vec![member.clone()],
    };
    // Every set's member 0 is the server: it answers hello with a set name, as an initiated
    // member does, so no replSetInitiate is sent; it never answers as a router.
    let layout = ClusterLayout {
        config: set("cfg"),
        shards: vec![set("shard-0"), set("shard-1")],
    };
    let mut steps = Vec::new();
    let started = std::time::Instant::now();
    let e = bring_up(
        &layout,
        &uri,
        Balancer::Stopped,
        Duration::from_secs(2),
        &mut |s| steps.push(s),
    )
    .await
    .expect_err("no router answers");
    let message = e.to_string();
    assert!(
        message.starts_with("waiting for a mongos: none answered hello as a router within 2s"),
        "{message}"
    );
    assert!(message.contains("\"setName\": \"secantus\""), "{message}");
    assert!(
        steps.iter().all(|s| s == "waiting for a mongos"),
        "{steps:?}"
    );
    assert!(!steps.is_empty());
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn a_server_that_does_not_shard_refuses_with_its_own_error() {
    let env = support::secantus("runner-sharding-refused").await;
    let key = ShardKey {
        field: "flight_id".into(),
        kind: ShardKeyType::Hashed,
    };
    let plan = collection_plan(
        &env.database,
        "flights",
        &key,
        None,
        &["s0".into()],
        Vec::new,
    );
    // Nothing in config.collections: the collection reads as not sharded.
    let seen = read_collection(&env.client, &plan.namespace(), Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(seen.sharded_key, None);
    assert!(seen.chunks.is_empty());
    let e = shard_collection(&env.client, &plan, Duration::from_secs(10))
        .await
        .expect_err("the server does not shard");
    let message = e.to_string();
    assert!(
        message.starts_with(&format!("{}: ShardCollection: ", plan.namespace())),
        "{message}"
    );
    assert!(message.contains("shardCollection"), "{message}");
    let e = set_balancer(&env.client, Balancer::Stopped, Duration::from_secs(10))
        .await
        .expect_err("the server has no balancer");
    let message = e.to_string();
    assert!(
        message.starts_with("reading the balancer's state: "),
        "{message}"
    );
    assert!(message.contains("balancerStatus"), "{message}");
}
