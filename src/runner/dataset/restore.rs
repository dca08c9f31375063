//! Bringing a collection back to its seeded state S(size) after a phase changed it
//! (specs/flights.md §7a, specs/ycsb.md §2a; a custom workload reloads the collections its
//! phase may have written, specs/custom.md §7). For the built-in workloads the cost is
//! proportional to the operations run:
//! the documents the phase inserted are removed, and every seeded document it may have
//! updated or deleted is written again as the generator made it. The generators know each
//! operation's target, so the set of such documents is collected while the operations are
//! generated; replies are never needed.

use std::time::Duration;

use mongodb::Database;
use mongodb::bson::{Bson, Document, RawDocumentBuf, doc};

use crate::runner::server::ConnectedTarget;

use crate::plan::WorkloadPlan;
use crate::runner::deadline::whole_collection;
use crate::runner::send::Changes;
use crate::workload::flights::{self, Flight, object_id};
use crate::workload::ycsb::{self, Properties};

/// Statements per delete or insert command of a restore: far below the server's batch limits
/// and small enough that one command never nears 16 MiB (flights documents are ≤ 3.2 KB).
const CHUNK: usize = 500;

/// What a restore did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Restored {
    /// Documents removed (inserted by the phase).
    pub removed: u64,
    /// Seeded documents written again.
    pub rewritten: u64,
}

/// Why a restore failed.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("restoring {namespace}: {step}: {source}")]
    Server {
        namespace: String,
        step: &'static str,
        source: mongodb::error::Error,
    },
    #[error("restoring {namespace}: {step}: {count} write errors, the first: {first}")]
    WriteErrors {
        namespace: String,
        step: &'static str,
        count: usize,
        first: String,
    },
    #[error("restoring {namespace}: {}", crate::runner::deadline::timed_out(step, *limit))]
    TimedOut {
        namespace: String,
        step: &'static str,
        limit: Duration,
    },
    #[error("restoring YCSB records: {0}")]
    Properties(#[from] ycsb::PropertyError),
    #[error("restoring the custom workload's collections: {0}")]
    Custom(String),
}

/// Restores the collection of `plan` to its seeded state of `documents` documents (records)
/// from `changes`. Each write command is a range delete or a bulk of up to [`CHUNK`]
/// statements, so it may take [`whole_collection`] of the operation timeout `timeout`.
pub async fn restore(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    documents: u64,
    changes: &Changes,
    timeout: Duration,
) -> Result<Restored, RestoreError> {
    if let WorkloadPlan::Custom(custom) = plan {
        let written = changes.custom_written();
        let rewritten = super::seed_custom::reload(target, custom, documents, &written, timeout)
            .await
            .map_err(|e| RestoreError::Custom(e.to_string()))?;
        return Ok(Restored {
            removed: 0,
            rewritten,
        });
    }
    let client = &target.client;
    let timeout = whole_collection(timeout);
    match plan {
        WorkloadPlan::Flights(params) => {
            let db = client.database(flights::DATABASE);
            let writer = Writer::new(&db, flights::COLLECTION, timeout);
            let mut removed = 0;
            if changes.inserted_flights() {
                // Every run-inserted seq lies above the seeded range, so one range removes
                // them all (and anything an interrupted earlier phase left there).
                removed = writer
                    .delete(vec![doc! {
                        "q": {"_id": {"$gte": object_id(documents)}},
                        "limit": 0
                    }])
                    .await?;
            }
            let seqs = changes.flight_seqs(documents);
            for chunk in seqs.chunks(CHUNK) {
                let ids = chunk.iter().map(|&s| Bson::ObjectId(object_id(s)));
                let seeded = chunk
                    .iter()
                    .map(|&s| Flight::seeded(params.dataset_seed, s));
                let (insert, _) = flights::insert_command(seeded, chunk.len() as u64);
                writer.replace(ids, insert).await?;
            }
            Ok(Restored {
                removed,
                rewritten: seqs.len() as u64,
            })
        }
        WorkloadPlan::Ycsb { raw, seed } => {
            let props = Properties::from_raw(raw)?;
            let db = client.database(&props.database);
            let writer = Writer::new(&db, &props.table, timeout);
            let records = ycsb::RecordBuilder::new(&props, *seed);
            // Keys are hashed (or padded) record numbers, so no range of `_id`s holds the
            // inserted records: each possible one is named. A worker's batch may not have
            // been sent; removing a record that is not there is harmless.
            let inserted: Vec<u64> = changes.inserted_records(documents).collect();
            let mut removed = 0;
            for chunk in inserted.chunks(CHUNK) {
                let statements = chunk
                    .iter()
                    .map(|&k| doc! {"q": {"_id": records.key(k)}, "limit": 1})
                    .collect();
                removed += writer.delete(statements).await?;
            }
            let keynums = changes.updated_records(documents);
            for chunk in keynums.chunks(CHUNK) {
                let replacements: Vec<Document> =
                    chunk.iter().map(|&k| records.load_document(k)).collect();
                let ids: Vec<Bson> = replacements
                    .iter()
                    .map(|d| d.get("_id").cloned().unwrap_or(Bson::Null))
                    .collect();
                let insert =
                    doc! {"insert": &props.table, "documents": replacements, "ordered": false};
                writer.replace(ids.into_iter(), encode(&insert)).await?;
            }
            Ok(Restored {
                removed,
                rewritten: keynums.len() as u64,
            })
        }
        WorkloadPlan::Custom(_) => unreachable!("restored above"),
    }
}

