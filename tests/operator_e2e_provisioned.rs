//! End to end with a server the operator provisioned: a MongoBenchmark whose target has an
//! image goes from apply to Completed, and the figures come from the replica set the operator
//! created. The operator runs in-process and creates the Secrets, the StatefulSet (one member,
//! pinned to the testenv's `local-wt` pool), its headless Service and NetworkPolicy; the real
//! scheduler binds the member to a `local-wt` node, where the testenv kubelet harness runs it
//! as SecantusDB (a MongoDB-wire server over WiredTiger) on a loopback address of its own,
//! creates the root user from the admin Secret as the image's entrypoint would, and reports
//! the pod Ready with that address as its IP. The operator then starts the runner Job on a
//! client node, where the harness runs it with the member's name written as that address and
//! the set name as the one SecantusDB advertises (`secantus`); the runner initiates the set
//! (answered `AlreadyInitialized`: a SecantusDB server is a one-member set from its start),
//! waits for the primary, logs in as root, seeds and measures it, asking the canary beside the
//! member for a probe of its node and for the member's CPU time.
//!
//! It runs in a test binary of its own: its member and runner share the machine with nothing
//! else of the suite.
mod operator_common;
mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, Secret, Service};
use kube::api::DeleteParams;
use mongobench::api::{CellPhase, StatusPhase};
use mongobench::measure::server::{CpuSource, FoundBy};
use operator_common as common;
use serde_json::json;

/// Names what the member really runs; the harness runs every `mongod` container of its pool
/// as SecantusDB whatever the image says.
const IMAGE: &str = "testenv.invalid/secantus:0.5.3-beta.196";
const CLASS: &str = "testenv-local";
const BENCH: &str = "prov";
const TARGET: &str = "secantus";
const PLATFORM: &str = "local-wt";

/// The testenv's `secantusd-rs`, built if missing (cached by version like every testenv
/// binary).
fn secantusd() -> PathBuf {
    let out = std::process::Command::new(common::repo("testenv/build"))
        .arg("secantus")
        .output()
        .expect("running testenv/build secantus");
    assert!(
        out.status.success(),
        "`testenv/build secantus` failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    support::kubectl().with_file_name("secantusd-rs")
}

fn benchmark() -> serde_json::Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": BENCH},
        "spec": {
            "targets": [{"name": TARGET, "image": IMAGE, "distribution": "community"}],
            "platforms": [{
                "name": PLATFORM,
                "nodeSelector": {"cloud.google.com/gke-nodepool": "local-wt"},
                "tolerations": [{"key": "mongobench.io/testenv-harness", "operator": "Equal",
                                 "value": "true", "effect": "NoSchedule"}],
                "storageClassName": CLASS
            }],
            // A 2 GiB limit: the operator gives mongod 0.5 GB of WiredTiger cache.
            "replicaSet": {"members": 1, "storageSize": "1Gi",
                           "resources": {"requests": {"cpu": "1", "memory": "2Gi"},
                                         "limits": {"cpu": "1", "memory": "2Gi"}}},
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "dataset": {"sizes": ["100", "200"]},
            "workload": {"type": "flights", "workers": 2, "duration": "3s", "warmup": "0s", "seed": 5},
            "repetitions": 1,
            "cleanupPolicy": "Retain"
        }
    })
}

async fn secret_value(env: &support::KubeEnv, name: &str, key: &str) -> String {
    let secret: Secret = common::exists(env, name).await;
    String::from_utf8(secret.data.unwrap()[key].0.clone()).unwrap()
}

