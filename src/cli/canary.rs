//! `mongobench canary`: the noise canary's probe of this machine, printed once as JSON, or,
//! with `--serve`, taken for whoever connects: the sidecar beside every provisioned replica-set
//! member, which the runner asks before each cell (docs/results.md, "Noise canaries").
//!
//! The protocol is the least a probe needs: a connection is accepted, the probe runs, its
//! figures are written as one JSON line and the connection is closed. Probes run one at a
//! time, so two runners asking at once never measure each other.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::ExitCode;

use anyhow::Context;

use crate::measure::canary::{self, SERVER_CANARY_PORT};

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
    serve(&listener);
    Ok(ExitCode::SUCCESS)
}

/// Answers every connection to `listener` with a probe, one at a time; a connection that
/// goes away before its answer is written costs only its probe.
pub fn serve(listener: &TcpListener) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let figures = canary::probe();
        let line = serde_json::to_string(&figures).unwrap_or_default();
        if let Err(e) = writeln!(stream, "{line}") {
            tracing::debug!("a canary probe's answer was not delivered: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::probe_all;

    #[tokio::test]
    async fn a_runner_gets_a_probe_from_a_served_canary_and_a_reason_from_an_absent_one() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let served = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || serve(&listener));
        // A port nothing listens on: bound, then released.
        let absent = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .to_string();
        let answers = probe_all(&[served.clone(), absent.clone(), served.clone()]).await;
        let addresses: Vec<&str> = answers.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(addresses, [&served, &absent, &served]);
        for (_, answer) in [&answers[0], &answers[2]] {
            let figures = answer.as_ref().unwrap();
            assert!(
                figures.cpu_us > 0.0 && figures.memory_gbps > 0.0,
                "{figures:?}"
            );
            assert!(
                figures.loopback_rtt_us.is_some_and(|r| r > 0.0),
                "{figures:?}"
            );
        }
        let e = answers[1].1.as_ref().unwrap_err();
        assert!(e.starts_with("connecting: "), "{e}");
    }

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
