//! Generation: counts, documents, commands, draws, inserts, mixes, explain samples, indexes and
//! the fingerprint, with expected values recomputed from the spec's draws.

use std::collections::HashSet;
use std::sync::Arc;

use mongodb::bson::{Bson, DateTime, Document, doc};
use sha2::{Digest, Sha256};

use super::tests_parse::{duration, shop};
use super::*;
use crate::workload::rng::{Stream, key, scale, threshold};
use crate::workload::{Command, Operation};

fn keys(d: &Document) -> Vec<&str> {
    d.keys().map(String::as_str).collect()
}

fn worker(w: &Arc<Workload>, seed: u64, phase: usize, index: u32, of: u32) -> Worker {
    Worker::new(w, seed, 7, phase, index, of, &[1000, 5000])
}

#[test]
fn counts_follow_shares_and_refuse_an_empty_collection() {
    let w = shop();
    assert_eq!(w.seeded_counts(6000), Ok(vec![1000, 5000]));
    // The first collection takes what the floors leave.
    assert_eq!(w.seeded_counts(6005), Ok(vec![1001, 5004]));
    assert_eq!(
        w.seeded_counts(1),
        Err(
            "a dataset of 1 documents leaves collection \"orders\" empty (share 5 of 6); it \
             needs at least 2 documents"
                .to_owned()
        )
    );
    assert_eq!(w.seeded_counts(2), Ok(vec![1, 1]));
    assert_eq!(w.seeded_counts(6), Ok(vec![1, 5]));
}

#[test]
fn bytes_become_documents_by_the_share_weighted_mean_of_100_documents() {
    let w = shop();
    let sum = |c: usize| -> u128 {
        (0..100)
            .map(|i| crate::workload::bson_len(&w.document(0, c, i)) as u128)
            .sum()
    };
    let (customers, orders) = (sum(0), sum(1));
    let bytes: u64 = 1_000_000_000;
    // N = ceil(B / m), m = (1 × customers/100 + 5 × orders/100) / 6.
    let expected = (u128::from(bytes) * 600).div_ceil(customers + 5 * orders) as u64;
    assert_eq!(w.documents_for_bytes(bytes), expected);
    assert_eq!(w.documents_for_bytes(0), 0);
    assert_eq!(w.documents_for_bytes(1), 1);
}

#[test]
fn customers_are_drawn_field_by_field_from_their_stream() {
    let w = shop();
    for i in 0..50u64 {
        let mut s = Stream::new(key(7, 16, i));
        let len = scale(s.next_u64(), 5, 12);
        let name: String = (0..len)
            .map(|_| char::from(b'a' + scale(s.next_u64(), 0, 25) as u8))
            .collect();
        let vip = s.event(threshold(0.1));
        let expected = doc! { "_id": 1 + i as i64, "name": name, "vip": vip };
        assert_eq!(w.document(7, 0, i), expected);
    }
    assert_eq!(w.document(7, 9, 0), Document::new());
}

