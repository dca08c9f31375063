//! What a sent command came back with, whichever path sent it (the driver in `send/execute.rs`,
//! a worker's own connection in `wire/lane.rs`): the reply's counts, or the failure by kind.
//! Below both senders; depends only on `deadline.rs` and `measure/`.

/// How one operation ended, as far as the benchmark counts it.
#[derive(Debug)]
pub enum Failure {
    /// The driver or the server refused a command.
    Driver(mongodb::error::Error),
    /// A write command answered `ok: 1` with `writeErrors` (the first one's code and message)
    /// or, on a worker's own connection, a `writeConcernError`.
    Write { code: i32, message: String },
    /// No reply within the run's operation timeout (`ExecOptions::timeout`); the request was abandoned (its connection is
    /// closed), so the server may or may not have applied it.
    TimedOut(std::time::Duration),
    /// A worker's own connection failed (`wire`).
    Connection {
        address: String,
        error: std::io::Error,
    },
    /// The server answered a command sent on a worker's own connection with `ok: 0`.
    Command {
        code: i32,
        name: String,
        message: String,
    },
}

impl Failure {
    /// How the benchmark counts it.
    pub fn kind(&self) -> crate::measure::ErrorKind {
        use crate::measure::ErrorKind;
        match self {
            Failure::Driver(e) => ErrorKind::of_driver_error(e),
            Failure::Write { code, .. } => ErrorKind::from_server_code(*code),
            Failure::TimedOut(_) => ErrorKind::Timeout,
            Failure::Connection { error, .. } if error.kind() == std::io::ErrorKind::TimedOut => {
                ErrorKind::Timeout
            }
            Failure::Connection { .. } => ErrorKind::Network,
            Failure::Command { code, .. } => ErrorKind::from_server_code(*code),
        }
    }

    /// The server error code, when there is one (11000 is a duplicate key).
    pub fn code(&self) -> Option<i32> {
        match self {
            Failure::Write { code, .. } | Failure::Command { code, .. } => Some(*code),
            Failure::Driver(e) => driver_code(e),
            Failure::TimedOut(_) | Failure::Connection { .. } => None,
        }
    }
}

/// Whether a server error `code` refuses the command itself rather than reporting a condition
/// of the moment: a malformed or unsupported command, which sending it again would only repeat.
/// BadValue (2), FailedToParse (9), TypeMismatch (14), ConflictingUpdateOperators (40),
/// DollarPrefixedFieldName (52), CommandNotFound (59), InvalidOptions (72), InvalidNamespace (73),
/// CommandNotSupported (115), InvalidPipelineOperator (168), NotImplemented (238), and the
/// aggregation parser's location codes for an unknown stage, operator or accumulator.
pub fn refuses_command(code: i32) -> bool {
    matches!(
        code,
        2 | 9
            | 14
            | 40
            | 52
            | 59
            | 72
            | 73
            | 115
            | 168
            | 238
            | 15952
            | 15955
            | 16410
            | 17276
            | 28664
            | 31249
            | 40323
            | 40324
    )
}

/// The server error code carried by a driver error, if any.
pub fn driver_code(e: &mongodb::error::Error) -> Option<i32> {
    use mongodb::error::{ErrorKind, WriteFailure};
    match &*e.kind {
        ErrorKind::Command(c) => Some(c.code),
        ErrorKind::Write(WriteFailure::WriteError(w)) => Some(w.code),
        ErrorKind::Write(WriteFailure::WriteConcernError(w)) => Some(w.code),
        ErrorKind::InsertMany(i) => i.write_errors.as_ref()?.first().map(|w| w.code),
        _ => None,
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Driver(e) => f.write_str(&super::deadline::describe(e)),
            Failure::Write { code, message } => write!(f, "write error {code}: {message}"),
            Failure::TimedOut(limit) => {
                f.write_str(&super::deadline::timed_out("operation", *limit))
            }
            Failure::Connection { address, error } => write!(f, "connection to {address}: {error}"),
            Failure::Command {
                code,
                name,
                message,
            } => write!(f, "command failed with error {code} ({name}): {message}"),
        }
    }
}

/// What the operation returned that the benchmark looks at.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// Documents returned by finds and aggregates (all batches).
    pub documents: u64,
    /// `n` of writes: matched for updates, removed for deletes, inserted for inserts.
    pub n: u64,
}

/// Two replies of one operation's commands added up.
pub(crate) fn add(a: Reply, b: Reply) -> Reply {
    Reply {
        documents: a.documents + b.documents,
        n: a.n + b.n,
    }
}
