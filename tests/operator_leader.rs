//! Leader election on the real API server: one Lease, one leader; a standby takes over only
//! once it has seen the Lease unchanged for the lease duration, whatever its `renewTime` says;
//! two operator replicas never both reconcile.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use mongobench::operator::leader::{Candidate, LeaderElection};
use operator_common as common;
use serde_json::json;
use support::wait;

fn election(ns: &str, identity: &str) -> LeaderElection {
    LeaderElection {
        namespace: ns.into(),
        lease_name: "mongobench-operator".into(),
        identity: identity.into(),
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(300),
    }
}

fn candidate(env: &support::KubeEnv, identity: &str) -> Candidate {
    Candidate::new(env.client.clone(), election(&env.namespace, identity)).unwrap()
}

#[tokio::test]
async fn a_lease_has_one_holder_until_it_expires() {
    let env = support::kube("op-lease").await;
    let (mut a, mut b) = (candidate(&env, "a"), candidate(&env, "b"));
    assert!(a.try_acquire().await.unwrap(), "a free Lease is taken");
    assert!(!b.try_acquire().await.unwrap(), "a held Lease is not taken");
    assert!(a.try_acquire().await.unwrap(), "the holder renews");
    // b saw the Lease change (a renewed): it waits a whole lease from now.
    assert!(!b.try_acquire().await.unwrap());
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        b.try_acquire().await.unwrap(),
        "a Lease unchanged for its duration is taken"
    );
    assert!(!a.try_acquire().await.unwrap(), "the old holder lost it");
}

#[tokio::test]
async fn a_standby_does_not_take_a_lease_that_keeps_changing_however_old_its_renew_time() {
    // The holder's clock is an hour behind: every renewTime it writes looks expired to a
    // standby that compares it with its own clock. It renews all the same.
    let env = support::kube("op-lease-skew").await;
    let leases: Api<Lease> = Api::namespaced(env.client.clone(), &env.namespace);
    let renew = |n: u32| {
        let leases = leases.clone();
        async move {
            let an_hour_ago = k8s_openapi::jiff::Timestamp::now()
                - k8s_openapi::jiff::SignedDuration::from_secs(3600 - i64::from(n));
            let lease: Lease = serde_json::from_value(json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "mongobench-operator"},
                "spec": {"holderIdentity": "skewed", "leaseDurationSeconds": 2,
                         "renewTime": MicroTime(an_hour_ago)}
            }))
            .unwrap();
            leases
                .patch(
                    "mongobench-operator",
                    &PatchParams::apply("skewed-holder").force(),
                    &Patch::Apply(&lease),
                )
                .await
                .unwrap();
        }
    };
    renew(0).await;
    let mut standby = candidate(&env, "standby");
    for n in 1..=8 {
        assert!(
            !standby.try_acquire().await.unwrap(),
            "the standby took a Lease renewed {n} times in the last {:?}",
            Duration::from_millis(500) * n
        );
        renew(n).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The holder stops: once the record has not changed for its duration, it is taken.
    assert!(!standby.try_acquire().await.unwrap());
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(standby.try_acquire().await.unwrap());
}

#[tokio::test]
async fn two_replicas_reconcile_one_at_a_time_and_fail_over() {
    let env = common::setup("op-replicas").await;
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &env.namespace);
    let s: Secret = serde_json::from_value(json!({
        "metadata": {"name": "uri"}, "stringData": {"uri": "mongodb://127.0.0.1:27018/"}
    }))
    .unwrap();
    secrets.create(&PostParams::default(), &s).await.unwrap();

    let replica = |identity: &str| {
        let mut o = common::options(&env.namespace);
        o.leader_election = Some(election(&env.namespace, identity));
        common::start(&env, o)
    };
    let first = replica("first");
    // The first holds the Lease before the second starts.
    wait::until(Duration::from_secs(30), "the first replica to lead", || {
        let m = first.metrics.clone();
        async move {
            m.encode()
                .lines()
                .any(|l| l == "mongobench_leader 1")
                .then_some(())
        }
    })
    .await;
    let second = replica("second");
    common::apply(
        &env,
        &json!({
            "apiVersion": "mongobench.io/v1alpha1", "kind": "MongoBenchmark",
            "metadata": {"name": "ha"},
            "spec": {
                "targets": [{"name": "ext", "external": {"uriSecretRef": {"name": "uri"}}}],
                "platforms": [{"name": "local"}],
                "dataset": {"sizes": ["1k"]},
                "workload": {"type": "flights"},
                "client": {"nodeSelector": {"cloud.google.com/gke-nodepool": "client"}},
                "repetitions": 1
            }
        }),
    )
    .await;
    let job_name = common::runner("ha", "ext", "local");
    let original: Job = common::exists(&env, &job_name).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(first.metrics.reconciles() > 0);
    assert_eq!(second.metrics.reconciles(), 0, "the standby reconciled");
    assert!(
        second
            .metrics
            .encode()
            .lines()
            .any(|l| l == "mongobench_leader 0")
    );

    // The leader dies; the Job is lost; the standby takes over and puts it back.
    first.kill().await;
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), &env.namespace);
    jobs.delete(&job_name, &DeleteParams::background())
        .await
        .unwrap();
    let old_uid = original.metadata.uid.clone();
    wait::until(
        Duration::from_secs(60),
        "a new Job from the second replica",
        || {
            let jobs = jobs.clone();
            let job_name = job_name.clone();
            let old_uid = old_uid.clone();
            async move {
                let job = jobs.get_opt(&job_name).await.ok()??;
                (job.metadata.uid != old_uid && job.metadata.deletion_timestamp.is_none())
                    .then_some(())
            }
        },
    )
    .await;
    assert!(second.metrics.reconciles() > 0);
    assert!(
        second
            .metrics
            .encode()
            .lines()
            .any(|l| l == "mongobench_leader 1")
    );
    second.kill().await;
}
