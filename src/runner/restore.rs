//! Bringing a collection back to its seeded state S(size) after a phase changed it
//! (specs/flights.md §7a, specs/ycsb.md §2a), at a cost proportional to the operations run:
//! the documents the phase inserted are removed, and every seeded document it may have
//! updated or deleted is written again as the generator made it. The generators know each
//! operation's target, so the set of such documents is collected while the operations are
//! generated; replies are never needed.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use mongodb::bson::{Bson, Document, RawDocumentBuf, doc};
use mongodb::{Client, Database};

use crate::workload::flights::{self, Flight, Writes, ids, object_id};
use crate::workload::ycsb::{self, Properties};

use super::cell::WorkloadPlan;
use super::deadline::whole_collection;

/// Statements per delete or insert command of a restore: far below the server's batch limits
/// and small enough that one command never nears 16 MiB (flights documents are ≤ 3.2 KB).
const CHUNK: usize = 500;

/// What one phase may have changed in the seeded collection, noted by all of its workers at
/// once. Bitmaps over the seeded range hold it in one bit per seeded document however long the
/// phase runs: a set per worker grew towards the whole dataset under a skewed key choice, which
/// at 256 workers made tens of MB.
#[derive(Debug, Default)]
pub struct Changes {
    /// Seeded documents changed: flights `seq`s changed by `_id` or in a transaction, YCSB
    /// record numbers updated.
    written: Bits,
    /// flights: `seq mod 900000` of the documents whose flight_id a filter named (every seeded
    /// document sharing the id may have changed).
    sharing_flight_id: Bits,
    /// flights: whether the phase inserted documents (all above the seeded range).
    inserted_flights: AtomicBool,
    /// YCSB: one past the highest record number the phase inserted (0: none). Run-phase
    /// inserts number records from the record count up, so these are the records to remove.
    inserted_end: AtomicU64,
}

impl Changes {
    /// Changes to a collection of `documents` seeded documents; what lies above is removed by
    /// range, not noted.
    pub fn new(documents: u64) -> Changes {
        Changes {
            written: Bits::new(documents),
            sharing_flight_id: Bits::new(documents.min(ids::SEEDED_ID_RANGE)),
            ..Changes::default()
        }
    }

    /// Notes a flights operation.
    pub fn flights(&self, writes: Writes, inserts: bool) {
        match writes {
            Writes::Nothing => {}
            Writes::Document(seq) => self.written.set(seq),
            Writes::Pair(a, b) => {
                self.written.set(a);
                self.written.set(b);
            }
            Writes::SharingFlightId(seq) => self.sharing_flight_id.set(seq % ids::SEEDED_ID_RANGE),
        }
        if inserts && !self.inserted_flights.load(Ordering::Relaxed) {
            self.inserted_flights.store(true, Ordering::Relaxed);
        }
    }

    /// Notes a YCSB operation (a buffered insert too: its record may be sent at cleanup).
    pub fn ycsb(&self, op: &ycsb::YcsbOp) {
        match op.kind {
            ycsb::OpKind::Update | ycsb::OpKind::ReadModifyWrite => self.written.set(op.keynum),
            ycsb::OpKind::Insert => {
                self.inserted_end
                    .fetch_max(op.keynum + 1, Ordering::Relaxed);
            }
            ycsb::OpKind::Read | ycsb::OpKind::Scan => {}
        }
    }

    /// flights: the seeded `seq`s below `documents` to write again, ascending.
    fn flight_seqs(&self, documents: u64) -> Vec<u64> {
        let mut seqs: BTreeSet<u64> = self.written.ones().filter(|&s| s < documents).collect();
        for class in self.sharing_flight_id.ones() {
            seqs.extend(ids::seqs_sharing_flight_id(class, documents));
        }
        seqs.into_iter().collect()
    }

    /// YCSB: the loaded records below `documents` to write again, ascending.
    fn updated_records(&self, documents: u64) -> Vec<u64> {
        self.written.ones().filter(|&k| k < documents).collect()
    }

    /// YCSB: the record numbers at or above `documents` the phase may have inserted.
    fn inserted_records(&self, documents: u64) -> std::ops::Range<u64> {
        documents..self.inserted_end.load(Ordering::Relaxed).max(documents)
    }
}

