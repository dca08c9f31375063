//! The knobs of `flights/v1` (specs/flights.md §9) with the spec's defaults, and their validation.
//! Uses only `version` and `seeding` (the seed batch limit, `dataBytes` → documents) of its
//! siblings; the unit tests live in `tests.rs`.
//!
//! Field names are the spec's knob names in snake_case (`findPercent` → `find_percent`); error
//! messages use the spec's camelCase names, which is what a user writes in a benchmark file.

use super::version::VERSION;
use std::time::Duration;
use thiserror::Error;

/// Largest `insertBatchSize`.
pub const MAX_INSERT_BATCH_SIZE: u32 = 1000;
/// Largest `seedBatchSize`: the most documents that fit one 16 MiB insert command.
pub const MAX_SEED_BATCH_SIZE: u32 = super::seeding::MAX_SEED_BATCH_DOCUMENTS;
/// Largest `findLimit` and `aggWindow` (keeps `flight_id + aggWindow` inside int32).
pub const MAX_LIMIT: u32 = 1_000_000;

/// The find split (§5.2), percentages in draw order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FindSplit {
    /// F1: `{flight_id: F}` with projection and `findLimit`.
    pub by_flight_id: u32,
    /// F2: `{origin, destination}` sorted by `flight_date` descending, limit 20.
    pub by_route: u32,
    /// F3: `{status}`, limit 20.
    pub by_status: u32,
}

impl Default for FindSplit {
    fn default() -> Self {
        FindSplit {
            by_flight_id: 100,
            by_route: 0,
            by_status: 0,
        }
    }
}

/// The update or delete split (§5.3, §5.4), percentages in draw order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteSplit {
    /// U1 / D1: one document by `flight_id`.
    pub one_by_flight_id: u32,
    /// U2 / D2: one document by `_id` (the express path).
    pub one_by_id: u32,
    /// U3 / D3: every document sharing a `flight_id`.
    pub many_by_flight_id: u32,
}

impl Default for WriteSplit {
    fn default() -> Self {
        WriteSplit {
            one_by_flight_id: 80,
            one_by_id: 10,
            many_by_flight_id: 10,
        }
    }
}

/// The aggregate split (§5.6), percentages in draw order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AggregateSplit {
    /// A1: per-aircraft summary over a window of `aggWindow` flight ids.
    pub aircraft_window: u32,
    /// A2: per-airline summary of one route.
    pub route_summary: u32,
}

impl Default for AggregateSplit {
    fn default() -> Self {
        AggregateSplit {
            aircraft_window: 50,
            route_summary: 50,
        }
    }
}

/// When the §4 indexes are built during seeding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexBuild {
    /// Load, then build the indexes (dense indexes; the default).
    #[default]
    After,
    /// Build on the empty collection, as plgm does; not comparable with `After`.
    Before,
}

/// Which §4 index set the collection carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexSet {
    /// plgm main's six secondary indexes (7 entries with `_id_`).
    #[default]
    Plgm6,
    /// The six plus `flight_id_1` (8 entries); changes the flight_id plans.
    Seven,
}

impl IndexSet {
    /// The spec's name: `plgm6` or `seven`.
    pub fn name(self) -> &'static str {
        match self {
            IndexSet::Plgm6 => "plgm6",
            IndexSet::Seven => "seven",
        }
    }
}

