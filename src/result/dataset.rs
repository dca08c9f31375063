//! The data a cell ran against: the seeded state S(size), its digest, and the restores that
//! brought it back after a phase changed it.

use serde::{Deserialize, Serialize};

use crate::measure::server::CollStatsSizes;

/// The data the cell ran against.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct DatasetInfo {
    /// Documents seeded (the cell's size).
    pub seeded_documents: u64,
    /// `database.collection` the workload used.
    pub namespace: Option<String>,
    /// `collStats` sizes after the measured phase.
    pub coll_stats: CollStatsSizes,
    /// Digest of the seeded state S(size) the measured phase started from.
    pub digest: Option<DatasetDigest>,
    /// The restores of S(size) in this cell: after the warm-up and after the measured phase.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restores: Vec<RestoreRecord>,
}

/// A digest of a collection's whole content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatasetDigest {
    /// `dbHash` (the server's MD5 of the collection in `_id` order) or `sha256-sum` (the
    /// runner's: the wrapping sum of every document's SHA-256, see docs/results.md).
    pub method: String,
    /// The digest, hex.
    pub value: String,
    /// Documents in the collection when it was taken.
    pub documents: u64,
}

/// One restore of the seeded state after a phase changed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreRecord {
    /// The phase whose changes were undone: `warmup` or `measured`.
    pub after: String,
    /// Wall time of the restore and its verification, seconds.
    pub seconds: f64,
    /// Documents the phase inserted, removed again.
    pub removed: u64,
    /// Seeded documents the phase may have updated or deleted, written again as seeded.
    pub rewritten: u64,
    /// Why the collection had to be seeded again: the count or digest after restoring did not
    /// match the seeded state. `null` when the restore verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reseeded: Option<String>,
}
