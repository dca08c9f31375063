//! `spec.precision`: the resolving power a benchmark asks for. The runner keeps adding slots
//! (one more repetition of every target) until every comparison's minimum detectable effect is
//! at or below the goal, or a limit is reached (docs/results.md, "Precision").

use std::time::Duration;

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::units;

/// Most repetitions a precision goal adds up to when it names none.
pub const DEFAULT_MAX_REPETITIONS: u32 = 30;

/// A precision goal.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(
    "!has(self.maxDuration) || self.maxDuration.matches('[1-9]')")
    .message("spec.precision.maxDuration must be longer than 0")
    .field_path(".maxDuration"))]
pub struct Precision {
    /// The largest minimum detectable effect (80 % power, 5 % level, as a percentage of the
    /// baseline's throughput) any comparison may keep, e.g. 3 for 3 %: slots are added until
    /// every target's paired comparison with the baseline, at every platform and size, can
    /// detect a difference this small (0.1 to 100).
    #[schemars(range(min = 0.1, max = 100))]
    pub mde_percent: f64,

    /// Most repetitions per target, platform and size (default 30; at least `repetitions`, at
    /// most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100), extend("default" = 30))]
    pub max_repetitions: Option<u32>,

    /// Longest time a runner adds slots for, counted from its start, e.g. `2h` (default: no
    /// limit but `maxRepetitions`). A slot that has started runs to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    pub max_duration: Option<String>,
}

impl Precision {
    /// Effective `maxRepetitions`.
    pub fn max_repetitions(&self) -> u32 {
        self.max_repetitions.unwrap_or(DEFAULT_MAX_REPETITIONS)
    }

    /// Effective `maxDuration`; `None` is no limit.
    ///
    /// # Errors
    /// As [`units::parse_duration`].
    pub fn max_duration(&self) -> Result<Option<Duration>, units::UnitsError> {
        self.max_duration
            .as_deref()
            .map(units::parse_duration)
            .transpose()
    }
}
