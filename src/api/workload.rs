//! `spec.workload`: the load applied in every cell. `type` picks the generator (`flights` or
//! `ycsb`); the matching sibling block holds its knobs, under the names of the workload specs
//! (flights.md §9, YCSB CoreWorkload properties in camelCase). Settings shared by both
//! (workers, run length, warm-up, pacing, seed, concerns) sit directly under `workload`.

use std::time::Duration;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::{self, UnitsError};

/// Default of `spec.workload.workers`.
pub const DEFAULT_WORKERS: u32 = 16;
/// Measured window when neither `duration` nor `operations` is set.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(600);
/// Warm-up when neither `warmup` nor `warmupOperations` is set.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(60);
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
#[x_kube(validation = Rule::new("!has(self.duration) || !has(self.operations)")
    .message("spec.workload: set duration or operations, not both").field_path(".operations"))]
#[x_kube(validation = Rule::new("!has(self.warmup) || !has(self.warmupOperations)")
    .message("spec.workload: set warmup or warmupOperations, not both")
    .field_path(".warmupOperations"))]
pub struct Workload {
    /// The workload generator: `flights` (plgm-style flights, see `flights`) or `ycsb`
    /// (YCSB core workloads A to F, see `ycsb`).
    #[serde(rename = "type")]
    pub kind: WorkloadType,

    /// Knobs of the flights workload (type `flights`); every knob has a default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flights: Option<Flights>,

    /// The YCSB workload and overrides of its core properties (type `ycsb`; required then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ycsb: Option<Ycsb>,

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

    /// Write concern of the workload's writes: `default` (the server's default, majority on a
    /// replica set), `majority`, or a number of members (`1` to `99`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(WRITE_CONCERN_PATTERN), extend("default" = "default"))]
    pub write_concern: Option<String>,

    /// Read preference of the workload's reads (default `primary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "primary"))]
    pub read_preference: Option<ReadPreference>,

    /// Wire compressors the client offers, in order of preference (default none);
    /// `[zlib, snappy]` mimics plgm's shipped configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 3))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub wire_compressors: Vec<WireCompressor>,
}

/// How long a measured run (or a warm-up) lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunLength {
    /// Until this much time has passed.
    Duration(Duration),
    /// Until this many operations (over all workers) have completed.
    Operations(u64),
}

impl Workload {
    /// Effective `workers` (default 16).
    pub fn workers(&self) -> u32 {
        self.workers.unwrap_or(DEFAULT_WORKERS)
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

    /// Effective write concern; `WriteConcern::Default` sends none (server default).
    /// A value outside the grammar also reads as `Default`; `validate` refuses it.
    pub fn write_concern(&self) -> WriteConcern {
        match self.write_concern.as_deref() {
            Some("majority") => WriteConcern::Majority,
            Some(w) => w
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .map_or(WriteConcern::Default, WriteConcern::Nodes),
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
}

impl WorkloadType {
    /// The value as written in the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadType::Flights => "flights",
            WorkloadType::Ycsb => "ycsb",
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

// CEL: an optional integer field with its default.
macro_rules! or_default {
    ($field:literal, $default:literal) => {
        concat!(
            "(has(self.",
            $field,
            ") ? self.",
            $field,
            " : ",
            $default,
            ")"
        )
    };
}

/// Knobs of the flights workload (flights.md §9), every one with the default of the spec.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("findPercent", "60"), " + ", or_default!("updatePercent", "20"), " + ",
    or_default!("deletePercent", "10"), " + ", or_default!("insertPercent", "10"), " + ",
    or_default!("aggregatePercent", "0"), " + ", or_default!("transactionPercent", "0"),
    " == 100"))
    .message("spec.workload.flights: findPercent + updatePercent + deletePercent + insertPercent + aggregatePercent + transactionPercent must sum to 100"))]
pub struct Flights {
    /// Version of the workload definition (default `flights/v1`); part of the dataset identity
    /// and of the traffic fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "flights/v1"))]
    pub version: Option<FlightsVersion>,

    /// Share of finds, in percent (default 60). The six percentages must sum to 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 60))]
    pub find_percent: Option<u32>,
    /// Share of updates, in percent (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 20))]
    pub update_percent: Option<u32>,
    /// Share of deletes, in percent (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub delete_percent: Option<u32>,
    /// Share of batched inserts, in percent (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub insert_percent: Option<u32>,
    /// Share of aggregations, in percent (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub aggregate_percent: Option<u32>,
    /// Share of seat-transfer transactions, in percent (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub transaction_percent: Option<u32>,

