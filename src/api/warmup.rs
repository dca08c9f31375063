//! `spec.workload.warmupUntilSettled`: a warm-up judged by what it measured rather than by the
//! clock. Rounds of `warmup` run, each followed by the restore every warm-up gets, until the
//! last round's throughput has levelled off or a number of rounds has run (docs/results.md,
//! "Warm-up until settled").

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Default of `maxRounds`.
pub const DEFAULT_MAX_ROUNDS: u32 = 5;
/// Default of `tolerancePercent`, and the drift the reports flag a fixed warm-up beyond.
pub const DEFAULT_TOLERANCE_PERCENT: f64 = 5.0;
/// Shortest round the criterion can judge: 6 whole seconds and the partial last one.
pub const MIN_ROUND_SECONDS: u64 = 7;

/// Warm-up rounds until throughput settles.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct WarmupUntilSettled {
    /// Most rounds of `warmup` a cell runs before it measures anyway (2 to 20, default 5); a
    /// cell that used them all without settling says so in its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 20), extend("default" = 5))]
    pub max_rounds: Option<u32>,

    /// Largest drift, in percent either way, of the mean operations per second of a round's
    /// last third of seconds over its middle third that counts as settled (0.1 to 50,
    /// default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.1, max = 50), extend("default" = 5.0))]
    pub tolerance_percent: Option<f64>,
}

impl WarmupUntilSettled {
    /// Effective `maxRounds`.
    pub fn max_rounds(&self) -> u32 {
        self.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS)
    }

    /// Effective `tolerancePercent`.
    pub fn tolerance_percent(&self) -> f64 {
        self.tolerance_percent.unwrap_or(DEFAULT_TOLERANCE_PERCENT)
    }
}
