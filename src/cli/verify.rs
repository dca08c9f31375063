//! `mongobench verify DIR`: checks the traffic fingerprint of every result a local run wrote
//! (`mongobench run --out DIR`) by generating the measured streams again from each result's
//! workload identity and per-worker operation counts, without a server.
//!
//! Exit code 0 when no fingerprint disagrees, 1 when one does, 2 when the directory or a
//! result cannot be read.

use std::path::PathBuf;
use std::process::ExitCode;

use super::validate::EXIT_INVALID;
use crate::runner::identity::{Verification, verify};

/// Arguments of `mongobench verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// A directory of result files (`mongobench run --out DIR`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Runs the subcommand, one line per result on `out`.
pub fn run(args: &VerifyArgs, out: &mut impl std::io::Write) -> anyhow::Result<ExitCode> {
    let results = match super::report::read_results(&args.dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mongobench verify: {e:#}");
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    if results.is_empty() {
        eprintln!(
            "mongobench verify: {} holds no result files (*.json)",
            args.dir.display()
        );
        return Ok(ExitCode::from(EXIT_INVALID));
    }
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
