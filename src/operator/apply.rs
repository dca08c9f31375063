//! Carries out decisions: renders each action's objects and writes them (created, or changed by
//! server-side apply with field manager `mongobench`, only when the benchmark owns them:
//! `owned.rs`), deletes finished servers it owns, writes the status only when it differs from
//! the stored one, and publishes the transition events. Every write is counted
//! in the metrics, which is how the idle test proves an idle benchmark writes nothing.

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{ObjectReference, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::{Event, EventType};
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::context::Context;
use super::decide::Change;
use super::error::Error;
use super::observe::facts;
use super::owned;
use super::render::{jobs, names, servers};
use super::status::events::{EventSpec, Related};
use crate::api::{API_VERSION, KIND, MongoBenchmark, MongoBenchmarkStatus, Platform, Target};
use crate::operator::error::SpecError;

pub use super::owned::FIELD_MANAGER;

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
    generated: &mut Vec<String>,
) -> Result<Option<EventSpec>, Error> {
    let ns = bench
        .namespace()
        .ok_or_else(|| Error::Incomplete(bench.name_any()))?;
    match action {
        Change::DeleteBenchmark => {
            owned::delete_benchmark(ctx, bench).await?;
            Ok(None)
        }
        Change::CreateServers { target, platform } => {
            create_servers(ctx, bench, &ns, target, platform, generated).await
        }
        Change::CreateRunnerAccess => {
            let access = jobs::runner_access(bench)?;
            owned::apply(ctx, bench, &ns, &access.service_account).await?;
            owned::apply(ctx, bench, &ns, &access.role).await?;
            owned::apply(ctx, bench, &ns, &access.role_binding).await?;
            Ok(None)
        }
        Change::StartRunner {
            platform,
            targets,
            completed_cells,
        } => {
            let objects =
                render_runner(ctx, bench, &ns, platform, targets, completed_cells).await?;
            owned::apply(ctx, bench, &ns, &objects.plan).await?;
            owned::apply(ctx, bench, &ns, &objects.job).await?;
            let job = objects.job.name_any();
            Ok(Some(EventSpec {
                warning: false,
                reason: "RunnerStarted".into(),
                note: runner_started_note(&job, platform, targets, completed_cells.len()),
                related: Some(Related {
                    api_version: "batch/v1",
                    kind: "Job",
                    name: job,
                }),
            }))
        }
        Change::UpdatePlan {
            platform,
            targets,
            completed_cells,
        } => {
            let objects =
                render_runner(ctx, bench, &ns, platform, targets, completed_cells).await?;
            owned::apply(ctx, bench, &ns, &objects.plan).await?;
            Ok(None)
        }
        Change::DeleteServers { target, platform } => {
            delete_servers(ctx, bench, &ns, target, platform).await
        }
    }
}

fn target_of<'a>(bench: &'a MongoBenchmark, name: &str) -> Result<&'a Target, Error> {
    find(&bench.spec.targets, name, |x| x.name.as_str(), "target")
}

fn platform_of<'a>(bench: &'a MongoBenchmark, name: &str) -> Result<&'a Platform, Error> {
    find(&bench.spec.platforms, name, |x| x.name.as_str(), "platform")
}

/// Creates the servers of `target` on `platform` (with the generated Secrets they need).
async fn create_servers(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    target: &str,
    platform: &str,
    generated: &mut Vec<String>,
) -> Result<Option<EventSpec>, Error> {
    let (target, platform) = (target_of(bench, target)?, platform_of(bench, platform)?);
    if bench.spec.replica_set().auth() {
        owned::create_secrets(ctx, bench, ns, generated).await?;
    }
    if target.is_sharded() {
        return create_sharded(ctx, bench, ns, target, platform).await;
    }
    let image = jobs::runner_image(bench, &ctx.options.image);
    let objects = servers::server_objects(bench, target, platform, image)?;
    apply_set(ctx, bench, ns, &objects).await?;
    Ok(Some(EventSpec {
        warning: false,
        reason: "ServersCreated".into(),
        note: format!(
            "replica set {} of target {} on platform {}: {} members",
            objects.stateful_set.name_any(),
            target.name,
            platform.name,
            bench.spec.replica_set().members()
        ),
        related: Some(Related {
            api_version: "apps/v1",
            kind: "StatefulSet",
            name: objects.stateful_set.name_any(),
        }),
    }))
}

