//! Starting the operator: start-up checks, the HTTP server, leader election, and the kube
//! `Controller` that runs a reconcile pass whenever a MongoBenchmark or one of its children
//! changes (StatefulSets, Services and Jobs it owns; pods and result ConfigMaps by label).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Service};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::apply;
use super::context::{Context, OperatorOptions};
use super::custom_workload;
use super::decide::{self, Settings};
use super::error::Error;
use super::metrics::Metrics;
use super::render::{jobs, names};
use super::status::events;
use super::{leader, observe};
use crate::api::MongoBenchmark;

/// A configured operator, not yet running. Keep [`Operator::metrics`] to watch it work.
pub struct Operator {
    client: Client,
    options: OperatorOptions,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
}

/// Runs the operator until it fails or a shutdown signal arrives.
///
/// # Errors
/// [`Error::CrdNotInstalled`] when the CRD is missing; [`Error::Leader`] when leadership is
/// lost; [`Error::Http`] when the HTTP address cannot be bound.
pub async fn run(client: Client, options: OperatorOptions) -> Result<(), Error> {
    Operator::new(client, options).run().await
}

fn scoped<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// The benchmark a labelled object belongs to.
fn owner_by_label<K: Resource>(obj: &K) -> Option<ObjectRef<MongoBenchmark>> {
    let name = obj.meta().labels.as_ref()?.get(names::BENCHMARK_LABEL)?;
    let ns = obj.meta().namespace.as_deref()?;
    Some(ObjectRef::new(name).within(ns))
}

