//! What a runner Job is doing right now, published for the operator: one ConfigMap per
//! benchmark × platform (`<benchmark>-<platform>-activity`), rewritten whenever the runner
//! starts seeding a size or a cell enters another phase. The operator names the cell in
//! `status.progress` and in events from it. Publishing never fails the run: the newest
//! activity is written by one background task, and a failed write is logged and superseded by
//! the next.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use tokio::sync::watch;

use super::sink::{BENCHMARK_LABEL, FIELD_MANAGER, RUN_ID_LABEL, owner_reference};
use crate::plan::{JobPlan, sanitize};

/// Marks activity ConfigMaps (value [`ACTIVITY_COMPONENT`]); they carry no cell label.
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
pub const ACTIVITY_COMPONENT: &str = "activity";
/// Label with the platform (sanitized) the activity is on.
pub const PLATFORM_LABEL: &str = "mongobench.io/platform";

/// The phase of a runner bringing a sharded cluster up, before its step
/// (`bringing up the sharded cluster: adding shard b-t-p-shard-1`).
pub const BRINGING_UP: &str = "bringing up the sharded cluster";

/// One activity of a runner: seeding a target to a size, or a phase of a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub target: String,
    pub size: String,
    /// The cell, for the phases of a cell (none while seeding).
    pub cell: Option<String>,
    /// `seeding`, or a cell's phase: `restoring`, `warmup`, `settling`, `measuring`,
    /// `explaining`.
    pub phase: String,
    /// While the cell sends operations (warm-up, measuring), its throughput over the last
    /// window, [`FIRST_OPS_WINDOW`] then [`OPS_WINDOW`] (the operator's live gauge).
    pub ops_per_second: Option<u64>,
}

/// How often a running cell's throughput is published: a write of its ConfigMap each time.
pub const OPS_WINDOW: Duration = Duration::from_secs(10);
/// The window of a phase's first throughput.
pub const FIRST_OPS_WINDOW: Duration = Duration::from_secs(2);

impl Activity {
    fn into_data(self) -> BTreeMap<String, String> {
        let mut data = BTreeMap::from([
            ("target".to_owned(), self.target),
            ("size".to_owned(), self.size),
            ("phase".to_owned(), self.phase),
        ]);
        if let Some(cell) = self.cell {
            data.insert("cell".to_owned(), cell);
        }
        if let Some(ops) = self.ops_per_second {
            data.insert("opsPerSecond".to_owned(), ops.to_string());
        }
        data
    }

    /// The activity a ConfigMap's data holds, if complete.
    pub fn from_data(data: &BTreeMap<String, String>) -> Option<Activity> {
        Some(Activity {
            target: data.get("target")?.clone(),
            size: data.get("size")?.clone(),
            cell: data.get("cell").cloned(),
            phase: data.get("phase")?.clone(),
            ops_per_second: data.get("opsPerSecond").and_then(|v| v.parse().ok()),
        })
    }
}

/// Name of the activity ConfigMap of `platform` in `benchmark`.
pub fn configmap_name(benchmark: &str, platform: &str) -> String {
    let name = sanitize(&format!("{benchmark}-{platform}-activity"));
    name.chars().take(253).collect()
}

/// The activity ConfigMap of a runner.
pub fn activity_configmap(plan: &JobPlan, activity: Activity) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(configmap_name(&plan.benchmark, &plan.platform)),
            namespace: plan.namespace.clone(),
            labels: Some(BTreeMap::from([
                (BENCHMARK_LABEL.to_owned(), sanitize(&plan.benchmark)),
                (RUN_ID_LABEL.to_owned(), sanitize(&plan.run_id)),
                (PLATFORM_LABEL.to_owned(), sanitize(&plan.platform)),
                (COMPONENT_LABEL.to_owned(), ACTIVITY_COMPONENT.to_owned()),
            ])),
            owner_references: owner_reference(plan).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(activity.into_data()),
        ..ConfigMap::default()
    }
}

/// Publishes a runner's newest activity in the background, until every clone is dropped.
#[derive(Clone)]
pub struct Publisher {
    latest: watch::Sender<Option<Activity>>,
}

