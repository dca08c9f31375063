//! What every reconcile pass receives: the client, the options, the event recorder and the
//! metrics.

use std::sync::Arc;

use kube::Client;
use kube::runtime::events::{Recorder, Reporter};

use super::OperatorOptions;
use super::metrics::Metrics;

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
