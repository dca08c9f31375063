//! The rules of `spec.verdict`, each violation with its exact text.

use serde_json::json;

use super::tests::{errors, with};

#[test]
fn verdict_metrics_are_known_and_named_once() {
    let metrics = |m: serde_json::Value| with("/spec/verdict", json!({"metrics": m}));
    assert_eq!(
        errors(&metrics(json!([
            "throughput",
            "cpuPerOperation",
            "p99Latency"
        ]))),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&metrics(json!([
            "cpuPerOperation",
            "throughput",
            "cpuPerOperation"
        ]))),
        ["spec.verdict.metrics[2]: cpuPerOperation is named twice: each metric gets one verdict"]
    );
    let unknown = errors(&metrics(json!(["latency"])));
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(
        unknown[0].starts_with("spec.verdict.metrics[0]: "),
        "{unknown:?}"
    );
}
