//! The server side of a cell: the software under test, each member's machine, the server
//! figures over the measured phase (CPU per operation with its source, cache fill, the
//! regime), and what the server could not give.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::measure::server::{
    CpuDisagreement, CpuSource, HostInfoFigures, MemberLoad, OsCpuDelta, Regime, ServerStatusDelta,
    classify, cpu_us_per_op, disagreement,
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
    /// Whose server it is, from `buildInfo` (`MongoDB`, `MongoDB Enterprise`, `Percona Server
    /// for MongoDB`, `FerretDB`, `SecantusDB`).
    pub distribution: Option<String>,
    /// `serverStatus.storageEngine.name` (`wiredTiger`); absent where the server does not say.
    pub storage_engine: Option<String>,
    /// The WiredTiger cache size (`maximum bytes configured`), bytes.
    pub cache_bytes: Option<u64>,
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
    /// The member's CPU over the phase as the operating system counts it, where it was read
    /// (a member on this machine, or one with a canary beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_cpu: Option<OsCpuDelta>,
    /// Why the operating system's reading failed, where it was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_cpu_error: Option<String>,
    /// The source of the CPU time this member adds to `cpuUsPerOp`: `serverStatus` when the
    /// server reports it, else the operating system's; `null` with neither.
    #[serde(default)]
    pub cpu_source: Option<CpuSource>,
}

/// What one member's figures over the measured phase are made of.
pub struct MemberFigures<'h> {
    /// Member address.
    pub member: String,
    /// Its `serverStatus` deltas.
    pub delta: ServerStatusDelta,
    /// Its `hostInfo`.
    pub host: Option<&'h HostInfoFigures>,
    /// The operating system's reading of its CPU, or why it failed; `None` where none was
    /// tried.
    pub os_cpu: Option<Result<OsCpuDelta, String>>,
}

impl<'h> MemberFigures<'h> {
    /// A member's figures from `serverStatus` and `hostInfo` alone.
    pub fn reported(
        member: String,
        delta: ServerStatusDelta,
        host: Option<&'h HostInfoFigures>,
    ) -> MemberFigures<'h> {
        MemberFigures {
            member,
            delta,
            host,
            os_cpu: None,
        }
    }
}

/// Server figures of the cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerStats {
    /// Per member.
    pub members: Vec<MemberStats>,
    /// Server CPU µs per operation, summed over members, each from its `cpuSource`; `null` if
    /// any member lacks CPU figures.
    pub cpu_us_per_op: Option<f64>,
    /// The sources of `cpuUsPerOp`'s figures (one per kind, in member order); empty when it
    /// is `null`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_sources: Vec<CpuSource>,
    /// Server CPU µs per operation as the operating system counts it, when it read every
    /// member: equal to `cpuUsPerOp` where the server reports no CPU of its own, beside it
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_cpu_us_per_op: Option<f64>,
    /// Members whose `serverStatus` CPU and operating-system CPU differ past the tolerance
    /// (docs/results.md, "Server CPU and its sources").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_disagreements: Vec<CpuDisagreement>,
    /// The bottleneck regime; `null` when the figures cannot tell.
    pub regime: Option<Regime>,
    /// Address of the primary when the measured phase started (`replSetGetStatus`), as the
    /// members are named; absent without replication or when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
}

impl ServerStats {
    /// Server figures from each member's deltas, operating-system CPU and hostInfo, for
    /// `operations` top-level operations over `window`.
    pub fn compute<'h>(
        members: impl IntoIterator<Item = MemberFigures<'h>>,
        window: Duration,
        operations: u64,
    ) -> ServerStats {
        let members: Vec<MemberStats> = members
            .into_iter()
            .map(|f| MemberStats::of(f, window, operations))
            .collect();
        let cpu: Vec<Option<u64>> = members.iter().map(MemberStats::cpu_us).collect();
        let os_cpu: Vec<Option<u64>> = members
            .iter()
            .map(|m| m.os_cpu.as_ref().map(OsCpuDelta::cpu_us))
            .collect();
        let cpu_us_per_op = cpu_us_per_op(&cpu, operations);
        let mut cpu_sources: Vec<CpuSource> = Vec::new();
        for source in members.iter().filter_map(|m| m.cpu_source) {
            if cpu_us_per_op.is_some() && !cpu_sources.contains(&source) {
                cpu_sources.push(source);
            }
        }
        let cpu_disagreements = members
            .iter()
            .filter_map(|m| disagreement(&m.member, m.delta.cpu_us()?, m.os_cpu.as_ref()?))
            .collect();
        let loads: Vec<MemberLoad> = members.iter().map(|m| m.load).collect();
        ServerStats {
            cpu_us_per_op,
            cpu_sources,
            os_cpu_us_per_op: self::cpu_us_per_op(&os_cpu, operations),
            cpu_disagreements,
            regime: classify(&loads),
            members,
            primary: None,
        }
    }
}

impl MemberStats {
    /// The member's CPU time over the phase (µs) from [`MemberStats::cpu_source`].
    pub fn cpu_us(&self) -> Option<u64> {
        self.delta
            .cpu_us()
            .or_else(|| self.os_cpu.as_ref().map(OsCpuDelta::cpu_us))
    }

    fn of(f: MemberFigures<'_>, window: Duration, operations: u64) -> MemberStats {
        let after = f.delta.cache_after;
        let cache_fill = match (after.bytes_in_cache, after.maximum_bytes_configured) {
            (Some(used), Some(max)) if max > 0 => Some(used as f64 / max as f64),
            _ => None,
        };
        let (os_cpu, os_cpu_error) = match f.os_cpu {
            Some(Ok(delta)) => (Some(delta), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        let cpu_source = match (f.delta.cpu_us(), &os_cpu) {
            (Some(_), _) => Some(CpuSource::ServerStatus),
            (None, Some(os)) => Some(os.source),
            (None, None) => None,
        };
        let mut stats = MemberStats {
            member: f.member,
            delta: f.delta,
            load: MemberLoad::default(),
            cache_fill,
            os_cpu,
            os_cpu_error,
            cpu_source,
        };
        stats.load = MemberLoad::of(&stats.delta, stats.cpu_us(), f.host, window, operations);
        stats
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
