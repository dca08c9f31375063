//! Sharded targets (`spec.targets[].topology: sharded` with `shards`, `configServers`,
//! `mongos`) and how the workload's collections are sharded on them (`spec.workload.sharding`:
//! shard key, pre-split, balancer). The initiation sequence and the split points are in
//! `plan/sharding/`; docs/operator.md, "Sharded targets", explains the whole path.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::replica_set::ComputeResources;

/// Default of `shards.count`.
pub const DEFAULT_SHARDS: u32 = 2;
/// Default of `shards.members` and `configServers.members`.
pub const DEFAULT_SHARD_MEMBERS: u32 = 3;
/// Default of `mongos.replicas`.
pub const DEFAULT_MONGOS: u32 = 2;
/// Default of `preSplit.chunksPerShard` when `preSplit` is set without either field.
pub const DEFAULT_CHUNKS_PER_SHARD: u32 = 2;

/// How a target's servers are arranged.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "camelCase")]
pub enum Topology {
    /// One replica set (default).
    #[default]
    ReplicaSet,
    /// Shards behind mongos routers, with a config server replica set.
    Sharded,
}

impl Topology {
    pub fn as_str(self) -> &'static str {
        match self {
            Topology::ReplicaSet => "replicaSet",
            Topology::Sharded => "sharded",
        }
    }
}

/// The shards of a sharded target the operator provisions.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Shards {
    /// How many shards (1 to 16, default 2); each is a replica set of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 16), extend("default" = 2))]
    pub count: Option<u32>,
    /// Members of each shard's replica set: 1, 3 (default), 5 or 7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 3))]
    #[x_kube(validation = Rule::new("self in [1, 3, 5, 7]")
        .message("spec.targets[].shards.members must be 1, 3, 5 or 7"))]
    pub members: Option<u32>,
}

impl Shards {
    pub fn count(&self) -> u32 {
        self.count.unwrap_or(DEFAULT_SHARDS)
    }
    pub fn members(&self) -> u32 {
        self.members.unwrap_or(DEFAULT_SHARD_MEMBERS)
    }
}

/// The config server replica set of a sharded target the operator provisions.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ConfigServers {
    /// Members: 1, 3 (default), 5 or 7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 3))]
    #[x_kube(validation = Rule::new("self in [1, 3, 5, 7]")
        .message("spec.targets[].configServers.members must be 1, 3, 5 or 7"))]
    pub members: Option<u32>,
}

impl ConfigServers {
    pub fn members(&self) -> u32 {
        self.members.unwrap_or(DEFAULT_SHARD_MEMBERS)
    }
}

/// The mongos routers of a sharded target the operator provisions.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Mongos {
    /// Routers (1 to 16, default 2), a Deployment behind one Service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 16), extend("default" = 2))]
    pub replicas: Option<u32>,
    /// CPU and memory of each router; unset gives them none (BestEffort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ComputeResources>,
    /// Where the routers run: `target` (default, the platform's pool, beside the shards) or
    /// `client` (the load generator's pool, as an application server's sidecar would).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "target"))]
    pub pool: Option<MongosPool>,
}

impl Mongos {
    pub fn replicas(&self) -> u32 {
        self.replicas.unwrap_or(DEFAULT_MONGOS)
    }
    pub fn pool(&self) -> MongosPool {
        self.pool.unwrap_or_default()
    }
}

/// The node pool of the mongos routers.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "camelCase")]
pub enum MongosPool {
    /// The target's platform.
    #[default]
    Target,
    /// The client's pool (`spec.client.platform` or its node selector).
    Client,
}

/// `spec.workload.sharding`: how the workload's collections are sharded on every target with
/// `topology: sharded`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSharding {
    /// The sharded collections (1 to 8); any other collection stays on the primary shard.
    #[schemars(length(min = 1, max = 8))]
    pub collections: Vec<ShardedCollection>,
    /// The balancer during the run: `stopped` (default; stopped once the pre-split chunks are
    /// placed, so no migration runs during a measurement) or `running`. (Not `off`/`on`:
    /// kubectl reads YAML 1.1, where those are booleans.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "stopped"))]
    pub balancer: Option<Balancer>,
    /// Largest skew of documents over shards a cell may have, in percent of the mean per shard
    /// (default 25): a cell above it is flagged (docs/results.md, "Sharded targets").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1000.0), extend("default" = 25.0))]
    pub max_skew_percent: Option<f64>,
}

