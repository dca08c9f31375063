//! Reading a filter back: was it aimed at the seeded set or a planned miss (§3)? Lets a test or
//! the runner measure the realized hit rate from what was actually sent.

use super::data::{MISS_STATUS, STATUSES, cities};
use super::ids::{
    MISS_FLIGHT_ID_MAX, MISS_SEQ_BASE, first_seq_of_seeded_flight_id, seq_of_object_id,
};
use crate::workload::Operation;
use mongodb::bson::{Bson, Document};

/// What a find/update/delete filter of flights/v1 aims at, for a dataset of N0 seeded documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterTarget {
    /// Seeded document(s). `seq` is the target's document number for `_id` filters, the smallest
    /// seeded `seq` carrying the id for `flight_id` filters, and `None` for route and status.
    Hit {
        /// See above.
        seq: Option<u64>,
    },
    /// A planned miss: flight_id 1–99999, `_id` at 2^63 and above, origin = destination, or
    /// status `unknown`.
    PlannedMiss,
    /// Something flights/v1 does not generate against this dataset.
    Foreign,
}

fn as_i64(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        _ => None,
    }
}

/// Classifies a flights/v1 filter (`{flight_id}`, `{_id}`, `{origin, destination}`, `{status}`)
/// against a dataset of `documents` (N0) seeded documents.
pub fn classify_filter(filter: &Document, documents: u64) -> FilterTarget {
    let keys: Vec<&str> = filter.keys().map(String::as_str).collect();
    match keys.as_slice() {
        ["flight_id"] => match filter.get("flight_id").and_then(as_i64) {
            Some(f) if (1..=MISS_FLIGHT_ID_MAX as i64).contains(&f) => FilterTarget::PlannedMiss,
            Some(f) => match first_seq_of_seeded_flight_id(f) {
                Some(seq) if seq < documents => FilterTarget::Hit { seq: Some(seq) },
                _ => FilterTarget::Foreign,
            },
            None => FilterTarget::Foreign,
        },
        ["_id"] => match filter
            .get_object_id("_id")
            .ok()
            .and_then(|id| seq_of_object_id(&id))
        {
            Some(seq) if seq < documents => FilterTarget::Hit { seq: Some(seq) },
            Some(seq) if seq >= MISS_SEQ_BASE => FilterTarget::PlannedMiss,
            _ => FilterTarget::Foreign,
        },
        ["origin", "destination"] => {
            let (Ok(o), Ok(d)) = (filter.get_str("origin"), filter.get_str("destination")) else {
                return FilterTarget::Foreign;
            };
            if !cities().contains(&o) || !cities().contains(&d) {
                FilterTarget::Foreign
            } else if o == d {
                FilterTarget::PlannedMiss
            } else {
                FilterTarget::Hit { seq: None }
            }
        }
        ["status"] => match filter.get_str("status") {
            Ok(MISS_STATUS) => FilterTarget::PlannedMiss,
            Ok(s) if STATUSES.contains(&s) => FilterTarget::Hit { seq: None },
            _ => FilterTarget::Foreign,
        },
        _ => FilterTarget::Foreign,
    }
}

