//! End to end, the evidence: a MongoBenchmark with two external targets, a MongoDB-wire
//! server reached directly and the same server behind a proxy that holds every reply for a
//! fixed delay, goes from apply to Completed through the real control plane. The platform's
//! targets are all external, so the operator starts ONE runner Job for both; the real
//! scheduler binds it to a client node, where the testenv kubelet harness runs its command
//! with the project's binary, both URIs from their Secrets, and its ServiceAccount's token.
//! The runner interleaves the repetitions in slots, each in the order its seed draws, and
//! keeps adding slots past the planned three for a precision goal it cannot reach until
//! `maxRepetitions`, each cell warming up in rounds until settled
//! (`workload.warmupUntilSettled`); the operator counts the added slots as cells, waits for the
//! runner, and
//! says in the `Precision` condition that the goal was not reached. The verdict in status is
//! that the delayed target is slower, paired by slot, with a 95 % interval that excludes zero.
//!
//! It runs in a test binary of its own so that no other test's runner shares the machine
//! with its measurement.
mod operator_common;
mod support;

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use mongobench::api::{CellPhase, StatusPhase, Verdict};
use mongobench::result::CellResult;
use operator_common as common;
use serde_json::json;
use support::proxy::DelayProxy;

/// Held on every reply of the delayed target. One worker in a closed loop pays it on every
/// operation; on the 2-core development machine, with FerretDB answering a flights operation
/// on 10 documents in about 60 ms, it measured -20.0 % ±6.8 % and -17.8 % ±5.6 % (adjusted p
/// 0.0002 and 0.0005). With two workers FerretDB's CPU is the limit and a delay hides in it.
const DELAY: Duration = Duration::from_millis(20);
/// Planned repetitions per side.
const PLANNED: u32 = 3;
/// `precision.maxRepetitions`: a goal of 0.1 % is out of reach, so the runner adds slots up to
/// this many, and the verdict rests on five pairs.
const REPETITIONS: u32 = 5;

