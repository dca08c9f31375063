//! End to end, simultaneous cells: a MongoBenchmark with `parallelism: Simultaneous` and two
//! external targets, a MongoDB-wire server reached directly and a second one of the same kind
//! behind a proxy that holds every reply for a fixed delay, goes from apply to Completed
//! through the real control plane. (Two servers, not one: flights writes the fixed
//! `airline.flights` namespace, and two targets writing one server's at the same time
//! collide.) The operator starts one runner Job for both targets; the testenv kubelet harness
//! runs it with the project's binary. In every slot the two cells meet and measure
//! over one common window, so their results carry the same window start; the comparison in
//! status is made from the ratio over those common seconds, carries the simultaneous
//! diagnostics, says that the targets kept their places (no crossover on Kubernetes with
//! external targets), and calls the delayed target slower.
//!
//! A test binary of its own, so that no other test's runner shares the machine with it.
mod operator_common;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mongobench::api::{CellPhase, Parallelism, StatusPhase, Verdict};
use operator_common as common;
use serde_json::json;
use support::proxy::DelayProxy;

/// Held on every reply of the delayed target, which one worker in a closed loop pays on every
/// operation: on the 2-core development machine it measured -93.9 % and -94.3 % against the
/// direct server (intervals [-97.4, -85.8] and [-96.7, -90.2]).
const DELAY: Duration = Duration::from_millis(20);
/// Slots: at 4 the paired test on the per-slot ratios keeps 3 degrees of freedom.
const SLOTS: u32 = 4;

#[tokio::test]
async fn simultaneous_cells_meet_in_every_slot_and_find_a_delayed_target_slower_from_apply_to_completed()
 {
    let env = common::setup("e2e-simultaneous").await;
    let direct = support::private_mongo("e2e-simultaneous-direct");
    let behind = support::private_mongo("e2e-simultaneous-delayed");
    let delayed = DelayProxy::start(&behind.uri, DELAY);
    common::uri_secret(&env, "direct", &direct.uri).await;
    common::uri_secret(&env, "delayed", &delayed.uri).await;
    let kubelet = testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    );
    let _operator = common::start(&env, common::options(&env.namespace));
    let bench = "together";
    let applied = common::apply(
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
                "parallelism": "Simultaneous",
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "dataset": {"sizes": ["10"]},
                "workload": {"type": "flights", "workers": 1, "duration": "4s", "warmup": "2s", "seed": 9},
                "repetitions": SLOTS,
                "cleanupPolicy": "Retain"
            }
        }),
    )
    .await;
    assert_eq!(applied.spec.parallelism(), Parallelism::Simultaneous);

    let status = common::status_until(
        &env,
        bench,
        Duration::from_secs(400),
        "the benchmark to complete",
        |s| matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed)),
    )
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    for cell in &status.cells {
        assert_eq!(
            cell.phase,
            CellPhase::Completed,
            "{}: {:?}",
            cell.id,
            cell.message
        );
    }
    assert_eq!(status.runners.len(), 1, "{:#?}", status.runners);
    assert_eq!(
        status.runners[0].jobs,
        [common::platform_runner(bench, "local")]
    );
    assert_eq!(kubelet.started.lock().unwrap().len(), 1);

    // Every slot's two cells began their measured phase at one instant, recorded in both.
    let results = common::cell_results(&env, &format!("mongobench.io/benchmark={bench}")).await;
    assert_eq!(results.len(), 2 * SLOTS as usize);
    let mut windows: BTreeMap<u32, Vec<(String, u64)>> = BTreeMap::new();
    for r in &results {
        let slot = r.slot.expect("a simultaneous cell records its slot").number;
        let together = r
            .simultaneous
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no simultaneous window", r.cell));
        assert_eq!(together.side, None, "{}: no sides on Kubernetes", r.cell);
        let measured = r.measured.as_ref().expect("a completed cell is measured");
        assert!(
            measured.overall.per_second.len() >= 3,
            "{}: per-second series {:?}",
            r.cell,
            measured.overall.per_second
        );
        windows
            .entry(slot)
            .or_default()
            .push((r.cell.target.clone(), together.window_start_unix_ms));
    }
    assert_eq!(windows.len(), SLOTS as usize, "{windows:?}");
    let mut starts = Vec::new();
    for (slot, cells) in &windows {
        let mut targets: Vec<&str> = cells.iter().map(|(t, _)| t.as_str()).collect();
        targets.sort();
        assert_eq!(targets, ["delayed", "direct"], "slot {slot}");
        assert_eq!(cells[0].1, cells[1].1, "slot {slot}: one common start");
        starts.push(cells[0].1);
    }
    // Slots follow one another: each window starts after the one before has run its 4 s.
    for pair in starts.windows(2) {
        assert!(pair[1] >= pair[0] + 4_000, "window starts {starts:?}");
    }

    // The comparison: made from the common seconds, with the diagnostics, no crossover.
    assert_eq!(status.comparisons.len(), 1, "{:#?}", status.comparisons);
    let c = &status.comparisons[0];
    eprintln!("comparison: {c:#?}\nheadline: {:?}", status.headline);
    assert_eq!(
        (c.target.as_str(), c.baseline.as_str()),
        ("delayed", "direct")
    );
    let diagnostics = c
        .simultaneous
        .as_ref()
        .expect("a simultaneous comparison carries its diagnostics");
    assert_eq!(diagnostics.slots, SLOTS);
    assert_eq!(diagnostics.side_effect_percent, None);
    assert!(
        diagnostics
            .notes
            .iter()
            .any(|n| n.contains("kept their places") && n.contains("no crossover")),
        "{:?}",
        diagnostics.notes
    );
    assert_eq!(c.verdict, Some(Verdict::Slower));
    let t = &c.metrics[0];
    let (low, high) = (
        t.interval_low_percent.unwrap(),
        t.interval_high_percent.unwrap(),
    );
    assert!(low < high && high < 0.0, "interval [{low}, {high}]");
}