    /// How finds divide among their shapes (default byFlightId 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_split: Option<FindSplit>,
    /// How updates divide among their shapes (default 80 / 10 / 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_split: Option<WriteSplit>,
    /// How deletes divide among their shapes (default 80 / 10 / 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_split: Option<WriteSplit>,
    /// How aggregations divide among their pipelines (default 50 / 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_split: Option<AggregateSplit>,

    /// Share of finds, updates and deletes aimed at an existing document, 0 to 1 (default 0.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0), extend("default" = 0.9))]
    pub hit_rate: Option<f64>,
    /// Limit of the byFlightId find (1 to 1000, default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000), extend("default" = 5))]
    pub find_limit: Option<u32>,
    /// Width of the flight_id window of the aircraftWindow aggregation (1 to 1000000,
    /// default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000000), extend("default" = 100))]
    pub agg_window: Option<u32>,
    /// Documents per insert command (1 to 1000, default 10); one command is one operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000), extend("default" = 10))]
    pub insert_batch_size: Option<u32>,
    /// Secondary indexes: `plgm6` (default; plgm's six, as in the Percona study) or `seven`
    /// (adds `flight_id_1`). Results of the two are not comparable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "plgm6"))]
    pub index_set: Option<IndexSet>,
    /// explain() samples recorded per query shape after each run (0 to 100, default 3; 0
    /// disables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 3))]
    pub explain_samples: Option<u32>,
}

/// The effective operation mix of the flights workload, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlightsMix {
    /// Finds.
    pub find: u32,
    /// Updates.
    pub update: u32,
    /// Deletes.
    pub delete: u32,
    /// Batched inserts.
    pub insert: u32,
    /// Aggregations.
    pub aggregate: u32,
    /// Transactions.
    pub transaction: u32,
}

impl FlightsMix {
    /// Sum of the six shares (must be 100).
    pub fn total(&self) -> u32 {
        self.find + self.update + self.delete + self.insert + self.aggregate + self.transaction
    }
}

impl Flights {
    /// Effective operation mix (defaults 60 / 20 / 10 / 10 / 0 / 0).
    pub fn mix(&self) -> FlightsMix {
        FlightsMix {
            find: self.find_percent.unwrap_or(60),
            update: self.update_percent.unwrap_or(20),
            delete: self.delete_percent.unwrap_or(10),
            insert: self.insert_percent.unwrap_or(10),
            aggregate: self.aggregate_percent.unwrap_or(0),
            transaction: self.transaction_percent.unwrap_or(0),
        }
    }

    /// Effective find split.
    pub fn find_split(&self) -> FindSplit {
        self.find_split.clone().unwrap_or_default()
    }

    /// Effective update split.
    pub fn update_split(&self) -> WriteSplit {
        self.update_split.clone().unwrap_or_default()
    }

    /// Effective delete split.
    pub fn delete_split(&self) -> WriteSplit {
        self.delete_split.clone().unwrap_or_default()
    }

    /// Effective aggregate split.
    pub fn aggregate_split(&self) -> AggregateSplit {
        self.aggregate_split.clone().unwrap_or_default()
    }

    /// Effective `hitRate` (default 0.9).
    pub fn hit_rate(&self) -> f64 {
        self.hit_rate.unwrap_or(0.9)
    }

    /// Effective `findLimit` (default 5).
    pub fn find_limit(&self) -> u32 {
        self.find_limit.unwrap_or(5)
    }

    /// Effective `aggWindow` (default 100).
    pub fn agg_window(&self) -> u32 {
        self.agg_window.unwrap_or(100)
    }

    /// Effective `insertBatchSize` (default 10).
    pub fn insert_batch_size(&self) -> u32 {
        self.insert_batch_size.unwrap_or(10)
    }

    /// Effective `indexSet` (default `plgm6`).
    pub fn index_set(&self) -> IndexSet {
        self.index_set.unwrap_or_default()
    }

    /// Effective `explainSamples` (default 3).
    pub fn explain_samples(&self) -> u32 {
        self.explain_samples.unwrap_or(3)
    }
}

/// Version of the flights workload definition.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
pub enum FlightsVersion {
    /// `flights/v1`.
    #[default]
    #[serde(rename = "flights/v1")]
    V1,
}

