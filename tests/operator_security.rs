//! Server (replica-set members, sharded clusters' members and routers), runner and operator
//! pods pass the `restricted` Pod Security level of the real API server, for both image
//! families; a StatefulSet or runner Job whose pods admission refuses
//! (here a ResourceQuota, with the real quota admission and controller-manager) ends
//! `Stalled` naming the object; and no password (an external target's, holding `?`, `@`, `/`,
//! `%`, `:` or non-ASCII characters, escaped or not, or the generated admin password) appears
//! in status, events, ConfigMaps, Jobs, pods, runner logs or the operator's logs after runs
//! that fail on purpose.
mod operator_common;
mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, Event, Namespace, Pod, PodTemplateSpec, ResourceQuota, Secret, ServiceAccount,
};
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use mongobench::api::{MongoBenchmark, MongoBenchmarkSpec, StatusPhase};
use mongobench::operator::render::{jobs, servers};
use operator_common as common;
use serde::Deserialize;
use serde_json::{Value, json};
use support::passwords::{HOSTILE_PASSWORDS, assert_no_password, needs_escaping, percent_encoded};

/// Labels the test namespace to enforce the `restricted` Pod Security level.
async fn enforce_restricted(env: &support::KubeEnv) {
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    namespaces
        .patch(
            &env.namespace,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": "latest"
            }}})),
        )
        .await
        .unwrap();
}

/// Creates a Pod from `template` (dry run: admission decides, nothing is stored); the API
/// server's refusal, if any.
async fn admitted(
    env: &support::KubeEnv,
    name: &str,
    template: &PodTemplateSpec,
) -> Result<(), String> {
    let pod = Pod {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(name.to_owned()),
            labels: template.metadata.as_ref().and_then(|m| m.labels.clone()),
            ..Default::default()
        },
        spec: template.spec.clone(),
        ..Pod::default()
    };
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    pods.create(&params, &pod)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The member pod of `sts` as the StatefulSet controller makes it: each claim template
/// becomes a persistentVolumeClaim volume.
fn member(sts: &StatefulSet) -> PodTemplateSpec {
    let spec = sts.spec.as_ref().unwrap();
    let mut template = spec.template.clone();
    let pod = template.spec.as_mut().unwrap();
    for claim in spec.volume_claim_templates.iter().flatten() {
        let name = claim.metadata.name.clone().unwrap();
        pod.volumes.get_or_insert_with(Vec::new).push(
            serde_json::from_value(json!({"name": name,
                "persistentVolumeClaim": {"claimName": format!("{name}-psa-0")}}))
            .unwrap(),
        );
    }
    template
}

/// A benchmark as the API server would hand it to the operator (namespace and uid set).
fn benchmark_in(env: &support::KubeEnv, name: &str, spec: Value) -> MongoBenchmark {
    let spec: MongoBenchmarkSpec = serde_json::from_value(spec).unwrap();
    let mut b = MongoBenchmark::new(name, spec);
    b.metadata.namespace = Some(env.namespace.clone());
    b.metadata.uid = Some("7d0c4f2e-55a1-4d7e-9a3b-1c2d3e4f5a6b".into());
    b
}

