//! End to end, a custom workload through the real control plane: examples/custom-orders.yaml
//! with its document moved into a ConfigMap, against its two real servers (FerretDB on
//! PostgreSQL and SecantusDB on WiredTiger), reached from the runner pod the testenv kubelet
//! harness runs. Before the ConfigMap exists the benchmark waits, Stalled with
//! `WorkloadNotFound`, and with a broken document in it, `InvalidWorkload` naming the path;
//! once it holds the document, the operator keeps a copy of the document, hands it to the
//! runner in the plan, and the run goes to Completed with a verdict in status. Deleting the
//! user's ConfigMap mid-run changes nothing. The import of plgm's files (a fixture in their
//! format), given inline, runs to a verdict the same way.
//!
//! It runs in a test binary of its own so that no other test's runner shares the machine
//! with its measurement.
mod operator_common;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use mongobench::api::{CellPhase, StatusPhase};
use operator_common as common;
use serde_json::json;

/// What runs while a test does: its servers, the client-node kubelet and the operator.
type Running = (
    support::PrivateMongo,
    support::PrivateMongo,
    testenv_kubelet::Kubelet,
    common::RunningOperator,
);

/// A test namespace with a private FerretDB on PostgreSQL and a private SecantusDB, their URIs
/// in the Secrets `<prefix>postgres` and `<prefix>wiredtiger`, the kubelet and the operator.
async fn both_servers(test: &str, prefix: &str) -> (common::TestEnv, Running) {
    let env = common::setup(test).await;
    let postgres = support::private_mongo(test);
    let wiredtiger = support::private_secantus(test);
    common::uri_secret(&env, &format!("{prefix}postgres"), &postgres.uri).await;
    common::uri_secret(&env, &format!("{prefix}wiredtiger"), &wiredtiger.uri).await;
    let kubelet = testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    );
    let operator = common::start(&env, common::options(&env.namespace));
    (env, (postgres, wiredtiger, kubelet, operator))
}

#[tokio::test]
async fn the_shop_example_runs_from_a_config_map_to_a_verdict() {
    let (env, _running) = both_servers("e2e-custom", "testenv-").await;

    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/custom-orders.yaml");
    let mut doc: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(example).unwrap()).unwrap();
    let text = doc["spec"]["workload"]["custom"]["inline"]
        .as_str()
        .unwrap()
        .to_owned();
    doc["spec"]["workload"]["custom"] = json!({"configMapRef": {"name": "shop-workload"}});
    doc["spec"]["client"] = json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}});
    let bench = "custom-orders";
    common::apply(&env, &doc).await;

    let waiting = common::status_until(
        &env,
        bench,
        Duration::from_secs(60),
        "the benchmark to wait for its workload",
        |s| s.condition_is_true("Stalled"),
    )
    .await;
    assert_eq!(waiting.phase, Some(StatusPhase::Pending));
    let stalled = waiting.condition("Stalled").unwrap();
    assert_eq!(stalled.reason, "WorkloadNotFound");
    assert_eq!(
        stalled.message,
        format!(
            "spec.workload.custom.configMapRef (ConfigMap shop-workload key workload.yaml): no \
             such ConfigMap in namespace {}; the benchmark waits for it",
            env.namespace
        )
    );

    // A broken document is named with its path; fixed, the run goes on.
    let maps: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    let user_map = |text: &str| ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some("shop-workload".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "workload.yaml".to_owned(),
            text.to_owned(),
        )])),
        ..Default::default()
    };
    maps.create(&PostParams::default(), &user_map("version: 2\n"))
        .await
        .unwrap();
    let broken = common::status_until(
        &env,
        bench,
        Duration::from_secs(60),
        "the broken document to be named",
        |s| {
            s.condition("Stalled")
                .is_some_and(|c| c.reason == "InvalidWorkload")
        },
    )
    .await;
    let message = &broken.condition("Stalled").unwrap().message;
    assert!(
        message.starts_with(
            "spec.workload.custom.configMapRef (ConfigMap shop-workload key workload.yaml): \
             workload.custom.version: "
        ),
        "{message}"
    );
    let mut fixed = maps.get("shop-workload").await.unwrap();
    fixed.data = user_map(&text).data;
    maps.replace("shop-workload", &PostParams::default(), &fixed)
        .await
        .unwrap();
    common::status_until(
        &env,
        bench,
        Duration::from_secs(120),
        "a cell to run",
        |s| matches!(s.phase, Some(StatusPhase::Running)),
    )
    .await;
    // The operator's copy is what the runners read from now on.
    maps.delete("shop-workload", &DeleteParams::default())
        .await
        .unwrap();
    let copy = maps.get("custom-orders-workload").await.unwrap();
    assert_eq!(copy.data.unwrap()["workload.yaml"], text);

    ends_with_a_verdict(&env, bench, "6k").await;
}

#[tokio::test]
async fn the_imported_plgm_files_run_inline_to_a_verdict() {
    let (env, _running) = both_servers("e2e-plgm", "").await;
    let dir = std::env::temp_dir().join(format!("mongobench-e2e-plgm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(support::imported_plgm(&dir, "duration: 3s")).unwrap();
    let bench = "plgm";
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [
                    {"name": "postgres", "external": {"uriSecretRef": {"name": "postgres"}}},
                    {"name": "wiredtiger", "external": {"uriSecretRef": {"name": "wiredtiger"}}}
                ],
                "baseline": "postgres",
                "platforms": [{"name": "local"}],
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "dataset": {"sizes": ["500"]},
                "workload": {"type": "custom", "workers": 2, "custom": {"inline": text}},
                "repetitions": 3,
                "cleanupPolicy": "Retain"
            }
        }),
    )
    .await;
    ends_with_a_verdict(&env, bench, "500").await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Waits for `bench` to complete and checks what it ends with: 3 valid custom/v1 cells of each
/// target, all of one document, and one comparison with a verdict, named in the headline.
async fn ends_with_a_verdict(env: &common::TestEnv, bench: &str, size: &str) {
    let status = common::status_until(
        env,
        bench,
        Duration::from_secs(480),
        "the benchmark to end",
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
    let results = common::cell_results(env, &format!("mongobench.io/benchmark={bench}")).await;
    assert_eq!(
        (status.cells.len(), results.len()),
        (6, 6),
        "{:#?}",
        status.cells
    );
    let sha = &results[0].identity.parameters["custom.documentSha256"];
    for r in &results {
        assert!(r.is_valid(), "{}: {:?}", r.cell, r.invalid_reasons);
        assert_eq!(r.identity.parameters["workload"], "custom/v1");
        assert_eq!(&r.identity.parameters["custom.documentSha256"], sha);
    }
    assert_eq!(status.comparisons.len(), 1, "{:#?}", status.comparisons);
    let c = &status.comparisons[0];
    assert_eq!(
        (c.target.as_str(), c.baseline.as_str()),
        ("wiredtiger", "postgres")
    );
    assert_eq!((c.repetitions, c.baseline_repetitions), (3, 3));
    assert!(c.verdict.is_some(), "{c:?}");
    let headline = status.headline.clone().unwrap();
    eprintln!("{bench}: {headline}");
    assert!(
        headline.starts_with("wiredtiger (SecantusDB ")
            && headline.contains(&format!(
                " ops/s vs postgres (FerretDB 7.0.42) at {size}, 3 reps, MDE "
            )),
        "{headline}"
    );
}
