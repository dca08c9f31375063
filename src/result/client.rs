//! The client side of a cell: its client processes, how its workers sent their commands, and
//! where a workload's operations were aimed.

use serde::{Deserialize, Serialize};

use crate::measure::ClientCpuUsage;

/// How the workers of a measured phase sent their commands (docs/design.md, "How workers
/// send"): a client's CPU per operation differs between the two.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "via", rename_all = "camelCase")]
pub enum ClientPath {
    /// On connections of their own to the primary or the only server.
    OwnConnections,
    /// Through the MongoDB driver.
    Driver {
        /// Why (TLS, another auth mechanism, compression, …).
        reason: String,
    },
}

/// One client process of a cell measured by several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientPod {
    /// Its index (the Job's completion index).
    pub index: u32,
    /// The global index of its first worker.
    pub first_worker: u32,
    /// How many workers it ran.
    pub workers: u32,
    /// Milliseconds between the common start time and its own start of the measured phase.
    pub start_skew_ms: f64,
    /// Its CPU use over the measured phase.
    pub cpu: ClientCpuUsage,
    /// How its workers sent their commands. Absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_path: Option<ClientPath>,
}

/// Where a workload's operations of one label were aimed, and how many found a document.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct TargetCounts {
    /// Operations aimed at a seeded document (a hit by construction).
    pub aimed_hits: u64,
    /// Operations aimed at a value no seeded document has (a planned miss).
    pub planned_misses: u64,
    /// Operations that found, changed or removed at least one document.
    pub found: u64,
}
