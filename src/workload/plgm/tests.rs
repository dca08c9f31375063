use serde_json::{Value, json};

use super::cx::unique_name;
use super::*;

const COLLECTIONS: &str = include_str!("../../../tests/fixtures/plgm/flights-collections.json");
const QUERIES: &str = include_str!("../../../tests/fixtures/plgm/flights-queries.json");

/// The imported document as JSON, for exact comparisons.
fn doc(collections: &str, queries: &str) -> Value {
    let imported = import(collections, queries).unwrap();
    serde_yaml::from_str(&imported.yaml).unwrap()
}

fn one_collection(fields: Value) -> String {
    json!([{"database": "d", "collection": "c", "fields": fields}]).to_string()
}

fn op<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no operation {name}"))
}

fn err(collections: &str, queries: &str) -> String {
    import(collections, queries).unwrap_err().to_string()
}

#[test]
fn field_types_map_to_generators() {
    let fields = json!({
        "i": {"type": "int"},
        "i2": {"type": "Integer", "min": 3, "max": 7},
        "l": {"type": "long"},
        "d": {"type": "double", "min": 10, "max": 500},
        "dec": {"type": "decimal128"},
        "s": {"type": "string"},
        "p": {"type": "string", "provider": "email", "maxLength": 30},
        "p2": {"type": "string", "provider": "city", "minLength": 25},
        "b": {"type": "bool"},
        "dt": {"type": "date", "provider": "date_time"},
        "ts": {"type": "timestamp"},
        "oid": {"type": "objectid"},
        "o": {"type": "object", "fields": {"x": {"type": "int", "min": 0, "max": 1}}},
        "o2": {"type": "object"},
        "a": {"type": "array", "arraySize": 3, "items": {"type": "string", "provider": "word"}},
        "a2": {"type": "array"},
        "bin": {"type": "binary"}
    });
    let d = doc(&one_collection(fields), "[]");
    let dates = json!({"date": {"from": "2025-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}});
    let expected = json!({
        "i": {"int": {"min": 0, "max": 2147483647}},
        "i2": {"int": {"min": 3, "max": 7}},
        "l": {"int": {"min": 0, "max": 9223372036854775807i64}},
        "d": {"double": {"min": 10, "max": 500, "decimals": 6}},
        "dec": {"double": {"min": 0, "max": 999.99, "decimals": 2}},
        "s": {"string": {"length": 9}},
        "p": {"string": {"min": 5, "max": 30}},
        "p2": {"string": {"min": 25, "max": 25}},
        "b": {"bool": {"probability": 0.5}},
        "dt": dates,
        "ts": dates,
        "oid": {"objectId": {}},
        "o": {"document": {"x": {"int": {"min": 0, "max": 1}}}},
        "o2": {"document": {"nested_random": {"int": {"min": 0, "max": 99}}}},
        "a": {"array": {"of": {"string": {"min": 5, "max": 20}}, "min": 3, "max": 3}},
        "a2": {"array": {"of": {"int": {"min": 0, "max": 999}}, "min": 1, "max": 5}},
        "bin": {"constant": "unknown-binary"}
    });
    assert_eq!(d["collections"][0]["fields"], expected);
    // Written order is kept.
    let keys: Vec<&String> = d["collections"][0]["fields"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("i"));
    assert_eq!(keys.last().map(|k| k.as_str()), Some("bin"));
}

#[test]
fn the_fixture_imports_collection_indexes_and_shard_key() {
    let imported = import(COLLECTIONS, QUERIES).unwrap();
    assert!(
        imported
            .yaml
            .starts_with("# Imported from plgm's collection and query files")
    );
    assert!(
        imported.yaml.contains(
            "\nversion: 1\ndatabase: airline\ncollections:\n- name: flights\n  share: 1\n"
        )
    );
    assert!(imported.yaml.contains(
        "  - keys:\n      flight_id: 1\n      duration_minutes: 1\n      seats_available: 1\n"
    ));
    assert!(
        imported
            .yaml
            .contains("  shardKey:\n    field: flight_id\n    type: hashed\n")
    );
    assert!(
        imported
            .yaml
            .contains("phases:\n- name: plgm\n  duration: 10m\n")
    );
    // Every note is in the header.
    for note in &imported.notes {
        assert!(imported.yaml.contains(&format!("# - {note}\n")), "{note}");
    }
    let providers = imported
        .notes
        .iter()
        .find(|n| n.starts_with("faker providers"))
        .unwrap();
    assert!(providers.ends_with(
        "flights.agent_first_name (first_name), flights.agent_last_name (last_name), \
         flights.agent_email (email), flights.origin (city), flights.destination (city), \
         flights.flight_code (flight_code), flights.gate (gate), flights.passengers[].name (name)"
    ));
    let d: Value = serde_yaml::from_str(&imported.yaml).unwrap();
    let c = &d["collections"][0];
    assert_eq!(c["indexes"].as_array().unwrap().len(), 4);
    assert_eq!(
        c["indexes"][3],
        json!({"keys": {"equipment.plane_type": 1}})
    );
    assert!(c["fields"].get("_id").is_none());
    assert_eq!(
        c["fields"]["origin"],
        json!({"string": {"min": 8, "max": 30}})
    );
    assert_eq!(
        c["fields"]["seats_available"],
        json!({"int": {"min": 1, "max": 50}})
    );
    assert_eq!(
        c["fields"]["passengers"]["array"]["of"]["document"]["seat_number"],
        json!({"string": {"length": 9}})
    );
}

#[test]
fn placeholders_become_generators_where_plgm_replaces_them() {
    let d = doc(COLLECTIONS, QUERIES);
    assert_eq!(
        op(&d, "find-1")["find"],
        json!({"collection": "flights", "filter": {"flight_id": "{{int}}", "seats_available": {"$gte": "{{int}}"}}, "limit": 5})
    );
    assert_eq!(
        op(&d, "find-2")["find"]["filter"],
        json!({"origin": "{{string}}"})
    );
    assert_eq!(op(&d, "find-2")["find"]["limit"], 20);
    assert_eq!(
        op(&d, "find-0")["find"]["projection"],
        json!({"_id": 0, "flight_id": 1, "origin": 1, "destination": 1, "gate": 1})
    );
    assert_eq!(
        op(&d, "update-one-3")["update"],
        json!({"collection": "flights", "filter": {"flight_id": "{{int}}"},
               "update": {"$inc": {"seats_available": -1}}, "multi": false})
    );
    assert_eq!(
        op(&d, "delete-one-4")["delete"],
        json!({"collection": "flights", "filter": {"flight_id": "{{int}}"}, "multi": false})
    );
    assert_eq!(
        op(&d, "aggregate-5")["aggregate"]["pipeline"][0],
        json!({"$match": {"duration_minutes": {"$lt": "{{int}}"}}})
    );
    assert_eq!(
        d["generators"]["int"],
        json!({"int": {"min": 0, "max": 999}})
    );
    let values = d["generators"]["string"]["choice"]["values"]
        .as_array()
        .unwrap();
    assert_eq!(values.len(), 1000);
    assert_eq!(
        (values[0].as_str(), values[999].as_str()),
        (Some("val-0"), Some("val-999"))
    );

    // Inside arrays and in updates plgm leaves them alone, and so does the import.
    let q = json!([
        {"collection": "c", "operation": "find", "filter": {"a": {"$in": ["<int>", 3]}}},
        {"collection": "c", "operation": "updateMany", "filter": {"a": "<string>"},
         "update": {"$set": {"b": "<int>"}}, "upsert": true}
    ]);
    let imported = import(
        &one_collection(json!({"a": {"type": "int"}})),
        &q.to_string(),
    )
    .unwrap();
    let d: Value = serde_yaml::from_str(&imported.yaml).unwrap();
    assert_eq!(
        op(&d, "find-0")["find"]["filter"],
        json!({"a": {"$in": ["<int>", 3]}})
    );
    assert_eq!(
        op(&d, "update-many-1")["update"],
        json!({"collection": "c", "filter": {"a": "{{string}}"}, "update": {"$set": {"b": "<int>"}},
               "multi": true, "upsert": true})
    );
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.starts_with("placeholders plgm does not replace")
                && n.ends_with(": queries[0].filter.a.$in[0], queries[1].update.$set.b"))
    );
    assert!(imported.yaml.contains("filter:\n      a: '{{string}}'\n"));
}

/// Σ weight per class, in order of first appearance.
fn class_sums(d: &Value) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for o in d["operations"].as_array().unwrap() {
        let class = o["class"].as_str().unwrap().to_owned();
        let w = o["weight"].as_u64().unwrap();
        match out.iter_mut().find(|(c, _)| *c == class) {
            Some((_, sum)) => *sum += w,
            None => out.push((class, w)),
        }
    }
    out
}

