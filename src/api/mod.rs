//! The `MongoBenchmark` API (group `mongobench.io`, version `v1alpha1`): spec and status types,
//! the generated CRD, unit parsing and offline validation.
//!
//! The same rules are enforced twice: by the API server at admission (OpenAPI schema + CEL
//! rules generated from these types) and offline by [`validate`] (`mongobench validate`), which
//! reports every violation with its field path. Keep the two in step: the corpus test in
//! `tests/validate_corpus.rs` runs both over the same files.
//!
//! The bottom layer of the crate: it uses no other module of it, and does no I/O. This file is
//! only the face; the CRD itself is built in `crd.rs`.

pub mod advice;
mod crd;
pub mod custom;
pub mod dataset;
pub mod flights;
mod kstatus;
pub mod precision;
pub mod replica_set;
mod schema_transform;
pub mod sharding;
pub mod spec;
pub mod status;
pub mod sweep;
pub mod targets;
pub mod units;
pub mod validate;
pub mod warmup;
pub mod workload;
pub mod ycsb;

pub use advice::{Advice, MemberQos, advice};
pub use crd::{API_VERSION, GROUP, KIND, VERSION, crd, crd_yaml, openapi_schema};
pub use custom::{ConfigMapKeyRef, CustomSource};
pub use dataset::{Dataset, IndexBuild};
pub use flights::{
    AggregateSplit, FindSplit, Flights, FlightsMix, FlightsVersion, IndexSet, WriteSplit,
};
pub use kstatus::{KStatus, kstatus};
pub use precision::Precision;
pub use replica_set::{AntiAffinity, ComputeResources, ReplicaSet};
pub(crate) use schema_transform::drop_description;
pub use sharding::{
    Balancer, ConfigServers, Mongos, MongosPool, PreSplit, ShardKey, ShardKeyType,
    ShardedCollection, Shards, Topology, WorkloadSharding,
};
pub use spec::{
    CanaryPolicy, CleanupPolicy, Client, MongoBenchmark, MongoBenchmarkSpec, Parallelism, Placement,
};
pub use status::{
    CellCounts, CellPhase, CellShards, CellStatus, CellSweep, Comparison, MongoBenchmarkStatus,
    NodeInfo, OperationLatency, Regime, ResultRef, RunnerStatus, SimultaneousStatus, StatusPhase,
    SweepPoint, TargetStatus, Verdict, condition_types,
};
pub use sweep::{FindMax, LatencyGoal, Percentile, Sweep};
pub use targets::{Arch, Distribution, ExternalTarget, Platform, SecretKeyRef, Target};
pub use units::{DatasetSize, UnitsError, parse_dataset_size, parse_duration};
pub use validate::{Violation, validate, validate_document, validate_update};
pub use warmup::WarmupUntilSettled;
pub use workload::{
    DEFAULT_OPERATION_TIMEOUT, ReadPreference, RunLength, WireCompressor, Workload, WorkloadType,
    WriteConcern,
};
pub use ycsb::{
    FieldLengthDistribution, InsertOrder, RequestDistribution, ScanLengthDistribution, Ycsb,
    YcsbProportions, YcsbWorkload,
};
