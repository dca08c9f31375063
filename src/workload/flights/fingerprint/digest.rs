//! A worker's digest of its records and the run fingerprint combined from the workers' digests
//! (specs/flights.md §8), in either version:
//!
//! * v1: SHA-256 over a worker's v1 records in order; the run fingerprint is SHA-256 over
//!   `flights/v1`, W (u32), then per worker its count (u64) and digest, integers big-endian;
//!   reported as 64 hex characters.
//! * v2: XXH3-128 over the worker's dataset (datasetSeed, N0, insertBase as u64) and then its
//!   v2 records; the run fingerprint is XXH3-128 over `flights/v1`, W (u32), then per worker
//!   its count (u64) and digest, integers little-endian; reported as `v2:` and 32 hex
//!   characters.

use super::error::RecordError;
use super::{v1, v2};
use crate::workload::Operation;
use crate::workload::flights::{DatasetInfo, VERSION};
use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::{Xxh3Default, xxh3_128};

/// Which fingerprint a digest or a recorded fingerprint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FingerprintVersion {
    /// SHA-256 over kind bytes and command bodies (results written before v2).
    V1,
    /// XXH3-128 over the generator's values (compact records).
    V2,
}

impl FingerprintVersion {
    /// What new results record.
    pub const CURRENT: FingerprintVersion = FingerprintVersion::V2;

    /// The version of a recorded fingerprint string: `v2:` marks v2; v1 has no prefix.
    pub fn of(recorded: &str) -> FingerprintVersion {
        if recorded.starts_with(V2_PREFIX) {
            FingerprintVersion::V2
        } else {
            FingerprintVersion::V1
        }
    }

    /// The version of a worker digest, by its length; `None` for a length neither has.
    pub fn of_digest(digest: &[u8]) -> Option<FingerprintVersion> {
        match digest.len() {
            32 => Some(FingerprintVersion::V1),
            16 => Some(FingerprintVersion::V2),
            _ => None,
        }
    }
}

/// What starts a v2 fingerprint string.
const V2_PREFIX: &str = "v2:";

/// A worker's digest and operation count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerDigest {
    /// Operations recorded.
    pub operations: u64,
    /// The hash of their records: SHA-256 (32 bytes, v1) or XXH3-128 (16 bytes, big-endian as
    /// xxHash's canonical form, v2).
    pub digest: Vec<u8>,
}

#[derive(Clone)]
enum Hasher {
    V1(Sha256),
    // Boxed: XXH3's streaming state (buffer and accumulators) is several hundred bytes.
    V2 {
        hasher: Box<Xxh3Default>,
        record: Vec<u8>,
    },
}

// Xxh3Default has no Debug; the version is what there is to see.
impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hasher::V1(_) => f.write_str("SHA-256"),
            Hasher::V2 { .. } => f.write_str("XXH3-128"),
        }
    }
}

/// Accumulates one worker's measured records, in the order the operations were generated.
#[derive(Debug, Clone)]
pub struct Fingerprint {
    hasher: Hasher,
    operations: u64,
}

impl Fingerprint {
    /// An empty accumulator of `version` for a worker generating against `dataset` (v2 hashes
    /// it first: inserted documents and seeded values are functions of it).
    pub fn new(version: FingerprintVersion, dataset: &DatasetInfo) -> Fingerprint {
        let hasher = match version {
            FingerprintVersion::V1 => Hasher::V1(Sha256::new()),
            FingerprintVersion::V2 => {
                let mut hasher = Box::new(Xxh3Default::new());
                let mut start = [0u8; 24];
                start[..8].copy_from_slice(&dataset.dataset_seed.to_le_bytes());
                start[8..16].copy_from_slice(&dataset.documents.to_le_bytes());
                start[16..].copy_from_slice(&dataset.insert_base.to_le_bytes());
                hasher.update(&start);
                Hasher::V2 {
                    hasher,
                    record: Vec::with_capacity(128),
                }
            }
        };
        Fingerprint {
            hasher,
            operations: 0,
        }
    }