impl Operator {
    /// An operator using `client` with `options`.
    pub fn new(client: Client, options: OperatorOptions) -> Operator {
        Operator {
            client,
            options,
            metrics: Arc::new(Metrics::new()),
            ready: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The operator's metrics (reconciles, writes, ...), shared with the running operator.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Checks that the CRD is installed (one list with `limit=1`).
    ///
    /// # Errors
    /// [`Error::CrdNotInstalled`] on 404, [`Error::Kube`] for other failures.
    pub async fn check_crd(&self) -> Result<(), Error> {
        for scope in self.options.scopes() {
            let api: Api<MongoBenchmark> = scoped(&self.client, scope);
            match api.list(&ListParams::default().limit(1)).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => return Err(Error::CrdNotInstalled),
                Err(e) => {
                    let scope =
                        scope.map_or("all namespaces".to_owned(), |n| format!("namespace {n}"));
                    return Err(Error::kube(
                        format!("listing MongoBenchmarks in {scope}"),
                        e,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Starts the HTTP server when an address is configured; returns the bound address.
    ///
    /// # Errors
    /// [`Error::Http`] when the address cannot be bound.
    pub async fn serve_http(&self) -> Result<Option<SocketAddr>, Error> {
        match self.options.listen {
            Some(addr) => Ok(Some(
                super::http::serve(addr, self.metrics.clone(), self.ready.clone()).await?,
            )),
            None => Ok(None),
        }
    }

    /// Runs until a shutdown signal, or an error.
    ///
    /// # Errors
    /// See [`run`].
    pub async fn run(self) -> Result<(), Error> {
        self.check_crd().await?;
        if let Some(addr) = self.serve_http().await? {
            tracing::info!(%addr, "serving /healthz, /readyz and /metrics");
        }
        self.ready.store(true, Ordering::Relaxed);
        let Some(election) = self.options.leader_election.clone() else {
            self.metrics.set_leader(true);
            self.control().await;
            return Ok(());
        };
        tracing::info!(identity = %election.identity, lease = %election.lease_name, "waiting for leadership");
        leader::acquire(&self.client, &election).await;
        self.metrics.set_leader(true);
        tracing::info!(identity = %election.identity, "leading");
        let client = self.client.clone();
        let metrics = self.metrics.clone();
        tokio::select! {
            () = self.control() => Ok(()),
            lost = leader::keep(&client, &election) => {
                metrics.set_leader(false);
                Err(lost)
            }
        }
    }

    /// Reconciles in every watched scope until shutdown.
    async fn control(self) {
        let ctx = Arc::new(Context::new(
            self.client.clone(),
            self.options.clone(),
            self.metrics.clone(),
        ));
        futures::future::join_all(
            self.options
                .scopes()
                .into_iter()
                .map(|scope| control_scope(&self.client, scope, ctx.clone())),
        )
        .await;
    }
}

/// The controller of one scope (a namespace, or all).
async fn control_scope(client: &Client, ns: Option<&str>, ctx: Arc<Context>) {
    let children = watcher::Config::default().labels(&format!(
        "app.kubernetes.io/managed-by={}",
        names::MANAGED_BY
    ));
    let results = watcher::Config::default().labels(names::BENCHMARK_LABEL);
    Controller::new(
        scoped::<MongoBenchmark>(client, ns),
        watcher::Config::default().any_semantic(),
    )
    .owns(scoped::<StatefulSet>(client, ns), children.clone())
    .owns(scoped::<Deployment>(client, ns), children.clone())
    .owns(scoped::<Service>(client, ns), children.clone())
    .owns(scoped::<Job>(client, ns), children.clone())
    .watches(scoped::<Pod>(client, ns), children, |p: Pod| {
        owner_by_label(&p)
    })
    .watches(scoped::<ConfigMap>(client, ns), results, |c: ConfigMap| {
        owner_by_label(&c)
    })
    .shutdown_on_signal()
    .run(reconcile_pass, error_policy, ctx)
    .for_each(|outcome| async move {
        match outcome {
            Ok((obj, _)) => tracing::debug!(benchmark = %obj, "reconciled"),
            Err(e) => tracing::warn!(error = %super::error::chain(&e), "reconcile failed"),
        }
    })
    .await;
}

fn get_api<
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + DeserializeOwned
        + Clone
        + std::fmt::Debug,
>(
    ctx: &Context,
    ns: &str,
) -> Api<K> {
    Api::namespaced(ctx.client.clone(), ns)
}

/// How often a benchmark waiting for its custom workload's ConfigMap looks again.
const WORKLOAD_RETRY: Duration = Duration::from_secs(15);

/// One pass over one benchmark: observe, decide, apply, write status, publish events.
async fn reconcile_pass(cached: Arc<MongoBenchmark>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    let name = cached.name_any();
    let ns = cached
        .namespace()
        .ok_or_else(|| Error::Incomplete(name.clone()))?;
    // The cache may lag behind the status this operator just wrote; deciding on a stale
    // status would write it again and repeat its events. A fresh read costs one GET.
    let api: Api<MongoBenchmark> = get_api(&ctx, &ns);
    let Some(bench) = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("reading MongoBenchmark {ns}/{name}"), e))?
    else {
        ctx.metrics.set_benchmark(&ns, &name, None);
        return Ok(Action::await_change());
    };
    if bench.metadata.deletion_timestamp.is_some() {
        ctx.metrics.set_benchmark(&ns, &name, None);
        return Ok(Action::await_change());
    }
    let bench = match custom_workload::resolve(&ctx.client, bench.clone()).await? {
        Ok(resolved) => resolved,
        Err(why) => {
            tracing::warn!(benchmark = %name, namespace = %ns, reason = why.reason, message = %why.message, "waiting for the workload");
            let status = custom_workload::waiting_status(&bench, &why, Timestamp::now());
            apply::write_status(&ctx, &bench, &status).await?;
            ctx.metrics.set_benchmark(&ns, &name, Some(&status));
            return Ok(Action::requeue(WORKLOAD_RETRY));
        }
    };
    let run_id = jobs::run_id(&bench);
    let observed = observe::observe(&ctx.client, &bench, &run_id).await?;
    let settings = Settings {
        now: Timestamp::now(),
        stall_deadline: ctx.options.stall_deadline,
        resync: ctx.options.resync,
    };
    let decision = decide::decide(&bench, &observed, &settings)?;
    let mut to_publish = Vec::new();
    for action in &decision.actions {
        tracing::info!(benchmark = %name, namespace = %ns, ?action, "acting");
        if let Some(event) = apply::execute(&ctx, &bench, action).await? {
            to_publish.push(event);
        }
    }
    // Events go out before the status that records their transition: a crash in between
    // repeats them on the next pass instead of losing them.
    to_publish.extend(events::transitions(
        &name,
        bench.status.as_ref(),
        &decision.status,
    ));
    apply::publish(&ctx, &bench, &to_publish).await;
    if apply::write_status(&ctx, &bench, &decision.status).await? {
        tracing::info!(
            benchmark = %name,
            namespace = %ns,
            phase = ?decision.status.phase,
            progress = decision.status.progress.as_deref().unwrap_or(""),
            "status updated"
        );
    }
    ctx.metrics
        .set_benchmark(&ns, &name, Some(&decision.status));
    ctx.metrics.reconciled(started.elapsed());
    Ok(match decision.requeue_after {
        Some(d) => Action::requeue(d),
        None => Action::await_change(),
    })
}

fn error_policy(bench: Arc<MongoBenchmark>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.failed(error.label());
    tracing::warn!(benchmark = %bench.name_any(), error = %super::error::chain(error), "reconcile failed");
    match error {
        // A spec the API server accepted but the operator cannot use waits for a change.
        Error::Spec(_) => Action::requeue(Duration::from_secs(300)),
        _ => Action::requeue(Duration::from_secs(5)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::http::StatusCode;

    #[tokio::test]
    async fn a_missing_crd_is_reported_with_the_install_command() {
        // An API server without the CRD answers 404 to the MongoBenchmark list.
        let app = Router::new().fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                [("content-type", "application/json")],
                r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}"#,
            )
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        let client = Client::try_from(config).unwrap();
        let operator = Operator::new(client, OperatorOptions::new(None, "img"));
        let e = operator.check_crd().await.unwrap_err();
        assert!(matches!(e, Error::CrdNotInstalled), "{e:?}");
        assert_eq!(
            e.to_string(),
            "the MongoBenchmark CRD (mongobenchmarks.mongobench.io) is not installed: run \
             `mongobench crd | kubectl apply --server-side -f -` (or install the Helm chart) \
             and start the operator again"
        );
    }
}
