//! What can go wrong when an operation is recorded or a run is fingerprinted again.

use crate::workload::flights::WorkerError;
use thiserror::Error;

/// An operation that is not a flights/v1 shape, so it has no record.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RecordError {
    /// The operation has no commands.
    #[error("operation {label:?} has no commands")]
    Empty {
        /// The operation's label.
        label: &'static str,
    },
    /// Several commands outside a transaction.
    #[error("operation {label:?} has {count} commands outside a transaction; expected one")]
    SeveralCommands {
        /// The operation's label.
        label: &'static str,
        /// How many.
        count: usize,
    },
    /// A command the fingerprint does not know.
    #[error(
        "command {0:?} is not a flights/v1 command (expected find, update, delete, insert or aggregate)"
    )]
    UnknownCommand(String),
    /// A known command whose filter, update or pipeline is none of §5's shapes (v2 records the
    /// values of a known shape).
    #[error("{command} command with {found} is none of the flights/v1 shapes")]
    UnknownShape {
        /// The command name (`transaction` for the statements of one).
        command: &'static str,
        /// What was found instead.
        found: String,
    },
    /// A known command without a field its record needs.
    #[error("{command} command lacks {field:?} or it has the wrong type")]
    MissingField {
        /// The command name.
        command: &'static str,
        /// The field.
        field: &'static str,
    },
}

/// Errors of [`fingerprint_only`](super::fingerprint_only).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FingerprintError {
    /// One worker count per worker is needed.
    #[error("{counts} per-worker operation counts given for workers = {workers}")]
    CountMismatch {
        /// `workers`.
        workers: u32,
        /// How many counts were given.
        counts: usize,
    },
    /// A worker could not be built.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// A generated operation had no record (a generator bug).
    #[error(transparent)]
    Record(#[from] RecordError),
}
