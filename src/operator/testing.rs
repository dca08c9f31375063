//! Result documents for tests of the operator and of code that drives it (the integration
//! tests write them into result ConfigMaps as a runner would). Built through the real
//! recorder, so every figure agrees with its histograms.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::measure::{LatencyMode, Recorder, Timing};
use crate::result::{
    CellId, CellResult, CellStatus, DatasetInfo, LoopMode, MeasuredPhase, NodeInfo, SCHEMA_VERSION,
    ServerInfo, ServerStats, WorkloadIdentity,
};

/// The workload identity of every document built here: time-bounded runs of one experiment
/// share it, whatever their speed.
pub fn identity() -> WorkloadIdentity {
    WorkloadIdentity::new(BTreeMap::from([
        ("seed".to_string(), "1".to_string()),
        ("workers".to_string(), "16".to_string()),
        ("workload".to_string(), "flights/v1".to_string()),
    ]))
}

/// A complete result of one cell: for each `(label, count, latency µs)`, `count` successful
/// operations of that latency spread evenly over `window_secs` seconds; server CPU of
/// `cpu_us_per_op` µs per operation when given (none, as on FerretDB, otherwise); three
/// members on nodes `<platform>-node-<i>`; the fingerprint is `0123456789abcdef` and the
/// operation count in 8 digits.
#[allow(clippy::too_many_arguments)]
pub fn result(
    benchmark: &str,
    target: &str,
    platform: &str,
    size: &str,
    repetition: u32,
    window_secs: u64,
    ops: &[(&str, u64, u64)],
    cpu_us_per_op: Option<u64>,
) -> CellResult {
    let window = Duration::from_secs(window_secs);
    let t0 = Instant::now();
    let mut recorder = Recorder::new(t0, LatencyMode::ServiceTime);
    let total: u64 = ops.iter().map(|(_, n, _)| n).sum();
    let mut i = 0u64;
    for &(label, count, latency_us) in ops {
        for _ in 0..count {
            let done = t0 + window.mul_f64(i as f64 / total.max(1) as f64);
            let sent = done
                .checked_sub(Duration::from_micros(latency_us))
                .unwrap_or(t0);
            let timing = Timing {
                intended: None,
                sent,
                done: sent + Duration::from_micros(latency_us),
            };
            recorder.record(label, timing, Ok(()));
            i += 1;
        }
    }
    let measured = MeasuredPhase::from_recorder(&recorder, window, LoopMode::Closed, None);
    CellResult {
        schema_version: SCHEMA_VERSION,
        status: CellStatus::Complete,
        cell: CellId {
            benchmark: benchmark.into(),
            run_id: "run".into(),
            workload: "flights/v1".into(),
            target: target.into(),
            platform: platform.into(),
            size: size.into(),
            repetition,
        },
        server: ServerInfo {
            version: Some("8.0.4".into()),
            image: None,
            image_digest: None,
            topology: Some("replicaSet".into()),
            ..ServerInfo::default()
        },
        nodes: (0..3)
            .map(|i| NodeInfo {
                member: format!("{target}-{i}:27017"),
                node_name: Some(format!("{platform}-node-{i}")),
                ..NodeInfo::default()
            })
            .collect(),
        dataset: DatasetInfo {
            seeded_documents: 1000,
            ..DatasetInfo::default()
        },
        measured: Some(measured),
        server_stats: Some(ServerStats {
            members: Vec::new(),
            cpu_us_per_op: cpu_us_per_op.map(|c| c as f64),
            ..ServerStats::default()
        }),
        client_cpu: None,
        explain: BTreeMap::new(),
        fallbacks: Vec::new(),
        // The fingerprint covers the operation counts, as a real one does: runs of different
        // speed differ in it.
        fingerprint: format!("0123456789abcdef{total:08}"),
        identity: identity(),
        invalid_reasons: Vec::new(),
        settle_seconds: Some(0.0),
        worker_operations: vec![total],
        targeting: BTreeMap::new(),
        started_at: None,
        warmup_per_second: Vec::new(),
        warmup_rounds: None,
        client_pods: Vec::new(),
        client_path: Some(crate::result::ClientPath::OwnConnections),
        mongobench_version: None,
        slot: None,
        design: None,
        simultaneous: None,
        canary: None,
        phase_canary: None,
        server_canaries: Vec::new(),
        sweep: None,
        sharding: None,
    }
}
