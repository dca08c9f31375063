//! The runner Job's run of a plan the operator wrote, behind one entry point ([`run_job`]):
//! bring up provisioned sharded clusters and initiate replica sets, connect, resume after the
//! cells an earlier attempt of the pod finished, run the benchmark (or, on a pod above 0,
//! follow the coordinator), publish what it is doing and write each cell's result to its
//! ConfigMap as it lands. Its limits come from the plan.

use std::time::Duration;

use crate::contract::{Activity, CellStep, JobPlan, RunnerStep};
use crate::plan::PlannedCell;
use crate::result::{CellResult, CellStatus};

use super::activity::Publisher;
use super::benchmark::{self, Events};
use super::cell::CellProgress;
use super::crew::{Board, ClientSlice, ConfigMapBoard, Crew, Member};
use super::dataset::Seeded;
use super::follower::Follower;
use super::lines;
use super::server::{rs_init, sharding};
use super::setup::{self, SetupError};
use super::sink::{self, SinkError};

/// What the Job's environment gives a runner pod besides its plan.
#[derive(Debug, Clone)]
pub struct JobEnvironment {
    /// Each plan target's name and URI, in plan order.
    pub uris: Vec<(String, String)>,
    /// This pod's share of the plan's client pods.
    pub slice: ClientSlice,
    /// The Job's uid (the board's keys are prefixed with it, so a re-created Job starts clean).
    pub job_uid: Option<String>,
    pub connect_timeout: Duration,
}

/// Why a runner pod stopped before its cells could run or be kept.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("{0}")]
    Setup(#[from] SetupError),
    #[error("target {target}: sharded cluster: {message}")]
    BringUp { target: String, message: String },
    #[error("target {target}: replica-set initiation: {message}")]
    Initiate { target: String, message: String },
    #[error("the plan runs {pods} client pods but names no board ConfigMap for them")]
    NoBoard { pods: u32 },
    #[error("client pods: {0}")]
    Crew(String),
    #[error("{slice}: the board of the client pods is gone before the run ended")]
    BoardGone { slice: ClientSlice },
    #[error("{0}")]
    Results(#[from] SinkError),
}

/// How a runner pod's run ended: the reasons of the cells that did not complete (empty when
/// every cell did).
#[derive(Debug, Default)]
pub struct JobOutcome {
    pub incomplete: Vec<String>,
}

/// Runs `plan` in a pod of its runner Job.
///
/// # Errors
/// [`JobError`]: a step before the cells failed, or a result could not be written.
pub async fn run_job(
    plan: &JobPlan,
    env: &JobEnvironment,
    client: kube::Client,
) -> Result<JobOutcome, JobError> {
    let mut bench = setup::benchmark(plan)?;
    let publisher = Publisher::start(client.clone(), plan);
    let coordinator = env.slice.is_coordinator();
    if coordinator {
        prepare_servers(plan, env, &publisher).await?;
    }
    if !coordinator {
        let board = board(plan, env, &client)?;
        let (member, after) = Member::join(board, env.slice)
            .await
            .map_err(|e| JobError::Crew(e.to_string()))?;
        tracing::info!(
            "{}: ready, runs workers {:?}",
            env.slice,
            env.slice.workers(bench.settings.workers)
        );
        let follower = Follower {
            bench: &bench,
            targets: env.uris.clone(),
            compressors: plan.run.wire_compressors.clone(),
            connect_timeout: env.connect_timeout,
        };
        return if follower.run(&member, after).await {
            Ok(JobOutcome::default())
        } else {
            Err(JobError::BoardGone { slice: env.slice })
        };
    }
    let connected = setup::connect_all(plan, &env.uris, env.connect_timeout).await?;
    // A retried pod of the Job resumes after the cells its killed predecessor finished.
    bench
        .completed
        .extend(sink::written_cells(&client, plan).await);
    let crew = match env.slice.count {
        1 => None,
        _ => Some(
            Crew::start(board(plan, env, &client)?, env.slice)
                .await
                .map_err(|e| JobError::Crew(e.to_string()))?,
        ),
    };
    let mut events = JobEvents {
        client,
        plan,
        incomplete: Vec::new(),
        activity: publisher,
        steps: None,
    };
    benchmark::run_with(&bench, &connected, &mut events, crew.as_ref()).await?;
    Ok(JobOutcome {
        incomplete: events.incomplete,
    })
}

/// Brings up the plan's provisioned sharded clusters and initiates its replica sets.
async fn prepare_servers(
    plan: &JobPlan,
    env: &JobEnvironment,
    publisher: &Publisher,
) -> Result<(), JobError> {
    let timeouts = plan.run.timeouts;
    let first_size = plan.run.sizes.first().cloned().unwrap_or_default();
    for (t, (_, uri)) in plan.targets.iter().zip(&env.uris) {
        if let Some(cluster) = &t.cluster {
            let balancer = plan
                .run
                .sharding
                .as_ref()
                .map(|s| s.balancer())
                .unwrap_or_default();
            let mut step = |what: String| {
                publisher.publish(Activity {
                    target: t.name.clone(),
                    size: first_size.clone(),
                    cell: None,
                    phase: RunnerStep::BringingUp(what),
                });
            };
            let limit = Duration::from_secs(timeouts.bring_up_seconds);
            sharding::bring_up(cluster, uri, balancer, limit, &mut step)
                .await
                .map_err(|e| JobError::BringUp {
                    target: t.name.clone(),
                    message: e.to_string(),
                })?;
        }
        if let (false, Some(set)) = (t.initiate_members.is_empty(), &t.replica_set_name) {
            let limit = Duration::from_secs(timeouts.initiate_seconds);
            rs_init::initiate(set, &t.initiate_members, uri, limit)
                .await
                .map_err(|e| JobError::Initiate {
                    target: t.name.clone(),
                    message: e.to_string(),
                })?;
        }
    }
    Ok(())
}

/// The board of a plan's client pods.
fn board(plan: &JobPlan, env: &JobEnvironment, client: &kube::Client) -> Result<Board, JobError> {
    let name = plan.board.clone().ok_or(JobError::NoBoard {
        pods: plan.run.client_pods,
    })?;
    let prefix = env
        .job_uid
        .as_ref()
        .map(|uid| format!("{}.", uid.chars().take(8).collect::<String>()))
        .unwrap_or_default();
    let namespace = plan.namespace.as_deref().unwrap_or("default");
    Ok(Board::ConfigMap(Box::new(ConfigMapBoard {
        api: kube::Api::namespaced(client.clone(), namespace),
        name,
        prefix,
        owner: sink::owner_reference(plan),
    })))
}

/// The runner Job's results: each written to its ConfigMap as it lands; what it is doing,
/// published for the operator.
struct JobEvents<'a> {
    client: kube::Client,
    plan: &'a JobPlan,
    incomplete: Vec<String>,
    activity: Publisher,
    /// Follows the steps of the running cell (the first of a simultaneous slot's), by id.
    steps: Option<(String, tokio::task::JoinHandle<()>)>,
}

