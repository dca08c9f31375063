//! YCSB-compatible workload generator: CoreWorkload A–F as YCSB 0.17.0 generates them, rendered
//! as the commands of YCSB's synchronous `mongodb` binding (specs/ycsb.md). A pure library: it
//! never touches the network or the clock; the runner executes, times and judges the operations.
//! A face over the files below; of the rest of the crate they use only `workload/`'s
//! [`Operation`](crate::workload::Operation), `Command` and `split_write`.
//!
//! # Pieces
//! * [`RawProperties`] → [`Properties`]: presets `workloada`…`workloadf`, `-P` files, `-p`
//!   overrides, YCSB defaults, typed validation ([`PropertyError`]); [`partition`]: thread
//!   quotas and client pod slices.
//! * [`keys`]: `user` + FNV-hashed, zero-padded key numbers.
//! * [`distributions`]: uniform, sequential, Zipfian (Gray et al.), scrambled Zipfian with insert
//!   headroom, latest, hotspot, exponential, exact Zipfian, operation choice.
//! * [`values`]: random field bytes, field lengths, `dataintegrity` values, Java field order.
//! * [`record`]: keys and documents; [`load_document`] regenerates any loaded record (record `k`
//!   of a load is a pure function of seed, `k` and the properties).
//! * [`commands`]: the binding's `find` / `update` / `insert` / `delete` command shapes.
//! * [`Worker`] (with the key choice of a private `chooser` module): one worker's stream of [`YcsbOp`]s for [`YcsbPhase::Load`] or [`YcsbPhase::Run`];
//!   [`SharedState`]: the process-wide insert and acknowledgement counters.
//! * [`fingerprint`]: the traffic fingerprint (record format documented there).
//!
//! # Using it (runner)
//! 1. `let props = Properties::from_raw(&raw)?;` per client pod (with `mongobench.client.count`
//!    pods, [`Properties::load_range`] gives each pod its [`client_slice`] of the load); clamp
//!    workers with [`effective_threads`].
//! 2. Run-phase inserts start at a key the runner picks: YCSB starts at `recordcount`;
//!    mongobench's runner starts after max(`recordcount`, the collection's document count), so
//!    a second D/E run does not collide with the first.
//! 3. `let shared = SharedState::new(start);` once per phase and process; one
//!    `Worker::new(&props, seed, w, workers, phase, &shared)?` per worker.
//! 4. Per worker: `while let Some(op) = worker.next() { execute; worker.complete(); throttle }`.
//!    Each command's status follows its [`Call`]; a [`YcsbOp::buffered`] insert is BATCHED_OK;
//!    a read-modify-write's calls are also measured as `READ` and `UPDATE`. YCSB drops a
//!    worker's unflushed batch remainder; with `mongobench.batch.flush=true` [`Worker::next`]
//!    yields it after the quota, and a runner that stops a worker early takes it with
//!    [`Worker::take_remainder`] to send it at cleanup (timed as INSERT).
//!
//! # Load and run partitioning (§8)
//! * Load: YCSB threads take key numbers from one shared counter. Here worker `w` of `W` inserts
//!   `insertstart + w + j·W` for `j` below its quota: the same key set, in the round-robin order a
//!   fair scheduler gives, but deterministic per worker. Batches are per worker, as in the binding.
//! * Run, `sequential`: likewise strided (`c = w, w + W, …`) instead of one shared counter.
//! * Run-phase inserts and the `latest`/`exponential`/rejection bound `lastAcked`:
//!   - default (`mongobench.txninsert.partition=false`, YCSB): one atomic counter from the insert
//!     start and one acknowledged frontier shared by all workers of the process. Inserts are
//!     acknowledged (failed or not) when the worker finishes the operation. With several workers
//!     and inserts in the mix, keys depend on scheduling, so those workers are not deterministic
//!     ([`Worker::is_deterministic`]); with one worker, or without inserts (A, B, C, F), they are.
//!   - `mongobench.txninsert.partition=true` (§10 proposal, extended to workers): worker `w` of
//!     `W` in pod `i` of `N` owns lane `w·N + i` of `L = N·W` and inserts `start + k·L + lane` (with
//!     one worker per pod this is the spec's `start + k·N + i`). Each worker reads the records
//!     below `start` plus its *own* inserts (its lane is acknowledged in order by construction),
//!     so no key is read before it exists and every worker is deterministic. The cost: `latest`
//!     favours each worker's newest insert instead of the process-wide newest one.
//!
//! # Departures from YCSB (all from §10 or forced by determinism)
//! Seeded per-worker xoshiro256** streams instead of `ThreadLocalRandom` (so compare with YCSB
//! statistically, never by sequence), and one stream per load-phase record (see [`record`]);
//! u64 key numbers and counts; `recordcount` required;
//! `operationcount=0` is unbounded and needs `maxexecutiontime`; unbounded out-of-order
//! acknowledgements instead of the 2^20 ring that kills the process; ζ above 10^6 items by
//! Euler–Maclaurin; unbiased uniform integers instead of `abs(nextLong) % n`.

mod chooser;
pub mod commands;
pub mod distributions;
pub mod error;
pub mod fingerprint;
pub mod java_properties;
pub mod keys;
pub mod ops;
pub mod partition;
pub mod properties;
pub mod raw;
pub mod record;
pub mod rng;
pub mod settings;
pub mod shared;
pub mod values;
pub mod worker;

pub use error::{PropertyError, WorkerError};
pub use fingerprint::{Fingerprint, WorkerDigest, WorkerFingerprint, fingerprint_only};
pub use keys::{fnv64, key_name};
pub use ops::{Call, OpKind, YcsbOp, YcsbPhase};
pub use partition::{client_slice, effective_threads, quota};
pub use properties::Properties;
pub use raw::RawProperties;
pub use record::{RecordBuilder, load_document};
pub use rng::Rng;
pub use settings::{
    Compat, FieldLengthHistogram, FieldLengths, Proportions, RequestDistribution,
    ScanLengthDistribution, ZipfianMode,
};
pub use shared::SharedState;
pub use worker::Worker;