/// The filter of a single-command find, update or delete operation (`filter`, or the first
/// statement's `q`); `None` for inserts, aggregates and transactions.
pub fn operation_filter(op: &Operation) -> Option<Document> {
    let [cmd] = op.commands.as_slice() else {
        return None;
    };
    if cmd.in_transaction {
        return None;
    }
    let body = cmd.to_document();
    let statement = |field: &str| {
        body.get_array(field)
            .ok()?
            .first()?
            .as_document()?
            .get_document("q")
            .ok()
            .cloned()
    };
    match cmd.name() {
        "find" => body.get_document("filter").ok().cloned(),
        "update" => statement("updates"),
        "delete" => statement("deletes"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flights::ids::object_id;
    use mongodb::bson::doc;

    #[test]
    fn flight_id_filters() {
        // 610617 is seq 0's id (hand-computed in ids.rs); 998020 is seq 1's.
        assert_eq!(
            classify_filter(&doc! { "flight_id": 610_617 }, 10),
            FilterTarget::Hit { seq: Some(0) }
        );
        assert_eq!(
            classify_filter(&doc! { "flight_id": 998_020_i64 }, 10),
            FilterTarget::Hit { seq: Some(1) }
        );
        // seq 1 is not seeded in a 1-document dataset.
        assert_eq!(
            classify_filter(&doc! { "flight_id": 998_020 }, 1),
            FilterTarget::Foreign
        );
        assert_eq!(
            classify_filter(&doc! { "flight_id": 1 }, 10),
            FilterTarget::PlannedMiss
        );
        assert_eq!(
            classify_filter(&doc! { "flight_id": 99_999 }, 10),
            FilterTarget::PlannedMiss
        );
        assert_eq!(
            classify_filter(&doc! { "flight_id": 1_000_000 }, 10),
            FilterTarget::Foreign
        );
        assert_eq!(
            classify_filter(&doc! { "flight_id": "610617" }, 10),
            FilterTarget::Foreign
        );
    }

    #[test]
    fn id_filters() {
        assert_eq!(
            classify_filter(&doc! { "_id": object_id(9) }, 10),
            FilterTarget::Hit { seq: Some(9) }
        );
        assert_eq!(
            classify_filter(&doc! { "_id": object_id(10) }, 10),
            FilterTarget::Foreign
        );
        assert_eq!(
            classify_filter(&doc! { "_id": object_id(1 << 63) }, 10),
            FilterTarget::PlannedMiss
        );
    }

    #[test]
    fn route_and_status_filters() {
        let route = |o: &str, d: &str| classify_filter(&doc! { "origin": o, "destination": d }, 10);
        assert_eq!(route("Chicago", "Boston"), FilterTarget::Hit { seq: None });
        assert_eq!(route("Chicago", "Chicago"), FilterTarget::PlannedMiss);
        assert_eq!(route("Atlantis", "Boston"), FilterTarget::Foreign);
        assert_eq!(
            classify_filter(&doc! { "status": "landed" }, 10),
            FilterTarget::Hit { seq: None }
        );
        assert_eq!(
            classify_filter(&doc! { "status": "unknown" }, 10),
            FilterTarget::PlannedMiss
        );
        assert_eq!(
            classify_filter(&doc! { "status": "lost" }, 10),
            FilterTarget::Foreign
        );
        assert_eq!(
            classify_filter(&doc! { "flight_id": 1, "status": "x" }, 10),
            FilterTarget::Foreign
        );
    }

    #[test]
    fn filters_are_found_in_single_command_operations() {
        let op = |body: Document, in_transaction| Operation {
            label: "x",
            database: "airline",
            commands: vec![crate::workload::Command::new(&body, false, in_transaction)],
        };
        let q = doc! { "flight_id": 5 };
        let find = op(
            doc! { "find": "flights", "filter": q.clone(), "limit": 5 },
            false,
        );
        assert_eq!(operation_filter(&find), Some(q.clone()));
        let update = op(
            doc! { "update": "flights", "updates": [{ "q": q.clone(), "u": {} }] },
            false,
        );
        assert_eq!(operation_filter(&update), Some(q.clone()));
        let delete = op(
            doc! { "delete": "flights", "deletes": [{ "q": q.clone(), "limit": 1 }] },
            false,
        );
        assert_eq!(operation_filter(&delete), Some(q.clone()));
        let in_tx = op(doc! { "find": "flights", "filter": q.clone() }, true);
        assert_eq!(operation_filter(&in_tx), None);
        let agg = op(doc! { "aggregate": "flights", "pipeline": [] }, false);
        assert_eq!(operation_filter(&agg), None);
    }
}