fn both_families() -> Value {
    json!({
        "targets": [
            {"name": "mongo-8.0", "image": "mongo:8.0.26", "distribution": "community"},
            {"name": "psmdb-8.0", "image": "percona/percona-server-mongodb:8.0.32-14", "distribution": "percona"},
            {"name": "ext", "external": {"uriSecretRef": {"name": "ext-uri"}}}
        ],
        "platforms": [{"name": "c3", "nodeSelector": {"cloud.google.com/gke-nodepool": "c3-pool"},
                       "storageClassName": "testenv-local"}],
        "replicaSet": {"storageSize": "1Gi",
                       "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}},
        "dataset": {"sizes": ["1k"]},
        "workload": {"type": "flights"},
        "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}}
    })
}

#[tokio::test]
async fn every_server_runner_and_operator_pod_is_admitted_under_restricted() {
    let env = common::setup("sec-psa").await;
    enforce_restricted(&env).await;

    // The level is enforced: a pod without a seccomp profile or dropped capabilities is refused.
    let plain: PodTemplateSpec = serde_json::from_value(json!({
        "spec": {"containers": [{"name": "c", "image": "mongo:8.0.26"}]}
    }))
    .unwrap();
    let refused = admitted(&env, "plain", &plain).await.unwrap_err();
    assert!(
        refused.contains("violates PodSecurity \"restricted:latest\""),
        "{refused}"
    );

    for auth in [true, false] {
        let mut spec = both_families();
        spec["replicaSet"]["auth"] = json!(auth);
        let b = benchmark_in(&env, "psa", spec);
        let platform = &b.spec.platforms[0];
        for target in b.spec.targets.iter().filter(|t| t.is_provisioned()) {
            let objects = servers::server_objects(&b, target, platform, "mongobench:test").unwrap();
            admitted(
                &env,
                &format!("server-{auth}"),
                &member(&objects.stateful_set),
            )
            .await
            .unwrap_or_else(|e| panic!("server pod of {} (auth {auth}): {e}", target.name));
        }
        // The same targets as sharded clusters: every set's members and the routers.
        let mut sharded = both_families();
        sharded["replicaSet"]["auth"] = json!(auth);
        for t in sharded["targets"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .take(2)
        {
            t["topology"] = json!("sharded");
        }
        sharded["workload"]["sharding"] = json!({"collections": [
            {"collection": "flights", "shardKey": {"field": "flight_id", "type": "hashed"}}]});
        let sb = benchmark_in(&env, "psa", sharded);
        for target in sb.spec.targets.iter().filter(|t| t.is_provisioned()) {
            let objects = servers::sharded::sharded_objects(&sb, target, platform).unwrap();
            for set in &objects.sets {
                admitted(&env, &format!("set-{auth}"), &member(&set.stateful_set))
                    .await
                    .unwrap_or_else(|e| {
                        panic!("sharded member of {} (auth {auth}): {e}", target.name)
                    });
            }
            let routers = &objects.mongos.spec.as_ref().unwrap().template;
            admitted(&env, &format!("mongos-{auth}"), routers)
                .await
                .unwrap_or_else(|e| panic!("mongos pod of {} (auth {auth}): {e}", target.name));
        }

        if auth {
            // The runners' ServiceAccount, which the operator creates before any runner
            // (without its owner, which does not exist here: the garbage collector would
            // delete it).
            let mut account = jobs::runner_access(&b).unwrap().service_account;
            account.metadata.owner_references = None;
            Api::<ServiceAccount>::namespaced(env.client.clone(), &env.namespace)
                .create(&PostParams::default(), &account)
                .await
                .unwrap();
        }
        let targets: Vec<_> = b.spec.targets.iter().collect();
        let runner =
            jobs::runner_objects(&b, &targets, platform, vec![], &BTreeMap::new(), "img:1")
                .unwrap();
        let template = &runner.job.spec.as_ref().unwrap().template;
        admitted(&env, &format!("runner-{auth}"), template)
            .await
            .unwrap_or_else(|e| panic!("runner pod (auth {auth}): {e}"));
    }

    // The operator's own Deployment, as shipped in manifests/operator.yaml.
    let text = std::fs::read_to_string(common::repo("manifests/operator.yaml")).unwrap();
    let deployment: Deployment = serde_yaml::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).unwrap())
        .find(|d| d["kind"] == "Deployment")
        .map(|d| serde_json::from_value(d).unwrap())
        .expect("a Deployment in manifests/operator.yaml");
    let template = deployment.spec.unwrap().template;
    let account = template
        .spec
        .as_ref()
        .unwrap()
        .service_account_name
        .clone()
        .unwrap();
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": account}})).unwrap();
    Api::<ServiceAccount>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    admitted(&env, "operator", &template)
        .await
        .unwrap_or_else(|e| panic!("operator pod: {e}"));
}

