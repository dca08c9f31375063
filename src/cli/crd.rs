//! `mongobench crd`: prints the CRD YAML that `manifests/crd.yaml` holds.

use std::io::Write;
use std::process::ExitCode;

/// Arguments of `mongobench crd` (none yet).
#[derive(Debug, clap::Args)]
pub struct CrdArgs {}

/// Writes the CRD YAML to `out`.
///
/// # Errors
/// When `out` cannot be written.
pub fn run(_args: &CrdArgs, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    out.write_all(crate::api::crd_yaml().as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
