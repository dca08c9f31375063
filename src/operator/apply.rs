//! Carries out decisions: renders each action's objects and writes them by server-side apply
//! (field manager `mongobench`), deletes finished servers, writes the status only when it
//! differs from the stored one, and publishes the transition events. Every write is counted
//! in the metrics, which is how the idle test proves an idle benchmark writes nothing.

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{ObjectReference, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::context::Context;
use super::decide::Change;
use super::error::Error;
use super::observe::facts;
use super::render::{jobs, names, secrets, servers};
use super::status::events::{EventSpec, Related};
use crate::api::{API_VERSION, KIND, MongoBenchmark, MongoBenchmarkStatus};
use crate::operator::error::SpecError;

/// Field manager of every server-side apply the operator makes.
pub const FIELD_MANAGER: &str = "mongobench";

async fn apply<K>(ctx: &Context, ns: &str, obj: &K) -> Result<(), Error>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug,
{
    let name = obj.name_any();
    let kind = K::kind(&());
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    ctx.metrics.wrote(&kind);
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(obj),
    )
    .await
    .map_err(|e| Error::kube(format!("applying {kind} {ns}/{name}"), e))?;
    Ok(())
}

/// Creates the generated Secrets of `bench` that do not exist yet. Created, never applied or
/// read: an existing Secret keeps its keyfile and password, and the operator needs only the
/// right to create Secrets.
async fn create_secrets(ctx: &Context, bench: &MongoBenchmark, ns: &str) -> Result<(), Error> {
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), ns);
    for secret in secrets::generated(bench)? {
        let name = secret.name_any();
        ctx.metrics.wrote("Secret");
        match api.create(&PostParams::default(), &secret).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(Error::kube(format!("creating Secret {ns}/{name}"), e)),
        }
    }
    Ok(())
}

async fn delete<K>(ctx: &Context, ns: &str, name: &str) -> Result<(), Error>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let kind = K::kind(&());
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    ctx.metrics.wrote(&kind);
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(Error::kube(format!("deleting {kind} {ns}/{name}"), e)),
    }
}

fn find<'a, T>(
    items: &'a [T],
    name: &str,
    of: impl Fn(&T) -> &str,
    what: &'static str,
) -> Result<&'a T, Error> {
    items.iter().find(|t| of(t) == name).ok_or_else(|| {
        SpecError::Unknown {
            field: what,
            name: name.to_owned(),
            among: "the spec",
        }
        .into()
    })
}

