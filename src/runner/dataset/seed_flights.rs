//! Seeding `airline.flights` to a size (specs/flights.md §7), growing the same collection when
//! the sizes of a benchmark ascend: documents [N, M) are added to a dataset of N, never reloaded.
//! The dataset record in `mongobench.datasets` says what the collection holds, so a later run
//! (or a restarted Job) knows whether to grow, reuse or start over.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use mongodb::bson::{Bson, Document, doc};
use mongodb::{Client, Database};
use serde::{Deserialize, Serialize};

use crate::plan::sharding::CollectionPlan;
use crate::runner::crew::Helpers;
use crate::runner::deadline::{describe, no_reply, whole_collection, within};
use crate::runner::server::sharding::shard_collection;
use crate::workload::flights::{
    self, COLLECTION, DATABASE, DatasetInfo, IndexBuild, IndexSet, Params, seq_of_object_id,
};

/// Database and collection of dataset records.
pub const META_DATABASE: &str = "mongobench";
pub const META_COLLECTION: &str = "datasets";

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("seeding {DATABASE}.{COLLECTION}: {step}: {}", describe(source))]
    Server {
        step: &'static str,
        source: mongodb::error::Error,
    },
    #[error(
        "seeding {DATABASE}.{COLLECTION}: the collection holds {found} documents after seeding, expected {expected}"
    )]
    Count { found: u64, expected: u64 },
    #[error(
        "seeding {DATABASE}.{COLLECTION}: indexes are {found:?}, expected {expected:?} (indexSet {set})"
    )]
    Indexes {
        found: Vec<String>,
        expected: Vec<String>,
        set: &'static str,
    },
    #[error("seeding {DATABASE}.{COLLECTION}: {0}")]
    Crew(String),
    #[error("seeding {DATABASE}.{COLLECTION}: sharding the fresh collection: {0}")]
    Sharding(String),
}

impl From<String> for SeedError {
    fn from(message: String) -> SeedError {
        SeedError::Crew(message)
    }
}

fn server(step: &'static str) -> impl FnOnce(mongodb::error::Error) -> SeedError {
    move |source| SeedError::Server { step, source }
}

/// The stored description of a seeded collection (the `mongobench.datasets` document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatasetRecord {
    #[serde(rename = "_id")]
    pub id: String,
    pub version: String,
    pub dataset_seed: i64,
    /// N0: seeded documents, seq in [0, N0).
    pub documents: i64,
    pub table_hash: String,
    pub dataset_id: String,
    pub index_set: String,
    pub index_build: String,
    pub avg_doc_bytes: i64,
    /// Sum of the BSON sizes of the seeded documents.
    pub generated_bytes: i64,
}

/// What seeding to one size did and found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedReport {
    /// Seeded documents before this step (0 when loaded from scratch).
    pub from: u64,
    /// Seeded documents after it.
    pub to: u64,
    /// `fresh`, `grown` or `reused`.
    pub action: String,
    /// Documents in the collection after seeding (count).
    pub count: u64,
    /// Wall time spent inserting (and building indexes when they were built).
    pub load_seconds: f64,
    /// Documents inserted per second of `load_seconds`.
    pub docs_per_second: f64,
    pub dataset_id: String,
    pub generated_bytes: u64,
    /// The indexes present after seeding, sorted by name.
    pub indexes: Vec<String>,
}

fn record_for(params: &Params, documents: u64, generated_bytes: u64) -> DatasetRecord {
    DatasetRecord {
        id: format!("{DATABASE}.{COLLECTION}"),
        version: flights::VERSION.to_owned(),
        dataset_seed: params.dataset_seed as i64,
        documents: documents as i64,
        table_hash: hex::encode(flights::data::table_hash()),
        dataset_id: hex::encode(flights::dataset_id(params.dataset_seed, documents)),
        index_set: params.index_set.name().to_owned(),
        index_build: match params.index_build {
            IndexBuild::After => "after",
            IndexBuild::Before => "before",
        }
        .to_owned(),
        avg_doc_bytes: flights::AVG_DOC_BYTES as i64,
        generated_bytes: generated_bytes as i64,
    }
}

/// Reads the dataset record, if the collection has one.
pub async fn dataset_record(client: &Client) -> Result<Option<DatasetRecord>, SeedError> {
    let meta = client
        .database(META_DATABASE)
        .collection::<DatasetRecord>(META_COLLECTION);
    meta.find_one(doc! {"_id": format!("{DATABASE}.{COLLECTION}")})
        .await
        .map_err(server("reading the dataset record"))
}

