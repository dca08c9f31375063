//! Seeding and dataset identity (specs/flights.md §7).
//!
//! The seeded set is [0, N0); growing a collection from N to M inserts [N, M) in batches of
//! consecutive `seq`. Batches may arrive in any order; their content is fixed.

use super::VERSION;
use super::data::table_hash;
use super::document::{Flight, bson_size};
use super::ops::insert_command;
use mongodb::bson::Document;
use sha2::{Digest, Sha256};
use std::ops::Range;

/// The v1 constant `avgDocBytes`: the mean BSON size of documents 0–99,999 of datasetSeed 1
/// (287,630,561 bytes / 100,000 = 2,876.3), rounded to whole bytes.
pub const AVG_DOC_BYTES: u64 = 2876;

/// `dataBytes: B` → N0 = ceil(B / avgDocBytes).
pub fn documents_for_data_bytes(data_bytes: u64) -> u64 {
    data_bytes.div_ceil(AVG_DOC_BYTES)
}

/// [from, to) cut into consecutive ranges of `batch_size` (the last one may be shorter).
pub fn seed_ranges(from: u64, to: u64, batch_size: u32) -> impl Iterator<Item = Range<u64>> {
    let step = u64::from(batch_size.max(1));
    (from..to)
        .step_by(step as usize)
        .map(move |a| a..(a + step).min(to))
}

/// One seeding insert: the command and what it adds.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedBatch {
    /// `{insert: "flights", documents: [...], ordered: false}`.
    pub command: Document,
    /// Documents in the batch.
    pub documents: u64,
    /// Sum of their BSON sizes (collStats `size` must match the total within 0.1 %).
    pub bson_bytes: u64,
}

/// The unordered insert of seeded documents `range` of dataset `dataset_seed`.
pub fn seed_batch(dataset_seed: u64, range: Range<u64>) -> SeedBatch {
    let mut bson_bytes = 0;
    let documents: Vec<Document> = range
        .clone()
        .map(|seq| {
            let d = Flight::seeded(dataset_seed, seq).to_document();
            bson_bytes += bson_size(&d);
            d
        })
        .collect();
    SeedBatch {
        command: insert_command(documents),
        documents: range.end - range.start,
        bson_bytes,
    }
}

/// `datasetId = SHA-256(version, data-table hash, datasetSeed, N0)`: the UTF-8 version string,
/// the 32 raw bytes of [`table_hash`], then datasetSeed and N0 as 8 big-endian bytes each.
pub fn dataset_id(dataset_seed: u64, documents: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(VERSION.as_bytes());
    h.update(table_hash());
    h.update(dataset_seed.to_be_bytes());
    h.update(documents.to_be_bytes());
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flights::ids::object_id;

    #[test]
    fn data_bytes_round_up_to_whole_documents() {
        assert_eq!(documents_for_data_bytes(1), 1);
        assert_eq!(documents_for_data_bytes(2876), 1);
        assert_eq!(documents_for_data_bytes(2877), 2);
        // The article's 1 M dataset: 2.876 GB.
        assert_eq!(documents_for_data_bytes(2_876_000_000), 1_000_000);
    }

    #[test]
    fn ranges_cover_exactly_and_grow_from_the_old_size() {
        let r: Vec<Range<u64>> = seed_ranges(0, 2500, 1000).collect();
        assert_eq!(r, [0..1000, 1000..2000, 2000..2500]);
        let r: Vec<Range<u64>> = seed_ranges(50_000, 52_000, 1000).collect();
        assert_eq!(r, [50_000..51_000, 51_000..52_000]);
        assert_eq!(seed_ranges(10, 10, 1000).count(), 0);
    }

    #[test]
    fn batch_holds_the_seeded_documents_in_order() {
        let b = seed_batch(1, 0..3);
        assert_eq!(b.documents, 3);
        assert_eq!(b.command.get_str("insert"), Ok("flights"));
        assert_eq!(b.command.get_bool("ordered"), Ok(false));
        let docs = b.command.get_array("documents").unwrap();
        let ids: Vec<_> = docs
            .iter()
            .map(|d| d.as_document().unwrap().get_object_id("_id").unwrap())
            .collect();
        assert_eq!(ids, [object_id(0), object_id(1), object_id(2)]);
        // Sizes from testdata/reference.py: 3101 + 3094 + doc 2.
        let third = bson_size(&Flight::seeded(1, 2).to_document());
        assert_eq!(b.bson_bytes, 3101 + 3094 + third);
    }

    #[test]
    fn dataset_id_matches_reference_value() {
        assert_eq!(
            hex::encode(dataset_id(1, 1_000_000)),
            "e7bd8139c440727cfd5f10f39cab1763c094da3545ee8e60e7c37cb48911fdf4"
        );
        assert_ne!(dataset_id(1, 1_000_000), dataset_id(2, 1_000_000));
        assert_ne!(dataset_id(1, 1_000_000), dataset_id(1, 1_000_001));
    }

    #[test]
    fn avg_doc_bytes_is_the_mean_of_the_first_100000_documents() {
        let total: u64 = (0..100_000)
            .map(|seq| bson_size(&Flight::seeded(1, seq).to_document()))
            .sum();
        // Total from testdata/reference.py.
        assert_eq!(total, 287_630_561);
        assert_eq!((total as f64 / 100_000.0).round() as u64, AVG_DOC_BYTES);
    }
}