#[tokio::test]
async fn the_operator_runs_a_benchmark_in_a_restricted_namespace() {
    // The real StatefulSet and Job controllers create the pods, under enforcement.
    let env = common::setup("sec-run").await;
    enforce_restricted(&env).await;
    let mut pvs = Vec::new();
    for target in ["mongo-8.0", "psmdb-8.0"] {
        let server = common::server("run", target, "c3");
        pvs.extend(common::volumes(&env, "testenv-local", &server, 3, "1Gi").await);
    }
    let _operator = common::start(&env, common::options(&env.namespace));
    let mut spec = both_families();
    spec["targets"].as_array_mut().unwrap().pop();
    spec["platforms"][0]["nodeSelector"] = json!({"cloud.google.com/gke-nodepool": "c3-pool"});
    common::apply(
        &env,
        &json!({"apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
                "metadata": {"name": "run"}, "spec": spec}),
    )
    .await;
    let job: Job = common::exists(&env, &common::platform_runner("run", "c3")).await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    let selector = format!("job-name={}", job.name_any());
    support::wait::until(Duration::from_secs(60), "the runner pod", || {
        let pods = pods.clone();
        let selector = selector.clone();
        async move {
            (!pods
                .list(&ListParams::default().labels(&selector))
                .await
                .ok()?
                .items
                .is_empty())
            .then_some(())
        }
    })
    .await;
    let servers = pods
        .list(&ListParams::default().labels("app.kubernetes.io/component=server"))
        .await
        .unwrap()
        .items;
    assert_eq!(servers.len(), 6, "every member was admitted and created");
    for pod in &servers {
        let spec = pod.spec.as_ref().unwrap();
        let sc = spec.security_context.as_ref().unwrap();
        let percona = pod.labels()["mongobench.io/target"] == "psmdb-8.0";
        let (user, group, fs) = if percona {
            (1001, 0, 1001)
        } else {
            (999, 999, 999)
        };
        assert_eq!(
            (
                sc.run_as_user,
                sc.run_as_group,
                sc.fs_group,
                sc.run_as_non_root
            ),
            (Some(user), Some(group), Some(fs), Some(true)),
            "{}",
            pod.name_any()
        );
    }
    common::delete_volumes(&env, &pvs).await;
}

/// A ResourceQuota that admits no pod at all.
async fn no_pods_quota(env: &support::KubeEnv) {
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}}
    }))
    .unwrap();
    Api::<ResourceQuota>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &quota)
        .await
        .unwrap();
}

#[tokio::test]
async fn servers_refused_by_a_quota_stall_the_benchmark_naming_the_statefulset() {
    let env = common::setup("sec-quota-sts").await;
    no_pods_quota(&env).await;
    let mut options = common::options(&env.namespace);
    options.stall_deadline = Duration::from_secs(5);
    let _operator = common::start(&env, options);
    common::apply(&env, &common::nowhere_benchmark("quota")).await;
    let sts = common::server("quota", "mongodb-8.0", "phantom-pool");
    let status = common::status_until(&env, "quota", Duration::from_secs(90), "Stalled", |s| {
        s.condition_is_true("Stalled")
    })
    .await;
    let stalled = status.condition("Stalled").unwrap();
    assert_eq!(stalled.reason, "FailedCreate", "{stalled:?}");
    assert!(
        stalled.message.starts_with(&format!(
            "servers of target mongodb-8.0 on platform phantom-pool: StatefulSet {sts} cannot create its pods: "
        )) && stalled.message.contains("no-pods"),
        "{}",
        stalled.message
    );
    let _: StatefulSet = common::exists(&env, &sts).await;
}