/// Whether a stored dataset can be grown to (or reused as) what `params` asks for.
fn compatible(record: &DatasetRecord, params: &Params, documents: u64) -> bool {
    let wanted = record_for(params, documents, 0);
    record.version == wanted.version
        && record.table_hash == wanted.table_hash
        && record.dataset_seed == wanted.dataset_seed
        && record.index_set == wanted.index_set
        && record.index_build == wanted.index_build
        && record.documents as u64 <= documents
}

/// Brings `airline.flights` to `documents` seeded documents: grows a compatible dataset,
/// reloads anything else. Waits at most `limit` for each command (index builds and drops
/// [`whole_collection`] of it). With `crew`, every client process loads its share of the
/// documents.
pub async fn seed(
    client: &Client,
    params: &Params,
    documents: u64,
    limit: Duration,
    crew: Option<Helpers<'_>>,
    shard: Option<&CollectionPlan>,
) -> Result<SeedReport, SeedError> {
    let db = client.database(DATABASE);
    let (from, generated_before) = starting_point(client, &db, params, documents, limit).await?;
    let started = Instant::now();
    let fresh = from == 0;
    if fresh {
        create_fresh(client, &db, params, limit, shard).await?;
    }
    let count_before = count(&db, limit).await?;
    let generated = load_all(&db, params, from, documents, limit, crew).await?;
    if fresh && params.index_build == IndexBuild::After {
        create_indexes(&db, params.index_set, limit).await?;
    }
    let load_seconds = started.elapsed().as_secs_f64();

    let count_after = count(&db, limit).await?;
    let expected = count_before + (documents - from);
    if count_after != expected {
        return Err(SeedError::Count {
            found: count_after,
            expected,
        });
    }
    let indexes = check_indexes(&db, params, shard, limit).await?;
    let record = record_for(params, documents, generated_before + generated);
    write_record(client, &record, limit).await?;

    let inserted = (documents - from) as f64;
    Ok(SeedReport {
        from,
        to: documents,
        action: action(from, documents).to_owned(),
        count: count_after,
        load_seconds,
        docs_per_second: if load_seconds > 0.0 {
            inserted / load_seconds
        } else {
            0.0
        },
        dataset_id: record.dataset_id,
        generated_bytes: record.generated_bytes as u64,
        indexes,
    })
}

/// The seeded documents and generated bytes a compatible stored dataset already holds; anything
/// else is dropped and seeding starts from 0.
async fn starting_point(
    client: &Client,
    db: &Database,
    params: &Params,
    documents: u64,
    limit: Duration,
) -> Result<(u64, u64), SeedError> {
    let existing = tokio::time::timeout(limit, dataset_record(client))
        .await
        .unwrap_or_else(|_| {
            let stalled = mongodb::error::Error::custom(no_reply(limit));
            Err(server("reading the dataset record")(stalled))
        })?;
    match &existing {
        Some(r) if compatible(r, params, documents) => {
            Ok((r.documents as u64, r.generated_bytes as u64))
        }
        _ => {
            within(
                whole_collection(limit),
                db.collection::<Document>(COLLECTION).drop(),
            )
            .await
            .map_err(server("dropping the old collection"))?;
            Ok((0, 0))
        }
    }
}

/// What seeding from `from` to `documents` seeded documents does.
fn action(from: u64, documents: u64) -> &'static str {
    match (from, documents) {
        (0, _) => "fresh",
        (f, d) if f == d => "reused",
        _ => "grown",
    }
}

/// Creates the collection, shards it by `shard`, and builds the indexes that come first.
async fn create_fresh(
    client: &Client,
    db: &Database,
    params: &Params,
    limit: Duration,
    shard: Option<&CollectionPlan>,
) -> Result<(), SeedError> {
    within(limit, db.create_collection(COLLECTION))
        .await
        .map_err(server("creating the collection"))?;
    if let Some(plan) = shard {
        shard_collection(client, plan, limit)
            .await
            .map_err(|e| SeedError::Sharding(e.to_string()))?;
    }
    if params.index_build == IndexBuild::Before {
        create_indexes(db, params.index_set, limit).await?;
    }
    Ok(())
}

