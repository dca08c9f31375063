//! Seeding and dataset identity (specs/flights.md §7).
//!
//! The seeded set is [0, N0); growing a collection from N to M inserts [N, M) in batches of
//! consecutive `seq`. Batches may arrive in any order; their content is fixed. A batch is one
//! insert command, so it holds at most [`MAX_SEED_BATCH_DOCUMENTS`]: that many of the largest
//! documents the generator can produce still fit MongoDB's 16 MiB command limit.

use super::data::{
    AMENITIES, CARRIERS, EMAIL_DOMAINS, PLANES, STATUSES, cities, first_names, last_names,
    table_hash,
};
use super::document::{AVG_DOC_BYTES, Flight, MAX_PASSENGERS, Passenger, bson_size};
use super::ops::insert_command;
use super::version::VERSION;
use mongodb::bson::RawDocumentBuf;
use sha2::{Digest, Sha256};
use std::ops::Range;

/// Most documents one seeding insert may carry (`seedBatchSize`'s maximum): that many documents
/// of [`max_document_bytes`] fit one insert command of at most 16 MiB
/// ([`crate::workload::MAX_COMMAND_BYTES`]).
pub const MAX_SEED_BATCH_DOCUMENTS: u32 = 4800;

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
    /// `{insert: "flights", documents: [...], ordered: false}`, written straight to BSON: a
    /// batch of up to 4,800 documents as `Document`s takes several times its BSON size, and
    /// every seeding worker holds one.
    pub command: RawDocumentBuf,
    /// Documents in the batch.
    pub documents: u64,
    /// Sum of their BSON sizes (collStats `size` must match the total within 0.1 %).
    pub bson_bytes: u64,
}

/// The BSON size of the largest document `flights/v1` can generate: every string field at the
/// longest value of its table, the most amenities and passengers, the longest seat label. Every
/// other field has a fixed size, so no generated document is larger.
pub fn max_document_bytes() -> u64 {
    let longest = |table: &[&'static str]| -> &'static str {
        table
            .iter()
            .copied()
            .max_by_key(|s| s.len())
            .expect("tables are not empty")
    };
    let first = longest(first_names());
    let last = longest(last_names());
    let city = longest(cities());
    let carrier = longest(&CARRIERS);
    let (plane, _) = PLANES
        .iter()
        .copied()
        .max_by_key(|(name, _)| name.len())
        .expect("planes");
    let most_seats = PLANES
        .iter()
        .map(|(_, seats)| *seats)
        .max()
        .expect("planes");
    let mut amenities = AMENITIES.to_vec();
    amenities.sort_by_key(|a| std::cmp::Reverse(a.len()));
    amenities.truncate(5);
    // Seat labels are a row number and a letter; the last row of the largest aircraft is the
    // longest label.
    let seat = format!("{}A", most_seats.div_ceil(6));
    let worst = Flight {
        seq: 0,
        id: super::ids::object_id(0),
        flight_id: 0,
        airline: carrier,
        agent_first_name: first,
        agent_last_name: last,
        agent_email: format!("{first}{last}@{last}.{}", longest(&EMAIL_DOMAINS)),
        flight_date_millis: 0,
        origin: city,
        destination: city,
        flight_code: format!("{carrier}999"),
        status: longest(&STATUSES),
        duration_minutes: 0,
        gate: "A50".to_owned(),
        plane_type: plane,
        total_seats: 0,
        amenities,
        seats_available: 0,
        passengers: (1..=MAX_PASSENGERS as i32)
            .map(|passenger_id| Passenger {
                passenger_id,
                name: format!("{first} {last}"),
                ticket_number: "TCK-99999999".to_owned(),
                seat_number: seat.clone(),
            })
            .collect(),
        spare_seat: String::new(),
    };
    bson_size(&worst.to_document())
}

/// The unordered insert of seeded documents `range` of dataset `dataset_seed`.
///
/// # Panics
/// When `range` holds more than [`MAX_SEED_BATCH_DOCUMENTS`] documents (the command could
/// exceed MongoDB's 16 MiB limit; `seedBatchSize` is validated against it).
pub fn seed_batch(dataset_seed: u64, range: Range<u64>) -> SeedBatch {
    let documents = range.end - range.start;
    assert!(
        documents <= u64::from(MAX_SEED_BATCH_DOCUMENTS),
        "a seeding batch holds at most {MAX_SEED_BATCH_DOCUMENTS} documents, got {range:?}"
    );
    let (command, bson_bytes) = insert_command(
        range.map(|seq| Flight::seeded(dataset_seed, seq)),
        documents,
    );
    SeedBatch {
        command,
        documents,
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
    use crate::workload::flights::document::bson_bytes;
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
        let command = b.command.to_document().unwrap();
        assert_eq!(
            command.keys().collect::<Vec<_>>(),
            ["insert", "documents", "ordered"]
        );
        assert_eq!(command.get_str("insert"), Ok("flights"));
        assert_eq!(command.get_bool("ordered"), Ok(false));
        let docs = command.get_array("documents").unwrap();
        let ids: Vec<_> = docs
            .iter()
            .map(|d| d.as_document().unwrap().get_object_id("_id").unwrap())
            .collect();
        assert_eq!(ids, [object_id(0), object_id(1), object_id(2)]);
        // Sizes from testdata/reference.py: 3101 + 3094 + doc 2.
        let third = bson_size(&Flight::seeded(1, 2).to_document());
        assert_eq!(b.bson_bytes, 3101 + 3094 + third);
        // The bytes of the command built from the documents.
        let documents: Vec<_> = (0..3)
            .map(|seq| Flight::seeded(1, seq).to_document())
            .collect();
        let built =
            mongodb::bson::doc! { "insert": "flights", "documents": documents, "ordered": false };
        assert_eq!(b.command.as_bytes(), bson_bytes(&built));
        // Sizes of documents at multi-digit array indexes are counted without the index.
        let sizes: u64 = (0..120)
            .map(|seq| bson_size(&Flight::seeded(1, seq).to_document()))
            .sum();
        assert_eq!(seed_batch(1, 0..120).bson_bytes, sizes);
    }

    #[test]
    fn the_largest_seed_batch_fits_one_command() {
        use crate::workload::MAX_COMMAND_BYTES;
        let max = max_document_bytes() as usize;
        assert_eq!(max, 3465);
        // No generated document is larger (the first 100,000 of dataset 1 and 2).
        for seed in [1, 2] {
            let largest = (0..100_000)
                .map(|seq| bson_size(&Flight::seeded(seed, seq).to_document()))
                .max()
                .unwrap() as usize;
            assert!(largest <= max, "{largest} > {max}");
        }
        // A full batch of worst-case documents: array elements take the document, a type byte
        // and an index of at most 4 digits plus its NUL.
        let n = MAX_SEED_BATCH_DOCUMENTS as usize;
        let base = insert_command(std::iter::empty(), 0).0.as_bytes().len();
        assert!(base + n * (max + 6) <= MAX_COMMAND_BYTES);
        // Not far below the limit either: 5 % more documents would not fit.
        assert!(
            base + n * 105 / 100 * (max + 6) > MAX_COMMAND_BYTES,
            "{max}"
        );
        // And a real batch of that many documents is within the limit.
        let batch = seed_batch(1, 0..u64::from(MAX_SEED_BATCH_DOCUMENTS));
        assert!(batch.command.as_bytes().len() <= MAX_COMMAND_BYTES);
    }

    #[test]
    #[should_panic(expected = "a seeding batch holds at most 4800 documents")]
    fn an_oversized_seed_batch_is_refused() {
        seed_batch(1, 0..4801);
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
