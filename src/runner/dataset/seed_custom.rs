//! The seeded state S(size) of a custom workload (docs/specs/custom.md §3, §7): every
//! collection of its document loaded to its share of the size, indexes built after the load,
//! and one digest over them all. Document i of a collection never depends on the size, so a
//! larger size grows the collections of a smaller one; a restore reloads the collections a
//! phase may have written.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mongodb::bson::{Bson, Document, doc};
use mongodb::{Client, Database};
use sha2::{Digest, Sha256};

use crate::plan::custom::CustomPlan;
use crate::result::DatasetDigest;
use crate::runner::deadline::{describe, whole_collection, within};
use crate::runner::server::ConnectedTarget;
use crate::runner::server::sharding::shard_collection;
use crate::workload::split_write;

use super::digest::{DigestError, digest};
use super::shard::custom_plan;

/// Why a custom workload's collections could not be seeded or restored.
#[derive(Debug, thiserror::Error)]
pub enum CustomSeedError {
    #[error("seeding {namespace}: {step}: {}", describe(source))]
    Server {
        namespace: String,
        step: &'static str,
        source: mongodb::error::Error,
    },
    #[error("seeding {namespace}: {count} write errors, the first: {first}")]
    WriteErrors {
        namespace: String,
        count: usize,
        first: String,
    },
    #[error("seeding the custom workload: {0}")]
    Size(String),
    #[error("seeding {0}: sharding the collection: {1}")]
    Sharding(String, String),
    #[error("{0}")]
    Digest(#[from] DigestError),
}

/// `database.collection` of collection `c` of `plan`.
fn namespace(plan: &CustomPlan, c: usize) -> String {
    format!(
        "{}.{}",
        plan.workload.database(),
        plan.workload.collections()[c].name
    )
}

/// Seeded documents of each collection at `records`.
pub fn counts(plan: &CustomPlan, records: u64) -> Result<Vec<u64>, CustomSeedError> {
    plan.counts(records).map_err(CustomSeedError::Size)
}

/// Drops every collection of the workload.
pub async fn drop_all(
    client: &Client,
    plan: &CustomPlan,
    limit: Duration,
) -> Result<(), CustomSeedError> {
    let db = client.database(plan.workload.database());
    for c in 0..plan.workload.collections().len() {
        drop_one(&db, plan, c, limit).await?;
    }
    Ok(())
}

async fn drop_one(
    db: &Database,
    plan: &CustomPlan,
    c: usize,
    limit: Duration,
) -> Result<(), CustomSeedError> {
    let name = &plan.workload.collections()[c].name;
    within(
        whole_collection(limit),
        db.collection::<Document>(name).drop(),
    )
    .await
    .map_err(|source| CustomSeedError::Server {
        namespace: namespace(plan, c),
        step: "dropping the collection",
        source,
    })
}

/// Loads documents `[from[c], to[c])` of every collection `c`, then builds its indexes.
/// Returns the seconds the inserts and index builds took.
pub async fn load(
    target: &ConnectedTarget,
    plan: &CustomPlan,
    from: &[u64],
    to: &[u64],
    limit: Duration,
) -> Result<f64, CustomSeedError> {
    let started = Instant::now();
    for c in 0..to.len() {
        load_one(target, plan, c, from[c], to[c], limit).await?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Loads documents `[from, to)` of collection `c` with `seedWorkers` concurrent batches of
/// `seedBatchSize`, then builds its indexes (after the load, as for the built-in workloads).
/// A collection loaded from empty on a sharded target is sharded and pre-split first.
async fn load_one(
    target: &ConnectedTarget,
    plan: &CustomPlan,
    c: usize,
    from: u64,
    to: u64,
    limit: Duration,
) -> Result<(), CustomSeedError> {
    if from == 0
        && let Some(sharded) = custom_plan(target, plan, c, to, limit)
            .await
            .map_err(|e| CustomSeedError::Sharding(namespace(plan, c), e.to_string()))?
    {
        shard_collection(&target.client, &sharded, limit)
            .await
            .map_err(|e| CustomSeedError::Sharding(namespace(plan, c), e.to_string()))?;
    }
    let db = target.client.database(plan.workload.database());
    let db = &db;
    let batch = u64::from(plan.seed_batch_size.max(1));
    let next = Arc::new(AtomicU64::new(from));
    let mut tasks: tokio::task::JoinSet<Result<(), CustomSeedError>> = tokio::task::JoinSet::new();
    for _ in 0..plan.seed_workers.max(1) {
        let (db, next, plan) = (db.clone(), next.clone(), plan.clone());
        tasks.spawn(async move {
            let collection = plan.workload.collections()[c].name.clone();
            loop {
                let a = next.fetch_add(batch, Ordering::Relaxed);
                if a >= to {
                    return Ok(());
                }
                let b = (a + batch).min(to);
                let workload = plan.workload.clone();
                let seed = plan.dataset_seed;
                // Generating documents is CPU work: keep it off the I/O threads.
                let documents: Vec<Document> = tokio::task::spawn_blocking(move || {
                    (a..b).map(|i| workload.document(seed, c, i)).collect()
                })
                .await
                .expect("document generation does not panic");
                let template = doc! {"insert": &collection, "documents": [], "ordered": false};
                for command in split_write(&template, "documents", documents) {
                    insert(&db, &plan, c, command, limit).await?;
                }
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.expect("seeding task does not panic")?;
    }
    if let Some(command) = plan.workload.create_indexes(c) {
        within(whole_collection(limit), db.run_command(command))
            .await
            .map_err(|source| CustomSeedError::Server {
                namespace: namespace(plan, c),
                step: "creating the indexes",
                source,
            })?;
    }
    Ok(())
}

async fn insert(
    db: &Database,
    plan: &CustomPlan,
    c: usize,
    command: Document,
    limit: Duration,
) -> Result<(), CustomSeedError> {
    let reply = within(limit, db.run_command(command))
        .await
        .map_err(|source| CustomSeedError::Server {
            namespace: namespace(plan, c),
            step: "inserting a batch",
            source,
        })?;
    if let Ok(errors) = reply.get_array("writeErrors")
        && let Some(Bson::Document(first)) = errors.first()
    {
        return Err(CustomSeedError::WriteErrors {
            namespace: namespace(plan, c),
            count: errors.len(),
            first: first.to_string(),
        });
    }
    Ok(())
}

/// Reloads each collection of `written` to its seeded state at `records`: dropped, loaded and
/// indexed (and sharded) again. Returns the documents written.
pub async fn reload(
    target: &ConnectedTarget,
    plan: &CustomPlan,
    records: u64,
    written: &[usize],
    limit: Duration,
) -> Result<u64, CustomSeedError> {
    let counts = counts(plan, records)?;
    let db = target.client.database(plan.workload.database());
    let mut rewritten = 0;
    for &c in written.iter().filter(|&&c| c < counts.len()) {
        drop_one(&db, plan, c, limit).await?;
        load_one(target, plan, c, 0, counts[c], limit).await?;
        rewritten += counts[c];
    }
    Ok(rewritten)
}

/// The digest of all the workload's collections (docs/specs/custom.md §7): each collection's
/// digest, combined as SHA-256 over `name=value;` in collection order, with their total count.
pub async fn digest_all(
    client: &Client,
    plan: &CustomPlan,
    limit: Duration,
) -> Result<DatasetDigest, DigestError> {
    let mut parts = Vec::new();
    for collection in plan.workload.collections() {
        let one = digest(client, plan.workload.database(), &collection.name, limit).await?;
        parts.push((collection.name.clone(), one));
    }
    Ok(combine(&parts))
}

fn combine(parts: &[(String, DatasetDigest)]) -> DatasetDigest {
    let mut hash = Sha256::new();
    for (name, d) in parts {
        hash.update(format!("{name}={};", d.value));
    }
    let mut methods: Vec<&str> = parts.iter().map(|(_, d)| d.method.as_str()).collect();
    methods.dedup();
    DatasetDigest {
        method: format!("{}-combined", methods.join("+")),
        value: hex::encode(hash.finalize()),
        documents: parts.iter().map(|(_, d)| d.documents).sum(),
    }
}

/// The identity a stored custom dataset is checked against.
pub fn identity(plan: &CustomPlan) -> String {
    format!(
        "{} datasetSeed={}",
        plan.workload.dataset_identity(),
        plan.dataset_seed
    )
}

/// Where the stored digest of a custom workload's dataset is kept (`_id` in the digests).
pub fn stored_id(plan: &CustomPlan) -> String {
    format!("{}.*", plan.workload.database())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_combined_digest_names_each_collection_in_order() {
        let d = |method: &str, value: &str, documents| DatasetDigest {
            method: method.to_owned(),
            value: value.to_owned(),
            documents,
        };
        let parts = vec![
            ("customers".to_owned(), d("dbHash", "aa", 10)),
            ("orders".to_owned(), d("dbHash", "bb", 50)),
        ];
        let combined = combine(&parts);
        assert_eq!(combined.method, "dbHash-combined");
        assert_eq!(combined.documents, 60);
        // echo -n 'customers=aa;orders=bb;' | sha256sum
        assert_eq!(
            combined.value,
            hex::encode(Sha256::digest(b"customers=aa;orders=bb;"))
        );
        let mut swapped = parts.clone();
        swapped.reverse();
        assert_ne!(combine(&swapped).value, combined.value);
    }
}
