//! Prometheus metrics of the operator, served on `/metrics`: reconciles, errors by kind,
//! reconcile durations, benchmarks by phase, API writes by kind, leadership, and the latest
//! valid figures of every benchmark ([`ResultGauges`]).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::result_gauges::ResultGauges;
use crate::api::{MongoBenchmarkStatus, StatusPhase};

/// Labels of the error counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// Error kind (`api`, `spec`, ...).
    pub error: String,
}

/// Labels of the phase gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhaseLabels {
    /// Phase name.
    pub phase: String,
}

/// Labels of the write counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WriteLabels {
    /// Object kind written (`StatefulSet`, `status`, `Event`, ...).
    pub kind: String,
}

/// The operator's metrics.
pub struct Metrics {
    registry: Registry,
    reconciles: Counter,
    errors: Family<ErrorLabels, Counter>,
    duration: Histogram,
    phases: Family<PhaseLabels, Gauge>,
    writes: Family<WriteLabels, Counter>,
    leader: Gauge,
    write_total: AtomicU64,
    by_benchmark: Mutex<BTreeMap<(String, String), StatusPhase>>,
    results: ResultGauges,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every metric under the `mongobench` prefix.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("mongobench");
        let reconciles = Counter::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let duration = Histogram::new(exponential_buckets(0.005, 2.0, 12));
        let phases = Family::<PhaseLabels, Gauge>::default();
        let writes = Family::<WriteLabels, Counter>::default();
        let leader = Gauge::default();
        registry.register("reconciles", "Reconcile passes", reconciles.clone());
        registry.register(
            "reconcile_errors",
            "Reconcile passes that failed, by error kind",
            errors.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Duration of reconcile passes",
            duration.clone(),
        );
        registry.register("benchmarks", "MongoBenchmarks by phase", phases.clone());
        registry.register(
            "api_writes",
            "Writes to the API server, by object kind",
            writes.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica holds the leader lease",
            leader.clone(),
        );
        let results = ResultGauges::register(&mut registry);
        Metrics {
            registry,
            reconciles,
            errors,
            duration,
            phases,
            writes,
            leader,
            write_total: AtomicU64::new(0),
            by_benchmark: Mutex::new(BTreeMap::new()),
            results,
        }
    }

    /// Counts one pass that took `elapsed`.
    pub fn reconciled(&self, elapsed: Duration) {
        self.reconciles.inc();
        self.duration.observe(elapsed.as_secs_f64());
    }

    /// Counts a failed pass.
    pub fn failed(&self, error: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                error: error.to_owned(),
            })
            .inc();
    }

    /// Counts one write to the API server.
    pub fn wrote(&self, kind: &str) {
        self.write_total.fetch_add(1, Ordering::Relaxed);
        self.writes
            .get_or_create(&WriteLabels {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// Writes made since start.
    pub fn writes(&self) -> u64 {
        self.write_total.load(Ordering::Relaxed)
    }

    /// Reconcile passes since start.
    pub fn reconciles(&self) -> u64 {
        self.reconciles.get()
    }

    /// Records the status of a benchmark (`None`: it is gone): its phase and its figures.
    pub fn set_benchmark(
        &self,
        namespace: &str,
        name: &str,
        status: Option<&MongoBenchmarkStatus>,
    ) {
        self.set_phase(namespace, name, status.and_then(|s| s.phase));
        self.results.set(namespace, name, status);
    }

    /// Records the phase of a benchmark (`None`: it is gone) and updates the phase gauge.
    fn set_phase(&self, namespace: &str, name: &str, phase: Option<StatusPhase>) {
        let mut map = self.by_benchmark.lock().expect("metrics lock");
        let key = (namespace.to_owned(), name.to_owned());
        match phase {
            Some(p) => {
                map.insert(key, p);
            }
            None => {
                map.remove(&key);
            }
        }
        let mut counts: BTreeMap<String, i64> = [
            StatusPhase::Pending,
            StatusPhase::Provisioning,
            StatusPhase::Seeding,
            StatusPhase::Running,
            StatusPhase::Analyzing,
            StatusPhase::Completed,
            StatusPhase::Failed,
            StatusPhase::Suspended,
        ]
        .iter()
        .map(|p| (format!("{p:?}"), 0))
        .collect();
        for p in map.values() {
            *counts.entry(format!("{p:?}")).or_default() += 1;
        }
        for (phase, n) in counts {
            self.phases.get_or_create(&PhaseLabels { phase }).set(n);
        }
    }

    /// Records whether this replica leads.
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_format_has_every_family() {
        let m = Metrics::new();
        m.reconciled(Duration::from_millis(20));
        m.failed("api");
        m.wrote("StatefulSet");
        m.wrote("status");
        let running = MongoBenchmarkStatus {
            phase: Some(StatusPhase::Running),
            ..MongoBenchmarkStatus::default()
        };
        m.set_benchmark("ns", "a", Some(&running));
        m.set_benchmark("ns", "b", Some(&running));
        m.set_benchmark("ns", "b", None);
        m.set_leader(true);
        let text = m.encode();
        for line in [
            "mongobench_reconciles_total 1",
            "mongobench_reconcile_errors_total{error=\"api\"} 1",
            "mongobench_reconcile_duration_seconds_count 1",
            "mongobench_benchmarks{phase=\"Running\"} 1",
            "mongobench_benchmarks{phase=\"Completed\"} 0",
            "mongobench_api_writes_total{kind=\"StatefulSet\"} 1",
            "mongobench_leader 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing in:\n{text}"
            );
        }
        assert_eq!(m.writes(), 2);
        assert_eq!(m.reconciles(), 1);
    }
}
