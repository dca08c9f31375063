//! The traffic fingerprint (specs/flights.md §8): operation records, per-worker digests, the
//! run fingerprint, and `fingerprint-only` regeneration.
//!
//! `error` at the bottom; the record (`v1`) under the digests (`digest`), which `regenerate`
//! drives with a [`Worker`](crate::workload::flights::Worker). Depends on the generator
//! (`worker`, `params`, `DatasetInfo`) and nothing of the runner.

mod digest;
mod error;
mod regenerate;
mod v1;

pub use digest::{Fingerprint, RunFingerprint, WorkerDigest};
pub use error::{FingerprintError, RecordError};
pub use regenerate::{fingerprint_only, operations_per_worker};
pub use v1::operation_record;

#[cfg(test)]
mod tests;
