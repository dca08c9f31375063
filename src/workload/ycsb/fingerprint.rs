//! The YCSB traffic fingerprint: proof that two runs sent the same operations.
//!
//! * **Operation record** = the kind byte (`R` read, `U` update, `I` insert, `S` scan, `M`
//!   read-modify-write), the number of commands as a big-endian u32, then the BSON bytes of each
//!   command body in order (exactly [`Command::body`](crate::workload::Command::body): the wire
//!   command without driver-added fields such as `$db`, `lsid`, read or write concern). A buffered
//!   insert (`batchsize > 1`) is `I` with 0 commands; its document is covered by the flushing
//!   `insert`. A batch remainder flushed at cleanup is recorded like any insert when it is sent.
//! * **Worker digest** = SHA-256 over that worker's records in generation order.
//! * **Run fingerprint** = SHA-256 over the UTF-8 string `ycsb/<workload>` (e.g.
//!   `ycsb/workloada`, `ycsb/custom`), the worker count as a big-endian u32, then per worker in
//!   index order its operation count (big-endian u64) and its 32-byte digest; shown as 64 lowercase
//!   hex characters.
//!
//! The same properties, seed, worker count and per-worker operation counts give the same
//! fingerprint whenever [`Worker::is_deterministic`] holds for every worker. It does not hold for
//! a run phase with inserts, several workers and YCSB's shared insert counter
//! (`mongobench.txninsert.partition=false`): which worker gets which insert key, and therefore
//! which keys later reads may choose, depends on scheduling. The fingerprint then still covers
//! exactly the commands that were generated, but a rerun is not expected to reproduce it.

use sha2::{Digest, Sha256};

use super::error::WorkerError;
use super::properties::Properties;
use super::shared::SharedState;
use super::worker::{Worker, YcsbOp, YcsbPhase};

/// Running digest of one worker's operations.
#[derive(Debug, Clone, Default)]
pub struct WorkerDigest {
    hasher: Sha256,
    count: u64,
}

/// One worker's share of a run fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerFingerprint {
    /// Operations recorded.
    pub count: u64,
    /// SHA-256 of the records.
    pub digest: [u8; 32],
}

impl WorkerDigest {
    /// An empty digest.
    pub fn new() -> WorkerDigest {
        WorkerDigest::default()
    }

    /// Appends one operation record.
    pub fn record(&mut self, op: &YcsbOp) {
        self.hasher.update([op.kind.record_byte()]);
        let commands = &op.operation.commands;
        self.hasher.update((commands.len() as u32).to_be_bytes());
        for command in commands {
            self.hasher.update(command.body.as_bytes());
        }
        self.count += 1;
    }

    /// Operations recorded so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The worker's count and digest.
    pub fn finish(self) -> WorkerFingerprint {
        WorkerFingerprint {
            count: self.count,
            digest: self.hasher.finalize().into(),
        }
    }
}

/// The run fingerprint over per-worker results in worker index order.
pub fn run_fingerprint(workload: &str, workers: &[WorkerFingerprint]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(format!("ycsb/{workload}").as_bytes());
    h.update((workers.len() as u32).to_be_bytes());
    for w in workers {
        h.update(w.count.to_be_bytes());
        h.update(w.digest);
    }
    h.finalize().into()
}

/// Lowercase hex of a digest.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fingerprint computed without a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// The run fingerprint, 64 hex characters.
    pub hex: String,
    /// Per-worker counts and digests.
    pub workers: Vec<WorkerFingerprint>,
    /// Whether every worker was deterministic (see the module docs).
    pub deterministic: bool,
}

