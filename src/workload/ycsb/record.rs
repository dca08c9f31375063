//! YCSB records (specs/ycsb.md §5, §6): the `_id` key string and the field values of a
//! document, in the binding's layout (`_id` first, then the fields in Java `HashMap` order).
//!
//! Load-phase records are keyed per record: record `k` draws every field length and value from
//! a stream of its own, `Rng::new(key(key(seed, TAG_LOAD, 0), TAG_RECORD, k))`, so its document
//! is a pure function of (seed, k, properties) whatever the number of load workers, the order of
//! their inserts, or the client pod that loads it. [`load_document`] regenerates one record
//! cheaply (e.g. to restore the records a run updated). Run-phase values (updates, run-phase
//! inserts) are drawn from the worker's own stream instead, see [`super::worker`].

use mongodb::bson::{Binary, Bson, Document, spec::BinarySubtype};

use super::keys::key_name;
use super::properties::Properties;
use super::rng::{self, Rng};
use super::values::{
    FieldLengthChooser, deterministic_value, java_hash_order, java_hashmap_capacity, random_bytes,
};

/// Builds the documents of one configuration: built once from the properties and the seed,
/// then asked for any number of records (it holds no per-record state).
#[derive(Debug, Clone)]
pub struct RecordBuilder {
    hashed: bool,
    zero_padding: u32,
    field_names: Vec<String>,
    /// Field indexes in Java `HashMap` order for a document / a full `$set`.
    write_order: Vec<usize>,
    field_lengths: FieldLengthChooser,
    data_integrity: bool,
    /// `key(seed, TAG_LOAD, 0)`: the parent of every load-phase record stream.
    load_streams: u64,
}

impl RecordBuilder {
    /// The builder for `props` under `seed` (the workload seed, `mongobench.seed`).
    pub fn new(props: &Properties, seed: u64) -> RecordBuilder {
        let field_names = props.field_names();
        let write_order = java_hash_order(&field_names, java_hashmap_capacity(field_names.len()));
        RecordBuilder {
            hashed: props.hashed_keys,
            zero_padding: props.zero_padding,
            field_names,
            write_order,
            field_lengths: FieldLengthChooser::new(&props.field_lengths),
            data_integrity: props.data_integrity,
            load_streams: rng::key(seed, rng::TAG_LOAD, 0),
        }
    }

    /// Field names `field0` … in index order.
    pub fn field_names(&self) -> &[String] {
        &self.field_names
    }

    /// The key string of key number `keynum` (§3).
    pub fn key(&self, keynum: u64) -> String {
        key_name(keynum, self.hashed, self.zero_padding)
    }

    /// The stream record `keynum` of a load draws from.
    pub fn load_stream(&self, keynum: u64) -> Rng {
        Rng::new(rng::key(self.load_streams, rng::TAG_RECORD, keynum))
    }

    /// The document the load phase inserts for `keynum`.
    pub fn load_document(&self, keynum: u64) -> Document {
        self.document(&mut self.load_stream(keynum), keynum)
    }

    /// A document for `keynum` with every field drawn from `rng` (run-phase inserts draw from
    /// the worker's stream).
    pub fn document(&self, rng: &mut Rng, keynum: u64) -> Document {
        let key = self.key(keynum);
        let values = self.all_values(rng, &key);
        let mut document = Document::new();
        document.insert("_id", key);
        for (f, v) in values {
            document.insert(self.field_names[f].clone(), v);
        }
        document
    }

    /// One value for `field` of the record `key`: a length, then the bytes (no draw for the
    /// bytes of a `dataintegrity` value).
    pub fn value(&self, rng: &mut Rng, key: &str, field: usize) -> Bson {
        let len = self.field_lengths.sample(rng);
        let bytes = if self.data_integrity {
            deterministic_value(key, &self.field_names[field], len as usize).into_bytes()
        } else {
            random_bytes(rng, len as usize)
        };
        Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes,
        })
    }

    /// All fields, drawn in `field0…` order, laid out in Java `HashMap` order.
    pub fn all_values(&self, rng: &mut Rng, key: &str) -> Vec<(usize, Bson)> {
        let mut drawn: Vec<Option<Bson>> = (0..self.field_names.len())
            .map(|f| Some(self.value(rng, key, f)))
            .collect();
        self.write_order
            .iter()
            .map(|&f| (f, drawn[f].take().expect("each field once")))
            .collect()
    }
}

