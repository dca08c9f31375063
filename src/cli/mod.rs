//! Command-line interface of the `mongobench` binary. `main.rs` only parses and dispatches;
//! each subcommand lives in its own module here with a `run(args, out) -> Result<ExitCode>`
//! that tests can call directly.
//!
//! The top of the crate: it may use every other module (`runner/` for `run`, `operator/` for
//! `operator`, `report/` and `result/` for `report` and `verify`); outside tests only `main.rs`
//! uses it.

pub mod canary;
pub mod completions;
pub mod crd;
pub mod custom;
pub mod examples;
pub mod gate;
pub mod get;
pub mod import;
pub mod input;
pub mod kube_args;
mod manifest_kind;
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

/// The subcommands; each one's `--help` ends with examples ([`examples`]).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the MongoBenchmark CustomResourceDefinition as YAML
    /// (`mongobench crd | kubectl apply -f -`).
    #[command(after_long_help = examples::CRD)]
    Crd(crd::CrdArgs),
    /// Check MongoBenchmark manifests offline, print every violation with its field path, and
    /// what a valid benchmark will take (wall time, node-hours, cost).
    #[command(after_long_help = examples::VALIDATE)]
    Validate(validate::ValidateArgs),
    /// Run a benchmark against MongoDB URIs without Kubernetes, from a manifest (`-f`) or from
    /// flags (`--workload ycsb-a --duration 60s ...`); in the operator's Job, a plan file.
    #[command(after_long_help = examples::RUN)]
    Run(run::RunArgs),
    /// Run the MongoBenchmark operator (reconciles benchmarks in the cluster).
    #[command(after_long_help = examples::OPERATOR)]
    Operator(operator::OperatorArgs),
    /// Render a benchmark's results (from the cluster, or from `run --out` files).
    #[command(after_long_help = examples::REPORT)]
    Report(report::ReportArgs),
    /// Estimate the slots a precision goal needs from results already run.
    #[command(after_long_help = examples::PLAN)]
    Plan(plan::PlanArgs),
    /// List MongoBenchmarks with their phase, progress and headline (`-o wide`, `-w`).
    #[command(after_long_help = examples::GET)]
    Get(get::GetArgs),
    /// Check the traffic fingerprints of `run --out` files by generating the traffic again.
    #[command(after_long_help = examples::VERIFY)]
    Verify(verify::VerifyArgs),
    /// Turn another tool's workload files into a custom workload document
    /// (`mongobench import plgm --collections C.json --queries Q.json --out workload.yaml`).
    #[command(after_long_help = examples::IMPORT)]
    Import(import::ImportArgs),
    /// Probe this machine as the noise canary does (CPU, memory bandwidth, loopback), once, or
    /// with `--serve` for a runner that asks before every cell (a server member's sidecar).
    #[command(after_long_help = examples::CANARY)]
    Canary(canary::CanaryArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_long_help = examples::COMPLETIONS)]
    Completions(completions::CompletionsArgs),
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
            Command::Completions(_) => "completions",
        }
    }
}
