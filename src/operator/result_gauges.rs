//! The latest valid figures of every benchmark as Prometheus gauges, so that results reach
//! existing Prometheus and Grafana set-ups: per target × platform × size, the ops/s, p99 per
//! operation type and server CPU per operation of the latest valid repetition, and the
//! verdict against the baseline as a number.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::api::{CellPhase, CellStatus, MongoBenchmarkStatus, Verdict};

pub(super) type FloatGauge = Gauge<f64, AtomicU64>;

/// Labels of a cell's figures: the benchmark and the cell without its repetition. The
/// benchmark's namespace is `benchmark_namespace`: a pod scrape adds `namespace` (the
/// operator's), which would rename a `namespace` of the metric's own to `exported_namespace`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct CellLabels {
    pub benchmark_namespace: String,
    pub benchmark: String,
    pub target: String,
    pub platform: String,
    pub size: String,
}

/// [`CellLabels`] and an operation type.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct OperationLabels {
    #[prometheus(flatten)]
    pub cell: CellLabels,
    pub operation: String,
}

/// [`CellLabels`] and the baseline the target is compared with.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct VerdictLabels {
    #[prometheus(flatten)]
    pub cell: CellLabels,
    pub baseline: String,
}

/// The value of the verdict gauge: the sign of a significant difference, 0 for none. The
/// verdicts that are no test (too few repetitions, different workloads) have no series.
pub fn verdict_value(verdict: Verdict) -> Option<f64> {
    match verdict {
        Verdict::Faster | Verdict::Cheaper | Verdict::LowerLatency => Some(1.0),
        Verdict::NoSignificantDifference => Some(0.0),
        Verdict::Slower | Verdict::Costlier | Verdict::HigherLatency => Some(-1.0),
        Verdict::Inconclusive | Verdict::NotComparable => None,
    }
}

/// One family and the label sets each benchmark has set in it, so that a benchmark's stale
/// series (a deleted benchmark, a cell that became invalid) are removed.
pub(super) struct Tracked<L> {
    family: Family<L, FloatGauge>,
    by_benchmark: Mutex<BTreeMap<(String, String), Vec<L>>>,
}

impl<L> Tracked<L>
where
    L: Clone + std::hash::Hash + Eq + EncodeLabelSet + std::fmt::Debug + Send + Sync + 'static,
{
    pub(super) fn register(registry: &mut Registry, name: &str, help: &str) -> Tracked<L> {
        let family = Family::<L, FloatGauge>::default();
        registry.register(name, help, family.clone());
        Tracked {
            family,
            by_benchmark: Mutex::new(BTreeMap::new()),
        }
    }

    /// Replaces the series of benchmark `key` with `values`.
    pub(super) fn replace(&self, key: &(String, String), values: Vec<(L, f64)>) {
        let mut map = self.by_benchmark.lock().expect("result gauges lock");
        for stale in map.remove(key).unwrap_or_default() {
            if !values.iter().any(|(l, _)| *l == stale) {
                self.family.remove(&stale);
            }
        }
        for (labels, value) in &values {
            self.family.get_or_create(labels).set(*value);
        }
        if !values.is_empty() {
            map.insert(key.clone(), values.into_iter().map(|(l, _)| l).collect());
        }
    }
}

/// The result gauges.
pub struct ResultGauges {
    ops: Tracked<CellLabels>,
    p99: Tracked<OperationLabels>,
    cpu: Tracked<CellLabels>,
    verdict: Tracked<VerdictLabels>,
}

impl ResultGauges {
    pub fn register(registry: &mut Registry) -> ResultGauges {
        ResultGauges {
            ops: Tracked::register(
                registry,
                "result_ops_per_second",
                "Successful operations per second of the latest valid repetition",
            ),
            p99: Tracked::register(
                registry,
                "result_p99_microseconds",
                "99th percentile latency of the latest valid repetition, per operation type",
            ),
            cpu: Tracked::register(
                registry,
                "result_server_cpu_microseconds_per_op",
                "Server CPU time (all members) per operation of the latest valid repetition",
            ),
            verdict: Tracked::register(
                registry,
                "result_verdict",
                "Verdict against the baseline: 1 better (faster, cheaper, lower latency), 0 no significant difference, -1 worse",
            ),
        }
    }

