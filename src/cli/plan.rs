//! `mongobench plan`: how many slots a precision goal needs, estimated from results already
//! run (a short pilot, or an earlier run of the same experiment), read from the cluster or
//! from a `run --out` directory like `mongobench report` reads them (docs/results.md,
//! "Precision").

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::input::invalid;
use super::validate::EXIT_INVALID;
use crate::report::{estimate, render_estimate};

/// Arguments of `mongobench plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The MongoBenchmark whose results to start from.
    #[arg(
        value_name = "NAME",
        required_unless_present = "dir",
        conflicts_with = "dir"
    )]
    pub name: Option<String>,
    /// Namespace of the MongoBenchmark (default: the kubeconfig's namespace).
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Start from the result files of a local run (`mongobench run --out DIR`) instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The goal: the largest minimum detectable effect, percent (as spec.precision.mdePercent).
    #[arg(long, value_name = "PERCENT")]
    pub mde: f64,
    /// The target compared with the others (default as `mongobench report`).
    #[arg(long, value_name = "TARGET")]
    pub baseline: Option<String>,
}

/// Runs the subcommand.
pub fn run(args: &PlanArgs) -> anyhow::Result<ExitCode> {
    if !(0.1..=100.0).contains(&args.mde) {
        return Err(invalid(format!(
            "--mde {}: expected a percentage from 0.1 to 100, as spec.precision.mdePercent",
            args.mde
        )));
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let (results, mut options) = match (&args.dir, &args.name) {
        (Some(dir), _) => super::report::from_dir(dir)?,
        (None, Some(name)) => {
            runtime.block_on(super::report::from_cluster(name, args.namespace.as_deref()))?
        }
        (None, None) => unreachable!("clap requires NAME or --dir"),
    };
    if let Some(baseline) = &args.baseline {
        options.baseline = baseline.clone();
    }
    if results.is_empty() {
        eprintln!("mongobench plan: no results yet");
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    let estimates = estimate(&results, &options, args.mde).map_err(|e| invalid(e.to_string()))?;
    if estimates.is_empty() {
        eprintln!(
            "mongobench plan: nothing to estimate: no target is compared with {} (one target, \
             or identities that differ)",
            options.baseline
        );
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    print!(
        "{}",
        render_estimate(&estimates, &options.baseline, args.mde)
    );
    Ok(ExitCode::SUCCESS)
}
