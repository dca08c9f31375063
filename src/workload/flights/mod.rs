//! The built-in `flights/v1` workload (specs/flights.md): plgm's "flights" collection and mix,
//! made deterministic and fingerprinted. A face: the files below define everything. They use only
//! `workload/`'s `Operation`, `rng` and `bson_writer`; sending is the runner's job.
//!
//! Everything here is pure: a document is a function of (datasetSeed, seq), an operation of
//! (seed, phase, worker index, position in the worker's sequence) and the dataset's
//! [`DatasetInfo`]. The runner sends what [`Worker::next_planned`] yields, records each sent
//! operation in a [`Fingerprint`], and can later recompute the same run fingerprint with
//! [`fingerprint_only`].
//!
//! * `version`: the version string and namespace; `dataset`: what a run knows of its dataset;
//! * `data`: the frozen value lists and their hash; `document`: one flight (§2);
//! * `ids`: `_id`, flight ids, insert lanes (§3, §6); `indexes`: the index sets (§4);
//! * `ops`: command shapes (§5); `worker`: draws and operation order (§5.1, §8);
//! * `target`: hit or miss of a sent filter; `seeding`: batches and dataset identity (§7);
//! * `fingerprint`: operation records and digests (§8); `params`: the knobs (§9).

pub mod data;
pub mod dataset;
pub mod document;
pub mod fingerprint;
pub mod ids;
pub mod indexes;
pub mod ops;
pub mod params;
pub mod seeding;
pub mod target;
pub mod version;
pub mod worker;

pub use dataset::DatasetInfo;
pub use document::{AVG_DOC_BYTES, Flight, Passenger};
pub use fingerprint::{
    Fingerprint, FingerprintError, RecordError, RunFingerprint, WorkerDigest, fingerprint_only,
    operation_record, operations_per_worker,
};
pub use ids::{InsertLane, RunPhase, insert_base, object_id, seq_of_object_id};
pub use indexes::{IndexSpec, create_indexes_command, expected_index_names, index_specs};
pub use ops::{OpType, Variant, insert_command};
pub use params::{
    AggregateSplit, FindSplit, IndexBuild, IndexSet, Params, ParamsError, WriteSplit,
};
pub use seeding::{
    MAX_SEED_BATCH_DOCUMENTS, SeedBatch, dataset_id, documents_for_data_bytes, max_document_bytes,
    seed_batch, seed_ranges,
};
pub use target::{FilterTarget, classify_filter, operation_filter};
pub use version::{COLLECTION, DATABASE, VERSION};
pub use worker::{PlannedOp, Target, ThinkTime, Worker, WorkerError, Writes};
