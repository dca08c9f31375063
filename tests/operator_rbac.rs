//! Least privilege, against the real API server, for both installs of the chart: what each
//! identity may do is exactly the documented matrix (tests/reliability/rbac.md, also in
//! RELIABILITY.md), as `kubectl auth can-i --list` reports it for the operator's and the
//! runner's ServiceAccounts in a watched namespace and in another, no verb more or fewer; the
//! namespaced install (the default) is enough for an in-process operator, authenticated as its
//! ServiceAccount, to take a provisioned benchmark from apply to Completed without a single
//! failed pass; and `kubectl auth can-i` denies, one by one, what they must never do.
mod operator_common;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{
    Api, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::Discovery;
use mongobench::api::StatusPhase;
use mongobench::operator::leader::LeaderElection;
use operator_common as common;
use serde_json::json;

/// The RBAC objects of the chart installed as release `release` in `env`'s namespace with
/// `--set` `values`, created for real; returns the cluster-scoped ones to delete.
async fn install_rbac(
    env: &support::KubeEnv,
    release: &str,
    values: &[&str],
) -> Vec<(kube::api::ApiResource, String)> {
    let ns = &env.namespace;
    let docs = support::helm_template(&support::helm(), release, ns, values);
    let discovery = Discovery::new(env.client.clone()).run().await.unwrap();
    let mut cluster_scoped = Vec::new();
    for doc in docs.iter().filter(|d| d["kind"] != "Deployment") {
        let gvk = GroupVersionKind::try_from(&kube::api::TypeMeta {
            api_version: doc["apiVersion"].as_str().unwrap().into(),
            kind: doc["kind"].as_str().unwrap().into(),
        })
        .unwrap();
        let (resource, caps) = discovery.resolve_gvk(&gvk).unwrap();
        let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
        let api: Api<DynamicObject> = if caps.scope == kube::discovery::Scope::Namespaced {
            Api::namespaced_with(
                env.client.clone(),
                doc["metadata"]["namespace"].as_str().unwrap(),
                &resource,
            )
        } else {
            cluster_scoped.push((resource.clone(), name.clone()));
            Api::all_with(env.client.clone(), &resource)
        };
        api.patch(
            &name,
            &PatchParams::apply("mongobench-rbac-test"),
            &Patch::Apply(doc),
        )
        .await
        .unwrap_or_else(|e| panic!("creating {} {name}: {e}", gvk.kind));
    }
    cluster_scoped
}

async fn uninstall(env: &support::KubeEnv, cluster_scoped: Vec<(kube::api::ApiResource, String)>) {
    for (resource, name) in cluster_scoped {
        let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
        let _ = api.delete(&name, &DeleteParams::default()).await;
    }
}

/// Where a row of the matrix applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Benchmarks,
    Operator,
    Cluster,
}

/// One row of tests/reliability/rbac.md.
#[derive(Debug, Clone)]
struct Row {
    identity: String,
    /// The resource as `kubectl auth can-i --list` names it, and whether the row is limited to
    /// named objects.
    resource: (String, bool),
    verbs: BTreeSet<String>,
    scope: Scope,
}

/// The documented matrix.
fn documented() -> Vec<Row> {
    let text = std::fs::read_to_string(common::repo("tests/reliability/rbac.md")).unwrap();
    let rows: Vec<Row> = text
        .lines()
        .filter(|l| l.starts_with("| operator |") || l.starts_with("| runner |"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let resource = cells[2].split('`').nth(1).expect("a `resource`").to_owned();
            let scope = match cells[4] {
                "benchmarks" => Scope::Benchmarks,
                "operator" => Scope::Operator,
                "cluster" => Scope::Cluster,
                other => panic!("tests/reliability/rbac.md: where {other:?}"),
            };
            Row {
                identity: cells[1].to_owned(),
                resource: (resource, cells[2].contains("by name")),
                verbs: cells[3].split(", ").map(str::to_owned).collect(),
                scope,
            }
        })
        .collect();
    assert!(
        rows.len() > 20,
        "the matrix of tests/reliability/rbac.md: {rows:?}"
    );
    rows
}

type Grants = BTreeMap<(String, bool), BTreeSet<String>>;

/// What the matrix grants `identity` in a namespace where `scopes` apply.
fn expected(rows: &[Row], identity: &str, scopes: &[Scope]) -> Grants {
    let mut out = Grants::new();
    for r in rows
        .iter()
        .filter(|r| r.identity == identity && scopes.contains(&r.scope))
    {
        out.entry(r.resource.clone())
            .or_default()
            .extend(r.verbs.iter().cloned());
    }
    out
}

