//! The checked workload (§3–§7) and what it generates outside a worker's stream: seeded
//! documents, index commands, counts and sizes, explain samples. Built only by `parse`; read by
//! `worker`, which draws the operation stream from it.

use mongodb::bson::{Bson, Document, doc};

use super::generator::{Env, Scope};
use super::model::{Collection, CustomPhase, Gen, OperationSpec, TAG_DOCUMENTS, TAG_EXPLAIN};
use super::template::Op;
use super::zipf::Zipf;
use crate::workload::rng::{Stream, key};

/// Documents sampled per collection to turn a byte size into a count (§3).
const SIZE_SAMPLE: u64 = 100;
/// Dataset seed of that sample, so a byte size means the same count whatever the seed.
const SIZE_SAMPLE_SEED: u64 = 0;

/// A checked workload: everything needed to seed, run and explain it.
#[derive(Debug, Clone)]
pub struct Workload {
    pub(super) text_sha256: String,
    pub(super) database: &'static str,
    pub(super) collections: Vec<Collection>,
    /// The named generators of §4 that placeholders draw from, in document order.
    pub(super) generators: Vec<(String, Gen)>,
    pub(super) operations: Vec<OperationSpec>,
    /// The compiled templates, parallel to `operations`.
    pub(super) ops: Vec<Op>,
    pub(super) phases: Vec<CustomPhase>,
    pub(super) dataset_identity: String,
}

