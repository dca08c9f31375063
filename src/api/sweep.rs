//! `spec.workload.sweep`: instead of one measured phase at one load, a cell measures a series of
//! steps of rising load and reports its knee, the most load it sustained under a latency goal
//! (docs/results.md, "Load sweeps"). The steps are an explicit ladder of rates or of worker
//! counts, or a search that grows the rate geometrically, then bisects between the last good
//! step and the first saturated one.

use std::time::Duration;

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::units::{self, UnitsError};

/// Default of `sweep.stepDuration`.
pub const DEFAULT_STEP: Duration = Duration::from_secs(30);
/// Default of `findMax.growth`.
pub const DEFAULT_GROWTH: f64 = 1.5;
/// Default of `findMax.precisionPercent`.
pub const DEFAULT_PRECISION_PERCENT: f64 = 2.0;
/// Default of `findMax.maxSteps`.
pub const DEFAULT_MAX_STEPS: u32 = 20;
/// Share of a step's target rate it must achieve to count as sustained.
pub const SUSTAINED_SHARE: f64 = 0.9;

/// A load sweep.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(
    "((has(self.rates) && size(self.rates) > 0) ? 1 : 0) + ((has(self.workers) && size(self.workers) > 0) ? 1 : 0) + (has(self.findMax) ? 1 : 0) == 1")
    .message("spec.workload.sweep: set rates, workers or findMax, exactly one"))]
pub struct Sweep {
    /// An explicit ladder of total rates (operations per second over all client pods), e.g.
    /// `[1000, 2000, 4000, 8000]`; no rate twice. Every step runs, in ascending order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(range(min = 1, max = 100000000)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub rates: Vec<u64>,

    /// An explicit ladder of worker counts, e.g. `[4, 8, 16, 32]`, each step a closed loop
    /// (every worker sends its next operation when the last returns); no count twice. Every
    /// step runs, in ascending order; `workload.workers` is then left unset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100), inner(range(min = 1, max = 4096)))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub workers: Vec<u32>,

    /// A search for the most load sustained: rates grow geometrically from `start` until a step
    /// saturates, then bisect between the last good and the first saturated step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<FindMax>,

    /// The latency goal a step must meet, on the histogram merged over all client pods. Without
    /// it, a step is saturated only when it falls short of its rate or its errors exceed the
    /// budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyGoal>,

    /// Length of each step's measured phase, e.g. `30s` (default `30s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN), extend("default" = "30s"))]
    #[x_kube(validation = Rule::new("self.matches('[1-9]')")
        .message("spec.workload.sweep.stepDuration must be longer than 0"))]
    pub step_duration: Option<String>,
}

/// The search of `sweep.findMax`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FindMax {
    /// The rate of the first step (operations per second over all client pods).
    #[schemars(range(min = 1, max = 100000000))]
    pub start: u64,

    /// Factor from one step to the next until a step saturates (above 1, at most 10; default
    /// 1.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1.5))]
    #[x_kube(validation = Rule::new("self > 1.0 && self <= 10.0")
        .message("spec.workload.sweep.findMax.growth must be above 1 and at most 10"))]
    pub growth: Option<f64>,

    /// The bisection stops when the first saturated rate is within this percentage above the
    /// last good one (0.1 to 50, default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.1, max = 50), extend("default" = 2))]
    pub precision_percent: Option<f64>,

    /// Most steps the search runs (2 to 100, default 20); the knee is then the best found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 100), extend("default" = 20))]
    pub max_steps: Option<u32>,
}

/// A latency goal: one percentile and its bound, on one operation class or on all.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(
    "(has(self.p50) ? 1 : 0) + (has(self.p95) ? 1 : 0) + (has(self.p99) ? 1 : 0) + (has(self.p999) ? 1 : 0) == 1")
    .message("spec.workload.sweep.latency: set exactly one of p50, p95, p99, p999"))]
pub struct LatencyGoal {
    /// Bound of the median, e.g. `2ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    pub p50: Option<String>,
    /// Bound of the 95th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    pub p95: Option<String>,
    /// Bound of the 99th percentile, e.g. `10ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    pub p99: Option<String>,
    /// Bound of the 99.9th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), pattern(units::DURATION_PATTERN))]
    pub p999: Option<String>,
    /// The operation class it applies to: `any` (every operation, the default) or one the
    /// workload sends: flights `find`, `update`, `delete`, `insert`, `aggregate`,
    /// `transaction`; YCSB `read`, `update`, `insert`, `scan`, `readModifyWrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 32), extend("default" = "any"))]
    pub op: Option<String>,
}

/// A percentile a goal may bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Percentile {
    P50,
    P95,
    P99,
    P999,
}

impl Percentile {
    /// As written in the spec: `p50`, `p95`, `p99`, `p999`.
    pub fn as_str(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
            Percentile::P999 => "p999",
        }
    }

    /// As a percentage: 50, 95, 99, 99.9.
    pub fn value(self) -> f64 {
        match self {
            Percentile::P50 => 50.0,
            Percentile::P95 => 95.0,
            Percentile::P99 => 99.0,
            Percentile::P999 => 99.9,
        }
    }
}