impl Events for JobEvents<'_> {
    fn seeding(&mut self, target: &str, size: &str, documents: u64) {
        tracing::info!(target, size, documents, "seeding");
        self.activity.publish(Activity {
            target: target.to_owned(),
            size: size.to_owned(),
            cell: None,
            phase: RunnerStep::Seeding,
        });
    }

    fn seeded(&mut self, target: &str, size: &str, seeded: &Seeded) {
        tracing::info!("{}", lines::seeded_line(target, size, seeded));
    }

    fn started(&mut self, cell: &PlannedCell, progress: &CellProgress) {
        tracing::info!(cell = %cell.id, "running");
        if self.steps.is_some() {
            return;
        }
        let step = progress.step.clone();
        let publisher = self.activity.clone();
        let (target, size, id) = (cell.target.clone(), cell.size.clone(), cell.id.clone());
        let follow = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let now: CellStep = *step.lock().expect("step lock");
                publisher.publish(Activity {
                    target: target.clone(),
                    size: size.clone(),
                    cell: Some(id.clone()),
                    phase: RunnerStep::Cell(now),
                });
            }
        });
        self.steps = Some((cell.id.clone(), follow));
    }

    async fn finished(&mut self, cell: &PlannedCell, result: &CellResult) -> Result<(), SinkError> {
        if self.steps.as_ref().is_some_and(|(id, _)| *id == cell.id)
            && let Some((_, follow)) = self.steps.take()
        {
            follow.abort();
        }
        tracing::info!("{}", lines::cell_line(cell, result));
        let mut result = result.clone();
        if let Some(facts) = self
            .plan
            .target(&cell.target)
            .and_then(|t| t.facts.as_ref())
        {
            facts.fill(&mut result);
        }
        sink::write_configmap(&self.client, self.plan, &cell.id, &result).await?;
        if let CellStatus::Incomplete { reason } = &result.status {
            self.incomplete.push(reason.clone());
        }
        Ok(())
    }
}