#[tokio::test]
async fn a_delayed_target_is_found_slower_by_one_interleaved_runner_from_apply_to_completed() {
    let env = common::setup("e2e-verdict").await;
    // A FerretDB of the test's own (flights uses the fixed `airline.flights` namespace);
    // both targets reach the same server, one of them through the proxy.
    let server = support::private_mongo("e2e-verdict");
    let delayed = DelayProxy::start(&server.uri, DELAY);
    common::uri_secret(&env, "direct", &server.uri).await;
    common::uri_secret(&env, "delayed", &delayed.uri).await;
    let kubelet = testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    );
    let _operator = common::start(&env, common::options(&env.namespace));
    let bench = "verdict";
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [
                    {"name": "direct", "external": {"uriSecretRef": {"name": "direct"}}},
                    {"name": "delayed", "external": {"uriSecretRef": {"name": "delayed"}}}
                ],
                "platforms": [{"name": "local"}],
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "dataset": {"sizes": ["10"]},
                "workload": {"type": "flights", "workers": 1, "duration": "5s", "warmup": "7s", "seed": 5,
                             "warmupUntilSettled": {"maxRounds": 2, "tolerancePercent": 50}},
                "repetitions": PLANNED,
                "precision": {"mdePercent": 0.1, "maxRepetitions": REPETITIONS},
                "cleanupPolicy": "Retain"
            }
        }),
    )
    .await;

    let status = common::status_until(
        &env,
        bench,
        Duration::from_secs(400),
        "the benchmark to complete",
        |s| matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed)),
    )
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    assert_eq!(status.progress.as_deref(), Some("10/10"), "{status:#?}");
    for cell in &status.cells {
        assert_eq!(
            cell.phase,
            CellPhase::Completed,
            "{}: {:?}",
            cell.id,
            cell.message
        );
    }

    // One runner for both targets, started once.
    let runner = common::platform_runner(bench, "local");
    assert_eq!(status.runners.len(), 1);
    assert!(status.runners[0].interleaved);
    assert_eq!(status.runners[0].reason, "AllExternal");
    assert_eq!(status.runners[0].jobs, [runner]);
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(started.len(), 1, "runner pods started: {started:?}");

    // The repetitions ran in slots: in the order their results were written, each slot holds
    // both targets, in the order the workload's seed draws for it.
    let mut results: Vec<(String, CellResult)> =
        Api::<ConfigMap>::namespaced(env.client.clone(), &env.namespace)
            .list(&ListParams::default().labels("mongobench.io/benchmark=verdict"))
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|cm| {
                let created = cm.metadata.creation_timestamp.clone()?.0.to_string();
                let json = cm.data?.remove("result.json")?;
                Some((created, CellResult::from_json(&json).unwrap()))
            })
            .collect();
    assert_eq!(results.len(), 2 * REPETITIONS as usize);
    // The warm-up ran in rounds until settled, as the spec asked, in the runner the plan drove.
    for (_, r) in &results {
        let rounds = r.warmup_rounds.expect("a warm-up in rounds records them");
        assert!((1..=2).contains(&rounds.rounds), "{}: {rounds:?}", r.cell);
        assert_eq!(
            r.identity.parameters["run.warmupUntilSettled"],
            "at most 2 rounds, within 50%"
        );
    }
    results.sort_by_key(|(created, r)| {
        let slot = r.slot.expect("an interleaved cell records its slot");
        (created.clone(), slot.number, slot.position)
    });
    let names = ["direct", "delayed"];
    let order: Vec<String> = results
        .iter()
        .map(|(_, r)| format!("{} r{}", r.cell.target, r.cell.repetition))
        .collect();
    let expected: Vec<String> = (1..=REPETITIONS)
        .flat_map(|rep| {
            mongobench::contract::slot_order::order(5, 0, rep, 2)
                .into_iter()
                .map(move |i| format!("{} r{rep}", names[i]))
        })
        .collect();
    assert_eq!(order, expected);
    let precision = status
        .condition("Precision")
        .expect("a Precision condition");
    assert_eq!(
        (precision.status.as_str(), precision.reason.as_str()),
        ("False", "PrecisionNotReached"),
        "{precision:?}"
    );
    assert!(
        precision
            .message
            .contains(&format!("after {REPETITIONS} reps (delayed vs direct")),
        "{precision:?}"
    );
    for (_, r) in &results {
        eprintln!(
            "{}: {:.1} ops/s",
            r.cell,
            r.measured.as_ref().unwrap().overall.ops_per_sec
        );
    }

    // The verdict: slower, with an interval that excludes zero, and the headline says it.
    assert_eq!(status.comparisons.len(), 1, "{:#?}", status.comparisons);
    let c = &status.comparisons[0];
    eprintln!("comparison: {c:?}\nheadline: {:?}", status.headline);
    assert_eq!(
        (c.target.as_str(), c.baseline.as_str()),
        ("delayed", "direct")
    );
    assert_eq!(
        (c.repetitions, c.baseline_repetitions),
        (REPETITIONS, REPETITIONS)
    );
    assert_eq!(c.verdict, Some(Verdict::Slower));
    assert_eq!(c.paired_slots, Some(REPETITIONS));
    let t = &c.metrics[0];
    assert_eq!(t.metric, mongobench::api::VerdictMetric::Throughput);
    assert_eq!(t.verdict, Some(Verdict::Slower));
    assert_eq!(
        t.interval_confidence_percent,
        Some(95.0),
        "a family of one test"
    );
    let (low, high) = (
        t.interval_low_percent.unwrap(),
        t.interval_high_percent.unwrap(),
    );
    assert!(low < high && high < 0.0, "interval [{low}, {high}]");
    // "delayed -X.X% [L.L%, H.H%] ops/s vs direct at 10, 5 reps, MDE Z.Z%". The headline
    // rounds the unrounded figures and status keeps them to a few decimals, so each number is
    // compared within its last printed digit rather than reformatted (55.4497 prints 55.4;
    // 55.45, 55.5).
    let delta = c.throughput_delta_percent.unwrap();
    let headline = status.headline.clone().unwrap();
    let mde = t.minimum_detectable_effect_percent.unwrap();
    let numbers: Vec<f64> = headline
        .strip_prefix("delayed ")
        .and_then(|rest| rest.split_once("% ["))
        .and_then(|(d, rest)| {
            let (shown_low, rest) = rest.split_once("%, ")?;
            let (shown_high, rest) = rest.split_once("%] ops/s vs direct at 10, 5 reps, MDE ")?;
            let m = rest.strip_suffix('%')?;
            [d, shown_low, shown_high, m]
                .iter()
                .map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_else(|| panic!("headline {headline:?}"));
    for (shown, stored) in numbers.iter().zip([delta, low, high, mde]) {
        assert!(
            (shown - stored).abs() < 0.06,
            "headline {headline:?}: {shown} against {stored}"
        );
    }
}
