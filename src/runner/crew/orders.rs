//! What the coordinator and the other processes write on the board: the coordinator's orders,
//! each process's replies and ready marks, and the wall-clock start times of timed phases.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Key of the coordinator's current order.
pub(super) const ORDER_KEY: &str = "order";

/// The key a process writes when it is ready, and its replies.
pub(super) fn ready_key(index: u32) -> String {
    format!("ready-{index}")
}
pub(super) fn reply_key(index: u32) -> String {
    format!("reply-{index}")
}

/// Milliseconds since the Unix epoch of `t`.
pub(super) fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The local instant of a wall-clock start time (now, if it has passed).
pub fn instant_of(start_at_ms: u64) -> Instant {
    let now_ms = epoch_ms(SystemTime::now());
    Instant::now() + Duration::from_millis(start_at_ms.saturating_sub(now_ms))
}

/// Milliseconds this process started after the common start time (negative: early).
pub fn skew_ms(start_at_ms: u64) -> f64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    now - start_at_ms as f64
}

/// What the coordinator asks of the other processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "task",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Task {
    /// Load your share of documents `[from, to)` into the target's collection.
    Seed { from: u64, to: u64 },
    /// Run your workers' warm-up from `start_at_ms`; reply with its per-second completions.
    Warmup { start_at_ms: u64 },
    /// Run your workers' measured phase from `start_at_ms` (the sweep step of level `step`,
    /// a rate or a worker count, when given); reply with a
    /// [`Partial`](crate::runner::cell::partial::Partial).
    Measure {
        start_at_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<u64>,
    },
    /// Restore what your workers changed in the last phase.
    Restore,
    /// The run is over: exit.
    Finish,
}

/// One order: a task on one of the runner's targets, whose collection holds `records` seeded
/// documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub seq: u64,
    pub target: usize,
    pub records: u64,
    #[serde(flatten)]
    pub task: Task,
    /// For this process only; `None`: for every process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<u32>,
}

impl Order {
    /// Whether process `index` is to carry it out.
    pub fn is_for(&self, index: u32) -> bool {
        self.only.is_none_or(|only| only == index)
    }
}

/// A process's answer to order `seq`: its payload, or why it could not do the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    pub seq: u64,
    pub outcome: Result<serde_json::Value, String>,
}
