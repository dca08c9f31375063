use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use serde_json::json;

use super::*;
use crate::result::CellResult;

fn job(conditions: serde_json::Value) -> Job {
    serde_json::from_value(json!({"metadata": {"name": "j"}, "status": {"conditions": conditions}}))
        .unwrap()
}

fn terminated_pod(exit: i32, message: Option<&str>, finished: &str) -> Pod {
    let mut terminated = json!({"exitCode": exit, "reason": "Error", "finishedAt": finished});
    if let Some(m) = message {
        terminated["message"] = json!(m);
    }
    serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "status": {"containerStatuses": [{
            "name": "runner", "image": "i", "imageID": "", "ready": false,
            "restartCount": 0, "state": {"terminated": terminated}
        }]}
    }))
    .unwrap()
}

#[test]
fn job_states_follow_the_job_conditions() {
    assert_eq!(job_state(&job(json!([])), &[]), JobState::Active);
    assert_eq!(
        job_state(&job(json!([{"type": "Complete", "status": "True"}])), &[]),
        JobState::Succeeded
    );
    let failed = job(json!([{"type": "Failed", "status": "True",
        "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]));
    assert_eq!(
        job_state(&failed, &[]),
        JobState::Failed {
            message: "BackoffLimitExceeded: Job has reached the specified backoff limit".into()
        }
    );
    // The newest terminated pod's message wins over the Job's reason.
    let pods = [
        terminated_pod(
            1,
            Some("target psmdb-8.0: connection refused"),
            "2026-01-01T00:00:10Z",
        ),
        terminated_pod(
            1,
            Some("target psmdb-8.0: seeding failed"),
            "2026-01-01T00:01:10Z",
        ),
    ];
    assert_eq!(
        job_state(&failed, &pods),
        JobState::Failed {
            message: "target psmdb-8.0: seeding failed".into()
        }
    );
    // Without a message, the exit code says something.
    assert_eq!(
        job_state(
            &failed,
            &[terminated_pod(137, None, "2026-01-01T00:00:10Z")]
        ),
        JobState::Failed {
            message: "runner exited with code 137 (Error)".into()
        }
    );
}

#[test]
fn pod_problems_name_the_image_or_the_scheduler_message() {
    let unschedulable: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/11 nodes are available"}]}
    }))
    .unwrap();
    assert_eq!(
        pod_problem(&unschedulable),
        Some(PodProblem::Unschedulable {
            message: "0/11 nodes are available".into()
        })
    );
    let pull: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "status": {"phase": "Pending", "containerStatuses": [{
            "name": "mongod", "image": "mongo:9.9.9", "imageID": "", "ready": false,
            "restartCount": 0,
            "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}
        }]}
    }))
    .unwrap();
    assert_eq!(
        pod_problem(&pull),
        Some(PodProblem::ImagePull {
            image: "mongo:9.9.9".into(),
            reason: "ImagePullBackOff".into(),
            message: "Back-off pulling image".into()
        })
    );
    let running: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    }))
    .unwrap();
    assert_eq!(pod_problem(&running), None);
    let crashing = |last: serde_json::Value| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "status": {"phase": "Running", "containerStatuses": [{
                "name": "mongod", "image": "percona/percona-server-mongodb:8.0.34-15",
                "imageID": "", "ready": false, "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
                "lastState": last
            }]}
        }))
        .unwrap()
    };
    assert_eq!(
        pod_problem(&crashing(
            json!({"terminated": {"reason": "OOMKilled", "exitCode": 137}})
        )),
        Some(PodProblem::CrashLoop {
            container: "mongod".into(),
            restarts: 4,
            last: "OOMKilled (exit code 137)".into()
        })
    );
    assert_eq!(
        pod_problem(&crashing(json!({}))),
        Some(PodProblem::CrashLoop {
            container: "mongod".into(),
            restarts: 4,
            last: "unknown".into()
        })
    );
}

#[test]
fn nodes_give_their_allocatable_readiness_and_cordon() {
    let node: Node = serde_json::from_value(json!({
        "metadata": {"name": "n2-icelake-0"},
        "spec": {"unschedulable": true},
        "status": {
            "allocatable": {"cpu": "3920m", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}]
        }
    }))
    .unwrap();
    assert_eq!(
        node_capacity(&node),
        NodeCapacity {
            name: "n2-icelake-0".into(),
            ready: true,
            schedulable: false,
            cpu_millis: Some(3920),
            memory_bytes: Some(16 << 30),
            pods: Some(110),
        }
    );
    let bare: Node = serde_json::from_value(json!({"metadata": {"name": "new"}})).unwrap();
    assert_eq!(
        node_capacity(&bare),
        NodeCapacity {
            name: "new".into(),
            ready: false,
            schedulable: true,
            ..NodeCapacity::default()
        }
    );
}

