//! `fingerprint-only` mode (specs/flights.md §8): a run's measured traffic generated again from
//! its parameters, dataset and per-worker counts, without a server, and fingerprinted.

use super::digest::{Fingerprint, FingerprintVersion, RunFingerprint};
use super::error::FingerprintError;
use crate::workload::flights::{DatasetInfo, Params, RunPhase, Worker};

/// Measured operations of each worker for a total `total`: ⌊T/W⌋, plus one for w < T mod W.
pub fn operations_per_worker(total: u64, workers: u32) -> Vec<u64> {
    let w = u64::from(workers.max(1));
    (0..w)
        .map(|i| total / w + u64::from(i < total % w))
        .collect()
}

/// Regenerates the measured traffic of `counts[w]` operations per worker without a server and
/// returns its fingerprint of `version` (`fingerprint-only` mode).
///
/// # Errors
/// `counts.len() != params.workers`, or the parameters or dataset do not allow a worker.
pub fn fingerprint_only(
    version: FingerprintVersion,
    params: &Params,
    dataset: &DatasetInfo,
    counts: &[u64],
) -> Result<RunFingerprint, FingerprintError> {
    if counts.len() != params.workers as usize {
        return Err(FingerprintError::CountMismatch {
            workers: params.workers,
            counts: counts.len(),
        });
    }
    let mut digests = Vec::with_capacity(counts.len());
    for (w, &count) in counts.iter().enumerate() {
        let mut worker = Worker::new(params, dataset, w as u32, RunPhase::Measured)?;
        let mut fp = Fingerprint::new(version, dataset);
        for _ in 0..count {
            fp.record(&worker.next_op())?;
        }
        digests.push(fp.finish());
    }
    Ok(RunFingerprint::from_workers(version, digests))
}
