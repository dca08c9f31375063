//! `MongoBenchmarkStatus`: what the operator observed and measured. Written only by the operator
//! (server-side apply of the complete status, field manager `mongobench`); never read back as
//! input except to resume.
//!
//! Health follows kstatus (Flux, kpt, cli-utils): the operator sets `observedGeneration` and
//! `Reconciling=True` on its first pass, `Ready=True` only when the experiment completed with
//! results, and `Stalled=True` on a terminal failure. [`kstatus`](fn@super::kstatus) computes what
//! those tools will conclude.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Condition types the operator sets. `Ready`, `Reconciling` and `Stalled` are the ones kstatus
/// reads; the others record the steps of the experiment.
pub mod condition_types {
    /// True when the experiment completed and its results are in status.
    pub const READY: &str = "Ready";
    /// True while the operator is working towards the current generation.
    pub const RECONCILING: &str = "Reconciling";
    /// True when the experiment cannot progress without a change (terminal failure).
    pub const STALLED: &str = "Stalled";
    /// True when every provisioned replica set of the current step has a primary.
    pub const SERVERS_READY: &str = "ServersReady";
    /// True when the dataset of the current step is seeded and verified.
    pub const DATA_SEEDED: &str = "DataSeeded";
    /// True when every cell's workload completed.
    pub const WORKLOAD_COMPLETED: &str = "WorkloadCompleted";
    /// With `spec.precision`: True (reason `PrecisionReached`) when every comparison's minimum
    /// detectable effect is at most the goal, False (`PrecisionNotReached`) otherwise.
    pub const PRECISION: &str = "Precision";
    /// True (reason `SettingsAddNoise`) while the spec holds settings known to add noise to
    /// the figures, each named in the message (`crate::api::advice`); absent otherwise.
    pub const MEASUREMENT_ADVICE: &str = "MeasurementAdvice";
}

/// Observed state of a MongoBenchmark.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct MongoBenchmarkStatus {
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// Where the experiment is: Pending, Provisioning, Seeding, Running, Analyzing, Completed,
    /// Failed or Suspended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<StatusPhase>,

    /// Latest observations, one per type: Ready, Reconciling, Stalled (read by GitOps tools)
    /// and ServersReady, DataSeeded, WorkloadCompleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,

    /// Cells finished out of all cells, e.g. `7/18`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,

    /// Cells by state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<CellCounts>,

    /// When the first cell started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,

    /// When the experiment completed or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Time>,

    /// Identifier of this run, recorded in every result so runs are never mixed up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,

    /// The effective baseline target (`spec.baseline`, else the first target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,

    /// Target names, comma-separated (shown by `kubectl get -o wide`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_names: Option<String>,

    /// Platform names, comma-separated (shown by `kubectl get -o wide`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform_names: Option<String>,

    /// What was deployed, per target and platform.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetStatus>,

    /// How each platform's targets are run: all in one runner, their repetitions interleaved
    /// (A B C A B C), or one target after another, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runners: Vec<RunnerStatus>,

    /// One entry per measured cell (target × platform × size × repetition) with its headline
    /// figures; the full result is referenced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<CellStatus>,

    /// Each target against the baseline, per platform and dataset size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Comparison>,

    /// With a load sweep, each target's median knee over its valid cells, e.g. `postgres 148,
    /// wiredtiger 1950 ops/s at p99 ≤ 10ms` (per platform and size when there are several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knees: Option<String>,

    /// The main finding in one line, e.g.
    /// `mongodb-9.0: +6.1% ops/s vs psmdb-8.0 (4M, x86-icelake)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
}

/// Schema of `conditions`: a list-map keyed by `type`, so entries can be owned separately under
/// server-side apply.
fn conditions_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "description": "Latest observations, one per type: Ready, Reconciling, Stalled (read by GitOps tools) and ServersReady, DataSeeded, WorkloadCompleted.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        "items": {
            "type": "object",
            "required": ["type", "status", "reason", "message", "lastTransitionTime"],
            "properties": {
                "type": {"type": "string", "description": "Condition type, e.g. Ready."},
                "status": {
                    "type": "string",
                    "enum": ["True", "False", "Unknown"],
                    "description": "True, False or Unknown."
                },
                "reason": {"type": "string", "description": "CamelCase reason for the last transition."},
                "message": {"type": "string", "description": "Human-readable details."},
                "lastTransitionTime": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When status last changed."
                },
                "observedGeneration": {
                    "type": "integer",
                    "format": "int64",
                    "description": "The metadata.generation the condition was set for."
                }
            }
        }
    })
}

/// Where the experiment is.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
pub enum StatusPhase {
    /// Accepted, nothing started yet.
    Pending,
    /// Replica sets are being created or are not ready.
    Provisioning,
    /// Data is being loaded.
    Seeding,
    /// Measured runs are in progress.
    Running,
    /// All cells measured; comparisons are being computed.
    Analyzing,
    /// Done; results and comparisons are in status.
    Completed,
    /// Stopped by an error that needs a change to the spec or the cluster.
    Failed,
    /// Paused by `spec.suspend`.
    Suspended,
}

