//! `mongobench plan`: how many slots a precision goal needs, estimated from results already
//! run (a short pilot, or an earlier run of the same experiment), read from the cluster or
//! from a `run --out` directory like `mongobench report` reads them (docs/results.md,
//! "Precision").

use std::process::ExitCode;

use super::input::invalid;
use super::validate::EXIT_INVALID;
use crate::report::{estimate, render_estimate};

/// Arguments of `mongobench plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub source: super::report::ResultsSource,
    /// The goal: the largest minimum detectable effect, percent (as spec.precision.mdePercent).
    #[arg(long, value_name = "PERCENT")]
    pub mde: f64,
    /// The slots the run will plan (spec.repetitions): the pilot whose spread decides how
    /// many slots the precision goal adds.
    #[arg(long, value_name = "SLOTS", default_value_t = 3)]
    pub pilot: usize,
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
    let (results, mut options) = args.source.load()?;
    if let Some(baseline) = &args.baseline {
        options.baseline = baseline.clone();
    }
    if results.is_empty() {
        eprintln!("mongobench plan: no results yet");
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    if !(1..=100).contains(&args.pilot) {
        return Err(invalid(format!(
            "--pilot {}: expected a number of slots from 1 to 100, as spec.repetitions",
            args.pilot
        )));
    }
    let estimates =
        estimate(&results, &options, args.mde, args.pilot).map_err(|e| invalid(e.to_string()))?;
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
        render_estimate(&estimates, &options.baseline, args.mde, args.pilot)
    );
    Ok(ExitCode::SUCCESS)
}
