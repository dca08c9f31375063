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

use mongodb::bson::{Bson, Document, doc};

use crate::workload::Command;

fn command(body: Document, drain_cursor: bool) -> Command {
    Command {
        body,
        drain_cursor,
        in_transaction: false,
    }
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

/// Unordered `insertMany(documents)` (a full batch).
pub fn insert_many(table: &str, documents: Vec<Document>) -> Command {
    command(
        doc! { "insert": table, "documents": documents, "ordered": false },
        false,
    )
}

/// A batch of upserts as YCSB master sends it: `$set` of each whole document, upsert, ordered.
pub fn upsert_many(table: &str, documents: Vec<Document>) -> Command {
    let updates: Vec<Document> = documents
        .into_iter()
        .map(|d| {
            let id = d.get("_id").cloned().unwrap_or(Bson::Null);
            doc! { "q": { "_id": id }, "u": { "$set": d }, "upsert": true }
        })
        .collect();
    command(
        doc! { "update": table, "updates": updates, "ordered": true },
        false,
    )
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
            whole.body,
            doc! { "find": "usertable", "filter": { "_id": "user1" }, "limit": 1i32, "singleBatch": true }
        );
        assert!(!whole.drain_cursor && !whole.in_transaction);
        let one = read("usertable", "user1", Some(&["field3"]));
        assert_eq!(
            one.body,
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
            s.body,
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
            u.body,
            doc! { "update": "t", "updates": [ { "q": { "_id": "k" }, "u": { "$set": { "field1": bin.clone() } } } ], "ordered": true }
        );
        let d = doc! { "_id": "k", "field0": bin.clone() };
        assert_eq!(
            insert_one("t", d.clone()).body,
            doc! { "insert": "t", "documents": [d.clone()], "ordered": true }
        );
        assert_eq!(
            upsert_one("t", d.clone()).body,
            doc! { "update": "t", "updates": [ { "q": { "_id": "k" }, "u": d.clone(), "upsert": true } ], "ordered": true }
        );
        assert_eq!(
            insert_many("t", vec![d.clone(), d.clone()]).body,
            doc! { "insert": "t", "documents": [d.clone(), d.clone()], "ordered": false }
        );
        assert_eq!(
            upsert_many("t", vec![d.clone()]).body,
            doc! { "update": "t", "updates": [ { "q": { "_id": "k" }, "u": { "$set": d.clone() }, "upsert": true } ], "ordered": true }
        );
        assert_eq!(
            delete("t", "k").body,
            doc! { "delete": "t", "deletes": [ { "q": { "_id": "k" }, "limit": 1i32 } ], "ordered": true }
        );
    }
}
