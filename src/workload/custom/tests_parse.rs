//! Parsing: the example document, defaults, and each refusal with its exact path and message.

use std::time::Duration;

use sha2::Digest;

use super::*;

/// The spec's shop example, extended to use every operation kind.
pub(super) const SHOP: &str = r#"
version: 1
database: shop
collections:
  - name: customers
    fields:
      _id: {sequence: {start: 1}}
      name: {string: {min: 5, max: 12}}
      vip: {bool: {probability: 0.1}}
  - name: orders
    share: 5
    fields:
      _id: {sequence: {start: 1000}}
      customer_id: {ref: {collection: customers}}
      total: {double: {min: 5, max: 500, decimals: 2}}
      status: {choice: {values: [new, paid, shipped], weights: [1, 2, 7]}}
      created: {date: {from: "2024-01-01T00:00:00Z", to: "2025-01-01T00:00:00Z"}}
      items: {array: {of: {document: {sku: {int: {min: 1, max: 500, distribution: zipfian}}, qty: {int: {min: 1, max: 3}}, kind: item}}, min: 1, max: 3}}
      tag: {objectId: {}}
      source: web
      big: 3000000000
    indexes:
      - {keys: {customer_id: 1, created: -1}}
      - {keys: {created: 1}, expireAfterSeconds: 315360000}
      - {keys: {status: 1}, partialFilterExpression: {status: new}}
      - {keys: {tag: hashed}, name: by_tag, sparse: true}
    shardKey: {field: customer_id, type: hashed}
generators:
  customer: {ref: {collection: customers, distribution: zipfian}}
  order: {ref: {collection: orders}}
  since: {date: {from: "2024-01-01T00:00:00Z", to: "2024-12-31T00:00:00Z"}}
operations:
  - name: order-by-id
    weight: 30
    find: {collection: orders, filter: {_id: "{{order}}"}}
  - name: customer-orders
    weight: 30
    find: {collection: orders, filter: {customer_id: "{{customer}}", created: {$gt: "{{since}}"}}, sort: {created: -1}, limit: 10}
  - name: new-order
    weight: 10
    insert: {collection: orders, documents: 2}
  - name: pay-order
    weight: 15
    update: {collection: orders, filter: {_id: "{{order}}"}, update: {$set: {status: paid}}}
  - name: revenue
    class: report
    weight: 5
    aggregate: {collection: orders, pipeline: [{$match: {customer_id: "{{customer}}"}}, {$group: {_id: null, total: {$sum: $total}}}]}
  - name: checkout
    class: txn
    weight: 10
    transaction: {operations: [pay-order, new-order]}
  - name: cancel
    weight: 0
    delete: {collection: orders, filter: {_id: "{{order}}"}}
  - name: claim
    weight: 0
    findAndModify: {collection: orders, query: {status: new, customer_id: "{{customer}}"}, update: {$set: {status: paid}}, new: true, sort: {created: 1}}
phases:
  - {name: warm-up, duration: 30s, workers: 8, mix: {order-by-id: 1}}
  - {name: mixed, duration: 2m, workers: 16, targetOpsPerSecond: 0}
"#;

/// A small duration grammar for the tests (the crate's own lives outside `workload`).
pub(super) fn duration(s: &str) -> Option<Duration> {
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let n: u64 = s[..split].parse().ok()?;
    match &s[split..] {
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        "m" => Some(Duration::from_secs(n * 60)),
        "h" => Some(Duration::from_secs(n * 3600)),
        _ => None,
    }
}

pub(super) fn shop() -> Workload {
    parse(SHOP, duration).expect("the example parses")
}

/// SHOP with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    assert!(SHOP.contains(from), "{from:?} not in SHOP");
    SHOP.replacen(from, to, 1)
}

fn refusal(text: &str) -> (String, String) {
    match parse(text, duration) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => (e.path, e.message),
    }
}

#[track_caller]
fn refused(text: &str, path: &str, message: &str) {
    assert_eq!(refusal(text), (path.to_owned(), message.to_owned()));
}

const P: &str = "workload.custom";