    /// The version this accumulator computes.
    pub fn version(&self) -> FingerprintVersion {
        match self.hasher {
            Hasher::V1(_) => FingerprintVersion::V1,
            Hasher::V2 { .. } => FingerprintVersion::V2,
        }
    }

    /// Adds `op`'s record.
    ///
    /// # Errors
    /// `op` is not a flights/v1 shape; nothing is recorded then.
    pub fn record(&mut self, op: &Operation) -> Result<(), RecordError> {
        match &mut self.hasher {
            Hasher::V1(hasher) => {
                let (kind, body) = v1::record_parts(op)?;
                hasher.update([kind]);
                hasher.update(body.as_bytes());
            }
            Hasher::V2 { hasher, record } => {
                record.clear();
                v2::write_record(op, record)?;
                hasher.update(record);
            }
        }
        self.operations += 1;
        Ok(())
    }

    /// Operations recorded so far.
    pub fn operations(&self) -> u64 {
        self.operations
    }

    /// The worker's count and digest.
    pub fn finish(self) -> WorkerDigest {
        let digest = match self.hasher {
            Hasher::V1(hasher) => hasher.finalize().to_vec(),
            Hasher::V2 { hasher, .. } => hasher.digest128().to_be_bytes().to_vec(),
        };
        WorkerDigest {
            operations: self.operations,
            digest,
        }
    }
}

/// A run's fingerprint with the per-worker digests it was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFingerprint {
    /// The version of the fingerprint and of every worker digest.
    pub version: FingerprintVersion,
    /// The hash over version, W and the workers' counts and digests: SHA-256 (v1) or XXH3-128
    /// (v2, big-endian).
    pub hash: Vec<u8>,
    /// The workers' counts and digests, in worker order.
    pub workers: Vec<WorkerDigest>,
}

impl RunFingerprint {
    /// Combines per-worker digests of `version` (in worker index order) into the run
    /// fingerprint.
    ///
    /// # Panics
    /// A digest is not of `version` (its length): digests of one run come from one version.
    pub fn from_workers(version: FingerprintVersion, workers: Vec<WorkerDigest>) -> RunFingerprint {
        assert!(
            workers
                .iter()
                .all(|w| FingerprintVersion::of_digest(&w.digest) == Some(version)),
            "worker digests of another fingerprint version than {version:?}"
        );
        let w = workers.len() as u32;
        let hash = match version {
            FingerprintVersion::V1 => {
                let mut h = Sha256::new();
                h.update(VERSION.as_bytes());
                h.update(w.to_be_bytes());
                for worker in &workers {
                    h.update(worker.operations.to_be_bytes());
                    h.update(&worker.digest);
                }
                h.finalize().to_vec()
            }
            FingerprintVersion::V2 => {
                let mut bytes = Vec::with_capacity(VERSION.len() + 4 + workers.len() * 24);
                bytes.extend_from_slice(VERSION.as_bytes());
                bytes.extend_from_slice(&w.to_le_bytes());
                for worker in &workers {
                    bytes.extend_from_slice(&worker.operations.to_le_bytes());
                    bytes.extend_from_slice(&worker.digest);
                }
                xxh3_128(&bytes).to_be_bytes().to_vec()
            }
        };
        RunFingerprint {
            version,
            hash,
            workers,
        }
    }

    /// The string reported with every result: 64 hex characters (v1), or `v2:` and 32 hex
    /// characters (v2).
    pub fn hex(&self) -> String {
        match self.version {
            FingerprintVersion::V1 => hex::encode(&self.hash),
            FingerprintVersion::V2 => format!("{V2_PREFIX}{}", hex::encode(&self.hash)),
        }
    }

    /// For display: the version prefix, if any, and the first 16 hex characters.
    pub fn short(&self) -> String {
        let full = self.hex();
        let prefix = match self.version {
            FingerprintVersion::V1 => 0,
            FingerprintVersion::V2 => V2_PREFIX.len(),
        };
        full[..prefix + 16].to_string()
    }
}
