//! Publishes what a runner Job is doing for the operator (`contract::activity`): the newest
//! activity is written by one background task whenever the runner starts seeding a size or a
//! cell enters another phase. Publishing never fails the run: a failed write is logged and
//! superseded by the next.

use std::sync::atomic::Ordering;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use tokio::sync::watch;

use super::sink::owner_reference;
use crate::contract::names::{self, RUNNER_FIELD_MANAGER};
use crate::contract::{Activity, CellStep, JobPlan, RunnerStep};
use crate::plan::PlannedCell;
use crate::runner::cell::CellProgress;

/// How often a running cell's throughput is published: a write of its ConfigMap each time.
pub const OPS_WINDOW: Duration = Duration::from_secs(10);
/// The window of a step's first throughput, so that a short cell shows one too.
pub const FIRST_OPS_WINDOW: Duration = Duration::from_secs(2);

/// The activity ConfigMap of a runner.
pub fn activity_configmap(plan: &JobPlan, activity: Activity) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(names::activity_name(&plan.benchmark, &plan.platform)),
            namespace: plan.namespace.clone(),
            labels: Some(names::activity_labels(
                &plan.benchmark,
                &plan.run_id,
                &plan.platform,
            )),
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
            let name = names::activity_name(&plan.benchmark, &plan.platform);
            while changes.changed().await.is_ok() {
                let Some(activity) = changes.borrow_and_update().clone() else {
                    continue;
                };
                let cm = activity_configmap(&plan, activity);
                let params = PatchParams::apply(RUNNER_FIELD_MANAGER).force();
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

/// Publishes the step of a running cell every 250 ms and, while it sends operations, its
/// throughput: first over [`FIRST_OPS_WINDOW`] of a step, then over each [`OPS_WINDOW`],
/// until the task is aborted.
pub fn follow_cell(
    publisher: Publisher,
    cell: &PlannedCell,
    progress: &CellProgress,
) -> tokio::task::JoinHandle<()> {
    let (step, ops) = (progress.step.clone(), progress.ops.clone());
    let (target, size, id) = (cell.target.clone(), cell.size.clone(), cell.id.clone());
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let count = || ops.completed.load(Ordering::Relaxed);
        let mut last = None;
        let (mut window, mut rate) = ((tokio::time::Instant::now(), 0), None);
        loop {
            tick.tick().await;
            let now: CellStep = *step.lock().expect("step lock");
            if last != Some(now) {
                (last, window, rate) = (Some(now), (tokio::time::Instant::now(), count()), None);
            }
            let due = if rate.is_some() {
                OPS_WINDOW
            } else {
                FIRST_OPS_WINDOW
            };
            let (started, counted) = window;
            if started.elapsed() >= due {
                let sent = count().saturating_sub(counted) as f64;
                rate = Some((sent / started.elapsed().as_secs_f64()).round() as u64);
                window = (tokio::time::Instant::now(), count());
            }
            let sending = matches!(now, CellStep::Warmup | CellStep::Measuring);
            publisher.publish(Activity {
                target: target.clone(),
                size: size.clone(),
                cell: Some(id.clone()),
                phase: RunnerStep::Cell(now),
                ops_per_second: rate.filter(|_| sending),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cell_sending_operations_publishes_its_rate_and_other_steps_none() {
        let (latest, changes) = watch::channel(None);
        let progress = CellProgress::default();
        *progress.step.lock().unwrap() = CellStep::Measuring;
        let cell = PlannedCell {
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
        let rate = published()
            .ops_per_second
            .expect("a rate after the first window");
        assert!((400..=500).contains(&rate), "{rate}");
        assert_eq!(published().phase, RunnerStep::Cell(CellStep::Measuring));
        // Restoring sends nothing: no rate, though one was measured.
        *progress.step.lock().unwrap() = CellStep::Restoring;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(
            (published().phase, published().ops_per_second),
            (RunnerStep::Cell(CellStep::Restoring), None)
        );
        task.abort();
    }
}
