//! `mongobench run --plan`: the runner Job's run of the plan file the operator wrote, its
//! results written to ConfigMaps as they land and its activity published; with `client.pods`
//! above 1, pod 0 coordinates and the others follow.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::cli::input::invalid;
use crate::cli::plan_file::read_plan;
use crate::plan::{JobPlan, PlannedCell};
use crate::result::{CellResult, CellStatus};
use crate::runner::activity::{self, Activity};
use crate::runner::benchmark::{self, Events};
use crate::runner::cell::CellProgress;
use crate::runner::crew::{
    Board, COMPLETION_INDEX_ENV, ClientSlice, ConfigMapBoard, Crew, JOB_UID_ENV,
};
use crate::runner::dataset::Seeded;
use crate::runner::server::{rs_init, sharding};
use crate::runner::sink;

use super::args::RunArgs;
use super::follow::{fail, follow};
use super::progress::{seeded_line, summary};
use super::start::{benchmark, connect_all};

/// The runner Job's results: each written to its ConfigMap as it lands; what it is doing,
/// published for the operator.
struct JobEvents<'a> {
    client: kube::Client,
    job: &'a JobPlan,
    failures: Vec<String>,
    activity: activity::Publisher,
    /// Follows the phases of the running cell.
    phases: Option<tokio::task::JoinHandle<()>>,
}

impl Events for JobEvents<'_> {
    fn seeding(&mut self, target: &str, size: &str, documents: u64) {
        eprintln!("{target}: seeding to {size} ({documents} documents)");
        self.activity.publish(Activity {
            target: target.to_owned(),
            size: size.to_owned(),
            cell: None,
            phase: "seeding".to_owned(),
        });
    }

    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded) {
        eprintln!("{}", seeded_line(target, size, seeded));
    }

    fn started(&mut self, cell: &PlannedCell, progress: &CellProgress) {
        eprintln!("{}: running", cell.id);
        let phase = progress.phase.clone();
        let publisher = self.activity.clone();
        let (target, size, id) = (cell.target.clone(), cell.size.clone(), cell.id.clone());
        self.phases = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let now = *phase.lock().expect("phase lock");
                publisher.publish(Activity {
                    target: target.clone(),
                    size: size.clone(),
                    cell: Some(id.clone()),
                    phase: now.to_owned(),
                });
            }
        }));
    }

    async fn finished(&mut self, cell: &PlannedCell, result: &CellResult) -> anyhow::Result<()> {
        if let Some(phases) = self.phases.take() {
            phases.abort();
        }
        eprintln!("{}", summary(cell, result));
        let facts = self
            .job
            .targets
            .iter()
            .find(|t| t.name == cell.target)
            .and_then(|t| t.facts.as_ref());
        match facts {
            Some(facts) => {
                let mut result = result.clone();
                facts.fill(&mut result);
                sink::write_configmap(&self.client, self.job, &cell.id, &result).await?;
            }
            None => sink::write_configmap(&self.client, self.job, &cell.id, result).await?,
        }
        if let CellStatus::Incomplete { reason } = &result.status {
            self.failures.push(reason.clone());
        }
        Ok(())
    }
}

/// This pod's share of the plan's client pods.
fn plan_slice(job: &JobPlan) -> anyhow::Result<ClientSlice> {
    let index = match std::env::var(COMPLETION_INDEX_ENV) {
        Ok(v) => v.parse::<u32>().map_err(|_| {
            invalid(format!(
                "{COMPLETION_INDEX_ENV}={v:?}: expected the pod's completion index, a number"
            ))
        })?,
        Err(_) => 0,
    };
    ClientSlice::new(index, job.spec.client_pods())
        .map_err(|e| invalid(format!("{COMPLETION_INDEX_ENV}: {e}")))
}

