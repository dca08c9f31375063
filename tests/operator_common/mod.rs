//! Shared steps of the operator tests against the testenv control plane: install the CRD,
//! run the operator in-process scoped to the test's namespace, apply benchmarks, play the
//! runner's part by writing result ConfigMaps exactly as the runner contract says, and
//! provide the StorageClasses and pre-bound PersistentVolumes provisioned servers claim.
#![allow(dead_code)] // each test binary uses a different part

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolume};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use mongobench::api::{self, MongoBenchmark, MongoBenchmarkStatus};
use mongobench::contract::JobPlan;
use mongobench::operator::metrics::Metrics;
use mongobench::operator::render::names;
use mongobench::operator::{Operator, OperatorOptions};
use mongobench::result::CellResult;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::support::{self, wait};

pub const MANAGER: &str = "mongobench-operator-tests";

/// Installs the generated CRD once per test binary and waits until it is Established.
pub async fn install_crd(client: &kube::Client) {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    INSTALLED
        .get_or_init(|| async {
            let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
            let crd = api::crd();
            let name = crd.metadata.name.clone().unwrap();
            crds.patch(
                &name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&crd),
            )
            .await
            .unwrap_or_else(|e| panic!("installing the CRD: {e}"));
            wait::until(Duration::from_secs(60), "the CRD to be Established", || {
                let crds = crds.clone();
                let name = name.clone();
                async move {
                    let crd = crds.get(&name).await.ok()?;
                    crd.status?
                        .conditions?
                        .into_iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                        .then_some(())
                }
            })
            .await;
        })
        .await;
}

/// A test namespace (deleted when dropped, also when the test fails, so its server pods
/// free the shared node pools) with the CRD installed.
pub struct TestEnv {
    env: support::KubeEnv,
}

impl std::ops::Deref for TestEnv {
    type Target = support::KubeEnv;
    fn deref(&self) -> &support::KubeEnv {
        &self.env
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let _ = std::process::Command::new(support::kubectl())
            .arg(format!("--kubeconfig={}", self.env.kubeconfig.display()))
            .args(["delete", "namespace", &self.env.namespace, "--wait=false"])
            .output();
    }
}

pub async fn setup(test: &str) -> TestEnv {
    let env = support::kube(test).await;
    install_crd(&env.client).await;
    TestEnv { env }
}

/// A running in-process operator.
pub struct RunningOperator {
    pub task: tokio::task::JoinHandle<Result<(), mongobench::operator::Error>>,
    pub metrics: Arc<Metrics>,
}

impl RunningOperator {
    /// Kills the operator (as a crash would: no clean shutdown).
    pub async fn kill(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

/// Options for an operator scoped to `namespace`, with a short resync.
pub fn options(namespace: &str) -> OperatorOptions {
    let mut o = OperatorOptions::new(
        Some(namespace.to_owned()),
        "registry.invalid/mongobench:test",
    );
    o.resync = Duration::from_secs(5);
    o
}

/// Starts the operator on the test's runtime.
pub fn start(env: &support::KubeEnv, options: OperatorOptions) -> RunningOperator {
    let operator = Operator::new(env.client.clone(), options);
    let metrics = operator.metrics();
    let task = tokio::spawn(operator.run());
    RunningOperator { task, metrics }
}

/// A benchmark of one provisioned target on a platform whose node pool does not exist: its
/// server pods are never scheduled.
pub fn nowhere_benchmark(name: &str) -> Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [{"name": "mongodb-8.0", "image": "mongo:8.0.26", "distribution": "community"}],
            "platforms": [{"name": "phantom-pool", "nodeSelector": {"cloud.google.com/gke-nodepool": "no-such-pool"},
                           "storageClassName": "testenv-local"}],
            "replicaSet": {"storageSize": "1Gi"},
            "dataset": {"sizes": ["1k"]},
            "workload": {"type": "flights"}
        }
    })
}

/// Two external targets `fast` and `slow` (the baseline) at 1k, flights, whose results the
/// test writes itself.
pub fn fast_slow_study(name: &str, repetitions: u32) -> Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [
                {"name": "fast", "external": {"uriSecretRef": {"name": "a", "key": "uri"}}},
                {"name": "slow", "external": {"uriSecretRef": {"name": "b", "key": "uri"}}}
            ],
            "platforms": [{"name": "local"}],
            "dataset": {"sizes": ["1k"]},
            "workload": {"type": "flights"},
            "repetitions": repetitions,
            "baseline": "slow"
        }
    })
}

/// A local address with a port that is free now (`support::free_port`).
pub fn free_local_addr() -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], support::free_port()))
}

/// The body of `GET path` from the operator's HTTP server at `addr`.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_owned()
}