impl Publisher {
    pub fn start(client: kube::Client, plan: &JobPlan) -> Publisher {
        let (latest, mut changes) = watch::channel(None::<Activity>);
        let plan = plan.clone();
        tokio::spawn(async move {
            let namespace = plan.namespace.clone().unwrap_or_else(|| "default".into());
            let api = Api::<ConfigMap>::namespaced(client, &namespace);
            let name = configmap_name(&plan.benchmark, &plan.platform);
            while changes.changed().await.is_ok() {
                let Some(activity) = changes.borrow_and_update().clone() else {
                    continue;
                };
                let cm = activity_configmap(&plan, activity);
                let params = PatchParams::apply(FIELD_MANAGER).force();
                if let Err(e) = api.patch(&name, &params, &Patch::Apply(&cm)).await {
                    tracing::warn!(error = %e, configmap = %name, "publishing the runner's activity");
                }
            }
        });
        Publisher { latest }
    }

    /// Makes `activity` the newest; a write still under way is followed by this one.
    pub fn publish(&self, activity: Activity) {
        self.latest.send_if_modified(|latest| {
            let changed = latest.as_ref() != Some(&activity);
            *latest = Some(activity);
            changed
        });
    }
}

/// Publishes the phase of a running cell every 250 ms and, while it sends operations, its
/// throughput: first over [`FIRST_OPS_WINDOW`] of a phase (a short cell shows one too), then
/// over each [`OPS_WINDOW`], until the task is aborted.
pub fn follow_cell(
    publisher: Publisher,
    cell: &crate::plan::PlannedCell,
    progress: &crate::runner::cell::CellProgress,
) -> tokio::task::JoinHandle<()> {
    let (phase, ops) = (progress.phase.clone(), progress.ops.clone());
    let (target, size, id) = (cell.target.clone(), cell.size.clone(), cell.id.clone());
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let count = || ops.completed.load(Ordering::Relaxed);
        let (mut last_phase, mut window, mut rate) = ("", (tokio::time::Instant::now(), 0), None);
        loop {
            tick.tick().await;
            let now = *phase.lock().expect("phase lock");
            if now != last_phase {
                (last_phase, window, rate) = (now, (tokio::time::Instant::now(), count()), None);
            }
            let due = if rate.is_some() { OPS_WINDOW } else { FIRST_OPS_WINDOW };
            let (started, counted) = window;
            if started.elapsed() >= due {
                let sent = count().saturating_sub(counted) as f64;
                rate = Some((sent / started.elapsed().as_secs_f64()).round() as u64);
                window = (tokio::time::Instant::now(), count());
            }
            let sending = matches!(now, "warmup" | "measuring");
            publisher.publish(Activity {
                target: target.clone(),
                size: size.clone(),
                cell: Some(id.clone()),
                phase: now.to_owned(),
                ops_per_second: rate.filter(|_| sending),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_activity_round_trips_through_its_configmap_data() {
        for (cell, ops_per_second) in [(None, None), (Some("a.x86.1k.r2".to_owned()), Some(812))] {
            let a = Activity {
                target: "a".into(),
                size: "1k".into(),
                cell,
                phase: "measuring".into(),
                ops_per_second,
            };
            assert_eq!(Activity::from_data(&a.clone().into_data()), Some(a));
        }
        assert_eq!(Activity::from_data(&BTreeMap::new()), None);
    }

    #[tokio::test]
    async fn a_cell_sending_operations_publishes_its_rate_and_other_phases_none() {
        let (latest, changes) = watch::channel(None);
        let progress = crate::runner::cell::CellProgress::default();
        *progress.phase.lock().unwrap() = "measuring";
        let cell = crate::plan::PlannedCell {
            id: "a.local.1k.r1".into(),
            target: "a".into(),
            platform: "local".into(),
            size: "1k".into(),
            dataset: crate::api::DatasetSize::Documents(1000),
            repetition: 1,
        };
        let task = follow_cell(Publisher { latest }, &cell, &progress);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let published = || changes.borrow().clone().unwrap();
        assert_eq!(published().ops_per_second, None, "before its first window");
        // 1000 operations in the first window of about 2 s.
        progress.ops.completed.store(1000, Ordering::Relaxed);
        tokio::time::sleep(FIRST_OPS_WINDOW + Duration::from_millis(400)).await;
        let rate = published().ops_per_second.expect("a rate after the first window");
        assert!((400..=500).contains(&rate), "{rate}");
        assert_eq!(published().phase, "measuring");
        // Restoring sends nothing: no rate, though one was measured.
        *progress.phase.lock().unwrap() = "restoring";
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(
            (published().phase.as_str(), published().ops_per_second),
            ("restoring", None)
        );
        task.abort();
    }

    #[test]
    fn the_configmap_is_named_and_labelled_per_platform() {
        assert_eq!(
            configmap_name("Study", "c4a_axion"),
            "study-c4a-axion-activity"
        );
    }
}
