//! Forged and broken result ConfigMaps on the real API server: a result ConfigMap whose
//! document is not JSON, of another schema version, or of another benchmark, run or cell (even
//! one its runner's Job controls) is refused: its cell fails naming the ConfigMap and why, a Warning event names it, and none
//! of its figures reach the status. The test plays the runner by writing the ConfigMaps.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use mongobench::api::CellPhase;
use mongobench::operator::render::names;
use operator_common as common;
use serde_json::json;

#[tokio::test]
async fn corrupt_foreign_and_other_version_results_are_refused_with_a_warning_naming_them() {
    let env = common::setup("faults-results").await;
    let operator = common::start(&env, common::options(&env.namespace));
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(env.client.clone(), &env.namespace);
    let secret = serde_json::from_value(json!({
        "metadata": {"name": "uri"}, "stringData": {"uri": "mongodb://127.0.0.1:1/"}
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let bench = "forged";
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [{"name": "ext", "external": {"uriSecretRef": {"name": "uri"}}}],
                "platforms": [{"name": "local"}],
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights"},
                // Its pod waits on a client node no kubelet runs: the test writes the results.
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "repetitions": 6
            }
        }),
    )
    .await;
    let job = common::exists(&env, &common::runner(bench, "ext", "local")).await;
    let plan = common::plan_of(&env, &job).await;
    let id = |rep| mongobench::plan::cell_id("ext", "local", "1k", rep);

    // r1 is the runner's own result; r2 to r6 are broken or someone else's.
    common::write_result(
        &env,
        &plan,
        &id(1),
        &common::result_for(&plan, "1k", 1, 1000),
    )
    .await;
    let mut other_run = common::result_for(&plan, "1k", 3, 9_999_000);
    other_run.cell.run_id = "an-earlier-run".into();
    let mut other_bench = common::result_for(&plan, "1k", 4, 9_999_000);
    other_bench.cell.benchmark = "someone-else".into();
    let other_cell = common::result_for(&plan, "1k", 1, 9_999_000);
    let mut old_version = serde_json::to_value(common::result_for(&plan, "1k", 6, 1000)).unwrap();
    old_version["schemaVersion"] = json!(1);
    let broken = [
        (2, "{\"schemaVersion\": 2, \"cell\": ".to_owned()),
        (3, other_run.to_json().unwrap()),
        (4, other_bench.to_json().unwrap()),
        (5, other_cell.to_json().unwrap()),
        (6, old_version.to_string()),
    ];
    for (rep, text) in &broken {
        write_raw(&env, &plan, &id(*rep), text).await;
    }

    let status = common::status_until(&env, bench, Duration::from_secs(60), "every cell", |s| {
        // Running is not an end: the cell whose result the operator has not read yet is
        // the runner's current one (a CI run read status between two results).
        s.cells.len() == 6
            && s.cells.iter().all(|c| {
                matches!(
                    c.phase,
                    CellPhase::Completed | CellPhase::Invalid | CellPhase::Failed
                )
            })
    })
    .await;
    let by_rep = |rep: u32| {
        status
            .cells
            .iter()
            .find(|c| c.repetition == rep)
            .unwrap_or_else(|| panic!("cell r{rep} in {:?}", status.cells))
    };
    assert_eq!(by_rep(1).phase, CellPhase::Completed);
    let expected_why = [
        (2, "not JSON"),
        (
            3,
            "of benchmark forged run an-earlier-run, not cell ext.local.1k.r3",
        ),
        (4, "of benchmark someone-else run"),
        (
            5,
            "its document is cell ext.local.1k.r1 of benchmark forged",
        ),
        (6, "schemaVersion 1"),
    ];
    for (rep, why) in expected_why {
        let cell = by_rep(rep);
        let config_map = names::result_name(bench, &id(rep));
        assert_eq!(cell.phase, CellPhase::Failed, "r{rep}: {cell:?}");
        let message = cell.message.as_deref().unwrap_or_default();
        assert!(
            message.starts_with(&format!("result ConfigMap {config_map}:"))
                && message.contains(why),
            "r{rep}: {message}"
        );
        assert_eq!(
            cell.ops_per_second, None,
            "r{rep} shows figures it does not own"
        );
        assert!(cell.latencies.is_empty(), "r{rep}: {:?}", cell.latencies);
    }

    // One Warning event per refused ConfigMap, naming it.
    let events: Api<Event> = Api::namespaced(env.client.clone(), &env.namespace);
    let warned = support::wait::until(Duration::from_secs(30), "the Warning events", || {
        let events = events.clone();
        async move {
            let named: Vec<String> = events
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .filter(|e| e.type_.as_deref() == Some("Warning"))
                .filter(|e| e.reason.as_deref() == Some("CellFailed"))
                .filter_map(|e| e.related.and_then(|r| r.name))
                .collect();
            (named.len() >= 5).then_some(named)
        }
    })
    .await;
    for rep in 2..=6 {
        let config_map = names::result_name(bench, &id(rep));
        assert!(warned.contains(&config_map), "{config_map} in {warned:?}");
    }
    operator.kill().await;
}

/// A ConfigMap labelled as the runner labels the result of `cell_id`, controlled by its Job as
/// the runner's are, holding `text`.
async fn write_raw(
    env: &support::KubeEnv,
    plan: &mongobench::contract::JobPlan,
    cell_id: &str,
    text: &str,
) {
    let job = common::runner_job_owner(env, plan).await;
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": names::result_name(&plan.benchmark, cell_id),
            "labels": {
                "mongobench.io/benchmark": plan.benchmark,
                "mongobench.io/cell": cell_id,
                "mongobench.io/run-id": plan.run_id
            },
            "ownerReferences": [job.expect("the runner Job")]
        },
        "data": {"result.json": text}
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
}
