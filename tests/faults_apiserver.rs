//! The Kubernetes API server stopped and started again in the middle of a real run (a
//! control-plane upgrade): the operator's watches and status writes recover, the runner waits
//! out the outage to write its results, no Job is created twice, and every cell ends complete
//! and valid, once. Its own test binary: the API server it restarts is every test's.
mod faults_common;
mod operator_common;
mod support;

use std::time::Duration;

use faults_common as faults;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, ListParams};
use operator_common as common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_restarted_mid_run_loses_no_cell_and_creates_no_second_job() {
    let (env, _server, kubelet) = faults::environment("faults-apiserver").await;
    let operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &faults::benchmark("outage", &["100", "200"], 2)).await;

    faults::activity(&env, "outage", "measuring", Duration::from_secs(120)).await;
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.namespace);
    let before: Vec<_> = jobs.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(before.len(), 1, "one runner Job");
    tokio::task::spawn_blocking(|| support::restart_apiserver(Duration::from_secs(5)))
        .await
        .unwrap();

    faults::ends_whole(&env, "outage", 4, Duration::from_secs(300)).await;
    let after: Vec<_> = jobs.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(
        after.iter().map(|j| &j.metadata.uid).collect::<Vec<_>>(),
        before.iter().map(|j| &j.metadata.uid).collect::<Vec<_>>(),
        "the same Job, never created again"
    );
    let started = kubelet.started.lock().unwrap().clone();
    assert_eq!(
        started.len(),
        1,
        "the runner was never started again: {started:?}"
    );
    operator.kill().await;
}
