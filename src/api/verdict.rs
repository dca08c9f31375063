//! `spec.verdict`: which figures get verdicts, declared before the run (docs/results.md,
//! "Verdicts"). Each declared metric gets its paired interval, MDE and verdict, Holm–Bonferroni
//! adjusts them all together, and a precision goal applies to each; the other figures are
//! shown as they are, without a verdict.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A figure that can get a verdict.
#[derive(
    JsonSchema, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = crate::api::drop_description)]
pub enum VerdictMetric {
    /// Successful operations per second: `faster` or `slower`.
    Throughput,
    /// Server CPU time per operation: `cheaper` or `costlier`.
    CpuPerOperation,
    /// The overall p99 latency of successful operations: `lower latency` or `higher latency`.
    P99Latency,
}

impl VerdictMetric {
    /// Its name in the spec.
    pub fn name(self) -> &'static str {
        match self {
            VerdictMetric::Throughput => "throughput",
            VerdictMetric::CpuPerOperation => "cpuPerOperation",
            VerdictMetric::P99Latency => "p99Latency",
        }
    }

    /// What the reports call it beside a difference: `ops/s`, `CPU per operation`, `p99
    /// latency`.
    pub fn label(self) -> &'static str {
        match self {
            VerdictMetric::Throughput => "ops/s",
            VerdictMetric::CpuPerOperation => "CPU per operation",
            VerdictMetric::P99Latency => "p99 latency",
        }
    }

    /// Whether a higher figure is the better one.
    pub fn higher_is_better(self) -> bool {
        self == VerdictMetric::Throughput
    }
}

/// `spec.verdict`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new(
    "!has(self.metrics) || self.metrics.all(m, self.metrics.exists_one(n, n == m))")
    .message("spec.verdict.metrics must not name a metric twice")
    .field_path(".metrics"))]
pub struct VerdictSpec {
    /// The figures that get a verdict against the baseline, declared before the run:
    /// `throughput` (faster/slower), `cpuPerOperation` (server CPU per operation:
    /// cheaper/costlier), `p99Latency` (lower/higher latency). Each gets its paired interval,
    /// MDE and verdict; Holm–Bonferroni adjusts every declared metric's tests together; a
    /// precision goal applies to each. Default `[throughput]`. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 3))]
    pub metrics: Option<Vec<VerdictMetric>>,
}

/// The metrics of `spec.verdict` when none are declared.
pub const DEFAULT_METRICS: [VerdictMetric; 1] = [VerdictMetric::Throughput];

impl VerdictSpec {
    /// Effective `metrics`.
    pub fn metrics(&self) -> Vec<VerdictMetric> {
        self.metrics
            .clone()
            .unwrap_or_else(|| DEFAULT_METRICS.to_vec())
    }
}
