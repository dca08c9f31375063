//! The Helm chart, rendered by a real Helm (built by `testenv/build helm`): it lints cleanly,
//! its values reach the operator's command line (which the CLI accepts), and every rendered
//! object is accepted by the real API server (server-side dry run).
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::{ApiResource, Discovery};
use mongobench::cli::{Cli, Command as Sub};
use serde::Deserialize;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The testenv's helm, built if missing (cached by version like every testenv binary).
fn helm() -> PathBuf {
    let out = Command::new(repo().join("testenv/build"))
        .arg("helm")
        .output()
        .expect("running testenv/build helm");
    assert!(
        out.status.success(),
        "`testenv/build helm` failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    support::kubectl().with_file_name("helm")
}

fn render(helm: &Path, namespace: &str, values: &[&str]) -> Vec<serde_json::Value> {
    let mut cmd = Command::new(helm);
    cmd.args(["template", "mb"])
        .arg(repo().join("charts/mongobench"))
        .args(["--namespace", namespace]);
    for v in values {
        cmd.args(["--set", v]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "helm template: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_yaml::Deserializer::from_str(&String::from_utf8(out.stdout).unwrap())
        .map(|d| serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

fn operator_args(docs: &[serde_json::Value]) -> mongobench::cli::operator::OperatorArgs {
    let doc = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap()
        .clone();
    let deployment: Deployment = serde_json::from_value(doc).unwrap();
    let c = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    let mut argv = vec!["mongobench".to_string()];
    argv.extend(c.args.clone().unwrap());
    match Cli::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
        .command
    {
        Sub::Operator(args) => args,
        _ => panic!("the chart does not run `mongobench operator`"),
    }
}

#[tokio::test]
async fn chart_lints_renders_what_the_cli_accepts_and_the_api_server_takes() {
    let helm = helm();
    let lint = Command::new(&helm)
        .args(["lint", "--strict"])
        .arg(repo().join("charts/mongobench"))
        .output()
        .unwrap();
    assert!(
        lint.status.success(),
        "helm lint: {}",
        String::from_utf8_lossy(&lint.stdout)
    );

    let env = support::kube("op-chart").await;
    let defaults = render(&helm, &env.namespace, &[]);
    let kinds: Vec<&str> = defaults.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment"
        ]
    );
    let args = operator_args(&defaults);
    assert!(args.leader_election);
    assert_eq!(args.namespace, None);
    assert_eq!(args.listen, "0.0.0.0:8080");

    let custom = render(
        &helm,
        &env.namespace,
        &[
            "leaderElection=false",
            "watchNamespace=benchmarks",
            "stallDeadline=90s",
        ],
    );
    let args = operator_args(&custom);
    assert!(!args.leader_election);
    assert_eq!(args.namespace.as_deref(), Some("benchmarks"));
    assert_eq!(args.stall_deadline, std::time::Duration::from_secs(90));

    // Every object is valid for the API server (dry run: nothing is created).
    let discovery = Discovery::new(env.client.clone()).run().await.unwrap();
    for doc in &defaults {
        let gvk = kube::api::GroupVersionKind::try_from(&kube::api::TypeMeta {
            api_version: doc["apiVersion"].as_str().unwrap().into(),
            kind: doc["kind"].as_str().unwrap().into(),
        })
        .unwrap();
        let (resource, caps): (ApiResource, _) = discovery.resolve_gvk(&gvk).unwrap();
        let api: Api<DynamicObject> = if caps.scope == kube::discovery::Scope::Namespaced {
            Api::namespaced_with(env.client.clone(), &env.namespace, &resource)
        } else {
            Api::all_with(env.client.clone(), &resource)
        };
        let name = doc["metadata"]["name"].as_str().unwrap();
        api.patch(
            name,
            &PatchParams::apply("mongobench-chart-test")
                .dry_run()
                .validation_strict(),
            &Patch::Apply(doc),
        )
        .await
        .unwrap_or_else(|e| panic!("the API server refused {} {name}: {e}", gvk.kind));
    }
}
