//! Deterministic workload generators: `flights/v1` (specs/flights.md) and YCSB core workloads A–F
//! (specs/ycsb.md). Generators never touch the network and never read the clock: every operation is
//! a pure function of (seed, worker index, sequence), which is what makes the traffic fingerprint
//! meaningful. The runner executes the [`Operation`]s they produce.
//!
//! [`rng`] holds the shared randomness primitives; each workload lives in its own module and
//! produces [`Operation`]s.

pub mod ycsb;

use mongodb::bson::Document;

pub mod flights;
pub mod rng;
// Further workloads register here, one `pub mod` line each.

/// One logical operation as the runner sends it and times it: one or more database commands,
/// executed in order against `database`, measured as a single latency sample under `label`.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// Measurement label (the operation type a histogram is kept for), e.g. `find`, `READ`.
    pub label: &'static str,
    /// The database the commands run against.
    pub database: &'static str,
    /// Complete database command documents (`{find: ...}`, `{update: ...}`, ...) without the
    /// driver-added fields (`$db`, `lsid`, read/write concern).
    pub commands: Vec<Command>,
}

/// One database command plus how its reply must be consumed.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The command document, its name first (`{find: "flights", filter: ...}`).
    pub body: Document,
    /// The reply opens a cursor that must be drained with getMore (aggregate, multi-batch find).
    pub drain_cursor: bool,
    /// The commands of this operation run inside one transaction (flights §5.7).
    pub in_transaction: bool,
}