/// Generates a phase's traffic without a server and fingerprints it: worker `w` produces
/// `counts[w]` operations (for a bounded phase, the quotas; for a duration-bound run, the counts
/// it recorded). Workers take turns one operation at a time, and every insert is acknowledged
/// before the next operation. `insert_start` is the first run-phase insert key. With
/// `mongobench.batch.flush=true` each worker's remainder follows its count as a final operation.
///
/// # Errors
/// As [`Worker::new`].
pub fn fingerprint_only(
    props: &Properties,
    seed: u64,
    phase: YcsbPhase,
    counts: &[u64],
    insert_start: u64,
) -> Result<Fingerprint, WorkerError> {
    let shared = SharedState::new(insert_start);
    let workers = counts.len() as u32;
    let mut gens = Vec::with_capacity(counts.len());
    for (w, &count) in counts.iter().enumerate() {
        let mut worker = Worker::new(props, seed, w as u32, workers, phase, &shared)?;
        worker.set_remaining(Some(count));
        gens.push((worker, WorkerDigest::new()));
    }
    let deterministic = gens.iter().all(|(w, _)| w.is_deterministic());
    let mut active = true;
    while active {
        active = false;
        for (worker, digest) in &mut gens {
            if let Some(op) = worker.next() {
                digest.record(&op);
                active = true;
            }
        }
    }
    let workers: Vec<WorkerFingerprint> = gens
        .into_iter()
        .map(|(_, digest)| digest.finish())
        .collect();
    Ok(Fingerprint {
        hex: to_hex(&run_fingerprint(&props.workload, &workers)),
        workers,
        deterministic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Operation;
    use crate::workload::ycsb::commands;
    use crate::workload::ycsb::properties::RawProperties;
    use crate::workload::ycsb::worker::{Call, OpKind};

    fn op(kind: OpKind, commands: Vec<crate::workload::Command>) -> YcsbOp {
        YcsbOp {
            kind,
            keynum: 0,
            key: "k".into(),
            calls: vec![Call::Read; commands.len()],
            buffered: commands.is_empty(),
            documents: 0,
            verify: false,
            operation: Operation {
                label: kind.label(),
                database: "ycsb",
                commands,
            },
        }
    }

    // Expected digests from an independent Python computation (hashlib, hand-built BSON).
    #[test]
    fn record_format_matches_reference_digests() {
        let mut d = WorkerDigest::new();
        d.record(&op(OpKind::Read, vec![commands::read("t", "k", None)]));
        let w = d.finish();
        assert_eq!(w.count, 1);
        assert_eq!(
            to_hex(&w.digest),
            "a888c514bf960430eb15d4e7539bc968f4da47efece94f54f3e9a4f2481010ab"
        );
        let mut d = WorkerDigest::new();
        d.record(&op(OpKind::Insert, vec![]));
        assert_eq!(
            to_hex(&d.finish().digest),
            "7244e162a74aac7fdd1961cca8856a9cf85a114a02145aa91e706cb225e725af"
        );
    }

    #[test]
    fn run_fingerprint_layout_matches_reference() {
        let empty = WorkerDigest::new().finish();
        assert_eq!(
            to_hex(&run_fingerprint("workloada", &[empty])),
            "73fceaf7a9a361bbdc98f6bedb723019632ee4b95a469feb97e0869bdbd67aaf"
        );
    }

    fn preset(name: &str, extra: &[(&str, &str)]) -> Properties {
        let mut raw = RawProperties::preset(name).expect("preset");
        for (k, v) in extra {
            raw.set(*k, *v);
        }
        Properties::from_raw(&raw).expect("valid")
    }

    #[test]
    fn same_inputs_same_fingerprint_and_a_new_seed_changes_it() {
        let a = preset("a", &[]);
        let one = fingerprint_only(&a, 1, YcsbPhase::Run, &[250, 250, 250, 250], 1000).unwrap();
        let again = fingerprint_only(&a, 1, YcsbPhase::Run, &[250, 250, 250, 250], 1000).unwrap();
        let other_seed =
            fingerprint_only(&a, 2, YcsbPhase::Run, &[250, 250, 250, 250], 1000).unwrap();
        let other_split = fingerprint_only(&a, 1, YcsbPhase::Run, &[500, 500], 1000).unwrap();
        assert!(one.deterministic);
        assert_eq!(one, again);
        assert_eq!(one.hex.len(), 64);
        assert_ne!(one.hex, other_seed.hex);
        assert_ne!(one.hex, other_split.hex);
        let b = preset("b", &[]);
        assert_ne!(
            one.hex,
            fingerprint_only(&b, 1, YcsbPhase::Run, &[250; 4], 1000)
                .unwrap()
                .hex
        );
        let load = fingerprint_only(&a, 1, YcsbPhase::Load, &[500, 500], 1000).unwrap();
        assert_eq!(
            load,
            fingerprint_only(&a, 1, YcsbPhase::Load, &[500, 500], 1000).unwrap()
        );
    }

    #[test]
    fn shared_insert_counter_with_several_workers_is_flagged_nondeterministic() {
        let d = preset("d", &[]);
        assert!(
            !fingerprint_only(&d, 1, YcsbPhase::Run, &[100, 100], 1000)
                .unwrap()
                .deterministic
        );
        assert!(
            fingerprint_only(&d, 1, YcsbPhase::Run, &[200], 1000)
                .unwrap()
                .deterministic
        );
        let lanes = preset("d", &[("mongobench.txninsert.partition", "true")]);
        let f = fingerprint_only(&lanes, 1, YcsbPhase::Run, &[100, 100], 1000).unwrap();
        assert!(f.deterministic);
        assert_eq!(
            f,
            fingerprint_only(&lanes, 1, YcsbPhase::Run, &[100, 100], 1000).unwrap()
        );
    }

    #[test]
    fn flushed_remainder_is_covered() {
        let kept = preset("a", &[("batchsize", "3")]);
        let flushed = preset(
            "a",
            &[("batchsize", "3"), ("mongobench.batch.flush", "true")],
        );
        let k = fingerprint_only(&kept, 1, YcsbPhase::Load, &[7], 1000).unwrap();
        let f = fingerprint_only(&flushed, 1, YcsbPhase::Load, &[7], 1000).unwrap();
        assert_eq!((k.workers[0].count, f.workers[0].count), (7, 8));
        assert_ne!(k.hex, f.hex);
    }
}