pub fn repo(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// An example manifest with its GKE pool names mapped to the testenv's pools.
pub fn example(path: &str) -> Value {
    let text = std::fs::read_to_string(repo(path)).unwrap();
    let text = text
        .replace("gke-nodepool: c3-standard-4", "gke-nodepool: c3-pool")
        .replace("gke-nodepool: c4a-standard-4", "gke-nodepool: c4a-axion")
        .replace("gke-nodepool: clients", "gke-nodepool: client");
    serde_yaml::from_str(&text).unwrap()
}

pub fn benchmarks(env: &support::KubeEnv) -> Api<MongoBenchmark> {
    Api::namespaced(env.client.clone(), &env.namespace)
}

/// The Secret `name` holding `uri` under key `uri`, as an external target names it.
pub async fn uri_secret(env: &support::KubeEnv, name: &str, uri: &str) {
    let secret: k8s_openapi::api::core::v1::Secret = serde_json::from_value(json!({
        "metadata": {"name": name},
        "stringData": {"uri": uri}
    }))
    .unwrap();
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// Applies a MongoBenchmark manifest (server-side, strict) into the test namespace.
pub async fn apply(env: &support::KubeEnv, doc: &Value) -> MongoBenchmark {
    let name = doc["metadata"]["name"].as_str().unwrap();
    benchmarks(env)
        .patch(
            name,
            &PatchParams::apply(MANAGER).force().validation_strict(),
            &Patch::Apply(doc),
        )
        .await
        .unwrap_or_else(|e| panic!("applying MongoBenchmark {name}: {e}"))
}

/// Waits until the benchmark's status satisfies `pred`.
pub async fn status_until(
    env: &support::KubeEnv,
    name: &str,
    limit: Duration,
    what: &str,
    pred: impl Fn(&MongoBenchmarkStatus) -> bool,
) -> MongoBenchmarkStatus {
    let api = benchmarks(env);
    let pred = &pred;
    wait::until(limit, what, || {
        let api = api.clone();
        async move {
            let b = api.get(name).await.ok()?;
            let s = b.status?;
            pred(&s).then_some(s)
        }
    })
    .await
}

/// Waits until `check` of object `name` of kind `K` (`None` while it does not exist) gives a
/// value; a failed read is tried again.
async fn until_object<K, T>(
    env: &support::KubeEnv,
    name: &str,
    what: &str,
    check: impl Fn(Option<K>) -> Option<T>,
) -> T
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(env.client.clone(), &env.namespace);
    let check = &check;
    wait::until(Duration::from_secs(60), what, || {
        let api = api.clone();
        async move { check(api.get_opt(name).await.ok()?) }
    })
    .await
}

/// Waits for object `name` of kind `K` to exist.
pub async fn exists<K>(env: &support::KubeEnv, name: &str) -> K
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    until_object(env, name, &format!("{} {name}", K::kind(&())), |k| k).await
}

/// Waits for object `name` of kind `K` to be gone, or on its way (deleted in the
/// background: its deletion has begun).
pub async fn gone<K>(env: &support::KubeEnv, name: &str)
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let what = format!("{} {name} deleted", K::kind(&()));
    until_object(env, name, &what, |k: Option<K>| match k {
        Some(k) if k.meta().deletion_timestamp.is_none() => None,
        _ => Some(()),
    })
    .await
}

/// The plan of a runner Job, read from its plan ConfigMap.
pub async fn plan_of(env: &support::KubeEnv, job: &Job) -> JobPlan {
    let volume = job
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .volumes
        .as_ref()
        .unwrap();
    let cm_name = volume[0].config_map.as_ref().unwrap().name.clone();
    let cm: ConfigMap = exists(env, &cm_name).await;
    serde_yaml::from_str(&cm.data.unwrap()[names::PLAN_KEY]).unwrap()
}

/// Writes the result of `cell_id` as the runner does: a ConfigMap `<benchmark>-<cell id>`
/// labelled with benchmark, cell and run id, owned by the MongoBenchmark, `result.json`.
pub async fn write_result(
    env: &support::KubeEnv,
    plan: &JobPlan,
    cell_id: &str,
    result: &CellResult,
) {
    let name = names::result_name(&plan.benchmark, cell_id);
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "namespace": env.namespace,
            "labels": {
                "mongobench.io/benchmark": plan.benchmark,
                "mongobench.io/cell": cell_id,
                "mongobench.io/run-id": plan.run_id
            },
            "ownerReferences": [{
                "apiVersion": api::API_VERSION, "kind": api::KIND,
                "name": plan.benchmark, "uid": plan.uid
            }]
        },
        "data": {"result.json": result.to_json().unwrap()}
    }))
    .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    cms.create(&PostParams::default(), &cm)
        .await
        .unwrap_or_else(|e| panic!("writing result ConfigMap {name}: {e}"));
}

/// The cell results the runners wrote as ConfigMaps in the test's namespace, selected by
/// `labels` (e.g. `mongobench.io/benchmark=NAME`).
pub async fn cell_results(env: &support::KubeEnv, labels: &str) -> Vec<CellResult> {
    Api::<ConfigMap>::namespaced(env.client.clone(), &env.namespace)
        .list(&kube::api::ListParams::default().labels(labels))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|cm| cm.data?.remove("result.json"))
        .map(|json| CellResult::from_json(&json).unwrap())
        .collect()
}

