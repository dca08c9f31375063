//! `mongobench canary`: the noise canary's probe of this machine, printed once as JSON, or,
//! with `--serve`, taken for whoever connects (`runner::serve_canary`): the sidecar beside every
//! provisioned replica-set member, which the runner asks before each cell (docs/results.md,
//! "Noise canaries"), and at the start and end of each measured phase for the CPU time of the
//! server beside it (docs/design.md, "Where the server figures come from").

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::ExitCode;

use anyhow::Context;

use crate::measure::canary::{self, SERVER_CANARY_PORT};
use crate::runner::serve_canary;

/// Arguments of `mongobench canary`.
#[derive(Debug, clap::Args)]
pub struct CanaryArgs {
    /// Serve probes on this address (the pod's IP) instead of printing one.
    #[arg(long, value_name = "IP")]
    pub serve: Option<IpAddr>,
    /// The port to serve on.
    #[arg(long, default_value_t = SERVER_CANARY_PORT)]
    pub port: u16,
}

/// Prints one probe to `out`, or serves probes until the process is stopped.
///
/// # Errors
/// When the address cannot be listened on, or `out` cannot be written.
pub fn run(args: &CanaryArgs, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    let Some(ip) = args.serve else {
        writeln!(out, "{}", serde_json::to_string(&canary::probe())?)?;
        return Ok(ExitCode::SUCCESS);
    };
    let address = SocketAddr::new(ip, args.port);
    let listener = TcpListener::bind(address).with_context(|| format!("listening on {address}"))?;
    tracing::info!(%address, "serving noise canary probes");
    serve_canary(&listener);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_serve_one_probe_is_printed_as_json() {
        let mut out = Vec::new();
        let args = CanaryArgs {
            serve: None,
            port: SERVER_CANARY_PORT,
        };
        run(&args, &mut out).unwrap();
        let figures: canary::CanaryFigures = serde_json::from_slice(&out).unwrap();
        assert!(figures.cpu_us > 0.0, "{figures:?}");
    }
}
