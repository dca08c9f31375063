//! Result documents for tests, built through the real recorder so that every figure is
//! consistent with its histograms.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::*;
use crate::measure::server::{
    CacheCounters, CacheGauges, CollStatsSizes, ExplainSummary, HostInfoFigures, ProcessCounters,
    ServerStatusDelta,
};
use crate::measure::{ErrorKind, LatencyMode, Recorder, Timing};

/// One operation to record: label, latency (µs), outcome.
pub(crate) type Op<'a> = (&'a str, u64, Result<(), ErrorKind>);

/// The workload identity of the test study with `overrides` applied.
pub(crate) fn identity(overrides: &[(&str, &str)]) -> WorkloadIdentity {
    let mut parameters: BTreeMap<String, String> =
        [("seed", "1"), ("workers", "16"), ("workload", "flights/v1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    for (k, v) in overrides {
        parameters.insert(k.to_string(), v.to_string());
    }
    WorkloadIdentity::new(parameters)
}

/// The identity of a test cell.
pub(crate) fn cell(target: &str, platform: &str, size: &str, repetition: u32) -> CellId {
    CellId {
        benchmark: "study".into(),
        run_id: "r1".into(),
        workload: "flights/v1".into(),
        target: target.into(),
        platform: platform.into(),
        size: size.into(),
        repetition,
    }
}

/// A complete result with `ops` recorded in order, spread evenly over `window` (operation i
/// completes at i·window/n), and `server_cpu_us` of server CPU on one member (none when
/// `None`, as on FerretDB).
pub(crate) fn result_from(
    cell: CellId,
    window: Duration,
    ops: &[Op<'_>],
    server_cpu_us: Option<u64>,
) -> CellResult {
    let t0 = Instant::now();
    let mut recorder = Recorder::new(t0, LatencyMode::ServiceTime);
    let n = ops.len().max(1) as u32;
    for (i, &(label, latency_us, outcome)) in ops.iter().enumerate() {
        let done = t0 + window * i as u32 / n;
        let sent = done
            .checked_sub(Duration::from_micros(latency_us))
            .unwrap_or(t0);
        recorder.record(
            label,
            Timing {
                intended: None,
                sent,
                done: sent + Duration::from_micros(latency_us),
            },
            outcome,
        );
    }
    let measured = MeasuredPhase::from_recorder(&recorder, window, LoopMode::Closed, None);
    with_measured(cell, measured, server_cpu_us)
}

/// A complete result around an already measured phase, with `server_cpu_us` of server CPU on
/// the first of three members (no CPU figures at all when `None`).
pub(crate) fn with_measured(
    cell: CellId,
    measured: MeasuredPhase,
    server_cpu_us: Option<u64>,
) -> CellResult {
    let window = measured.duration();
    let operations = measured.overall.completed;
    let host = HostInfoFigures {
        num_cores: Some(4),
        cpu_arch: Some("x86_64".into()),
        ..HostInfoFigures::default()
    };
    let member = |i: usize| format!("{}-{i}.svc:27017", cell.target);
    let delta = |cpu: Option<u64>| ServerStatusDelta {
        elapsed_ms: Some(u64::try_from(window.as_millis()).unwrap()),
        process_counters: ProcessCounters {
            user_time_us: cpu.map(|c| c * 3 / 4),
            system_time_us: cpu.map(|c| c - c * 3 / 4),
            ..ProcessCounters::default()
        },
        cache_counters: CacheCounters {
            pages_read_into_cache: cpu.map(|_| 0),
            ..CacheCounters::default()
        },
        cache_after: CacheGauges {
            bytes_in_cache: cpu.map(|_| 1 << 30),
            maximum_bytes_configured: cpu.map(|_| 4 << 30),
            tracked_dirty_bytes: None,
        },
        ..ServerStatusDelta::default()
    };
    let members: Vec<MemberFigures<'_>> = (0..3)
        .map(|i| {
            let cpu = server_cpu_us.map(|c| if i == 0 { c } else { 0 });
            MemberFigures::reported(member(i), delta(cpu), Some(&host))
        })
        .collect();
    let server_stats = ServerStats::compute(members, window, operations);
    CellResult {
        schema_version: SCHEMA_VERSION,
        status: CellStatus::Complete,
        server: ServerInfo {
            version: Some("8.0.4".into()),
            image: Some(format!("registry.example/{}:latest", cell.target)),
            image_digest: Some("sha256:0123abcd".into()),
            topology: Some("replicaSet".into()),
            ..ServerInfo::default()
        },
        nodes: (0..3)
            .map(|i| NodeInfo {
                member: member(i),
                node_name: Some(format!("{}-node-{i}", cell.platform)),
                zone: Some("europe-west4-a".into()),
                instance_type: Some("n2-standard-4".into()),
                cpu_platform: Some("intel-icelake".into()),
                architecture: Some("amd64".into()),
                host: host.clone(),
            })
            .collect(),
        dataset: DatasetInfo {
            seeded_documents: 1_000_000,
            namespace: Some("bench.flights".into()),
            coll_stats: CollStatsSizes {
                count: Some(1_000_000),
                size: Some(1_168_000_000),
                ..CollStatsSizes::default()
            },
            digest: Some(DatasetDigest {
                method: "dbHash".into(),
                value: "0123456789abcdef0123456789abcdef".into(),
                documents: 1_000_000,
            }),
            restores: Vec::new(),
        },
        measured: Some(measured),
        server_stats: Some(server_stats),
        client_cpu: None,
        explain: BTreeMap::from([(
            "find".to_string(),
            ExplainSummary {
                stages: vec!["FETCH".into(), "IXSCAN".into()],
                indexes: vec!["flight_id_1".into()],
                keys_examined: Some(1),
                docs_examined: Some(1),
                n_returned: Some(1),
                execution_time_ms: Some(0),
            },
        )]),
        fallbacks: Vec::new(),
        // Time-bounded runs of different speed send different operation counts, so their
        // fingerprints differ while the identity stays the same.
        fingerprint: format!("fp-{operations}"),
        identity: identity(&[]),
        invalid_reasons: Vec::new(),
        settle_seconds: Some(0.0),
        worker_operations: vec![operations],
        targeting: Default::default(),
        started_at: None,
        warmup_per_second: Vec::new(),
        warmup_rounds: None,
        client_pods: Vec::new(),
        client_path: Some(crate::result::ClientPath::OwnConnections),
        mongobench_version: None,
        cell,
        slot: None,
        design: None,
        simultaneous: None,
        canary: None,
        phase_canary: None,
        server_canaries: Vec::new(),
        server_phase_canaries: Vec::new(),
        sweep: None,
        sharding: None,
    }
}

/// A complete 10-second result of `target` doing `ops_per_sec` (9 finds of 100–140 µs for
/// every insert of 200 µs), with 50 µs of server CPU per operation unless the target is
/// `ferretdb`.
pub(crate) fn sample_result(target: &str, repetition: u32, ops_per_sec: f64) -> CellResult {
    let n = (ops_per_sec * 10.0) as usize;
    let ops: Vec<Op<'static>> = (0..n)
        .map(|i| {
            if i % 10 == 9 {
                ("insert", 200, Ok(()))
            } else {
                ("find", 100 + (i % 5) as u64 * 10, Ok(()))
            }
        })
        .collect();
    let cpu = (target != "ferretdb").then_some(50 * n as u64);
    result_from(
        cell(target, "n2", "1M", repetition),
        Duration::from_secs(10),
        &ops,
        cpu,
    )
}

/// [`sample_result`] of `target` in slot `slot` (its repetition too), at place 0 of the slot.
pub(crate) fn slotted_result(target: &str, slot: u32, ops_per_sec: f64) -> CellResult {
    let mut r = sample_result(target, slot, ops_per_sec);
    r.slot = Some(Slot {
        number: slot,
        position: 0,
    });
    r
}

/// A cell of `target` in simultaneous slot `slot` measured for `seconds` whole seconds with
/// the per-second completions `series` (one more, partial, second after them), on `side`.
pub(crate) fn simultaneous_result(
    target: &str,
    slot: u32,
    series: &[u64],
    side: Option<u32>,
) -> CellResult {
    let mut r = slotted_result(target, slot, 1.0);
    let m = r.measured.as_mut().unwrap();
    m.duration_us = series.len() as u64 * 1_000_000 + 2_000;
    m.overall.per_second = series.to_vec();
    m.overall.per_second.push(3);
    r.simultaneous = Some(crate::result::Simultaneous {
        window_start_unix_ms: 1_700_000_000_000 + u64::from(slot) * 60_000,
        side,
        side_cpus: side.map(|s| s.to_string()),
    });
    r
}

/// A two-shard distribution with a 22.5 % skew and one chunk moved, flagged as `flags` say.
pub(crate) fn sharding_record(flags: &[&str]) -> crate::result::ShardingRecord {
    let share = |shard: &str, documents, chunks| crate::result::ShardShare {
        shard: shard.into(),
        documents,
        bytes: documents * 2876,
        chunks,
    };
    crate::result::ShardingRecord {
        topology: "sharded: 2 shards × 3 members, 3 config servers, 2 mongos".into(),
        namespace: "airline.flights".into(),
        before: vec![share("s-0", 500_000, 4), share("s-1", 500_000, 4)],
        after: vec![share("s-0", 612_400, 4), share("s-1", 387_600, 3)],
        skew_percent: 22.48,
        max_skew_percent: 25.0,
        chunks_moved: 1,
        flags: flags.iter().map(|f| (*f).to_owned()).collect(),
    }
}
