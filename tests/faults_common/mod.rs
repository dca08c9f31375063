//! Shared by the operator fault suites: a benchmark run for real by the client-node kubelet
//! harness against a private FerretDB (also the end-to-end tests' setting), or against a
//! replica set the operator provisions with authentication (its member run by the harness as
//! SecantusDB), and the checks every fault must pass afterwards.
#![allow(dead_code)] // each fault suite uses a different part

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, PostParams};
use mongobench::api::{CellPhase, MongoBenchmarkStatus, StatusPhase};
use mongobench::result::CellResult;
use serde_json::json;

use crate::operator_common::{self as common, RunningOperator, TestEnv};
use crate::support;
use mongobench::operator::leader::LeaderElection;

/// A flights benchmark of one external target: `sizes` × `repetitions` short measured runs
/// by 2 workers, the runner pinned to the client pool.
pub fn benchmark(name: &str, sizes: &[&str], repetitions: u32) -> serde_json::Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [{"name": "ferretdb", "external": {"uriSecretRef": {"name": "db", "key": "uri"}}}],
            "platforms": [{"name": "local"}],
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "dataset": {"sizes": sizes},
            "workload": {"type": "flights", "workers": 2, "duration": "3s", "warmup": "0s", "seed": 5},
            "repetitions": repetitions,
            "cleanupPolicy": "Retain"
        }
    })
}

/// A test namespace with the Secret naming a private FerretDB, and the client-node kubelet.
pub async fn environment(test: &str) -> (TestEnv, support::PrivateMongo, testenv_kubelet::Kubelet) {
    let env = common::setup(test).await;
    let server = support::private_mongo(test);
    let kubelet = db_and_kubelet(&env, &server.uri).await;
    (env, server, kubelet)
}

/// The Secret `db` (key `uri`) naming `uri`, and the client-node kubelet, in `env`'s namespace.
pub async fn db_and_kubelet(env: &TestEnv, uri: &str) -> testenv_kubelet::Kubelet {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "stringData": {"uri": uri}
    }))
    .unwrap();
    Api::<Secret>::namespaced(env.client.clone(), &env.namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    )
}

/// Waits for the benchmark to end and checks what every fault must leave: `Completed`, each of
/// the `cells` cells once in status and `Completed`, one result ConfigMap each whose
/// document is complete and valid, seeded to its size, and of the same seeded data as every
/// other cell of its size.
pub async fn ends_whole(
    env: &TestEnv,
    bench: &str,
    cells: usize,
    limit: Duration,
) -> (MongoBenchmarkStatus, Vec<CellResult>) {
    let status = common::status_until(env, bench, limit, "the benchmark to end", |s| {
        matches!(s.phase, Some(StatusPhase::Completed | StatusPhase::Failed))
    })
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Completed), "{status:#?}");
    let mut ids: Vec<&str> = status.cells.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), cells, "every cell once: {:?}", status.cells);
    assert_eq!(
        status.cells.len(),
        cells,
        "no cell twice: {:?}",
        status.cells
    );
    for c in &status.cells {
        assert_eq!(c.phase, CellPhase::Completed, "{c:?}");
    }

    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    let of_bench = format!("mongobench.io/cell,mongobench.io/benchmark={bench}");
    let listed = cms
        .list(&ListParams::default().labels(&of_bench))
        .await
        .unwrap();
    let results: Vec<CellResult> = listed
        .items
        .iter()
        .map(|cm| CellResult::from_json(&cm.data.as_ref().unwrap()["result.json"]).unwrap())
        .collect();
    assert_eq!(results.len(), cells, "one result ConfigMap per cell");
    for r in &results {
        assert!(r.is_complete(), "{}: {:?}", r.cell, r.status);
        assert!(
            r.invalid_reasons.is_empty(),
            "{}: {:?}",
            r.cell,
            r.invalid_reasons
        );
        let size: u64 = r.cell.size.parse().expect("sizes are document counts");
        assert_eq!(r.dataset.seeded_documents, size, "{}", r.cell);
        let same_size = results.iter().filter(|o| o.cell.size == r.cell.size);
        for other in same_size {
            assert_eq!(
                r.dataset.digest, other.dataset.digest,
                "{} and {} ran on different data",
                r.cell, other.cell
            );
        }
    }
    (status, results)
}