/// The document the load phase inserts for key number `keynum` under `seed`: the same `_id`,
/// field order and BSON, whatever the worker count or the order of the inserts. Builds a
/// [`RecordBuilder`] each call; keep one to regenerate many records.
pub fn load_document(props: &Properties, seed: u64, keynum: u64) -> Document {
    RecordBuilder::new(props, seed).load_document(keynum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ycsb::properties::RawProperties;
    use crate::workload::ycsb::{SharedState, Worker, YcsbPhase};

    fn props(extra: &[(&str, &str)]) -> Properties {
        let mut raw = RawProperties::preset("a").expect("preset");
        for (k, v) in extra {
            raw.set(*k, *v);
        }
        Properties::from_raw(&raw).expect("valid")
    }

    /// keynum → inserted document, as the load phase generates them with `workers` workers.
    fn loaded(p: &Properties, seed: u64, workers: u32) -> Vec<(u64, Document)> {
        let shared = SharedState::new(p.record_count);
        let mut out = Vec::new();
        for w in 0..workers {
            let mut worker = Worker::new(p, seed, w, workers, YcsbPhase::Load, &shared).unwrap();
            while let Some(op) = worker.next() {
                let body = op.operation.commands[0].to_document();
                let doc = body.get_array("documents").unwrap()[0]
                    .as_document()
                    .unwrap()
                    .clone();
                out.push((op.keynum, doc));
            }
        }
        out.sort_by_key(|(k, _)| *k);
        out
    }

    #[test]
    fn load_document_is_what_the_load_phase_inserts_for_any_worker_count() {
        let p = props(&[("recordcount", "10"), ("fieldlength", "9")]);
        let one = loaded(&p, 7, 1);
        let three = loaded(&p, 7, 3);
        assert_eq!(one.len(), 10);
        assert_eq!(one, three);
        for (k, doc) in &one {
            assert_eq!(&load_document(&p, 7, *k), doc, "record {k}");
        }
        // Record 0 exactly: its key, the binding's field order, and the first bytes of field0
        // (the record stream's first draw is field0's value; constant lengths draw nothing).
        let first = load_document(&p, 7, 0);
        let names: Vec<&str> = first.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "_id", "field1", "field0", "field7", "field6", "field9", "field8", "field3",
                "field2", "field5", "field4"
            ]
        );
        assert_eq!(first.get_str("_id").unwrap(), "user6284781860667377211");
        let mut expected = Rng::new(rng::key(rng::key(7, rng::TAG_LOAD, 0), rng::TAG_RECORD, 0));
        let field0 = random_bytes(&mut expected, 9);
        let Bson::Binary(b) = first.get("field0").unwrap() else {
            panic!("binary field0")
        };
        assert_eq!(b.bytes, field0);
    }

    #[test]
    fn records_differ_by_key_and_seed_and_not_by_client_pod() {
        let p = props(&[("recordcount", "10"), ("fieldlength", "9")]);
        let a = load_document(&p, 7, 3);
        assert_ne!(a, load_document(&p, 7, 4));
        assert_ne!(a, load_document(&p, 8, 3));
        let values = |d: &Document| d.iter().skip(1).map(|(_, v)| v.clone()).collect::<Vec<_>>();
        assert_ne!(values(&a), values(&load_document(&p, 7, 4)));
        let pod = props(&[
            ("recordcount", "10"),
            ("fieldlength", "9"),
            ("mongobench.client.count", "2"),
            ("mongobench.client.index", "1"),
        ]);
        assert_eq!(load_document(&pod, 7, 3), a);
    }

    #[test]
    fn variable_lengths_are_keyed_per_record_too() {
        let p = props(&[
            ("recordcount", "12"),
            ("fieldlengthdistribution", "uniform"),
            ("minfieldlength", "1"),
            ("fieldlength", "50"),
        ]);
        let one = loaded(&p, 3, 1);
        assert_eq!(one, loaded(&p, 3, 4));
        for (k, doc) in &one {
            assert_eq!(&load_document(&p, 3, *k), doc);
        }
        let lengths: std::collections::BTreeSet<usize> = one
            .iter()
            .flat_map(|(_, d)| {
                d.iter().skip(1).map(|(_, v)| match v {
                    Bson::Binary(b) => b.bytes.len(),
                    other => panic!("{other:?}"),
                })
            })
            .collect();
        assert!(lengths.len() > 10, "{lengths:?}");
    }
}
