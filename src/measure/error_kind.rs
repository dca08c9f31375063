//! What went wrong with a failed operation, in the few kinds a benchmark reader cares about, and
//! the classifier from driver errors and server error codes to those kinds.

use std::fmt;

use mongodb::error::{Error as DriverError, ErrorKind as DriverErrorKind, WriteFailure};
use serde::{Deserialize, Serialize};

/// Why an operation failed. YCSB reports `NOT_FOUND` apart from every other failure (`ERROR`);
/// mongobench splits the latter further so a run full of duplicate keys or timeouts is told apart
/// from a slow one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// The operation ran but found nothing to read, update or delete. The driver never raises
    /// this: the runner decides it from the reply (no document, `n: 0`).
    NotFound,
    /// A write hit a unique index (server code 11000 and its legacy variants).
    DuplicateKey,
    /// The operation reached a server but did not finish in time (socket timeout, `maxTimeMS`,
    /// write concern timeout).
    Timeout,
    /// The server could not be reached or the connection broke (I/O errors, pool cleared, no
    /// server selectable, DNS).
    Network,
    /// Anything else (server errors with other codes, protocol or serialization errors).
    Other,
}

impl ErrorKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [ErrorKind; 5] = [
        ErrorKind::NotFound,
        ErrorKind::DuplicateKey,
        ErrorKind::Timeout,
        ErrorKind::Network,
        ErrorKind::Other,
    ];

    /// Kind of a server error code (`code` of a command error, write error or write concern
    /// error).
    pub fn from_server_code(code: i32) -> ErrorKind {
        match code {
            // DuplicateKey, and the legacy codes older servers used for the same condition.
            11000 | 11001 | 12582 => ErrorKind::DuplicateKey,
            // ExceededTimeLimit (262), MaxTimeMSExpired (50), NetworkTimeout (89),
            // WriteConcernTimeout (64), NetworkInterfaceExceededTimeLimit (202).
            50 | 64 | 89 | 202 | 262 => ErrorKind::Timeout,
            // HostUnreachable (6), HostNotFound (7), SocketException (9001).
            6 | 7 | 9001 => ErrorKind::Network,
            _ => ErrorKind::Other,
        }
    }

    /// Kind of a driver error.
    ///
    /// Server selection failures count as [`ErrorKind::Network`]: the driver waited for a
    /// reachable server and found none, which is an unreachable deployment rather than a slow
    /// operation. For bulk writes the first write error decides, then the write concern error.
    pub fn of_driver_error(error: &DriverError) -> ErrorKind {
        match error.kind.as_ref() {
            DriverErrorKind::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                ErrorKind::Timeout
            }
            DriverErrorKind::Io(_)
            | DriverErrorKind::ConnectionPoolCleared { .. }
            | DriverErrorKind::ServerSelection { .. }
            | DriverErrorKind::DnsResolve { .. } => ErrorKind::Network,
            DriverErrorKind::Command(command) => ErrorKind::from_server_code(command.code),
            DriverErrorKind::Write(WriteFailure::WriteError(write)) => {
                ErrorKind::from_server_code(write.code)
            }
            DriverErrorKind::Write(WriteFailure::WriteConcernError(concern)) => {
                ErrorKind::from_server_code(concern.code)
            }
            DriverErrorKind::InsertMany(insert) => {
                let first_write = insert
                    .write_errors
                    .as_ref()
                    .and_then(|errors| errors.first())
                    .map(|e| e.code);
                let concern = insert.write_concern_error.as_ref().map(|e| e.code);
                first_write
                    .or(concern)
                    .map_or(ErrorKind::Other, ErrorKind::from_server_code)
            }
            DriverErrorKind::BulkWrite(bulk) => {
                // write_errors is keyed by the model index: the lowest index failed first.
                let first_write = bulk
                    .write_errors
                    .iter()
                    .min_by_key(|(index, _)| **index)
                    .map(|(_, e)| e.code);
                let concern = bulk.write_concern_errors.first().map(|e| e.code);
                first_write
                    .or(concern)
                    .map_or(ErrorKind::Other, ErrorKind::from_server_code)
            }
            _ => ErrorKind::Other,
        }
    }

    /// The camelCase name used in result documents and CSV headers.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "notFound",
            ErrorKind::DuplicateKey => "duplicateKey",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Network => "network",
            ErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<&DriverError> for ErrorKind {
    fn from(error: &DriverError) -> Self {
        ErrorKind::of_driver_error(error)
    }
}

/// Failed operations counted by [`ErrorKind`].
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct ErrorCounts {
    /// Operations that found nothing.
    pub not_found: u64,
    /// Duplicate-key write failures.
    pub duplicate_key: u64,
    /// Timeouts.
    pub timeout: u64,
    /// Network failures.
    pub network: u64,
    /// Every other failure.
    pub other: u64,
}