/// Writes a result of 1000 ops/s for every cell of `target` at `sizes` × `repetitions` on
/// the plan's platform, as its runner would.
pub async fn write_cells(
    env: &support::KubeEnv,
    plan: &JobPlan,
    target: &str,
    sizes: &[&str],
    repetitions: u32,
) {
    for size in sizes {
        for rep in 1..=repetitions {
            let id = mongobench::plan::cell_id(target, &plan.platform, size, rep);
            write_result(env, plan, &id, &result_for(plan, size, rep, 1000)).await;
        }
    }
}

/// A complete result for a cell of the first target of `plan`.
pub fn result_for(plan: &JobPlan, size: &str, repetition: u32, ops: u64) -> CellResult {
    result_of(plan, &plan.targets[0].name, size, repetition, ops)
}

/// A complete result for a cell of `target` in `plan`.
pub fn result_of(
    plan: &JobPlan,
    target: &str,
    size: &str,
    repetition: u32,
    ops: u64,
) -> CellResult {
    let mut r = mongobench::operator::testing::result(
        &plan.benchmark,
        target,
        &plan.platform,
        size,
        repetition,
        10,
        &[("find", ops * 9 / 10, 150), ("insert", ops / 10, 400)],
        Some(25),
    );
    r.cell.run_id = plan.run_id.clone();
    r
}

/// A StorageClass without provisioner (applied idempotently: other tests share it).
pub async fn storage_class(client: &kube::Client, name: &str) {
    let sc: StorageClass = serde_json::from_value(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer"
    }))
    .unwrap();
    Api::<StorageClass>::all(client.clone())
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&sc),
        )
        .await
        .unwrap_or_else(|e| panic!("StorageClass {name}: {e}"));
}

/// PersistentVolumes pre-bound to the claims `data-<statefulset>-<i>` of `members` members.
/// Returns their names (delete them at the end of the test).
pub async fn volumes(
    env: &support::KubeEnv,
    class: &str,
    statefulset: &str,
    members: u32,
    size: &str,
) -> Vec<String> {
    let pvs: Api<PersistentVolume> = Api::all(env.client.clone());
    let mut names = Vec::new();
    for i in 0..members {
        let claim = format!("data-{statefulset}-{i}");
        let name = format!("{}-{claim}", env.namespace);
        let pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"mongobench.io/test-namespace": env.namespace}},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": class,
                "persistentVolumeReclaimPolicy": "Retain",
                "claimRef": {"namespace": env.namespace, "name": claim},
                "hostPath": {"path": format!("/nonexistent/{name}")}
            }
        }))
        .unwrap();
        pvs.create(&PostParams::default(), &pv)
            .await
            .unwrap_or_else(|e| panic!("PersistentVolume {name}: {e}"));
        names.push(name);
    }
    names
}

/// Deletes the PersistentVolumes a test created.
pub async fn delete_volumes(env: &support::KubeEnv, names: &[String]) {
    let pvs: Api<PersistentVolume> = Api::all(env.client.clone());
    for n in names {
        let _ = pvs.delete(n, &DeleteParams::default()).await;
    }
}

/// Name helper re-exported for the tests.
pub fn server(bench: &str, target: &str, platform: &str) -> String {
    names::server_name(bench, target, platform)
}

pub fn runner(bench: &str, target: &str, platform: &str) -> String {
    names::runner_name(bench, target, platform)
}

/// Name of the Job that runs every target of `platform` interleaved.
pub fn platform_runner(bench: &str, platform: &str) -> String {
    names::platform_runner_name(bench, platform)
}

pub fn name_of<K: Resource>(k: &K) -> String {
    k.meta().name.clone().unwrap_or_default()
}

pub fn labels_of<K: ResourceExt>(k: &K) -> std::collections::BTreeMap<String, String> {
    k.labels().clone()
}

/// Waits until `members` pods matching the label `selector` are bound and Running; returns
/// their nodes.
pub async fn running_pod_nodes(
    env: &support::KubeEnv,
    selector: &str,
    members: usize,
) -> Vec<String> {
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::namespaced(env.client.clone(), &env.namespace);
    wait::until(
        Duration::from_secs(120),
        &format!("{members} running pods ({selector})"),
        || {
            let pods = pods.clone();
            async move {
                let list = pods
                    .list(&kube::api::ListParams::default().labels(selector))
                    .await
                    .ok()?;
                let nodes: Vec<String> = list
                    .items
                    .iter()
                    .filter(|p| {
                        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                    })
                    .filter_map(|p| p.spec.as_ref()?.node_name.clone())
                    .collect();
                (nodes.len() == members).then_some(nodes)
            }
        },
    )
    .await
}
