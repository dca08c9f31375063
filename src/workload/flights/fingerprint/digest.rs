//! A worker's digest of its records and the run fingerprint combined from the workers' digests
//! (specs/flights.md §8): SHA-256 over a worker's records in order; the run fingerprint is
//! SHA-256 over `flights/v1`, W (u32), then per worker its count (u64) and digest, integers
//! big-endian.

use super::error::RecordError;
use super::v1::record_parts;
use crate::workload::Operation;
use crate::workload::flights::VERSION;
use sha2::{Digest, Sha256};

/// A worker's digest and operation count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerDigest {
    /// Operations recorded.
    pub operations: u64,
    /// SHA-256 over their records.
    pub digest: [u8; 32],
}

/// Accumulates one worker's measured records, in the order the operations were generated.
#[derive(Debug, Clone, Default)]
pub struct Fingerprint {
    hasher: Sha256,
    operations: u64,
}

impl Fingerprint {
    /// An empty accumulator.
    pub fn new() -> Fingerprint {
        Fingerprint::default()
    }

    /// Adds `op`'s record.
    ///
    /// # Errors
    /// `op` is not a flights/v1 shape; nothing is recorded then.
    pub fn record(&mut self, op: &Operation) -> Result<(), RecordError> {
        let (kind, body) = record_parts(op)?;
        self.hasher.update([kind]);
        self.hasher.update(body.as_bytes());
        self.operations += 1;
        Ok(())
    }

    /// Operations recorded so far.
    pub fn operations(&self) -> u64 {
        self.operations
    }

    /// The worker's count and digest.
    pub fn finish(self) -> WorkerDigest {
        WorkerDigest {
            operations: self.operations,
            digest: self.hasher.finalize().into(),
        }
    }
}

/// A run's fingerprint with the per-worker digests it was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFingerprint {
    /// SHA-256 over version, W and the workers' counts and digests.
    pub hash: [u8; 32],
    /// The workers' counts and digests, in worker order.
    pub workers: Vec<WorkerDigest>,
}

impl RunFingerprint {
    /// Combines per-worker digests (in worker index order) into the run fingerprint.
    pub fn from_workers(workers: Vec<WorkerDigest>) -> RunFingerprint {
        let mut h = Sha256::new();
        h.update(VERSION.as_bytes());
        h.update((workers.len() as u32).to_be_bytes());
        for w in &workers {
            h.update(w.operations.to_be_bytes());
            h.update(w.digest);
        }
        RunFingerprint {
            hash: h.finalize().into(),
            workers,
        }
    }

    /// The 64 hex characters reported with every result.
    pub fn hex(&self) -> String {
        hex::encode(self.hash)
    }

    /// The first 16 hex characters, for display.
    pub fn short(&self) -> String {
        self.hex()[..16].to_string()
    }
}
