//! One reconcile pass over one benchmark: a fresh read of it, the checks that may hold it back
//! (what it may read and run, its custom workload), then observe, decide, act, and the status
//! and events of the outcome. A benchmark held back, or refused while acting (an object of
//! its name it does not own), waits `Pending` with `Stalled` saying why, and is looked at
//! again every [`WAIT_RETRY`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::{Client, ResourceExt};

use super::access::{self, RunnerImages};
use super::apply;
use super::context::Context;
use super::custom_workload::{self, Unavailable};
use super::decide::{self, Decision, Settings};
use super::error::Error;
use super::observe;
use super::render::jobs;
use super::status::events;
use crate::api::MongoBenchmark;

/// How often a benchmark that waits (for its workload, for what it may read, for a name it
/// does not own) is looked at again.
pub const WAIT_RETRY: Duration = Duration::from_secs(15);

/// The benchmark as stored now; `None` when it is gone or being deleted.
async fn fresh(client: &Client, cached: &MongoBenchmark) -> Result<Option<MongoBenchmark>, Error> {
    let name = cached.name_any();
    let ns = cached
        .namespace()
        .ok_or_else(|| Error::Incomplete(name.clone()))?;
    // The cache may lag behind the status this operator just wrote; deciding on a stale
    // status would write it again and repeat its events. A fresh read costs one GET.
    let api: Api<MongoBenchmark> = Api::namespaced(client.clone(), &ns);
    let bench = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("reading MongoBenchmark {ns}/{name}"), e))?;
    Ok(bench.filter(|b| b.metadata.deletion_timestamp.is_none()))
}

/// One pass: see the module's documentation.
pub async fn reconcile_pass(
    cached: Arc<MongoBenchmark>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let started = Instant::now();
    let (name, ns) = (cached.name_any(), cached.namespace().unwrap_or_default());
    let Some(bench) = fresh(&ctx.client, &cached).await? else {
        ctx.metrics.set_benchmark(&ns, &name, None);
        return Ok(Action::await_change());
    };
    let images = RunnerImages {
        own: &ctx.options.image,
        allowed: &ctx.options.allowed_runner_images,
    };
    let readable = access::readable(&ctx.client, &bench).await?;
    if let Some(why) = access::refusal(&bench, &readable, images) {
        return wait(&ctx, &bench, &why).await;
    }
    let bench = match custom_workload::resolve(&ctx.client, bench.clone()).await? {
        Ok(resolved) => resolved,
        Err(why) => return wait(&ctx, &bench, &why).await,
    };
    let run_id = jobs::run_id(&bench);
    let observed = observe::observe(&ctx.client, &bench, &run_id).await?;
    let settings = Settings {
        now: Timestamp::now(),
        stall_deadline: ctx.options.stall_deadline,
        resync: ctx.options.resync,
    };
    let mut decision = decide::decide(&bench, &observed, &settings)?;
    match act(&ctx, &bench, &mut decision).await {
        Err(Error::Refused { reason, message }) => {
            return wait(&ctx, &bench, &Unavailable { reason, message }).await;
        }
        other => other?,
    }
    ctx.metrics
        .set_benchmark(&ns, &name, Some(&decision.status));
    ctx.metrics
        .set_running(&ns, &name, &decision.status, &observed.activities);
    ctx.metrics.reconciled(started.elapsed());
    Ok(match decision.requeue_after {
        Some(d) => Action::requeue(d),
        None => Action::await_change(),
    })
}

/// Carries out the decision's actions, then publishes its events and writes its status (with
/// the Secrets generated meanwhile recorded).
async fn act(ctx: &Context, bench: &MongoBenchmark, decision: &mut Decision) -> Result<(), Error> {
    let (name, ns) = (bench.name_any(), bench.namespace().unwrap_or_default());
    let mut to_publish = Vec::new();
    let mut generated = Vec::new();
    for action in &decision.actions {
        tracing::info!(benchmark = %name, namespace = %ns, ?action, "acting");
        if let Some(event) = apply::execute(ctx, bench, action, &mut generated).await? {
            to_publish.push(event);
        }
    }
    for secret in generated {
        if !decision.status.generated_secrets.contains(&secret) {
            decision.status.generated_secrets.push(secret);
        }
    }
    // Events go out before the status that records their transition: a crash in between
    // repeats them on the next pass instead of losing them.
    to_publish.extend(events::transitions(
        &name,
        bench.status.as_ref(),
        &decision.status,
    ));
    apply::publish(ctx, bench, &to_publish).await;
    if apply::write_status(ctx, bench, &decision.status).await? {
        tracing::info!(
            benchmark = %name,
            namespace = %ns,
            phase = ?decision.status.phase,
            progress = decision.status.progress.as_deref().unwrap_or(""),
            "status updated"
        );
    }
    Ok(())
}

/// Shows why `bench` waits (status and, on the transition, a Warning event) and looks again
/// after [`WAIT_RETRY`].
async fn wait(ctx: &Context, bench: &MongoBenchmark, why: &Unavailable) -> Result<Action, Error> {
    let (name, ns) = (bench.name_any(), bench.namespace().unwrap_or_default());
    tracing::warn!(benchmark = %name, namespace = %ns, reason = why.reason, message = %why.message, "waiting");
    let status = custom_workload::waiting_status(bench, why, Timestamp::now());
    let transitions = events::transitions(&name, bench.status.as_ref(), &status);
    apply::publish(ctx, bench, &transitions).await;
    apply::write_status(ctx, bench, &status).await?;
    ctx.metrics.set_benchmark(&ns, &name, Some(&status));
    Ok(Action::requeue(WAIT_RETRY))
}
