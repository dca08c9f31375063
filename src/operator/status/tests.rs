use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::{
    CellPhase, CellStatus, DatasetSize, MongoBenchmarkSpec, OperationLatency, ResultRef, Verdict,
};
use crate::contract::{CellStep, RunnerStep};
use crate::operator::testing::result;
use crate::plan::PlannedCell;
use crate::result::CellResult;

fn cell(target: &str, size: &str, rep: u32) -> PlannedCell {
    PlannedCell {
        id: crate::plan::cell_id(target, "x86", size, rep),
        target: target.into(),
        platform: "x86".into(),
        size: size.into(),
        dataset: DatasetSize::Documents(1000),
        repetition: rep,
    }
}

#[test]
fn completed_cells_carry_headline_figures_and_their_result() {
    // 900 finds of 100 µs and 100 inserts of 300 µs over 10 s: 100 ops/s.
    let r = result(
        "b",
        "a",
        "x86",
        "1k",
        1,
        10,
        &[("find", 900, 100), ("insert", 100, 300)],
        Some(20),
    );
    let s = cell_status(
        &cell("a", "1k", 1),
        CellOutcome::Completed {
            result: &r,
            config_map: "b-a.x86.1k.r1",
        },
    );
    assert_eq!(s.phase, CellPhase::Completed);
    assert_eq!(s.ops_per_second, Some(100.0));
    assert_eq!(
        s.latencies,
        [
            OperationLatency {
                operation: "find".into(),
                p50_micros: 100,
                p95_micros: 100,
                p99_micros: 100
            },
            OperationLatency {
                operation: "insert".into(),
                p50_micros: 300,
                p95_micros: 300,
                p99_micros: 300
            },
        ]
    );
    // 20 µs of CPU per operation on the one member that reports it.
    assert_eq!(s.server_cpu_micros_per_op, Some(20.0));
    // The first 16 of the fingerprint's 20 characters.
    assert_eq!(s.fingerprint.as_deref(), Some("0123456789abcdef"));
    assert_eq!(
        s.result_ref,
        Some(ResultRef {
            config_map: "b-a.x86.1k.r1".into(),
            key: Some("result.json".into())
        })
    );
    assert_eq!(s.id, "a.x86.1k.r1");
}

#[test]
fn failed_and_pending_cells_have_no_figures() {
    let s = cell_status(
        &cell("a", "1k", 2),
        CellOutcome::Failed {
            message: "boom",
            config_map: None,
        },
    );
    assert_eq!(
        (s.phase, s.message.as_deref()),
        (CellPhase::Failed, Some("boom"))
    );
    assert_eq!(s.ops_per_second, None);
    let s = cell_status(
        &cell("a", "1k", 2),
        CellOutcome::Running {
            activity: Some(&RunnerStep::Cell(CellStep::Measuring)),
        },
    );
    assert_eq!(s.activity.as_deref(), Some("measuring"));
    assert_eq!((s.phase, s.message), (CellPhase::Running, None));
}

