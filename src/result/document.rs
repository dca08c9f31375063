//! The result document of one cell, [`CellResult`], and the questions every reader asks of
//! it: complete? valid evidence? if not, why not.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cell::{CellId, CellStatus, Simultaneous, Slot};
use super::client::{ClientPath, ClientPod, TargetCounts};
use super::dataset::DatasetInfo;
use super::identity::WorkloadIdentity;
use super::measured::MeasuredPhase;
use super::server::{Fallback, NodeInfo, ServerInfo, ServerStats};
use crate::measure::ClientCpuUsage;
use crate::measure::server::ExplainSummary;

/// The schema version this code writes and reads.
pub const SCHEMA_VERSION: u32 = 2;

/// The result document of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CellResult {
    /// Always 2 ([`SCHEMA_VERSION`]); see docs/results.md for the version policy.
    pub schema_version: u32,
    /// Complete, or incomplete with the reason.
    #[serde(flatten)]
    pub status: CellStatus,
    /// Which cell.
    pub cell: CellId,
    /// Server software.
    pub server: ServerInfo,
    /// One entry per replica-set member.
    pub nodes: Vec<NodeInfo>,
    /// Dataset figures.
    pub dataset: DatasetInfo,
    /// The measured phase; absent when the run stopped before it produced anything.
    pub measured: Option<MeasuredPhase>,
    /// Server figures over the measured phase.
    pub server_stats: Option<ServerStats>,
    /// The client's CPU use over the measured phase.
    pub client_cpu: Option<ClientCpuUsage>,
    /// explain() summary per query type.
    #[serde(default)]
    pub explain: BTreeMap<String, ExplainSummary>,
    /// Capabilities the server lacked and what was done without each (`dbHash`,
    /// `serverStatus.extra_info` …); empty when it had all the runner uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<Fallback>,
    /// Traffic fingerprint: equal fingerprints mean the same operations were sent.
    pub fingerprint: String,
    /// Workload identity: results are comparable only when these are equal.
    #[serde(default)]
    pub identity: WorkloadIdentity,
    /// Why a complete cell is not valid evidence (an election, a restarted member, errors over
    /// the budget, a duplicate key in flights, a saturated client, replication that did not
    /// settle): its figures are kept and shown, and left out of statistics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid_reasons: Vec<String>,
    /// Seconds spent waiting, before the measured phase, until every secondary had applied the
    /// primary's last write and no index build was running; `null` when not measured.
    #[serde(default)]
    pub settle_seconds: Option<f64>,
    /// Operations each worker generated in the measured phase, in worker order: with the seed,
    /// all that is needed to regenerate (and re-fingerprint) the traffic.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worker_operations: Vec<u64>,
    /// flights: where finds, updates and deletes were aimed and what they found, per label.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub targeting: BTreeMap<String, TargetCounts>,
    /// When the measured phase started, RFC 3339 in UTC (`2026-05-04T09:30:00Z`): places the
    /// result in a performance history. Absent when the run stopped before measuring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The mongobench release that wrote the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mongobench_version: Option<String>,
    /// Operations completed in each second of the warm-up (whole seconds of a timed warm-up;
    /// the data is restored between it and the measured phase). Shows whether the warm-up
    /// was long enough for the throughput to level off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup_per_second: Vec<u64>,
    /// With `workload.warmupUntilSettled`: the rounds of warm-up the cell ran and whether the
    /// last one had settled (`warmup_per_second` is that round's). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_rounds: Option<WarmupRounds>,
    /// With several client processes (`client.pods`): each one's workers, how late it started
    /// the measured phase and its own CPU use (`client_cpu` is their sum). Absent for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_pods: Vec<ClientPod>,
    /// How the workers sent their commands in the measured phase: with several client pods,
    /// the path they all took, and absent when they took different ones (each pod's own is in
    /// `client_pods`). Absent before the measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_path: Option<ClientPath>,
    /// The time slot the cell ran in, when the targets of its run were interleaved: the
    /// comparison pairs cells of one run, workload, platform, size and slot (docs/results.md,
    /// "Paired slots"). Absent when its target ran alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    /// How the run's comparison was fixed before it ran: its verdict metrics and, under a
    /// precision goal, its pilot slots. Absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<super::cell::VerdictDesign>,
    /// A cell of a simultaneous slot (`parallelism: Simultaneous`): when the common measured
    /// window began and, where the targets trade places, the side it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<Simultaneous>,
    /// The noise canary taken just before the cell (docs/results.md, "Noise canaries").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<crate::measure::canary::CanaryRecord>,
    /// The noise canary sampled during the measured phase: steal time and a light CPU probe
    /// each second (docs/results.md, "Noise canaries").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_canary: Option<crate::measure::phase_canary::PhaseCanary>,
    /// The noise canaries of the target's server nodes taken just before the cell, one per
    /// member with a canary beside it (provisioned replica sets). Empty for other targets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_canaries: Vec<crate::measure::canary::ServerCanary>,
    /// A load sweep's steps and knee (`workload.sweep`); the other figures are those of the
    /// knee step. Absent for a cell of one measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<super::sweep::SweepRecord>,
    /// On a sharded target, where the workload's collection lay over the shards before and
    /// after the measured phase. Absent on a replica set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<super::sharding::ShardingRecord>,
}

