//! Operation shapes of `flights/v1` (specs/flights.md §5) as database command documents.
//!
//! The builders here take already-drawn values; the draws themselves live in `worker`. Field
//! order inside every command is fixed, and so are the BSON types: flight ids, limits, counters
//! and sort directions are int32.

use super::document::{AVG_DOC_BYTES, Flight};
use super::version::COLLECTION;
use crate::workload::bson_writer::BsonWriter;
use mongodb::bson::{Bson, Document, RawDocumentBuf, doc, oid::ObjectId};

/// The operation types of §5.1, in draw order; `label()` is the measurement label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpType {
    /// One `find` command.
    Find,
    /// One `update` command with one statement.
    Update,
    /// One `delete` command with one statement.
    Delete,
    /// One unordered `insert` of `insertBatchSize` documents.
    Insert,
    /// One `aggregate`, cursor drained.
    Aggregate,
    /// One seat-transfer transaction.
    Transaction,
}

impl OpType {
    /// All types in draw order.
    pub const ALL: [OpType; 6] = [
        OpType::Find,
        OpType::Update,
        OpType::Delete,
        OpType::Insert,
        OpType::Aggregate,
        OpType::Transaction,
    ];

    /// The measurement label: `find`, `update`, `delete`, `insert`, `aggregate`, `transaction`.
    pub fn label(self) -> &'static str {
        match self {
            OpType::Find => "find",
            OpType::Update => "update",
            OpType::Delete => "delete",
            OpType::Insert => "insert",
            OpType::Aggregate => "aggregate",
            OpType::Transaction => "transaction",
        }
    }
}

/// Every operation shape of §5 (the variants §10 explains and reports plans for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// F1 byFlightId.
    FindByFlightId,
    /// F2 byRoute.
    FindByRoute,
    /// F3 byStatus.
    FindByStatus,
    /// U1 oneByFlightId.
    UpdateOneByFlightId,
    /// U2 oneById.
    UpdateOneById,
    /// U3 manyByFlightId.
    UpdateManyByFlightId,
    /// D1 oneByFlightId.
    DeleteOneByFlightId,
    /// D2 oneById.
    DeleteOneById,
    /// D3 manyByFlightId.
    DeleteManyByFlightId,
    /// The insert batch.
    Insert,
    /// A1 aircraftWindow.
    AggregateAircraftWindow,
    /// A2 routeSummary.
    AggregateRouteSummary,
    /// The seat transfer.
    Transaction,
}

impl Variant {
    /// The spec's short code: `F1` … `F3`, `U1` … `U3`, `D1` … `D3`, `I`, `A1`, `A2`, `T`.
    pub fn code(self) -> &'static str {
        match self {
            Variant::FindByFlightId => "F1",
            Variant::FindByRoute => "F2",
            Variant::FindByStatus => "F3",
            Variant::UpdateOneByFlightId => "U1",
            Variant::UpdateOneById => "U2",
            Variant::UpdateManyByFlightId => "U3",
            Variant::DeleteOneByFlightId => "D1",
            Variant::DeleteOneById => "D2",
            Variant::DeleteManyByFlightId => "D3",
            Variant::Insert => "I",
            Variant::AggregateAircraftWindow => "A1",
            Variant::AggregateRouteSummary => "A2",
            Variant::Transaction => "T",
        }
    }

    /// The operation type this variant is counted under.
    pub fn op_type(self) -> OpType {
        match self {
            Variant::FindByFlightId | Variant::FindByRoute | Variant::FindByStatus => OpType::Find,
            Variant::UpdateOneByFlightId
            | Variant::UpdateOneById
            | Variant::UpdateManyByFlightId => OpType::Update,
            Variant::DeleteOneByFlightId
            | Variant::DeleteOneById
            | Variant::DeleteManyByFlightId => OpType::Delete,
            Variant::Insert => OpType::Insert,
            Variant::AggregateAircraftWindow | Variant::AggregateRouteSummary => OpType::Aggregate,
            Variant::Transaction => OpType::Transaction,
        }
    }
}

/// F1's projection.
pub fn flight_projection() -> Document {
    doc! {
        "flight_id": 1, "flight_code": 1, "origin": 1, "destination": 1,
        "gate": 1, "status": 1, "_id": 0,
    }
}

/// `{find, filter, projection?, sort?, limit, singleBatch: true}`: the reply closes the cursor.
pub fn find_command(
    filter: Document,
    projection: Option<Document>,
    sort: Option<Document>,
    limit: i32,
) -> Document {
    let mut cmd = doc! { "find": COLLECTION, "filter": filter };
    if let Some(p) = projection {
        cmd.insert("projection", p);
    }
    if let Some(s) = sort {
        cmd.insert("sort", s);
    }
    cmd.insert("limit", limit);
    cmd.insert("singleBatch", true);
    cmd
}

