//! One worker's stream of operations, whichever workload generates it, with what the runner
//! needs to judge each reply (YCSB's status rules, flights' hit targets) and to fingerprint
//! exactly what was sent.

use std::sync::Arc;

use crate::measure::ErrorKind;
use crate::runner::outcome::Reply;
use crate::workload::Operation;
use crate::workload::custom;
use crate::workload::flights;
use crate::workload::flights::fingerprint::FingerprintVersion;
use crate::workload::ycsb::{self, Call};

use super::changes::Changes;

/// The next operation of a worker.
pub struct Step {
    pub operation: Operation,
    /// Per command: how YCSB judges its reply (empty for flights: only failures count).
    pub calls: Vec<Call>,
    /// A YCSB insert that only went into the batch buffer: nothing is sent.
    pub buffered: bool,
    /// Flights: where a find/update/delete was aimed.
    pub target: Option<flights::Target>,
    /// Flights: which §5 shape it is (explain is sampled per variant).
    pub variant: Option<flights::Variant>,
    /// Custom: the name of the operation template. A reply that refuses the command itself
    /// ends the phase, naming it (docs/specs/custom.md §5).
    pub template: Option<Arc<str>>,
}

/// A generator plus the fingerprint of what it has produced and the seeded documents it may
/// have changed.
pub enum Source {
    Flights {
        worker: Box<flights::Worker>,
        fingerprint: flights::Fingerprint,
        remaining: Option<u64>,
        changes: Arc<Changes>,
    },
    Ycsb {
        worker: Box<ycsb::Worker>,
        fingerprint: ycsb::WorkerDigest,
        changes: Arc<Changes>,
    },
    Custom {
        worker: Box<custom::Worker>,
        fingerprint: custom::WorkerDigest,
        remaining: Option<u64>,
        changes: Arc<Changes>,
        /// Each template's name, by index.
        names: Arc<[Arc<str>]>,
    },
}

impl Source {
    /// A flights worker's source, fingerprinted with the current version; `changes` is shared
    /// by the workers of its phase.
    pub fn flights(
        worker: flights::Worker,
        remaining: Option<u64>,
        changes: Arc<Changes>,
    ) -> Source {
        Source::flights_as(FingerprintVersion::CURRENT, worker, remaining, changes)
    }

    /// A flights worker's source fingerprinted with `version` (a recorded v1 fingerprint is
    /// checked with v1).
    pub fn flights_as(
        version: FingerprintVersion,
        worker: flights::Worker,
        remaining: Option<u64>,
        changes: Arc<Changes>,
    ) -> Source {
        Source::Flights {
            fingerprint: flights::Fingerprint::new(version, worker.dataset()),
            worker: Box::new(worker),
            remaining,
            changes,
        }
    }

    /// A YCSB worker's source; `changes` is shared by the workers of its phase.
    pub fn ycsb(worker: ycsb::Worker, changes: Arc<Changes>) -> Source {
        Source::Ycsb {
            worker: Box::new(worker),
            fingerprint: ycsb::WorkerDigest::new(),
            changes,
        }
    }

    /// A custom workload worker's source; `changes` is shared by the workers of its phase (the
    /// collections it may write are noted there by the caller).
    pub fn custom(
        worker: custom::Worker,
        remaining: Option<u64>,
        changes: Arc<Changes>,
        names: Arc<[Arc<str>]>,
    ) -> Source {
        Source::Custom {
            worker: Box::new(worker),
            fingerprint: custom::WorkerDigest::new(),
            remaining,
            changes,
            names,
        }
    }

    /// The next operation, or `None` when an operation-bounded phase is exhausted.
    pub fn next_step(&mut self) -> Option<Step> {
        match self {
            Source::Custom {
                worker,
                fingerprint,
                remaining,
                names,
                ..
            } => {
                if let Some(left) = remaining {
                    if *left == 0 {
                        return None;
                    }
                    *left -= 1;
                }
                let generated = worker.next();
                fingerprint.record(&generated.operation);
                Some(Step {
                    operation: generated.operation,
                    calls: Vec::new(),
                    buffered: false,
                    target: None,
                    variant: None,
                    template: Some(names[generated.template].clone()),
                })
            }
            Source::Flights {
                worker,
                fingerprint,
                remaining,
                changes,
            } => {
                if let Some(left) = remaining {
                    if *left == 0 {
                        return None;
                    }
                    *left -= 1;
                }
                let planned = worker.next_planned();
                fingerprint
                    .record(&planned.operation)
                    .expect("generated commands serialize to BSON");
                changes.flights(planned.writes, planned.variant == flights::Variant::Insert);
                Some(Step {
                    operation: planned.operation,
                    calls: Vec::new(),
                    buffered: false,
                    target: Some(planned.target),
                    variant: Some(planned.variant),
                    template: None,
                })
            }
            Source::Ycsb {
                worker,
                fingerprint,
                changes,
            } => {
                let op = worker.next()?;
                fingerprint.record(&op);
                changes.ycsb(&op);
                Some(Step {
                    calls: op.calls,
                    buffered: op.buffered,
                    operation: op.operation,
                    target: None,
                    variant: None,
                    template: None,
                })
            }
        }
    }

    /// Tells the generator the last operation finished (YCSB acknowledges inserts here).
    pub fn complete(&mut self) {
        if let Source::Ycsb { worker, .. } = self {
            worker.complete();
        }
    }

    /// The seeded documents the operations of this source's phase may have changed so far.
    pub fn changes(&self) -> &Arc<Changes> {
        match self {
            Source::Flights { changes, .. }
            | Source::Ycsb { changes, .. }
            | Source::Custom { changes, .. } => changes,
        }
    }