impl Workload {
    /// The database every collection lives in.
    pub fn database(&self) -> &'static str {
        self.database
    }

    /// Hex SHA-256 of the text given to [`parse`](fn@super::parse).
    pub fn text_sha256(&self) -> String {
        self.text_sha256.clone()
    }

    /// `custom/v1 collections=<hex>`: the SHA-256 of the canonical JSON of the database and the
    /// collections (fields with their defaults filled in, indexes with their names), so that
    /// edits to operations or phases keep a seeded dataset reusable.
    pub fn dataset_identity(&self) -> String {
        self.dataset_identity.clone()
    }

    pub fn collections(&self) -> &[Collection] {
        &self.collections
    }

    pub fn phases(&self) -> &[CustomPhase] {
        &self.phases
    }

    pub fn operations(&self) -> &[OperationSpec] {
        &self.operations
    }

    /// Seeded documents per collection for a dataset of `total` documents (§3 Counts):
    /// `floor(total × share / Σ share)` of every collection but the first, which takes the
    /// rest, so the counts add up to `total`; an empty collection is refused.
    pub fn seeded_counts(&self, total: u64) -> Result<Vec<u64>, String> {
        let sum: u128 = self.collections.iter().map(|c| u128::from(c.share)).sum();
        let mut counts: Vec<u64> = self
            .collections
            .iter()
            .map(|c| (u128::from(total) * u128::from(c.share) / sum) as u64)
            .collect();
        let rest: u64 = counts[1..].iter().sum();
        counts[0] = total - rest;
        if let Some((c, _)) = self.collections.iter().zip(&counts).find(|(_, n)| **n == 0) {
            let least = sum.div_ceil(u128::from(c.share));
            return Err(format!(
                "a dataset of {total} documents leaves collection {:?} empty (share {} of \
                 {sum}); it needs at least {least} documents",
                c.name, c.share
            ));
        }
        Ok(counts)
    }

    /// Documents for a dataset of `bytes` (§3): `ceil(bytes / m)`, m the share-weighted mean
    /// BSON size of the first 100 documents of each collection.
    pub fn documents_for_bytes(&self, bytes: u64) -> u64 {
        let mut weighted: u128 = 0;
        let mut shares: u128 = 0;
        for (c, collection) in self.collections.iter().enumerate() {
            let sum: u128 = (0..SIZE_SAMPLE)
                .map(|i| crate::workload::bson_len(&self.document(SIZE_SAMPLE_SEED, c, i)) as u128)
                .sum();
            weighted += u128::from(collection.share) * sum;
            shares += u128::from(collection.share);
        }
        if weighted == 0 {
            return 0;
        }
        let n = (u128::from(bytes) * u128::from(SIZE_SAMPLE) * shares).div_ceil(weighted);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// Document `i` of collection number `collection` (§4 Draws); empty for a collection that
    /// does not exist.
    pub fn document(&self, dataset_seed: u64, collection: usize, i: u64) -> Document {
        let Some(c) = self.collections.get(collection) else {
            return Document::new();
        };
        let mut stream = Stream::new(key(dataset_seed, TAG_DOCUMENTS + collection as u64, i));
        let env = Env {
            collections: &self.collections,
            seq: i,
            scope: Scope::Document { collection },
        };
        let mut document = Document::new();
        for (name, generator) in &c.fields {
            document.insert(name.clone(), generator.value(&mut stream, &env));
        }
        document
    }

    /// The `createIndexes` command of a collection (every index named), or `None` when it has
    /// no index beyond `_id`.
    pub fn create_indexes(&self, collection: usize) -> Option<Document> {
        let c = self.collections.get(collection)?;
        if c.indexes.is_empty() {
            return None;
        }
        let indexes: Vec<Bson> = c
            .indexes
            .iter()
            .map(|index| {
                let mut d = doc! { "key": index.keys.clone(), "name": index.name.clone() };
                if let Some(unique) = index.unique {
                    d.insert("unique", unique);
                }
                if let Some(sparse) = index.sparse {
                    d.insert("sparse", sparse);
                }
                if let Some(seconds) = index.expire_after_seconds {
                    d.insert("expireAfterSeconds", seconds);
                }
                if let Some(filter) = &index.partial_filter {
                    d.insert("partialFilterExpression", filter.clone());
                }
                Bson::Document(d)
            })
            .collect();
        Some(doc! { "createIndexes": c.name.clone(), "indexes": indexes })
    }

    /// Collections an operation with weight > 0 in `phase` (a transaction's parts included) may
    /// write, ascending: the ones a restore must reseed after the phase (§7).
    pub fn written_collections(&self, phase: usize) -> Vec<usize> {
        let Some(p) = self.phases.get(phase) else {
            return Vec::new();
        };
        let mut written: Vec<usize> = Vec::new();
        for (j, &weight) in p.weights.iter().enumerate() {
            if weight > 0 {
                self.ops[j].written(&self.ops, &mut written);
            }
        }
        written.sort_unstable();
        written.dedup();
        written
    }

    /// One sample command of each find, update, delete, aggregate and findAndModify operation,
    /// in operation order, labelled with the operation's name (§7 Explain). A transaction's
    /// parts are operations of their own, so each is sampled once under its own name.
    /// `counts`: seeded documents per collection (ref bounds of the templates).
    pub fn explain_samples(&self, seed: u64, counts: &[u64]) -> Vec<(String, Document)> {
        let zipfs = self.ref_zipfs(counts);
        let env = Env {
            collections: &self.collections,
            seq: 0,
            scope: Scope::Cell {
                counts,
                zipfs: &zipfs,
            },
        };
        let mut samples = Vec::new();
        for (j, op) in self.ops.iter().enumerate() {
            let mut stream = Stream::new(key(seed, TAG_EXPLAIN, j as u64));
            let values = self.draw_slots(op, &mut stream, &env);
            let collection = &self.collections[op.collection].name;
            if let Some(shape) = op.command(collection, &values) {
                samples.push((self.operations[j].name.clone(), shape.body));
            }
        }
        samples
    }

    /// The zipfian ranks of a template `ref` to each collection: over its seeded documents.
    pub(super) fn ref_zipfs(&self, counts: &[u64]) -> Vec<Zipf> {
        (0..self.collections.len())
            .map(|c| Zipf::new(counts.get(c).copied().unwrap_or(0).max(1)))
            .collect()
    }

    /// One value per placeholder of `op`, in the order they first appear.
    pub(super) fn draw_slots(&self, op: &Op, stream: &mut Stream, env: &Env) -> Vec<Bson> {
        op.slots
            .iter()
            .map(|&g| self.generators[g].1.value(stream, env))
            .collect()
    }
}