/// Loads documents [from, documents), shared out among the crew's processes when there is one;
/// returns the generated BSON bytes.
async fn load_all(
    db: &Database,
    params: &Params,
    from: u64,
    documents: u64,
    limit: Duration,
    crew: Option<Helpers<'_>>,
) -> Result<u64, SeedError> {
    let Some(helpers) = crew else {
        return load(db, params, from, documents, limit).await;
    };
    let shares = helpers
        .split_load(
            from,
            documents,
            whole_collection(limit),
            |range, _| async move {
                let bytes = load(db, params, range.start, range.end, limit).await?;
                Ok::<_, SeedError>(serde_json::json!(bytes))
            },
        )
        .await?;
    Ok(shares.iter().filter_map(serde_json::Value::as_u64).sum())
}

/// The collection's index names, sorted, checked against [`expected_indexes`].
async fn check_indexes(
    db: &Database,
    params: &Params,
    shard: Option<&CollectionPlan>,
    limit: Duration,
) -> Result<Vec<String>, SeedError> {
    // Servers list indexes in different orders (mongod by creation, FerretDB by name): compare
    // the sets.
    let mut indexes = index_names(db, limit).await?;
    indexes.sort();
    let expected = expected_indexes(params.index_set, shard);
    if indexes != expected {
        return Err(SeedError::Indexes {
            found: indexes,
            expected,
            set: params.index_set.name(),
        });
    }
    Ok(indexes)
}

/// The index names the seeded collection must have, sorted: the index set's, and the shard
/// key's, which shardCollection builds when the index set has none for it.
fn expected_indexes(set: IndexSet, shard: Option<&CollectionPlan>) -> Vec<String> {
    let mut expected: Vec<String> = flights::expected_index_names(set)
        .into_iter()
        .map(str::to_owned)
        .collect();
    if let Some(plan) = shard {
        let kind = if plan.hashed { "hashed" } else { "1" };
        let name = format!("{}_{kind}", plan.field);
        if !expected.contains(&name) {
            expected.push(name);
        }
    }
    expected.sort();
    expected
}

/// Stores the dataset record (replacing the previous one).
async fn write_record(
    client: &Client,
    record: &DatasetRecord,
    limit: Duration,
) -> Result<(), SeedError> {
    let records = client
        .database(META_DATABASE)
        .collection::<DatasetRecord>(META_COLLECTION);
    within(
        limit,
        records
            .replace_one(doc! {"_id": &record.id}, record)
            .upsert(true),
    )
    .await
    .map_err(server("writing the dataset record"))?;
    Ok(())
}

/// Inserts seeded documents [from, to) with `seedWorkers` tasks claiming batches from a shared
/// counter; returns the generated BSON bytes.
/// Loads this client process's share `range` of the documents being added (the coordinator
/// checks the count); returns the bytes generated.
pub async fn load_share(
    client: &Client,
    params: &Params,
    range: std::ops::Range<u64>,
    limit: Duration,
) -> Result<u64, SeedError> {
    load(
        &client.database(DATABASE),
        params,
        range.start,
        range.end,
        limit,
    )
    .await
}

