//! The Argo CD health check shipped in manifests/argocd/ runs in a real Lua 5.1 interpreter
//! (Argo CD's dialect) against MongoBenchmarks as the real operator left them on the real API
//! server, and against the committed fixtures taken from those runs
//! (tests/fixtures/argocd/; `MONGOBENCH_BLESS=1 cargo test --test argocd_health` rewrites
//! them from a fresh run).
mod operator_common;
mod support;

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use mlua::{Lua, LuaSerdeExt, SerializeOptions, Table};
use mongobench::api::{MongoBenchmark, StatusPhase};
use operator_common as common;
use serde_json::{Value, json};

fn script() -> String {
    std::fs::read_to_string(common::repo("manifests/argocd/health.lua")).unwrap()
}

/// The health status and message the script gives `obj`.
fn health(obj: &Value) -> (String, String) {
    let lua = Lua::new();
    let options = SerializeOptions::new()
        .serialize_none_to_null(false)
        .serialize_unit_to_null(false);
    let value = lua.to_value_with(obj, options).unwrap();
    lua.globals().set("obj", value).unwrap();
    let hs: Table = lua
        .load(script())
        .set_name("manifests/argocd/health.lua")
        .eval()
        .unwrap_or_else(|e| panic!("the health check failed on {obj}: {e}"));
    (hs.get("status").unwrap(), hs.get("message").unwrap())
}

fn fixture_path(name: &str) -> PathBuf {
    common::repo(&format!("tests/fixtures/argocd/{name}.yaml"))
}

/// The object as Argo CD sees it (no managed fields); written as fixture `name` when blessing.
fn observed(bench: &MongoBenchmark, name: &str) -> Value {
    let mut obj = serde_json::to_value(bench).unwrap();
    obj["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    if std::env::var_os("MONGOBENCH_BLESS").is_some() {
        std::fs::write(fixture_path(name), serde_yaml::to_string(&obj).unwrap()).unwrap();
    }
    obj
}

/// The fixtures and the health each must get.
const EXPECTED: [(&str, &str); 4] = [
    ("progressing", "Progressing"),
    ("healthy", "Healthy"),
    ("suspended", "Suspended"),
    ("degraded-stalled", "Degraded"),
];

#[test]
fn the_configmap_carries_the_script() {
    let cm: Value = serde_yaml::from_str(
        &std::fs::read_to_string(common::repo("manifests/argocd/argocd-cm.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        cm["data"]["resource.customizations.health.mongobench.io_MongoBenchmark"]
            .as_str()
            .unwrap(),
        script()
    );
}

#[test]
fn committed_fixtures_get_their_health() {
    for (name, expected) in EXPECTED {
        let path = fixture_path(name);
        let obj: Value = serde_yaml::from_str(
            &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
        .unwrap();
        let (status, message) = health(&obj);
        assert_eq!(status, expected, "{name}: {message}");
    }
    // What the fixtures do not show: a deleted benchmark and a spec the operator has not
    // seen yet are Progressing, a Failed phase is Degraded.
    let healthy: Value =
        serde_yaml::from_str(&std::fs::read_to_string(fixture_path("healthy")).unwrap()).unwrap();
    let mut deleting = healthy.clone();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-12-01T10:00:00Z");
    assert_eq!(
        health(&deleting),
        ("Progressing".into(), "Pending deletion".into())
    );
    let mut edited = healthy.clone();
    edited["metadata"]["generation"] =
        json!(healthy["metadata"]["generation"].as_i64().unwrap() + 1);
    assert_eq!(
        health(&edited),
        ("Progressing".into(), "Generation not yet observed".into())
    );
    let mut failed = healthy;
    failed["status"]["phase"] = json!("Failed");
    failed["status"]["conditions"] = json!([]);
    assert_eq!(health(&failed).0, "Degraded");
}

async fn get(env: &support::KubeEnv, name: &str) -> MongoBenchmark {
    common::benchmarks(env).get(name).await.unwrap()
}

/// Progressing, Healthy, Suspended and Degraded as the real operator leaves a benchmark.
#[tokio::test]
async fn the_operators_statuses_get_their_health() {
    let env = common::setup("argocd-health").await;
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "target-uri"}, "stringData": {"uri": "mongodb://127.0.0.1:27018/"}
    }))
    .unwrap();
    Api::<Secret>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let mut options = common::options(&env.namespace);
    options.stall_deadline = Duration::from_secs(3);
    options.resync = Duration::from_secs(2);
    let _operator = common::start(&env, options);
    let external = |name: &str, suspend: bool| {
        json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": name},
            "spec": {
                "targets": [
                    {"name": "a", "external": {"uriSecretRef": {"name": "target-uri"}}},
                    {"name": "b", "external": {"uriSecretRef": {"name": "target-uri"}}}
                ],
                "platforms": [{"name": "local"}],
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights", "duration": "10s", "warmup": "0s"},
                "repetitions": 3,
                "suspend": suspend,
                "cleanupPolicy": "Retain"
            }
        })
    };

    // Seeding: the runner (this test) has not written every result yet.
    common::apply(&env, &external("study", false)).await;
    common::status_until(&env, "study", Duration::from_secs(60), "Seeding", |s| {
        matches!(s.phase, Some(StatusPhase::Seeding | StatusPhase::Running))
    })
    .await;
    let running = observed(&get(&env, "study").await, "progressing");
    assert_eq!(health(&running).0, "Progressing");

    // Completed with a verdict: `b` does 30 % more finds per second than `a`.
    let job: Job = common::exists(&env, &common::platform_runner("study", "local")).await;
    let plan = common::plan_of(&env, &job).await;
    for (target, finds) in [("a", 1000), ("b", 1300)] {
        for rep in 1..=3 {
            let id = mongobench::plan::cell_id(target, "local", "1k", rep);
            let ops = finds + u64::from(rep) * 7;
            let r = common::result_of(&plan, target, "1k", rep, ops);
            common::write_result(&env, &plan, &id, &r).await;
        }
    }
    let status = common::status_until(&env, "study", Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    let completed = observed(&get(&env, "study").await, "healthy");
    let headline = status.headline.clone().unwrap();
    assert_eq!(health(&completed), ("Healthy".into(), headline));

    // Suspended before it started.
    common::apply(&env, &external("paused", true)).await;
    common::status_until(&env, "paused", Duration::from_secs(60), "observed", |s| {
        s.observed_generation.is_some()
    })
    .await;
    let paused = observed(&get(&env, "paused").await, "suspended");
    assert_eq!(health(&paused).0, "Suspended");

    // Stalled: server pods that no node can take.
    common::apply(&env, &common::nowhere_benchmark("nowhere")).await;
    let status = common::status_until(
        &env,
        "nowhere",
        Duration::from_secs(90),
        "Stalled=True",
        |s| s.condition_is_true("Stalled"),
    )
    .await;
    let stalled = observed(&get(&env, "nowhere").await, "degraded-stalled");
    assert_eq!(
        health(&stalled),
        (
            "Degraded".into(),
            status.condition("Stalled").unwrap().message.clone()
        )
    );
}