#[tokio::test]
async fn a_runner_refused_by_a_quota_stalls_the_benchmark_naming_the_job() {
    let env = common::setup("sec-quota-job").await;
    no_pods_quota(&env).await;
    let mut options = common::options(&env.namespace);
    options.stall_deadline = Duration::from_secs(5);
    let _operator = common::start(&env, options);
    common::apply(&env, &common::fast_slow_study("quota", 1)).await;
    let job = common::platform_runner("quota", "local");
    let status = common::status_until(&env, "quota", Duration::from_secs(90), "Stalled", |s| {
        s.condition_is_true("Stalled")
    })
    .await;
    let stalled = status.condition("Stalled").unwrap();
    assert_eq!(stalled.reason, "RunnerFailedCreate", "{stalled:?}");
    assert!(
        stalled.message.starts_with(&format!(
            "the runner of platform local: Job {job} cannot create its pod: "
        )) && stalled.message.contains("no-pods"),
        "{}",
        stalled.message
    );
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(env.client.clone(), &env.namespace);
    let warned = support::wait::until(Duration::from_secs(30), "the stall event", || {
        let events = events.clone();
        async move {
            events
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("RunnerFailedCreate"))
        }
    })
    .await;
    assert_eq!(warned.type_.as_deref(), Some("Warning"));
}

/// Everything the operator's in-process tracing writes, for the leak test.
fn operator_log() -> Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || SharedWriter(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other subscriber in this test binary");
        log
    })
    .clone()
}

struct SharedWriter(Arc<Mutex<Vec<u8>>>);

impl Write for SharedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn external(name: &str, secret: &str) -> Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [{"name": "ext", "external": {"uriSecretRef": {"name": secret}}}],
            "platforms": [{"name": "local"}],
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "dataset": {"sizes": ["100"]},
            "workload": {"type": "flights", "workers": 1, "duration": "2s", "warmup": "0s"},
            "repetitions": 1
        }
    })
}

/// Every object of kind `K` in `ns`, as JSON.
async fn listed<K>(client: &kube::Client, ns: &str) -> String
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
{
    let all = Api::<K>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap();
    serde_json::to_string(&all.items).unwrap()
}

/// The external benchmarks of the leak test: (benchmark, Secret, URI, what its cell's failure
/// says, the password in the URI).
fn leaking_uris(server_uri: &str) -> Vec<(String, String, String, &'static str, &'static str)> {
    let login = |password: &str| {
        server_uri.replacen("mongodb://", &format!("mongodb://bench:{password}@"), 1)
    };
    let all = HOSTILE_PASSWORDS[6];
    let escaped = login(&percent_encoded(all));
    let mut out = vec![
        // FerretDB offers no SCRAM: the runner fails to authenticate.
        (
            "leak-auth".into(),
            "auth-uri".into(),
            escaped.clone(),
            "target ext",
            all,
        ),
        // The driver refuses the option: the runner fails to parse the URI.
        (
            "leak-parse".into(),
            "parse-uri".into(),
            format!("{escaped}?maxPoolSize=lots"),
            "does not parse",
            all,
        ),
    ];
    // Unescaped: the runner refuses the URI naming the password; the non-ASCII one is valid
    // as written and fails to authenticate.
    for (i, password) in HOSTILE_PASSWORDS.into_iter().enumerate() {
        let says = if needs_escaping(password) {
            "does not parse: the password holds a"
        } else {
            "target ext"
        };
        out.push((
            format!("leak-raw-{i}"),
            format!("raw-uri-{i}"),
            login(password),
            says,
            password,
        ));
    }
    out
}

