//! `spec.workload`: the load applied in every cell. `type` picks the generator (`flights`,
//! `ycsb` or `custom`); the matching sibling block holds its knobs (or, for `custom`, where its
//! document is), under the names of the workload specs
//! (flights.md §9, YCSB CoreWorkload properties in camelCase). Settings shared by both
//! (workers, run length, warm-up, pacing, seed, concerns) sit directly under `workload`.

use std::time::Duration;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::custom::CustomSource;
use super::flights::Flights;
use super::sharding::WorkloadSharding;
use super::sweep::Sweep;
use super::units::{self, UnitsError};
use super::warmup::WarmupUntilSettled;
use super::ycsb::Ycsb;

/// Default of `spec.workload.workers`.
pub const DEFAULT_WORKERS: u32 = 16;
/// Measured window when neither `duration` nor `operations` is set.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(600);
/// Warm-up when neither `warmup` nor `warmupOperations` is set.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(60);
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of `spec.workload.seed`.
pub const DEFAULT_SEED: u64 = 1;
/// `pattern` of `spec.workload.writeConcern`.
pub const WRITE_CONCERN_PATTERN: &str = "^(default|majority|[1-9][0-9]?)$";

/// The load applied in every cell.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.type == 'flights' || !has(self.flights)")
    .message("spec.workload.flights applies only to type flights").field_path(".flights"))]
#[x_kube(validation = Rule::new("self.type == 'ycsb' || !has(self.ycsb)")
    .message("spec.workload.ycsb applies only to type ycsb").field_path(".ycsb"))]
#[x_kube(validation = Rule::new("self.type != 'ycsb' || has(self.ycsb)")
    .message("spec.workload.ycsb is required when type is ycsb (it names the YCSB workload, a to f)")
    .field_path(".ycsb"))]
#[x_kube(validation = Rule::new("self.type == 'custom' || !has(self.custom)")
    .message("spec.workload.custom applies only to type custom").field_path(".custom"))]
#[x_kube(validation = Rule::new("self.type != 'custom' || has(self.custom)")
    .message("spec.workload.custom is required when type is custom (inline, file or configMapRef)")
    .field_path(".custom"))]
#[x_kube(validation = Rule::new("self.type != 'custom' || (!has(self.duration) && !has(self.operations) && !has(self.warmup) && !has(self.warmupOperations) && !has(self.warmupUntilSettled) && !has(self.sweep))")
    .message("spec.workload: a custom workload's phases set its run length and warm-up; set none of duration, operations, warmup, warmupOperations, warmupUntilSettled, sweep")
    .field_path(".custom"))]
#[x_kube(validation = Rule::new("!has(self.duration) || !has(self.operations)")
    .message("spec.workload: set duration or operations, not both").field_path(".operations"))]
#[x_kube(validation = Rule::new("!has(self.warmup) || !has(self.warmupOperations)")
    .message("spec.workload: set warmup or warmupOperations, not both")
    .field_path(".warmupOperations"))]
#[x_kube(validation = Rule::new("!has(self.warmupUntilSettled) || !has(self.warmupOperations)")
    .message("spec.workload.warmupUntilSettled: rounds last warmup, a duration; leave warmupOperations unset")
    .field_path(".warmupUntilSettled"))]
#[x_kube(validation = Rule::new("!has(self.sweep) || (!has(self.duration) && !has(self.operations))")
    .message("spec.workload: a sweep's steps last sweep.stepDuration; set neither duration nor operations")
    .field_path(".sweep"))]
#[x_kube(validation = Rule::new("!has(self.sweep) || !has(self.targetOpsPerSecond) || self.targetOpsPerSecond == 0")
    .message("spec.workload: a sweep sets each step's rate; leave targetOpsPerSecond unset")
    .field_path(".sweep"))]
#[x_kube(validation = Rule::new("!has(self.sweep) || !has(self.sweep.workers) || size(self.sweep.workers) == 0 || !has(self.workers)")
    .message("spec.workload: a ladder of workers sets each step's workers; leave workers unset")
    .field_path(".sweep.workers"))]
pub struct Workload {
    /// The workload generator: `flights` (plgm-style flights, see `flights`), `ycsb` (YCSB
    /// core workloads A to F, see `ycsb`) or `custom` (collections, operations and phases
    /// described as data, see `custom`).
    #[serde(rename = "type")]
    pub kind: WorkloadType,

    /// Knobs of the flights workload (type `flights`); every knob has a default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flights: Option<Flights>,