/// Σ weight of each class / Σ weight, in ten-thousandths (exact).
fn shares(d: &Value) -> Vec<(String, u64)> {
    let out = class_sums(d);
    let total: u64 = out.iter().map(|(_, w)| w).sum();
    assert!(
        out.iter().all(|(_, w)| (w * 10_000) % total == 0),
        "{out:?} of {total}"
    );
    out.into_iter()
        .map(|(c, w)| (c, w * 10_000 / total))
        .collect()
}

#[test]
fn weights_are_plgms_percentages_exactly() {
    let d = doc(COLLECTIONS, QUERIES);
    let names: Vec<&str> = d["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "find-0",
            "find-1",
            "find-2",
            "update-one-3",
            "delete-one-4",
            "aggregate-5",
            "update-many-fallback-seats_available",
            "update-many-fallback-duration_minutes",
            "delete-many-fallback",
            "insert",
            "insert-many"
        ]
    );
    let weights: Vec<u64> = d["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["weight"].as_u64().unwrap())
        .collect();
    assert_eq!(
        weights,
        [360, 360, 360, 378, 180, 100, 21, 21, 20, 100, 100]
    );
    let expected = [
        ("find", 5400),
        ("updateOne", 1890),
        ("deleteOne", 900),
        ("aggregate", 500),
        ("updateMany", 210),
        ("deleteMany", 100),
        ("insert", 500),
        ("insertMany", 500),
    ];
    let expected: Vec<(String, u64)> = expected.iter().map(|(c, w)| (c.to_string(), *w)).collect();
    assert_eq!(shares(&d), expected);
    assert_eq!(
        op(&d, "insert-many")["insert"],
        json!({"collection": "flights", "documents": 10})
    );
    assert_eq!(
        op(&d, "update-many-fallback-seats_available")["update"],
        json!({"collection": "flights", "filter": {"flight_id": "{{int}}"},
               "update": {"$inc": {"seats_available": "{{seats_inc}}"}}, "multi": true})
    );
    assert_eq!(
        op(&d, "delete-many-fallback")["delete"],
        json!({"collection": "flights", "filter": {"flight_id": "{{int}}"}, "multi": true})
    );
    assert_eq!(
        d["generators"]["duration_minutes"],
        json!({"int": {"min": 30, "max": 429}})
    );
}