#[tokio::test]
async fn no_password_appears_in_status_events_configmaps_pods_or_logs() {
    let log = operator_log();
    let env = common::setup("sec-leak").await;
    let server = support::private_mongo("sec-leak");
    let leaking = leaking_uris(&server.uri);
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &env.namespace);
    for (_, name, uri, _, _) in &leaking {
        let s: Secret = serde_json::from_value(json!({
            "metadata": {"name": name}, "stringData": {"uri": uri}
        }))
        .unwrap();
        secrets.create(&PostParams::default(), &s).await.unwrap();
    }
    let _kubelet = testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    );
    let pvs = common::volumes(
        &env,
        "testenv-local",
        &common::server("gen", "mongo-8.0", "c3"),
        3,
        "1Gi",
    )
    .await;
    let _operator = common::start(&env, common::options(&env.namespace));
    for (benchmark, secret, _, _, _) in &leaking {
        common::apply(&env, &external(benchmark, secret)).await;
    }
    // A provisioned target whose runner no node takes: its Job and plan exist, with the
    // generated credentials referenced.
    let mut spec = both_families();
    spec["targets"] =
        json!([{"name": "mongo-8.0", "image": "mongo:8.0.26", "distribution": "community"}]);
    spec["client"] = json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "no-such-pool"}});
    common::apply(
        &env,
        &json!({"apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
                "metadata": {"name": "gen"}, "spec": spec}),
    )
    .await;

    for (name, _, _, says, password) in &leaking {
        let status = common::status_until(&env, name, Duration::from_secs(180), "Failed", |s| {
            s.phase == Some(StatusPhase::Failed)
        })
        .await;
        let message = &status.cells[0].message;
        assert!(
            message.as_deref().is_some_and(|m| m.contains(says)),
            "{name} ({password}): the failure path was not taken: {status:#?}"
        );
    }
    let job: Job = common::exists(&env, &common::runner("gen", "mongo-8.0", "c3")).await;
    let admin: Secret =
        common::exists(&env, &common::generated_secret(&env, "gen", "admin").await).await;
    let generated = String::from_utf8(admin.data.unwrap()["password"].0.clone()).unwrap();
    assert_eq!(generated.len(), 32);
    let env_of_runner = serde_json::to_string(
        &job.spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
            .env,
    )
    .unwrap();
    assert!(
        env_of_runner.contains("$(MONGOBENCH_TARGET_URI_PASSWORD)@"),
        "{env_of_runner}"
    );

    // Everything a user, a log collector or another tenant with read access could see.
    let ns = &env.namespace;
    let client = &env.client;
    let mut seen = vec![
        (
            "MongoBenchmarks",
            listed::<MongoBenchmark>(client, ns).await,
        ),
        ("Events", listed::<Event>(client, ns).await),
        ("ConfigMaps", listed::<ConfigMap>(client, ns).await),
        ("Jobs", listed::<Job>(client, ns).await),
        (
            "Pods (specs and termination messages)",
            listed::<Pod>(client, ns).await,
        ),
        ("StatefulSets", listed::<StatefulSet>(client, ns).await),
        (
            "operator log",
            String::from_utf8_lossy(&log.lock().unwrap()).into_owned(),
        ),
    ];
    let mut runner_logs = 0;
    for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        let dir = entry.file_name().to_string_lossy().into_owned();
        if !dir.starts_with(&format!("mongobench-kubelet-{ns}-")) {
            continue;
        }
        for file in ["stdout.log", "stderr.log"] {
            if let Ok(text) = std::fs::read_to_string(entry.path().join(file)) {
                runner_logs += 1;
                seen.push(("runner log", text));
            }
        }
    }
    assert!(
        runner_logs >= 2 * leaking.len(),
        "the runners of every failing benchmark left their logs"
    );
    assert!(
        seen[6].1.contains("acting"),
        "the operator log was captured: {}",
        seen[6].1
    );
    for (what, text) in &seen {
        assert!(
            !text.contains(generated.as_str()),
            "the generated password appears in {what}: {}",
            text.lines()
                .find(|l| l.contains(generated.as_str()))
                .unwrap_or_default()
        );
        for password in HOSTILE_PASSWORDS {
            assert_no_password(what, text, password);
        }
    }
    common::delete_volumes(&env, &pvs).await;
}
