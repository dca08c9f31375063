//! The import's public error and the file it names: the bottom of `plgm`, used by every other
//! file of it.

use std::fmt;

/// Which of the two input files an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Collections,
    Queries,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Collections => "collections",
            FileKind::Queries => "queries",
        })
    }
}

/// Why plgm's files cannot be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// Not JSON at all.
    #[error("the {kind} file is not valid JSON: {message} at line {line}, column {column}")]
    Syntax {
        kind: FileKind,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON that plgm refuses or that a custom workload cannot express; `path` starts with
    /// `collections` or `queries` (`queries[1].operation`).
    #[error("{path}: {message}")]
    Invalid {
        kind: FileKind,
        path: String,
        message: String,
    },
}

impl ImportError {
    /// The file the error is about.
    pub fn kind(&self) -> FileKind {
        match self {
            ImportError::Syntax { kind, .. } | ImportError::Invalid { kind, .. } => *kind,
        }
    }
}
