//! What the operations of one phase may have changed in the seeded collection, noted by its
//! workers as the generators produce each operation (the generators know every operation's
//! target, so no reply is needed): what a restore (`dataset/restore.rs`) undoes.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::workload::flights::{Writes, ids};
use crate::workload::ycsb;

/// What one phase may have changed in the seeded collection, noted by all of its workers at
/// once. Bitmaps over the seeded range hold it in one bit per seeded document however long the
/// phase runs: a set per worker grew towards the whole dataset under a skewed key choice, which
/// at 256 workers made tens of MB.
#[derive(Debug, Default)]
pub struct Changes {
    /// Seeded documents changed: flights `seq`s changed by `_id` or in a transaction, YCSB
    /// record numbers updated.
    written: Bits,
    /// flights: `seq mod 900000` of the documents whose flight_id a filter named (every seeded
    /// document sharing the id may have changed).
    sharing_flight_id: Bits,
    /// flights: whether the phase inserted documents (all above the seeded range).
    inserted_flights: AtomicBool,
    /// YCSB: one past the highest record number the phase inserted (0: none). Run-phase
    /// inserts number records from the record count up, so these are the records to remove.
    inserted_end: AtomicU64,
    /// Custom: one bit per collection (by index) an operation of the phase may write.
    custom_written: AtomicU64,
}

impl Changes {
    /// Changes to a collection of `documents` seeded documents; what lies above is removed by
    /// range, not noted.
    pub fn new(documents: u64) -> Changes {
        Changes {
            written: Bits::new(documents),
            sharing_flight_id: Bits::new(documents.min(ids::SEEDED_ID_RANGE)),
            ..Changes::default()
        }
    }

    /// Notes a flights operation.
    pub fn flights(&self, writes: Writes, inserts: bool) {
        match writes {
            Writes::Nothing => {}
            Writes::Document(seq) => self.written.set(seq),
            Writes::Pair(a, b) => {
                self.written.set(a);
                self.written.set(b);
            }
            Writes::SharingFlightId(seq) => self.sharing_flight_id.set(seq % ids::SEEDED_ID_RANGE),
        }
        if inserts && !self.inserted_flights.load(Ordering::Relaxed) {
            self.inserted_flights.store(true, Ordering::Relaxed);
        }
    }

    /// Notes a YCSB operation (a buffered insert too: its record may be sent at cleanup).
    pub fn ycsb(&self, op: &ycsb::YcsbOp) {
        match op.kind {
            ycsb::OpKind::Update | ycsb::OpKind::ReadModifyWrite => self.written.set(op.keynum),
            ycsb::OpKind::Insert => {
                self.inserted_end
                    .fetch_max(op.keynum + 1, Ordering::Relaxed);
            }
            ycsb::OpKind::Read | ycsb::OpKind::Scan => {}
        }
    }

    /// Custom: notes the collections (by index, below 64) the phase's operations may write.
    pub fn custom_collections(&self, written: &[usize]) {
        let bits = written.iter().fold(0u64, |b, &c| b | (1 << c));
        self.custom_written.fetch_or(bits, Ordering::Relaxed);
    }

    /// Custom: the collections the phase may have written, ascending.
    pub fn custom_written(&self) -> Vec<usize> {
        let bits = self.custom_written.load(Ordering::Relaxed);
        (0..64).filter(|c| bits & (1 << c) != 0).collect()
    }

    /// flights: whether the phase inserted documents (all above the seeded range).
    pub fn inserted_flights(&self) -> bool {
        self.inserted_flights.load(Ordering::Relaxed)
    }

    /// flights: the seeded `seq`s below `documents` to write again, ascending.
    pub fn flight_seqs(&self, documents: u64) -> Vec<u64> {
        let mut seqs: BTreeSet<u64> = self.written.ones().filter(|&s| s < documents).collect();
        for class in self.sharing_flight_id.ones() {
            seqs.extend(ids::seqs_sharing_flight_id(class, documents));
        }
        seqs.into_iter().collect()
    }

    /// YCSB: the loaded records below `documents` to write again, ascending.
    pub fn updated_records(&self, documents: u64) -> Vec<u64> {
        self.written.ones().filter(|&k| k < documents).collect()
    }

    /// YCSB: the record numbers at or above `documents` the phase may have inserted.
    pub fn inserted_records(&self, documents: u64) -> std::ops::Range<u64> {
        documents..self.inserted_end.load(Ordering::Relaxed).max(documents)
    }
}