/// A fixed-size set of small numbers that many workers add to at once; numbers beyond its size
/// (rounded up to a multiple of 64) are ignored.
#[derive(Debug, Default)]
struct Bits(Box<[AtomicU64]>);

impl Bits {
    fn new(size: u64) -> Bits {
        Bits((0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    fn set(&self, i: u64) {
        let Some(word) = self.0.get((i / 64) as usize) else {
            return;
        };
        let bit = 1 << (i % 64);
        // Most updates under a skewed key choice hit records already noted: reading first
        // keeps the cache line shared between cores.
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    fn ones(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().enumerate().flat_map(|(w, word)| {
            let mut bits = word.load(Ordering::Relaxed);
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(w as u64 * 64 + u64::from(b))
            })
        })
    }
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
            if changes.inserted_flights.load(Ordering::Relaxed) {
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
    use crate::workload::ycsb::properties::RawProperties;

    #[test]
    fn flights_changes_keep_documents_shared_ids_and_inserts_apart() {
        let changes = Changes::new(2_000_000);
        changes.flights(Writes::Document(3), false);
        changes.flights(Writes::Nothing, true);
        changes.flights(Writes::SharingFlightId(900_007), false);
        changes.flights(Writes::Pair(1, 3), false);
        // Above the seeded range: removed by range, never written again.
        changes.flights(Writes::Document(2_000_000), false);
        assert_eq!(
            changes.flight_seqs(2_000_000),
            [1, 3, 7, 900_007, 1_800_007]
        );
        assert_eq!(changes.flight_seqs(900_000), [1, 3, 7]);
        assert!(changes.inserted_flights.load(Ordering::Relaxed));
        assert!(!Changes::new(10).inserted_flights.load(Ordering::Relaxed));
    }

    #[test]
    fn a_shared_flight_id_beyond_a_small_dataset_changes_no_seeded_document() {
        let changes = Changes::new(100);
        changes.flights(Writes::SharingFlightId(450), false);
        changes.flights(Writes::SharingFlightId(900_042), false);
        assert_eq!(changes.flight_seqs(100), [42]);
    }

    #[test]
    fn ycsb_changes_note_updated_records_and_the_inserted_range() {
        let mut raw = RawProperties::preset("a").unwrap();
        raw.set("insertproportion", "0.2");
        raw.set("recordcount", "1000");
        raw.set("operationcount", "2000");
        let props = Properties::from_raw(&raw).unwrap();
        let shared = ycsb::SharedState::new(1000);
        let mut worker = ycsb::Worker::new(&props, 7, 0, 1, ycsb::Phase::Run, &shared).unwrap();
        let changes = Changes::new(1000);
        let (mut updated, mut inserted_end) = (BTreeSet::new(), 0);
        while let Some(op) = worker.next() {
            changes.ycsb(&op);
            match op.kind {
                ycsb::OpKind::Update | ycsb::OpKind::ReadModifyWrite => {
                    updated.insert(op.keynum);
                }
                ycsb::OpKind::Insert => inserted_end = inserted_end.max(op.keynum + 1),
                ycsb::OpKind::Read | ycsb::OpKind::Scan => {}
            }
        }
        assert!(inserted_end > 1000 && !updated.is_empty());
        assert_eq!(
            changes.updated_records(1000),
            updated
                .into_iter()
                .filter(|&k| k < 1000)
                .collect::<Vec<_>>()
        );
        assert_eq!(changes.inserted_records(1000), 1000..inserted_end);
    }

    #[test]
    fn inserts_note_one_past_the_highest_record() {
        let changes = Changes::new(10);
        for keynum in [12, 10, 11] {
            changes
                .inserted_end
                .fetch_max(keynum + 1, Ordering::Relaxed);
        }
        assert_eq!(changes.inserted_records(10), 10..13);
        assert_eq!(Changes::new(10).inserted_records(10), 10..10);
    }

    #[test]
    fn bits_hold_each_number_once_and_ignore_those_beyond_their_size() {
        let bits = Bits::new(130);
        for i in [129, 0, 64, 63, 64, 191, 192, 1_000] {
            bits.set(i);
        }
        assert_eq!(bits.ones().collect::<Vec<_>>(), [0, 63, 64, 129, 191]);
        assert_eq!(Bits::new(0).ones().count(), 0);
    }
}