#[test]
fn kinds_without_queries_follow_plgm() {
    // Only finds (plgm's default files): update and delete fall back, aggregate is skipped.
    let finds = json!([{"collection": "c", "operation": "find", "filter": {"a": "<int>"}},
                       {"collection": "other", "operation": "find"},
                       {"collection": "c", "operation": "delete"}]);
    let fields = json!({"_id": {"type": "objectid"}, "a": {"type": "int"}, "b": {"type": "bool"}});
    let imported = import(&one_collection(fields), &finds.to_string()).unwrap();
    let d: Value = serde_yaml::from_str(&imported.yaml).unwrap();
    // The skipped 5 % leave the others in plgm's proportions.
    let per_class = class_sums(&d);
    let plgm = [
        ("find", 5400),
        ("updateOne", 1890),
        ("updateMany", 210),
        ("deleteOne", 900),
        ("deleteMany", 100),
        ("insert", 500),
        ("insertMany", 500),
    ];
    assert_eq!(per_class.len(), plgm.len());
    for (class, share) in plgm {
        let w = per_class.iter().find(|(c, _)| c == class).unwrap().1;
        assert_eq!(w * 5400, share * per_class[0].1, "{class}");
    }
    // Generic fallback: $set of each field but _id, filtered on _id with plgm's "<objectid>".
    assert_eq!(
        op(&d, "update-one-fallback-a")["update"],
        json!({"collection": "c", "filter": {"_id": "<objectid>"}, "update": {"$set": {"a": "{{set_a}}"}}, "multi": false})
    );
    assert_eq!(
        op(&d, "update-one-fallback-b")["update"]["update"],
        json!({"$set": {"b": "{{set_b}}"}})
    );
    assert_eq!(
        d["generators"]["set_b"],
        json!({"bool": {"probability": 0.5}})
    );
    assert_eq!(
        op(&d, "update-one-fallback-a")["weight"],
        op(&d, "update-one-fallback-b")["weight"]
    );
    let notes = imported.notes.join("\n");
    assert!(notes.contains("kinds without a query are skipped, as plgm skips them, so the other kinds share their time: aggregate (5 %)"));
    assert!(notes.contains("dropped, as plgm drops them: queries[1] (\"other\")"));
    assert!(notes.contains("are skipped: queries[2] (delete)"));
    assert!(notes.contains("filtered on `_id`"));
    assert!(notes.contains("c._id (objectid)"));
}

