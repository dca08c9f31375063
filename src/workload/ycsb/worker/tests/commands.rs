//! The commands each operation kind sends: the binding's document and command shapes.

use super::*;
use crate::workload::ycsb::values::deterministic_value;
use mongodb::bson::spec::BinarySubtype;

#[test]
fn load_insert_document_has_the_binding_shape() {
    let p = props(Some("a"), &[]);
    let s = SharedState::new(1000);
    let op = worker(&p, 7, 0, 1, YcsbPhase::Load, &s)
        .next()
        .expect("one op");
    assert_eq!(
        (op.kind, op.keynum, op.key.as_str()),
        (OpKind::Insert, 0, "user6284781860667377211")
    );
    assert_eq!(op.operation.label, "INSERT");
    assert_eq!(op.operation.database, "ycsb");
    assert_eq!(op.calls, [Call::Insert]);
    let body = op.operation.commands[0].to_document();
    assert_eq!(body.get_str("insert").unwrap(), "usertable");
    assert!(body.get_bool("ordered").unwrap());
    let docs = body.get_array("documents").unwrap();
    let doc = docs[0].as_document().unwrap();
    let names: Vec<&str> = doc.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "_id", "field1", "field0", "field7", "field6", "field9", "field8", "field3", "field2",
            "field5", "field4"
        ]
    );
    for (name, value) in doc.iter().skip(1) {
        match value {
            Bson::Binary(b) => {
                assert_eq!(b.subtype, BinarySubtype::Generic, "{name}");
                assert_eq!(b.bytes.len(), 100, "{name}");
            }
            other => panic!("{name} is {other:?}"),
        }
    }
    // 4 + _id (1 + 4 + 4 + 24) + 10 × (1 + 7 + 4 + 1 + 100) + 1 = 1168 bytes (§6).
    let mut bytes = Vec::new();
    doc.to_writer(&mut bytes).unwrap();
    assert_eq!(bytes.len(), 1168);
}

#[test]
fn read_update_scan_and_rmw_shapes() {
    let p = props(Some("e"), &[("fieldlength", "8")]);
    let s = SharedState::new(1000);
    let mut w = worker(&p, 5, 0, 1, YcsbPhase::Run, &s);
    let scan = std::iter::from_fn(|| w.next())
        .find(|o| o.kind == OpKind::Scan)
        .unwrap();
    let body = scan.operation.commands[0].to_document();
    let limit = body.get_i32("limit").unwrap();
    assert!((1..=100).contains(&limit));
    assert_eq!(
        body.get_document("filter")
            .unwrap()
            .get_document("_id")
            .unwrap()
            .get_str("$gte")
            .unwrap(),
        scan.key
    );
    assert!(!body.contains_key("projection"));
    assert!(scan.operation.commands[0].drain_cursor);

    let p = props(
        Some("f"),
        &[("fieldlength", "8"), ("readallfields", "false")],
    );
    let mut w = worker(&p, 5, 0, 1, YcsbPhase::Run, &s);
    let rmw = std::iter::from_fn(|| w.next())
        .find(|o| o.kind == OpKind::ReadModifyWrite)
        .unwrap();
    assert_eq!(rmw.operation.label, "READ-MODIFY-WRITE");
    assert_eq!(rmw.calls, [Call::Read, Call::Update]);
    let read = rmw.operation.commands[0].to_document();
    let update = rmw.operation.commands[1].to_document();
    assert_eq!(
        read.get_document("filter").unwrap().get_str("_id").unwrap(),
        rmw.key
    );
    assert_eq!(read.get_document("projection").unwrap().len(), 1);
    let u = update.get_array("updates").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(
        u.get_document("q").unwrap().get_str("_id").unwrap(),
        rmw.key
    );
    let set = u.get_document("u").unwrap().get_document("$set").unwrap();
    assert_eq!(set.len(), 1, "writeallfields=false updates one field");
    assert!(!u.contains_key("upsert"));

    let p = props(
        Some("a"),
        &[("fieldlength", "8"), ("writeallfields", "true")],
    );
    let mut w = worker(&p, 5, 0, 1, YcsbPhase::Run, &s);
    let upd = std::iter::from_fn(|| w.next())
        .find(|o| o.kind == OpKind::Update)
        .unwrap();
    let u = upd.operation.commands[0]
        .to_document()
        .get_array("updates")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        u.get_document("u")
            .unwrap()
            .get_document("$set")
            .unwrap()
            .len(),
        10
    );
    let read = std::iter::from_fn(|| w.next())
        .find(|o| o.kind == OpKind::Read)
        .unwrap();
    assert!(
        !read.operation.commands[0]
            .to_document()
            .contains_key("projection")
    );
}

#[test]
fn upserts_replace_by_id() {
    let p = props(
        Some("a"),
        &[("mongodb.upsert", "true"), ("fieldlength", "4")],
    );
    let s = SharedState::new(1000);
    let op = worker(&p, 1, 0, 1, YcsbPhase::Load, &s).next().unwrap();
    let body = op.operation.commands[0].to_document();
    let u = body.get_array("updates").unwrap()[0].as_document().unwrap();
    assert!(u.get_bool("upsert").unwrap());
    assert_eq!(u.get_document("u").unwrap().get_str("_id").unwrap(), op.key);
}

#[test]
fn data_integrity_reads_name_every_field_and_values_are_deterministic() {
    let p = props(
        Some("c"),
        &[("dataintegrity", "true"), ("fieldlength", "30")],
    );
    let s = SharedState::new(1000);
    let op = worker(&p, 1, 0, 1, YcsbPhase::Run, &s).next().unwrap();
    assert!(op.verify);
    let read = op.operation.commands[0].to_document();
    let projection = read.get_document("projection").unwrap();
    assert_eq!(projection.len(), 10);
    let load = worker(&p, 1, 0, 1, YcsbPhase::Load, &s).next().unwrap();
    let doc = load.operation.commands[0]
        .to_document()
        .get_array("documents")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    let Bson::Binary(b) = doc.get("field0").unwrap() else {
        panic!("binary")
    };
    assert_eq!(
        b.bytes,
        deterministic_value(&load.key, "field0", 30).into_bytes()
    );
}

#[test]
fn url_database_and_table_reach_the_operation() {
    let p = props(
        Some("c"),
        &[("mongodb.url", "mongodb://h:27017/bench"), ("table", "t1")],
    );
    let s = SharedState::new(1000);
    let op = worker(&p, 1, 0, 1, YcsbPhase::Run, &s).next().unwrap();
    assert_eq!(op.operation.database, "bench");
    assert_eq!(
        op.operation.commands[0]
            .to_document()
            .get_str("find")
            .unwrap(),
        "t1"
    );
}
