//! End to end, a load sweep: examples/sweep-knee.yaml, scaled to this machine (one external
//! target, SecantusDB behind a proxy that holds every reply 10 ms, so that two workers cannot
//! complete more than about 170 operations per second whatever else the machine does), goes
//! from apply to Completed through the real control plane, once with one client pod and once
//! with two. Status holds each cell's curve and knee and the `knees` printer column; each
//! result holds at least four steps and its knee; and the two pods' knee is the one pod's,
//! within the interval of the one pod's knees widened by the search's precision (the search
//! only resolves the knee to that).
//!
//! It runs in a test binary of its own so that no other test's runner shares the machine
//! with its measurement.
mod faults_common;
mod operator_common;
mod support;

use std::path::Path;
use std::time::Duration;

use mongobench::result::CellResult;
use mongobench::verdict::stats::Summary;
use operator_common as common;
use serde_json::json;
use support::proxy::DelayProxy;

const REPETITIONS: u32 = 3;
/// `findMax.precisionPercent` of the test's search.
const PRECISION: f64 = 0.10;

/// The example, with its targets, sizes and search scaled to the test and `pods` client pods.
fn benchmark(name: &str, pods: u32) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweep-knee.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut doc: serde_json::Value = serde_yaml::from_str(&text).unwrap();
    doc["metadata"]["name"] = json!(name);
    let spec = &mut doc["spec"];
    spec["targets"] =
        json!([{"name": "delayed", "external": {"uriSecretRef": {"name": "db", "key": "uri"}}}]);
    spec["baseline"] = json!("delayed");
    spec["client"] =
        json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}, "pods": pods});
    spec["dataset"]["sizes"] = json!(["300"]);
    spec["repetitions"] = json!(REPETITIONS);
    let workload = &mut spec["workload"];
    workload["workers"] = json!(2);
    workload["warmup"] = json!("1s");
    workload["sweep"] = json!({
        "findMax": {"start": 40, "growth": 2, "precisionPercent": PRECISION * 100.0, "maxSteps": 10},
        "latency": {"p99": "100ms"},
        "stepDuration": "1s"
    });
    doc
}

/// Each cell's knee, after checking what status and the result hold of the sweep.
async fn knees(env: &operator_common::TestEnv, bench: &str, pods: u32) -> Vec<f64> {
    let (status, results) =
        faults_common::ends_whole(env, bench, REPETITIONS as usize, Duration::from_secs(400)).await;
    let knees = status.knees.clone().expect("the knees column");
    assert!(
        knees.starts_with("delayed ") && knees.ends_with(" ops/s at p99 ≤ 100ms"),
        "{knees}"
    );
    for cell in &status.cells {
        let sweep = cell.sweep.as_ref().expect("a sweep in the cell's status");
        assert_eq!(sweep.goal.as_deref(), Some("p99 ≤ 100ms"));
        assert_eq!(sweep.knee_ops_per_second, cell.ops_per_second, "{cell:?}");
        assert!(sweep.bounded && sweep.steps.len() >= 4, "{sweep:?}");
    }
    let mut out = Vec::new();
    for r in &results {
        let pods_recorded = if pods > 1 { pods as usize } else { 0 };
        assert_eq!(r.client_pods.len(), pods_recorded, "{}", r.cell);
        out.push(knee(r));
    }
    eprintln!("{bench} ({pods} pods): knees {out:?}");
    out
}

fn knee(r: &CellResult) -> f64 {
    let sweep = r.sweep.as_ref().expect("a sweep record");
    assert!(sweep.steps.len() >= 4, "{sweep:?}");
    let knee = sweep.knee_step().expect("a knee");
    assert_eq!(
        r.measured.as_ref().unwrap().overall.ops_per_sec,
        knee.ops_per_sec
    );
    knee.ops_per_sec
}

#[tokio::test]
async fn the_example_sweep_finds_the_same_knee_with_one_client_pod_and_with_two() {
    let env = common::setup("e2e-sweep").await;
    let server = support::private_secantus("e2e-sweep");
    // SecantusDB names itself a replica set's primary at its own port: without
    // directConnection the client would follow that name around the proxy.
    let proxy = DelayProxy::start(
        &format!("{}?directConnection=true", server.uri),
        Duration::from_millis(10),
    );
    let _kubelet = faults_common::db_and_kubelet(&env, &proxy.uri).await;
    let operator = common::start(&env, common::options(&env.namespace));

    common::apply(&env, &benchmark("one-pod", 1)).await;
    let one = knees(&env, "one-pod", 1).await;
    common::apply(&env, &benchmark("two-pods", 2)).await;
    let two = knees(&env, "two-pods", 2).await;

    let one = Summary::of(&one).unwrap();
    let two = Summary::of(&two).unwrap();
    let (lo, hi) = one.ci95().expect("an interval over three knees");
    let slack = one.mean * PRECISION;
    assert!(
        lo - slack <= two.mean && two.mean <= hi + slack,
        "two pods' mean knee {:.1} outside one pod's [{lo:.1}, {hi:.1}] ± {slack:.1}",
        two.mean
    );
    operator.kill().await;
}