    /// The YCSB workload and overrides of its core properties (type `ycsb`; required then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ycsb: Option<Ycsb>,

    /// Where the document of a custom workload is (type `custom`; required then):
    /// docs/specs/custom.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomSource>,

    /// Concurrent client workers, one operation in flight each (1 to 4096, default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 4096), extend("default" = 16))]
    pub workers: Option<u32>,

    /// Length of each measured run, e.g. `10m`, `90s`, `1h30m` (default `10m` unless
    /// `operations` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    #[x_kube(validation = Rule::new("self.matches('[1-9]')")
        .message("spec.workload.duration must be longer than 0"))]
    pub duration: Option<String>,

    /// Total operations of each measured run, split over the workers; makes the run
    /// operation-bound instead of time-bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub operations: Option<u64>,

    /// Unmeasured warm-up before each measured run, e.g. `1m` (default `1m`; `0` disables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    pub warmup: Option<String>,

    /// Warm-up as a number of operations instead of a duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_operations: Option<u64>,

    /// Repeat the warm-up, in rounds of `warmup`, until throughput has levelled off
    /// (docs/results.md, "Warm-up until settled"); needs `warmup` of at least 7 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_until_settled: Option<WarmupUntilSettled>,

    /// Pause of each worker before each operation, outside the measured latency, e.g. `5ms`
    /// (default `0`: no think time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32),
        pattern(units::DURATION_PATTERN),
        extend("default" = "0"))]
    pub think_time: Option<String>,

    /// Random extra pause, uniform between 0 and this, added to `thinkTime` (default `0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32),
        pattern(units::DURATION_PATTERN),
        extend("default" = "0"))]
    pub think_jitter: Option<String>,

    /// Total operations per second the workers are paced to; 0 (default) runs closed-loop,
    /// as fast as the server answers. With a rate, latency is measured from each operation's
    /// intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100000000), extend("default" = 0))]
    pub target_ops_per_second: Option<u64>,

    /// Seed of the operation stream (default 1). The same seed, workers and operation counts
    /// send the same traffic, proven by the fingerprint in the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1))]
    pub seed: Option<u64>,

    /// Write concern of the workload's writes: `default` (the target URI's `w`, else the
    /// server's default, majority on a replica set), `majority`, or a number of members (`1` to
    /// `99`). Unset: `default` for flights, `1` for ycsb (YCSB's default URL sets `w=1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(WRITE_CONCERN_PATTERN))]
    pub write_concern: Option<String>,

    /// Read preference of the workload's reads (default `primary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "primary"))]
    pub read_preference: Option<ReadPreference>,

    /// Wire compressors the client offers, in order of preference (default: those of the
    /// target URI's `compressors`, none without); the server uses the first it also supports.
    /// `[zlib, snappy]` mimics plgm's shipped configuration, `[zstd]` plgm's default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub wire_compressors: Vec<WireCompressor>,

    /// Longest the runner waits for the reply to one database operation, e.g. `30s` (default
    /// `30s`): a workload operation, a seeding batch, a statistics call. Commands whose work grows
    /// with the collection (index builds, counts, the dataset digest) get ten times this. A
    /// server that does not answer within it ends the cell as INCOMPLETE instead of hanging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32),
        pattern(units::DURATION_PATTERN),
        extend("default" = "30s"))]
    #[x_kube(validation = Rule::new("self.matches('[1-9]')")
        .message("spec.workload.operationTimeout must be longer than 0"))]
    pub operation_timeout: Option<String>,

    /// Measure a series of steps of rising load and report the knee, the most load sustained
    /// under a latency goal, instead of one measured phase (docs/results.md, "Load sweeps").
    /// Each step is open-loop at its rate, for `stepDuration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,

    /// How the workload's collections are sharded on every target with `topology: sharded`:
    /// shard key, pre-split and balancer policy. Required when a target is sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<WorkloadSharding>,
}

/// How long a measured run (or a warm-up) lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "RunLengthDoc", try_from = "RunLengthDoc")]
pub enum RunLength {
    /// Until this much time has passed.
    Duration(Duration),
    /// Until this many operations (over all workers) have completed.
    Operations(u64),
}

/// A [`RunLength`] in a plan file: `{ms: 30000}` or `{operations: 1000}`.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RunLengthDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    operations: Option<u64>,
}