#[test]
fn comparisons_and_headline_name_the_largest_significant_change() {
    let spec: MongoBenchmarkSpec = serde_yaml::from_str(
        "targets: [{name: base, external: {uriSecretRef: {name: s}}}, {name: new, external: {uriSecretRef: {name: s}}}]\n\
         platforms: [{name: x86, pricePerNodeHour: 0.36}]\ndataset: {sizes: [1k]}\nworkload: {type: flights}\n",
    )
    .unwrap();
    // Baseline 100, 110 and 105 ops/s; candidate 120, 130 and 125: +20/105 = +19.048 %,
    // Fieller's 95 % interval (mpmath, t₀.₉₇₅(4)) [+7.822 %, +31.668 %]: ±12.621 points
    // at its wider side.
    let mut results = Vec::new();
    for (rep, base, new) in [(1, 1000, 1200), (2, 1100, 1300), (3, 1050, 1250)] {
        for (target, finds) in [("base", base), ("new", new)] {
            results.push(result(
                "b",
                target,
                "x86",
                "1k",
                rep,
                10,
                &[("find", finds, 100)],
                Some(10),
            ));
        }
    }
    let refs: Vec<&CellResult> = results.iter().collect();
    let compared = compare(&spec, &refs);
    let c = comparisons(compared.as_ref());
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].target.as_str(), c[0].baseline.as_str()),
        ("new", "base")
    );
    assert_eq!((c[0].repetitions, c[0].baseline_repetitions), (3, 3));
    // What each side's servers said they are, and nothing to warn about.
    assert_eq!(c[0].server.as_deref(), Some("8.0.4, replica set"));
    assert_eq!(c[0].baseline_server.as_deref(), Some("8.0.4, replica set"));
    assert!(c[0].warnings.is_empty(), "{:?}", c[0].warnings);
    assert_eq!(c[0].throughput_delta_percent, Some(19.048));
    let t = &c[0].metrics[0];
    assert_eq!(t.interval_low_percent, Some(7.822));
    assert_eq!(t.interval_high_percent, Some(31.668));
    assert_eq!(t.interval_confidence_percent, Some(95.0));
    assert_eq!(t.test.as_deref(), Some("welch"));
    // 0.36 per node hour × 3 nodes ÷ (125 ops/s × 3600) × 1e6 = 2.4.
    assert_eq!(c[0].cost_per_million_ops, Some(2.4));
    assert_eq!(c[0].verdict, Some(Verdict::Faster));
    assert!(t.adjusted_p_value.unwrap() < 0.05);
    let line = headline(compared.as_ref(), &[]).unwrap();
    assert_eq!(
        line,
        "new +19.0% [+7.8%, +31.7%] ops/s vs base at 1k, 3 reps, MDE 14.5%"
    );
}

#[test]
fn an_invalid_result_shows_why_and_is_left_out() {
    let mut r = result("b", "a", "x86", "1k", 1, 10, &[("find", 100, 100)], None);
    r.invalid_reasons = vec!["client saturated: 0.97 of 1 core".into()];
    let s = cell_status(
        &cell("a", "1k", 1),
        CellOutcome::Completed {
            result: &r,
            config_map: "b-a.x86.1k.r1",
        },
    );
    assert_eq!(s.phase, CellPhase::Invalid);
    assert_eq!(
        s.message.as_deref(),
        Some("invalid: client saturated: 0.97 of 1 core")
    );
    assert!(s.result_ref.is_some());
}

#[test]
fn single_target_headline_shows_ops_per_platform() {
    let mut cells = Vec::new();
    for (platform, ops) in [("x86", 100.0), ("x86", 120.0), ("arm", 90.0)] {
        cells.push(CellStatus {
            target: "m".into(),
            platform: platform.into(),
            size: "10M".into(),
            phase: CellPhase::Completed,
            ops_per_second: Some(ops),
            ..CellStatus::default()
        });
    }
    assert_eq!(
        headline(None, &cells).unwrap(),
        "m at 10M: x86 110 ops/s, arm 90 ops/s"
    );
    assert_eq!(headline(None, &[]), None);
}

#[test]
fn transition_time_moves_only_when_status_changes() {
    let t0 = Timestamp::from_second(1_000).unwrap();
    let t1 = Timestamp::from_second(2_000).unwrap();
    let first = condition(&[], "Ready", false, "Running", "1/2".into(), Some(1), t0);
    assert_eq!(first.last_transition_time, Time(t0));
    let same = condition(
        std::slice::from_ref(&first),
        "Ready",
        false,
        "Running",
        "2/2".into(),
        Some(1),
        t1,
    );
    assert_eq!(same.last_transition_time, Time(t0));
    let flipped = condition(
        &[first],
        "Ready",
        true,
        "Completed",
        String::new(),
        Some(1),
        t1,
    );
    assert_eq!(flipped.last_transition_time, Time(t1));
    // Sub-second precision is dropped, as the API server does.
    let precise = Timestamp::new(3_000, 123_456_789).unwrap();
    assert_eq!(
        now_seconds(precise),
        Time(Timestamp::from_second(3_000).unwrap())
    );
}
