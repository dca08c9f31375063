//! Where a sharded target's data lay around a measured phase (docs/results.md, "Sharded
//! targets"): documents, bytes and chunks per shard before and after it, the skew, the chunks
//! that moved, and the flags they raise.

use serde::{Deserialize, Serialize};

/// What one shard holds of a collection.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShardShare {
    /// The shard's id.
    pub shard: String,
    /// Documents (`$collStats` `storageStats.count`).
    pub documents: u64,
    /// Uncompressed bytes (`storageStats.size`).
    pub bytes: u64,
    /// Chunks of the collection it owns (`config.chunks`).
    pub chunks: u64,
}

/// The distribution of a sharded collection around the measured phase.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ShardingRecord {
    /// The cluster's shape, e.g. `sharded: 2 shards × 3 members, 3 config servers, 2 mongos`
    /// (`sharded (external)`, or `sharded` when the spec does not describe the target).
    pub topology: String,
    /// `database.collection`.
    pub namespace: String,
    /// Per shard, before the measured phase.
    pub before: Vec<ShardShare>,
    /// Per shard, after it (before the restore).
    pub after: Vec<ShardShare>,
    /// How far the fullest shard was above the mean after the phase, % of the mean documents.
    pub skew_percent: f64,
    /// The limit `skew_percent` is held to (`workload.sharding.maxSkewPercent`).
    pub max_skew_percent: f64,
    /// Chunks whose shard changed during the phase (or that were split or merged).
    pub chunks_moved: u64,
    /// What was wrong, as sentences; empty when nothing was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}
