//! Bringing a collection back to its seeded state S(size) after a phase changed it
//! (specs/flights.md §7a, specs/ycsb.md §2a), at a cost proportional to the operations run:
//! the documents the phase inserted are removed, and every seeded document it may have
//! updated or deleted is written again as the generator made it. The generators know each
//! operation's target, so the set of such documents is collected while the operations are
//! generated; replies are never needed.

use std::collections::BTreeSet;
use std::time::Duration;

use mongodb::bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};
use mongodb::{Client, Database};

use crate::workload::flights::{self, Flight, Writes, object_id};
use crate::workload::ycsb::{self, Properties};

use super::cell::WorkloadPlan;
use super::deadline::whole_collection;

/// Statements per delete or insert command of a restore: far below the server's batch limits
/// and small enough that one command never nears 16 MiB (flights documents are ≤ 3.2 KB).
const CHUNK: usize = 500;

/// What one phase may have changed in the seeded collection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// flights: seeded `seq`s changed by `_id` or in a transaction.
    pub seqs: BTreeSet<u64>,
    /// flights: seeded `seq`s changed by a flight_id filter (every document sharing the id may
    /// have changed).
    pub sharing_flight_id: BTreeSet<u64>,
    /// flights: whether the phase inserted documents (all above the seeded range).
    pub inserted_flights: bool,
    /// YCSB: record numbers of loaded records the phase updated.
    pub keynums: BTreeSet<u64>,
    /// YCSB: `_id`s of records the phase inserted.
    pub inserted_keys: BTreeSet<String>,
}

impl Changes {
    /// Notes a flights operation.
    pub fn flights(&mut self, writes: Writes, inserts: bool) {
        match writes {
            Writes::Nothing => {}
            Writes::Document(seq) => {
                self.seqs.insert(seq);
            }
            Writes::Pair(a, b) => {
                self.seqs.extend([a, b]);
            }
            Writes::SharingFlightId(seq) => {
                self.sharing_flight_id.insert(seq);
            }
        }
        self.inserted_flights |= inserts;
    }

    /// Notes a YCSB operation.
    pub fn ycsb(&mut self, op: &ycsb::YcsbOp) {
        match op.kind {
            ycsb::OpKind::Update | ycsb::OpKind::ReadModifyWrite => {
                self.keynums.insert(op.keynum);
            }
            ycsb::OpKind::Insert => {
                for command in &op.operation.commands {
                    self.inserted_keys.extend(inserted_ids(&command.body));
                }
            }
            ycsb::OpKind::Read | ycsb::OpKind::Scan => {}
        }
    }

    /// Adds another worker's changes.
    pub fn merge(&mut self, other: Changes) {
        self.seqs.extend(other.seqs);
        self.sharing_flight_id.extend(other.sharing_flight_id);
        self.inserted_flights |= other.inserted_flights;
        self.keynums.extend(other.keynums);
        self.inserted_keys.extend(other.inserted_keys);
    }
}

/// The string `_id`s an insert (`documents`) or upsert (`updates[].q`) command writes.
fn inserted_ids(body: &RawDocument) -> Vec<String> {
    let statements = |field| {
        body.get_array(field)
            .ok()
            .into_iter()
            .flatten()
            .filter_map(|s| s.ok()?.as_document())
    };
    let id = |d: &RawDocument| d.get_str("_id").ok().map(str::to_owned);
    let inserted: Vec<String> = statements("documents").filter_map(id).collect();
    if !inserted.is_empty() {
        return inserted;
    }
    statements("updates")
        .filter_map(|u| u.get_document("q").ok())
        .filter_map(id)
        .collect()
}

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
    #[error("restoring {namespace}: {}", super::deadline::timed_out(step, *limit))]
    TimedOut {
        namespace: String,
        step: &'static str,
        limit: Duration,
    },
    #[error("restoring YCSB records: {0}")]
    Properties(#[from] ycsb::PropertyError),
}

/// Restores the collection of `plan` to its seeded state of `documents` documents (records)
/// from `changes`. Each write command is a range delete or a bulk of up to [`CHUNK`]
/// statements, so it may take [`whole_collection`] of the operation timeout `timeout`.
pub async fn restore(
    client: &Client,
    plan: &WorkloadPlan,
    documents: u64,
    changes: &Changes,
    timeout: Duration,
) -> Result<Restored, RestoreError> {
    let timeout = whole_collection(timeout);
    match plan {
        WorkloadPlan::Flights(params) => {
            let db = client.database(flights::DATABASE);
            let writer = Writer::new(&db, flights::COLLECTION, timeout);
            let mut removed = 0;
            if changes.inserted_flights {
                // Every run-inserted seq lies above the seeded range, so one range removes
                // them all (and anything an interrupted earlier phase left there).
                removed = writer
                    .delete(vec![doc! {
                        "q": {"_id": {"$gte": object_id(documents)}},
                        "limit": 0
                    }])
                    .await?;
            }
            let mut seqs: BTreeSet<u64> = changes
                .seqs
                .iter()
                .copied()
                .filter(|&s| s < documents)
                .collect();
            for &seq in &changes.sharing_flight_id {
                seqs.extend(Writes::SharingFlightId(seq).seqs(documents));
            }
            let seqs: Vec<u64> = seqs.into_iter().collect();
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
            let keys: Vec<&String> = changes.inserted_keys.iter().collect();
            let mut removed = 0;
            for chunk in keys.chunks(CHUNK) {
                let statements = chunk
                    .iter()
                    .map(|k| doc! {"q": {"_id": k.as_str()}, "limit": 1})
                    .collect();
                removed += writer.delete(statements).await?;
            }
            let keynums: Vec<u64> = changes
                .keynums
                .iter()
                .copied()
                .filter(|&k| k < documents)
                .collect();
            let records = ycsb::RecordBuilder::new(&props, *seed);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_changes_keep_documents_shared_ids_and_inserts_apart() {
        let mut a = Changes::default();
        a.flights(Writes::Document(3), false);
        a.flights(Writes::Nothing, true);
        let mut b = Changes::default();
        b.flights(Writes::SharingFlightId(7), false);
        b.flights(Writes::Pair(1, 3), false);
        a.merge(b);
        assert_eq!(a.seqs, BTreeSet::from([1, 3]));
        assert_eq!(a.sharing_flight_id, BTreeSet::from([7]));
        assert!(a.inserted_flights);
    }

    #[test]
    fn inserted_ids_come_from_inserts_and_upserts() {
        let ids = |body: Document| {
            inserted_ids(&mongodb::bson::RawDocumentBuf::from_document(&body).unwrap())
        };
        let insert = doc! {"insert": "t", "documents": [{"_id": "user1"}, {"_id": "user2"}]};
        assert_eq!(ids(insert), ["user1", "user2"]);
        let upsert = doc! {"update": "t", "updates": [{"q": {"_id": "user3"}, "u": {}}]};
        assert_eq!(ids(upsert), ["user3"]);
        assert!(ids(doc! {"find": "t"}).is_empty());
    }
}
