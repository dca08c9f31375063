//! The Grafana dashboard in examples/ parses and queries only metrics the operator exports,
//! with labels those metrics have.

use std::collections::BTreeSet;

use mongobench::api::{
    CellPhase, CellStatus, Comparison, MongoBenchmarkStatus, OperationLatency, StatusPhase, Verdict,
};
use mongobench::contract::Activity;
use mongobench::operator::metrics::Metrics;
use regex::Regex;
use serde_json::Value;

/// Every metric family filled once, so that each exports a sample.
fn exported() -> String {
    let m = Metrics::new();
    m.reconciled(std::time::Duration::from_millis(5));
    m.failed("api");
    m.wrote("status");
    m.set_leader(true);
    let cell = CellStatus {
        target: "b".into(),
        platform: "x86".into(),
        size: "1M".into(),
        repetition: 1,
        phase: CellPhase::Completed,
        ops_per_second: Some(10.0),
        latencies: vec![OperationLatency {
            operation: "find".into(),
            ..OperationLatency::default()
        }],
        server_cpu_micros_per_op: Some(1.0),
        ..CellStatus::default()
    };
    let status = MongoBenchmarkStatus {
        phase: Some(StatusPhase::Completed),
        cells: vec![cell],
        comparisons: vec![Comparison {
            target: "b".into(),
            baseline: "a".into(),
            platform: "x86".into(),
            size: "1M".into(),
            verdict: Some(Verdict::Faster),
            ..Comparison::default()
        }],
        ..MongoBenchmarkStatus::default()
    };
    m.set_benchmark("ns", "bench", Some(&status));
    let running = MongoBenchmarkStatus {
        phase: Some(StatusPhase::Running),
        cells: vec![CellStatus {
            id: "b.x86.1m.r1".into(),
            target: "b".into(),
            platform: "x86".into(),
            size: "1M".into(),
            repetition: 1,
            phase: CellPhase::Running,
            activity: Some("measuring".into()),
            ..CellStatus::default()
        }],
        ..MongoBenchmarkStatus::default()
    };
    let activities = std::collections::BTreeMap::from([(
        "x86".to_owned(),
        Activity {
            target: "b".into(),
            size: "1M".into(),
            cell: Some("b.x86.1m.r1".into()),
            phase: "measuring".parse().unwrap(),
            ops_per_second: Some(900),
        },
    )]);
    m.set_running("ns", "running", &running, &activities);
    m.encode()
}

/// The labels a Prometheus pod or service scrape (and the Prometheus Operator's) adds to every
/// series: a metric's own label of one of these names would be renamed `exported_<name>`.
const SCRAPE_LABELS: [&str; 7] = [
    "namespace",
    "pod",
    "container",
    "instance",
    "job",
    "service",
    "endpoint",
];

#[test]
fn no_exported_label_clashes_with_what_a_pod_scrape_adds() {
    let metrics = exported();
    let label_name = Regex::new(r#"[{,](\w+)=""#).unwrap();
    for line in metrics.lines().filter(|l| !l.starts_with('#')) {
        for c in label_name.captures_iter(line) {
            assert!(
                !SCRAPE_LABELS.contains(&&c[1]),
                "{line}: the label {} clashes with the one a scrape adds",
                &c[1]
            );
        }
    }
}

/// Every string under the keys `expr` and `definition`.
fn queries(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr" | "definition", Value::String(s)) => out.push(s.clone()),
                    _ => queries(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| queries(v, out)),
        _ => {}
    }
}

#[test]
fn the_dashboard_queries_only_exported_metrics_and_their_labels() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/grafana/mongobench-dashboard.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let dashboard: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"));
    let mut exprs = Vec::new();
    queries(&dashboard, &mut exprs);
    assert!(!exprs.is_empty(), "{path} has no queries");

    // Exported series: name -> label names.
    let metrics = exported();
    let sample = Regex::new(r"^(mongobench_\w+)(?:\{([^}]*)\})? ").unwrap();
    let label_name = Regex::new(r#"(\w+)=""#).unwrap();
    let mut series: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in metrics.lines() {
        if let Some(c) = sample.captures(line) {
            let labels = c.get(2).map_or("", |m| m.as_str());
            let names = label_name
                .captures_iter(labels)
                .map(|l| l[1].to_owned())
                .collect();
            series.push((c[1].to_owned(), names));
        }
    }

    let used = Regex::new(r"(mongobench_\w+)(\{[^}]*\})?").unwrap();
    let selector_label = Regex::new(r#"(\w+)!?=~?""#).unwrap();
    let mut referenced = BTreeSet::new();
    for expr in &exprs {
        for c in used.captures_iter(expr) {
            let name = &c[1];
            let labels: Vec<String> = c
                .get(2)
                .map(|m| {
                    selector_label
                        .captures_iter(m.as_str())
                        .map(|l| l[1].to_owned())
                        .collect()
                })
                .unwrap_or_default();
            let (_, have) = series.iter().find(|(n, _)| n == name).unwrap_or_else(|| {
                panic!("{path} queries {name}, which is not exported:\n{metrics}")
            });
            for l in &labels {
                assert!(
                    have.contains(l),
                    "{name} has no label {l} (it has {have:?})"
                );
            }
            referenced.insert(name.to_owned());
        }
        if let Some(rest) = expr.strip_prefix("label_values(") {
            let label = rest
                .trim_end_matches(')')
                .rsplit(',')
                .next()
                .unwrap()
                .trim();
            let name = rest.split(',').next().unwrap().trim();
            let (_, have) = series.iter().find(|(n, _)| n == name).unwrap();
            assert!(have.contains(label), "{name} has no label {label}");
        }
    }
    for gauge in [
        "mongobench_result_ops_per_second",
        "mongobench_result_p99_microseconds",
        "mongobench_result_server_cpu_microseconds_per_op",
        "mongobench_result_verdict",
        "mongobench_running_cell_ops_per_second",
    ] {
        assert!(referenced.contains(gauge), "{path} does not show {gauge}");
    }
}
