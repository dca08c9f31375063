//! Command-line interface of the `mongobench` binary. `main.rs` only parses and dispatches;
//! each subcommand lives in its own module here with a `run(args, out) -> Result<ExitCode>`
//! that tests can call directly.
//!
//! The top of the crate: it may use every other module (`runner/` for `run`, `operator/` for
//! `operator`, `report/` and `result/` for `report` and `verify`); outside tests only `main.rs`
//! uses it.

pub mod canary;
pub mod crd;
pub mod custom;
pub mod get;
pub mod import;
pub mod input;
pub mod operator;
pub mod plan;
pub mod plan_file;
pub mod report;
pub mod results_dir;
pub mod run;
pub mod validate;
pub mod verify;
pub mod yaml_lines;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// The name kubectl finds the binary by as a plugin (`kubectl mongobench ...`).
pub const KUBECTL_PLUGIN: &str = "kubectl-mongobench";

/// Benchmarks MongoDB versions and hardware with evidence.
#[derive(Debug, Parser)]
#[command(name = "mongobench", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the process's arguments; invoked as [`KUBECTL_PLUGIN`], help and errors name
    /// the command `kubectl mongobench`.
    pub fn parse_as_invoked() -> Cli {
        let invoked = std::env::args_os().next().unwrap_or_default();
        let plugin = std::path::Path::new(&invoked)
            .file_name()
            .is_some_and(|n| n == KUBECTL_PLUGIN);
        if !plugin {
            return Cli::parse();
        }
        let matches = Cli::command()
            .name("kubectl mongobench")
            .bin_name("kubectl mongobench")
            .get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
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
    /// Estimate the slots a precision goal needs from results already run.
    Plan(plan::PlanArgs),
    /// List MongoBenchmarks with their phase, progress and headline.
    Get(get::GetArgs),
    /// Check the traffic fingerprints of `run --out` files by generating the traffic again.
    Verify(verify::VerifyArgs),
    /// Turn another tool's workload files into a custom workload document
    /// (`mongobench import plgm --collections C.json --queries Q.json -o workload.yaml`).
    Import(import::ImportArgs),
    /// Probe this machine as the noise canary does (CPU, memory bandwidth, loopback), once, or
    /// with `--serve` for a runner that asks before every cell (a server member's sidecar).
    Canary(canary::CanaryArgs),
}

impl Command {
    /// The subcommand's name, as errors are prefixed with it (`mongobench run: ...`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Crd(_) => "crd",
            Command::Validate(_) => "validate",
            Command::Run(_) => "run",
            Command::Operator(_) => "operator",
            Command::Report(_) => "report",
            Command::Plan(_) => "plan",
            Command::Get(_) => "get",
            Command::Verify(_) => "verify",
            Command::Import(_) => "import",
            Command::Canary(_) => "canary",
        }
    }
}