/// The board of a plan's client pods.
fn plan_board(job: &JobPlan, client: &kube::Client) -> anyhow::Result<Board> {
    let name = job.board.clone().ok_or_else(|| {
        invalid(format!(
            "the plan runs {} client pods but names no board ConfigMap for them",
            job.spec.client_pods()
        ))
    })?;
    let prefix = std::env::var(JOB_UID_ENV)
        .map(|uid| format!("{}.", uid.chars().take(8).collect::<String>()))
        .unwrap_or_default();
    let namespace = job.namespace.as_deref().unwrap_or("default");
    Ok(Board::ConfigMap(Box::new(ConfigMapBoard {
        api: kube::Api::namespaced(client.clone(), namespace),
        name,
        prefix,
        owner: sink::owner_reference(job),
    })))
}

/// Runs a plan file inside the runner Job: the whole plan, or with `client.pods` above 1,
/// pod 0 as the coordinator and the others following it.
pub(super) async fn run_plan(path: &std::path::Path, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let job = read_plan(path)?;
    let mut bench = benchmark(
        &job.spec,
        &job.benchmark,
        &job.run_id,
        &job.platform,
        &job.completed_cells,
    )?;
    let slice = plan_slice(&job)?;

    let mut targets = Vec::new();
    for t in &job.targets {
        let uri = std::env::var(&t.uri_env).map_err(|_| {
            invalid(format!(
                "{} is not set: the Job passes target {}'s URI in it",
                t.uri_env, t.name
            ))
        })?;
        targets.push((t.name.clone(), t.connection_uri(&uri)));
        if !t.server_canaries.is_empty() {
            bench
                .server_canaries
                .insert(t.name.clone(), t.server_canaries.clone());
        }
    }
    let client = kube::Client::try_default()
        .await
        .context("connecting to the Kubernetes API for results")?;
    let publisher = activity::Publisher::start(client.clone(), &job);
    for (t, (_, uri)) in job.targets.iter().zip(&targets) {
        if let (Some(cluster), true) = (&t.cluster, slice.is_coordinator()) {
            let balancer = job
                .spec
                .workload
                .sharding
                .as_ref()
                .map(|s| s.balancer())
                .unwrap_or_default();
            let size = job.spec.dataset.sizes.first().cloned().unwrap_or_default();
            let mut step = |what: String| {
                publisher.publish(Activity {
                    target: t.name.clone(),
                    size: size.clone(),
                    cell: None,
                    phase: format!("{}: {what}", activity::BRINGING_UP),
                });
            };
            let limit = Duration::from_secs(300);
            let up = sharding::bring_up(cluster, uri, balancer, limit, &mut step).await;
            if let Err(e) = up {
                return fail(&format!("target {}: sharded cluster: {e}", t.name));
            }
        }
        if !t.initiate_members.is_empty() && slice.is_coordinator() {
            let set = t
                .replica_set_name
                .clone()
                .unwrap_or_else(|| "rs0".to_owned());
            if let Err(e) =
                rs_init::initiate(&set, &t.initiate_members, uri, Duration::from_secs(300)).await
            {
                return fail(&format!("target {}: replica-set initiation: {e}", t.name));
            }
        }
    }
    let timeout = Duration::from_secs(args.connect_timeout);
    if !slice.is_coordinator() {
        let board = plan_board(&job, &client)?;
        return follow(board, slice, &bench, targets, &job.spec, timeout).await;
    }
    let connected = match connect_all(&targets, &job.spec, timeout).await {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    // A retried pod of the Job resumes after the cells its killed predecessor finished.
    bench
        .completed
        .extend(sink::written_cells(&client, &job).await);
    let crew = if slice.count > 1 {
        match Crew::start(plan_board(&job, &client)?, slice).await {
            Ok(crew) => Some(crew),
            Err(e) => return fail(&format!("client pods: {e}")),
        }
    } else {
        None
    };
    let mut events = JobEvents {
        activity: publisher,
        client,
        job: &job,
        failures: Vec::new(),
        phases: None,
    };
    benchmark::run_with(&bench, &connected, &mut events, crew.as_ref()).await?;
    if events.failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        fail(&events.failures.join("; "))
    }
}
