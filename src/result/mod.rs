//! The per-cell result document: what the runner writes for one cell (target × platform ×
//! dataset size × repetition) and what every report reads. `docs/results.md` describes each
//! field, its unit and the version policy.
//!
//! Invariants:
//! - `schemaVersion` is [`SCHEMA_VERSION`]; readers refuse any other value rather than guess.
//! - A result is `complete` or `incomplete` with a reason. An incomplete result is never shown
//!   as valid: renderers mark it and comparisons refuse it.
//! - Figures a server does not report are `null`, never 0.
//!
//! Depends only on `measure` below it, and does no I/O. Bottom up: the parts (`cell`,
//! `server`, `dataset`, `client`, `identity`, `histogram_codec`, `measured`), the whole
//! `document`, then `error`, `json` (read, check, write), `fallbacks`, `merge` and `pairs`.
#![deny(missing_docs)]

mod cell;
mod client;
mod dataset;
mod document;
mod error;
mod fallbacks;
mod histogram_codec;
mod identity;
mod json;
mod measured;
mod merge;
mod pairs;
mod server;
mod sharding;
mod sweep;

pub use cell::{CellId, CellStatus, Simultaneous, Slot};
pub use client::{ClientPath, ClientPod, TargetCounts};
pub use dataset::{DatasetDigest, DatasetInfo, RestoreRecord};
pub use document::{CellResult, SCHEMA_VERSION, WarmupRounds};
pub use error::ResultError;
pub use fallbacks::fallbacks;
pub use histogram_codec::{EncodedHistogram, HistogramCodecError};
pub use identity::WorkloadIdentity;
pub use measured::{Histograms, LoopMode, MeasuredPhase, OperationResult};
pub use merge::{MergeError as PhaseMergeError, add_series};
pub use pairs::slot_pairs;
pub use server::{Fallback, MemberStats, NodeInfo, ServerInfo, ServerStats};
pub use sharding::{ShardShare, ShardingRecord};
pub use sweep::{SweepRecord, SweepStep};

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;
