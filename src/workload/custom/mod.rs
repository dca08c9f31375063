//! Custom workloads as data (`custom/v1`, docs/specs/custom.md §2–§7): a YAML or JSON document
//! names collections, the generators that fill them, operation templates and phases; this module
//! checks it once and then generates documents, commands and fingerprints from it. Pure like the
//! rest of `workload`: no I/O, no clock, every value a function of seeds and indexes.
//!
//! [`parse`](fn@parse) does every check of the spec up front, so that a template the server
//! would refuse for a reason visible in the document is refused before a cell starts.
//!
//! This file is the folder's face: it declares the files, re-exports and forwards
//! [`parse`](fn@parse); none of them uses it. Bottom layer first:
//!
//! * `read`: [`SpecError`] and the typed readers of the YAML tree, each error at its path;
//!   `zipf`: the zipfian ranks;
//! * `model`: the checked data (collections, indexes, phases, operation faces, generators) and
//!   the key tags;
//! * `generator`: values of generators; `template`: command shapes; `digest`: the fingerprint
//!   (§7);
//! * `workload`: [`Workload`], its documents, indexes, counts and explain samples;
//! * `parse`, `parse_gen`, `parse_ops`: the document, its generators, its operations;
//!   `worker`: one worker's operation stream (§5, §6).

mod digest;
mod generator;
mod model;
mod parse;
mod parse_gen;
mod parse_ops;
mod read;
mod template;
mod worker;
mod workload;
mod zipf;

#[cfg(test)]
mod tests_parse;
#[cfg(test)]
mod tests_run;
#[cfg(test)]
mod tests_strings;

use std::time::Duration;

pub use digest::{WorkerDigest, run_fingerprint};
pub use model::{Collection, CustomPhase, OperationSpec, PhaseLength, ShardKey, VERSION};
pub use read::SpecError;
pub use worker::{Generated, Worker};
pub use workload::Workload;

/// Parses and checks a workload document (YAML or JSON text). `duration` reads a phase's
/// `duration` (the crate's duration grammar; `None` = invalid).
pub fn parse(text: &str, duration: fn(&str) -> Option<Duration>) -> Result<Workload, SpecError> {
    parse::parse(text, duration)
}
