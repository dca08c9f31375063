//! The YCSB load phase as seeding: inserts records [N, M) so a benchmark's ascending sizes grow
//! one `usertable`, and records the loaded count in `mongobench.datasets` so a later step knows
//! what is there (run-phase inserts of workloads D and E add documents beyond it).
//!
//! Each worker inserts its share of the keys one operation at a time, as YCSB's load threads do
//! (specs/ycsb.md §8). A failed insert is retried up to `core_workload_insertion_retry_limit`
//! times, the same record each time, after sleeping `core_workload_insertion_retry_interval`
//! seconds × a uniform factor in [0.8, 1.2); an insert that still fails ends its worker (the
//! others go on) and the load fails. A batch remainder (`batchsize > 1`) is always written, so
//! the table holds every record.

use std::time::{Duration, Instant};

use mongodb::bson::{Document, doc};
use serde::{Deserialize, Serialize};

use crate::measure::ErrorKind;
use crate::plan::sharding::CollectionPlan;
use crate::runner::crew::Helpers;
use crate::runner::deadline::{describe, whole_collection, within};
use crate::runner::send::{ExecOptions, Sender};
use crate::runner::server::ConnectedTarget;
use crate::runner::server::sharding::shard_collection;
use crate::workload::ycsb::{self, Properties, RawProperties, Rng, SharedState, YcsbPhase};

use super::seed_flights::{META_COLLECTION, META_DATABASE};

/// Why loading failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("loading YCSB records: {0}")]
    Properties(#[from] ycsb::PropertyError),
    #[error("loading YCSB records: {0}")]
    Worker(#[from] ycsb::WorkerError),
    #[error("loading YCSB records: {step}: {}", describe(source))]
    Server {
        step: &'static str,
        source: mongodb::error::Error,
    },
    #[error(
        "loading YCSB records: {failed} of {attempted} inserts failed after {retries} retries each (first failure: {first})"
    )]
    Failed {
        failed: u64,
        attempted: u64,
        retries: u32,
        first: String,
    },
    #[error("loading YCSB records: the server went away: {0}")]
    Unreachable(String),
    #[error("loading YCSB records: {0}")]
    Crew(String),
    #[error("loading YCSB records: sharding the fresh table: {0}")]
    Sharding(String),
}

impl From<String> for LoadError {
    fn from(message: String) -> LoadError {
        LoadError::Crew(message)
    }
}

/// Loads records `range` of a table of `records` with `workers` workers (one client process's
/// share, or all of them).
pub async fn load_share(
    target: &ConnectedTarget,
    raw: &RawProperties,
    seed: u64,
    records: u64,
    range: std::ops::Range<u64>,
    workers: u32,
    limit: Duration,
) -> Result<(), LoadError> {
    if range.is_empty() {
        return Ok(());
    }
    let mut raw = raw.clone();
    raw.set("recordcount", records.to_string());
    raw.set("insertstart", range.start.to_string());
    raw.set("insertcount", (range.end - range.start).to_string());
    // Seeding must leave every record in the table, so a batch remainder is written.
    raw.set("mongobench.batch.flush", "true");
    let props = Properties::from_raw(&raw)?;
    let retry = Retry {
        limit: props.insertion_retry_limit,
        interval: Duration::from_secs(props.insertion_retry_interval),
    };
    let shared = SharedState::new(range.start);
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..workers.max(1) {
        let worker = ycsb::Worker::new(&props, seed, w, workers.max(1), YcsbPhase::Load, &shared)?;
        let jitter = Rng::new(seed ^ RETRY_JITTER ^ u64::from(w));
        let exec = ExecOptions {
            timeout: Some(limit),
            ..ExecOptions::default()
        };
        let sender = Sender::new(target.client.clone(), &target.wire, exec);
        tasks.spawn(load_worker(sender, worker, retry, jitter));
    }
    let mut attempted = 0;
    let mut failures = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let end = joined.expect("a load worker does not panic");
        attempted += end.attempted;
        failures.extend(end.failure);
    }
    if let Some(network) = failures.iter().find(|f| f.kind == ErrorKind::Network) {
        return Err(LoadError::Unreachable(network.message.clone()));
    }
    if let Some(first) = failures.first() {
        return Err(LoadError::Failed {
            failed: failures.len() as u64,
            attempted,
            retries: retry.limit,
            first: first.message.clone(),
        });
    }
    Ok(())
}

/// The stored description of a loaded `usertable`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadRecord {
    #[serde(rename = "_id")]
    pub id: String,
    pub workload: String,
    /// Records loaded by load phases: keys [0, records).
    pub records: i64,
}

/// What one load step did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    pub from: u64,
    pub to: u64,
    pub load_seconds: f64,
    pub docs_per_second: f64,
}