/// Set of secondary indexes of the flights collection.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum IndexSet {
    /// plgm's six secondary indexes (with `_id_`, seven entries).
    #[default]
    Plgm6,
    /// The six plus `flight_id_1`.
    Seven,
}

/// How finds divide among their three shapes, in percent (sums to 100).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("byFlightId", "100"), " + ", or_default!("byRoute", "0"), " + ",
    or_default!("byStatus", "0"), " == 100"))
    .message("spec.workload.flights.findSplit: byFlightId + byRoute + byStatus must sum to 100"))]
pub struct FindSplit {
    /// Finds by flight_id with a projection and limit (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 100))]
    pub by_flight_id: Option<u32>,
    /// Finds by origin and destination, newest first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub by_route: Option<u32>,
    /// Finds by status (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 0))]
    pub by_status: Option<u32>,
}

impl FindSplit {
    /// Effective shares (byFlightId, byRoute, byStatus).
    pub fn shares(&self) -> [u32; 3] {
        [
            self.by_flight_id.unwrap_or(100),
            self.by_route.unwrap_or(0),
            self.by_status.unwrap_or(0),
        ]
    }
}

/// How updates (or deletes) divide among their three shapes, in percent (sums to 100).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("oneByFlightId", "80"), " + ", or_default!("oneById", "10"), " + ",
    or_default!("manyByFlightId", "10"), " == 100"))
    .message("oneByFlightId + oneById + manyByFlightId must sum to 100"))]
pub struct WriteSplit {
    /// One document by flight_id (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 80))]
    pub one_by_flight_id: Option<u32>,
    /// One document by `_id`, the express path of MongoDB 8.0+ (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub one_by_id: Option<u32>,
    /// Every document sharing a flight_id (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 10))]
    pub many_by_flight_id: Option<u32>,
}

impl WriteSplit {
    /// Effective shares (oneByFlightId, oneById, manyByFlightId).
    pub fn shares(&self) -> [u32; 3] {
        [
            self.one_by_flight_id.unwrap_or(80),
            self.one_by_id.unwrap_or(10),
            self.many_by_flight_id.unwrap_or(10),
        ]
    }
}

/// How aggregations divide among their two pipelines, in percent (sums to 100).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    or_default!("aircraftWindow", "50"), " + ", or_default!("routeSummary", "50"), " == 100"))
    .message("spec.workload.flights.aggregateSplit: aircraftWindow + routeSummary must sum to 100"))]
pub struct AggregateSplit {
    /// Per-aircraft statistics over a window of flight_ids (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 50))]
    pub aircraft_window: Option<u32>,
    /// Per-airline statistics of one route (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100), extend("default" = 50))]
    pub route_summary: Option<u32>,
}

impl AggregateSplit {
    /// Effective shares (aircraftWindow, routeSummary).
    pub fn shares(&self) -> [u32; 2] {
        [
            self.aircraft_window.unwrap_or(50),
            self.route_summary.unwrap_or(50),
        ]
    }
}

// CEL: the effective value of a YCSB proportion, from the override or the workload file.
macro_rules! ycsb_proportion {
    ($field:literal, $a:literal, $b:literal, $c:literal, $d:literal, $e:literal, $f:literal) => {
        concat!(
            "(has(self.",
            $field,
            ") ? self.",
            $field,
            " : {'a': ",
            $a,
            ", 'b': ",
            $b,
            ", 'c': ",
            $c,
            ", 'd': ",
            $d,
            ", 'e': ",
            $e,
            ", 'f': ",
            $f,
            "}[self.workload])"
        )
    };
}

/// A YCSB core workload (A to F) and optional overrides of its CoreWorkload properties (named
/// as YCSB's, in camelCase). The record count comes from `dataset.sizes` and the operation
/// count from `workload.operations`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(concat!(
    ycsb_proportion!("readProportion", "0.5", "0.95", "1.0", "0.95", "0.0", "0.5"), " + ",
    ycsb_proportion!("updateProportion", "0.5", "0.05", "0.0", "0.0", "0.0", "0.0"), " + ",
    ycsb_proportion!("insertProportion", "0.0", "0.0", "0.0", "0.05", "0.05", "0.0"), " + ",
    ycsb_proportion!("scanProportion", "0.0", "0.0", "0.0", "0.0", "0.95", "0.0"), " + ",
    ycsb_proportion!("readModifyWriteProportion", "0.0", "0.0", "0.0", "0.0", "0.0", "0.5"),
    " > 0.0"))
    .message("spec.workload.ycsb: the read, update, insert, scan and readModifyWrite proportions must not all be 0"))]