#[test]
fn orders_have_their_shape_types_and_refs_within_bounds() {
    let w = shop();
    let from = DateTime::parse_rfc3339_str("2024-01-01T00:00:00Z")
        .unwrap()
        .timestamp_millis();
    let to = DateTime::parse_rfc3339_str("2025-01-01T00:00:00Z")
        .unwrap()
        .timestamp_millis();
    for i in 0..1000u64 {
        let d = w.document(7, 1, i);
        assert_eq!(
            keys(&d),
            [
                "_id",
                "customer_id",
                "total",
                "status",
                "created",
                "items",
                "tag",
                "source",
                "big"
            ]
        );
        // The first draws, recomputed: ref among the first max(1, (i + 1) × 1 / 5) customers,
        // total in cents, status by the weights 1, 2, 7.
        let mut s = Stream::new(key(7, 17, i));
        let bound = ((i + 1) / 5).max(1);
        let customer = 1 + scale(s.next_u64(), 0, bound - 1) as i64;
        let cents = 500 + scale(s.next_u64(), 0, 49_500) as i64;
        let status = match scale(s.next_u64(), 0, 9) {
            0 => "new",
            1 | 2 => "paid",
            _ => "shipped",
        };
        let created = from + scale(s.next_u64(), 0, (to - from) as u64) as i64;
        assert_eq!(d.get("_id"), Some(&Bson::Int64(1000 + i as i64)));
        assert_eq!(d.get("customer_id"), Some(&Bson::Int64(customer)));
        assert!((1..=bound as i64).contains(&customer));
        assert_eq!(d.get("total"), Some(&Bson::Double(cents as f64 / 100.0)));
        assert_eq!(d.get_str("status"), Ok(status));
        assert_eq!(
            d.get_datetime("created").unwrap().timestamp_millis(),
            created
        );
        let items = d.get_array("items").unwrap();
        assert!((1..=3).contains(&items.len()));
        for item in items {
            let item = item.as_document().unwrap();
            assert_eq!(keys(item), ["sku", "qty", "kind"]);
            // Ranges within 32 bits give int32, as literal integers do.
            assert!(matches!(item.get("sku"), Some(Bson::Int32(1..=500))));
            assert!(matches!(item.get("qty"), Some(Bson::Int32(1..=3))));
            assert_eq!(item.get("kind"), Some(&Bson::String("item".into())));
        }
        assert!(matches!(d.get("tag"), Some(Bson::ObjectId(_))));
        assert_eq!(d.get("source"), Some(&Bson::String("web".into())));
        assert_eq!(d.get("big"), Some(&Bson::Int64(3_000_000_000)));
    }
}

#[test]
fn streams_are_deterministic_per_seed_and_worker() {
    let w = Arc::new(shop());
    let run = |seed, index| {
        let mut g = worker(&w, seed, 1, index, 4);
        let mut digest = WorkerDigest::new();
        let ops: Vec<Generated> = (0..500).map(|_| g.next()).collect();
        for op in &ops {
            digest.record(&op.operation);
        }
        (ops, digest.finish())
    };
    let (a, da) = run(1, 0);
    let (b, db) = run(1, 0);
    assert_eq!(a, b);
    assert_eq!(da, db);
    assert_eq!(da.0, 500);
    assert_ne!(run(1, 1).1, da);
    assert_ne!(run(2, 0).1, da);
    // The warm-up phase draws from its own stream.
    let mut warm = worker(&w, 1, 0, 0, 4);
    assert!((0..100).all(|_| warm.next().template == 0));
}

#[test]
fn draws_follow_the_spec_in_lockstep() {
    let w = Arc::new(shop());
    let mut g = worker(&w, 42, 1, 3, 4);
    let mut s = Stream::new(key(42, 33, 3));
    let cumulative = [30u64, 60, 70, 85, 90, 100, 100, 100];
    let since = DateTime::parse_rfc3339_str("2024-01-01T00:00:00Z")
        .unwrap()
        .timestamp_millis();
    let until = DateTime::parse_rfc3339_str("2024-12-31T00:00:00Z")
        .unwrap()
        .timestamp_millis();
    for _ in 0..300 {
        let r = scale(s.next_u64(), 0, 99);
        let j = cumulative.iter().position(|&c| c > r).unwrap();
        let op = g.next();
        assert_eq!(op.template, j);
        let first = op.operation.commands[0].to_document();
        match j {
            // order: a uniform ref over the 5000 seeded orders.
            0 | 3 | 5 => {
                let id = Bson::Int64(1000 + scale(s.next_u64(), 0, 4999) as i64);
                let filter = if j == 0 {
                    first.get_document("filter").unwrap().clone()
                } else {
                    let updates = first.get_array("updates").unwrap();
                    updates[0]
                        .as_document()
                        .unwrap()
                        .get_document("q")
                        .unwrap()
                        .clone()
                };
                assert_eq!(filter, doc! { "_id": id });
            }
            // customer (one draw), then since.
            1 => {
                s.next_u64();
                let at = since + scale(s.next_u64(), 0, (until - since) as u64) as i64;
                let filter = first.get_document("filter").unwrap();
                let created = filter.get_document("created").unwrap();
                assert_eq!(created.get_datetime("$gt").unwrap().timestamp_millis(), at);
            }
            4 => {
                s.next_u64();
            }
            _ => {}
        }
    }
}

