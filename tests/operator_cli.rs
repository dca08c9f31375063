//! `mongobench operator` as a process: it starts against the testenv control plane with the
//! kubeconfig of the environment, answers /healthz and /readyz on `--listen` and /metrics on
//! `--metrics-listen` only, and reconciles the quickstart benchmark of its namespace (its runner
//! Job appears).
mod operator_common;
mod support;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use operator_common as common;
use serde_json::json;

fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_operator_command_serves_health_and_reconciles_the_quickstart() {
    let env = common::setup("op-cli").await;
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &env.namespace);
    let text = std::fs::read_to_string(common::repo("examples/quickstart-secret.yaml")).unwrap();
    for document in serde_yaml::Deserializer::from_str(&text) {
        let secret = <serde_json::Value as serde::Deserialize>::deserialize(document).unwrap();
        secrets
            .create(
                &PostParams::default(),
                &serde_json::from_value(secret).unwrap(),
            )
            .await
            .unwrap();
    }
    let (port, metrics_port) = (support::free_port(), support::free_port());
    let child = Command::new(env!("CARGO_BIN_EXE_mongobench"))
        .args([
            "operator",
            "--namespace",
            &env.namespace,
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--metrics-listen",
            &format!("127.0.0.1:{metrics_port}"),
        ])
        .env("KUBECONFIG", &env.kubeconfig)
        .env("MONGOBENCH_IMAGE", "registry.example/mongobench:cli-test")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _child = Child(child);
    let ready = support::wait::until(
        Duration::from_secs(60),
        "/readyz to answer 200",
        || async move { http_get(port, "/readyz").filter(|r| r.starts_with("HTTP/1.1 200")) },
    )
    .await;
    assert!(ready.ends_with("ready"), "{ready}");
    assert!(
        http_get(port, "/healthz")
            .unwrap()
            .starts_with("HTTP/1.1 200")
    );

    let mut quickstart = common::example("examples/quickstart.yaml");
    // Pinned to the client pool, where kwok leaves pods alone (nobody runs this one).
    quickstart["spec"]["client"] =
        json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}});
    common::apply(&env, &quickstart).await;
    // Two external targets: one runner for the platform, interleaving them.
    let job: Job = common::exists(&env, &common::platform_runner("quickstart", "local")).await;
    let container = &job.spec.unwrap().template.spec.unwrap().containers[0];
    assert_eq!(
        container.image.as_deref(),
        Some("registry.example/mongobench:cli-test")
    );
    let status = common::status_until(
        &env,
        "quickstart",
        Duration::from_secs(60),
        "Seeding",
        |s| s.phase == Some(mongobench::api::StatusPhase::Seeding),
    )
    .await;
    assert_eq!(status.progress.as_deref(), Some("0/12"));
    // /metrics on its own address only, not beside the probes.
    assert!(
        http_get(port, "/metrics")
            .unwrap()
            .starts_with("HTTP/1.1 404")
    );
    assert!(
        http_get(metrics_port, "/healthz")
            .unwrap()
            .starts_with("HTTP/1.1 404")
    );
    let metrics = http_get(metrics_port, "/metrics").unwrap();
    assert!(
        metrics.contains("mongobench_benchmarks{phase=\"Seeding\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("mongobench_api_writes_total{kind=\"Job\"} 1"),
        "{metrics}"
    );
}
