//! Command-line interface of the `mongobench` binary. `main.rs` only parses and dispatches;
//! each subcommand lives in its own module here with a `run(args, out) -> Result<ExitCode>`
//! that tests can call directly.

pub mod crd;
pub mod operator;
pub mod report;
pub mod run;
pub mod validate;
pub mod verify;
pub mod yaml_lines;

use clap::{Parser, Subcommand};

/// Benchmarks MongoDB versions and hardware with evidence.
#[derive(Debug, Parser)]
#[command(name = "mongobench", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the MongoBenchmark CustomResourceDefinition as YAML
    /// (`mongobench crd | kubectl apply -f -`).
    Crd(crd::CrdArgs),
    /// Check MongoBenchmark manifests offline and print every violation with its field path.
    Validate(validate::ValidateArgs),
    /// Run a benchmark against MongoDB URIs without Kubernetes (or, in the operator's Job, a
    /// plan file).
    Run(run::RunArgs),
    /// Run the MongoBenchmark operator (reconciles benchmarks in the cluster).
    Operator(operator::OperatorArgs),
    /// Render a benchmark's results (from the cluster, or from `run --out` files).
    Report(report::ReportArgs),
    /// Check the traffic fingerprints of `run --out` files by generating the traffic again.
    Verify(verify::VerifyArgs),
}
