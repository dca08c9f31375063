//! The process of a server on this machine, named by a loopback URI: the one holding the socket
//! that listens on its port (`process_cpu.rs` reads `/proc/net/tcp{,6}` and `/proc/PID/fd`).

use super::process_cpu::{ProcessQuery, listening_process, loopback_addresses};

/// The process listening at `uri`'s host and port, which must be this machine's (a loopback
/// address or `localhost`).
///
/// # Errors
/// A URI of another machine or of several hosts, nothing listening there, or a listener this
/// process may not see.
pub fn process_of_uri(uri: &str) -> Result<u32, String> {
    let query = loopback_query(uri)?;
    listening_process(&query).map_err(|e| e.to_string())
}

/// The query of a URI naming one server on this machine.
fn loopback_query(uri: &str) -> Result<ProcessQuery, String> {
    let hosts = uri
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?']).next().unwrap_or(""))
        .map(|h| h.rsplit_once('@').map_or(h, |(_, h)| h))
        .unwrap_or("");
    // The last colon outside an IPv6 address's brackets separates the port.
    let (host, port) = match hosts.rsplit_once(':') {
        Some((h, p)) if !h.contains(',') && !p.contains(',') && !p.ends_with(']') => {
            (h, p.parse::<u16>().ok())
        }
        _ if !hosts.contains(',') && !hosts.is_empty() => (hosts, Some(27017)),
        _ => ("", None),
    };
    match (port, loopback_addresses(host)) {
        (Some(port), Some(addresses)) => Ok(ProcessQuery {
            port,
            addresses,
            names: Vec::new(),
        }),
        _ => Err(format!(
            "{}: sides need a server on this machine, at one loopback address",
            super::redact_uri(uri)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_of_this_process_is_found_by_its_uri() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let uri = format!("mongodb://u:p@127.0.0.1:{port}/?directConnection=true");
        assert_eq!(process_of_uri(&uri), Ok(std::process::id()));
        drop(listener);
        assert_eq!(
            process_of_uri(&uri).unwrap_err(),
            format!(
                "no socket listens on port {port} at 127.0.0.1 or every address \
                 (/proc/net/tcp, tcp6)"
            )
        );
        for other in ["mongodb://db.example:27017/", "mongodb://a:1,b:2/"] {
            assert!(
                process_of_uri(other)
                    .unwrap_err()
                    .contains("sides need a server on this machine")
            );
        }
        let port = |uri: &str| loopback_query(uri).map(|q| q.port);
        assert_eq!(port("mongodb://localhost/"), Ok(27017));
        assert_eq!(port("mongodb://[::1]:9/"), Ok(9));
        assert_eq!(port("mongodb://[::1]/"), Ok(27017));
    }
}