#[test]
fn wrapped_collections_and_several_collections() {
    let collections = json!({"collections": [
        {"database": "d", "collection": "a", "fields": {"x": {"type": "int"}}},
        {"database": "d", "collection": "B b", "fields": {"x": {"type": "string"}}}
    ]});
    let d = doc(&collections.to_string(), "[]");
    assert_eq!(d["database"], "d");
    assert_eq!(op(&d, "insert-a")["weight"], op(&d, "insert-b-b")["weight"]);
    assert_eq!(op(&d, "insert-b-b")["insert"]["collection"], "B b");
    // Same field name, different generators: two names.
    assert_eq!(
        op(&d, "update-one-fallback-a-x")["update"]["update"],
        json!({"$set": {"x": "{{set_x}}"}})
    );
    assert_eq!(
        op(&d, "update-one-fallback-b-b-x")["update"]["update"],
        json!({"$set": {"x": "{{set_x_2}}"}})
    );
    assert_eq!(d["generators"]["set_x_2"], json!({"string": {"length": 9}}));
}

#[test]
fn errors_name_the_file_and_the_path() {
    let c = one_collection(json!({"a": {"type": "int"}}));
    let e = import(&c, "[{\"operation\": \"find\",}]").unwrap_err();
    assert_eq!(e.kind(), FileKind::Queries);
    assert_eq!(
        e.to_string(),
        "the queries file is not valid JSON: trailing comma at line 1, column 23"
    );
    let e = import("[\n  {", "[]").unwrap_err();
    assert!(
        matches!(
            e,
            ImportError::Syntax {
                kind: FileKind::Collections,
                line: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        err(
            &c,
            r#"[{"collection": "c", "operation": "find"}, {"collection": "c", "operation": "upsertt"}]"#
        ),
        "queries[1].operation: unknown operation \"upsertt\"; expected one of: find, updateOne, \
         updateMany, deleteOne, deleteMany, aggregate"
    );
    let two = json!([{"database": "a", "collection": "x"}, {"database": "b", "collection": "y"}]);
    assert_eq!(
        err(&two.to_string(), "[]"),
        "collections[1].database: \"b\" differs from collections[0].database \"a\"; a custom workload has one database"
    );
    let e = import(&c, r#"{"queries": []}"#).unwrap_err();
    assert_eq!(
        (e.kind(), e.to_string()),
        (
            FileKind::Queries,
            "queries: expected an array of query definitions, found an object".into()
        )
    );
    assert_eq!(
        err("[]", "[]"),
        "collections: no collection definitions (plgm refuses an empty file)"
    );
    assert_eq!(
        err(
            &one_collection(json!({"a": {"type": "int", "max": "9"}})),
            "[]"
        ),
        "collections[0].fields.a.max: expected an integer, found the string \"9\""
    );
    assert_eq!(
        err(
            &one_collection(json!({"a": {"type": "int", "min": 9, "max": 2}})),
            "[]"
        ),
        "collections[0].fields.a.max: 2 is below min 9"
    );
    assert_eq!(
        err(
            &one_collection(json!({"a": {"type": "array", "arraySize": 5000}})),
            "[]"
        ),
        "collections[0].fields.a.arraySize: 5000; a custom workload's arrays hold at most 1000 items"
    );
    let index = json!([{"database": "d", "collection": "c", "indexes": [{"keys": {"p": "2d"}}]}]);
    assert_eq!(
        err(&index.to_string(), "[]"),
        "collections[0].indexes[0].keys.p: unsupported index key the string \"2d\"; expected one of: 1, -1, \"hashed\", \"text\", \"2dsphere\""
    );
    let shard =
        json!([{"database": "d", "collection": "c", "shardConfig": {"key": {"a": 1, "b": 1}}}]);
    assert!(err(&shard.to_string(), "[]").starts_with("collections[0].shardConfig.key: 2 fields;"));
    let q = |q: Value| err(&c, &json!([q]).to_string());
    assert_eq!(
        q(
            json!({"collection": "c", "operation": "aggregate", "pipeline": [{"$match": {}}, {"$out": "x"}]})
        ),
        "queries[0].pipeline[1].$out: a custom workload's pipelines do not write"
    );
    assert_eq!(
        q(json!({"collection": "c", "operation": "find", "filter": {"a": "{{x}}"}})),
        "queries[0].filter.a: \"{{x}}\" holds \"{{\", which a custom workload reads as a placeholder"
    );
    assert_eq!(
        q(json!({"collection": "c", "operation": "updateOne", "filter": {}})),
        "queries[0].update: missing; plgm's updateOne fails without one"
    );
    assert_eq!(
        q(json!({"collection": "c", "operation": "updateOne", "update": {"a": 1}})),
        "queries[0].update.a: not an update operator; plgm's driver refuses replacement documents in an update"
    );
    assert_eq!(
        q(json!({"collection": "c", "operation": "find", "limit": 2.5})),
        "queries[0].limit: expected an integer, found the number 2.5"
    );
}

#[test]
fn names_and_weights_stay_within_a_custom_workloads_limits() {
    let mut taken = Vec::new();
    assert_eq!(unique_name("Find", &mut taken), "find");
    assert_eq!(unique_name("find", &mut taken), "find-2");
    assert_eq!(unique_name("_Über ops!", &mut taken), "ber-ops");
    let many: Vec<Value> = (0..70)
        .map(|_| json!({"collection": "c", "operation": "find"}))
        .collect();
    let c = one_collection(json!({"a": {"type": "int"}}));
    assert!(
        err(&c, &Value::Array(many).to_string())
            .starts_with("queries: the import makes 76 operations")
    );
    // Unknown keys are ignored as plgm ignores them, and said so; keys match case-insensitively.
    let imported = import(
        &json!([{"Database": "d", "collection": "c", "fields": {"a": {"Type": "bool", "typo": 1}}}]).to_string(),
        "[]",
    )
    .unwrap();
    assert!(imported.notes.contains(
        &"keys plgm ignores are ignored here too: collections[0].fields.a.typo".to_owned()
    ));
}

#[test]
fn imports_parse_as_custom_workloads() {
    let every_type = one_collection(json!({
        "_id": {"type": "objectid"}, "i": {"type": "int", "min": 1, "max": 9}, "l": {"type": "long"},
        "d": {"type": "double", "min": -5, "max": 5}, "big": {"type": "float", "max": 1000000000000i64},
        "dec": {"type": "decimal"}, "s": {"type": "string"}, "p": {"type": "string", "provider": "name"},
        "b": {"type": "boolean"}, "t": {"type": "timestamp"}, "o": {"type": "object"},
        "a": {"type": "array", "items": {"type": "object", "fields": {"x": {"type": "date"}}}},
        "a2": {"type": "array", "arraySize": 2},
        "n": {"type": "null"}
    }));
    let queries = json!([
        {"collection": "c", "operation": "find", "filter": {"s": "<string>", "i": {"$in": ["<int>"]}},
         "projection": {"s": 1}},
        {"collection": "c", "operation": "aggregate", "pipeline": [{"$match": {"i": "<int>"}}, {"$count": "n"}]}
    ]);
    let wrapped = json!({"collections": [
        {"database": "d", "collection": "a", "fields": {"x": {"type": "int"}},
         "shardConfig": {"key": {"x": 1}}},
        {"database": "d", "collection": "b"}
    ]});
    for (c, q) in [
        (COLLECTIONS.to_owned(), QUERIES.to_owned()),
        (COLLECTIONS.to_owned(), "[]".to_owned()),
        (every_type, queries.to_string()),
        (wrapped.to_string(), "[]".to_owned()),
    ] {
        let imported = import(&c, &q).unwrap();
        let workload = crate::workload::custom::parse(&imported.yaml, |s| {
            crate::api::units::parse_duration(s).ok()
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", imported.yaml));
        let d: Value = serde_yaml::from_str(&imported.yaml).unwrap();
        let weights: Vec<u64> = workload.operations().iter().map(|o| o.weight).collect();
        let written: Vec<u64> = d["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["weight"].as_u64().unwrap())
            .collect();
        assert_eq!(weights, written);
        assert_eq!(workload.phases().len(), 1);
    }
}
