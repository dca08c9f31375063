//! `mongobench completions SHELL`: the shell's completion script for every subcommand and
//! flag, generated from the same command-line definition the binary parses.

use std::io::Write;
use std::process::ExitCode;

use clap_complete::Shell;

/// Arguments of `mongobench completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// Writes the completion script of `command` (the binary's, `Cli::command()`) to `out`.
///
/// # Errors
/// When `out` cannot be written.
pub fn run(
    args: &CompletionsArgs,
    mut command: clap::Command,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    clap_complete::generate(args.shell, &mut command, "mongobench", out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