/// What the API server grants ServiceAccount `sa` of `env`'s namespace in namespace `ns`
/// (`kubectl auth can-i --list`), without what every authenticated user may.
fn granted(env: &support::KubeEnv, sa: &str, ns: &str) -> Grants {
    let out = std::process::Command::new(support::kubectl())
        .env("KUBECONFIG", &env.kubeconfig)
        .args(["auth", "can-i", "--list", "-n", ns])
        .arg(format!("--as=system:serviceaccount:{}:{sa}", env.namespace))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl auth can-i --list: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut grants = Grants::new();
    // Resources   Non-Resource URLs   Resource Names   Verbs: bracketed lists after the first.
    for line in text.lines().skip(1) {
        let Some(resource) = line.split_whitespace().next() else {
            continue;
        };
        if resource.starts_with('[') || resource.starts_with("selfsubject") {
            continue;
        }
        let lists: Vec<&str> = line[resource.len()..]
            .split(']')
            .filter_map(|part| part.split_once('[').map(|(_, inside)| inside))
            .collect();
        let [_, names, verbs] = lists[..] else {
            panic!(
                "kubectl auth can-i --list: a line of {} lists: {line}",
                lists.len()
            );
        };
        grants
            .entry((resource.to_owned(), !names.trim().is_empty()))
            .or_default()
            .extend(verbs.split_whitespace().map(str::to_owned));
    }
    grants
}

/// Checks that `sa` is granted exactly what the matrix documents for `identity` in `ns`,
/// where `scopes` apply.
fn assert_exactly(env: &support::KubeEnv, sa: &str, identity: &str, ns: &str, scopes: &[Scope]) {
    let want = expected(&documented(), identity, scopes);
    let got = granted(env, sa, ns);
    assert!(
        got == want,
        "{identity} ({sa}) in namespace {ns} is granted other than tests/reliability/rbac.md \
         documents:\n  more: {:?}\n  fewer: {:?}",
        difference(&got, &want),
        difference(&want, &got)
    );
}

/// What `a` grants that `b` does not.
fn difference(a: &Grants, b: &Grants) -> Vec<String> {
    let mut out = Vec::new();
    for (resource, verbs) in a {
        for verb in verbs {
            if !b.get(resource).is_some_and(|v| v.contains(verb)) {
                out.push(format!(
                    "{verb} {}{}",
                    resource.0,
                    if resource.1 { " (named)" } else { "" }
                ));
            }
        }
    }
    out
}

/// A client authenticated as ServiceAccount `name` of the test namespace.
async fn client_as(env: &support::KubeEnv, name: &str) -> kube::Client {
    let sas: Api<ServiceAccount> = Api::namespaced(env.client.clone(), &env.namespace);
    let token = sas
        .create_token_request(
            name,
            &PostParams::default(),
            &serde_json::from_value(json!({"spec": {"audiences": [], "expirationSeconds": 3600}}))
                .unwrap(),
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token;
    let kc = Kubeconfig::read_from(&env.kubeconfig).unwrap();
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.expect("a token").into()),
        ..Default::default()
    };
    kube::Client::try_from(config).unwrap()
}

/// `kubectl auth can-i VERB RESOURCE[/NAME] [--subresource SUB] [-n NS]` as ServiceAccount
/// `sa` of `env`'s namespace; `resource` is written `RESOURCE[/NAME][#SUB]`.
fn can_i(env: &support::KubeEnv, sa: &str, verb: &str, resource: &str, ns: Option<&str>) -> bool {
    let mut cmd = std::process::Command::new(support::kubectl());
    let (resource, subresource) = match resource.split_once('#') {
        Some((r, sub)) => (r, Some(sub)),
        None => (resource, None),
    };
    cmd.env("KUBECONFIG", &env.kubeconfig)
        .args(["auth", "can-i", verb, resource])
        .arg(format!("--as=system:serviceaccount:{}:{sa}", env.namespace));
    if let Some(sub) = subresource {
        cmd.arg(format!("--subresource={sub}"));
    }
    match ns {
        Some(ns) => cmd.args(["-n", ns]),
        None => cmd.arg(format!("-n={}", env.namespace)),
    };
    let out = cmd.output().unwrap();
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        answer == "yes" || answer == "no",
        "kubectl auth can-i {verb} {resource}: {answer} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    answer == "yes"
}

