//! examples/workloads/flights.yaml, the built-in flights/v1 written as a custom workload, sends
//! the same operation mix and builds documents of the same shape (docs/specs/custom.md;
//! the file's header lists what differs). Both generators run side by side here, no server
//! needed: the document shapes are compared field by field and type by type, the indexes key by
//! key, and the mixes over 100,000 operations of each.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use mongobench::plan::custom::parse_document;
use mongobench::workload::custom::{self, Workload};
use mongobench::workload::flights::{self, DatasetInfo, IndexSet, Params, Variant};
use mongodb::bson::{Bson, Document};

const OPERATIONS: u64 = 100_000;

fn workload() -> Arc<Workload> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/workloads/flights.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    Arc::new(
        parse_document(&text, "examples/workloads/flights.yaml").unwrap_or_else(|e| panic!("{e}")),
    )
}

/// A field path and its BSON type.
type Field = (String, String);

/// Every field path of `doc` with its BSON type, in document order; arrays of documents by
/// their first element (`passengers.0.name`), arrays of scalars as `array`.
fn shape(doc: &Document, prefix: &str, out: &mut Vec<Field>) {
    for (key, value) in doc {
        let path = format!("{prefix}{key}");
        match value {
            Bson::Document(inner) => {
                out.push((path.clone(), "document".into()));
                shape(inner, &format!("{path}."), out);
            }
            Bson::Array(items) => {
                out.push((path.clone(), "array".into()));
                if let Some(Bson::Document(first)) = items.first() {
                    shape(first, &format!("{path}.0."), out);
                }
            }
            other => out.push((path, format!("{:?}", other.element_type()))),
        }
    }
}

fn shape_of(doc: &Document) -> Vec<Field> {
    let mut out = Vec::new();
    shape(doc, "", &mut out);
    out
}

#[test]
fn its_documents_have_the_fields_and_types_of_flights_documents_but_an_int64_id() {
    let custom = workload();
    for i in 0..200 {
        let ours = shape_of(&custom.document(1, 0, i));
        let theirs = shape_of(&flights::Flight::seeded(1, i).to_document());
        let differs: Vec<(&Field, &Field)> =
            ours.iter().zip(&theirs).filter(|(a, b)| a != b).collect();
        assert_eq!(
            ours.len(),
            theirs.len(),
            "document {i}: {ours:?}\n{theirs:?}"
        );
        assert_eq!(
            differs,
            [(
                &("_id".to_owned(), "Int64".to_owned()),
                &("_id".to_owned(), "ObjectId".to_owned())
            )],
            "document {i}"
        );
    }
}

#[test]
fn its_indexes_are_the_default_flights_indexes() {
    let custom = workload();
    let command = custom.create_indexes(0).expect("indexes");
    let keys: Vec<Document> = command
        .get_array("indexes")
        .unwrap()
        .iter()
        .map(|i| {
            i.as_document()
                .unwrap()
                .get_document("key")
                .unwrap()
                .clone()
        })
        .collect();
    let names: Vec<String> = command
        .get_array("indexes")
        .unwrap()
        .iter()
        .map(|i| i.as_document().unwrap().get_str("name").unwrap().to_owned())
        .collect();
    let builtin = flights::index_specs(IndexSet::Plgm6);
    // Numbers are compared by value: the document writes 1, the built-in set int32 1.
    let normal = |d: &Document| {
        format!(
            "{:?}",
            d.iter()
                .map(|(k, v)| (k.clone(), v.as_i64().or(v.as_i32().map(i64::from))))
                .collect::<Vec<_>>()
        )
    };
    assert_eq!(
        keys.iter().map(normal).collect::<Vec<_>>(),
        builtin.iter().map(|s| normal(&s.key)).collect::<Vec<_>>()
    );
    assert_eq!(names, builtin.iter().map(|s| s.name).collect::<Vec<_>>());
}

/// Shares (per cent) of each key over `counts`.
fn shares(counts: &BTreeMap<String, u64>) -> BTreeMap<String, f64> {
    let total: u64 = counts.values().sum();
    counts
        .iter()
        .map(|(k, &n)| (k.clone(), 100.0 * n as f64 / total as f64))
        .collect()
}

#[test]
fn it_sends_the_flights_mix_class_by_class_and_shape_by_shape() {
    let custom = workload();
    let measured = custom.phases().len() - 1;
    let mut classes = BTreeMap::<String, u64>::new();
    let mut templates = BTreeMap::<String, u64>::new();
    let mut worker = custom::Worker::new(&custom, 1, 1, measured, 0, 1, &[100_000]);
    for _ in 0..OPERATIONS {
        let op = worker.next();
        *classes.entry(op.operation.label.to_owned()).or_default() += 1;
        let name = &custom.operations()[op.template].name;
        *templates.entry(name.clone()).or_default() += 1;
    }

    let params = Params {
        workers: 1,
        ..Params::default()
    };
    let dataset = DatasetInfo::fresh(1, 100_000);
    let mut theirs =
        flights::Worker::new(&params, &dataset, 0, flights::RunPhase::Measured).unwrap();
    let mut their_classes = BTreeMap::<String, u64>::new();
    let mut variants = BTreeMap::<String, u64>::new();
    for _ in 0..OPERATIONS {
        let op = theirs.next_planned();
        *their_classes
            .entry(op.operation.label.to_owned())
            .or_default() += 1;
        *variants.entry(format!("{:?}", op.variant)).or_default() += 1;
    }

    let (ours, theirs) = (shares(&classes), shares(&their_classes));
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (class, share) in &ours {
        assert!(
            (share - theirs[class]).abs() < 1.0,
            "{class}: {share:.2} % here, {:.2} % in flights",
            theirs[class]
        );
    }
    // Within each class, the templates stand for flights' shapes in its proportions (U3's
    // three updates together for its one variant with a coin).
    let t = shares(&templates);
    let v = shares(&variants);
    let pairs = [
        (vec!["find-by-flight-id"], Variant::FindByFlightId),
        (
            vec!["update-one-by-flight-id"],
            Variant::UpdateOneByFlightId,
        ),
        (vec!["update-one-by-id"], Variant::UpdateOneById),
        (
            vec![
                "update-many-seats-up",
                "update-many-seats-down",
                "update-many-duration",
            ],
            Variant::UpdateManyByFlightId,
        ),
        (
            vec!["delete-one-by-flight-id"],
            Variant::DeleteOneByFlightId,
        ),
        (vec!["delete-one-by-id"], Variant::DeleteOneById),
        (
            vec!["delete-many-by-flight-id"],
            Variant::DeleteManyByFlightId,
        ),
        (vec!["insert-batch"], Variant::Insert),
    ];
    for (names, variant) in pairs {
        let ours: f64 = names
            .iter()
            .map(|n| t.get(*n).copied().unwrap_or(0.0))
            .sum();
        let theirs = v.get(&format!("{variant:?}")).copied().unwrap_or(0.0);
        assert!(
            (ours - theirs).abs() < 0.5,
            "{names:?}: {ours:.2} % here, {variant:?} {theirs:.2} % in flights"
        );
    }
    // An insert sends one command of ten documents, as flights' insertBatchSize does.
    let mut worker = custom::Worker::new(&custom, 1, 1, measured, 0, 1, &[100_000]);
    let insert = std::iter::repeat_with(|| worker.next())
        .find(|g| g.operation.label == "insert")
        .unwrap();
    let body = insert.operation.commands[0].to_document();
    assert_eq!(body.get_array("documents").unwrap().len(), 10);
}
