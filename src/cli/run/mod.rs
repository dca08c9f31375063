//! `mongobench run`: runs a benchmark without Kubernetes against the deployments given on the
//! command line (`-f benchmark.yaml --target NAME=URI ...`, or without a manifest
//! `--workload ycsb-a --duration 60s --target NAME=URI ...`), side by side, or, inside the
//! operator's Job, the plan file the operator wrote (`--plan FILE`).
//!
//! Bad input (a spec that does not validate, a malformed `--target`, a URI that does not parse,
//! a server that does not answer) ends with one clear message and exit code 2 before anything
//! is written. A cell that cannot finish is reported as incomplete, never as a result; the
//! exit code is then 1. With `--out`, the comparison document and its verdicts as CSV are
//! written beside the results; the gate's flags (`cli::gate`) end a complete run whose verdicts
//! they fail with exit code 3.
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

/// Runs the subcommand; exit 0 when every cell is complete, 1 when any is not, 3 when they are
/// and the gate fails a verdict ([`EXIT_GATE`](crate::cli::gate::EXIT_GATE)); bad input is an
/// [`Invalid`](crate::cli::input::Invalid) error (exit code 2).
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.quick.dry_run {
        // Checked as a run would check it: a manifest printed is one that runs.
        quick::definition(args)?;
        print!("{}", quick::manifest(&args.quick, &args.targets)?);
        return Ok(ExitCode::SUCCESS);
    }
    if args.plan.is_some() && args.gate.wanted() {
        // The operator compares a Job's results in the benchmark's status, not the Job.
        return Err(crate::cli::input::invalid(
            "--plan: the gate's flags (--fail-on-*, --junit) judge a local run; for a \
             benchmark in a cluster use `mongobench report NAME` with them",
        ));
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        match &args.plan {
            Some(plan) => job::run_plan(plan, args).await,
            None => local::run_local(args).await,
        }
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};

    #[test]
    fn the_gate_is_refused_in_the_runner_job() {
        let cli = Cli::try_parse_from([
            "mongobench",
            "run",
            "--plan",
            "/nonexistent/plan.yaml",
            "--fail-on-slower",
            "5",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("parsed as run")
        };
        let e = super::run(&args).unwrap_err();
        assert!(e.is::<crate::cli::input::Invalid>());
        assert_eq!(
            e.to_string(),
            "--plan: the gate's flags (--fail-on-*, --junit) judge a local run; for a benchmark \
             in a cluster use `mongobench report NAME` with them"
        );
    }
}
