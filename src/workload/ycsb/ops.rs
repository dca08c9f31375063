//! What a worker produces: the phase, the YCSB operation types and their measurement names, and
//! one generated operation with everything the runner needs to execute, judge and measure it.

use crate::workload::Operation;

/// Which YCSB phase a worker generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbPhase {
    /// `-load`: insert `[insertstart, insertstart + n)`.
    Load,
    /// `-t`: the operation mix over the loaded records.
    Run,
}

/// A YCSB operation type; its [`label`](OpKind::label) is the measurement name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `READ`.
    Read,
    /// `UPDATE`.
    Update,
    /// `INSERT`.
    Insert,
    /// `SCAN`.
    Scan,
    /// `READ-MODIFY-WRITE`: a read then an update of the same key, timed as one operation.
    ReadModifyWrite,
}

impl OpKind {
    /// YCSB's measurement name.
    pub fn label(self) -> &'static str {
        match self {
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Insert => "INSERT",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }

    /// One byte naming the kind in fingerprint records.
    pub fn record_byte(self) -> u8 {
        match self {
            OpKind::Read => b'R',
            OpKind::Update => b'U',
            OpKind::Insert => b'I',
            OpKind::Scan => b'S',
            OpKind::ReadModifyWrite => b'M',
        }
    }
}

/// The binding call one command stands for, which decides its status (§6) and its own
/// measurement name (a read-modify-write's calls are also recorded as `READ` and `UPDATE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    /// A document → OK; none → NOT_FOUND; exception → ERROR.
    Read,
    /// Zero documents → ERROR ("Nothing found in scan for key"); else OK.
    Scan,
    /// Acknowledged and matched 0 → NOT_FOUND; else OK.
    Update,
    /// OK; any write error (duplicate key included) → ERROR.
    Insert,
}

impl Call {
    /// The measurement name of the call.
    pub fn label(self) -> &'static str {
        match self {
            Call::Read => "READ",
            Call::Scan => "SCAN",
            Call::Update => "UPDATE",
            Call::Insert => "INSERT",
        }
    }
}

/// One generated operation with what the runner needs to execute, judge and measure it.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbOp {
    /// The operation type.
    pub kind: OpKind,
    /// Key number targeted (insert: the record inserted; scan: the start key), before hashing.
    pub keynum: u64,
    /// The record key (`_id`) for `keynum`.
    pub key: String,
    /// One entry per command of `operation`, in order.
    pub calls: Vec<Call>,
    /// An insert that went into the batch buffer (`batchsize > 1`): no command runs, the status is
    /// BATCHED_OK with a near-zero latency, as YCSB reports it.
    pub buffered: bool,
    /// Documents written by this operation's insert command (a whole batch when it flushes).
    pub documents: usize,
    /// `dataintegrity=true`: the read reply must be compared with [`deterministic_value`](super::values::deterministic_value)s and
    /// recorded as `VERIFY`.
    pub verify: bool,
    /// Label, database and commands.
    pub operation: Operation,
}
