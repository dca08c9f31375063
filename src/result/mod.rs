//! The per-cell result document: what the runner writes for one cell (target × platform ×
//! dataset size × repetition) and what every report reads. `docs/results.md` describes each
//! field, its unit and the version policy.
//!
//! Invariants:
//! - `schemaVersion` is [`SCHEMA_VERSION`]; readers refuse any other value rather than guess.
//! - A result is `complete` or `incomplete` with a reason. An incomplete result is never shown
//!   as valid: renderers mark it and comparisons refuse it.
//! - Figures a server does not report are `null`, never 0.
#![deny(missing_docs)]

mod fallbacks;
mod histogram_codec;
mod identity;
mod measured;
mod merge;
mod pairs;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use fallbacks::{Fallback, fallbacks};
pub use histogram_codec::{EncodedHistogram, HistogramCodecError};
pub use identity::WorkloadIdentity;
pub use measured::{Histograms, LoopMode, MeasuredPhase, OperationResult};
pub use merge::{MergeError as PhaseMergeError, add_series};
pub use pairs::slot_pairs;

use crate::measure::ClientCpuUsage;
use crate::measure::server::{
    CollStatsSizes, ExplainSummary, HostInfoFigures, MemberLoad, Regime, ServerStatusDelta,
    classify, cpu_us_per_op,
};

/// The schema version this code writes and reads.
pub const SCHEMA_VERSION: u32 = 2;

/// Whether a cell's result can be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum CellStatus {
    /// Every phase ran to its end.
    Complete,
    /// The run stopped early; its figures are partial and must not be reported as valid.
    Incomplete {
        /// What stopped it (target, phase, error).
        #[serde(rename = "incompleteReason")]
        reason: String,
    },
}

/// Which cell of the matrix a result belongs to.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct CellId {
    /// Name of the MongoBenchmark (or of the local run).
    pub benchmark: String,
    /// Identifier of this execution of the benchmark.
    pub run_id: String,
    /// Workload name and version (`flights/v1`, `ycsb-a`).
    pub workload: String,
    /// Target name (the deployment under test).
    pub target: String,
    /// Platform name (node pool / hardware).
    pub platform: String,
    /// Dataset size as the spec names it (`1M`).
    pub size: String,
    /// Repetition number, from 1.
    pub repetition: u32,
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} {} target={} platform={} size={} repetition={}",
            self.benchmark,
            self.run_id,
            self.workload,
            self.target,
            self.platform,
            self.size,
            self.repetition
        )
    }
}

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
    /// With several client processes (`client.pods`): each one's workers, how late it started
    /// the measured phase and its own CPU use (`client_cpu` is their sum). Absent for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_pods: Vec<ClientPod>,
    /// How the workers sent their commands in the measured phase (with several client pods,
    /// pod 0's; the others choose alike from the same URI). Absent before the measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_path: Option<ClientPath>,
    /// The time slot the cell ran in, when the targets of its run were interleaved: the
    /// comparison pairs cells of one run, workload, platform, size and slot (docs/results.md,
    /// "Paired slots"). Absent when its target ran alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<Slot>,
    /// The noise canary taken just before the cell (docs/results.md, "Noise canaries").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<crate::measure::canary::CanaryRecord>,
}

/// Where a cell ran among the interleaved targets of its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Slot {
    /// The slot, from 1: slot k holds repetition k of every target.
    pub number: u32,
    /// The cell's place within its slot, from 0, in the slot's seeded random order.
    pub position: u32,
}

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

/// Why a result document was refused.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// Not JSON (or JSON with trailing text): a syntax error at `line`.
    #[error("not JSON: {message}")]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// The parser's message, without the location.
        message: String,
    },
    /// JSON, but not the shape of a result of this schema version: a field missing, unknown to
    /// a closed type, of the wrong type, or a histogram that does not decode.
    #[error("{}{message}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
    Shape {
        /// 1-based line of the error.
        line: usize,
        /// Field path (`measured.overall.opsPerSec`), empty for the document itself.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The document could not be serialized.
    #[error("cannot serialize the result document: {0}")]
    Json(#[from] serde_json::Error),
    /// `schemaVersion` missing or not an integer.
    #[error("result document has no integer `schemaVersion`; expected {SCHEMA_VERSION}")]
    MissingVersion,
    /// Written by a different schema version.
    #[error(
        "result document has schemaVersion {found}; this mongobench reads schemaVersion \
         {SCHEMA_VERSION}: report it with the mongobench release that wrote it"
    )]
    UnsupportedVersion {
        /// The version found.
        found: u64,
    },
    /// An incomplete result where a valid one is required.
    #[error("result of cell {cell} is incomplete ({reason}): it is not a valid result")]
    Incomplete {
        /// The cell (boxed: keeps `Result<_, ResultError>` small).
        cell: Box<CellId>,
        /// Why it is incomplete.
        reason: String,
    },
    /// A complete result without a measured phase.
    #[error("result of cell {cell} says complete but has no `measured` phase")]
    MissingMeasurement {
        /// The cell (boxed: keeps `Result<_, ResultError>` small).
        cell: Box<CellId>,
    },
    /// An incomplete result without a reason.
    #[error("result of cell {cell} is incomplete but `incompleteReason` is empty")]
    EmptyReason {
        /// The cell (boxed: keeps `Result<_, ResultError>` small).
        cell: Box<CellId>,
    },
}

