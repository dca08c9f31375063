//! The `mongobench` binary: parses the command line and hands each subcommand to the library.
//!
//! A subcommand's error is printed as one line, `mongobench <subcommand>: <message>`: bad input
//! ([`Invalid`]) exits with code 2, anything else with 1.

use std::process::ExitCode;

use clap::CommandFactory;
use mongobench::cli::input::Invalid;
use mongobench::cli::validate::EXIT_INVALID;
use mongobench::cli::{Cli, Command};

// Every operation allocates its command and reply documents, so the allocator is the load
// generator's largest cost: mimalloc, measured against glibc's in BENCHMARKS.md (musl's, in
// the image's static binaries, is slower still under many threads).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse_as_invoked();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let name = cli.command.name();
    let outcome = match cli.command {
        Command::Crd(args) => mongobench::cli::crd::run(&args, &mut std::io::stdout().lock()),
        Command::Operator(args) => mongobench::cli::operator::run(&args),
        Command::Validate(args) => {
            mongobench::cli::validate::run(&args, &mut std::io::stdout().lock())
        }
        Command::Run(args) => mongobench::cli::run::run(&args),
        Command::Report(args) => mongobench::cli::report::run(&args),
        Command::Plan(args) => mongobench::cli::plan::run(&args),
        Command::Get(args) => mongobench::cli::get::run(&args),
        Command::Verify(args) => mongobench::cli::verify::run(&args, &mut std::io::stdout().lock()),
        Command::Canary(args) => mongobench::cli::canary::run(&args, &mut std::io::stdout().lock()),
        Command::Completions(args) => {
            mongobench::cli::completions::run(&args, Cli::command(), &mut std::io::stdout().lock())
        }
        Command::Import(args) => mongobench::cli::import::run(
            &args,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` joins the causes on one line.
            eprintln!("mongobench {name}: {e:#}");
            if e.is::<Invalid>() {
                ExitCode::from(EXIT_INVALID)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
