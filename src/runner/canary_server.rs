//! The canary's side of its conversation with runners (`mongobench canary --serve`): a
//! connection is accepted, one request line is read (`probe`, `light` or `cpu PORT`; a
//! connection that sends nothing within a second gets a probe), the answer is written as one
//! JSON line and the connection is closed. Requests are answered one at a time, so two runners asking at once
//! never measure each other. A `cpu` request is answered with the CPU time of the server
//! process beside the canary (`server/process_cpu.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::time::Duration;

use crate::measure::canary::{self, CanaryRequest};
use crate::measure::phase_canary::LightReading;
use crate::measure::server::CpuAnswer;

use super::server::process_cpu::{self, ProcessQuery, SERVER_NAMES};

/// How long a connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest request line read.
const MAX_REQUEST: u64 = 256;

/// Answers every connection to `listener`, one at a time; a connection that goes away before
/// its answer is written costs only its answer.
pub fn serve(listener: &TcpListener) {
    // The server beside this canary listens on the same address (the pod's IP) or on every
    // address.
    let beside = listener.local_addr().map(|a| a.ip()).ok();
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let line = answer(&mut stream, beside);
        if let Err(e) = writeln!(stream, "{line}") {
            tracing::debug!("a canary's answer was not delivered: {e}");
        }
    }
}

/// The answer to the request `stream` sends, as one JSON line.
fn answer(stream: &mut TcpStream, beside: Option<IpAddr>) -> String {
    let request = read_request(stream).and_then(|line| line.trim().parse::<CanaryRequest>());
    let json = match request {
        Ok(CanaryRequest::Probe) => serde_json::to_string(&canary::probe()),
        Ok(CanaryRequest::Light) => serde_json::to_string(&LightReading::take(slowed())),
        Ok(CanaryRequest::Cpu { port }) => {
            let query = ProcessQuery {
                port,
                addresses: beside.into_iter().collect(),
                names: SERVER_NAMES.iter().map(|&n| n.to_owned()).collect(),
            };
            let answer = match process_cpu::sample(&query) {
                Ok(sample) => CpuAnswer::Sample(sample),
                Err(e) => CpuAnswer::Error(e.to_string()),
            };
            serde_json::to_string(&answer)
        }
        Err(e) => serde_json::to_string(&CpuAnswer::Error(e)),
    };
    json.unwrap_or_default()
}

/// A test hook: while the file this variable names exists, the light probe does its work twice
/// over, as on a node whose core runs at half its speed (tests/server_canary_cli.rs). The
/// full probe is left alone: only what the canary sees during a measured phase changes.
pub const SLOW_FILE_ENV: &str = "MONGOBENCH_CANARY_SLOW_FILE";

/// How many times over the light probe does its work: 2 while the test hook's file exists.
fn slowed() -> u64 {
    match std::env::var_os(SLOW_FILE_ENV) {
        Some(path) if std::path::Path::new(&path).exists() => 2,
        _ => 1,
    }
}

/// The request line `stream` sends; an empty one when it sends nothing in time (a probe).
fn read_request(stream: &mut TcpStream) -> Result<String, String> {
    stream
        .set_read_timeout(Some(REQUEST_TIMEOUT))
        .map_err(|e| format!("setting the request's timeout: {e}"))?;
    let mut line = String::new();
    let mut reader = BufReader::new(Read::by_ref(stream).take(MAX_REQUEST));
    match reader.read_line(&mut line) {
        Ok(_) => Ok(line),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Ok(String::new())
        }
        Err(e) => Err(format!("reading the request: {e}")),
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

    #[tokio::test]
    async fn a_served_canary_reads_the_cpu_time_of_the_server_beside_it() {
        use crate::measure::server::{CpuSource, FoundBy};
        use crate::runner::server::ask_canary;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || serve(&listener));
        // The "server": this test process, listening on the canary's address.
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let answer = ask_canary(&address, &CanaryRequest::Cpu { port })
            .await
            .unwrap();
        let CpuAnswer::Sample(sample) = serde_json::from_str(&answer).unwrap() else {
            panic!("{answer}");
        };
        assert_eq!(sample.pid, std::process::id());
        assert_eq!(sample.found_by, FoundBy::ListeningPort);
        assert_eq!(sample.source, CpuSource::Procfs);
        assert!(sample.user_us + sample.system_us > 0, "{sample:?}");
        // A port nothing listens on, where no mongod or mongos runs either: why, in words.
        drop(server);
        let answer = ask_canary(&address, &CanaryRequest::Cpu { port })
            .await
            .unwrap();
        let CpuAnswer::Error(e) = serde_json::from_str(&answer).unwrap() else {
            panic!("{answer}");
        };
        assert!(
            e.starts_with(&format!("no socket listens on port {port} at 127.0.0.1")),
            "{e}"
        );
        // A request it does not know.
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.write_all(b"reboot\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert_eq!(
            text.trim(),
            r#"{"error":"request \"reboot\" is not `probe`, `light` or `cpu PORT`"}"#
        );
    }
}
