//! Each member's CPU time as the operating system counts it, read at the start and the end of
//! the measured phase beside the `serverStatus` rounds: by the canary beside the member (a
//! provisioned member's sidecar, asked `cpu PORT`), else by the runner itself when the member
//! listens on this machine (a loopback address). A member that is neither is not read.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::measure::canary::CanaryRequest;
use crate::measure::server::{CpuAnswer, OsCpuDelta, OsCpuSample};

use super::process_cpu::{self, ProcessQuery, loopback_addresses};

/// How long one answer of a canary may take, connection included.
pub const CANARY_TIMEOUT: Duration = Duration::from_secs(5);
/// The most an answer may hold: one JSON line.
const MAX_ANSWER: u64 = 4096;

/// Sends `request` to the canary at `address` (`host:port`) and returns its one-line answer.
///
/// # Errors
/// Why there is no answer: the connection, the read, or the time it took.
pub async fn ask_canary(address: &str, request: &CanaryRequest) -> Result<String, String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        stream
            .write_all(format!("{request}\n").as_bytes())
            .await
            .map_err(|e| format!("sending the request: {e}"))?;
        let mut text = String::new();
        stream
            .take(MAX_ANSWER)
            .read_to_string(&mut text)
            .await
            .map_err(|e| format!("reading the answer: {e}"))?;
        Ok(text.trim().to_owned())
    };
    match tokio::time::timeout(CANARY_TIMEOUT, exchange).await {
        Ok(answer) => answer,
        Err(_) => Err(format!("no answer within {} s", CANARY_TIMEOUT.as_secs())),
    }
}

/// Who reads one member's CPU time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuReader {
    /// The runner, from this machine's `/proc`.
    Runner(ProcessQuery),
    /// The canary at `address`, about the server on `port` beside it.
    Canary {
        /// The canary's `host:port`.
        address: String,
        /// The member's port.
        port: u16,
    },
}

/// `host:port` split; the host keeps an IPv6 address's brackets.
fn host_port(address: &str) -> Option<(&str, u16)> {
    let (host, port) = address.rsplit_once(':')?;
    Some((host, port.parse().ok()?))
}

impl CpuReader {
    /// The reader of `member` (`host:port`): the canary of `canaries` on the member's host,
    /// else the runner for a member on this machine; `None` for a member neither can read.
    pub fn for_member(member: &str, canaries: &[String]) -> Option<CpuReader> {
        let (host, port) = host_port(member)?;
        if let Some(canary) = canaries
            .iter()
            .find(|c| host_port(c).is_some_and(|(h, _)| h.eq_ignore_ascii_case(host)))
        {
            return Some(CpuReader::Canary {
                address: canary.clone(),
                port,
            });
        }
        loopback_addresses(host).map(|addresses| {
            CpuReader::Runner(ProcessQuery {
                port,
                addresses,
                names: Vec::new(),
            })
        })
    }

    /// Who it is, as results name it: `runner`, or `canary HOST:PORT`.
    pub fn name(&self) -> String {
        match self {
            CpuReader::Runner(_) => "runner".to_owned(),
            CpuReader::Canary { address, .. } => format!("canary {address}"),
        }
    }

    /// The member's server process's CPU time now.
    ///
    /// # Errors
    /// Why it could not be read, in words.
    pub async fn sample(&self) -> Result<OsCpuSample, String> {
        match self {
            CpuReader::Runner(query) => {
                let query = query.clone();
                tokio::task::spawn_blocking(move || process_cpu::sample(&query))
                    .await
                    .map_err(|e| format!("reading /proc: {e}"))?
                    .map_err(|e| e.to_string())
            }
            CpuReader::Canary { address, port } => {
                let answer = ask_canary(address, &CanaryRequest::Cpu { port: *port }).await?;
                match serde_json::from_str(&answer) {
                    Ok(CpuAnswer::Sample(sample)) => Ok(sample),
                    Ok(CpuAnswer::Error(e)) => Err(e),
                    Err(e) => Err(format!("the answer {answer:?} is not a CPU reading: {e}")),
                }
            }
        }
    }
}

/// The operating system's readings of each member's CPU, started before a measured phase.
pub struct OsCpuWatch {
    readers: Vec<Option<CpuReader>>,
    before: Vec<Option<Result<OsCpuSample, String>>>,
}

impl OsCpuWatch {
    /// Reads each member that has a reader now.
    pub async fn start(readers: Vec<Option<CpuReader>>) -> OsCpuWatch {
        let before = read_all(&readers).await;
        OsCpuWatch { readers, before }
    }

    /// Reads them again: each member's CPU over the phase, why it could not be told, or
    /// `None` for a member without a reader.
    pub async fn stop(self) -> Vec<Option<Result<OsCpuDelta, String>>> {
        let after = read_all(&self.readers).await;
        self.readers
            .iter()
            .zip(self.before)
            .zip(after)
            .map(|((reader, before), after)| {
                let reader = reader.as_ref()?;
                let delta = match (before?, after?) {
                    (Ok(b), Ok(a)) => {
                        OsCpuDelta::between(&b, &a, &reader.name()).map_err(|e| e.to_string())
                    }
                    (Err(e), _) => Err(format!("at the start of the phase: {e}")),
                    (_, Err(e)) => Err(format!("at the end of the phase: {e}")),
                };
                if let Err(e) = &delta {
                    tracing::warn!(reader = %reader.name(), "server CPU from the operating system: {e}");
                }
                Some(delta)
            })
            .collect()
    }
}

async fn read_all(readers: &[Option<CpuReader>]) -> Vec<Option<Result<OsCpuSample, String>>> {
    let mut out = Vec::with_capacity(readers.len());
    for reader in readers {
        out.push(match reader {
            Some(r) => Some(r.sample().await),
            None => None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use super::*;

    #[test]
    fn a_member_is_read_by_its_canary_else_by_the_runner_on_this_machine() {
        let canaries = ["m0.svc:27117".to_owned(), "127.3.0.9:27117".to_owned()];
        assert_eq!(
            CpuReader::for_member("m0.svc:27017", &canaries),
            Some(CpuReader::Canary {
                address: "m0.svc:27117".into(),
                port: 27017
            })
        );
        // The testenv harness's members listen on loopback addresses, with a canary beside.
        assert_eq!(
            CpuReader::for_member("127.3.0.9:27017", &canaries).map(|r| r.name()),
            Some("canary 127.3.0.9:27117".into())
        );
        assert_eq!(
            CpuReader::for_member("127.0.0.1:27020", &canaries),
            Some(CpuReader::Runner(ProcessQuery {
                port: 27020,
                addresses: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
                names: Vec::new(),
            }))
        );
        let local = CpuReader::for_member("localhost:27017", &[]).unwrap();
        assert_eq!(local.name(), "runner");
        assert!(matches!(
            local,
            CpuReader::Runner(ProcessQuery { ref addresses, .. }) if addresses.len() == 2
        ));
        assert!(matches!(
            CpuReader::for_member("[::1]:27017", &[]),
            Some(CpuReader::Runner(_))
        ));
        assert_eq!(
            CpuReader::for_member("db.example.com:27017", &canaries),
            None
        );
        assert_eq!(CpuReader::for_member("10.0.0.5:27017", &[]), None);
        assert_eq!(CpuReader::for_member("no-port", &[]), None);
    }
}
