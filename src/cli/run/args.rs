//! The command line of `mongobench run`.

use std::path::PathBuf;

use crate::plan::CONNECT_TIMEOUT;

/// Arguments of `mongobench run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The MongoBenchmark manifest whose dataset, workload and repetitions to run.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE",
        required_unless_present_any = ["plan", "workload"],
        conflicts_with_all = ["plan", "workload"]
    )]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub quick: QuickArgs,
    /// A deployment to benchmark, as NAME=URI (mongodb://... or mongodb+srv://...), or with
    /// the URI read from an environment variable, NAME=env:VARIABLE, or from a file of one
    /// line, NAME=file:PATH, to keep a password off the command line; repeat to compare several
    /// side by side. The first is the baseline unless the spec names one of them. A user or
    /// password is percent-encoded (`?` is %3F, `@` %40, `/` %2F, `:` %3A, `%` %25); messages
    /// show every URI as mongodb://***@HOSTS/...
    #[arg(long = "target", value_name = "NAME=URI")]
    pub targets: Vec<String>,
    /// A noise canary on one of target NAME's server nodes, as NAME=HOST:PORT (`mongobench
    /// canary --serve IP` running there; port 27117 by default); repeat for each node. It is
    /// asked for a probe of its node before each of NAME's cells.
    #[arg(
        long = "server-canary",
        value_name = "NAME=HOST:PORT",
        conflicts_with = "plan"
    )]
    pub server_canaries: Vec<String>,
    /// With `parallelism: Simultaneous` in the spec, the CPUs of each side, one list per target
    /// apart by '/' (`0/1`, `0-1/2-3`): each target's server (on this machine) and the client
    /// workers that load it run on one side's CPUs, and the targets trade sides slot by slot.
    #[arg(long, value_name = "CPUS/CPUS", conflicts_with = "plan")]
    pub cpu_sets: Option<String>,
    /// Write each cell's result as JSON, plus results.csv, report.txt, comparison.json (the
    /// comparison document) and verdicts.csv, into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub gate: crate::cli::gate::GateArgs,
    /// Run the plan file the operator wrote (inside the runner Job); the target's URI comes
    /// from MONGOBENCH_TARGET_URI and results go to ConfigMaps.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Seconds to wait for a server to answer before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = CONNECT_TIMEOUT.as_secs())]
    pub connect_timeout: u64,
    /// Run the workers in N processes of this machine, as `client.pods` runs them in N pods:
    /// process i runs workers [i·W/N, (i+1)·W/N), seeding is shared, and each cell's result
    /// merges theirs.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "plan",
        value_parser = clap::value_parser!(u32).range(1..=64)
    )]
    pub client_processes: u32,
    /// (Set by `--client-processes` for the processes it starts.) This process's index.
    #[arg(long, hide = true, requires = "board")]
    pub client_index: Option<u32>,
    /// (Set by `--client-processes`.) The directory the processes coordinate through.
    #[arg(long, hide = true, value_name = "DIR")]
    pub board: Option<PathBuf>,
}

/// A quick run without a manifest: the flags build the spec a manifest would hold (its
/// targets external, on one `local` platform); `--dry-run` prints that manifest instead.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct QuickArgs {
    /// Run without a manifest: `ycsb-a` to `ycsb-f` (YCSB's core workloads) or `flights`.
    #[arg(long, value_name = "WORKLOAD", conflicts_with = "plan")]
    pub workload: Option<String>,
    /// (Without a manifest.) Each cell's measured phase, e.g. `60s`, `10m`.
    #[arg(long, value_name = "DURATION", requires = "workload")]
    pub duration: Option<String>,
    /// (Without a manifest.) Each cell's warm-up before it, e.g. `10s`.
    #[arg(long, value_name = "DURATION", requires = "workload")]
    pub warmup: Option<String>,
    /// (Without a manifest.) Concurrent client workers.
    #[arg(long, value_name = "N", requires = "workload")]
    pub workers: Option<u32>,
    /// (Without a manifest.) Dataset sizes, ascending, comma-separated: documents (`10k`) or
    /// bytes (`1GiB`) [default: 10k].
    #[arg(
        long,
        value_name = "SIZES",
        value_delimiter = ',',
        requires = "workload"
    )]
    pub sizes: Vec<String>,
    /// (Without a manifest.) Repetitions of each target and size (3 or more for a verdict).
    #[arg(long, value_name = "N", requires = "workload")]
    pub repetitions: Option<u32>,
    /// (Without a manifest.) The benchmark's name [default: quick].
    #[arg(long, value_name = "NAME", requires = "workload")]
    pub name: Option<String>,
    /// (Without a manifest.) Print the MongoBenchmark manifest the flags stand for and run
    /// nothing.
    #[arg(long, requires = "workload")]
    pub dry_run: bool,
}