#[test]
fn commands_have_the_spec_shapes() {
    let w = Arc::new(shop());
    let mut g = worker(&w, 5, 1, 0, 1);
    let mut seen = [false; 6];
    for _ in 0..1000 {
        let Generated {
            operation: op,
            template,
        } = g.next();
        assert_eq!(op.database, "shop");
        let c: Vec<(Document, bool, bool, bool)> = op
            .commands
            .iter()
            .map(|c| {
                (
                    c.to_document(),
                    c.drain_cursor,
                    c.in_transaction,
                    c.retryable,
                )
            })
            .collect();
        seen[template] = true;
        match template {
            0 => {
                assert_eq!(op.label, "find");
                assert_eq!(keys(&c[0].0), ["find", "filter"]);
                assert_eq!((c[0].1, c[0].2, c[0].3), (true, false, false));
            }
            1 => {
                assert_eq!(keys(&c[0].0), ["find", "filter", "sort", "limit"]);
                assert_eq!(c[0].0.get("limit"), Some(&Bson::Int32(10)));
                assert_eq!(c[0].0.get_document("sort"), Ok(&doc! { "created": -1 }));
            }
            2 => {
                assert_eq!(op.label, "insert");
                assert_eq!(keys(&c[0].0), ["insert", "documents", "ordered"]);
                assert_eq!(c[0].0.get_array("documents").unwrap().len(), 2);
                assert_eq!((c[0].1, c[0].2, c[0].3), (false, false, true));
            }
            3 => {
                assert_eq!(keys(&c[0].0), ["update", "updates", "ordered"]);
                let s = c[0].0.get_array("updates").unwrap()[0]
                    .as_document()
                    .unwrap()
                    .clone();
                assert_eq!(keys(&s), ["q", "u", "multi", "upsert"]);
                assert_eq!(
                    s.get_document("u"),
                    Ok(&doc! { "$set": { "status": "paid" } })
                );
                assert_eq!((c[0].1, c[0].2, c[0].3), (false, false, true));
            }
            4 => {
                assert_eq!(op.label, "report");
                assert_eq!(keys(&c[0].0), ["aggregate", "pipeline", "cursor"]);
                let stages = c[0].0.get_array("pipeline").unwrap();
                assert_eq!(
                    stages[1],
                    Bson::Document(
                        doc! { "$group": { "_id": null, "total": { "$sum": "$total" } } }
                    )
                );
                assert!(c[0].1);
            }
            5 => {
                assert_eq!(op.label, "txn");
                let names: Vec<&str> = op.commands.iter().map(Command::name).collect();
                assert_eq!(names, ["update", "insert"]);
                assert!(c.iter().all(|c| c.2 && !c.3));
            }
            other => panic!("template {other} has weight 0"),
        }
    }
    assert_eq!(seen, [true; 6]);
}