impl From<RunLength> for RunLengthDoc {
    fn from(length: RunLength) -> RunLengthDoc {
        match length {
            RunLength::Duration(d) => RunLengthDoc {
                ms: Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                operations: None,
            },
            RunLength::Operations(n) => RunLengthDoc {
                ms: None,
                operations: Some(n),
            },
        }
    }
}

impl TryFrom<RunLengthDoc> for RunLength {
    type Error = &'static str;

    fn try_from(doc: RunLengthDoc) -> Result<RunLength, &'static str> {
        match (doc.ms, doc.operations) {
            (Some(ms), None) => Ok(RunLength::Duration(Duration::from_millis(ms))),
            (None, Some(n)) => Ok(RunLength::Operations(n)),
            _ => Err("a run length is one of ms or operations"),
        }
    }
}

impl Workload {
    /// Effective `workers` (default 16).
    pub fn workers(&self) -> u32 {
        self.workers.unwrap_or(DEFAULT_WORKERS)
    }

    /// Most workers any phase runs: the top of a ladder of workers, else `workers` (the
    /// connections a target is opened with).
    pub fn most_workers(&self) -> u32 {
        self.sweep
            .as_ref()
            .and_then(|s| s.workers.iter().max().copied())
            .unwrap_or(self.workers())
    }

    /// Fewest workers any phase runs: the bottom of a ladder of workers, else `workers`.
    pub fn fewest_workers(&self) -> u32 {
        self.sweep
            .as_ref()
            .and_then(|s| s.workers.iter().min().copied())
            .unwrap_or(self.workers())
    }

    /// Effective length of a measured run: `operations`, else `duration`, else 10 minutes.
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when `duration` does not parse.
    pub fn run_length(&self) -> Result<RunLength, UnitsError> {
        match (&self.duration, self.operations) {
            (_, Some(n)) => Ok(RunLength::Operations(n)),
            (Some(d), None) => units::parse_duration(d).map(RunLength::Duration),
            (None, None) => Ok(RunLength::Duration(DEFAULT_DURATION)),
        }
    }

    /// Effective warm-up: `warmupOperations`, else `warmup`, else 1 minute.
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when `warmup` does not parse.
    pub fn warmup(&self) -> Result<RunLength, UnitsError> {
        match (&self.warmup, self.warmup_operations) {
            (_, Some(n)) => Ok(RunLength::Operations(n)),
            (Some(d), None) => units::parse_duration(d).map(RunLength::Duration),
            (None, None) => Ok(RunLength::Duration(DEFAULT_WARMUP)),
        }
    }

    /// Effective think time (default zero).
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when `thinkTime` does not parse.
    pub fn think_time(&self) -> Result<Duration, UnitsError> {
        self.think_time
            .as_deref()
            .map_or(Ok(Duration::ZERO), units::parse_duration)
    }

    /// Effective operation timeout (default 30 s).
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when `operationTimeout` does not parse.
    pub fn operation_timeout(&self) -> Result<Duration, UnitsError> {
        self.operation_timeout
            .as_deref()
            .map_or(Ok(DEFAULT_OPERATION_TIMEOUT), units::parse_duration)
    }

    /// Effective think-time jitter (default zero).
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when `thinkJitter` does not parse.
    pub fn think_jitter(&self) -> Result<Duration, UnitsError> {
        self.think_jitter
            .as_deref()
            .map_or(Ok(Duration::ZERO), units::parse_duration)
    }

    /// Effective target rate; `None` means closed loop (unset or 0).
    pub fn target_ops_per_second(&self) -> Option<u64> {
        self.target_ops_per_second.filter(|&r| r > 0)
    }

    /// Effective `seed` (default 1).
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(DEFAULT_SEED)
    }

    /// Effective write concern; `WriteConcern::Default` sends the URI's (or none: the server
    /// default). Unset, flights uses `Default` and YCSB `w: 1`, the `w=1` of YCSB's default URL
    /// (specs/ycsb.md §6). A value outside the grammar also reads as `Default`; `validate`
    /// refuses it.
    pub fn write_concern(&self) -> WriteConcern {
        match self.write_concern.as_deref() {
            Some("majority") => WriteConcern::Majority,
            Some(w) => w
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .map_or(WriteConcern::Default, WriteConcern::Nodes),
            None if self.kind == WorkloadType::Ycsb => WriteConcern::Nodes(1),
            None => WriteConcern::Default,
        }
    }

    /// Effective read preference (default `primary`).
    pub fn read_preference(&self) -> ReadPreference {
        self.read_preference.unwrap_or_default()
    }

    /// Effective flights knobs (all defaults when `flights` is absent).
    pub fn flights(&self) -> Flights {
        self.flights.clone().unwrap_or_default()
    }
}

