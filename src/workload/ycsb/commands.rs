//! The database commands YCSB's synchronous `mongodb` binding sends (specs/ycsb.md §6), built as
//! the wire command documents the Java driver produces (without driver-added fields such as
//! `$db`, `lsid` or the write concern, which come from the client's URL).
//!
//! | binding call | command |
//! |---|---|
//! | read | `{find, filter: {_id: key}, projection?: {f: 1, …}, limit: 1, singleBatch: true}` |
//! | scan | `{find, filter: {_id: {$gte: key}}, sort: {_id: 1}, projection?, limit: n}` (cursor drained) |
//! | update | `{update, updates: [{q: {_id: key}, u: {$set: {f: bin, …}}}], ordered: true}` |
//! | insert | `{insert, documents: [doc], ordered: true}` |
//! | insert, upsert | `{update, updates: [{q: {_id: key}, u: doc, upsert: true}], ordered: true}` |
//! | batch flush | `{insert, documents: [doc, …], ordered: false}` |
//! | batch flush, upsert (master) | `{update, updates: [{q: {_id}, u: {$set: doc}, upsert: true}, …], ordered: true}` |
//! | delete | `{delete, deletes: [{q: {_id: key}, limit: 1}], ordered: true}` |
//!
//! A batch flush is one command while it fits MongoDB's limits, else several consecutive ones
//! (each at most 16 MiB and 100,000 statements, see [`crate::workload::split_write`]), as the
//! Java driver splits an `insertMany` or bulk write; the runner sends them in order as one
//! operation.

use mongodb::bson::{Bson, Document, doc};

use crate::workload::{Command, split_write};

fn command(body: Document, drain_cursor: bool) -> Command {
    Command::new(&body, drain_cursor, false)
}

fn projection(fields: &[&str]) -> Document {
    fields
        .iter()
        .map(|f| (f.to_string(), Bson::Int32(1)))
        .collect()
}

/// Read one record; `fields` = `None` reads the whole document (no projection).
pub fn read(table: &str, key: &str, fields: Option<&[&str]>) -> Command {
    let mut body = doc! { "find": table, "filter": { "_id": key } };
    if let Some(fields) = fields {
        body.insert("projection", projection(fields));
    }
    body.insert("limit", 1i32);
    body.insert("singleBatch", true);
    command(body, false)
}

/// Range scan of `limit` records in `_id` order from `start_key`.
pub fn scan(table: &str, start_key: &str, limit: i32, fields: Option<&[&str]>) -> Command {
    let mut body = doc! {
        "find": table,
        "filter": { "_id": { "$gte": start_key } },
        "sort": { "_id": 1i32 },
    };
    if let Some(fields) = fields {
        body.insert("projection", projection(fields));
    }
    body.insert("limit", limit);
    command(body, true)
}

/// `updateOne({_id: key}, {$set: values})` without upsert.
pub fn update(table: &str, key: &str, values: Document) -> Command {
    command(
        doc! {
            "update": table,
            "updates": [ { "q": { "_id": key }, "u": { "$set": values } } ],
            "ordered": true,
        },
        false,
    )
}

/// `insertOne(document)`.
pub fn insert_one(table: &str, document: Document) -> Command {
    command(
        doc! { "insert": table, "documents": [document], "ordered": true },
        false,
    )
}

/// `replaceOne({_id}, document, upsert)` (`mongodb.upsert=true`, batch size 1).
pub fn upsert_one(table: &str, document: Document) -> Command {
    let id = document.get("_id").cloned().unwrap_or(Bson::Null);
    command(
        doc! {
            "update": table,
            "updates": [ { "q": { "_id": id }, "u": document, "upsert": true } ],
            "ordered": true,
        },
        false,
    )
}

/// Unordered `insertMany(documents)` (a full batch): one command, or several within MongoDB's
/// command limits.
pub fn insert_many(table: &str, documents: Vec<Document>) -> Vec<Command> {
    let template = doc! { "insert": table, "documents": [], "ordered": false };
    split_write(&template, "documents", documents)
        .into_iter()
        .map(|body| command(body, false))
        .collect()
}

/// A batch of upserts as YCSB master sends it: `$set` of each whole document, upsert, ordered;
/// one command, or several within MongoDB's command limits.
pub fn upsert_many(table: &str, documents: Vec<Document>) -> Vec<Command> {
    let updates: Vec<Document> = documents
        .into_iter()
        .map(|d| {
            let id = d.get("_id").cloned().unwrap_or(Bson::Null);
            doc! { "q": { "_id": id }, "u": { "$set": d }, "upsert": true }
        })
        .collect();
    let template = doc! { "update": table, "updates": [], "ordered": true };
    split_write(&template, "updates", updates)
        .into_iter()
        .map(|body| command(body, false))
        .collect()
}