/// `{update, updates: [{q, u, multi}]}`: updateOne (`multi: false`) or updateMany; no upsert.
pub fn update_command(q: Document, u: Document, multi: bool) -> Document {
    doc! { "update": COLLECTION, "updates": [ { "q": q, "u": u, "multi": multi } ] }
}

/// `{delete, deletes: [{q, limit}]}`: deleteOne (`limit: 1`) or deleteMany (`limit: 0`).
pub fn delete_command(q: Document, many: bool) -> Document {
    let limit: i32 = if many { 0 } else { 1 };
    doc! { "delete": COLLECTION, "deletes": [ { "q": q, "limit": limit } ] }
}

/// `{insert, documents, ordered: false}` of `flights`, written straight to BSON (a batch of
/// documents built as `Document`s takes several times its BSON size and most of an insert's
/// CPU), with the sum of the documents' BSON sizes.
pub fn insert_command(
    flights: impl IntoIterator<Item = Flight>,
    count: u64,
) -> (RawDocumentBuf, u64) {
    let mut w = BsonWriter::with_capacity((count * AVG_DOC_BYTES * 11 / 10) as usize + 64);
    w.str("insert", COLLECTION);
    w.start_array("documents");
    let mut bytes = 0;
    for (i, flight) in flights.into_iter().enumerate() {
        bytes += flight.write(&mut w, i) as u64;
    }
    w.end();
    w.bool("ordered", false);
    let command = RawDocumentBuf::from_bytes(w.finish()).expect("the writer writes a document");
    (command, bytes)
}

/// `{aggregate, pipeline, cursor: {}}`.
pub fn aggregate_command(pipeline: Vec<Document>) -> Document {
    doc! { "aggregate": COLLECTION, "pipeline": pipeline, "cursor": {} }
}

/// U1/U2's update: `{$inc: {seats_available: d}, $set: {status: S}}`.
pub fn seat_and_status_update(d: i32, status: &str) -> Document {
    doc! { "$inc": { "seats_available": d }, "$set": { "status": status } }
}

/// A1's pipeline over flight ids [F, F + window).
pub fn aircraft_window_pipeline(flight_id: i32, window: i32) -> Vec<Document> {
    vec![
        doc! { "$match": { "flight_id": { "$gte": flight_id, "$lt": flight_id + window } } },
        doc! { "$group": {
            "_id": "$equipment.plane_type",
            "flights": { "$sum": 1 },
            "avg_duration": { "$avg": "$duration_minutes" },
            "avg_seats_available": { "$avg": "$seats_available" },
        } },
        doc! { "$sort": { "flights": -1 } },
    ]
}

/// A2's pipeline over one route.
pub fn route_summary_pipeline(origin: &str, destination: &str) -> Vec<Document> {
    vec![
        doc! { "$match": { "origin": origin, "destination": destination } },
        doc! { "$group": {
            "_id": "$airline",
            "flights": { "$sum": 1 },
            "avg_duration": { "$avg": "$duration_minutes" },
        } },
        doc! { "$sort": { "flights": -1 } },
        doc! { "$limit": 10 },
    ]
}

/// The three statements of the seat transfer (§5.7) from A's passenger `p` (1-based) to B.
pub fn seat_transfer_commands(a: &Flight, b: &Flight, p: usize) -> [Document; 3] {
    let moved = &a.passengers[p - 1];
    let entry = doc! {
        "passenger_id": 100 + p as i32,
        "name": &moved.name,
        "ticket_number": &moved.ticket_number,
        "seat_number": &b.spare_seat,
    };
    [
        find_command(
            doc! { "_id": b.id },
            Some(doc! { "seats_available": 1, "equipment.total_seats": 1 }),
            None,
            1,
        ),
        update_command(
            doc! { "_id": a.id },
            doc! {
                "$pull": { "passengers": { "passenger_id": p as i32 } },
                "$inc": { "seats_available": 1 },
            },
            false,
        ),
        update_command(
            doc! { "_id": b.id },
            doc! {
                "$push": { "passengers": { "$each": [entry], "$position": 0, "$slice": 25 } },
                "$inc": { "seats_available": -1 },
            },
            false,
        ),
    ]
}

/// `{flight_id: F}`.
pub fn flight_id_filter(flight_id: i32) -> Document {
    doc! { "flight_id": flight_id }
}

/// `{_id: I}`.
pub fn id_filter(id: ObjectId) -> Document {
    doc! { "_id": Bson::ObjectId(id) }
}
