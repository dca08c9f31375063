//! Errors of property parsing and validation, and of building a worker from valid properties.

use thiserror::Error;

use super::java_properties::SyntaxError;

/// Why a property set cannot drive the generator. Every message names the property and the
/// expected form.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PropertyError {
    /// Properties text that does not parse.
    #[error("{source_name}: {error}")]
    Syntax {
        /// File name or other label of the text.
        source_name: String,
        /// The syntax error.
        error: SyntaxError,
    },
    /// A preset other than `a`..`f` / `workloada`..`workloadf`.
    #[error(
        "unknown YCSB workload preset {name:?}: expected one of a, b, c, d, e, f (or workloada..workloadf)"
    )]
    UnknownPreset {
        /// The requested name.
        name: String,
    },
    /// A `-p` argument without `=`.
    #[error("property override {argument:?}: expected name=value")]
    Override {
        /// The argument as given.
        argument: String,
    },
    /// A value of the wrong form.
    #[error("property {property}={value:?}: expected {expected}")]
    Invalid {
        /// Property name.
        property: String,
        /// Value as given.
        value: String,
        /// The accepted form.
        expected: String,
    },
    /// A property that must be present (and non-zero).
    #[error("property {property} is required: {reason}")]
    Required {
        /// Property name.
        property: &'static str,
        /// Why it is needed.
        reason: &'static str,
    },
    /// YCSB's "Invalid combination of insertstart, insertcount and recordcount."
    #[error(
        "Invalid combination of insertstart, insertcount and recordcount: insertstart={insertstart} + insertcount={insertcount} must not exceed recordcount={recordcount}"
    )]
    InsertRange {
        /// `insertstart`.
        insertstart: u64,
        /// `insertcount` (explicit or defaulted).
        insertcount: u64,
        /// `recordcount`.
        recordcount: u64,
    },
    /// Every operation proportion is ≤ 0.
    #[error(
        "readproportion, updateproportion, insertproportion, scanproportion and readmodifywriteproportion are all <= 0: at least one must be positive"
    )]
    NoOperation,
    /// Two properties that cannot be combined.
    #[error("property {property}: {reason}")]
    Conflict {
        /// The property that has to change.
        property: &'static str,
        /// What conflicts and what to do.
        reason: String,
    },
    /// A property mongobench no longer has.
    #[error("property {property} is not supported: {reason}")]
    Removed {
        /// Property name.
        property: &'static str,
        /// What replaced it and what to do.
        reason: &'static str,
    },
    /// The field length histogram file is unreadable or malformed.
    #[error("fieldlengthhistogram={path:?}: {reason}")]
    Histogram {
        /// The file.
        path: String,
        /// What is wrong and the expected form.
        reason: String,
    },
}

/// Why a worker cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorkerError {
    /// `worker_index` not below `workers`.
    #[error("worker index {index} is out of range for {workers} workers")]
    WorkerIndex {
        /// The index given.
        index: u32,
        /// The worker count.
        workers: u32,
    },
    /// A run without an operation count and without a time limit would never end.
    #[error("operationcount=0 means an unbounded run, which needs maxexecutiontime > 0 (seconds)")]
    Unbounded,
    /// The mix reads records but no chosen key can exist.
    #[error(
        "the operation mix reads records but no key of the chosen range [{first}, …] is at or below the last acknowledged key ({last:?}): check recordcount and insertstart (load the collection first)"
    )]
    NothingToRead {
        /// First key number the request distribution can produce.
        first: u64,
        /// The last acknowledged key number (`None`: none).
        last: Option<u64>,
    },
    /// The request distribution has no key to choose from.
    #[error("insertcount=0 leaves requestdistribution no key to choose")]
    EmptyKeyRange,
}
