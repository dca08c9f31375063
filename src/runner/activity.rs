//! Publishes what a runner Job is doing for the operator (`contract::activity`): the newest
//! activity is written by one background task whenever the runner starts seeding a size or a
//! cell enters another phase. Publishing never fails the run: a failed write is logged and
//! superseded by the next.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use tokio::sync::watch;

use super::sink::owner_reference;
use crate::contract::names::{self, RUNNER_FIELD_MANAGER};
use crate::contract::{Activity, JobPlan};

/// The activity ConfigMap of a runner.
pub fn activity_configmap(plan: &JobPlan, activity: Activity) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(names::activity_name(&plan.benchmark, &plan.platform)),
            namespace: plan.namespace.clone(),
            labels: Some(names::activity_labels(
                &plan.benchmark,
                &plan.run_id,
                &plan.platform,
            )),
            owner_references: owner_reference(plan).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(activity.into_data()),
        ..ConfigMap::default()
    }
}

/// Publishes a runner's newest activity in the background, until every clone is dropped.
#[derive(Clone)]
pub struct Publisher {
    latest: watch::Sender<Option<Activity>>,
}

impl Publisher {
    pub fn start(client: kube::Client, plan: &JobPlan) -> Publisher {
        let (latest, mut changes) = watch::channel(None::<Activity>);
        let plan = plan.clone();
        tokio::spawn(async move {
            let namespace = plan.namespace.clone().unwrap_or_else(|| "default".into());
            let api = Api::<ConfigMap>::namespaced(client, &namespace);
            let name = names::activity_name(&plan.benchmark, &plan.platform);
            while changes.changed().await.is_ok() {
                let Some(activity) = changes.borrow_and_update().clone() else {
                    continue;
                };
                let cm = activity_configmap(&plan, activity);
                let params = PatchParams::apply(RUNNER_FIELD_MANAGER).force();
                if let Err(e) = api.patch(&name, &params, &Patch::Apply(&cm)).await {
                    tracing::warn!(error = %e, configmap = %name, "publishing the runner's activity");
                }
            }
        });
        Publisher { latest }
    }

    /// Makes `activity` the newest; a write still under way is followed by this one.
    pub fn publish(&self, activity: Activity) {
        self.latest.send_if_modified(|latest| {
            let changed = latest.as_ref() != Some(&activity);
            *latest = Some(activity);
            changed
        });
    }
}
