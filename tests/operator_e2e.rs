//! End to end for real: a MongoBenchmark with an external target pointing at a real
//! MongoDB-wire server goes from apply to Completed. The operator runs in-process; the runner
//! Job it creates is bound by the real scheduler to a client node, where the testenv kubelet
//! harness runs the Job's own command with the project's binary, its mounted plan, its
//! environment and its ServiceAccount's token. The figures in status come from that run.
mod faults_common;
mod operator_common;
mod support;

use std::time::Duration;

use kube::api::{Api, ListParams};
use mongobench::api::StatusPhase;
use operator_common as common;

#[tokio::test]
async fn an_external_benchmark_runs_from_apply_to_completed_with_real_figures() {
    let (env, server, _kubelet) = faults_common::environment("e2e").await;
    let mut options = common::options(&env.namespace);
    let listen = common::free_local_addr();
    options.listen = Some(listen);
    options.metrics_listen = Some(listen);
    let _operator = common::start(&env, options);
    common::apply(&env, &faults_common::benchmark("e2e", &["100", "200"], 2)).await;

    // While it runs, the status names the cell being measured, as the runner reports it.
    let measuring = common::status_until(
        &env,
        "e2e",
        Duration::from_secs(240),
        "a cell being measured",
        |s| {
            s.cells
                .iter()
                .any(|c| c.activity.as_deref() == Some("measuring"))
        },
    )
    .await;
    let cell = measuring
        .cells
        .iter()
        .find(|c| c.activity.as_deref() == Some("measuring"))
        .unwrap();
    assert_eq!(cell.phase, mongobench::api::CellPhase::Running);
    let measured_id = cell.id.clone();
    let progress = measuring.progress.clone().unwrap();
    assert!(
        progress.ends_with(&format!(", {} measuring", cell.id)),
        "{progress}"
    );

    let status = common::status_until(
        &env,
        "e2e",
        Duration::from_secs(240),
        "the benchmark to complete",
        |s| matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed)),
    )
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    assert_eq!(status.progress.as_deref(), Some("4/4"), "{status:#?}");
    assert!(
        status.condition_is_true("Ready"),
        "{:#?}",
        status.conditions
    );

    // Every cell in status carries the figures of the result the runner wrote.
    let results = common::cell_results(&env, "mongobench.io/benchmark=e2e").await;
    assert_eq!(results.len(), 4, "one result per cell");
    let cells = status.cells.clone();
    assert_eq!(cells.len(), 4);
    for result in &results {
        assert!(result.is_complete(), "{:?}", result.status);
        let measured = result.measured.as_ref().unwrap();
        assert!(measured.overall.completed > 0);
        assert_eq!(result.cell.target, "ferretdb");
        assert_eq!(
            result.server.version.as_deref(),
            Some("7.0.42"),
            "FerretDB reports 7.0.42"
        );
        let cell = cells
            .iter()
            .find(|c| c.size == result.cell.size && c.repetition == result.cell.repetition)
            .unwrap_or_else(|| panic!("no status cell for {}", result.cell));
        let ops = cell.ops_per_second.expect("ops/s in status");
        assert!(
            (ops - measured.overall.ops_per_sec).abs() < 0.01,
            "status {ops} vs result {}",
            measured.overall.ops_per_sec
        );
    }
    // /metrics holds the latest valid figures of each size: those of its second repetition.
    let metrics = common::http_get(listen, "/metrics").await;
    for size in ["100", "200"] {
        let latest = cells
            .iter()
            .find(|c| c.size == size && c.repetition == 2)
            .unwrap();
        let labels = format!(
            r#"benchmark_namespace="{}",benchmark="e2e",target="ferretdb",platform="local",size="{size}""#,
            env.namespace
        );
        let gauge = |name: &str, labels: &str| {
            let prefix = format!("mongobench_{name}{{{labels}}} ");
            metrics
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("{prefix} missing in:\n{metrics}"))
                .parse::<f64>()
                .unwrap()
        };
        let ops = gauge("result_ops_per_second", &labels);
        assert!((ops - latest.ops_per_second.unwrap()).abs() < 1e-6, "{ops}");
        assert!(!latest.latencies.is_empty());
        for op in &latest.latencies {
            let l = format!(r#"{labels},operation="{}""#, op.operation);
            assert_eq!(gauge("result_p99_microseconds", &l), op.p99_micros as f64);
        }
    }

    // The pass that wrote the measuring cell into status announced it.
    let events: Vec<String> =
        Api::<k8s_openapi::api::events::v1::Event>::namespaced(env.client.clone(), &env.namespace)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|e| Some(format!("{}: {}", e.reason?, e.note?)))
            .collect();
    let expected = format!("Measuring: cell {measured_id}: measuring ferretdb at ");
    assert!(
        events.iter().any(|e| e.starts_with(&expected)),
        "{expected} missing in {events:#?}"
    );

    // The runner really ran against the server: it holds the grown dataset.
    let client = server.client().await;
    let record = mongobench::runner::dataset::seed_flights::dataset_record(&client)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.documents, 200);
}

#[tokio::test]
async fn the_operator_killed_while_seeding_and_while_running_resumes_and_runs_every_cell_once() {
    let (env, _server, kubelet) = faults_common::environment("e2e-restart").await;
    let mut operator = common::start(&env, common::options(&env.namespace));
    common::apply(
        &env,
        &faults_common::benchmark("restart", &["100", "200"], 2),
    )
    .await;

    for phase in [StatusPhase::Seeding, StatusPhase::Running] {
        let what = format!("phase {phase:?}");
        common::status_until(&env, "restart", Duration::from_secs(120), &what, |s| {
            s.phase == Some(phase)
        })
        .await;
        operator.kill().await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        operator = common::start(&env, common::options(&env.namespace));
    }

    let status = common::status_until(
        &env,
        "restart",
        Duration::from_secs(240),
        "the benchmark to complete",
        |s| matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed)),
    )
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    let mut ids: Vec<&str> = status.cells.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(
        ids.len(),
        4,
        "every cell exactly once in status: {:?}",
        status.cells
    );
    // The runner was never started twice: no cell ran again after a restart.
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(started.len(), 1, "runner pods started: {started:?}");
}