/// Everything `flights/v1` can be told (§9) except the connection settings (`readPreference`,
/// `writeConcern`, `wireCompressors`), which the runner applies to every workload. `Default`
/// gives the spec's defaults; the dataset size (`documents` or `data_bytes`) has no default and
/// must be set before [`Params::validate`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Params {
    /// `workload`: the version string; only `flights/v1`.
    pub workload: String,
    /// `workers`: closed-loop workers, one operation in flight each.
    pub workers: u32,
    /// `thinkTimeMs`: pause before each operation, outside latency.
    pub think_time_ms: u64,
    /// `thinkJitterMs`: plus U\[0, jitter\] from the jitter stream.
    pub think_jitter_ms: u64,
    /// `duration`: measured window when `operations` is unset.
    #[serde(with = "crate::workload::millis", rename = "durationMs")]
    pub duration: Duration,
    /// `operations`: total measured operations; makes the run op-count bound.
    pub operations: Option<u64>,
    /// `warmup`: warm-up length when `warmup_operations` is unset.
    #[serde(with = "crate::workload::millis", rename = "warmupMs")]
    pub warmup: Duration,
    /// `warmupOperations`: total warm-up operations.
    pub warmup_operations: Option<u64>,
    /// `findPercent`.
    pub find_percent: u32,
    /// `updatePercent`.
    pub update_percent: u32,
    /// `deletePercent`.
    pub delete_percent: u32,
    /// `insertPercent`.
    pub insert_percent: u32,
    /// `aggregatePercent`.
    pub aggregate_percent: u32,
    /// `transactionPercent`.
    pub transaction_percent: u32,
    /// `findSplit`.
    pub find_split: FindSplit,
    /// `updateSplit`.
    pub update_split: WriteSplit,
    /// `deleteSplit`.
    pub delete_split: WriteSplit,
    /// `aggregateSplit`.
    pub aggregate_split: AggregateSplit,
    /// `hitRate`: share (0–1) of find/update/delete aimed at a seeded document.
    pub hit_rate: f64,
    /// `findLimit`: F1's limit.
    pub find_limit: u32,
    /// `aggWindow`: A1's flight_id window.
    pub agg_window: u32,
    /// `insertBatchSize`: documents per insert operation (1–1000).
    pub insert_batch_size: u32,
    /// `seed`: the run seed (worker streams).
    pub seed: u64,
    /// `datasetSeed`: the document-content seed.
    pub dataset_seed: u64,
    /// `documents`: dataset size N0 (exclusive with `data_bytes`).
    pub documents: Option<u64>,
    /// `dataBytes`: dataset size in uncompressed BSON bytes, N0 = ceil(B / avgDocBytes).
    pub data_bytes: Option<u64>,
    /// `seedBatchSize`: consecutive documents per seeding insert.
    pub seed_batch_size: u32,
    /// `seedWorkers`: parallel seeding tasks.
    pub seed_workers: u32,
    /// `indexBuild`.
    pub index_build: IndexBuild,
    /// `indexSet`.
    pub index_set: IndexSet,
    /// `reuseDataset`: keep a verified dataset whose metadata matches.
    pub reuse_dataset: bool,
    /// `explainSamples`: explained instances per variant; 0 disables.
    pub explain_samples: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            workload: VERSION.to_string(),
            workers: 16,
            think_time_ms: 0,
            think_jitter_ms: 0,
            duration: Duration::from_secs(600),
            operations: None,
            warmup: Duration::from_secs(60),
            warmup_operations: None,
            find_percent: 60,
            update_percent: 20,
            delete_percent: 10,
            insert_percent: 10,
            aggregate_percent: 0,
            transaction_percent: 0,
            find_split: FindSplit::default(),
            update_split: WriteSplit::default(),
            delete_split: WriteSplit::default(),
            aggregate_split: AggregateSplit::default(),
            hit_rate: 0.9,
            find_limit: 5,
            agg_window: 100,
            insert_batch_size: 10,
            seed: 1,
            dataset_seed: 1,
            documents: None,
            data_bytes: None,
            seed_batch_size: 1000,
            seed_workers: 8,
            index_build: IndexBuild::After,
            index_set: IndexSet::Plgm6,
            reuse_dataset: false,
            explain_samples: 3,
        }
    }
}

/// A knob with a value outside what `flights/v1` accepts. Every message names the knob.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParamsError {
    /// `workload` is not this generator's version.
    #[error("workload: expected \"{VERSION}\", got {0:?}")]
    UnknownWorkload(String),
    /// A count that must be positive is zero.
    #[error("{knob}: must be at least 1, got 0")]
    Zero {
        /// The knob's spec name.
        knob: &'static str,
    },
    /// A count above its maximum.
    #[error("{knob}: must be at most {max}, got {value}")]
    TooLarge {
        /// The knob's spec name.
        knob: &'static str,
        /// The largest accepted value.
        max: u64,
        /// The value given.
        value: u64,
    },
    /// The operation percentages do not add up to 100.
    #[error(
        "findPercent + updatePercent + deletePercent + insertPercent + aggregatePercent + \
         transactionPercent must sum to exactly 100, got {0} (percentages are never rescaled)"
    )]
    PercentSum(u64),
    /// A split does not add up to 100.
    #[error("{knob}: the shares must sum to exactly 100, got {sum}")]
    SplitSum {
        /// The split's spec name.
        knob: &'static str,
        /// Their sum.
        sum: u64,
    },
    /// `hitRate` outside 0..=1.
    #[error("hitRate: must be a share between 0 and 1 inclusive (0.9 = 90 %), got {0}")]
    HitRate(f64),
    /// `documents` and `dataBytes` both set, or neither.
    #[error("documents / dataBytes: set exactly one of them (the dataset size), {0}")]
    DatasetSize(&'static str),
    /// Transactions need two distinct seeded documents.
    #[error("documents: transactionPercent > 0 needs a dataset of at least 2 documents, got {0}")]
    TooFewForTransactions(u64),
    /// A duration-bound phase of zero length.
    #[error("duration: must be positive when operations is unset")]
    ZeroDuration,
}

fn at_least_one(knob: &'static str, value: u64) -> Result<(), ParamsError> {
    if value == 0 {
        Err(ParamsError::Zero { knob })
    } else {
        Ok(())
    }
}

fn at_most(knob: &'static str, value: u64, max: u64) -> Result<(), ParamsError> {
    if value > max {
        Err(ParamsError::TooLarge { knob, max, value })
    } else {
        Ok(())
    }
}