/// A fixed-size set of small numbers that many workers add to at once; numbers beyond its size
/// (rounded up to a multiple of 64) are ignored.
#[derive(Debug, Default)]
struct Bits(Box<[AtomicU64]>);

impl Bits {
    fn new(size: u64) -> Bits {
        Bits((0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    fn set(&self, i: u64) {
        let Some(word) = self.0.get((i / 64) as usize) else {
            return;
        };
        let bit = 1 << (i % 64);
        // Most updates under a skewed key choice hit records already noted: reading first
        // keeps the cache line shared between cores.
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    fn ones(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().enumerate().flat_map(|(w, word)| {
            let mut bits = word.load(Ordering::Relaxed);
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                Some(w as u64 * 64 + u64::from(b))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ycsb::Properties;
    use crate::workload::ycsb::properties::RawProperties;

    #[test]
    fn flights_changes_keep_documents_shared_ids_and_inserts_apart() {
        let changes = Changes::new(2_000_000);
        changes.flights(Writes::Document(3), false);
        changes.flights(Writes::Nothing, true);
        changes.flights(Writes::SharingFlightId(900_007), false);
        changes.flights(Writes::Pair(1, 3), false);
        // Above the seeded range: removed by range, never written again.
        changes.flights(Writes::Document(2_000_000), false);
        assert_eq!(
            changes.flight_seqs(2_000_000),
            [1, 3, 7, 900_007, 1_800_007]
        );
        assert_eq!(changes.flight_seqs(900_000), [1, 3, 7]);
        assert!(changes.inserted_flights.load(Ordering::Relaxed));
        assert!(!Changes::new(10).inserted_flights.load(Ordering::Relaxed));
    }

    #[test]
    fn a_shared_flight_id_beyond_a_small_dataset_changes_no_seeded_document() {
        let changes = Changes::new(100);
        changes.flights(Writes::SharingFlightId(450), false);
        changes.flights(Writes::SharingFlightId(900_042), false);
        assert_eq!(changes.flight_seqs(100), [42]);
    }

    #[test]
    fn ycsb_changes_note_updated_records_and_the_inserted_range() {
        let mut raw = RawProperties::preset("a").unwrap();
        raw.set("insertproportion", "0.2");
        raw.set("recordcount", "1000");
        raw.set("operationcount", "2000");
        let props = Properties::from_raw(&raw).unwrap();
        let shared = ycsb::SharedState::new(1000);
        let mut worker = ycsb::Worker::new(&props, 7, 0, 1, ycsb::YcsbPhase::Run, &shared).unwrap();
        let changes = Changes::new(1000);
        let (mut updated, mut inserted_end) = (BTreeSet::new(), 0);
        while let Some(op) = worker.next() {
            changes.ycsb(&op);
            match op.kind {
                ycsb::OpKind::Update | ycsb::OpKind::ReadModifyWrite => {
                    updated.insert(op.keynum);
                }
                ycsb::OpKind::Insert => inserted_end = inserted_end.max(op.keynum + 1),
                ycsb::OpKind::Read | ycsb::OpKind::Scan => {}
            }
        }
        assert!(inserted_end > 1000 && !updated.is_empty());
        assert_eq!(
            changes.updated_records(1000),
            updated
                .into_iter()
                .filter(|&k| k < 1000)
                .collect::<Vec<_>>()
        );
        assert_eq!(changes.inserted_records(1000), 1000..inserted_end);
    }

    #[test]
    fn inserts_note_one_past_the_highest_record() {
        let changes = Changes::new(10);
        for keynum in [12, 10, 11] {
            changes
                .inserted_end
                .fetch_max(keynum + 1, Ordering::Relaxed);
        }
        assert_eq!(changes.inserted_records(10), 10..13);
        assert_eq!(Changes::new(10).inserted_records(10), 10..10);
    }

    #[test]
    fn bits_hold_each_number_once_and_ignore_those_beyond_their_size() {
        let bits = Bits::new(130);
        for i in [129, 0, 64, 63, 64, 191, 192, 1_000] {
            bits.set(i);
        }
        assert_eq!(bits.ones().collect::<Vec<_>>(), [0, 63, 64, 129, 191]);
        assert_eq!(Bits::new(0).ones().count(), 0);
    }
}