impl LatencyGoal {
    /// The percentile set and its bound as written; `None` unless exactly one is set.
    pub fn bound(&self) -> Option<(Percentile, &str)> {
        let set: Vec<(Percentile, &str)> = [
            (Percentile::P50, &self.p50),
            (Percentile::P95, &self.p95),
            (Percentile::P99, &self.p99),
            (Percentile::P999, &self.p999),
        ]
        .into_iter()
        .filter_map(|(p, v)| v.as_deref().map(|v| (p, v)))
        .collect();
        match set[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    /// Effective operation class (default `any`).
    pub fn op(&self) -> &str {
        self.op.as_deref().unwrap_or("any")
    }
}

/// A latency goal in the runner's terms.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    pub percentile: Percentile,
    /// The bound, in microseconds.
    pub bound_us: u64,
    /// `any`, or an operation class as written in the spec (`read`, `readModifyWrite` …).
    pub op: String,
}

impl Goal {
    /// `p99 ≤ 10ms` (with ` on read` when it bounds one operation class).
    pub fn describe(&self) -> String {
        let bound = if self.bound_us.is_multiple_of(1000) {
            format!("{}ms", self.bound_us / 1000)
        } else {
            format!("{}µs", self.bound_us)
        };
        let on = if self.op == "any" {
            String::new()
        } else {
            format!(" on {}", self.op)
        };
        format!("{} ≤ {bound}{on}", self.percentile.as_str())
    }

    /// Whether `label`, a measurement label (`find`, `READ`, `READ-MODIFY-WRITE` …), is the
    /// goal's operation class.
    pub fn names(&self, label: &str) -> bool {
        let plain = |s: &str| s.replace('-', "").to_ascii_lowercase();
        plain(label) == plain(&self.op)
    }
}

impl LatencyGoal {
    /// The goal in the runner's terms.
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when the bound does not parse, [`UnitsError::LatencyGoal`] when
    /// the goal sets no percentile, or several.
    pub fn resolve(&self) -> Result<Goal, UnitsError> {
        let (percentile, bound) = self.bound().ok_or(UnitsError::LatencyGoal)?;
        Ok(Goal {
            percentile,
            bound_us: units::parse_duration(bound)?.as_micros() as u64,
            op: self.op().to_owned(),
        })
    }
}

impl Sweep {
    /// Effective step length (default 30 s).
    ///
    /// # Errors
    /// [`UnitsError::Duration`] when `stepDuration` does not parse.
    pub fn step_duration(&self) -> Result<Duration, UnitsError> {
        self.step_duration
            .as_deref()
            .map_or(Ok(DEFAULT_STEP), units::parse_duration)
    }
}

impl FindMax {
    /// Effective `growth` (default 1.5).
    pub fn growth(&self) -> f64 {
        self.growth.unwrap_or(DEFAULT_GROWTH)
    }

    /// Effective `precisionPercent` (default 2).
    pub fn precision_percent(&self) -> f64 {
        self.precision_percent.unwrap_or(DEFAULT_PRECISION_PERCENT)
    }

    /// Effective `maxSteps` (default 20).
    pub fn max_steps(&self) -> u32 {
        self.max_steps.unwrap_or(DEFAULT_MAX_STEPS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(yaml: &str) -> Sweep {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn defaults_and_the_goal_read_as_written() {
        let s = sweep("{findMax: {start: 1000}, latency: {p99: 10ms, op: read}}");
        let f = s.find_max.as_ref().unwrap();
        assert_eq!(
            (f.growth(), f.precision_percent(), f.max_steps()),
            (1.5, 2.0, 20)
        );
        assert_eq!(s.step_duration(), Ok(Duration::from_secs(30)));
        let goal = s.latency.as_ref().unwrap();
        assert_eq!(goal.bound(), Some((Percentile::P99, "10ms")));
        assert_eq!(goal.op(), "read");
        let ladder = sweep("{rates: [500, 1000, 2000], stepDuration: 5s}");
        assert_eq!(ladder.step_duration(), Ok(Duration::from_secs(5)));
        let resolved = goal.resolve().unwrap();
        assert_eq!(resolved.bound_us, 10_000);
        assert_eq!(resolved.describe(), "p99 ≤ 10ms on read");
        assert!(resolved.names("READ") && !resolved.names("READ-MODIFY-WRITE"));
        let rmw = Goal {
            op: "readModifyWrite".into(),
            ..resolved.clone()
        };
        assert!(rmw.names("READ-MODIFY-WRITE"));
        let any = sweep("{rates: [1], latency: {p999: 2500us}}");
        assert!(
            any.latency.unwrap().resolve().is_err(),
            "µs is not a unit of the spec"
        );
        let fine = sweep("{rates: [1], latency: {p999: 2s500ms}}")
            .latency
            .unwrap();
        assert_eq!(fine.resolve().unwrap().describe(), "p999 ≤ 2500ms");
        let two = sweep("{rates: [1], latency: {p50: 1ms, p999: 9ms}}");
        let two = two.latency.unwrap();
        assert_eq!(two.bound(), None);
        assert_eq!(two.resolve(), Err(UnitsError::LatencyGoal));
    }
}
