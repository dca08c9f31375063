//! Why a reconcile pass or the operator fails.

use std::net::SocketAddr;

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
    #[error("{action}")]
    Kube {
        /// What was being done, e.g. `applying StatefulSet ns/name`.
        action: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The spec cannot be turned into objects (should have been refused at admission).
    #[error("invalid spec: {0}")]
    Spec(#[from] SpecError),
    /// The MongoBenchmark has no namespace or uid (not read from the API server).
    #[error("MongoBenchmark {0} has no namespace or uid")]
    Incomplete(String),
    /// Leadership was lost or could not be kept.
    #[error("leader election: {0}")]
    Leader(String),
    /// The operating system gave no random bytes for a generated Secret.
    #[error("generating a Secret: no random bytes from the operating system")]
    Random(#[source] getrandom::Error),
    /// The HTTP server could not start.
    #[error("HTTP server on {addr}")]
    Http {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What in a spec the operator cannot turn into objects, naming the field.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("{0}")]
    Plan(#[from] crate::plan::PlanError),
    #[error("{0}")]
    Units(#[from] crate::api::UnitsError),
    #[error("{field}: {error}")]
    Field {
        field: &'static str,
        error: crate::api::UnitsError,
    },
    #[error("{field} {name:?} is not one of {among}")]
    Unknown {
        field: &'static str,
        name: String,
        among: &'static str,
    },
    #[error("a runner on platform {0} without targets")]
    RunnerWithoutTargets(String),
    #[error("spec.targets[{0}]: an external target gets no servers")]
    ExternalHasNoServers(String),
    #[error("spec.targets[{0}].distribution is required with image")]
    NoDistribution(String),
    #[error("spec.replicaSet.storageSize is required when a target has an image")]
    NoStorageSize,
}

/// `e` and every error under it, joined by `: ` (each error's own message names only its
/// own step, so the chain reads as one sentence).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
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