async fn load(
    db: &Database,
    params: &Params,
    from: u64,
    to: u64,
    limit: Duration,
) -> Result<u64, SeedError> {
    let batch = u64::from(params.seed_batch_size.max(1));
    let next = Arc::new(AtomicU64::new(from));
    let bytes = Arc::new(AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..params.seed_workers.max(1) {
        let (db, next, bytes) = (db.clone(), next.clone(), bytes.clone());
        let dataset_seed = params.dataset_seed;
        tasks.spawn(async move {
            loop {
                let a = next.fetch_add(batch, Ordering::Relaxed);
                if a >= to {
                    return Ok(());
                }
                let b = (a + batch).min(to);
                // Generating ~3 KB documents is CPU work: keep it off the I/O threads.
                let seed_batch =
                    tokio::task::spawn_blocking(move || flights::seed_batch(dataset_seed, a..b))
                        .await
                        .expect("document generation does not panic");
                bytes.fetch_add(seed_batch.bson_bytes, Ordering::Relaxed);
                let reply = within(limit, db.run_raw_command(seed_batch.command))
                    .await
                    .map_err(server("inserting a batch"))?;
                if let Ok(errors) = reply.get_array("writeErrors")
                    && let Some(Bson::Document(first)) = errors.first()
                {
                    return Err(SeedError::Server {
                        step: "inserting a batch",
                        source: mongodb::error::Error::custom(format!(
                            "{} write errors, the first: {first}",
                            errors.len()
                        )),
                    });
                }
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.expect("seeding task does not panic")?;
    }
    Ok(bytes.load(Ordering::Relaxed))
}

async fn create_indexes(db: &Database, set: IndexSet, limit: Duration) -> Result<(), SeedError> {
    let build = db.run_command(flights::create_indexes_command(set));
    within(whole_collection(limit), build)
        .await
        .map_err(server("creating the indexes"))?;
    Ok(())
}

/// The collection's document count from `collStats` (collection metadata on mongod, table
/// statistics on FerretDB): a full `count` scan would cost as much as the load on servers
/// without count pushdown.
async fn count(db: &Database, limit: Duration) -> Result<u64, SeedError> {
    // Metadata on mongod; FerretDB counts the table.
    let stats = db.run_command(doc! {"collStats": COLLECTION});
    let stats = within(whole_collection(limit), stats)
        .await
        .map_err(server("counting documents"))?;
    let n = stats
        .get("count")
        .and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_i32().map(i64::from))
                .or_else(|| v.as_f64().map(|f| f as i64))
        })
        .ok_or_else(|| SeedError::Server {
            step: "counting documents",
            source: mongodb::error::Error::custom(format!("collStats has no count: {stats}")),
        })?;
    Ok(n as u64)
}

async fn index_names(db: &Database, limit: Duration) -> Result<Vec<String>, SeedError> {
    let list = async {
        let cursor = db.collection::<Document>(COLLECTION).list_indexes().await?;
        cursor.try_collect::<Vec<_>>().await
    };
    let specs = within(limit, list)
        .await
        .map_err(server("listing indexes"))?;
    Ok(specs
        .into_iter()
        .filter_map(|m| m.options.and_then(|o| o.name))
        .collect())
}

/// The dataset a run generates against: N0 and datasetSeed from the record, insertBase from the
/// largest `_id` (one probe of `_id_`), so every run inserts into fresh key space.
pub async fn dataset_info(client: &Client, params: &Params) -> Result<DatasetInfo, SeedError> {
    let record = dataset_record(client).await?;
    let documents = record.map(|r| r.documents as u64).unwrap_or(0);
    let top = client
        .database(DATABASE)
        .collection::<Document>(COLLECTION)
        .find_one(doc! {})
        .sort(doc! {"_id": -1})
        .projection(doc! {"_id": 1})
        .await
        .map_err(server("probing the largest _id"))?;
    let max_seq = top
        .and_then(|d| d.get_object_id("_id").ok())
        .and_then(|id| seq_of_object_id(&id));
    Ok(DatasetInfo {
        dataset_seed: params.dataset_seed,
        documents,
        insert_base: flights::insert_base(max_seq),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard_on(field: &str, hashed: bool) -> CollectionPlan {
        CollectionPlan {
            database: DATABASE.to_owned(),
            collection: COLLECTION.to_owned(),
            field: field.to_owned(),
            hashed,
            points: Vec::new(),
            owners: Vec::new(),
        }
    }

    #[test]
    fn expected_indexes_add_a_shard_key_index_the_set_lacks() {
        let plgm6 = [
            "_id_",
            "equipment.plane_type_1",
            "flight_id_1_duration_minutes_1_seats_available_1",
            "flight_id_1_equipment.plane_type_1",
            "flight_id_1_seats_available_1",
            "origin_1_destination_1_flight_date_-1",
            "status_1",
        ];
        assert_eq!(expected_indexes(IndexSet::Plgm6, None), plgm6);
        let hashed = expected_indexes(IndexSet::Plgm6, Some(&shard_on("flight_id", true)));
        let mut want = plgm6.to_vec();
        want.insert(5, "flight_id_hashed");
        assert_eq!(hashed, want);
        // A range key the set already indexes adds nothing.
        let range = expected_indexes(IndexSet::Plgm6, Some(&shard_on("status", false)));
        assert_eq!(range, plgm6);
        let seven = expected_indexes(IndexSet::Seven, Some(&shard_on("flight_id", false)));
        assert_eq!(seven.len(), 8);
        assert_eq!(seven[2], "flight_id_1");
    }

    #[test]
    fn the_action_says_whether_the_collection_was_loaded_grown_or_reused() {
        assert_eq!(action(0, 1000), "fresh");
        assert_eq!(action(1000, 1000), "reused");
        assert_eq!(action(1000, 5000), "grown");
    }
}
