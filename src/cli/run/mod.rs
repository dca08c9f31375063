//! `mongobench run`: runs a benchmark without Kubernetes against the deployments given on the
//! command line (`-f benchmark.yaml --target NAME=URI ...`, or without a manifest
//! `--workload ycsb-a --duration 60s --target NAME=URI ...`), side by side, or, inside the
//! operator's Job, the plan file the operator wrote (`--plan FILE`).
//!
//! Bad input (a spec that does not validate, a malformed `--target`, a URI that does not parse,
//! a server that does not answer) ends with one clear message and exit code 2 before anything
//! is written. A cell that cannot finish is reported as incomplete, never as a result; the
//! exit code is then 1.
//!
//! `args.rs` holds the command line, `targets.rs` its `--target`s, `quick.rs` the manifest a
//! run without one stands for, `start.rs` what a local run starts from, `local.rs` and `job.rs`
//! the two runs (each reads its input, calls the runner's entry point and prints) and
//! `progress.rs` what is shown. Uses the runner's entry points (what `runner/mod.rs` exports),
//! `contract/`, `report/` and the CLI's own input readers.

mod args;
mod job;
mod local;
mod progress;
mod quick;
mod start;
mod targets;

use std::process::ExitCode;

use anyhow::Context;

pub use args::{QuickArgs, RunArgs};
pub use start::read_spec;
pub use targets::parse_targets;

/// Runs the subcommand; exit 0 when every cell is complete, 1 when any is not; bad input is an
/// [`Invalid`](crate::cli::input::Invalid) error (exit code 2).
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.quick.dry_run {
        // Checked as a run would check it: a manifest printed is one that runs.
        quick::definition(args)?;
        print!("{}", quick::manifest(&args.quick, &args.targets)?);
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        match &args.plan {
            Some(plan) => job::run_plan(plan, args).await,
            None => local::run_local(args).await,
        }
    })
}