impl ErrorCounts {
    /// Counts one failure of `kind`.
    pub fn count(&mut self, kind: ErrorKind) {
        *self.slot(kind) += 1;
    }

    /// The count for `kind`.
    pub fn get(&self, kind: ErrorKind) -> u64 {
        match kind {
            ErrorKind::NotFound => self.not_found,
            ErrorKind::DuplicateKey => self.duplicate_key,
            ErrorKind::Timeout => self.timeout,
            ErrorKind::Network => self.network,
            ErrorKind::Other => self.other,
        }
    }

    /// All failures.
    pub fn total(&self) -> u64 {
        ErrorKind::ALL.iter().map(|&k| self.get(k)).sum()
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &ErrorCounts) {
        for kind in ErrorKind::ALL {
            *self.slot(kind) += other.get(kind);
        }
    }

    fn slot(&mut self, kind: ErrorKind) -> &mut u64 {
        match kind {
            ErrorKind::NotFound => &mut self.not_found,
            ErrorKind::DuplicateKey => &mut self.duplicate_key,
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::Network => &mut self.network,
            ErrorKind::Other => &mut self.other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mongodb::bson::{doc, from_document};
    use mongodb::error::{CommandError, WriteError};
    use std::sync::Arc;

    fn io_error(kind: std::io::ErrorKind) -> DriverError {
        DriverError::from(DriverErrorKind::Io(Arc::new(std::io::Error::from(kind))))
    }

    #[test]
    fn write_error_with_code_11000_is_a_duplicate_key() {
        // WriteError is non-exhaustive: build it the way the driver does, from a server reply.
        let write: WriteError = from_document(doc! {
            "code": 11000,
            "codeName": "DuplicateKey",
            "errmsg": "E11000 duplicate key error collection: ycsb.usertable index: _id_",
        })
        .unwrap();
        let error = DriverError::from(DriverErrorKind::Write(WriteFailure::WriteError(write)));
        assert_eq!(ErrorKind::of_driver_error(&error), ErrorKind::DuplicateKey);
    }

    #[test]
    fn command_error_max_time_ms_expired_is_a_timeout() {
        let command: CommandError = from_document(doc! {
            "code": 50, "codeName": "MaxTimeMSExpired", "errmsg": "operation exceeded time limit",
        })
        .unwrap();
        let error = DriverError::from(DriverErrorKind::Command(command));
        assert_eq!(ErrorKind::of_driver_error(&error), ErrorKind::Timeout);
    }

    #[test]
    fn command_error_with_an_unlisted_code_is_other() {
        let command: CommandError =
            from_document(doc! { "code": 59, "codeName": "CommandNotFound", "errmsg": "no" })
                .unwrap();
        let error = DriverError::from(DriverErrorKind::Command(command));
        assert_eq!(ErrorKind::of_driver_error(&error), ErrorKind::Other);
    }

    #[test]
    fn io_timeout_is_a_timeout_and_other_io_errors_are_network() {
        assert_eq!(
            ErrorKind::of_driver_error(&io_error(std::io::ErrorKind::TimedOut)),
            ErrorKind::Timeout
        );
        assert_eq!(
            ErrorKind::of_driver_error(&io_error(std::io::ErrorKind::ConnectionRefused)),
            ErrorKind::Network
        );
        assert_eq!(
            ErrorKind::of_driver_error(&io_error(std::io::ErrorKind::ConnectionReset)),
            ErrorKind::Network
        );
    }

    #[test]
    fn server_codes_map_to_kinds() {
        assert_eq!(ErrorKind::from_server_code(11000), ErrorKind::DuplicateKey);
        assert_eq!(ErrorKind::from_server_code(11001), ErrorKind::DuplicateKey);
        assert_eq!(ErrorKind::from_server_code(262), ErrorKind::Timeout);
        assert_eq!(ErrorKind::from_server_code(64), ErrorKind::Timeout);
        assert_eq!(ErrorKind::from_server_code(6), ErrorKind::Network);
        assert_eq!(ErrorKind::from_server_code(9001), ErrorKind::Network);
        assert_eq!(ErrorKind::from_server_code(2), ErrorKind::Other);
    }

    #[test]
    fn counts_add_up_per_kind_and_in_total() {
        let mut a = ErrorCounts::default();
        a.count(ErrorKind::NotFound);
        a.count(ErrorKind::NotFound);
        a.count(ErrorKind::Timeout);
        let mut b = ErrorCounts::default();
        b.count(ErrorKind::NotFound);
        b.count(ErrorKind::Other);
        a.add(&b);
        assert_eq!(
            a,
            ErrorCounts {
                not_found: 3,
                duplicate_key: 0,
                timeout: 1,
                network: 0,
                other: 1
            }
        );
        assert_eq!(a.total(), 5);
    }
}