#[tokio::test]
async fn a_provisioned_member_runs_for_real_and_the_runner_seeds_and_measures_it() {
    let env = common::setup("e2e-provisioned").await;
    let server = common::server(BENCH, TARGET, PLATFORM);
    common::storage_class(&env.client, CLASS).await;
    let volumes = common::volumes(&env, CLASS, &server, 1, "1Gi").await;
    let kubelet = testenv_kubelet::start_with_secantus(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
        &secantusd(),
    );
    let _operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &benchmark()).await;

    // The operator's replica set, its member bound to the harness's pool and run there.
    let sts: StatefulSet = common::exists(&env, &server).await;
    let pod_spec = sts.spec.unwrap().template.spec.unwrap();
    // The canary sidecar sees mongod's process, whose CPU time it reads.
    assert_eq!(pod_spec.share_process_namespace, Some(true));
    let args = pod_spec.containers[0].args.clone().unwrap();
    assert_eq!(
        args,
        [
            "--replSet",
            server.as_str(),
            "--bind_ip_all",
            "--auth",
            "--keyFile",
            "/etc/mongodb-keyfile/keyfile",
            "--wiredTigerCacheSizeGB",
            "0.5"
        ]
    );
    let _: Service = common::exists(&env, &server).await;
    let nodes = common::running_pod_nodes(
        &env,
        &format!("app.kubernetes.io/component=server,mongobench.io/benchmark={BENCH}"),
        1,
    )
    .await;
    assert!(nodes[0].starts_with("local-wt-"), "{nodes:?}");
    let members = kubelet.members.lock().unwrap().clone();
    assert_eq!(members.len(), 1, "{members:?}");
    let member = members[0].clone();
    assert_eq!(member.pod, format!("{}/{server}-0", env.namespace));
    assert_eq!(member.address.port(), 27017);
    let pod: Pod = common::exists(&env, &format!("{server}-0")).await;
    let pod_ip = pod.status.unwrap().pod_ip;
    assert_eq!(pod_ip, Some(member.address.ip().to_string()));

    let status = common::status_until(
        &env,
        BENCH,
        Duration::from_secs(300),
        "the benchmark to complete",
        |s| matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed)),
    )
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    assert_eq!(status.cells.len(), 2, "{:?}", status.cells);
    for cell in &status.cells {
        assert_eq!(cell.phase, CellPhase::Completed, "{cell:?}");
        assert!(cell.ops_per_second.is_some_and(|ops| ops > 0.0), "{cell:?}");
        // What the Grafana dashboard's CPU panel plots (the operator's result gauge).
        assert!(
            cell.server_cpu_micros_per_op.is_some_and(|cpu| cpu > 0.0),
            "{cell:?}"
        );
    }

    // Every result is of the member the harness ran: SecantusDB's version, the set name it
    // advertises, its address, and the node facts the operator read of its pod.
    let results = common::cell_results(
        &env,
        &format!("mongobench.io/cell,mongobench.io/benchmark={BENCH}"),
    )
    .await;
    assert_eq!(results.len(), 2, "one result per cell");
    for r in &results {
        assert!(r.is_complete(), "{}: {:?}", r.cell, r.status);
        assert!(r.measured.as_ref().unwrap().overall.completed > 0);
        assert_eq!(r.cell.target, TARGET);
        assert_eq!(
            r.server.version.as_deref(),
            Some("8.2.11"),
            "SecantusDB reports 8.2.11"
        );
        assert_eq!(r.server.topology.as_deref(), Some("replicaSet:secantus"));
        assert_eq!(r.server.image.as_deref(), Some(IMAGE));
        assert_eq!(r.nodes.len(), 1, "{:?}", r.nodes);
        assert_eq!(r.nodes[0].member, member.address.to_string());
        assert_eq!(r.nodes[0].node_name.as_ref(), Some(&nodes[0]));
        // The noise canary beside the member (its pod's sidecar, run by the harness on the
        // member's address) probed that node before the cell.
        assert_eq!(r.server_canaries.len(), 1, "{:?}", r.server_canaries);
        let canary = &r.server_canaries[0];
        assert_eq!(
            canary.address,
            format!("{}:27117", member.address.ip()),
            "{canary:?}"
        );
        assert_eq!(canary.error, None);
        let figures = canary.figures.expect("the server node's probe");
        assert!(
            figures.cpu_us > 0.0 && figures.memory_gbps > 0.0,
            "{figures:?}"
        );
        assert!(r.canary.is_some(), "the client's probe too");
        // SecantusDB reports no CPU time of its own: the same canary read the member's
        // process's (procfs) at the start and the end of the measured phase.
        let stats = r.server_stats.as_ref().expect("server figures");
        assert_eq!(stats.cpu_sources, [CpuSource::Procfs], "{stats:?}");
        assert!(stats.cpu_us_per_op.is_some_and(|c| c > 0.0), "{stats:?}");
        let os = stats.members[0]
            .os_cpu
            .as_ref()
            .expect("the canary's reading");
        assert_eq!(os.read_by, format!("canary {}:27117", member.address.ip()));
        assert_eq!(os.process, "secantusd-rs");
        assert_eq!(os.pid, member.pid);
        assert_eq!(os.found_by, FoundBy::ListeningPort);
        assert_eq!(stats.members[0].os_cpu_error, None);
        assert_eq!(
            r.dataset.seeded_documents,
            r.cell.size.parse::<u64>().unwrap()
        );
    }
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(
        started.len(),
        2,
        "the member and one runner pod: {started:?}"
    );

    // The data is on that server, behind the root user the operator generated.
    let admin = common::generated_secret(&env, BENCH, "admin").await;
    let user = secret_value(&env, &admin, "username").await;
    let password = secret_value(&env, &admin, "password").await;
    let uri = |auth: &str| {
        format!(
            "mongodb://{auth}{}/?directConnection=true&authSource=admin",
            member.address
        )
    };
    let root = mongodb::Client::with_uri_str(uri(&format!("{user}:{password}@")))
        .await
        .unwrap();
    let record = mongobench::runner::dataset::seed_flights::dataset_record(&root)
        .await
        .unwrap()
        .expect("the runner's dataset record");
    assert_eq!(record.documents, 200);
    let anonymous = mongodb::Client::with_uri_str(uri("")).await.unwrap();
    let refused = anonymous
        .database("airline")
        .run_command(mongodb::bson::doc! {"count": "flights"})
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("requires authentication"),
        "{refused}"
    );

    // Deleting the benchmark deletes the StatefulSet and its pod: the harness stops the member.
    common::benchmarks(&env)
        .delete(BENCH, &DeleteParams::default())
        .await
        .unwrap();
    stopped(member.address, member.pid).await;
    common::delete_volumes(&env, &volumes).await;
}

/// Waits until nothing listens at `address` any more and process `pid` is gone.
async fn stopped(address: SocketAddr, pid: u32) {
    support::wait::until(
        Duration::from_secs(90),
        "the member to stop",
        || async move {
            let listening = tokio::net::TcpStream::connect(address).await.is_ok();
            let running = Path::new(&format!("/proc/{pid}")).exists();
            (!listening && !running).then_some(())
        },
    )
    .await;
}
