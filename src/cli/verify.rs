//! `mongobench verify DIR`: checks the traffic fingerprint of every result a local run wrote
//! (`mongobench run --out DIR`) by generating the measured streams again from each result's
//! workload identity and per-worker operation counts, without a server.
//!
//! Exit code 0 when no fingerprint disagrees, 1 when one does, 2 when the directory or a
//! result cannot be read (the refusals of [`super::results_dir`], one line).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::runner::cell::identity::{Verification, verify};

/// Arguments of `mongobench verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// A directory of result files (`mongobench run --out DIR`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Runs the subcommand, one line per result on `out`.
///
/// # Errors
/// An [`Invalid`](super::input::Invalid) error when the directory or a result cannot be read.
pub fn run(args: &VerifyArgs, out: &mut impl std::io::Write) -> anyhow::Result<ExitCode> {
    let results = super::results_dir::read_results(&args.dir)?;
    let (mut verified, mut mismatched, mut other) = (0, 0, 0);
    for result in &results {
        let line = match verify(result) {
            Ok(Verification::Verified) => {
                verified += 1;
                "verified".to_owned()
            }
            Ok(Verification::Mismatch { expected, recorded }) => {
                mismatched += 1;
                format!(
                    "MISMATCH: the identity and counts give {expected}, the result records {recorded}"
                )
            }
            Ok(Verification::NotReproducible(why)) => {
                other += 1;
                format!("not reproducible: {why}")
            }
            Err(e) => {
                other += 1;
                format!("cannot check: {e}")
            }
        };
        writeln!(out, "{}: {line}", result.cell)?;
    }
    writeln!(
        out,
        "{verified} verified, {mismatched} mismatched, {other} not checkable of {} results",
        results.len()
    )?;
    Ok(if mismatched == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