#[test]
fn a_placeholder_is_drawn_once_per_operation_even_across_a_transaction() {
    let text = r#"
version: 1
collections: [{name: c}]
generators:
  x: {int: {min: 0, max: 1000000000}}
  y: {int: {min: 0, max: 9}}
operations:
  - {name: one, weight: 0, find: {collection: c, filter: {a: "{{x}}", b: {$ne: "{{x}}"}, c: "{{y}}"}}}
  - {name: two, weight: 0, find: {collection: c, filter: {d: "{{y}}"}}}
  - {name: both, transaction: {operations: [two, one]}}
phases: [{}]
"#;
    let w = Arc::new(parse(text, duration).unwrap());
    let mut g = Worker::new(&w, 9, 7, 0, 1, 2, &[100]);
    let mut s = Stream::new(key(9, 32, 1));
    for _ in 0..100 {
        s.next_u64();
        // First appearance in the expanded tree: y (part two), then x (part one).
        let y = scale(s.next_u64(), 0, 9) as i32;
        let x = scale(s.next_u64(), 0, 1_000_000_000) as i32;
        let op = g.next().operation;
        assert_eq!(op.label, "transaction");
        let filters: Vec<Document> = op
            .commands
            .iter()
            .map(|c| c.to_document().get_document("filter").unwrap().clone())
            .collect();
        assert_eq!(filters[0], doc! { "d": y });
        assert_eq!(filters[1], doc! { "a": x, "b": { "$ne": x }, "c": y });
        assert!(
            op.commands
                .iter()
                .all(|c| c.in_transaction && c.drain_cursor)
        );
    }
}

#[test]
fn inserts_continue_the_sequence_in_lanes_that_never_collide() {
    let text = r#"
version: 1
collections: [{name: c, fields: {_id: {sequence: {start: 10}}, v: {int: {min: 0, max: 9}}}}]
operations: [{name: add, insert: {collection: c}}]
phases: [{}]
"#;
    let w = Arc::new(parse(text, duration).unwrap());
    let mut ids = HashSet::new();
    for index in 0..4u32 {
        let mut g = Worker::new(&w, 3, 11, 0, index, 4, &[1000]);
        for k in 0..100u64 {
            let op = g.next().operation;
            let command = op.commands[0].to_document();
            let docs = command.get_array("documents").unwrap();
            let d = docs[0].as_document().unwrap();
            let i = 1000 + u64::from(index) + k * 4;
            assert_eq!(d, &w.document(11, 0, i));
            assert_eq!(d.get("_id"), Some(&Bson::Int64(10 + i as i64)));
            assert!(ids.insert(d.get_i64("_id").unwrap()));
        }
    }
    let expected: HashSet<i64> = (1010..1410).collect();
    assert_eq!(ids, expected);
}

#[test]
fn template_shares_follow_the_mix_weights() {
    let w = Arc::new(shop());
    let mut g = worker(&w, 77, 1, 2, 4);
    let mut counts = [0u64; 8];
    let n = 100_000;
    for _ in 0..n {
        counts[g.next().template] += 1;
    }
    for (j, &weight) in w.phases()[1].weights().iter().enumerate() {
        let share = counts[j] as f64 / n as f64;
        let expected = weight as f64 / 100.0;
        assert!(
            (share - expected).abs() < 0.01,
            "{j}: {share} vs {expected}"
        );
    }
    assert_eq!(counts[6] + counts[7], 0);
}

#[test]
fn explain_samples_cover_each_explainable_template_by_name() {
    let w = shop();
    let samples = w.explain_samples(1, &[1000, 5000]);
    let labels: Vec<(&str, &str)> = samples
        .iter()
        .map(|(label, d)| (label.as_str(), d.keys().next().unwrap().as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            ("order-by-id", "find"),
            ("customer-orders", "find"),
            ("pay-order", "update"),
            ("revenue", "aggregate"),
            ("cancel", "delete"),
            ("claim", "findAndModify"),
        ]
    );
    assert!(samples.iter().all(|(_, d)| !d.contains_key("$db")));
    let delete = &samples[4].1;
    let statement = delete.get_array("deletes").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(keys(statement), ["q", "limit"]);
    assert_eq!(statement.get("limit"), Some(&Bson::Int32(1)));
    assert_eq!(delete.get_bool("ordered"), Ok(true));
    assert_eq!(
        keys(&samples[5].1),
        ["findAndModify", "query", "update", "new", "upsert", "sort"]
    );
    assert_eq!(samples[5].1.get_bool("new"), Ok(true));
    assert_eq!(w.explain_samples(1, &[1000, 5000]), samples);
}

