//! `spec.dataset`: the sizes every cell is measured at, and how the data is seeded.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::units::{self, DatasetSize, UnitsError};

/// Default of `spec.dataset.seedBatchSize`.
pub const DEFAULT_SEED_BATCH_SIZE: u32 = 1000;
/// Default of `spec.dataset.seedWorkers`.
pub const DEFAULT_SEED_WORKERS: u32 = 8;
/// Default of `spec.dataset.datasetSeed`.
pub const DEFAULT_DATASET_SEED: u64 = 1;

/// CEL expression for the numeric value of a dataset size held in the variable `$v`, valid for
/// strings that match the size patterns (the bounded digit counts keep it inside int64).
macro_rules! size_value {
    ($v:literal) => {
        concat!(
            "(int(",
            $v,
            ".matches('[KMGT]iB$') ? ",
            $v,
            ".substring(0, ",
            $v,
            ".size() - 3) : ",
            $v,
            ".matches('[kMG]$') ? ",
            $v,
            ".substring(0, ",
            $v,
            ".size() - 1) : ",
            $v,
            ") * (",
            $v,
            ".endsWith('k') ? 1000 : ",
            $v,
            ".endsWith('M') ? 1000000 : ",
            $v,
            ".endsWith('G') ? 1000000000 : ",
            $v,
            ".endsWith('KiB') ? 1024 : ",
            $v,
            ".endsWith('MiB') ? 1048576 : ",
            $v,
            ".endsWith('GiB') ? 1073741824 : ",
            $v,
            ".endsWith('TiB') ? 1099511627776 : 1))"
        )
    };
}

/// CEL: true when some dataset size does not match the size pattern (the text of
/// [`units::DATASET_SIZE_PATTERN`], which `concat!` cannot reference; a test keeps them equal).
macro_rules! all_sizes_well_formed {
    () => {
        "!self.all(s, s.matches('^([1-9][0-9]{0,8}[kMG]?|[1-9][0-9]{0,5}(KiB|MiB|GiB|TiB))$'))"
    };
}

/// The data each cell is measured on.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Dataset {
    /// Dataset sizes, strictly ascending (1 to 10). Each is a document count (`250000`, `500k`,
    /// `1M`, `8M`) or a data size (`512MiB`, `4GiB`), all of the same kind. The collection is
    /// seeded to the first size and grown to each next one.
    #[schemars(
        length(min = 1, max = 10),
        inner(length(min = 1, max = 16), pattern(units::DATASET_SIZE_PATTERN))
    )]
    // Both rules skip lists with a malformed size: the pattern above already refuses those.
    #[x_kube(validation = Rule::new(concat!(
        all_sizes_well_formed!(), " || ",
        "self.all(s, s.matches('^[1-9][0-9]{0,8}[kMG]?$')) || ",
        "self.all(s, s.matches('^[1-9][0-9]{0,5}(KiB|MiB|GiB|TiB)$'))"))
        .message("spec.dataset.sizes must be all document counts (500k, 1M) or all data sizes (4GiB)"))]
    #[x_kube(validation = Rule::new(concat!(
        all_sizes_well_formed!(), " || ",
        "self.map(s, ", size_value!("s"), ").isSorted() && ",
        "self.all(a, self.exists_one(b, ", size_value!("b"), " == ", size_value!("a"), "))"))
        .message("spec.dataset.sizes must be strictly ascending (each size larger than the one before)"))]
    pub sizes: Vec<String>,

    /// Documents per insert command while seeding flights (1 to 4800, default 1000; 4800 of
    /// the largest flights documents fill MongoDB's 16 MiB command limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 4800), extend("default" = 1000))]
    pub seed_batch_size: Option<u32>,

    /// Concurrent seeding tasks (1 to 256, default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 256), extend("default" = 8))]
    pub seed_workers: Option<u32>,

    /// When secondary indexes are built: `after` loading (default; compact indexes) or `before`
    /// (on the empty collection, as plgm does). Results of the two are not comparable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "after"))]
    pub index_build: Option<IndexBuild>,

    /// Seed of the generated document content (default 1); the dataset's identity includes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1))]
    pub dataset_seed: Option<u64>,

    /// Keep and reuse an already seeded, verified dataset of the same identity instead of
    /// dropping it (default false); useful for external targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub reuse_dataset: Option<bool>,
}

