//! The shipped operator manifests and Helm chart stay in step with the code: the chart's CRD is
//! the generated one, its ClusterRole has exactly the rules of manifests/rbac.yaml (which
//! tests/operator_rbac.rs proves sufficient), the Deployment's arguments are ones the
//! `mongobench` command line accepts, and every image they name is this release's, tagged with
//! the crate version.

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

/// The image every shipped file and the operator's default name: the crate version's tag, so an
/// operator never starts runners of another release (which would refuse its plans).
fn release_image() -> String {
    format!(
        "ghcr.io/mongobench/mongobench:{}",
        env!("CARGO_PKG_VERSION")
    )
}

#[test]
fn images_are_tagged_with_the_crate_version_never_latest() {
    assert_eq!(
        mongobench::operator::DEFAULT_IMAGE,
        release_image(),
        "the operator's default runner image"
    );

    let doc = documents(&read("manifests/operator.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    let container = &doc["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["image"],
        release_image().as_str(),
        "manifests/operator.yaml: the operator's image"
    );
    let runner = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "MONGOBENCH_IMAGE")
        .expect("manifests/operator.yaml: MONGOBENCH_IMAGE in the operator's environment");
    assert_eq!(
        runner["value"],
        release_image().as_str(),
        "manifests/operator.yaml: the runners' image"
    );

    // The chart: its appVersion is the crate version and the image tag defaults to it
    // (tests/operator_chart.rs renders it with Helm and checks the result).
    let chart: serde_yaml::Value =
        serde_yaml::from_str(&read("charts/mongobench/Chart.yaml")).unwrap();
    assert_eq!(
        chart["appVersion"].as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "charts/mongobench/Chart.yaml: appVersion"
    );
    let values: serde_yaml::Value =
        serde_yaml::from_str(&read("charts/mongobench/values.yaml")).unwrap();
    assert_eq!(
        values["image"]["repository"].as_str(),
        Some("ghcr.io/mongobench/mongobench")
    );
    let tag = values["image"]["tag"].as_str();
    assert!(
        tag == Some("") || tag == Some(env!("CARGO_PKG_VERSION")),
        "charts/mongobench/values.yaml: image.tag is {tag:?}, not empty (the appVersion) or the crate version"
    );
    assert!(
        read("charts/mongobench/templates/_helpers.tpl")
            .contains("{{ .Values.image.tag | default .Chart.AppVersion }}"),
        "charts/mongobench/templates/_helpers.tpl: the image tag does not default to the appVersion"
    );

    for path in [
        "manifests/operator.yaml",
        "charts/mongobench/values.yaml",
        "charts/mongobench/templates/deployment.yaml",
        "charts/mongobench/templates/_helpers.tpl",
        "src/operator/mod.rs",
    ] {
        let text = read(path);
        assert!(
            !text.contains(":latest") && !text.contains("tag: latest"),
            "{path} names the `latest` image"
        );
    }
}
