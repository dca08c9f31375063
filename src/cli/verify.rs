//! `mongobench verify DIR`: checks the traffic fingerprint of every result a local run wrote
//! (`mongobench run --out DIR`) by generating the measured streams again from each result's
//! workload identity and per-worker operation counts, without a server.
//!
//! Exit code 0 when no fingerprint disagrees, 1 when one does, 2 when the directory or a
//! result cannot be read (the refusals of [`super::results_dir`], one line).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::runner::{CUSTOM_WORKLOAD_FILE, Verification, verify_with};

/// Arguments of `mongobench verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// A directory of result files (`mongobench run --out DIR`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The document of the results' custom workload (default: the custom-workload.yaml that
    /// `mongobench run --out DIR` writes into DIR).
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
}

/// Runs the subcommand, one line per result on `out`.
///
/// # Errors
/// An [`Invalid`](super::input::Invalid) error when the directory or a result cannot be read.
pub fn run(args: &VerifyArgs, out: &mut impl std::io::Write) -> anyhow::Result<ExitCode> {
    let results = super::results_dir::read_results(&args.dir)?;
    let document = custom_document(args)?;
    let (mut verified, mut mismatched, mut other) = (0, 0, 0);
    for result in &results {
        let line = match verify_with(result, document.as_ref()) {
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

/// The custom workload document `--workload` names, else the one in the results' directory.
fn custom_document(
    args: &VerifyArgs,
) -> anyhow::Result<Option<std::sync::Arc<crate::workload::custom::Workload>>> {
    let beside = args.dir.join(CUSTOM_WORKLOAD_FILE);
    let path = match &args.workload {
        Some(path) => path.clone(),
        None if beside.is_file() => beside,
        None => return Ok(None),
    };
    let shown = super::input::label(&path);
    let text = super::input::read_text(&path, super::input::MAX_MANIFEST_BYTES, "custom workload")
        .map_err(|p| super::input::invalid(p.render(&shown)))?;
    let workload = crate::plan::custom::parse_document(&text, &shown)
        .map_err(|e| super::input::invalid(e.to_string()))?;
    Ok(Some(std::sync::Arc::new(workload)))
}