/// How a warm-up run in rounds until settled ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarmupRounds {
    /// Rounds of `warmup` run, each followed by a restore.
    pub rounds: u32,
    /// Whether the last round's drift was within the tolerance; false when every round allowed
    /// ran without settling.
    pub settled: bool,
}

impl CellResult {
    /// A result of `cell` with nothing measured yet, marked `status`.
    pub fn empty(cell: CellId, status: CellStatus) -> CellResult {
        CellResult {
            schema_version: SCHEMA_VERSION,
            status,
            cell,
            server: ServerInfo::default(),
            nodes: Vec::new(),
            dataset: DatasetInfo::default(),
            measured: None,
            server_stats: None,
            client_cpu: None,
            explain: BTreeMap::new(),
            fallbacks: Vec::new(),
            fingerprint: String::new(),
            identity: WorkloadIdentity::default(),
            invalid_reasons: Vec::new(),
            settle_seconds: None,
            worker_operations: Vec::new(),
            targeting: BTreeMap::new(),
            started_at: None,
            warmup_per_second: Vec::new(),
            warmup_rounds: None,
            client_pods: Vec::new(),
            client_path: None,
            mongobench_version: None,
            slot: None,
            design: None,
            simultaneous: None,
            canary: None,
            phase_canary: None,
            server_canaries: Vec::new(),
            sweep: None,
            sharding: None,
        }
    }

    /// Whether the result is complete.
    pub fn is_complete(&self) -> bool {
        self.status == CellStatus::Complete
    }

    /// Whether the result is complete and passed every validity gate: only such results
    /// enter statistics.
    pub fn is_valid(&self) -> bool {
        self.is_complete() && self.invalid_reasons.is_empty()
    }

    /// Why the result is left out of statistics: the incomplete reason, or the validity
    /// gates it failed; `None` for a valid result.
    pub fn exclusion(&self) -> Option<String> {
        match &self.status {
            CellStatus::Incomplete { reason } => Some(format!("incomplete: {reason}")),
            CellStatus::Complete if self.invalid_reasons.is_empty() => None,
            CellStatus::Complete => Some(format!("invalid: {}", self.invalid_reasons.join("; "))),
        }
    }

    /// Whether a noise canary deviated past the run's threshold before or during the cell (the
    /// client's or a server node's): the cell stays in the figures, and the reports count it
    /// beside the verdict it feeds.
    pub fn canary_flagged(&self) -> bool {
        self.canary.as_ref().is_some_and(|c| c.deviation.is_some())
            || self
                .phase_canary
                .as_ref()
                .is_some_and(|c| c.deviation.is_some())
            || self.server_canaries.iter().any(|s| s.deviation.is_some())
    }
}