    /// Operations generated so far.
    pub fn generated(&self) -> u64 {
        match self {
            Source::Flights { fingerprint, .. } => fingerprint.operations(),
            Source::Ycsb { fingerprint, .. } => fingerprint.count(),
            Source::Custom { fingerprint, .. } => fingerprint.count(),
        }
    }
}

/// Each template's name of a custom workload, by index: what [`Source::custom`] names a
/// refused template by.
pub fn template_names(workload: &custom::Workload) -> Arc<[Arc<str>]> {
    workload
        .operations()
        .iter()
        .map(|o| Arc::from(o.name.as_str()))
        .collect()
}

/// One worker's part of a run fingerprint: the operations it generated and the digest of
/// their records; what a client process hands over so another can combine the fingerprint.
/// The digest's length tells its version: 32 bytes (SHA-256: YCSB, custom, flights v1) or 16
/// (XXH3-128: flights v2); [`check_shares`] refuses others.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkerShare {
    pub operations: u64,
    #[serde(with = "hex::serde")]
    pub digest: Vec<u8>,
}

impl Source {
    /// This worker's part of the fingerprint.
    pub fn share(self) -> WorkerShare {
        match self {
            Source::Flights { fingerprint, .. } => {
                let d = fingerprint.finish();
                WorkerShare {
                    operations: d.operations,
                    digest: d.digest,
                }
            }
            Source::Ycsb { fingerprint, .. } => {
                let d = fingerprint.finish();
                WorkerShare {
                    operations: d.count,
                    digest: d.digest.to_vec(),
                }
            }
            Source::Custom { fingerprint, .. } => {
                let (operations, digest) = fingerprint.finish();
                WorkerShare {
                    operations,
                    digest: digest.to_vec(),
                }
            }
        }
    }
}

/// Whether `shares` of `workload` can be combined: digests of one version that `workload`
/// has (flights v1 or v2, YCSB's one).
///
/// # Errors
/// A message naming the first share that does not fit.
pub fn check_shares(workload: &str, shares: &[WorkerShare]) -> Result<(), String> {
    let Some(first) = shares.first() else {
        return Ok(());
    };
    let fits = |s: &WorkerShare| {
        if workload == flights::VERSION {
            FingerprintVersion::of_digest(&s.digest).is_some()
                && s.digest.len() == first.digest.len()
        } else {
            s.digest.len() == 32
        }
    };
    match shares.iter().position(|s| !fits(s)) {
        None => Ok(()),
        Some(w) => Err(format!(
            "worker {w}'s fingerprint share has a {}-byte digest, which does not fit the other \
             workers' {workload} shares",
            shares[w].digest.len()
        )),
    }
}

/// The traffic fingerprint of a phase of `workload` (`flights/v1`, `ycsb/...`, `custom/v1`)
/// from every worker's share, in global worker order; flights' in the version of the shares'
/// digests; custom's by its own rule (docs/specs/custom.md §7).
///
/// # Panics
/// Shares that [`check_shares`] refuses.
pub fn fingerprint_of(workload: &str, shares: &[WorkerShare]) -> String {
    if let Err(e) = check_shares(workload, shares) {
        panic!("{e}");
    }
    if workload == flights::VERSION {
        let version = shares
            .first()
            .and_then(|s| FingerprintVersion::of_digest(&s.digest))
            .unwrap_or(FingerprintVersion::CURRENT);
        let workers = shares
            .iter()
            .map(|s| flights::WorkerDigest {
                operations: s.operations,
                digest: s.digest.clone(),
            })
            .collect();
        flights::RunFingerprint::from_workers(version, workers).hex()
    } else if workload == custom::VERSION {
        let workers: Vec<(u64, [u8; 32])> = shares
            .iter()
            .map(|s| {
                let digest = s.digest.as_slice().try_into().expect("checked: 32 bytes");
                (s.operations, digest)
            })
            .collect();
        hex::encode(custom::run_fingerprint(&workers))
    } else {
        let workers: Vec<ycsb::WorkerFingerprint> = shares
            .iter()
            .map(|s| ycsb::WorkerFingerprint {
                count: s.operations,
                digest: s.digest.as_slice().try_into().expect("checked: 32 bytes"),
            })
            .collect();
        ycsb::fingerprint::to_hex(&ycsb::fingerprint::run_fingerprint(workload, &workers))
    }
}

/// The traffic fingerprint of a phase from its workers' sources, in worker order.
pub fn fingerprint(workload: &str, sources: Vec<Source>) -> String {
    let shares: Vec<WorkerShare> = sources.into_iter().map(Source::share).collect();
    fingerprint_of(workload, &shares)
}

/// YCSB's status for one call's reply (specs/ycsb.md §6); flights counts only failures.
pub fn judge(call: Option<Call>, reply: &Reply) -> Result<(), ErrorKind> {
    match call {
        Some(Call::Read) if reply.documents == 0 => Err(ErrorKind::NotFound),
        Some(Call::Update) if reply.n == 0 => Err(ErrorKind::NotFound),
        Some(Call::Scan) if reply.documents == 0 => Err(ErrorKind::Other),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ycsb_status_rules_follow_the_binding() {
        let none = Reply { documents: 0, n: 0 };
        let one = Reply { documents: 1, n: 1 };
        assert_eq!(judge(Some(Call::Read), &none), Err(ErrorKind::NotFound));
        assert_eq!(judge(Some(Call::Read), &one), Ok(()));
        assert_eq!(judge(Some(Call::Update), &none), Err(ErrorKind::NotFound));
        assert_eq!(judge(Some(Call::Scan), &none), Err(ErrorKind::Other));
        assert_eq!(judge(Some(Call::Insert), &none), Ok(()));
        assert_eq!(judge(None, &none), Ok(()));
    }
}
