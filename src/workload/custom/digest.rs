//! The traffic fingerprint (§7): per worker, SHA-256 over every command as sent, each preceded
//! by its length; the run combines the workers' digests as YCSB's does.

use sha2::{Digest, Sha256};

use super::model::VERSION;
use crate::workload::Operation;

/// Running digest of one worker's operations.
#[derive(Debug, Clone, Default)]
pub struct WorkerDigest {
    hasher: Sha256,
    count: u64,
}

impl WorkerDigest {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds every command of `op`: its BSON length as 8 little-endian bytes, then the bytes.
    pub fn record(&mut self, op: &Operation) {
        for command in &op.commands {
            let bytes = command.body.as_bytes();
            self.hasher.update((bytes.len() as u64).to_le_bytes());
            self.hasher.update(bytes);
        }
        self.count += 1;
    }

    /// Operations recorded so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The operation count and the digest.
    pub fn finish(self) -> (u64, [u8; 32]) {
        (self.count, self.hasher.finalize().into())
    }
}

/// The run fingerprint, as YCSB's: SHA-256 over `custom/v1`, the worker count (big-endian u32),
/// then per worker in index order its operation count (big-endian u64) and digest.
pub fn run_fingerprint(workers: &[(u64, [u8; 32])]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(VERSION.as_bytes());
    h.update((workers.len() as u32).to_be_bytes());
    for (count, digest) in workers {
        h.update(count.to_be_bytes());
        h.update(digest);
    }
    h.finalize().into()
}