/// The result documents written so far, by ConfigMap name.
pub async fn results(env: &TestEnv) -> std::collections::BTreeMap<String, String> {
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    cms.list(&ListParams::default().labels("mongobench.io/cell"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|cm| {
            let name = cm.metadata.name?;
            Some((name, cm.data?.remove("result.json")?))
        })
        .collect()
}

/// Kills (SIGKILL) every runner process the harness runs for `namespace`, found by the
/// scratch directory it runs in and its command (`run --plan`: not a member's server or its
/// canary); returns how many.
pub fn kill_runners(namespace: &str) -> usize {
    let prefix = std::env::temp_dir().join(format!("mongobench-kubelet-{namespace}-"));
    let prefix = prefix.to_string_lossy().into_owned();
    let mut killed = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let command = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let runs_a_plan = command.split(|&b| b == 0).any(|arg| arg == b"--plan");
        if cwd.to_string_lossy().starts_with(&prefix) && runs_a_plan {
            // SAFETY: kill(2) on a process of this test's own harness.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
    }
    killed
}

/// Polls `probe` every 50 ms until it holds, for at most `limit`.
pub async fn until(limit: Duration, what: &str, mut probe: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !probe() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits `limit` at most for the benchmark's progress to show a cell in `activity`.
pub async fn activity(env: &TestEnv, bench: &str, activity: &str, limit: Duration) {
    let what = format!("a cell {activity}");
    common::status_until(env, bench, limit, &what, |s| {
        s.progress.as_deref().is_some_and(|p| p.contains(activity))
    })
    .await;
}

/// The election of the fault suites' replicas: a 3 s lease, a 2 s renew deadline, a look every
/// 500 ms.
pub fn election(namespace: &str, identity: &str) -> LeaderElection {
    LeaderElection {
        namespace: namespace.to_owned(),
        lease_name: "mongobench-operator".into(),
        identity: identity.into(),
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(500),
    }
}

fn leads(replica: &RunningOperator) -> bool {
    replica
        .metrics
        .encode()
        .lines()
        .any(|l| l == "mongobench_leader 1")
}

/// Two operator replicas of `env`'s namespace: the leader, which reaches the API server
/// through a proxy of its own, and a standby started once the leader leads.
pub struct Replicas {
    pub leader: RunningOperator,
    pub standby: RunningOperator,
    proxy: support::proxy::TcpProxy,
}

impl Replicas {
    pub async fn start(env: &TestEnv) -> Replicas {
        let replica = |identity: &str| {
            let mut o = common::options(&env.namespace);
            o.leader_election = Some(election(&env.namespace, identity));
            o
        };
        let (client, proxy) = support::kube_client_through_proxy().await;
        let leader = common::start_with(client, replica("first"));
        until(Duration::from_secs(30), "the first replica to lead", || {
            leads(&leader)
        })
        .await;
        let standby = common::start(env, replica("second"));
        Replicas {
            leader,
            standby,
            proxy,
        }
    }

    /// Cuts the leader off from the API server (its proxy passes nothing from now on, and
    /// refuses nothing either: its requests hang) and checks that it stops leading within
    /// its renew deadline and before the standby leads. Returns the standby, leading.
    pub async fn cut_leader_off(self) -> RunningOperator {
        let Replicas {
            mut leader,
            standby,
            proxy,
        } = self;
        let renew_deadline = election("", "").renew_deadline;
        let metrics = standby.metrics.clone();
        let standby_leads = tokio::spawn(async move {
            while !metrics.encode().lines().any(|l| l == "mongobench_leader 1") {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            std::time::Instant::now()
        });
        proxy.stall();
        let cut = std::time::Instant::now();
        let ended = tokio::time::timeout(renew_deadline * 5, &mut leader.task)
            .await
            .expect("the cut-off leader still runs five renew deadlines after the cut");
        let stopped = std::time::Instant::now();
        let message = match ended {
            Ok(Err(mongobench::operator::Error::Leader(message))) => message,
            other => panic!("the cut-off leader ended otherwise: {other:?}"),
        };
        assert!(!leads(&leader), "the cut-off leader still says it leads");
        let led = tokio::time::timeout(Duration::from_secs(60), standby_leads)
            .await
            .expect("the standby leads within 60 s")
            .unwrap();
        eprintln!(
            "the cut-off leader stopped {:?} after the cut ({message}); the standby led {:?} \
             after that",
            stopped - cut,
            led.saturating_duration_since(stopped)
        );
        // Its last renewal was sent before the cut: it stops by then plus the renew deadline
        // (a second allowed for a loaded machine's timers).
        assert!(
            stopped - cut <= renew_deadline + Duration::from_secs(1),
            "the cut-off leader stopped {:?} after the cut, past its renew deadline {renew_deadline:?}",
            stopped - cut
        );
        assert!(
            stopped < led,
            "the standby led {:?} before the cut-off leader stopped",
            stopped - led
        );
        standby
    }
}

/// The storage class and platform of provisioned fault runs: the harness's `local-wt` pool.
pub const LOCAL_WT: &str = "local-wt";
const CLASS: &str = "testenv-local";

/// A flights benchmark of one target the operator provisions (one member, authentication on,
/// as by default) on the harness's `local-wt` pool: `sizes` × `repetitions` short measured
/// runs by 2 workers, the runner pinned to the client pool.
pub fn provisioned(name: &str, sizes: &[&str], repetitions: u32) -> serde_json::Value {
    json!({
        "apiVersion": "mongobench.io/v1alpha1",
        "kind": "MongoBenchmark",
        "metadata": {"name": name},
        "spec": {
            "targets": [{"name": "secantus", "image": "testenv.invalid/secantus:0.5.3-beta.196",
                         "distribution": "community"}],
            "platforms": [{
                "name": LOCAL_WT,
                "nodeSelector": {"cloud.google.com/gke-nodepool": LOCAL_WT},
                "tolerations": [{"key": "mongobench.io/testenv-harness", "operator": "Equal",
                                 "value": "true", "effect": "NoSchedule"}],
                "storageClassName": CLASS
            }],
            "replicaSet": {"members": 1, "storageSize": "1Gi"},
            "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
            "dataset": {"sizes": sizes},
            "workload": {"type": "flights", "workers": 2, "duration": "3s", "warmup": "0s",
                         "seed": 5, "operationTimeout": "2s"},
            "repetitions": repetitions,
            "cleanupPolicy": "Retain"
        }
    })
}

/// A test namespace where the harness runs provisioned members as SecantusDB and runners as
/// the project's binary, with the volume of benchmark `bench`'s one member; returns the
/// volumes to delete at the end.
pub async fn provisioned_environment(
    test: &str,
    bench: &str,
) -> (TestEnv, testenv_kubelet::Kubelet, Vec<String>) {
    let env = common::setup(test).await;
    common::storage_class(&env.client, CLASS).await;
    let server = common::server(bench, "secantus", LOCAL_WT);
    let volumes = common::volumes(&env, CLASS, &server, 1, "1Gi").await;
    let kubelet = testenv_kubelet::start_with_secantus(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
        &secantusd(),
    );
    (env, kubelet, volumes)
}

/// The testenv's `secantusd-rs`, built if missing.
pub fn secantusd() -> std::path::PathBuf {
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
