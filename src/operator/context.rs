//! How the operator runs ([`OperatorOptions`], from the command line) and what every reconcile
//! pass receives ([`Context`]: the client, the options, the event recorder and the metrics).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use kube::runtime::events::{Recorder, Reporter};

use super::leader;
use super::metrics::Metrics;

/// Default unschedulable/image-pull deadline before a benchmark is reported `Stalled`.
pub const DEFAULT_STALL_DEADLINE: Duration = Duration::from_secs(600);
/// Default image of runner Jobs when neither the spec nor `MONGOBENCH_IMAGE` names one: this
/// release's own image (tagged with the crate version, never `latest`, so the runner reads the
/// plans this operator writes).
pub const DEFAULT_IMAGE: &str =
    concat!("ghcr.io/mongobench/mongobench:", env!("CARGO_PKG_VERSION"));

/// How the operator runs.
#[derive(Debug, Clone)]
pub struct OperatorOptions {
    /// Watch only these namespaces (with a Role in each suffices); none watches all
    /// namespaces (which needs a ClusterRole).
    pub namespaces: Vec<String>,
    /// Image of runner Jobs when `spec.client.image` is unset (normally the operator's own,
    /// from `MONGOBENCH_IMAGE`).
    pub image: String,
    /// How long server pods may stay unschedulable or fail to pull their image before the
    /// benchmark is `Stalled`.
    pub stall_deadline: Duration,
    /// How often an unfinished benchmark is looked at even without a change (safety net;
    /// changes of owned objects trigger a pass at once).
    pub resync: Duration,
    /// Lease-based leader election; `None` runs without it (a single replica).
    pub leader_election: Option<leader::LeaderElection>,
    /// Address of the `/healthz` and `/readyz` server; `None` starts none.
    pub listen: Option<SocketAddr>,
    /// Address of the `/metrics` server (the same as `listen` serves both from one); `None`
    /// serves no metrics.
    pub metrics_listen: Option<SocketAddr>,
    /// Runner images a benchmark may name in `spec.client.image` besides `image`: exact
    /// references, or prefixes ending in `*`.
    pub allowed_runner_images: Vec<String>,
}

impl OperatorOptions {
    /// Options for one replica watching `namespaces` (all when there are none), with the given
    /// runner image (the only one allowed), the default deadlines, no leader election and no
    /// HTTP server.
    pub fn new(
        namespaces: impl IntoIterator<Item = String>,
        image: impl Into<String>,
    ) -> OperatorOptions {
        OperatorOptions {
            namespaces: namespaces.into_iter().collect(),
            image: image.into(),
            stall_deadline: DEFAULT_STALL_DEADLINE,
            resync: Duration::from_secs(60),
            leader_election: None,
            listen: None,
            metrics_listen: None,
            allowed_runner_images: Vec::new(),
        }
    }

    /// The scopes to watch: each namespace, or `None` for all.
    pub fn scopes(&self) -> Vec<Option<&str>> {
        if self.namespaces.is_empty() {
            vec![None]
        } else {
            self.namespaces.iter().map(|n| Some(n.as_str())).collect()
        }
    }
}

/// Shared by every pass.
pub struct Context {
    /// API client (the operator's identity).
    pub client: Client,
    /// How the operator runs.
    pub options: OperatorOptions,
    /// Publishes Events on MongoBenchmarks.
    pub recorder: Recorder,
    /// Prometheus metrics, also read by the HTTP server and tests.
    pub metrics: Arc<Metrics>,
}

impl Context {
    /// A context for `client`; events are reported by `mongobench-operator` and this
    /// replica's identity (the pod name when run in a cluster).
    pub fn new(client: Client, options: OperatorOptions, metrics: Arc<Metrics>) -> Context {
        let instance = options
            .leader_election
            .as_ref()
            .map(|l| l.identity.clone())
            .or_else(|| std::env::var("POD_NAME").ok());
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: "mongobench-operator".into(),
                instance,
            },
        );
        Context {
            client,
            options,
            recorder,
            metrics,
        }
    }
}
