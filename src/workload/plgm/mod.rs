//! Import of plgm's workload files (its collection and query JSON) into a custom workload
//! document (docs/specs/custom.md §8). Pure: text in, YAML text out, no files, no clock.
//!
//! plgm (percona-load-generator-mongodb) draws documents with faker providers and picks
//! operations by fixed percentages; the import maps both onto custom workload generators and
//! operation weights and lists every approximation in `notes` (and in the document's header).
//! The JSON is walked as a `serde_json::Value` rather than deserialized into structs so that
//! field order survives (plgm's Go maps lose it; a compound index must not) and every error
//! names its path.
//!
//! This file is the folder's face: it declares the files and re-exports; none of them uses it.
//! Bottom layer first:
//!
//! * `error`: [`ImportError`] and [`FileKind`]; `cx`: the import's state (generators, notes) and
//!   the reader of JSON objects;
//! * `fields`: collections, field types → generators, indexes, shard key;
//! * `queries`: queries → operations, plgm's fallbacks for empty buckets, the weights;
//! * `document`: [`import`], the document assembled from both, with its header.

mod cx;
mod document;
mod error;
mod fields;
mod queries;
#[cfg(test)]
mod tests;

pub use document::{Imported, import};
pub use error::{FileKind, ImportError};