/// Number of cells in each state.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CellCounts {
    /// All cells of the plan.
    pub total: u32,
    /// Cells not started.
    pub pending: u32,
    /// Cells being seeded or measured.
    pub running: u32,
    /// Cells with a complete and valid result.
    pub completed: u32,
    /// Cells with a complete result that failed a validity gate (left out of comparisons).
    #[serde(default)]
    pub invalid: u32,
    /// Cells that failed.
    pub failed: u32,
}

/// A deployed target on one platform.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct TargetStatus {
    /// Target name.
    pub target: String,
    /// Platform name.
    pub platform: String,
    /// Image reference with the digest it resolved to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_digest: Option<String>,
    /// Version reported by the server (`buildInfo.version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// Members ready (for external targets, members seen); for a sharded target, every
    /// member and router ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_members: Option<u32>,
    /// A provisioned sharded target's shape, e.g. `sharded: 2 shards × 3 members, 3 config
    /// servers, 2 mongos`; absent for a replica set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    /// The nodes the members ran on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeInfo>,
}

/// How the targets of one platform are run.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct RunnerStatus {
    /// Platform name.
    pub platform: String,
    /// The platform's targets, in the order the runners take them.
    pub targets: Vec<String>,
    /// True when one runner Job runs every target of the platform, repetitions interleaved
    /// (A B C A B C), so slow drift of the machines favours none of them; false when the
    /// targets run one after another, one runner Job each.
    pub interleaved: bool,
    /// Why: `SingleTarget`, `AllExternal`, `OneReplicaSet`, `Fits` (the platform's nodes hold
    /// every replica set at once), `InsufficientCapacity`, `NodesUnreadable`, or `Started`
    /// (the runners started that way before this was recorded).
    pub reason: String,
    /// The same in words, e.g. `platform n2-icelake holds 2 of 3 replica sets at once (...)`.
    pub message: String,
    /// The runner Jobs of the platform, in the order they run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<String>,
}

/// A node a member ran on.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    /// Node name.
    pub name: String,
    /// CPU model (from hostInfo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// CPU architecture, e.g. `amd64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Kernel version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Zone (`topology.kubernetes.io/zone`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Instance type (`node.kubernetes.io/instance-type`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// CPU platform (`mongobench.io/cpu-platform`, else the machine family).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_platform: Option<String>,
}

/// One measured cell: a target on a platform at a dataset size, one repetition.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CellStatus {
    /// Stable cell identifier, used in result labels.
    pub id: String,
    /// Target name.
    pub target: String,
    /// Platform name.
    pub platform: String,
    /// Dataset size as written in the spec, e.g. `4M`.
    pub size: String,
    /// Repetition number, from 1.
    pub repetition: u32,
    /// State of the cell.
    pub phase: CellPhase,
    /// Why the cell failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// While it runs, what its runner does: `seeding` (its size), `restoring`, `warmup`,
    /// `settling`, `measuring` or `explaining`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<String>,
    /// Measured throughput, operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_second: Option<f64>,
    /// Latency percentiles per operation type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latencies: Vec<OperationLatency>,
    /// Server CPU time (user + system, all members) per operation, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_micros_per_op: Option<f64>,
    /// Bottleneck regime the server figures imply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime: Option<Regime>,
    /// Traffic fingerprint (first 16 hex characters); equal fingerprints mean equal traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Where the full result is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_ref: Option<ResultRef>,
    /// A load sweep's curve and knee (`workload.sweep`); `opsPerSecond` and `latencies` are
    /// then the knee step's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<CellSweep>,
    /// On a sharded target: how the collection lay over the shards after the measured phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<CellShards>,
}

/// How one cell's collection lay over the shards after its measured phase.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CellShards {
    /// Documents per shard, in shard order, e.g. `[500312, 499688]`.
    pub documents: Vec<u64>,
    /// Chunks per shard, in the same order.
    pub chunks: Vec<u64>,
    /// How far the fullest shard was above the mean, % of the mean.
    pub skew_percent: f64,
    /// Chunks that moved during the measured phase.
    pub chunks_moved: u64,
    /// What was wrong (skew over the limit, chunks moved), as sentences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
}

/// The curve and knee of one cell's load sweep.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CellSweep {
    /// The latency goal, e.g. `p99 ≤ 10ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The most operations per second sustained under the goal (the knee step's achieved
    /// rate); absent when no step sustained its load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_ops_per_second: Option<f64>,
    /// Whether a saturated step lies above the knee (else the knee is a lower bound).
    pub bounded: bool,
    /// Every step, in the order they ran.
    pub steps: Vec<SweepPoint>,
}