impl ResultError {
    /// The line the error is on, when it is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ResultError::Syntax { line, .. } | ResultError::Shape { line, .. } => Some(*line),
            _ => None,
        }
    }

    fn syntax(e: &serde_json::Error) -> ResultError {
        let mut message = without_location(e);
        if e.is_eof() {
            message = format!("{message}: the text ends inside a value (a truncated file?)");
        }
        ResultError::Syntax {
            line: e.line(),
            message,
        }
    }
}

/// serde_json's message without its ` at line L column C` suffix (the line is kept apart).
fn without_location(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
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
            client_pods: Vec::new(),
            client_path: None,
            mongobench_version: None,
            slot: None,
            canary: None,
        }
    }

    /// The JSON Schema (draft 2020-12) of result documents; `docs/result.schema.json` holds
    /// the committed copy.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(CellResult))
            .expect("a generated schema is always representable as JSON")
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

    /// The measured phase of a complete result.
    ///
    /// # Errors
    /// [`ResultError::Incomplete`] for an incomplete result, [`ResultError::MissingMeasurement`]
    /// for a complete one without measurements.
    pub fn require_complete(&self) -> Result<&MeasuredPhase, ResultError> {
        match &self.status {
            CellStatus::Incomplete { reason } => Err(ResultError::Incomplete {
                cell: Box::new(self.cell.clone()),
                reason: reason.clone(),
            }),
            CellStatus::Complete => {
                self.measured
                    .as_ref()
                    .ok_or_else(|| ResultError::MissingMeasurement {
                        cell: Box::new(self.cell.clone()),
                    })
            }
        }
    }

    /// Checks the invariants serde cannot express.
    ///
    /// # Errors
    /// [`ResultError::UnsupportedVersion`], [`ResultError::MissingMeasurement`] or
    /// [`ResultError::EmptyReason`].
    pub fn validate(&self) -> Result<(), ResultError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(ResultError::UnsupportedVersion {
                found: u64::from(self.schema_version),
            });
        }
        match &self.status {
            CellStatus::Complete if self.measured.is_none() => {
                Err(ResultError::MissingMeasurement {
                    cell: Box::new(self.cell.clone()),
                })
            }
            CellStatus::Incomplete { reason } if reason.trim().is_empty() => {
                Err(ResultError::EmptyReason {
                    cell: Box::new(self.cell.clone()),
                })
            }
            _ => Ok(()),
        }
    }

    /// Reads and validates a result document.
    ///
    /// # Errors
    /// [`ResultError`] naming what is wrong and, where it can, the line and field: not JSON,
    /// not an object, wrong or missing schema version, wrong shape, or broken invariants.
    pub fn from_json(text: &str) -> Result<CellResult, ResultError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ResultError::syntax(&e))?;
        if !value.is_object() {
            let shape = match value {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(ResultError::Shape {
                line: 1,
                path: String::new(),
                message: format!(
                    "{shape}, not a result document (an object with schemaVersion \
                     {SCHEMA_VERSION})"
                ),
            });
        }
        let version = value
            .get("schemaVersion")
            .and_then(serde_json::Value::as_u64)
            .ok_or(ResultError::MissingVersion)?;
        if version != u64::from(SCHEMA_VERSION) {
            return Err(ResultError::UnsupportedVersion { found: version });
        }
        // Read from the text again rather than the value: errors keep their line and field.
        let mut reader = serde_json::Deserializer::from_str(text);
        let result: CellResult = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let path = e.path().to_string();
            ResultError::Shape {
                line: e.inner().line(),
                path: if path == "." { String::new() } else { path },
                message: without_location(e.inner()),
            }
        })?;
        result.validate()?;
        Ok(result)
    }

    /// The document as pretty-printed JSON.
    ///
    /// # Errors
    /// [`ResultError::Json`] if a histogram cannot be serialized.
    pub fn to_json(&self) -> Result<String, ResultError> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use super::testing::sample_result;
    use super::*;

    #[test]
    fn committed_json_schema_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
        let generated = serde_json::to_string_pretty(&CellResult::json_schema()).unwrap() + "\n";
        if std::env::var_os("MONGOBENCH_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/result.schema.json differs from the result types: regenerate it with \
             `MONGOBENCH_BLESS=1 cargo test --lib committed_json_schema_is_current` and review \
             the diff (a removed or renamed field needs a new schemaVersion)"
        );
    }

    #[test]
    fn every_document_field_is_declared_in_the_schema() {
        // Every top-level property of a complete and of an incomplete document is declared
        // in the schema, `status` and `incompleteReason` by the status variants (`oneOf`).
        let schema = CellResult::json_schema();
        let mut declared: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        for variant in schema["oneOf"].as_array().unwrap() {
            declared.extend(variant["properties"].as_object().unwrap().keys());
        }
        let mut result = sample_result("psmdb-8.0", 1, 10.0);
        for _ in 0..2 {
            let doc: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
            for key in doc.as_object().unwrap().keys() {
                assert!(declared.contains(&key), "{key} is not in the schema");
            }
            result.status = CellStatus::Incomplete {
                reason: "stopped".into(),
            };
        }
    }

    #[test]
    fn json_round_trip_is_lossless() {
        let result = sample_result("psmdb-8.0", 1, 1000.0);
        let text = result.to_json().unwrap();
        let back = CellResult::from_json(&text).unwrap();
        assert_eq!(back.measured, result.measured);
        assert_eq!(back.server_stats, result.server_stats);
        assert_eq!(back.nodes, result.nodes);
        assert_eq!(back, result);
    }

    #[test]
    fn status_is_a_flat_field_with_the_reason_beside_it() {
        let mut result = sample_result("psmdb-8.0", 1, 1000.0);
        let json: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
        assert_eq!(json["status"], "complete");
        assert_eq!(json["schemaVersion"], 2);
        assert!(json.get("incompleteReason").is_none());
        result.status = CellStatus::Incomplete {
            reason: "target psmdb-8.0: server closed the connection during the measured phase"
                .into(),
        };
        let json: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
        assert_eq!(json["status"], "incomplete");
        assert_eq!(
            json["incompleteReason"],
            "target psmdb-8.0: server closed the connection during the measured phase"
        );
    }

    #[test]
    fn absent_server_figures_serialize_as_null_not_zero() {
        let result = sample_result("ferretdb", 1, 1000.0);
        let json: serde_json::Value = serde_json::from_str(&result.to_json().unwrap()).unwrap();
        let member = &json["serverStats"]["members"][1];
        assert!(member["delta"]["processCounters"]["userTimeUs"].is_null());
        assert!(json["serverStats"]["cpuUsPerOp"].is_null());
        // hostInfo's own spelling of units is kept.
        let node = &json["nodes"][0];
        for key in ["memSizeMB", "memLimitMB", "cpuFrequencyMHz"] {
            assert!(
                node.get(key).is_some_and(serde_json::Value::is_null),
                "{key}"
            );
        }
        assert_eq!(node["numCores"], 4);
    }

    #[test]
    fn other_schema_versions_are_refused_by_name() {
        let text = sample_result("psmdb-8.0", 1, 1000.0)
            .to_json()
            .unwrap()
            .replacen("\"schemaVersion\": 2", "\"schemaVersion\": 1", 1);
        let e = CellResult::from_json(&text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "result document has schemaVersion 1; this mongobench reads schemaVersion 2: report \
             it with the mongobench release that wrote it"
        );
        assert!(matches!(
            CellResult::from_json("{\"status\": \"complete\"}"),
            Err(ResultError::MissingVersion)
        ));
    }

    #[test]
    fn broken_invariants_are_refused() {
        let mut result = sample_result("psmdb-8.0", 1, 1000.0);
        result.measured = None;
        assert!(matches!(
            result.validate(),
            Err(ResultError::MissingMeasurement { .. })
        ));
        result.status = CellStatus::Incomplete { reason: " ".into() };
        assert!(matches!(
            result.validate(),
            Err(ResultError::EmptyReason { .. })
        ));
        result.status = CellStatus::Incomplete {
            reason: "killed".into(),
        };
        assert!(result.validate().is_ok());
        let e = result.require_complete().unwrap_err();
        assert!(e.to_string().contains("is incomplete (killed)"), "{e}");
    }

    #[test]
    fn server_stats_compute_cpu_per_op_regime_and_cache_fill() {
        use crate::measure::server::{CacheCounters, CacheGauges, ProcessCounters};
        let host = HostInfoFigures {
            num_cores: Some(4),
            ..HostInfoFigures::default()
        };
        let delta = ServerStatusDelta {
            elapsed_ms: Some(10_000),
            process_counters: ProcessCounters {
                user_time_us: Some(30_000_000),
                system_time_us: Some(6_000_000),
                ..ProcessCounters::default()
            },
            cache_counters: CacheCounters {
                pages_read_into_cache: Some(50_000),
                ..CacheCounters::default()
            },
            cache_after: CacheGauges {
                bytes_in_cache: Some(3_000),
                maximum_bytes_configured: Some(4_000),
                tracked_dirty_bytes: None,
            },
            ..ServerStatusDelta::default()
        };
        // 36 s CPU over 10 s × 4 cores = 0.9 → CPU-bound; 36e6 µs / 200k ops = 180 µs/op.
        let stats = ServerStats::compute(
            [("m0:27017".to_string(), delta, Some(&host))],
            Duration::from_secs(10),
            200_000,
        );
        assert_eq!(stats.cpu_us_per_op, Some(180.0));
        assert_eq!(stats.regime, Some(Regime::CpuBound));
        assert_eq!(stats.members[0].cache_fill, Some(0.75));
        assert_eq!(stats.members[0].load.pages_read_per_op, Some(0.25));
    }
}
