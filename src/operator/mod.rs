//! The operator: reconciles a `MongoBenchmark` from apply to verdict.
//!
//! One pass of the reconcile loop (`run.rs` wires it into a kube `Controller`):
//!
//! 1. [`observe`] reads what the cluster holds for the benchmark: its StatefulSets, server pods,
//!    runner Jobs and their pods, the result ConfigMaps the runners wrote and, for platforms
//!    whose runners have not started, their Nodes.
//! 2. [`decide::decide`] (pure) turns the MongoBenchmark and those observations into the
//!    next actions (create servers, start a runner, delete servers) and the desired status
//!    ([`status`] folds the results into cells, progress, conditions and comparisons).
//! 3. [`apply`] renders the objects of each action ([`build::servers`], [`build::jobs`]) and writes them by
//!    server-side apply; the status is applied only when it differs from the stored one, and
//!    [`status::events`] are published only for transitions, so an idle benchmark makes no API writes.
//!
//! Work is split in *runners*, each one Job on one platform: every target of the platform,
//! interleaved, when its nodes hold all its replica sets at once ([`decide::placement`]), else one
//! target per runner, one after another. A provisioned target first gets a replica set
//! (StatefulSet + headless Service + NetworkPolicy); a runner of external targets goes
//! straight to its Job. Everything created is owned by the MongoBenchmark, so deleting it
//! removes everything through garbage collection.
//!
//! The loop is level-triggered: it keeps no state of its own. A restarted operator reads the
//! same objects, reaches the same decisions and redoes no completed cell (a re-created Job is
//! told which cells already have results).

pub mod apply;
pub mod build;
pub mod context;
pub mod decide;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod observe;
pub mod result_gauges;
pub mod run;
pub mod status;
pub mod testing;

use std::net::SocketAddr;
use std::time::Duration;

pub use run::{Operator, run};

/// Field manager of every server-side apply the operator makes.
pub const FIELD_MANAGER: &str = "mongobench";
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
    /// Address of the `/healthz`, `/readyz` and `/metrics` server; `None` starts none.
    pub listen: Option<SocketAddr>,
}

impl OperatorOptions {
    /// Options for one replica watching `namespaces` (all when there are none), with the given
    /// runner image, the default deadlines, no leader election and no HTTP server.
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

/// Why a reconcile pass or the operator failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CRD is missing from the cluster.
    #[error(
        "the MongoBenchmark CRD (mongobenchmarks.mongobench.io) is not installed: run \
         `mongobench crd | kubectl apply --server-side -f -` (or install the Helm chart) and \
         start the operator again"
    )]
    CrdNotInstalled,
    /// A call to the API server failed.
    #[error("{action}: {source}")]
    Kube {
        /// What was being done, e.g. `applying StatefulSet ns/name`.
        action: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The spec cannot be turned into objects (should have been refused at admission).
    #[error("invalid spec: {0}")]
    Spec(String),
    /// The MongoBenchmark has no namespace or uid (not read from the API server).
    #[error("MongoBenchmark {0} has no namespace or uid")]
    Incomplete(String),
    /// Leadership was lost or could not be kept.
    #[error("leader election: {0}")]
    Leader(String),
    /// The operating system gave no random bytes for a generated Secret.
    #[error("generating a Secret: no random bytes from the operating system: {0}")]
    Random(String),
    /// The HTTP server could not start.
    #[error("HTTP server on {addr}: {source}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps a kube error with what was being done.
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Error {
        Error::Kube {
            action: action.into(),
            source,
        }
    }

    /// Short label for metrics and event reasons.
    pub fn label(&self) -> &'static str {
        match self {
            Error::CrdNotInstalled => "crd_not_installed",
            Error::Kube { .. } => "api",
            Error::Spec(_) => "spec",
            Error::Incomplete(_) => "incomplete",
            Error::Leader(_) => "leader",
            Error::Random(_) => "random",
            Error::Http { .. } => "http",
        }
    }
}
