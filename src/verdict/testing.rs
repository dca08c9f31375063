//! Comparison inputs for tests: two targets, three repetitions each, built through the real
//! recorder.

use std::collections::BTreeMap;
use std::time::Duration;

use super::CompareOptions;
use crate::result::CellResult;
use crate::result::testing::{cell, result_from};

/// A 1-second cell of `n` finds of `latency_us` each, `cpu_per_op` µs of server CPU per
/// operation (none if `None`), on platform n2, size 1M, the study's identity.
pub(crate) fn res(
    target: &str,
    rep: u32,
    n: usize,
    latency_us: u64,
    cpu_per_op: Option<u64>,
) -> CellResult {
    let ops = vec![("find", latency_us, Ok(())); n];
    let mut r = result_from(
        cell(target, "n2", "1M", rep),
        Duration::from_secs(1),
        &ops,
        cpu_per_op.map(|c| c * n as u64),
    );
    if let Some((distribution, version)) = study_server(target) {
        r.server.distribution = Some(distribution.into());
        r.server.version = Some(version.into());
    }
    r
}

/// The servers of the study's two targets as they would name themselves; other targets keep
/// the fixture's version and no distribution.
fn study_server(target: &str) -> Option<(&'static str, &'static str)> {
    match target {
        "psmdb-8.0" => Some(("Percona Server for MongoDB", "8.0.12-4")),
        "mongo-9.0" => Some(("MongoDB", "9.0.1")),
        _ => None,
    }
}

pub(crate) fn study() -> Vec<CellResult> {
    vec![
        res("psmdb-8.0", 1, 1000, 200, Some(50)),
        res("mongo-9.0", 1, 1100, 180, Some(45)),
        res("psmdb-8.0", 2, 1020, 210, Some(52)),
        res("mongo-9.0", 2, 1120, 190, Some(47)),
        res("psmdb-8.0", 3, 980, 190, Some(48)),
        res("mongo-9.0", 3, 1080, 170, Some(43)),
    ]
}

pub(crate) fn options() -> CompareOptions {
    CompareOptions {
        baseline: "psmdb-8.0".into(),
        price_per_node_hour: BTreeMap::from([("n2".to_string(), 0.5)]),
        metrics: Vec::new(),
    }
}
