//! The rules of `spec.workload.sweep` and `spec.workload.warmupUntilSettled`, each violation
//! with its exact text.

use serde_json::json;

use super::tests::{errors, with};

fn workload(w: serde_json::Value) -> Vec<String> {
    errors(&with("/spec/workload", w))
}

#[test]
fn a_search_and_a_ladder_with_a_goal_on_an_operation_the_workload_sends_are_valid() {
    let search = json!({"type": "flights", "sweep": {
        "findMax": {"start": 1000, "growth": 1.5, "precisionPercent": 2},
        "latency": {"p99": "10ms", "op": "find"}, "stepDuration": "30s"}});
    assert_eq!(workload(search), Vec::<String>::new());
    let ladder = json!({"type": "ycsb", "ycsb": {"workload": "f"},
        "sweep": {"rates": [1000, 2000], "latency": {"p999": "50ms", "op": "readModifyWrite"}}});
    assert_eq!(workload(ladder), Vec::<String>::new());
}

#[test]
fn bad_sweeps_are_refused_naming_the_field() {
    let bad = json!({"type": "flights", "duration": "1m", "targetOpsPerSecond": 500, "sweep": {
        "rates": [1000, 2000, 1000], "findMax": {"start": 10, "growth": 1.0},
        "latency": {"p99": "10ms", "op": "scan"}, "stepDuration": "0"}});
    assert_eq!(
        workload(bad),
        [
            "spec.workload.sweep: a sweep's steps last sweep.stepDuration; set neither duration nor operations",
            "spec.workload.sweep: a sweep sets each step's rate; leave targetOpsPerSecond unset",
            "spec.workload.sweep: set rates, workers or findMax, exactly one",
            "spec.workload.sweep.rates[2]: 1000 is already in the ladder: each rate once",
            "spec.workload.sweep.findMax.growth: must be above 1 and at most 10, got 1",
            "spec.workload.sweep.stepDuration: must be longer than 0, got \"0\"",
            "spec.workload.sweep.latency.op: \"scan\" is not an operation this workload sends; expected any or one of: find, update, delete, insert",
        ]
    );
    let crowd = json!({"type": "flights", "workers": 8, "sweep": {"workers": [4, 2, 4]}});
    assert_eq!(
        workload(crowd),
        [
            "spec.workload.sweep.workers: a ladder of workers sets each step's workers; leave spec.workload.workers unset",
            "spec.workload.sweep.workers[2]: 4 is already in the ladder: each count once",
        ]
    );
    let mut pods = with(
        "/spec/workload",
        json!({"type": "flights", "sweep": {"workers": [1, 4]}}),
    );
    pods["spec"]["client"] = json!({"pods": 2});
    assert_eq!(
        errors(&pods),
        [
            "spec.client.pods: 2 pods for 1 workers: each client pod runs at least one worker, so pods must not exceed spec.workload.workers (or the fewest of sweep.workers)"
        ]
    );
    let negative = json!({"type": "flights", "sweep": {"rates": [-5]}});
    assert_eq!(
        workload(negative),
        ["spec.workload.sweep.rates[0]: must be at least 1, got -5"]
    );
    let two = json!({"type": "ycsb", "ycsb": {"workload": "c"}, "sweep": {
        "findMax": {"start": 100}, "latency": {"p50": "1ms", "p99": "0", "op": "update"}}});
    assert_eq!(
        workload(two),
        [
            "spec.workload.sweep.latency: set exactly one of p50, p95, p99, p999",
            "spec.workload.sweep.latency.op: \"update\" is not an operation this workload sends; expected any or one of: read",
        ]
    );
}

#[test]
fn a_warmup_in_rounds_needs_rounds_the_criterion_can_judge() {
    let good = json!({"type": "flights", "warmup": "10s",
        "warmupUntilSettled": {"maxRounds": 4, "tolerancePercent": 2.5}});
    assert_eq!(workload(good), Vec::<String>::new());
    // The default warm-up, 1 minute, is long enough.
    assert_eq!(
        workload(json!({"type": "flights", "warmupUntilSettled": {}})),
        Vec::<String>::new()
    );
    assert_eq!(
        workload(json!({"type": "flights", "warmup": "5s", "warmupUntilSettled": {}})),
        [
            "spec.workload.warmupUntilSettled: each round lasts warmup, \"5s\" here; the settle criterion judges rounds of at least 7s (a middle and a last third of 2 whole seconds each)"
        ]
    );
    assert_eq!(
        workload(json!({"type": "flights", "warmupOperations": 5000, "warmupUntilSettled": {}})),
        [
            "spec.workload.warmupUntilSettled: rounds last warmup, a duration; leave warmupOperations unset"
        ]
    );
    assert_eq!(
        workload(
            json!({"type": "flights", "warmupUntilSettled": {"maxRounds": 1, "tolerancePercent": 0}})
        ),
        [
            "spec.workload.warmupUntilSettled.maxRounds: must be at least 2, got 1",
            "spec.workload.warmupUntilSettled.tolerancePercent: must be at least 0.1, got 0",
        ]
    );
}