#[test]
fn the_example_parses_with_its_defaults() {
    let w = shop();
    assert_eq!(w.database(), "shop");
    let names: Vec<&str> = w.collections().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["customers", "orders"]);
    assert_eq!(w.collections()[0].share, 1);
    assert_eq!(w.collections()[1].share, 5);
    assert_eq!(w.collections()[1].id_start(), 1000);
    assert_eq!(
        w.collections()[1].shard_key,
        Some(ShardKey {
            field: "customer_id".into(),
            hashed: true
        })
    );
    let ops: Vec<(&str, &str, &str, u64)> = w
        .operations()
        .iter()
        .map(|o| (o.name.as_str(), o.class, o.kind, o.weight))
        .collect();
    assert_eq!(
        ops,
        [
            ("order-by-id", "find", "find", 30),
            ("customer-orders", "find", "find", 30),
            ("new-order", "insert", "insert", 10),
            ("pay-order", "update", "update", 15),
            ("revenue", "report", "aggregate", 5),
            ("checkout", "txn", "transaction", 10),
            ("cancel", "delete", "delete", 0),
            ("claim", "findAndModify", "findAndModify", 0),
        ]
    );
    let phases = w.phases();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0].name, "warm-up");
    assert_eq!(
        phases[0].length,
        PhaseLength::Duration(Duration::from_secs(30))
    );
    assert_eq!(phases[0].workers, Some(8));
    assert_eq!(phases[0].target_ops_per_second, None);
    assert_eq!(phases[0].weights(), [1, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(phases[1].target_ops_per_second, Some(0));
    assert_eq!(phases[1].weights(), [30, 30, 10, 15, 5, 10, 0, 0]);
    assert_eq!(
        w.text_sha256(),
        hex::encode(sha2::Sha256::digest(SHOP.as_bytes()))
    );
}

#[test]
fn defaults_of_a_minimal_document() {
    let text = "version: 1\ncollections: [{name: c}]\noperations: [{name: all, find: {collection: c}}]\nphases: [{}, {operations: 500}]";
    let w = parse(text, duration).unwrap();
    assert_eq!(w.database(), "custom");
    assert_eq!(
        w.collections()[0].field_names().collect::<Vec<_>>(),
        ["_id"]
    );
    assert_eq!(w.collections()[0].id_start(), 0);
    assert_eq!(w.phases()[0].name, "warm-up");
    assert_eq!(
        w.phases()[0].length,
        PhaseLength::Duration(Duration::from_secs(60))
    );
    assert_eq!(w.phases()[1].name, "measured");
    assert_eq!(w.phases()[1].length, PhaseLength::Operations(500));
    let one = parse(
        "version: 1\ncollections: [{name: c}]\noperations: [{name: all, find: {collection: c}}]\nphases: [{}]",
        duration,
    )
    .unwrap();
    assert_eq!(
        one.phases()[0].length,
        PhaseLength::Duration(Duration::from_secs(600))
    );
    // JSON is YAML too.
    let json = r#"{"version": 1, "collections": [{"name": "c"}], "operations": [{"name": "all", "find": {"collection": "c"}}], "phases": [{}]}"#;
    assert_eq!(parse(json, duration).unwrap().operations()[0].name, "all");
}

#[test]
fn unknown_placeholder_names_the_known_generators() {
    let text = edit(
        r#"created: {$gt: "{{since}}"}"#,
        r#"price: {$gt: "{{zipf}}"}"#,
    );
    refused(
        &text,
        &format!("{P}.operations[1].find.filter.price.$gt"),
        r#"unknown generator "zipf"; expected one of: customer, order, since"#,
    );
}

#[test]
fn unknown_keys_are_refused_everywhere() {
    refused(
        &edit("phases:", "phase:"),
        &format!("{P}.phase"),
        r#"unknown key "phase"; expected one of: version, database, collections, generators, operations, phases"#,
    );
    refused(
        &edit(
            "{string: {min: 5, max: 12}}",
            "{string: {min: 5, maxx: 12}}",
        ),
        &format!("{P}.collections[0].fields.name.string.maxx"),
        r#"unknown key "maxx"; expected one of: length, min, max, distribution"#,
    );
    refused(
        &edit("    weight: 30\n", "    wieght: 30\n"),
        &format!("{P}.operations[0].wieght"),
        r#"unknown key "wieght"; expected one of: name, class, weight, find, insert, update, delete, aggregate, findAndModify, transaction"#,
    );
    refused(
        &edit("vip: {bool:", "vip: {boolean:"),
        &format!("{P}.collections[0].fields.vip"),
        r#"unknown generator kind "boolean"; expected one of: sequence, int, double, string, choice, bool, date, objectId, constant, array, document, ref"#,
    );
}

#[test]
fn sequence_is_refused_in_generators_at_any_depth() {
    refused(
        &edit("generators:\n", "generators:\n  n: {sequence: {}}\n"),
        &format!("{P}.generators.n.sequence"),
        "`sequence` is only allowed in a collection's fields",
    );
    refused(
        &edit(
            "generators:\n",
            "generators:\n  n: {array: {of: {sequence: {}}}}\n",
        ),
        &format!("{P}.generators.n.array.of.sequence"),
        "`sequence` is only allowed in a collection's fields",
    );
}

#[test]
fn transactions_name_existing_single_operations() {
    let nested = edit(
        "phases:\n",
        "  - {name: twice, transaction: {operations: [checkout]}}\nphases:\n",
    );
    refused(
        &nested,
        &format!("{P}.operations[8].transaction.operations[0]"),
        r#""checkout" is a transaction; transactions do not nest"#,
    );
    refused(
        &edit("[pay-order, new-order]", "[pay-order, nope]"),
        &format!("{P}.operations[5].transaction.operations[1]"),
        r#"unknown operation "nope"; expected one of: order-by-id, customer-orders, new-order, pay-order, revenue, cancel, claim"#,
    );
}

#[test]
fn out_and_merge_are_refused_in_pipelines() {
    refused(
        &edit("{$sum: $total}}}]", "{$sum: $total}}}, {$out: copy}]"),
        &format!("{P}.operations[4].aggregate.pipeline[2].$out"),
        "$out is not allowed in a pipeline: a workload writes only its own collections, which \
         the restore reseeds",
    );
    refused(
        &edit(
            "{$sum: $total}}}]",
            "{$sum: $total}}}, {$facet: {a: [{$merge: {into: x}}]}}]",
        ),
        &format!("{P}.operations[4].aggregate.pipeline[2].$facet.a[0].$merge"),
        "$merge is not allowed in a pipeline: a workload writes only its own collections, which \
         the restore reseeds",
    );
}

#[test]
fn braces_only_as_a_whole_placeholder() {
    refused(
        &edit(r#"{_id: "{{order}}"}}"#, r#"{_id: "id-{{order}}"}}"#),
        &format!("{P}.operations[0].find.filter._id"),
        r#""{{" is allowed only in a whole-string placeholder such as "{{name}}", got "id-{{order}}""#,
    );
    refused(
        &edit(r#"{_id: "{{order}}"}}"#, r#"{_id: "{{ order }}"}}"#),
        &format!("{P}.operations[0].find.filter._id"),
        r#""{{" is allowed only in a whole-string placeholder such as "{{name}}", got "{{ order }}""#,
    );
    refused(
        &edit("source: web", r#"source: "{{order}}""#),
        &format!("{P}.collections[1].fields.source"),
        "placeholders are replaced in operations only; use a generator here",
    );
    // Keys are never replaced, so braces in a key are just a key.
    assert!(
        parse(
            &edit("{$set: {status: paid}}", "{$set: {\"{{x}}\": 1}}"),
            duration
        )
        .is_ok()
    );
}

#[test]
fn id_is_a_leading_sequence() {
    refused(
        &edit("_id: {sequence: {start: 1}}", "_id: {objectId: {}}"),
        &format!("{P}.collections[0].fields._id"),
        "`_id` must be a sequence, e.g. {sequence: {start: 1}}, so that refs, inserts and \
         restores can compute it",
    );
    refused(
        &edit(
            "      _id: {sequence: {start: 1}}\n      name: {string: {min: 5, max: 12}}\n",
            "      name: {string: {min: 5, max: 12}}\n      _id: {sequence: {start: 1}}\n",
        ),
        &format!("{P}.collections[0].fields._id"),
        "`_id` must be the first field",
    );
}

#[test]
fn references_to_unknown_names() {
    refused(
        &edit(
            "{ref: {collection: customers}}",
            "{ref: {collection: clients}}",
        ),
        &format!("{P}.collections[1].fields.customer_id.ref.collection"),
        r#"unknown collection "clients"; expected one of: customers, orders"#,
    );
    refused(
        &edit("mix: {order-by-id: 1}", "mix: {order-by-idd: 1}"),
        &format!("{P}.phases[0].mix.order-by-idd"),
        r#"unknown operation "order-by-idd"; expected one of: order-by-id, customer-orders, new-order, pay-order, revenue, checkout, cancel, claim"#,
    );
    refused(
        &edit(
            "find: {collection: orders, filter: {_id:",
            "find: {collection: order, filter: {_id:",
        ),
        &format!("{P}.operations[0].find.collection"),
        r#"unknown collection "order"; expected one of: customers, orders"#,
    );
}

#[test]
fn phases_need_a_weight_and_at_most_two() {
    refused(
        &edit("mix: {order-by-id: 1}", "mix: {order-by-id: 0}"),
        &format!("{P}.phases[0].mix"),
        "every weight is 0; at least one operation needs a weight above 0",
    );
    refused(
        &edit(
            "targetOpsPerSecond: 0}",
            "targetOpsPerSecond: 0}\n  - {name: third}",
        ),
        &format!("{P}.phases"),
        "expected 1 to 2 phases, got 3",
    );
    refused(
        &edit("duration: 30s", "duration: 30 seconds"),
        &format!("{P}.phases[0].duration"),
        r#"expected a duration such as 90s, 10m, 1h30m or 250ms, got "30 seconds""#,
    );
    refused(
        &edit("duration: 30s", "duration: 30s, operations: 10"),
        &format!("{P}.phases[0]"),
        "give `duration` or `operations`, not both",
    );
    refused(
        &edit("workers: 16", "workers: 5000"),
        &format!("{P}.phases[1].workers"),
        "expected an integer from 1 to 4096, got 5000",
    );
}

#[test]
fn names_ranges_and_versions() {
    refused(
        &edit("name: cancel", "name: claim"),
        &format!("{P}.operations[7].name"),
        r#"duplicate operation name "claim""#,
    );
    refused(
        &edit("{int: {min: 1, max: 500,", "{int: {min: 600, max: 500,"),
        &format!("{P}.collections[1].fields.items.array.of.document.sku.int.max"),
        "max 500 is below min 600",
    );
    refused(
        &edit("version: 1", "version: 2"),
        &format!("{P}.version"),
        "unsupported version 2; the only version is 1",
    );
    refused(&edit("version: 1\n", ""), P, r#"missing key "version""#);
    refused(
        &edit("- name: customers", "- name: system.customers"),
        &format!("{P}.collections[0].name"),
        r#"expected a collection name not starting with "system." and without $, got "system.customers""#,
    );
    refused(
        &edit("share: 5", "share: 0"),
        &format!("{P}.collections[1].share"),
        "expected an integer from 1 to 1000000, got 0",
    );
}

#[test]
fn operation_shapes_the_server_would_refuse() {
    refused(
        &edit(
            "find: {collection: orders, filter: {_id:",
            "delete: {collection: orders}\n    find: {collection: orders, filter: {_id:",
        ),
        &format!("{P}.operations[0]"),
        "expected exactly one of: find, insert, update, delete, aggregate, findAndModify, \
         transaction; got find and delete",
    );
    refused(
        &edit("new: true, sort", "new: true, remove: true, sort"),
        &format!("{P}.operations[7].findAndModify"),
        "give `update` or `remove: true`, not both",
    );
    refused(
        &edit(
            "update: {$set: {status: paid}}}",
            "update: {status: paid}, multi: true}",
        ),
        &format!("{P}.operations[3].update.multi"),
        "a replacement document cannot update several documents",
    );
    refused(
        &edit(
            "update: {$set: {status: paid}}}",
            "update: {$set: {status: paid}, status: x}}",
        ),
        &format!("{P}.operations[3].update.update"),
        "an update holds either only operators ($set, $inc…) or only fields (a replacement)",
    );
    refused(
        &edit("{$match: {customer_id", "{match: {customer_id"),
        &format!("{P}.operations[4].aggregate.pipeline[0]"),
        "expected a stage: a map with one key such as $match, got a map",
    );
    refused(
        &edit("documents: 2", "documents: 1001"),
        &format!("{P}.operations[2].insert.documents"),
        "expected an integer from 1 to 1000, got 1001",
    );
}

#[test]
fn collection_definitions_the_server_would_refuse() {
    refused(
        &edit(
            "{keys: {created: 1}, expire",
            "{keys: {created: 1, a: 1}, expire",
        ),
        &format!("{P}.collections[1].indexes[1].expireAfterSeconds"),
        "a TTL index has exactly one key",
    );
    refused(
        &edit("{keys: {status: 1}, partial", "{keys: {status: 2}, partial"),
        &format!("{P}.collections[1].indexes[2].keys.status"),
        r#"expected 1, -1, "hashed", "text" or "2dsphere", got 2"#,
    );
    refused(
        &edit(
            "{field: customer_id, type: hashed}",
            "{field: customer, type: hashed}",
        ),
        &format!("{P}.collections[1].shardKey.field"),
        r#""customer" is not a field of the collection"#,
    );
    // _id 13 + name 6 + (5 + 16 MiB) + vip 6, plus the document's own 5.
    refused(
        &edit(
            "{string: {min: 5, max: 12}}",
            "{string: {length: 16777216}}",
        ),
        &format!("{P}.collections[0].fields"),
        "a document can reach 16777251 bytes, above MongoDB's limit of 16 MiB",
    );
    refused(
        &edit("weights: [1, 2, 7]", "weights: [1, 2]"),
        &format!("{P}.collections[1].fields.status.choice.weights"),
        "expected 3 weights, one per value, got 2",
    );
}

#[test]
fn yaml_errors_name_the_document() {
    let (path, message) = refusal("version: 1\ncollections: [\n");
    assert_eq!(path, P);
    assert!(message.starts_with("not valid YAML: "), "{message}");
    let (path, message) = refusal("version: 1\nversion: 1\n");
    assert_eq!(path, P);
    assert!(message.contains("duplicate"), "{message}");
    refused("", P, "expected a map, got null");
}