    /// Sets the series of benchmark `namespace/name` from its status; `None` (the benchmark
    /// is gone) removes them.
    pub fn set(&self, namespace: &str, name: &str, status: Option<&MongoBenchmarkStatus>) {
        let key = (namespace.to_owned(), name.to_owned());
        let labels = |target: &str, platform: &str, size: &str| CellLabels {
            benchmark_namespace: namespace.to_owned(),
            benchmark: name.to_owned(),
            target: target.to_owned(),
            platform: platform.to_owned(),
            size: size.to_owned(),
        };
        let latest = status.map(latest_valid).unwrap_or_default();
        let (mut ops, mut p99, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
        for cell in latest.values() {
            let l = labels(&cell.target, &cell.platform, &cell.size);
            if let Some(v) = cell.ops_per_second {
                ops.push((l.clone(), v));
            }
            if let Some(v) = cell.server_cpu_micros_per_op {
                cpu.push((l.clone(), v));
            }
            for op in &cell.latencies {
                let labels = OperationLabels {
                    cell: l.clone(),
                    operation: op.operation.clone(),
                };
                p99.push((labels, op.p99_micros as f64));
            }
        }
        let verdicts = status
            .map(|s| s.comparisons.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|c| {
                let value = verdict_value(c.verdict?)?;
                let labels = VerdictLabels {
                    cell: labels(&c.target, &c.platform, &c.size),
                    baseline: c.baseline.clone(),
                };
                Some((labels, value))
            })
            .collect();
        self.ops.replace(&key, ops);
        self.p99.replace(&key, p99);
        self.cpu.replace(&key, cpu);
        self.verdict.replace(&key, verdicts);
    }
}

/// Per (target, platform, size), the completed and valid cell of the highest repetition.
fn latest_valid(status: &MongoBenchmarkStatus) -> BTreeMap<(&str, &str, &str), &CellStatus> {
    let mut latest: BTreeMap<(&str, &str, &str), &CellStatus> = BTreeMap::new();
    for cell in status
        .cells
        .iter()
        .filter(|c| c.phase == CellPhase::Completed)
    {
        let key = (
            cell.target.as_str(),
            cell.platform.as_str(),
            cell.size.as_str(),
        );
        match latest.get(&key) {
            Some(seen) if seen.repetition >= cell.repetition => {}
            _ => {
                latest.insert(key, cell);
            }
        }
    }
    latest
}

#[cfg(test)]
mod tests {
    use prometheus_client::registry::Registry;

    use super::*;
    use crate::api::{Comparison, OperationLatency};

    fn cell(target: &str, repetition: u32, phase: CellPhase, ops: f64) -> CellStatus {
        CellStatus {
            target: target.into(),
            platform: "x86".into(),
            size: "1M".into(),
            repetition,
            phase,
            ops_per_second: Some(ops),
            latencies: vec![OperationLatency {
                operation: "find".into(),
                p50_micros: 100,
                p95_micros: 400,
                p99_micros: ops as u64 * 10,
            }],
            server_cpu_micros_per_op: Some(ops / 4.0),
            ..CellStatus::default()
        }
    }

    fn comparison(target: &str, verdict: Verdict) -> Comparison {
        Comparison {
            platform: "x86".into(),
            size: "1M".into(),
            target: target.into(),
            baseline: "a".into(),
            verdict: Some(verdict),
            ..Comparison::default()
        }
    }

    fn encode(registry: &Registry) -> Vec<String> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
        out.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_latest_valid_repetition_and_tested_verdicts_are_exported_and_stale_series_removed() {
        let mut registry = Registry::default();
        let gauges = ResultGauges::register(&mut registry);
        let status = MongoBenchmarkStatus {
            cells: vec![
                cell("a", 1, CellPhase::Completed, 100.0),
                cell("a", 2, CellPhase::Completed, 120.0),
                cell("a", 3, CellPhase::Invalid, 500.0),
                cell("b", 1, CellPhase::Completed, 80.0),
                cell("b", 2, CellPhase::Running, 0.0),
                cell("c", 1, CellPhase::Failed, 60.0),
            ],
            comparisons: vec![
                comparison("b", Verdict::Slower),
                comparison("c", Verdict::Inconclusive),
            ],
            ..MongoBenchmarkStatus::default()
        };
        gauges.set("ns", "bench", Some(&status));
        let cell = |t: &str| {
            format!(
                r#"benchmark_namespace="ns",benchmark="bench",target="{t}",platform="x86",size="1M""#
            )
        };
        let mut expected = vec![
            format!("result_ops_per_second{{{}}} 120.0", cell("a")),
            format!("result_ops_per_second{{{}}} 80.0", cell("b")),
            format!(
                "result_p99_microseconds{{{},operation=\"find\"}} 1200.0",
                cell("a")
            ),
            format!(
                "result_p99_microseconds{{{},operation=\"find\"}} 800.0",
                cell("b")
            ),
            format!(
                "result_server_cpu_microseconds_per_op{{{}}} 30.0",
                cell("a")
            ),
            format!(
                "result_server_cpu_microseconds_per_op{{{}}} 20.0",
                cell("b")
            ),
            format!("result_verdict{{{},baseline=\"a\"}} -1.0", cell("b")),
        ];
        let mut lines = encode(&registry);
        lines.retain(|l| !l.is_empty() && l != "# EOF");
        lines.sort();
        expected.sort();
        assert_eq!(lines, expected);

        gauges.set("ns", "bench", None);
        assert!(encode(&registry).iter().all(|l| !l.contains("bench")));
    }

    #[test]
    fn verdicts_map_to_their_sign() {
        assert_eq!(verdict_value(Verdict::Faster), Some(1.0));
        assert_eq!(verdict_value(Verdict::NoSignificantDifference), Some(0.0));
        assert_eq!(verdict_value(Verdict::Slower), Some(-1.0));
        assert_eq!(verdict_value(Verdict::Inconclusive), None);
        assert_eq!(verdict_value(Verdict::NotComparable), None);
    }
}
