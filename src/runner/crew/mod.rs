//! Several client processes running one runner's work together (`client.pods`, or
//! `mongobench run --client-processes N`). Process 0, the coordinator, runs the benchmark loop
//! as a single process would; at the steps whose work is split it writes an [`Order`] on a
//! shared [`Board`], does its own share, and collects every other process's reply:
//!
//! - `seed`: each process loads its share of the documents being added; the coordinator
//!   checks the count and takes the digest once, after all replied;
//! - `warmup`: each runs its workers' warm-up from a common start time, keeping what they
//!   changed;
//! - `measure`: each runs its workers' measured phase from a common start time and replies with
//!   its partial result (histograms, counts, CPU, fingerprint shares), keeping what its workers
//!   changed;
//! - `restore`: one process at a time (restores rewrite documents by deleting and inserting
//!   them, and two processes' workers may have changed the same one) restores what its
//!   workers changed in the last phase, after the coordinator took the server's figures; the
//!   coordinator then verifies the digest.
//!
//! The board is a directory (local processes) or a ConfigMap (the pods of an Indexed Job);
//! each key is written by one process only, so writers never race. A process that does not
//! reply in time, or replies with an error, is named in the error, and the coordinator's cell
//! ends incomplete: a result of fewer processes is never passed off as whole.
//!
//! The bottom of the runner: depends on no other part of it (what a process does on an order
//! is `runner/follower.rs`'s).

mod board;
mod coordinator;
mod member;
mod orders;
mod split;
#[cfg(test)]
mod tests;

pub use board::{Board, ConfigMapBoard, JOB_UID_ENV};
pub use coordinator::{Crew, Helpers, Issued, grace};
pub use member::Member;
pub use orders::{Order, Task, instant_of, skew_ms};
pub use split::{COMPLETION_INDEX_ENV, ClientSlice};