/// Default of `maxSkewPercent`.
pub const DEFAULT_MAX_SKEW_PERCENT: f64 = 25.0;

impl WorkloadSharding {
    pub fn balancer(&self) -> Balancer {
        self.balancer.unwrap_or_default()
    }
    pub fn max_skew_percent(&self) -> f64 {
        self.max_skew_percent.unwrap_or(DEFAULT_MAX_SKEW_PERCENT)
    }
}

/// The balancer policy of a run.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum Balancer {
    #[default]
    Stopped,
    Running,
}

/// One sharded collection of the workload.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.preSplit) || !has(self.preSplit.points) || self.shardKey.type == 'range'")
    .message("spec.workload.sharding.collections[].preSplit.points applies only to a range shard key; a hashed key is pre-split with chunksPerShard")
    .field_path(".preSplit.points"))]
pub struct ShardedCollection {
    /// The collection, as the workload names it: `flights` (flights) or the YCSB `table`
    /// (default `usertable`).
    #[schemars(length(min = 1, max = 120))]
    pub collection: String,
    /// Its shard key.
    pub shard_key: ShardKey,
    /// Chunks made and placed before seeding; unset lets the server decide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_split: Option<PreSplit>,
}

/// A single-field shard key.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ShardKey {
    /// A field the workload generates, e.g. `flight_id` (flights) or `_id` (YCSB); dotted for
    /// a nested field (`equipment.plane_type`).
    #[schemars(length(min = 1, max = 120))]
    pub field: String,
    /// `hashed` or `range`.
    #[serde(rename = "type")]
    pub kind: ShardKeyType,
}

/// How a shard key distributes documents.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum ShardKeyType {
    #[default]
    Hashed,
    Range,
}

/// How a collection is split before it is seeded: `chunksPerShard` (a hashed key: equal
/// slices of the hash space; a range key: quantiles of the keys the generator seeds at the
/// dataset size) or, for a range key only, explicit split `points`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.chunksPerShard) || !has(self.points)")
    .message("spec.workload.sharding.collections[].preSplit: set chunksPerShard or points, not both"))]
pub struct PreSplit {
    /// Chunks per shard (1 to 64, default 2), placed round-robin over the shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub chunks_per_shard: Option<u32>,
    /// Split points of a range key, ascending (integers or strings, as the field holds);
    /// the chunks between them are placed round-robin over the shards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1024))]
    pub points: Vec<IntOrString>,
}

impl PreSplit {
    /// Effective chunks per shard when no explicit points are given.
    pub fn chunks_per_shard(&self) -> u32 {
        self.chunks_per_shard.unwrap_or(DEFAULT_CHUNKS_PER_SHARD)
    }
}

/// The BSON type of a field a workload generates, as far as a shard key cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Int,
    String,
    Date,
    ObjectId,
}

impl FieldKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Int => "an integer",
            FieldKind::String => "a string",
            FieldKind::Date => "a date",
            FieldKind::ObjectId => "an ObjectId",
        }
    }
}

/// The scalar fields of a flights document (flights.md §2; the arrays `equipment.amenities`
/// and `passengers` cannot be shard keys). `workload/flights/document.rs` writes them; a test
/// there checks this list against a generated document.
pub const FLIGHTS_FIELDS: &[(&str, FieldKind)] = &[
    ("_id", FieldKind::ObjectId),
    ("flight_id", FieldKind::Int),
    ("airline", FieldKind::String),
    ("agent_first_name", FieldKind::String),
    ("agent_last_name", FieldKind::String),
    ("agent_email", FieldKind::String),
    ("flight_date", FieldKind::Date),
    ("origin", FieldKind::String),
    ("destination", FieldKind::String),
    ("flight_code", FieldKind::String),
    ("status", FieldKind::String),
    ("duration_minutes", FieldKind::Int),
    ("gate", FieldKind::String),
    ("equipment.plane_type", FieldKind::String),
    ("equipment.total_seats", FieldKind::Int),
    ("seats_available", FieldKind::Int),
];

/// Flights fields its updates change (flights.md §5): a shard key there would make those
/// updates move documents between shards, which the workload's plain updates may not do.
pub const FLIGHTS_UPDATED_FIELDS: &[&str] = &["seats_available", "status"];