/// Unordered bulk deletes and inserts on one collection, write errors surfaced.
struct Writer<'a> {
    db: &'a Database,
    collection: &'a str,
    timeout: Duration,
}

impl<'a> Writer<'a> {
    fn new(db: &'a Database, collection: &'a str, timeout: Duration) -> Writer<'a> {
        Writer {
            db,
            collection,
            timeout,
        }
    }

    fn namespace(&self) -> String {
        format!("{}.{}", self.db.name(), self.collection)
    }

    async fn command(&self, step: &'static str, body: RawDocumentBuf) -> Result<u64, RestoreError> {
        let reply = tokio::time::timeout(self.timeout, self.db.run_raw_command(body))
            .await
            .map_err(|_| RestoreError::TimedOut {
                namespace: self.namespace(),
                step,
                limit: self.timeout,
            })?
            .map_err(|source| RestoreError::Server {
                namespace: self.namespace(),
                step,
                source,
            })?;
        if let Ok(errors) = reply.get_array("writeErrors")
            && let Some(first) = errors.first()
        {
            return Err(RestoreError::WriteErrors {
                namespace: self.namespace(),
                step,
                count: errors.len(),
                first: first.to_string(),
            });
        }
        Ok(reply
            .get("n")
            .and_then(|n| n.as_i64().or_else(|| n.as_i32().map(i64::from)))
            .unwrap_or(0) as u64)
    }

    /// Runs delete statements; returns the documents removed.
    async fn delete(&self, statements: Vec<Document>) -> Result<u64, RestoreError> {
        self.command(
            "removing what the phase inserted",
            encode(&doc! {"delete": self.collection, "deletes": statements, "ordered": false}),
        )
        .await
    }

    /// Removes the documents with `ids` (whatever the phase left of them) and runs `insert`,
    /// the insert command of their seeded versions.
    async fn replace(
        &self,
        ids: impl Iterator<Item = Bson>,
        insert: RawDocumentBuf,
    ) -> Result<(), RestoreError> {
        let deletes: Vec<Document> = ids.map(|id| doc! {"q": {"_id": id}, "limit": 1}).collect();
        self.command(
            "removing changed documents",
            encode(&doc! {"delete": self.collection, "deletes": deletes, "ordered": false}),
        )
        .await?;
        self.command("writing the seeded documents again", insert)
            .await?;
        Ok(())
    }
}

fn encode(command: &Document) -> RawDocumentBuf {
    RawDocumentBuf::from_document(command).expect("a restore command encodes as BSON")
}