/// One step of a load sweep.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SweepPoint {
    /// The rate it was paced to; absent for a closed-loop step of a ladder of workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ops_per_second: Option<u64>,
    /// Its workers.
    pub workers: u32,
    /// The rate it achieved.
    pub ops_per_second: f64,
    /// Median latency of all operations, from the intended start (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_micros: Option<u64>,
    /// 99th percentile (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_micros: Option<u64>,
    /// 99.9th percentile (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_micros: Option<u64>,
    /// Whether it fell short of its rate, failed over the error budget or broke the goal.
    pub saturated: bool,
}

/// State of one cell.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum CellPhase {
    /// Not started.
    #[default]
    Pending,
    /// Being seeded or measured.
    Running,
    /// Measured; the result is referenced.
    Completed,
    /// Measured, but a validity gate failed (see `message`): the result is kept and referenced
    /// and left out of comparisons.
    Invalid,
    /// Failed; see `message`.
    Failed,
}

/// Latency percentiles of one operation type, in microseconds.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct OperationLatency {
    /// Operation type, e.g. `find`, `READ`.
    pub operation: String,
    /// Median.
    pub p50_micros: u64,
    /// 95th percentile.
    pub p95_micros: u64,
    /// 99th percentile.
    pub p99_micros: u64,
}

/// What limited the server in a cell.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
pub enum Regime {
    /// The working set fits in the WiredTiger cache.
    CacheResident,
    /// CPU-bound.
    CpuBound,
    /// Disk reads dominate.
    IoBound,
    /// The client was saturated: not a server result.
    ClientBound,
}

/// Reference to a full result.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ResultRef {
    /// Name of the ConfigMap (in the MongoBenchmark's namespace) that holds the result.
    pub config_map: String,
    /// Key of the result within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// One target against the baseline on one platform at one size, over all repetitions.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Platform name.
    pub platform: String,
    /// Dataset size as written in the spec.
    pub size: String,
    /// The compared target.
    pub target: String,
    /// The baseline target.
    pub baseline: String,
    /// Valid repetitions of the target behind the figures.
    #[serde(default)]
    pub repetitions: u32,
    /// Valid repetitions of the baseline.
    #[serde(default)]
    pub baseline_repetitions: u32,
    /// Throughput change against the baseline, in percent (+ is faster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_delta_percent: Option<f64>,
    /// Lower end of the 95 % interval of the throughput change, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ci95_low_percent: Option<f64>,
    /// Upper end of the 95 % interval of the throughput change, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ci95_high_percent: Option<f64>,
    /// p-value of the throughput test (paired by slot, else Welch's) after Holm–Bonferroni
    /// over the benchmark's comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted_p_value: Option<f64>,
    /// The smallest throughput change, in percent, these repetitions detect with 80 % power.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_detectable_effect_percent: Option<f64>,
    /// Slots in which both targets have a valid repetition, when the test paired them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_slots: Option<u32>,
    /// Coefficient of variation of the target's throughput over its valid repetitions, in
    /// percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_percent: Option<f64>,
    /// Coefficient of variation of the baseline's throughput, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_cv_percent: Option<f64>,
    /// Paired only: coefficient of variation of the per-slot throughput ratios, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_ratio_cv_percent: Option<f64>,
    /// Change of server CPU per operation, in percent (− is cheaper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_op_delta_percent: Option<f64>,
    /// Change of the overall p99 latency, in percent (− is better).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_delta_percent: Option<f64>,
    /// Cost of one million operations of the target, in the platform's currency (when the
    /// platform has a price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_million_ops: Option<f64>,
    /// The verdict, taking the spread of the repetitions into account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Why the verdict is Inconclusive or NotComparable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cells measured at the same time as the baseline's (`parallelism: Simultaneous`): how
    /// far that cancelled the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous: Option<SimultaneousStatus>,
}

/// What a comparison of cells measured at the same time says beside its verdict.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SimultaneousStatus {
    /// Slots in which both targets were measured at the same time.
    pub slots: u32,
    /// Median correlation of the targets' per-second throughput (near 1: what disturbed one
    /// disturbed the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<f64>,
    /// How much the per-second ratio moved across the window, in percent (mean over slots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_trend_percent: Option<f64>,
    /// Where the targets traded sides: how much faster the first side made the target on it,
    /// in percent, removed from the throughput change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effect_percent: Option<f64>,
    /// What to know: no crossover and why, a low correlation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Outcome of a comparison.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
pub enum Verdict {
    /// Throughput significantly higher than the baseline's.
    Faster,
    /// Throughput significantly lower than the baseline's.
    Slower,
    /// Tested; the difference is not significant.
    NoSignificantDifference,
    /// Too few valid repetitions for a test.
    Inconclusive,
    /// The workload identities differ: not the same experiment.
    NotComparable,
}

impl MongoBenchmarkStatus {
    /// The condition of type `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// True when the condition of type `type_` has status `True`.
    pub fn condition_is_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.status == "True")
    }
}