#[x_kube(validation = Rule::new(
    "(has(self.minScanLength) ? self.minScanLength : 1) <= (has(self.maxScanLength) ? self.maxScanLength : (self.workload == 'e' ? 100 : 1000))")
    .message("spec.workload.ycsb.minScanLength must not exceed maxScanLength")
    .field_path(".minScanLength"))]
#[x_kube(validation = Rule::new(
    "(has(self.minFieldLength) ? self.minFieldLength : 1) <= (has(self.fieldLength) ? self.fieldLength : 100)")
    .message("spec.workload.ycsb.minFieldLength must not exceed fieldLength")
    .field_path(".minFieldLength"))]
#[x_kube(validation = Rule::new(
    "!has(self.dataIntegrity) || !self.dataIntegrity || !has(self.fieldLengthDistribution) || self.fieldLengthDistribution == 'constant'")
    .message("spec.workload.ycsb.dataIntegrity requires fieldLengthDistribution constant")
    .field_path(".dataIntegrity"))]
pub struct Ycsb {
    /// The core workload: `a` (update heavy), `b` (read mostly), `c` (read only), `d` (read
    /// latest), `e` (short ranges) or `f` (read-modify-write).
    pub workload: YcsbWorkload,

    /// `readproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub read_proportion: Option<f64>,
    /// `updateproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub update_proportion: Option<f64>,
    /// `insertproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub insert_proportion: Option<f64>,
    /// `scanproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub scan_proportion: Option<f64>,
    /// `readmodifywriteproportion` override, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub read_modify_write_proportion: Option<f64>,

    /// `requestdistribution` override (the workload's own: `zipfian`, `latest` for D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_distribution: Option<RequestDistribution>,
    /// `hotspotdatafraction`, 0 to 1 (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub hotspot_data_fraction: Option<f64>,
    /// `hotspotopnfraction`, 0 to 1 (default 0.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub hotspot_opn_fraction: Option<f64>,
    /// `exponential.percentile`, 0 to 100 (default 95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub exponential_percentile: Option<f64>,
    /// `exponential.frac`, 0 to 1 (default 0.8571428571).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub exponential_frac: Option<f64>,

    /// `fieldcount`: fields per record (1 to 1000, default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub field_count: Option<u32>,
    /// `fieldlength`: bytes per field, the maximum for non-constant distributions (1 to
    /// 1048576, default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1048576))]
    pub field_length: Option<u32>,
    /// `minfieldlength` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1048576))]
    pub min_field_length: Option<u32>,
    /// `fieldlengthdistribution`: `constant` (default), `uniform` or `zipfian`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_length_distribution: Option<FieldLengthDistribution>,
    /// `fieldnameprefix` (default `field`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub field_name_prefix: Option<String>,
    /// `table`: the collection name (default `usertable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 120))]
    pub table: Option<String>,
    /// `readallfields` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_all_fields: Option<bool>,
    /// `writeallfields` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_all_fields: Option<bool>,
    /// `dataintegrity`: verify read values (default false; needs constant field length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_integrity: Option<bool>,
    /// `insertorder`: `hashed` (default) or `ordered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_order: Option<InsertOrder>,
    /// `zeropadding`: digit width of key numbers (1 to 32, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub zero_padding: Option<u32>,

    /// `minscanlength` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000000))]
    pub min_scan_length: Option<u32>,
    /// `maxscanlength` (default 1000; 100 in workload E).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000000))]
    pub max_scan_length: Option<u32>,
    /// `scanlengthdistribution`: `uniform` (default) or `zipfian`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_length_distribution: Option<ScanLengthDistribution>,
}

/// Operation proportions of a YCSB workload, before YCSB's normalisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YcsbProportions {
    /// `readproportion`.
    pub read: f64,
    /// `updateproportion`.
    pub update: f64,
    /// `insertproportion`.
    pub insert: f64,
    /// `scanproportion`.
    pub scan: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write: f64,
}

impl YcsbProportions {
    /// Sum of the positive proportions (YCSB drops the others and divides by this).
    pub fn positive_total(&self) -> f64 {
        [
            self.read,
            self.update,
            self.insert,
            self.scan,
            self.read_modify_write,
        ]
        .iter()
        .filter(|p| **p > 0.0)
        .sum()
    }
}