/// The plan and Job of the runner of `targets` on `platform`, with the facts of their servers
/// read now.
async fn render_runner(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    platform: &str,
    targets: &[String],
    completed_cells: &[String],
) -> Result<jobs::RunnerObjects, Error> {
    let resolved = targets
        .iter()
        .map(|t| target_of(bench, t))
        .collect::<Result<Vec<_>, _>>()?;
    let platform = platform_of(bench, platform)?;
    let facts = facts::gather(&ctx.client, bench, ns, &resolved, platform).await?;
    jobs::runner_objects(
        bench,
        &resolved,
        platform,
        completed_cells.to_vec(),
        &facts,
        &ctx.options.image,
    )
}

/// The note of a `RunnerStarted` event: the Job, what it runs, and how many cells it skips.
fn runner_started_note(job: &str, platform: &str, targets: &[String], skipped: usize) -> String {
    let skipped = if skipped == 0 {
        String::new()
    } else {
        format!(", skipping {skipped} cells that have results")
    };
    let what = match targets {
        [one] => format!("target {one} on platform {platform}"),
        _ => format!(
            "targets {} on platform {platform}, interleaved",
            targets.join(", ")
        ),
    };
    format!("Job {job} runs {what}{skipped}")
}

/// Deletes the servers of `target` on `platform`: its replica set, or every part of a sharded
/// cluster.
async fn delete_servers(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    target: &str,
    platform: &str,
) -> Result<Option<EventSpec>, Error> {
    let bench_name = bench.name_any();
    let name = names::server_name(&bench_name, target, platform);
    let sharded = target_of(bench, target)?;
    if sharded.is_sharded() {
        let parts = servers::sharded::set_parts(sharded);
        for part in parts.into_iter().chain([names::Part::Mongos]) {
            let part_name = names::part_name(&bench_name, target, platform, part);
            if part == names::Part::Mongos {
                owned::delete::<Deployment>(ctx, bench, ns, &part_name).await?;
            } else {
                owned::delete::<StatefulSet>(ctx, bench, ns, &part_name).await?;
            }
            owned::delete::<Service>(ctx, bench, ns, &part_name).await?;
            owned::delete::<NetworkPolicy>(ctx, bench, ns, &part_name).await?;
            owned::delete::<PodDisruptionBudget>(ctx, bench, ns, &part_name).await?;
        }
    } else {
        owned::delete::<StatefulSet>(ctx, bench, ns, &name).await?;
        owned::delete::<Service>(ctx, bench, ns, &name).await?;
        owned::delete::<NetworkPolicy>(ctx, bench, ns, &name).await?;
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

async fn apply_set(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    set: &servers::ServerObjects,
) -> Result<(), Error> {
    owned::apply(ctx, bench, ns, &set.service).await?;
    owned::apply(ctx, bench, ns, &set.network_policy).await?;
    owned::apply(ctx, bench, ns, &set.stateful_set).await
}

/// Creates the parts of a sharded target in the order they are initiated: the config
/// server set, the shards, then the routers (which wait for the config servers).
async fn create_sharded(
    ctx: &Context,
    bench: &MongoBenchmark,
    ns: &str,
    target: &Target,
    platform: &Platform,
) -> Result<Option<EventSpec>, Error> {
    let objects = servers::sharded::sharded_objects(bench, target, platform)?;
    for budget in &objects.budgets {
        owned::apply(ctx, bench, ns, budget).await?;
    }
    for set in &objects.sets {
        apply_set(ctx, bench, ns, set).await?;
    }
    owned::apply(ctx, bench, ns, &objects.mongos_service).await?;
    owned::apply(ctx, bench, ns, &objects.mongos_policy).await?;
    owned::apply(ctx, bench, ns, &objects.mongos).await?;
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

#[cfg(test)]
mod tests {
    use super::runner_started_note;

    #[test]
    fn a_runner_started_note_names_its_job_targets_and_skipped_cells() {
        let one = vec!["a".to_owned()];
        let two = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            runner_started_note("b-run-a-p", "p", &one, 0),
            "Job b-run-a-p runs target a on platform p"
        );
        assert_eq!(
            runner_started_note("b-run-p", "p", &two, 3),
            "Job b-run-p runs targets a, b on platform p, interleaved, skipping 3 cells that \
             have results"
        );
    }
}
