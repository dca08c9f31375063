//! The shipped operator manifests and Helm chart stay in step with the code: the chart's CRD is
//! the generated one, its operator rules are exactly those of manifests/rbac.yaml (the
//! namespaced install, the default) and manifests/rbac-cluster-wide.yaml (which
//! tests/operator_rbac.rs proves sufficient and exact), the Deployment's arguments are ones the
//! `mongobench` command line accepts, and every image they name is this release's, tagged with
//! the crate version.

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::PolicyRule;
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

/// The operator's rules of a manifest: the Role (namespaced install) or ClusterRole
/// (cluster-wide) `mongobench-operator`.
fn manifest_rules(path: &str, kind: &str) -> Vec<PolicyRule> {
    let doc = documents(&read(path))
        .into_iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == "mongobench-operator")
        .unwrap_or_else(|| panic!("{path}: no {kind} mongobench-operator"));
    serde_json::from_value(doc["rules"].clone()).unwrap()
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
    assert_eq!(rules, manifest_rules("manifests/rbac.yaml", "Role"));
    assert_eq!(
        rules,
        manifest_rules("manifests/rbac-cluster-wide.yaml", "ClusterRole")
    );
    // The namespaced install is the default: the Role is in the namespace the operator is told
    // to watch, and grants nothing cluster-wide but nodes.
    let namespaced = documents(&read("manifests/rbac.yaml"));
    let role = namespaced
        .iter()
        .find(|d| d["kind"] == "Role" && d["metadata"]["name"] == "mongobench-operator")
        .unwrap();
    let watched = namespaced
        .iter()
        .find(|d| d["kind"] == "ConfigMap")
        .unwrap();
    assert_eq!(role["metadata"]["namespace"], watched["data"]["namespaces"]);
    let cluster: Vec<&serde_json::Value> = namespaced
        .iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .collect();
    assert_eq!(cluster.len(), 1);
    assert_eq!(
        cluster[0]["rules"][0]["resources"],
        serde_json::json!(["nodes"])
    );
    let wide = documents(&read("manifests/rbac-cluster-wide.yaml"));
    let all = wide.iter().find(|d| d["kind"] == "ConfigMap").unwrap();
    assert_eq!(all["data"]["namespaces"], "");
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
    assert_eq!(
        options.metrics_listen,
        Some("127.0.0.1:9090".parse().unwrap())
    );
    // The namespaces to watch come from the ConfigMap the RBAC manifest ships with.
    let from = container
        .env
        .iter()
        .flatten()
        .find(|e| e.name == "MONGOBENCH_NAMESPACES")
        .and_then(|e| e.value_from.as_ref()?.config_map_key_ref.clone())
        .expect("MONGOBENCH_NAMESPACES from a ConfigMap");
    assert_eq!(
        (from.name.as_str(), from.key.as_str()),
        ("mongobench-operator", "namespaces")
    );
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