fn record_id(props: &Properties) -> String {
    format!("{}.{}", props.database, props.table)
}

/// YCSB's load-phase insert retries.
#[derive(Debug, Clone, Copy)]
struct Retry {
    /// `core_workload_insertion_retry_limit`: retries after the first attempt.
    limit: u32,
    /// `core_workload_insertion_retry_interval`.
    interval: Duration,
}

impl Retry {
    /// The pause before a retry: the interval × a uniform factor in [0.8, 1.2).
    fn pause(&self, jitter: &mut Rng) -> Duration {
        self.interval.mul_f64(0.8 + 0.4 * jitter.next_f64())
    }
}

/// Mixed into the seed for the retry pauses' stream (it draws nothing that is sent).
const RETRY_JITTER: u64 = 0x5945_5452_5920; // "YRETRY "

/// An insert that failed for good.
#[derive(Debug)]
struct LoadFailure {
    kind: ErrorKind,
    message: String,
}

/// What one load worker did.
#[derive(Debug)]
struct WorkerEnd {
    /// Insert operations sent (retries not counted).
    attempted: u64,
    /// The failure that ended the worker early.
    failure: Option<LoadFailure>,
}

/// Sends one worker's inserts in order, retrying each failed one as YCSB does.
async fn load_worker(
    mut sender: Sender,
    mut worker: ycsb::Worker,
    retry: Retry,
    mut jitter: Rng,
) -> WorkerEnd {
    let mut attempted = 0;
    while let Some(op) = worker.next() {
        if op.buffered {
            continue;
        }
        attempted += 1;
        let mut retries = 0;
        loop {
            match sender.execute(&op.operation).await {
                Ok(_) => break,
                Err(failure) if retries < retry.limit => {
                    retries += 1;
                    tracing::warn!(key = %op.key, retry = retries, error = %failure, "retrying a failed load insert");
                    tokio::time::sleep(retry.pause(&mut jitter)).await;
                }
                Err(failure) => {
                    return WorkerEnd {
                        attempted,
                        failure: Some(LoadFailure {
                            kind: failure.kind(),
                            message: format!("key {}: {failure}", op.key),
                        }),
                    };
                }
            }
        }
    }
    WorkerEnd {
        attempted,
        failure: None,
    }
}

/// Loads records until `records` are present, with `workers` workers; with `crew`, every
/// client process loads its share of the records, with its share of the workers.
#[allow(clippy::too_many_arguments)]
pub async fn load(
    target: &ConnectedTarget,
    raw: &RawProperties,
    seed: u64,
    records: u64,
    workers: u32,
    limit: Duration,
    crew: Option<Helpers<'_>>,
    shard: Option<&CollectionPlan>,
) -> Result<LoadReport, LoadError> {
    let client = &target.client;
    let base = Properties::from_raw(raw)?;
    let meta = client
        .database(META_DATABASE)
        .collection::<LoadRecord>(META_COLLECTION);
    let server = |step| move |source| LoadError::Server { step, source };
    let existing = within(limit, meta.find_one(doc! {"_id": record_id(&base)}))
        .await
        .map_err(server("reading the load record"))?;
    let from = match existing {
        Some(r) if (r.records as u64) <= records => r.records as u64,
        _ => {
            let table = client
                .database(&base.database)
                .collection::<Document>(&base.table);
            within(whole_collection(limit), table.drop())
                .await
                .map_err(server("dropping the old table"))?;
            0
        }
    };
    let started = Instant::now();
    if let (0, Some(plan)) = (from, shard) {
        shard_collection(client, plan, limit)
            .await
            .map_err(|e| LoadError::Sharding(e.to_string()))?;
    }
    if from < records {
        match crew {
            None => load_share(target, raw, seed, records, from..records, workers, limit).await?,
            Some(helpers) => {
                helpers
                    .split_load(from, records, limit, |range, slice| async move {
                        let mine = slice.workers(workers).len() as u32;
                        load_share(target, raw, seed, records, range, mine, limit).await?;
                        Ok::<_, LoadError>(serde_json::Value::Null)
                    })
                    .await?;
            }
        }
        let record = LoadRecord {
            id: record_id(&base),
            workload: "ycsb".to_owned(),
            records: records as i64,
        };
        let write = meta
            .replace_one(doc! {"_id": record_id(&base)}, record)
            .upsert(true);
        within(limit, write)
            .await
            .map_err(server("writing the load record"))?;
    }
    let load_seconds = started.elapsed().as_secs_f64();
    let inserted = (records - from) as f64;
    Ok(LoadReport {
        from,
        to: records,
        load_seconds,
        docs_per_second: if load_seconds > 0.0 {
            inserted / load_seconds
        } else {
            0.0
        },
    })
}
