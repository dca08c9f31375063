//! The §4 index sets as one `createIndexes` command (specs/flights.md §4).

use super::params::IndexSet;
use super::version::COLLECTION;
use mongodb::bson::{Document, doc};

/// One secondary index: its server default name and its key pattern, keys in order.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    /// The name the server gives this key pattern by default.
    pub name: &'static str,
    /// The key pattern.
    pub key: Document,
}

/// The secondary indexes of `set` in creation order (indexes 1–6, plus 7 for `seven`).
pub fn index_specs(set: IndexSet) -> Vec<IndexSpec> {
    let mut specs = vec![
        IndexSpec {
            name: "flight_id_1_equipment.plane_type_1",
            key: doc! { "flight_id": 1, "equipment.plane_type": 1 },
        },
        IndexSpec {
            name: "flight_id_1_seats_available_1",
            key: doc! { "flight_id": 1, "seats_available": 1 },
        },
        IndexSpec {
            name: "flight_id_1_duration_minutes_1_seats_available_1",
            key: doc! { "flight_id": 1, "duration_minutes": 1, "seats_available": 1 },
        },
        IndexSpec {
            name: "equipment.plane_type_1",
            key: doc! { "equipment.plane_type": 1 },
        },
        IndexSpec {
            name: "origin_1_destination_1_flight_date_-1",
            key: doc! { "origin": 1, "destination": 1, "flight_date": -1 },
        },
        IndexSpec {
            name: "status_1",
            key: doc! { "status": 1 },
        },
    ];
    if set == IndexSet::Seven {
        specs.push(IndexSpec {
            name: "flight_id_1",
            key: doc! { "flight_id": 1 },
        });
    }
    specs
}

/// The `createIndexes` command that creates `set` in one call: `{createIndexes: "flights",
/// indexes: [{key, name}, …]}`, no options. Names are spelled out (equal to the server defaults)
/// because servers before 7.1 require them.
pub fn create_indexes_command(set: IndexSet) -> Document {
    let indexes: Vec<Document> = index_specs(set)
        .into_iter()
        .map(|s| doc! { "key": s.key, "name": s.name })
        .collect();
    doc! { "createIndexes": COLLECTION, "indexes": indexes }
}

/// The index names `listIndexes` must show after seeding, in order: `_id_` then the set.
pub fn expected_index_names(set: IndexSet) -> Vec<&'static str> {
    std::iter::once("_id_")
        .chain(index_specs(set).into_iter().map(|s| s.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flights::document::bson_bytes;

    /// The server's default index name: `field_direction` joined by `_`.
    fn default_name(key: &Document) -> String {
        key.iter()
            .map(|(k, v)| format!("{k}_{}", v.as_i32().unwrap()))
            .collect::<Vec<_>>()
            .join("_")
    }

    #[test]
    fn plgm6_command_is_exactly_section_4() {
        let expected = doc! {
            "createIndexes": "flights",
            "indexes": [
                { "key": { "flight_id": 1, "equipment.plane_type": 1 }, "name": "flight_id_1_equipment.plane_type_1" },
                { "key": { "flight_id": 1, "seats_available": 1 }, "name": "flight_id_1_seats_available_1" },
                { "key": { "flight_id": 1, "duration_minutes": 1, "seats_available": 1 },
                  "name": "flight_id_1_duration_minutes_1_seats_available_1" },
                { "key": { "equipment.plane_type": 1 }, "name": "equipment.plane_type_1" },
                { "key": { "origin": 1, "destination": 1, "flight_date": -1 }, "name": "origin_1_destination_1_flight_date_-1" },
                { "key": { "status": 1 }, "name": "status_1" },
            ],
        };
        let got = create_indexes_command(IndexSet::Plgm6);
        // Compare bytes, so key order and int32 directions are checked too.
        assert_eq!(bson_bytes(&got), bson_bytes(&expected));
        assert_eq!(expected_index_names(IndexSet::Plgm6).len(), 7);
    }

    #[test]
    fn seven_adds_flight_id_1_last() {
        let got = create_indexes_command(IndexSet::Seven);
        let indexes = got.get_array("indexes").unwrap();
        assert_eq!(indexes.len(), 7);
        let last = indexes[6].as_document().unwrap();
        assert_eq!(
            last,
            &doc! { "key": { "flight_id": 1 }, "name": "flight_id_1" }
        );
        assert_eq!(
            expected_index_names(IndexSet::Seven),
            [
                "_id_",
                "flight_id_1_equipment.plane_type_1",
                "flight_id_1_seats_available_1",
                "flight_id_1_duration_minutes_1_seats_available_1",
                "equipment.plane_type_1",
                "origin_1_destination_1_flight_date_-1",
                "status_1",
                "flight_id_1",
            ]
        );
    }

    #[test]
    fn names_are_the_server_defaults() {
        for spec in index_specs(IndexSet::Seven) {
            assert_eq!(spec.name, default_name(&spec.key));
        }
    }
}
