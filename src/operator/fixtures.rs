//! Benchmarks the unit tests of the operator build on.

use crate::api::{MongoBenchmark, MongoBenchmarkSpec};

/// A benchmark as read from the API server (namespace and uid set).
pub(crate) fn bench(name: &str, spec_yaml: &str) -> MongoBenchmark {
    let spec: MongoBenchmarkSpec = serde_yaml::from_str(spec_yaml).unwrap();
    let mut b = MongoBenchmark::new(name, spec);
    b.metadata.namespace = Some("lab".into());
    b.metadata.uid = Some("0f3c9a52-7d1e-4c55-9b0e-6a1d2f3e4b5c".into());
    b.metadata.generation = Some(1);
    b
}

/// Two targets, one provisioned and one external, on two platforms (arm64 and x86).
pub(crate) const STUDY: &str = "\
targets:
  - {name: psmdb-8.0, image: 'percona/percona-server-mongodb:8.0.34-15', distribution: percona,
     mongodArgs: ['--wiredTigerCollectionBlockCompressor=zstd']}
  - {name: ext, external: {uriSecretRef: {name: ext-uri}}}
platforms:
  - {name: axion, arch: arm64, nodeSelector: {cloud.google.com/gke-nodepool: c4a-axion},
     storageClassName: hyperdisk-balanced}
  - {name: x86, nodeSelector: {cloud.google.com/gke-nodepool: n2-icelake}}
replicaSet:
  members: 3
  resources: {requests: {cpu: '3', memory: 12Gi}, limits: {cpu: '3', memory: 12Gi}}
  storageSize: 50Gi
dataset: {sizes: [1M, 4M]}
workload: {type: flights}
client: {platform: x86}
repetitions: 2
";

/// A provisioned sharded target (2 shards of 3, 3 config servers, 2 routers on the client's
/// pool) beside a replica set, on one platform.
pub(crate) const SHARDED: &str = "\
targets:
  - {name: mongodb-9.0, image: 'mongo:9.0.4', distribution: community, topology: sharded,
     shards: {count: 2, members: 3}, configServers: {members: 3},
     mongos: {replicas: 2, pool: client, resources: {requests: {cpu: '1', memory: 1Gi},
              limits: {cpu: '1', memory: 1Gi}}}}
  - {name: psmdb-8.0, image: 'percona/percona-server-mongodb:8.0.34-15', distribution: percona}
platforms:
  - {name: x86, arch: amd64, nodeSelector: {cloud.google.com/gke-nodepool: n2-icelake}}
  - {name: clients, nodeSelector: {cloud.google.com/gke-nodepool: clients}}
replicaSet:
  resources: {requests: {cpu: '1', memory: 4Gi}, limits: {cpu: '1', memory: 4Gi}}
  storageSize: 50Gi
dataset: {sizes: [1M]}
workload:
  type: flights
  sharding:
    collections:
      - {collection: flights, shardKey: {field: flight_id, type: hashed}, preSplit: {chunksPerShard: 4}}
client: {platform: clients}
";