#[test]
fn template_numbers_keep_the_shell_types() {
    let text = r#"
version: 1
collections: [{name: c}]
operations: [{name: q, find: {collection: c, filter: {a: 5, b: 3000000000, c: 1.5, d: [true, null, x]}, skip: 3}}]
phases: [{}]
"#;
    let w = parse(text, duration).unwrap();
    let (_, d) = &w.explain_samples(0, &[10])[0];
    assert_eq!(
        d,
        &doc! {
            "find": "c",
            "filter": { "a": 5i32, "b": 3_000_000_000i64, "c": 1.5, "d": [true, null, "x"] },
            "skip": 3i32,
        }
    );
}

#[test]
fn create_indexes_names_every_index() {
    let w = shop();
    assert_eq!(w.create_indexes(0), None);
    assert_eq!(
        w.create_indexes(1),
        Some(doc! {
            "createIndexes": "orders",
            "indexes": [
                { "key": { "customer_id": 1, "created": -1 }, "name": "customer_id_1_created_-1" },
                { "key": { "created": 1 }, "name": "created_1", "expireAfterSeconds": 315_360_000 },
                { "key": { "status": 1 }, "name": "status_1",
                  "partialFilterExpression": { "status": "new" } },
                { "key": { "tag": "hashed" }, "name": "by_tag", "sparse": true },
            ],
        })
    );
}

#[test]
fn written_collections_follow_the_phase_mix() {
    let w = shop();
    assert_eq!(w.written_collections(0), Vec::<usize>::new());
    assert_eq!(w.written_collections(1), [1]);
    assert_eq!(w.written_collections(2), Vec::<usize>::new());
    let text = r#"
version: 1
collections: [{name: a}, {name: b}, {name: c}]
operations:
  - {name: read-a, find: {collection: a}}
  - {name: fix-c, weight: 0, findAndModify: {collection: c, remove: true}}
  - {name: wipe-b, weight: 0, delete: {collection: b, filter: {}, multi: true}}
  - {name: both, weight: 0, transaction: {operations: [read-a, fix-c]}}
phases: [{mix: {read-a: 1, both: 1}}, {mix: {read-a: 1, wipe-b: 1, both: 1}}]
"#;
    let w = parse(text, duration).unwrap();
    assert_eq!(w.written_collections(0), [2]);
    assert_eq!(w.written_collections(1), [1, 2]);
}

#[test]
fn the_digest_hashes_each_command_after_its_length() {
    let op = |filter: Document| Operation {
        label: "find",
        database: "db",
        commands: vec![Command::new(
            &doc! { "find": "a", "filter": filter },
            true,
            false,
        )],
    };
    // {find: "a"} by hand: 17 bytes.
    let bytes = [
        17u8, 0, 0, 0, 2, b'f', b'i', b'n', b'd', 0, 2, 0, 0, 0, b'a', 0, 0,
    ];
    let mut d = WorkerDigest::new();
    d.record(&Operation {
        label: "find",
        database: "db",
        commands: vec![Command::new(&doc! { "find": "a" }, true, false)],
    });
    assert_eq!(d.count(), 1);
    let mut h = Sha256::new();
    h.update(17u64.to_le_bytes());
    h.update(bytes);
    assert_eq!(d.finish(), (1, h.finalize().into()));
    let digest = |o: &Operation| {
        let mut d = WorkerDigest::new();
        d.record(o);
        d.finish()
    };
    let a = op(doc! { "x": 1 });
    assert_eq!(digest(&a), digest(&op(doc! { "x": 1 })));
    assert_ne!(digest(&a), digest(&op(doc! { "x": 2 })));
    assert_ne!(digest(&a), digest(&op(doc! { "y": 1 })));
    let runs = [digest(&a), digest(&op(doc! { "x": 2 }))];
    assert_ne!(run_fingerprint(&runs), run_fingerprint(&[runs[1], runs[0]]));
}

