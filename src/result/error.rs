//! Why a result document was refused, with the line and field where it can say.

use super::cell::CellId;
use super::document::SCHEMA_VERSION;

/// Why a result document was refused.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// Not JSON (or JSON with trailing text): a syntax error at `line`.
    #[error("not JSON: {message}")]
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// The parser's message, without the location.
        message: String,
    },
    /// JSON, but not the shape of a result of this schema version: a field missing, unknown to
    /// a closed type, of the wrong type, or a histogram that does not decode.
    #[error("{}{message}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
    Shape {
        /// 1-based line of the error.
        line: usize,
        /// Field path (`measured.overall.opsPerSec`), empty for the document itself.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The document could not be serialized.
    #[error("cannot serialize the result document: {0}")]
    Json(#[from] serde_json::Error),
    /// `schemaVersion` missing or not an integer.
    #[error("result document has no integer `schemaVersion`; expected {SCHEMA_VERSION}")]
    MissingVersion,
    /// Written by a different schema version.
    #[error(
        "result document has schemaVersion {found}; this mongobench reads schemaVersion \
         {SCHEMA_VERSION}: report it with the mongobench release that wrote it"
    )]
    UnsupportedVersion {
        /// The version found.
        found: u64,
    },
    /// An incomplete result where a valid one is required.
    #[error("result of cell {cell} is incomplete ({reason}): it is not a valid result")]
    Incomplete {
        /// The cell (boxed: keeps `Result<_, ResultError>` small).
        cell: Box<CellId>,
        /// Why it is incomplete.
        reason: String,
    },
    /// A complete result without a measured phase.
    #[error("result of cell {cell} says complete but has no `measured` phase")]
    MissingMeasurement {
        /// The cell (boxed: keeps `Result<_, ResultError>` small).
        cell: Box<CellId>,
    },
    /// An incomplete result without a reason.
    #[error("result of cell {cell} is incomplete but `incompleteReason` is empty")]
    EmptyReason {
        /// The cell (boxed: keeps `Result<_, ResultError>` small).
        cell: Box<CellId>,
    },
}

impl ResultError {
    /// The line the error is on, when it is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ResultError::Syntax { line, .. } | ResultError::Shape { line, .. } => Some(*line),
            _ => None,
        }
    }

    pub(super) fn syntax(e: &serde_json::Error) -> ResultError {
        let mut message = without_location(e);
        if e.is_eof() {
            message = format!("{message}: the text ends inside a value (a truncated file?)");
        }
        ResultError::Syntax {
            line: e.line(),
            message,
        }
    }
}

/// serde_json's message without its ` at line L column C` suffix (the line is kept apart).
pub(super) fn without_location(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}
