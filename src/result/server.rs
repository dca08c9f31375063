//! The server side of a cell: the software under test, each member's machine, the server
//! figures over the measured phase (CPU per operation, cache fill, the regime), and what the
//! server could not give.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::measure::server::{
    HostInfoFigures, MemberLoad, Regime, ServerStatusDelta, classify, cpu_us_per_op,
};

/// The server software under test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerInfo {
    /// Version the server reports (`buildInfo.version`).
    pub version: Option<String>,
    /// Container image reference the target ran.
    pub image: Option<String>,
    /// Image digest (`sha256:…`) the nodes actually pulled.
    pub image_digest: Option<String>,
    /// Topology the driver saw (`replicaSet`, `standalone`).
    pub topology: Option<String>,
}

/// One replica-set member's machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeInfo {
    /// Member address (`host:port`).
    pub member: String,
    /// Kubernetes node the member ran on.
    pub node_name: Option<String>,
    /// Zone label of the node.
    pub zone: Option<String>,
    /// Instance type label of the node.
    pub instance_type: Option<String>,
    /// CPU platform of the node (its `mongobench.io/cpu-platform` label, else the machine
    /// family).
    pub cpu_platform: Option<String>,
    /// Architecture of the node (`amd64`, `arm64`), as Kubernetes reports it.
    pub architecture: Option<String>,
    /// What `hostInfo` reported.
    #[serde(flatten)]
    pub host: HostInfoFigures,
}

/// One member's server figures over the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberStats {
    /// Member address.
    pub member: String,
    /// Counter deltas and cache levels at the end.
    pub delta: ServerStatusDelta,
    /// CPU utilisation and cache misses per operation.
    pub load: MemberLoad,
    /// Cache fill at the end: bytes in cache ÷ maximum bytes configured.
    pub cache_fill: Option<f64>,
}

/// Server figures of the cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerStats {
    /// Per member.
    pub members: Vec<MemberStats>,
    /// Server CPU µs per operation, summed over members; `null` if any member lacks CPU
    /// figures.
    pub cpu_us_per_op: Option<f64>,
    /// The bottleneck regime; `null` when the figures cannot tell.
    pub regime: Option<Regime>,
    /// Address of the primary when the measured phase started (`replSetGetStatus`), as the
    /// members are named; absent without replication or when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
}

impl ServerStats {
    /// Server figures from each member's delta and hostInfo, for `operations` top-level
    /// operations over `window`.
    pub fn compute<'h>(
        members: impl IntoIterator<Item = (String, ServerStatusDelta, Option<&'h HostInfoFigures>)>,
        window: Duration,
        operations: u64,
    ) -> ServerStats {
        let members: Vec<MemberStats> = members
            .into_iter()
            .map(|(member, delta, host)| {
                let after = delta.cache_after;
                let cache_fill = match (after.bytes_in_cache, after.maximum_bytes_configured) {
                    (Some(used), Some(max)) if max > 0 => Some(used as f64 / max as f64),
                    _ => None,
                };
                MemberStats {
                    load: MemberLoad::of(&delta, host, window, operations),
                    member,
                    delta,
                    cache_fill,
                }
            })
            .collect();
        let deltas: Vec<ServerStatusDelta> = members.iter().map(|m| m.delta).collect();
        let loads: Vec<MemberLoad> = members.iter().map(|m| m.load).collect();
        ServerStats {
            cpu_us_per_op: cpu_us_per_op(&deltas, operations),
            regime: classify(&loads),
            members,
            primary: None,
        }
    }
}

/// One capability the server lacked in this cell, and what was done without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    /// The missing capability: `dbHash`, `serverStatus.extra_info`, `serverStatus.wiredTiger`,
    /// `explain.winningPlan` or `replSetGetStatus`.
    pub capability: String,
    /// What the runner did instead, or which figures are absent because of it.
    pub fallback: String,
}