/// Carries out one action and returns the event that announces it.
///
/// # Errors
/// [`Error::Kube`] when a write fails; [`Error::Spec`]/[`Error::Incomplete`] when the objects
/// cannot be rendered.
pub async fn execute(
    ctx: &Context,
    bench: &MongoBenchmark,
    action: &Change,
) -> Result<Option<EventSpec>, Error> {
    let ns = bench
        .namespace()
        .ok_or_else(|| Error::Incomplete(bench.name_any()))?;
    let spec = &bench.spec;
    let target_of = |t: &str| find(&spec.targets, t, |x| x.name.as_str(), "target");
    let platform_of = |p: &str| find(&spec.platforms, p, |x| x.name.as_str(), "platform");
    match action {
        Change::DeleteBenchmark => {
            let name = bench.name_any();
            let api: Api<MongoBenchmark> = Api::namespaced(ctx.client.clone(), &ns);
            ctx.metrics.wrote("MongoBenchmark");
            match api.delete(&name, &DeleteParams::background()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => {
                    return Err(Error::kube(
                        format!("deleting MongoBenchmark {ns}/{name}"),
                        e,
                    ));
                }
            }
            Ok(None)
        }
        Change::CreateServers { target, platform } => {
            let (target, platform) = (target_of(target)?, platform_of(platform)?);
            if spec.replica_set().auth() {
                create_secrets(ctx, bench, &ns).await?;
            }
            if target.is_sharded() {
                return create_sharded(ctx, bench, &ns, target, platform).await;
            }
            let image = jobs::runner_image(bench, &ctx.options.image);
            let objects = servers::server_objects(bench, target, platform, image)?;
            apply_set(ctx, &ns, &objects).await?;
            Ok(Some(EventSpec {
                warning: false,
                reason: "ServersCreated".into(),
                note: format!(
                    "replica set {} of target {} on platform {}: {} members",
                    objects.stateful_set.name_any(),
                    target.name,
                    platform.name,
                    spec.replica_set().members()
                ),
                related: Some(Related {
                    api_version: "apps/v1",
                    kind: "StatefulSet",
                    name: objects.stateful_set.name_any(),
                }),
            }))
        }
        Change::CreateRunnerAccess => {
            let access = jobs::runner_access(bench)?;
            apply(ctx, &ns, &access.service_account).await?;
            apply(ctx, &ns, &access.role).await?;
            apply(ctx, &ns, &access.role_binding).await?;
            Ok(None)
        }
        Change::StartRunner {
            platform,
            targets,
            completed_cells,
        } => {
            let resolved = targets
                .iter()
                .map(|t| target_of(t))
                .collect::<Result<Vec<_>, _>>()?;
            let objects = jobs::runner_objects(
                bench,
                &resolved,
                platform_of(platform)?,
                completed_cells.clone(),
                &facts::gather(&ctx.client, bench, &ns, &resolved, platform_of(platform)?).await?,
                &ctx.options.image,
            )?;
            apply(ctx, &ns, &objects.plan).await?;
            apply(ctx, &ns, &objects.job).await?;
            let skipped = if completed_cells.is_empty() {
                String::new()
            } else {
                format!(
                    ", skipping {} cells that have results",
                    completed_cells.len()
                )
            };
            let what = match targets.as_slice() {
                [one] => format!("target {one} on platform {platform}"),
                _ => format!(
                    "targets {} on platform {platform}, interleaved",
                    targets.join(", ")
                ),
            };
            Ok(Some(EventSpec {
                warning: false,
                reason: "RunnerStarted".into(),
                note: format!("Job {} runs {what}{skipped}", objects.job.name_any()),
                related: Some(Related {
                    api_version: "batch/v1",
                    kind: "Job",
                    name: objects.job.name_any(),
                }),
            }))
        }
        Change::UpdatePlan {
            platform,
            targets,
            completed_cells,
        } => {
            let resolved = targets
                .iter()
                .map(|t| target_of(t))
                .collect::<Result<Vec<_>, _>>()?;
            let objects = jobs::runner_objects(
                bench,
                &resolved,
                platform_of(platform)?,
                completed_cells.clone(),
                &facts::gather(&ctx.client, bench, &ns, &resolved, platform_of(platform)?).await?,
                &ctx.options.image,
            )?;
            apply(ctx, &ns, &objects.plan).await?;
            Ok(None)
        }
        Change::DeleteServers { target, platform } => {
            let bench_name = bench.name_any();
            let name = names::server_name(&bench_name, target, platform);
            let sharded = target_of(target)?;
            if sharded.is_sharded() {
                let parts = servers::sharded::set_parts(sharded);
                for part in parts.into_iter().chain([names::Part::Mongos]) {
                    let part_name = names::part_name(&bench_name, target, platform, part);
                    if part == names::Part::Mongos {
                        delete::<Deployment>(ctx, &ns, &part_name).await?;
                    } else {
                        delete::<StatefulSet>(ctx, &ns, &part_name).await?;
                    }
                    delete::<Service>(ctx, &ns, &part_name).await?;
                    delete::<NetworkPolicy>(ctx, &ns, &part_name).await?;
                    delete::<PodDisruptionBudget>(ctx, &ns, &part_name).await?;
                }
            } else {
                delete::<StatefulSet>(ctx, &ns, &name).await?;
                delete::<Service>(ctx, &ns, &name).await?;
                delete::<NetworkPolicy>(ctx, &ns, &name).await?;
            }
            Ok(Some(EventSpec {
                warning: false,
                reason: "ServersDeleted".into(),
                note: format!(
                    "servers {name} of target {target} on platform {platform} deleted after its cells"
                ),
                related: Some(Related {
                    api_version: "apps/v1",
                    kind: "StatefulSet",
                    name,
                }),
            }))
        }
    }
}