/// `deleteOne({_id: key})` (part of the binding, unused by CoreWorkload).
pub fn delete(table: &str, key: &str) -> Command {
    command(
        doc! {
            "delete": table,
            "deletes": [ { "q": { "_id": key }, "limit": 1i32 } ],
            "ordered": true,
        },
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::{Binary, spec::BinarySubtype};

    #[test]
    fn read_without_and_with_projection() {
        let whole = read("usertable", "user1", None);
        assert_eq!(
            whole.to_document(),
            doc! { "find": "usertable", "filter": { "_id": "user1" }, "limit": 1i32, "singleBatch": true }
        );
        assert!(!whole.drain_cursor && !whole.in_transaction);
        let one = read("usertable", "user1", Some(&["field3"]));
        assert_eq!(
            one.to_document(),
            doc! {
                "find": "usertable", "filter": { "_id": "user1" }, "projection": { "field3": 1i32 },
                "limit": 1i32, "singleBatch": true,
            }
        );
    }

    #[test]
    fn scan_is_gte_sorted_limited_and_drained() {
        let s = scan("usertable", "user5", 42, None);
        assert_eq!(
            s.to_document(),
            doc! {
                "find": "usertable", "filter": { "_id": { "$gte": "user5" } }, "sort": { "_id": 1i32 },
                "limit": 42i32,
            }
        );
        assert!(s.drain_cursor);
    }

    #[test]
    fn writes_have_the_binding_shapes() {
        let bin = Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes: vec![33, 34],
        });
        let u = update("t", "k", doc! { "field1": bin.clone() });
        assert_eq!(
            u.to_document(),
            doc! { "update": "t", "updates": [ { "q": { "_id": "k" }, "u": { "$set": { "field1": bin.clone() } } } ], "ordered": true }
        );
        let d = doc! { "_id": "k", "field0": bin.clone() };
        assert_eq!(
            insert_one("t", d.clone()).to_document(),
            doc! { "insert": "t", "documents": [d.clone()], "ordered": true }
        );
        assert_eq!(
            upsert_one("t", d.clone()).to_document(),
            doc! { "update": "t", "updates": [ { "q": { "_id": "k" }, "u": d.clone(), "upsert": true } ], "ordered": true }
        );
        let many = insert_many("t", vec![d.clone(), d.clone()]);
        assert_eq!(many.len(), 1);
        assert_eq!(
            many[0].to_document(),
            doc! { "insert": "t", "documents": [d.clone(), d.clone()], "ordered": false }
        );
        let upserts = upsert_many("t", vec![d.clone()]);
        assert_eq!(upserts.len(), 1);
        assert_eq!(
            upserts[0].to_document(),
            doc! { "update": "t", "updates": [ { "q": { "_id": "k" }, "u": { "$set": d.clone() }, "upsert": true } ], "ordered": true }
        );
        assert_eq!(
            delete("t", "k").to_document(),
            doc! { "delete": "t", "deletes": [ { "q": { "_id": "k" }, "limit": 1i32 } ], "ordered": true }
        );
    }

    #[test]
    fn large_batches_split_below_the_command_limits() {
        // 100 records of 10 fields × 20,000 bytes (≈ 200 KB each, 20 MB together): two
        // commands, each within 16 MiB, the records in order.
        let record = |i: i32| -> Document {
            let mut d = doc! { "_id": format!("user{i}") };
            for f in 0..10 {
                d.insert(
                    format!("field{f}"),
                    Bson::Binary(Binary {
                        subtype: BinarySubtype::Generic,
                        bytes: vec![b'a'; 20_000],
                    }),
                );
            }
            d
        };
        let records: Vec<Document> = (0..100).map(record).collect();
        let record_len = crate::workload::bson_len(&records[0]);
        assert_eq!(
            record_len,
            4 + (1 + 4 + 4 + 6) + 10 * (1 + 7 + 4 + 1 + 20_000) + 1
        );
        for commands in [
            insert_many("usertable", records.clone()),
            upsert_many("usertable", records.clone()),
        ] {
            assert_eq!(commands.len(), 2);
            let mut ids = Vec::new();
            for c in &commands {
                assert!(c.body.as_bytes().len() <= crate::workload::MAX_COMMAND_BYTES);
                let body = c.to_document();
                let array = body.iter().nth(1).unwrap().1.as_array().unwrap();
                for statement in array {
                    let d = statement.as_document().unwrap();
                    let id = d
                        .get_str("_id")
                        .or_else(|_| d.get_document("q").and_then(|q| q.get_str("_id")));
                    ids.push(id.unwrap().to_owned());
                }
            }
            assert_eq!(
                ids,
                (0..100).map(|i| format!("user{i}")).collect::<Vec<_>>()
            );
        }
        // 16 MiB / ≈ 200,155 bytes per element: 83 records in the first insert command.
        let inserts = insert_many("usertable", records);
        assert_eq!(
            inserts[0]
                .to_document()
                .get_array("documents")
                .unwrap()
                .len(),
            83
        );
    }
}
