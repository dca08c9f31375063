//! The shipped operator manifests and Helm chart stay in step with the code: the chart's CRD is
//! the generated one, its ClusterRole has exactly the rules of manifests/rbac.yaml (which
//! tests/operator_rbac.rs proves sufficient), and the Deployment's arguments are ones the
//! `mongobench` command line accepts.

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use mongobench::cli::{Cli, Command};
use serde::Deserialize;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap())
        .collect()
}

fn manifest_rules() -> Vec<PolicyRule> {
    let doc = documents(&read("manifests/rbac.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "ClusterRole")
        .unwrap();
    serde_json::from_value::<ClusterRole>(doc)
        .unwrap()
        .rules
        .unwrap()
}

#[test]
fn chart_crd_is_the_generated_crd() {
    assert!(
        read("charts/mongobench/crds/crd.yaml") == mongobench::api::crd_yaml(),
        "charts/mongobench/crds/crd.yaml differs from the API types: \
         run `cargo run -- crd > charts/mongobench/crds/crd.yaml`"
    );
}

#[test]
fn chart_operator_rules_are_the_manifest_rules() {
    let helpers = read("charts/mongobench/templates/_helpers.tpl");
    let start = helpers
        .find("{{- define \"mongobench.operatorRules\" -}}\n")
        .expect("the operatorRules template");
    let body = &helpers[start..];
    let body = &body[body.find('\n').unwrap() + 1..body.find("{{- end }}").unwrap()];
    let rules: Vec<PolicyRule> = serde_yaml::from_str(body).unwrap();
    assert_eq!(rules, manifest_rules());
}

#[test]
fn deployment_arguments_are_accepted_by_the_cli() {
    let doc = documents(&read("manifests/operator.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    let deployment: Deployment = serde_json::from_value(doc).unwrap();
    let container = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    assert_eq!(
        container.command.as_deref(),
        Some(&["mongobench".to_string()][..])
    );
    let mut argv = vec!["mongobench".to_string()];
    argv.extend(container.args.clone().unwrap());
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let Command::Operator(args) = cli.command else {
        panic!("the Deployment does not run `mongobench operator`");
    };
    assert!(args.leader_election);
    let options = mongobench::cli::operator::options(&args).unwrap();
    assert_eq!(options.listen, Some("0.0.0.0:8080".parse().unwrap()));
    let ports = container.ports.as_ref().unwrap();
    assert_eq!(ports[0].container_port, 8080);
    let probe = container
        .readiness_probe
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap();
    assert_eq!(probe.path.as_deref(), Some("/readyz"));
}