impl Ycsb {
    /// Effective proportions: each override, else the value of the workload file.
    pub fn proportions(&self) -> YcsbProportions {
        let file = self.workload.file_proportions();
        YcsbProportions {
            read: self.read_proportion.unwrap_or(file.read),
            update: self.update_proportion.unwrap_or(file.update),
            insert: self.insert_proportion.unwrap_or(file.insert),
            scan: self.scan_proportion.unwrap_or(file.scan),
            read_modify_write: self
                .read_modify_write_proportion
                .unwrap_or(file.read_modify_write),
        }
    }

    /// Effective `minscanlength` (default 1).
    pub fn min_scan_length(&self) -> u32 {
        self.min_scan_length.unwrap_or(1)
    }

    /// Effective `maxscanlength` (workload E: 100, otherwise 1000).
    pub fn max_scan_length(&self) -> u32 {
        self.max_scan_length
            .unwrap_or(if self.workload == YcsbWorkload::E {
                100
            } else {
                1000
            })
    }

    /// Effective `fieldlength` (default 100).
    pub fn field_length(&self) -> u32 {
        self.field_length.unwrap_or(100)
    }

    /// Effective `minfieldlength` (default 1).
    pub fn min_field_length(&self) -> u32 {
        self.min_field_length.unwrap_or(1)
    }

    /// Effective `fieldlengthdistribution` (default `constant`).
    pub fn field_length_distribution(&self) -> FieldLengthDistribution {
        self.field_length_distribution.unwrap_or_default()
    }

    /// Effective `requestdistribution`: the override, else the workload file's.
    pub fn request_distribution(&self) -> RequestDistribution {
        self.request_distribution.unwrap_or(match self.workload {
            YcsbWorkload::D => RequestDistribution::Latest,
            _ => RequestDistribution::Zipfian,
        })
    }
}

/// A YCSB core workload.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum YcsbWorkload {
    /// Update heavy: 50 % reads, 50 % updates, zipfian.
    A,
    /// Read mostly: 95 % reads, 5 % updates, zipfian.
    B,
    /// Read only, zipfian.
    C,
    /// Read latest: 95 % reads, 5 % inserts, latest.
    D,
    /// Short ranges: 95 % scans, 5 % inserts, zipfian.
    E,
    /// Read-modify-write: 50 % reads, 50 % read-modify-writes, zipfian.
    F,
}

impl YcsbWorkload {
    /// The proportions the official workload file sets.
    pub fn file_proportions(self) -> YcsbProportions {
        let (read, update, insert, scan, read_modify_write) = match self {
            YcsbWorkload::A => (0.5, 0.5, 0.0, 0.0, 0.0),
            YcsbWorkload::B => (0.95, 0.05, 0.0, 0.0, 0.0),
            YcsbWorkload::C => (1.0, 0.0, 0.0, 0.0, 0.0),
            YcsbWorkload::D => (0.95, 0.0, 0.05, 0.0, 0.0),
            YcsbWorkload::E => (0.0, 0.0, 0.05, 0.95, 0.0),
            YcsbWorkload::F => (0.5, 0.0, 0.0, 0.0, 0.5),
        };
        YcsbProportions {
            read,
            update,
            insert,
            scan,
            read_modify_write,
        }
    }
}

/// YCSB `requestdistribution`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum RequestDistribution {
    /// Every key equally likely.
    Uniform,
    /// Scrambled Zipfian, θ = 0.99.
    Zipfian,
    /// Zipfian over the most recently inserted keys.
    Latest,
    /// `hotspotopnfraction` of operations on `hotspotdatafraction` of keys.
    Hotspot,
    /// Keys in order.
    Sequential,
    /// Exponential over the key space.
    Exponential,
}

/// YCSB `fieldlengthdistribution`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum FieldLengthDistribution {
    /// Every field `fieldlength` bytes.
    #[default]
    Constant,
    /// Uniform between `minfieldlength` and `fieldlength`.
    Uniform,
    /// Zipfian between `minfieldlength` and `fieldlength`.
    Zipfian,
}

/// YCSB `scanlengthdistribution`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum ScanLengthDistribution {
    /// Uniform between `minscanlength` and `maxscanlength`.
    Uniform,
    /// Zipfian between `minscanlength` and `maxscanlength`.
    Zipfian,
}

/// YCSB `insertorder`.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    /// Keys hashed (scattered).
    Hashed,
    /// Keys in insertion order.
    Ordered,
}
