//! What a run knows about the dataset it runs against (specs/flights.md §6, §7).

use super::ids::insert_base;

/// What a run needs to know about the dataset it runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatasetInfo {
    /// `datasetSeed` of the stored documents (from the dataset metadata).
    pub dataset_seed: u64,
    /// N0: seeded documents, `seq` in [0, N0).
    pub documents: u64,
    /// This run's `insertBase` ([`insert_base`] of the largest `_id`'s seq; 2^48 when fresh).
    pub insert_base: u64,
}

impl DatasetInfo {
    /// A freshly seeded dataset of `documents` documents: insertBase 2^48.
    pub fn fresh(dataset_seed: u64, documents: u64) -> DatasetInfo {
        DatasetInfo {
            dataset_seed,
            documents,
            insert_base: insert_base(None),
        }
    }
}