impl Dataset {
    /// The parsed `sizes`, in order.
    ///
    /// # Errors
    /// The first size that does not parse.
    pub fn parsed_sizes(&self) -> Result<Vec<DatasetSize>, UnitsError> {
        self.sizes
            .iter()
            .map(|s| units::parse_dataset_size(s))
            .collect()
    }

    /// Effective `seedBatchSize` (default 1000).
    pub fn seed_batch_size(&self) -> u32 {
        self.seed_batch_size.unwrap_or(DEFAULT_SEED_BATCH_SIZE)
    }

    /// Effective `seedWorkers` (default 8).
    pub fn seed_workers(&self) -> u32 {
        self.seed_workers.unwrap_or(DEFAULT_SEED_WORKERS)
    }

    /// Effective `indexBuild` (default `after`).
    pub fn index_build(&self) -> IndexBuild {
        self.index_build.unwrap_or_default()
    }

    /// Effective `datasetSeed` (default 1).
    pub fn dataset_seed(&self) -> u64 {
        self.dataset_seed.unwrap_or(DEFAULT_DATASET_SEED)
    }

    /// Effective `reuseDataset` (default false).
    pub fn reuse_dataset(&self) -> bool {
        self.reuse_dataset.unwrap_or(false)
    }
}

/// When secondary indexes are built relative to loading.
#[derive(JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[schemars(transform = crate::api::drop_description)]
#[serde(rename_all = "lowercase")]
pub enum IndexBuild {
    /// Load first, then build the indexes.
    #[default]
    After,
    /// Build the indexes on the empty collection, then load.
    Before,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::units::{DATA_SIZE_PATTERN, DATASET_SIZE_PATTERN, DOCUMENT_COUNT_PATTERN};

    #[test]
    fn cel_size_patterns_are_the_units_patterns() {
        assert!(all_sizes_well_formed!().contains(&format!("s.matches('{DATASET_SIZE_PATTERN}')")));
        let crd = serde_json::to_string(&crate::api::crd()).unwrap();
        for pattern in [DOCUMENT_COUNT_PATTERN, DATA_SIZE_PATTERN] {
            assert!(
                crd.contains(&format!("s.matches('{pattern}')")),
                "{pattern}"
            );
        }
    }

    #[test]
    fn seed_batch_size_maximum_is_what_fits_one_command() {
        let crd = serde_json::to_value(crate::api::crd()).unwrap();
        let found = crd.pointer(
            "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/dataset/properties/seedBatchSize/maximum",
        );
        assert_eq!(
            found.and_then(serde_json::Value::as_f64),
            Some(f64::from(
                crate::workload::flights::MAX_SEED_BATCH_DOCUMENTS
            ))
        );
    }

    #[test]
    fn sizes_parse_in_order() {
        let dataset = Dataset {
            sizes: vec!["500k".into(), "1M".into(), "8M".into()],
            ..Default::default()
        };
        assert_eq!(
            dataset.parsed_sizes(),
            Ok(vec![
                DatasetSize::Documents(500_000),
                DatasetSize::Documents(1_000_000),
                DatasetSize::Documents(8_000_000)
            ])
        );
        let bad = Dataset {
            sizes: vec!["1M".into(), "4 GB".into()],
            ..Default::default()
        };
        assert_eq!(
            bad.parsed_sizes(),
            Err(UnitsError::DatasetSize {
                value: "4 GB".into()
            })
        );
    }
}
