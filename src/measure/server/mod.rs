//! Server figures: pure readers of the replies the runner fetches (`serverStatus` and
//! `hostInfo` from every member before and after the measured phase, `collStats`, `explain`),
//! of the operating system's files that give a server's CPU time where it does not report it,
//! the deltas, server CPU per operation, and the bottleneck regime.
//!
//! Every figure is optional. A server that does not report a section (FerretDB has no
//! `extra_info`, `opcounters` or `wiredTiger`) yields `None`, never zero, and everything derived
//! from it (CPU per operation, regime) is `None` too rather than a made-up number.
//!
//! Depends on nothing else in the crate: `fields` reads typed fields out of a reply, each
//! other file reads one kind of reply, `proc_files` reads `/proc` and cgroup files, `os_cpu`
//! sits on it, and `regime` sits on `host_info` and `server_status`.

mod coll_stats;
mod explain;
mod fields;
mod host_info;
mod os_cpu;
pub mod proc_files;
mod regime;
mod server_status;

pub use coll_stats::CollStatsSizes;
pub use explain::ExplainSummary;
pub use fields::ServerFigureError;
pub use host_info::HostInfoFigures;
pub use os_cpu::{
    CPU_SOURCES_FLOOR_US, CPU_SOURCES_TOLERANCE, CpuAnswer, CpuDisagreement, CpuSource, FoundBy,
    OsCpuDelta, OsCpuDeltaError, OsCpuSample, disagreement,
};
pub use regime::{
    CPU_BOUND_UTILIZATION, IO_BOUND_PAGES_READ_PER_OP, MemberLoad, Regime, classify, cpu_us_per_op,
};
pub use server_status::{
    CacheCounters, CacheGauges, OpCounters, ProcessCounters, ServerStatusDelta, ServerStatusFigures,
};

/// A recorded reply from `tests/fixtures/server/`, parsed from MongoDB Extended JSON.
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> mongodb::bson::Document {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/server")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("fixture {} is not JSON: {e}", path.display()));
    match mongodb::bson::Bson::try_from(json) {
        Ok(mongodb::bson::Bson::Document(doc)) => doc,
        other => panic!(
            "fixture {} is not an Extended JSON document: {other:?}",
            path.display()
        ),
    }
}