/// The workload generator.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadType {
    /// plgm-style flights workload (`flights/v1`): finds, updates, deletes and batched inserts
    /// on an airline collection with seven indexes.
    Flights,
    /// YCSB core workloads A to F.
    Ycsb,
    /// A workload described as data (`custom/v1`).
    Custom,
}

impl WorkloadType {
    /// The value as written in the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadType::Flights => "flights",
            WorkloadType::Ycsb => "ycsb",
            WorkloadType::Custom => "custom",
        }
    }
}

/// A write concern, as the workload's writes send it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteConcern {
    /// No explicit write concern: the server's default applies.
    Default,
    /// `{w: "majority"}`.
    Majority,
    /// `{w: n}`.
    Nodes(u32),
}

/// Read preference of the workload's reads.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "camelCase")]
pub enum ReadPreference {
    /// Read from the primary only.
    #[default]
    Primary,
    /// Primary, or a secondary when no primary is available.
    PrimaryPreferred,
    /// Secondaries only.
    Secondary,
    /// A secondary, or the primary when none is available.
    SecondaryPreferred,
    /// The member with the lowest latency.
    Nearest,
}

/// A wire-protocol compressor.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum WireCompressor {
    /// zlib.
    Zlib,
    /// Snappy.
    Snappy,
    /// Zstandard.
    Zstd,
}
#[cfg(test)]
mod tests {
    use super::*;

    fn workload(yaml: &str) -> Workload {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn run_length_prefers_operations_then_duration_then_ten_minutes() {
        assert_eq!(
            workload("type: flights").run_length(),
            Ok(RunLength::Duration(Duration::from_secs(600)))
        );
        assert_eq!(
            workload("{type: flights, duration: 1h30m}").run_length(),
            Ok(RunLength::Duration(Duration::from_secs(5400)))
        );
        assert_eq!(
            workload("{type: flights, operations: 250000}").run_length(),
            Ok(RunLength::Operations(250_000))
        );
        assert_eq!(
            workload("{type: flights, duration: 10min}").run_length(),
            Err(UnitsError::Duration {
                value: "10min".into()
            })
        );
    }

    #[test]
    fn warmup_and_think_time_defaults() {
        let w = workload("type: flights");
        assert_eq!(w.warmup(), Ok(RunLength::Duration(Duration::from_secs(60))));
        assert_eq!(w.think_time(), Ok(Duration::ZERO));
        assert_eq!(w.think_jitter(), Ok(Duration::ZERO));
        assert_eq!(w.workers(), 16);
        assert_eq!(w.seed(), 1);
        assert_eq!(w.target_ops_per_second(), None);
        assert_eq!(w.read_preference(), ReadPreference::Primary);
        let w = workload(
            "{type: flights, warmupOperations: 5000, thinkTime: 5ms, thinkJitter: 2ms, \
             targetOpsPerSecond: 0}",
        );
        assert_eq!(w.warmup(), Ok(RunLength::Operations(5000)));
        assert_eq!(w.think_time(), Ok(Duration::from_millis(5)));
        assert_eq!(w.think_jitter(), Ok(Duration::from_millis(2)));
        assert_eq!(w.target_ops_per_second(), None);
        let w = workload("{type: flights, targetOpsPerSecond: 2000}");
        assert_eq!(w.target_ops_per_second(), Some(2000));
    }

    #[test]
    fn write_concern_values() {
        let wc =
            |v: &str| workload(&format!("{{type: flights, writeConcern: '{v}'}}")).write_concern();
        assert_eq!(
            workload("type: flights").write_concern(),
            WriteConcern::Default
        );
        assert_eq!(wc("default"), WriteConcern::Default);
        assert_eq!(wc("majority"), WriteConcern::Majority);
        assert_eq!(wc("1"), WriteConcern::Nodes(1));
        assert_eq!(wc("3"), WriteConcern::Nodes(3));
        // YCSB's default URL says w=1; an explicit value, `default` included, wins.
        let ycsb = |extra: &str| {
            workload(&format!("{{type: ycsb, ycsb: {{workload: a}}{extra}}}")).write_concern()
        };
        assert_eq!(ycsb(""), WriteConcern::Nodes(1));
        assert_eq!(ycsb(", writeConcern: default"), WriteConcern::Default);
        assert_eq!(ycsb(", writeConcern: majority"), WriteConcern::Majority);
    }
}
