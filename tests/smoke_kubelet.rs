//! The client-node kubelet harness runs a Job's pod as a real process of the project's binary
//! and reports its outcome so the real Job controller completes or fails the Job.
mod support;

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use support::wait;

fn job(name: &str, args: serde_json::Value) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": {
                "restartPolicy": "Never",
                "nodeSelector": {"cloud.google.com/gke-nodepool": "client"},
                "containers": [{"name": "runner", "image": "mongobench:dev", "command": ["mongobench"], "args": args,
                    "volumeMounts": [{"name": "plan", "mountPath": "/etc/mongobench"}]}],
                "volumes": [{"name": "plan", "configMap": {"name": "files"}}]
            }}
        }
    }))
    .unwrap()
}

async fn finished(jobs: &Api<Job>, name: &str) -> String {
    wait::until(
        Duration::from_secs(90),
        &format!("job {name} to finish"),
        || async {
            let status = jobs.get(name).await.ok()?.status?;
            status
                .conditions?
                .into_iter()
                .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
                .map(|c| c.type_)
        },
    )
    .await
}

#[tokio::test]
async fn client_node_jobs_run_the_real_binary_and_report_exit_code_and_message() {
    let env = support::kube("kubelet-harness").await;
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.namespace);
    let files: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "files"},
        "data": {"good.yaml": include_str!("../examples/quickstart.yaml"), "bad.yaml": "kind: MongoBenchmark\nspec: {}\n"}
    }))
    .unwrap();
    cms.create(&PostParams::default(), &files).await.unwrap();
    let _kubelet = testenv_kubelet::start(
        env.client.clone(),
        &env.namespace,
        &env.kubeconfig,
        Path::new(env!("CARGO_BIN_EXE_mongobench")),
    );
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.namespace);
    jobs.create(
        &PostParams::default(),
        &job(
            "valid",
            json!(["validate", "-f", "/etc/mongobench/good.yaml"]),
        ),
    )
    .await
    .unwrap();
    jobs.create(
        &PostParams::default(),
        &job(
            "invalid",
            json!(["validate", "-f", "/etc/mongobench/bad.yaml"]),
        ),
    )
    .await
    .unwrap();

    assert_eq!(finished(&jobs, "valid").await, "Complete");
    assert_eq!(finished(&jobs, "invalid").await, "Failed");

    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.namespace);
    let failed = pods
        .list(&ListParams::default().labels("job-name=invalid"))
        .await
        .unwrap()
        .items;
    let pod = failed.first().expect("the failed Job's pod");
    assert!(
        pod.spec
            .as_ref()
            .unwrap()
            .node_name
            .as_deref()
            .unwrap()
            .starts_with("client-")
    );
    let state = pod
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()[0]
        .state
        .clone()
        .unwrap();
    let terminated = state.terminated.expect("a terminated container");
    assert_eq!(
        terminated.exit_code, 2,
        "validate exits 2 on an invalid manifest"
    );
}
