//! What a decision takes besides the cluster ([`Settings`]) and what it gives: the
//! changes to carry out and the status to show ([`Decision`]).

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::api::MongoBenchmarkStatus;

/// Something to change in the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Create the replica set (StatefulSet, Service, NetworkPolicy) of a slot.
    CreateServers {
        /// Target name.
        target: String,
        /// Platform name.
        platform: String,
    },
    /// Create the runners' ServiceAccount, Role and RoleBinding.
    CreateRunnerAccess,
    /// Create the plan ConfigMap and the Job of a runner.
    StartRunner {
        /// Platform name.
        platform: String,
        /// Its targets, in spec order: one, or every target of the platform (interleaved).
        targets: Vec<String>,
        /// Cells that already have a result: the runner skips them.
        completed_cells: Vec<String>,
    },
    /// Rewrite the plan of a running runner so that a retried runner pod skips the cells that
    /// have results since the Job started.
    UpdatePlan {
        /// Platform name.
        platform: String,
        /// Its targets.
        targets: Vec<String>,
        /// Cells that have a result.
        completed_cells: Vec<String>,
    },
    /// Delete the replica set of a slot (its volumes go with it).
    DeleteServers {
        /// Target name.
        target: String,
        /// Platform name.
        platform: String,
    },
    /// Delete the MongoBenchmark itself (`ttlSecondsAfterFinished` has passed); everything
    /// it owns goes with it.
    DeleteBenchmark,
}

/// Settings of a decision that do not come from the cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The current time.
    pub now: Timestamp,
    /// How long server pods may be unschedulable or fail to pull before `Stalled`.
    pub stall_deadline: Duration,
    /// Re-check interval of an unfinished benchmark.
    pub resync: Duration,
}

/// The outcome of a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// What to change, in order.
    pub actions: Vec<Change>,
    /// The status the benchmark should show.
    pub status: MongoBenchmarkStatus,
    /// When to look again without a change; `None` waits for one.
    pub requeue_after: Option<Duration>,
}