/// Each (verb, resource, namespace) asked as `sa`, expecting `allowed`.
fn assert_matrix(
    env: &support::KubeEnv,
    sa: &str,
    allowed: bool,
    rows: &[(&str, &str, Option<&str>)],
) {
    let wrong: Vec<String> = rows
        .iter()
        .filter(|(verb, resource, ns)| can_i(env, sa, verb, resource, *ns) != allowed)
        .map(|(verb, resource, ns)| {
            format!("{verb} {resource} in {}", ns.unwrap_or(&env.namespace))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{sa} should {} be allowed to: {wrong:?}",
        if allowed { "" } else { "not" }
    );
}

#[tokio::test]
async fn the_namespaced_install_grants_exactly_the_matrix_and_is_enough_for_a_whole_benchmark() {
    let env = common::setup("op-rbac").await;
    let ns = env.namespace.clone();
    let release = format!("mb-{ns}");
    // The chart's defaults: the release's namespace watched, through a Role there.
    let cluster_scoped = install_rbac(&env, &release, &[]).await;
    let other = common::setup("op-rbac-other").await;
    let sa = format!("{release}-operator");
    // The watched namespace is the operator's own here; elsewhere only nodes.
    let all = [Scope::Benchmarks, Scope::Operator, Scope::Cluster];
    assert_exactly(&env, &sa, "operator", &ns, &all);
    assert_exactly(&env, &sa, "operator", &other.namespace, &[Scope::Cluster]);
    let operator_client = client_as(&env, &format!("{release}-operator")).await;

    let bench = "rbac";
    let mut pvs = Vec::new();
    for target in ["mongodb-8.0", "mongodb-8.3"] {
        let server = common::server(bench, target, "c3");
        pvs.extend(common::volumes(&env, "testenv-local", &server, 3, "1Gi").await);
    }
    let mut options = common::options(&ns);
    options.leader_election = Some(LeaderElection::new(ns.clone(), "rbac-test"));
    let operator = mongobench::operator::Operator::new(operator_client, options);
    let metrics = operator.metrics();
    let task = tokio::spawn(operator.run());

    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1",
            "kind": "MongoBenchmark",
            "metadata": {"name": bench},
            "spec": {
                "targets": [{"name": "mongodb-8.0", "image": "mongo:8.0.26", "distribution": "community"},
                            {"name": "mongodb-8.3", "image": "mongo:8.3.4", "distribution": "community"}],
                "platforms": [{"name": "c3", "nodeSelector": {"cloud.google.com/gke-nodepool": "c3-pool"},
                               "storageClassName": "testenv-local"}],
                "replicaSet": {"storageSize": "1Gi"},
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights"},
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "repetitions": 1
            }
        }),
    )
    .await;
    // The operator read the pool's nodes (the ClusterRole lets it): both replica sets fit on
    // c3, so one runner runs both targets.
    let job: Job = common::exists(&env, &common::platform_runner(bench, "c3")).await;
    let plan = common::plan_of(&env, &job).await;
    for target in ["mongodb-8.0", "mongodb-8.3"] {
        common::write_result(
            &env,
            &plan,
            &format!("{target}.c3.1k.r1"),
            &common::result_of(&plan, target, "1k", 1, 100),
        )
        .await;
    }
    let status = common::status_until(&env, bench, Duration::from_secs(60), "Completed", |s| {
        s.phase == Some(StatusPhase::Completed)
    })
    .await;
    assert_eq!(status.progress.as_deref(), Some("2/2"));
    assert_eq!(
        (
            status.runners[0].interleaved,
            status.runners[0].reason.as_str()
        ),
        (true, "Fits"),
        "{:?}",
        status.runners
    );
    // Servers deleted after their cell, events published, not one failed pass.
    let events: Api<Event> = Api::namespaced(env.client.clone(), &ns);
    let reasons = support::wait::until(Duration::from_secs(30), "the ServersDeleted event", || {
        let events = events.clone();
        async move {
            let reasons: Vec<String> = events
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .filter_map(|e| e.reason)
                .collect();
            reasons
                .iter()
                .any(|r| r == "ServersDeleted")
                .then_some(reasons)
        }
    })
    .await;
    for reason in [
        "ServersCreated",
        "ServersReady",
        "RunnerStarted",
        "CellCompleted",
        "Completed",
    ] {
        assert!(
            reasons.iter().any(|r| r == reason),
            "no {reason} event in {reasons:?}"
        );
    }
    // Authentication is on by default: the operator created, and never read, two Secrets.
    for which in ["keyfile", "admin"] {
        let name = common::generated_secret(&env, bench, which).await;
        let secret: Secret = common::exists(&env, &name).await;
        assert_eq!(
            secret.owner_references()[0].kind,
            "MongoBenchmark",
            "{name}"
        );
    }
    let text = metrics.encode();
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("mongobench_reconcile_errors_total{")),
        "passes failed under the namespaced install's roles:\n{text}"
    );
    task.abort();
    let _ = task.await;

    // The runners' identity, which the operator created: exactly its Role, here only.
    let runner = format!("{bench}-runner");
    assert_exactly(&env, &runner, "runner", &ns, &[Scope::Benchmarks]);
    assert_exactly(&env, &runner, "runner", &other.namespace, &[]);

    // What neither may ever do, asked one by one.
    let operator = format!("{release}-operator");
    let elsewhere = "kube-public";
    assert_matrix(
        &env,
        &operator,
        false,
        &[
            ("get", "secrets", None),
            ("list", "secrets", None),
            ("watch", "secrets", None),
            (
                "get",
                &format!(
                    "secrets/{}",
                    common::generated_secret(&env, bench, "admin").await
                ),
                None,
            ),
            ("patch", "secrets", None),
            ("create", "secrets", Some(elsewhere)),
            ("create", "pods#exec", None),
            ("patch", "nodes", None),
            ("delete", "nodes", None),
            ("delete", "jobs.batch", None),
            ("delete", "configmaps", None),
            ("update", "mongobenchmarks.mongobench.io#status", None),
            ("update", "leases.coordination.k8s.io", Some("kube-system")),
            ("create", "roles.rbac.authorization.k8s.io", Some(elsewhere)),
            (
                "create",
                "rolebindings.rbac.authorization.k8s.io",
                Some(elsewhere),
            ),
            ("get", "configmaps", Some(elsewhere)),
            ("create", "clusterroles.rbac.authorization.k8s.io", None),
            ("patch", "mongobenchmarks.mongobench.io", None),
            ("get", "namespaces/kube-public", Some(elsewhere)),
        ],
    );
    let own_result = format!("configmaps/{bench}-mongodb-8.0.c3.1k.r1");
    let own_activity = format!("configmaps/{bench}-c3-activity");
    assert_matrix(
        &env,
        &runner,
        true,
        &[
            ("create", "configmaps", None),
            ("patch", &own_result, None),
            ("get", &own_activity, None),
        ],
    );
    assert_matrix(
        &env,
        &runner,
        false,
        &[
            ("patch", "configmaps/other-mongodb-8.0.c3.1k.r1", None),
            ("get", "configmaps/rbac-run-c3-plan", None),
            ("list", "configmaps", None),
            ("get", "secrets", None),
            ("create", "pods#exec", None),
            ("get", "configmaps", Some(elsewhere)),
        ],
    );

    uninstall(&env, cluster_scoped).await;
    common::delete_volumes(&env, &pvs).await;
}

#[tokio::test]
async fn the_cluster_wide_install_grants_exactly_the_matrix_in_every_namespace() {
    let env = common::setup("op-rbac-cluster").await;
    let ns = env.namespace.clone();
    let release = format!("mb-{ns}");
    let cluster_scoped = install_rbac(&env, &release, &["clusterWide=true"]).await;
    let other = common::setup("op-rbac-cluster-other").await;
    let sa = format!("{release}-operator");
    let all = [Scope::Benchmarks, Scope::Operator, Scope::Cluster];
    assert_exactly(&env, &sa, "operator", &ns, &all);
    // Every namespace is a benchmarks' namespace; the Lease stays in the operator's.
    let elsewhere = [Scope::Benchmarks, Scope::Cluster];
    assert_exactly(&env, &sa, "operator", &other.namespace, &elsewhere);
    assert_exactly(&env, &sa, "operator", "kube-system", &elsewhere);
    assert_matrix(
        &env,
        &sa,
        false,
        &[
            ("get", "secrets", Some("kube-system")),
            ("update", "leases.coordination.k8s.io", Some("kube-system")),
        ],
    );
    uninstall(&env, cluster_scoped).await;
}
