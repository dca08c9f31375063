//! Reaching and watching a target: connecting and learning what it is (`connect.rs`; the URI
//! as messages show it, `uri.rs`),
//! initiating a provisioned replica set (`rs_init.rs`) or sharded cluster (`sharding.rs`,
//! which also shards a collection and reads its distribution), waiting for replication to settle and
//! noticing elections (`replication.rs`), the members' server figures (`stats.rs`, with each
//! member's CPU time from the operating system: `process_cpu.rs` reads this machine's `/proc`,
//! `server_cpu.rs` has the runner or the canary beside a member read it), the canaries beside
//! the members sampled during the measured phase (`phase_canaries.rs`) and the query plans of
//! sampled operations (`explain.rs`).
//!
//! Uses `wire/` (which path the workers will take) and the runner's `deadline.rs` and
//! `outcome.rs`.

mod connect;
mod explain;
mod local_process;
mod phase_canaries;
pub mod process_cpu;
pub mod replication;
pub mod rs_init;
pub mod server_cpu;
pub mod sharding;
mod stats;
mod uri;

pub use connect::{
    ConnectError, ConnectedTarget, MONGOS, ServerInfo, Sharding, client_options, compressor,
    connect, connect_with, journal_option, server_info,
};
pub use explain::{explain_all, flights_samples, ycsb_samples};
pub use local_process::process_of_uri;
pub use phase_canaries::ServerPhaseSampler;
pub use replication::{ReplicaState, SETTLE_TIMEOUT, Settled, settle};
pub use server_cpu::{CpuReader, OsCpuWatch, ask_canary};
pub use stats::{Members, StatsError, coll_stats};
pub use uri::{UriProblem, check_uri, redact_uri};