#[test]
fn dataset_identity_depends_only_on_database_and_collections() {
    let w = shop();
    let id = w.dataset_identity();
    assert!(id.starts_with("custom/v1 collections="), "{id}");
    assert_eq!(id.len(), "custom/v1 collections=".len() + 64);
    let ops_changed = super::tests_parse::SHOP.replace("weight: 30", "weight: 31");
    assert_eq!(
        parse(&ops_changed, duration).unwrap().dataset_identity(),
        id
    );
    // Spelling out a default changes nothing; a different value does.
    let spelled = super::tests_parse::SHOP
        .replace("- name: customers\n", "- name: customers\n    share: 1\n");
    assert_eq!(parse(&spelled, duration).unwrap().dataset_identity(), id);
    let field = super::tests_parse::SHOP.replace("max: 12}}", "max: 13}}");
    assert_ne!(parse(&field, duration).unwrap().dataset_identity(), id);
    let db = super::tests_parse::SHOP.replace("database: shop", "database: shop2");
    assert_ne!(parse(&db, duration).unwrap().dataset_identity(), id);
}

#[test]
fn class_names_are_interned_once() {
    let a = crate::workload::intern("custom-class-for-test");
    let b = crate::workload::intern(&String::from("custom-class-for-test"));
    assert!(std::ptr::eq(a, b));
}

#[test]
fn extreme_ranges_and_skewed_refs() {
    let text = r#"
version: 1
collections:
  - name: c
    fields:
      all: {int: {min: -9223372036854775808, max: 9223372036854775807}}
      top: {int: {min: -9223372036854775808, max: 9223372036854775807, distribution: latest}}
      empty: {string: {length: 0}}
      none: {array: {of: {objectId: }, min: 0, max: 0}}
      newest: {ref: {collection: c, distribution: latest}}
      hottest: {ref: {collection: c, distribution: zipfian}}
generators:
  x: {ref: {collection: c, distribution: latest}}
operations:
  - {name: u, update: {collection: c, filter: {_id: "{{x}}"}, update: [{$set: {a: 1}}]}}
phases: [{}]
"#;
    let w = Arc::new(parse(text, duration).unwrap());
    let first = w.document(1, 0, 0);
    assert_eq!(first.get_str("empty"), Ok(""));
    assert_eq!(first.get_array("none").map(Vec::len), Ok(0));
    // Document 0 sees one document of its own collection: itself.
    assert_eq!(first.get_i64("newest"), Ok(0));
    assert_eq!(first.get_i64("hottest"), Ok(0));
    let mut newest = [0u32; 10];
    let mut hottest = [0u32; 10];
    for seed in 0..2000 {
        let d = w.document(seed, 0, 9);
        newest[d.get_i64("newest").unwrap() as usize] += 1;
        hottest[d.get_i64("hottest").unwrap() as usize] += 1;
        assert!(d.get_i64("top").is_ok() && d.get_i64("all").is_ok());
    }
    let mode = |counts: &[u32]| (0..counts.len()).max_by_key(|&i| counts[i]).unwrap();
    assert_eq!((mode(&newest), mode(&hottest)), (9, 0));
    // In a template, latest favours the last seeded document of the cell.
    let mut g = Worker::new(&w, 1, 1, 0, 0, 1, &[100]);
    let mut picks = [0u32; 100];
    for _ in 0..2000 {
        let command = g.next().operation.commands[0].to_document();
        let statement = command.get_array("updates").unwrap()[0]
            .as_document()
            .unwrap()
            .clone();
        assert_eq!(
            statement.get_array("u").unwrap()[0],
            Bson::Document(doc! { "$set": { "a": 1 } })
        );
        picks[statement.get_document("q").unwrap().get_i64("_id").unwrap() as usize] += 1;
    }
    assert_eq!(mode(&picks), 99);
}