async fn apply_set(ctx: &Context, ns: &str, set: &servers::ServerObjects) -> Result<(), Error> {
    apply(ctx, ns, &set.service).await?;
    apply(ctx, ns, &set.network_policy).await?;
    apply(ctx, ns, &set.stateful_set).await
}

/// Creates the parts of a sharded target in the order they are initiated: the config
/// server set, the shards, then the routers (which wait for the config servers).
async fn create_sharded(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    target: &crate::api::Target,
    platform: &crate::api::Platform,
) -> Result<Option<EventSpec>, Error> {
    let objects = servers::sharded::sharded_objects(bench, target, platform)?;
    for budget in &objects.budgets {
        apply(ctx, ns, budget).await?;
    }
    for set in &objects.sets {
        apply_set(ctx, ns, set).await?;
    }
    apply(ctx, ns, &objects.mongos_service).await?;
    apply(ctx, ns, &objects.mongos_policy).await?;
    apply(ctx, ns, &objects.mongos).await?;
    let shards = target.shards.clone().unwrap_or_default();
    Ok(Some(EventSpec {
        warning: false,
        reason: "ServersCreated".into(),
        note: format!(
            "sharded cluster of target {} on platform {}: {} shards of {} members, {} config \
             servers, {} mongos",
            target.name,
            platform.name,
            shards.count(),
            shards.members(),
            target.config_servers.clone().unwrap_or_default().members(),
            target.mongos.clone().unwrap_or_default().replicas()
        ),
        related: Some(Related {
            api_version: "apps/v1",
            kind: "Deployment",
            name: objects.mongos.name_any(),
        }),
    }))
}

/// Writes `status` by server-side apply of the whole status, unless the stored status is
/// already equal. Returns whether it wrote.
///
/// # Errors
/// [`Error::Kube`] when the write fails.
pub async fn write_status(
    ctx: &Context,
    bench: &MongoBenchmark,
    status: &MongoBenchmarkStatus,
) -> Result<bool, Error> {
    if bench.status.as_ref() == Some(status) {
        return Ok(false);
    }
    let ns = bench
        .namespace()
        .ok_or_else(|| Error::Incomplete(bench.name_any()))?;
    let name = bench.name_any();
    let api: Api<MongoBenchmark> = Api::namespaced(ctx.client.clone(), &ns);
    let patch = json!({"apiVersion": API_VERSION, "kind": KIND, "status": status});
    ctx.metrics.wrote("status");
    api.patch_status(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(|e| Error::kube(format!("applying status of MongoBenchmark {ns}/{name}"), e))?;
    Ok(true)
}

/// Publishes `events` on `bench`. A failure is logged, not returned: an Event is a
/// notification, and the status already holds the facts.
pub async fn publish(ctx: &Context, bench: &MongoBenchmark, events: &[EventSpec]) {
    let reference = bench.object_ref(&());
    for e in events {
        ctx.metrics.wrote("Event");
        let event = Event {
            type_: if e.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: e.reason.clone(),
            note: Some(e.note.chars().take(1000).collect()),
            action: "Reconcile".into(),
            secondary: e.related.as_ref().map(|r| ObjectReference {
                api_version: Some(r.api_version.to_owned()),
                kind: Some(r.kind.to_owned()),
                name: Some(r.name.clone()),
                namespace: bench.namespace(),
                ..ObjectReference::default()
            }),
        };
        if let Err(err) = ctx.recorder.publish(&event, &reference).await {
            tracing::warn!(benchmark = %bench.name_any(), reason = %e.reason, error = %err, "publishing an event failed");
        }
    }
}
