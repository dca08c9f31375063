//! What a benchmark may have its pods read and run, on the real API server: a Secret its
//! namespace does not list in `mongobench.io/readable-secrets`, or a runner image the operator
//! does not allow, holds the benchmark `Pending` and `Stalled` with a Warning event naming the
//! field and the rule, and nothing is created that would hold the Secret or run the image; once
//! the namespace lists the Secrets, or the operator allows the image, the benchmark goes on.
mod operator_common;
mod support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use mongobench::api::StatusPhase;
use mongobench::operator::access::{IMAGE_NOT_ALLOWED, READABLE_SECRETS, SECRET_NOT_READABLE};
use operator_common as common;
use serde_json::{Value, json};

/// Sets (or, with `None`, removes) the test namespace's list of readable Secrets.
async fn readable(env: &support::KubeEnv, value: Option<&str>) {
    Api::<Namespace>::all(env.client.clone())
        .patch(
            &env.namespace,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {READABLE_SECRETS: value}}})),
        )
        .await
        .unwrap();
}

async fn none_of<K>(env: &support::KubeEnv, what: &str)
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned,
{
    let listed = Api::<K>::namespaced(env.client.clone(), &env.namespace)
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        listed.items.is_empty(),
        "{what} exist: {:?}",
        listed.items.iter().map(common::name_of).collect::<Vec<_>>()
    );
}

/// Waits for a Warning event of `reason`; returns its note.
async fn warned(env: &support::KubeEnv, reason: &str) -> String {
    let events: Api<Event> = Api::namespaced(env.client.clone(), &env.namespace);
    support::wait::until(Duration::from_secs(30), reason, || {
        let events = events.clone();
        async move {
            events
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .into_iter()
                .find(|e| {
                    e.reason.as_deref() == Some(reason) && e.type_.as_deref() == Some("Warning")
                })
                .and_then(|e| e.note)
        }
    })
    .await
}

async fn stalled(env: &support::KubeEnv, bench: &str, reason: &str, says: &str) -> String {
    let status = common::status_until(env, bench, Duration::from_secs(60), reason, |s| {
        s.condition("Stalled")
            .is_some_and(|c| c.status == "True" && c.reason == reason && c.message.contains(says))
    })
    .await;
    assert_eq!(status.phase, Some(StatusPhase::Pending), "{status:#?}");
    status.condition("Stalled").unwrap().message.clone()
}

#[tokio::test]
async fn a_benchmark_reads_only_the_secrets_its_namespace_lists() {
    let env = common::setup("access-secrets").await;
    readable(&env, None).await;
    common::uri_secret(&env, "a", "mongodb://127.0.0.1:1/").await;
    common::uri_secret(&env, "b", "mongodb://127.0.0.1:2/").await;
    let _operator = common::start(&env, common::options(&env.namespace));
    common::apply(&env, &common::fast_slow_study("study", 1)).await;

    let ns = &env.namespace;
    let message = stalled(&env, "study", SECRET_NOT_READABLE, "").await;
    assert_eq!(
        message,
        format!(
            "spec.targets[fast].external.uriSecretRef.name: Secret \"a\" may not be read by \
             benchmarks: namespace {ns} has no annotation mongobench.io/readable-secrets; \
             whoever administers the namespace lets benchmarks read a Secret by listing it \
             there (names separated by commas, or *); \
             spec.targets[slow].external.uriSecretRef.name: Secret \"b\" may not be read by \
             benchmarks: namespace {ns} has no annotation mongobench.io/readable-secrets; \
             whoever administers the namespace lets benchmarks read a Secret by listing it \
             there (names separated by commas, or *)"
        )
    );
    assert_eq!(warned(&env, SECRET_NOT_READABLE).await, message);
    // Nothing that would hand a pod the Secrets: no runner Job, not even its identity.
    none_of::<Job>(&env, "Jobs").await;
    let runners = mongobench::operator::render::names::runner_account("study");
    let account = Api::<ServiceAccount>::namespaced(env.client.clone(), &env.namespace)
        .get_opt(&runners)
        .await
        .unwrap();
    assert!(account.is_none(), "the runners' ServiceAccount exists");

    // One listed is not enough; both are.
    readable(&env, Some("a")).await;
    let message = stalled(&env, "study", SECRET_NOT_READABLE, "(\"a\")").await;
    assert!(
        message.starts_with(&format!(
            "spec.targets[slow].external.uriSecretRef.name: Secret \"b\" may not be read by \
             benchmarks: it is not in the annotation mongobench.io/readable-secrets of \
             namespace {ns} (\"a\")"
        )),
        "{message}"
    );
    none_of::<Job>(&env, "Jobs").await;
    readable(&env, Some("a, b")).await;
    let job: Job = common::exists(&env, &common::platform_runner("study", "local")).await;
    assert_eq!(
        common::name_of(&job),
        common::platform_runner("study", "local")
    );
}

/// The external study with `spec.client.image`.
fn with_image(name: &str, image: &str) -> Value {
    let mut doc = common::fast_slow_study(name, 1);
    doc["spec"]["client"] = json!({"image": image});
    doc
}

#[tokio::test]
async fn a_runner_image_the_operator_does_not_allow_runs_nowhere() {
    let env = common::setup("access-image").await;
    common::uri_secret(&env, "a", "mongodb://127.0.0.1:1/").await;
    common::uri_secret(&env, "b", "mongodb://127.0.0.1:2/").await;
    let operator = common::start(&env, common::options(&env.namespace));
    let own = common::options(&env.namespace).image;
    let image = "attacker.example/grab-secrets:1";
    common::apply(&env, &with_image("ext", image)).await;
    // A provisioned target: the runner's image would also run beside every member.
    let mut provisioned = common::nowhere_benchmark("prov");
    provisioned["spec"]["client"] = json!({"image": image});
    common::apply(&env, &provisioned).await;

    let expected = format!(
        "spec.client.image: \"{image}\" is not a runner image this operator allows: its own \
         ({own}) and what its --allowed-runner-image allows (none); the runner image holds the \
         benchmark's credentials and runs beside every provisioned member"
    );
    for bench in ["ext", "prov"] {
        assert_eq!(stalled(&env, bench, IMAGE_NOT_ALLOWED, "").await, expected);
    }
    assert_eq!(warned(&env, IMAGE_NOT_ALLOWED).await, expected);
    none_of::<Job>(&env, "Jobs").await;
    none_of::<StatefulSet>(&env, "StatefulSets").await;

    // The operator's administrator allows a registry: an image of it runs.
    operator.kill().await;
    let mut options = common::options(&env.namespace);
    options.allowed_runner_images = vec!["registry.example/mongobench:*".into()];
    let _operator = common::start(&env, options);
    common::apply(
        &env,
        &with_image("allowed", "registry.example/mongobench:2"),
    )
    .await;
    let job: Job = common::exists(&env, &common::platform_runner("allowed", "local")).await;
    let pod = job.spec.unwrap().template.spec.unwrap();
    assert_eq!(
        pod.containers[0].image.as_deref(),
        Some("registry.example/mongobench:2")
    );
}