#[test]
fn runner_labels_map_back_to_their_runner() {
    let b = crate::operator::fixtures::bench("study", crate::operator::fixtures::STUDY);
    let slot = names::runner_labels("study", "x86", &["psmdb-8.0"]);
    assert_eq!(
        runner_of(&b, &slot),
        Some(RunnerKey::Target(("psmdb-8.0".into(), "x86".into())))
    );
    let platform = names::runner_labels("study", "x86", &["psmdb-8.0", "ext"]);
    assert_eq!(
        runner_of(&b, &platform),
        Some(RunnerKey::Platform("x86".into()))
    );
    let unknown = names::runner_labels("study", "gone", &["psmdb-8.0", "ext"]);
    assert_eq!(runner_of(&b, &unknown), None);
}

#[test]
fn a_document_of_another_benchmark_run_or_cell_is_refused() {
    let document = |benchmark: &str, run: &str, repetition: u32| {
        let mut id = crate::result::testing::cell("ext", "local", "1k", repetition);
        id.benchmark = benchmark.into();
        id.run_id = run.into();
        ObservedResult::Document {
            config_map: "b-cm".into(),
            result: Box::new(CellResult::empty(id, crate::result::CellStatus::Complete)),
        }
    };
    let cell = crate::plan::cell_id("ext", "local", "1k", 1);
    assert!(matches!(
        owned_result(document("b", "r1", 1), "b", "r1", &cell),
        ObservedResult::Document { .. }
    ));
    for (other, why) in [
        (
            document("other", "r1", 1),
            "cell ext.local.1k.r1 of benchmark other run r1",
        ),
        (
            document("b", "r0", 1),
            "cell ext.local.1k.r1 of benchmark b run r0",
        ),
        (
            document("b", "r1", 2),
            "cell ext.local.1k.r2 of benchmark b run r1",
        ),
    ] {
        assert_eq!(
            owned_result(other, "b", "r1", &cell),
            ObservedResult::Unreadable {
                config_map: "b-cm".into(),
                message: format!(
                    "result ConfigMap b-cm: its document is {why}, not cell ext.local.1k.r1 \
                     of benchmark b run r1; refused"
                ),
            }
        );
    }
}

#[test]
fn unreadable_results_say_why() {
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "b-c"}, "data": {"result.json": "{\"schemaVersion\": 7}"}
    }))
    .unwrap();
    match read_result(&cm) {
        ObservedResult::Unreadable { message, .. } => assert!(
            message.starts_with("result ConfigMap b-c: result document has schemaVersion 7"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
    let empty: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "b-d"}})).unwrap();
    assert_eq!(
        read_result(&empty),
        ObservedResult::Unreadable {
            config_map: "b-d".into(),
            message: "result ConfigMap b-d has no key result.json".into()
        }
    );
}

#[test]
fn a_result_counts_only_when_a_runner_job_of_the_benchmark_wrote_it() {
    let mut bench = crate::operator::fixtures::bench("study", crate::operator::fixtures::STUDY);
    let cm = |owners: serde_json::Value| -> ConfigMap {
        serde_json::from_value(json!({
            "metadata": {"name": "study-a.p.1k.r1", "ownerReferences": owners},
            "data": {"result.json": "{}"}
        }))
        .unwrap()
    };
    let job_owner = |uid: &str, controller: bool| {
        json!({"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": uid,
               "controller": controller})
    };
    let jobs = ["job-1".to_owned()];
    // The runner's: controlled by a Job of the benchmark.
    assert_eq!(
        results::not_from_runner(&bench, &cm(json!([job_owner("job-1", true)])), &jobs),
        None
    );
    // Labelled as a result by anyone else: owned by the benchmark only (as anyone may write),
    // by another Job, or naming the Job without being controlled by it.
    let refused = ObservedResult::Unreadable {
        config_map: "study-a.p.1k.r1".into(),
        message: "result ConfigMap study-a.p.1k.r1: not written by a runner Job of this \
                  benchmark (no Job of it controls the ConfigMap); refused"
            .into(),
    };
    let bench_owner = json!({"apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
                             "name": "study", "uid": bench.metadata.uid});
    for owners in [
        json!([bench_owner]),
        json!([job_owner("job-2", true)]),
        json!([job_owner("job-1", false)]),
        json!([]),
    ] {
        assert_eq!(
            results::not_from_runner(&bench, &cm(owners.clone()), &jobs),
            Some(refused.clone()),
            "{owners}"
        );
    }
    // Once its cell shows it, a result stays its cell's when its Job is gone.
    let shown: crate::api::MongoBenchmarkStatus = serde_json::from_value(json!({"cells": [{
        "id": "a.p.1k.r1", "target": "a", "platform": "p", "size": "1k", "repetition": 1,
        "phase": "Completed", "resultRef": {"configMap": "study-a.p.1k.r1"}
    }]}))
    .unwrap();
    bench.status = Some(shown);
    assert_eq!(
        results::not_from_runner(&bench, &cm(json!([bench_owner])), &[]),
        None
    );
}
