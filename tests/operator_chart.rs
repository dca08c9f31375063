//! The Helm chart, rendered by a real Helm (built by `testenv/build helm`): it lints cleanly,
//! its values reach the operator's command line (which the CLI accepts), and every rendered
//! object is accepted by the real API server (server-side dry run).
mod support;

use std::path::Path;
use std::process::Command;

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::{ApiResource, Discovery};
use mongobench::cli::{Cli, Command as Sub};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
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
    let helm = support::helm();
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
    let defaults = support::helm_template(&helm, "mb", &env.namespace, &[]);
    let kinds: Vec<&str> = defaults.iter().filter_map(|d| d["kind"].as_str()).collect();
    // Namespaced by default: the benchmark rules in a Role of the release's namespace (which
    // the operator watches), nodes in a ClusterRole, leases in a Role of that namespace.
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "Role",
            "RoleBinding",
            "RoleBinding",
            "Deployment"
        ]
    );
    let role = |name: &str| {
        defaults
            .iter()
            .find(|d| d["kind"] == "Role" && d["metadata"]["name"] == name)
            .unwrap()
    };
    for name in ["mb-operator", "mb-operator-leader"] {
        assert_eq!(role(name)["metadata"]["namespace"], env.namespace.as_str());
    }
    assert_eq!(
        role("mb-operator-leader")["rules"][0]["resources"],
        serde_json::json!(["leases"])
    );
    let cluster_role = defaults
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .unwrap();
    assert_eq!(cluster_role["metadata"]["name"], "mb-operator-nodes");
    // The operator and its runners run this release's image, tagged with the crate version.
    let image = format!(
        "ghcr.io/mongobench/mongobench:{}",
        env!("CARGO_PKG_VERSION")
    );
    let deployment = defaults.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], image.as_str(), "the operator's image");
    let runner_image = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "MONGOBENCH_IMAGE")
        .expect("MONGOBENCH_IMAGE in the operator's environment");
    assert_eq!(runner_image["value"], image.as_str(), "the runners' image");
    let args = operator_args(&defaults);
    assert!(args.leader_election);
    assert_eq!(args.namespace, std::slice::from_ref(&env.namespace));
    assert_eq!(args.listen, "0.0.0.0:8080");
    // /metrics on loopback only: nothing says to scrape it.
    assert_eq!(args.metrics_listen, "127.0.0.1:9090");
    assert!(args.allowed_runner_image.is_empty());
    let template = &deployment["spec"]["template"];
    assert!(
        template["metadata"].get("annotations").is_none(),
        "{template}"
    );

    // Cluster-wide, explicitly: a ClusterRole of the benchmark rules, no --namespace.
    let cluster = support::helm_template(&helm, "mb", &env.namespace, &["clusterWide=true"]);
    assert!(
        cluster
            .iter()
            .any(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == "mb-operator")
    );
    assert!(
        !cluster
            .iter()
            .any(|d| d["kind"] == "Role" && d["metadata"]["name"] == "mb-operator")
    );
    assert!(operator_args(&cluster).namespace.is_empty());
    // Metrics for Prometheus where asked, and runner images beyond the operator's own.
    let scraped = support::helm_template(
        &helm,
        "mb",
        &env.namespace,
        &[
            "metrics.listen=0.0.0.0:9090",
            "allowedRunnerImages={reg.example/mb:*}",
        ],
    );
    let args = operator_args(&scraped);
    assert_eq!(args.metrics_listen, "0.0.0.0:9090");
    assert_eq!(args.allowed_runner_image, ["reg.example/mb:*"]);
    let d = scraped.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(
        d["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"],
        "9090"
    );

    let custom = support::helm_template(
        &helm,
        "mb",
        &env.namespace,
        &[
            "leaderElection=false",
            "watchNamespaces={benchmarks,lab}",
            "stallDeadline=90s",
        ],
    );
    let args = operator_args(&custom);
    assert!(!args.leader_election);
    assert_eq!(args.namespace, ["benchmarks", "lab"]);
    // Namespaced: a Role and RoleBinding in each watched namespace, no ClusterRole but nodes'.
    let placed: Vec<(String, String)> = custom
        .iter()
        .filter(|d| d["kind"] == "Role" || d["kind"] == "RoleBinding" || d["kind"] == "ClusterRole")
        .map(|d| {
            (
                format!(
                    "{} {}",
                    d["kind"].as_str().unwrap(),
                    d["metadata"]["name"].as_str().unwrap()
                ),
                d["metadata"]["namespace"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let pair = |k: &str, ns: &str| (k.to_owned(), ns.to_owned());
    assert_eq!(
        placed,
        [
            pair("ClusterRole mb-operator-nodes", ""),
            pair("Role mb-operator", "benchmarks"),
            pair("Role mb-operator", "lab"),
            pair("Role mb-operator-leader", &env.namespace),
            pair("RoleBinding mb-operator", "benchmarks"),
            pair("RoleBinding mb-operator", "lab"),
            pair("RoleBinding mb-operator-leader", &env.namespace),
        ]
    );
    assert_eq!(args.stall_deadline, std::time::Duration::from_secs(90));

    // Every object is valid for the API server (dry run: nothing is created).
    accepted(&env, &defaults).await;
}

/// Applies `docs` to the API server as a dry run (nothing is created); panics naming the
/// object it refuses.
async fn accepted(env: &support::KubeEnv, docs: &[serde_json::Value]) {
    let discovery = Discovery::new(env.client.clone()).run().await.unwrap();
    for doc in docs {
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

/// `helm` with `args`, in the repository: its success, standard output and standard error.
fn helm_run(helm: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(helm)
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const OPTIONS: &str = "\
imagePullSecrets: [{name: regcred}]
nodeSelector: {pool: ops}
tolerations: [{key: dedicated, operator: Equal, value: ops, effect: NoSchedule}]
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}]
metrics:
  listen: 0.0.0.0:9090
  serviceMonitor: {enabled: true, interval: 15s, labels: {release: prometheus}}
";

#[tokio::test]
async fn chart_places_pods_pulls_privately_serves_metrics_refuses_bad_values_and_notes_the_next_steps()
 {
    let helm = support::helm();
    let env = support::kube("op-chart-options").await;
    let values = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{}.yaml", env.namespace));
    std::fs::write(&values, OPTIONS).unwrap();
    let chart = repo().join("charts/mongobench");
    let (ok, out, err) = helm_run(
        &helm,
        &[
            "template",
            "mb",
            chart.to_str().unwrap(),
            "--namespace",
            &env.namespace,
            "-f",
            values.to_str().unwrap(),
        ],
    );
    assert!(ok, "helm template: {err}");
    let docs: Vec<serde_json::Value> = serde_yaml::Deserializer::from_str(&out)
        .map(|d| {
            use serde::Deserialize;
            serde_json::to_value(serde_yaml::Value::deserialize(d).unwrap()).unwrap()
        })
        .filter(|v| !v.is_null())
        .collect();
    let of = |kind: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind}"))
    };
    let pod = &of("Deployment")["spec"]["template"]["spec"];
    let given: serde_json::Value = serde_yaml::from_str(OPTIONS).unwrap();
    for key in [
        "imagePullSecrets",
        "nodeSelector",
        "tolerations",
        "affinity",
    ] {
        assert_eq!(pod[key], given[key], "the pod's {key}");
    }
    // The ServiceMonitor scrapes the Service's port, which selects the operator's pods.
    let service = of("Service");
    let monitor = of("ServiceMonitor");
    assert_eq!(
        service["spec"]["ports"][0],
        serde_json::json!({"name": "metrics", "port": 9090, "targetPort": "metrics"})
    );
    let pod_labels = &of("Deployment")["spec"]["template"]["metadata"]["labels"];
    for (k, v) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&pod_labels[k], v, "the Service selects the pods by {k}");
    }
    assert_eq!(
        monitor["spec"]["selector"]["matchLabels"],
        service["spec"]["selector"]
    );
    assert_eq!(
        monitor["spec"]["endpoints"],
        serde_json::json!([{"port": "metrics", "path": "/metrics", "interval": "15s"}])
    );
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
    // The API server takes all but the ServiceMonitor, whose CRD (the Prometheus Operator's)
    // this control plane does not have.
    let plain: Vec<serde_json::Value> = docs
        .iter()
        .filter(|d| d["kind"] != "ServiceMonitor")
        .cloned()
        .collect();
    accepted(&env, &plain).await;

    // The schema refuses a value of the wrong kind, naming it.
    for (bad, field) in [
        ("replicas=zero", "replicas"),
        ("stallDeadline=ten minutes", "stallDeadline"),
        ("metrics.serviceMonitor.enabled=maybe", "enabled"),
        ("replicaCount=2", "replicaCount"),
    ] {
        let (ok, _, err) = helm_run(
            &helm,
            &["template", "mb", chart.to_str().unwrap(), "--set", bad],
        );
        assert!(!ok, "helm template --set {bad} was accepted");
        assert!(
            err.contains(field) && err.contains("schema"),
            "--set {bad}: {err}"
        );
    }

    // The notes name the release's Deployment and what to do next.
    let (ok, notes, err) = helm_run(
        &helm,
        &[
            "install",
            "mb",
            chart.to_str().unwrap(),
            "--namespace",
            &env.namespace,
            "--dry-run=client",
            "-f",
            values.to_str().unwrap(),
        ],
    );
    assert!(ok, "helm install --dry-run=client: {err}");
    let notes = &notes[notes.find("NOTES:").expect("NOTES in the output")..];
    for line in [
        format!("The mongobench operator is installed as mb-operator in namespace {} (2 replicas, one leading), watching namespace {}.", env.namespace, env.namespace),
        format!("  kubectl -n {} rollout status deployment/mb-operator", env.namespace),
        "  kubectl get mongobenchmarks -n NS -o wide -w     # phase, progress, headline, ETA".to_owned(),
        "Metrics: port 9090 /metrics of each operator pod, behind Service mb-operator-metrics, scraped through ServiceMonitor mb-operator.".to_owned(),
    ] {
        assert!(notes.lines().any(|l| l == line), "{line:?} missing in:\n{notes}");
    }
    std::fs::remove_file(&values).unwrap();
}
