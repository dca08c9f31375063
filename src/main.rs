//! The `mongobench` binary: parses the command line and hands each subcommand to the library.

use std::process::ExitCode;

use mongobench::cli::{Cli, Command};

fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse_as_invoked();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Crd(args) => mongobench::cli::crd::run(&args, &mut std::io::stdout().lock()),
        Command::Operator(args) => mongobench::cli::operator::run(&args),
        Command::Validate(args) => {
            mongobench::cli::validate::run(&args, &mut std::io::stdout().lock())
        }
        Command::Run(args) => mongobench::cli::run::run(&args),
        Command::Report(args) => mongobench::cli::report::run(&args),
        Command::Get(args) => mongobench::cli::get::run(&args),
        Command::Verify(args) => mongobench::cli::verify::run(&args, &mut std::io::stdout().lock()),
    }
}
