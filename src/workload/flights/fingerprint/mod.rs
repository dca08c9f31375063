//! The traffic fingerprint (specs/flights.md §8): operation records, per-worker digests, the
//! run fingerprint, and `fingerprint-only` regeneration, in two versions: v1 (SHA-256 over
//! command bodies, what results written before v2 record) and v2 (XXH3-128 over the
//! generator's values, what new results record).
//!
//! `error` at the bottom; the records (`v1`, `v2`) under the digests (`digest`), which
//! `regenerate` drives with a [`Worker`](crate::workload::flights::Worker). Depends on the
//! generator (`worker`, `params`, `ids`, `dataset`, `version`) and nothing of the runner.

mod digest;
mod error;
mod regenerate;
mod v1;
mod v2;

pub use digest::{Fingerprint, FingerprintVersion, RunFingerprint, WorkerDigest};
pub use error::{FingerprintError, RecordError};
pub use regenerate::{fingerprint_only, operations_per_worker};
pub use v1::operation_record;
pub use v2::operation_record_v2;

#[cfg(test)]
mod tests;
