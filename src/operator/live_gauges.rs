//! The running cells of every benchmark as Prometheus gauges, while they run: one series per
//! running cell labelled with what its runner does (`mongobench_running_cell`, value 1), and,
//! while the cell sends operations, its throughput over the runner's last window
//! (`mongobench_running_cell_ops_per_second`), from the activity the runner publishes.

use std::collections::BTreeMap;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::registry::Registry;

use super::result_gauges::Tracked;
use crate::api::{CellPhase, MongoBenchmarkStatus};
use crate::contract::Activity;

/// Labels of a running cell (the benchmark's namespace as in the result gauges).
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct RunningLabels {
    pub benchmark_namespace: String,
    pub benchmark: String,
    pub target: String,
    pub platform: String,
    pub size: String,
    pub cell: String,
}

/// [`RunningLabels`] and what the runner does: `seeding`, `restoring`, `warmup`,
/// `settling`, `measuring`, `explaining`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct RunningPhaseLabels {
    #[prometheus(flatten)]
    pub cell: RunningLabels,
    pub phase: String,
}

/// The running-cell gauges.
pub struct LiveGauges {
    phase: Tracked<RunningPhaseLabels>,
    ops: Tracked<RunningLabels>,
}

impl LiveGauges {
    pub fn register(registry: &mut Registry) -> LiveGauges {
        LiveGauges {
            phase: Tracked::register(
                registry,
                "running_cell",
                "1 per running cell, labelled with what its runner does",
            ),
            ops: Tracked::register(
                registry,
                "running_cell_ops_per_second",
                "Operations per second of the running cell over the runner's last window",
            ),
        }
    }

    /// Sets the series of benchmark `namespace/name` from its status and the activities its
    /// runners published (by platform); `None` (the benchmark is gone) removes them.
    pub fn set(
        &self,
        namespace: &str,
        name: &str,
        status: Option<&MongoBenchmarkStatus>,
        activities: &BTreeMap<String, Activity>,
    ) {
        let key = (namespace.to_owned(), name.to_owned());
        let (mut phases, mut ops) = (Vec::new(), Vec::new());
        let running = status
            .map(|s| s.cells.as_slice())
            .unwrap_or_default()
            .iter()
            .filter(|c| c.phase == CellPhase::Running);
        for cell in running {
            let Some(phase) = &cell.activity else {
                continue;
            };
            let labels = RunningLabels {
                benchmark_namespace: namespace.to_owned(),
                benchmark: name.to_owned(),
                target: cell.target.clone(),
                platform: cell.platform.clone(),
                size: cell.size.clone(),
                cell: cell.id.clone(),
            };
            let rate = activities
                .values()
                .find(|a| a.cell.as_deref() == Some(cell.id.as_str()))
                .and_then(|a| a.ops_per_second);
            if let Some(rate) = rate {
                ops.push((labels.clone(), rate as f64));
            }
            let labels = RunningPhaseLabels {
                cell: labels,
                phase: phase.clone(),
            };
            phases.push((labels, 1.0));
        }
        self.phase.replace(&key, phases);
        self.ops.replace(&key, ops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CellStatus;

    #[test]
    fn a_running_cell_shows_its_phase_and_rate_until_it_finishes() {
        let mut registry = Registry::with_prefix("mongobench");
        let gauges = LiveGauges::register(&mut registry);
        let cell = |phase, activity: Option<&str>| CellStatus {
            id: "a.local.1k.r1".into(),
            target: "a".into(),
            platform: "local".into(),
            size: "1k".into(),
            repetition: 1,
            phase,
            activity: activity.map(str::to_owned),
            ..CellStatus::default()
        };
        let status = |c| MongoBenchmarkStatus {
            cells: vec![c],
            ..MongoBenchmarkStatus::default()
        };
        let activities = BTreeMap::from([(
            "local".to_owned(),
            Activity {
                target: "a".into(),
                size: "1k".into(),
                cell: Some("a.local.1k.r1".into()),
                phase: "measuring".parse().unwrap(),
                ops_per_second: Some(1234),
            },
        )]);
        let text = |registry: &Registry| {
            let mut out = String::new();
            prometheus_client::encoding::text::encode(&mut out, registry).unwrap();
            out
        };
        let labels = r#"benchmark_namespace="ns",benchmark="b",target="a",platform="local",size="1k",cell="a.local.1k.r1""#;
        let running = status(cell(CellPhase::Running, Some("measuring")));
        gauges.set("ns", "b", Some(&running), &activities);
        let out = text(&registry);
        assert!(
            out.contains(&format!(
                "mongobench_running_cell{{{labels},phase=\"measuring\"}} 1.0\n"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "mongobench_running_cell_ops_per_second{{{labels}}} 1234.0\n"
            )),
            "{out}"
        );
        let done = status(cell(CellPhase::Completed, None));
        gauges.set("ns", "b", Some(&done), &activities);
        let out = text(&registry);
        assert!(!out.contains("cell=\""), "{out}");
    }
}
