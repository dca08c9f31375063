//! `mongobench run --plan`: the runner Job's run of the plan file the operator wrote. This
//! reads the plan and the pod's environment, hands them to the runner's coordinator
//! (`runner::job`) and turns its outcome into the exit code and the termination message the
//! operator reports.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::cli::input::invalid;
use crate::cli::plan_file::read_plan;
use crate::contract::JobPlan;
use crate::runner::{COMPLETION_INDEX_ENV, ClientSlice, JOB_UID_ENV, JobEnvironment, run_job};

use super::args::RunArgs;

/// Runs a plan file inside the runner Job.
pub(super) async fn run_plan(path: &std::path::Path, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let plan = read_plan(path)?;
    let env = environment(&plan, Duration::from_secs(args.connect_timeout))?;
    let client = kube::Client::try_default()
        .await
        .context("connecting to the Kubernetes API for results")?;
    match run_job(&plan, &env, client).await {
        Ok(outcome) if outcome.incomplete.is_empty() => Ok(ExitCode::SUCCESS),
        Ok(outcome) => fail(&outcome.incomplete.join("; ")),
        Err(e) => fail(&e.to_string()),
    }
}

/// What the pod's environment says: each target's URI (in the variable the plan names), the
/// pod's completion index and the Job's uid.
fn environment(plan: &JobPlan, connect_timeout: Duration) -> anyhow::Result<JobEnvironment> {
    let uris = plan
        .targets
        .iter()
        .map(|t| {
            std::env::var(&t.uri_env)
                .map(|uri| (t.name.clone(), uri))
                .map_err(|_| {
                    invalid(format!(
                        "{} is not set: the Job passes target {}'s URI in it",
                        t.uri_env, t.name
                    ))
                })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let index = match std::env::var(COMPLETION_INDEX_ENV) {
        Ok(v) => v.parse::<u32>().map_err(|_| {
            invalid(format!(
                "{COMPLETION_INDEX_ENV}={v:?}: expected the pod's completion index, a number"
            ))
        })?,
        Err(_) => 0,
    };
    let slice = ClientSlice::new(index, plan.run.client_pods)
        .map_err(|e| invalid(format!("{COMPLETION_INDEX_ENV}: {e}")))?;
    Ok(JobEnvironment {
        uris,
        slice,
        job_uid: std::env::var(JOB_UID_ENV).ok(),
        connect_timeout,
    })
}

/// Ends the Job with `message` as its termination message (what the operator reports).
pub(super) fn fail(message: &str) -> anyhow::Result<ExitCode> {
    eprintln!("mongobench run: {message}");
    let _ = std::fs::write(
        "/dev/termination-log",
        message.chars().take(4000).collect::<String>(),
    );
    Ok(ExitCode::FAILURE)
}