fn split_sum(knob: &'static str, shares: &[u32]) -> Result<(), ParamsError> {
    let sum: u64 = shares.iter().map(|&s| u64::from(s)).sum();
    if sum == 100 {
        Ok(())
    } else {
        Err(ParamsError::SplitSum { knob, sum })
    }
}

impl Params {
    /// The six operation percentages in draw order (find, update, delete, insert, aggregate,
    /// transaction).
    pub fn percentages(&self) -> [u32; 6] {
        [
            self.find_percent,
            self.update_percent,
            self.delete_percent,
            self.insert_percent,
            self.aggregate_percent,
            self.transaction_percent,
        ]
    }

    /// Checks every knob.
    ///
    /// # Errors
    /// The first knob found outside its accepted values, see [`ParamsError`].
    pub fn validate(&self) -> Result<(), ParamsError> {
        self.validate_traffic()?;
        if self.operations.is_none() && self.duration.is_zero() {
            return Err(ParamsError::ZeroDuration);
        }
        if let Some(ops) = self.operations {
            at_least_one("operations", ops)?;
        }
        let n0 = match (self.documents, self.data_bytes) {
            (Some(_), Some(_)) => return Err(ParamsError::DatasetSize("both are set")),
            (None, None) => return Err(ParamsError::DatasetSize("neither is set")),
            (Some(n), None) => {
                at_least_one("documents", n)?;
                n
            }
            (None, Some(b)) => {
                at_least_one("dataBytes", b)?;
                super::seeding::documents_for_data_bytes(b)
            }
        };
        if self.transaction_percent > 0 && n0 < 2 {
            return Err(ParamsError::TooFewForTransactions(n0));
        }
        at_least_one("seedBatchSize", self.seed_batch_size.into())?;
        at_most(
            "seedBatchSize",
            self.seed_batch_size.into(),
            MAX_SEED_BATCH_SIZE.into(),
        )?;
        at_least_one("seedWorkers", self.seed_workers.into())?;
        Ok(())
    }

    /// Checks the knobs that shape the generated traffic (what [`super::Worker::new`] reads):
    /// workload, workers, mix, splits, hit rate, limits and batch size.
    ///
    /// # Errors
    /// The first such knob found outside its accepted values, see [`ParamsError`].
    pub fn validate_traffic(&self) -> Result<(), ParamsError> {
        if self.workload != VERSION {
            return Err(ParamsError::UnknownWorkload(self.workload.clone()));
        }
        at_least_one("workers", self.workers.into())?;
        let sum: u64 = self.percentages().iter().map(|&p| u64::from(p)).sum();
        if sum != 100 {
            return Err(ParamsError::PercentSum(sum));
        }
        let f = &self.find_split;
        split_sum("findSplit", &[f.by_flight_id, f.by_route, f.by_status])?;
        for (knob, s) in [
            ("updateSplit", &self.update_split),
            ("deleteSplit", &self.delete_split),
        ] {
            split_sum(
                knob,
                &[s.one_by_flight_id, s.one_by_id, s.many_by_flight_id],
            )?;
        }
        let a = &self.aggregate_split;
        split_sum("aggregateSplit", &[a.aircraft_window, a.route_summary])?;
        if !(0.0..=1.0).contains(&self.hit_rate) {
            return Err(ParamsError::HitRate(self.hit_rate));
        }
        at_least_one("findLimit", self.find_limit.into())?;
        at_most("findLimit", self.find_limit.into(), MAX_LIMIT.into())?;
        at_least_one("aggWindow", self.agg_window.into())?;
        at_most("aggWindow", self.agg_window.into(), MAX_LIMIT.into())?;
        at_least_one("insertBatchSize", self.insert_batch_size.into())?;
        at_most(
            "insertBatchSize",
            self.insert_batch_size.into(),
            MAX_INSERT_BATCH_SIZE.into(),
        )?;
        Ok(())
    }
}

#[cfg(test)]
impl Params {
    /// Test knobs with every operation shape, as in testdata/reference.py's `all_kw`.
    pub(crate) fn all_shapes() -> Params {
        let third = WriteSplit {
            one_by_flight_id: 34,
            one_by_id: 33,
            many_by_flight_id: 33,
        };
        Params {
            workers: 3,
            seed: 7,
            find_percent: 20,
            update_percent: 20,
            delete_percent: 20,
            insert_percent: 10,
            aggregate_percent: 15,
            transaction_percent: 15,
            find_split: FindSplit {
                by_flight_id: 34,
                by_route: 33,
                by_status: 33,
            },
            update_split: third,
            delete_split: third,
            aggregate_split: AggregateSplit {
                aircraft_window: 50,
                route_summary: 50,
            },
            insert_batch_size: 2,
            documents: Some(1000),
            ..Params::default()
        }
    }
}

#[cfg(test)]
mod tests;
