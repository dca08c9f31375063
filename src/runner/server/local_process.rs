//! The process of a server on this machine: the one holding the socket that listens on the
//! port of a loopback URI (`/proc/net/tcp{,6}` name the socket's inode, `/proc/PID/fd` the
//! process holding it).

/// The process listening at `uri`'s host and port, which must be this machine's (a loopback
/// address or `localhost`).
///
/// # Errors
/// A URI of another machine or of several hosts, nothing listening there, or a listener this
/// process may not see.
pub fn process_of_uri(uri: &str) -> Result<u32, String> {
    let port = loopback_port(uri)?;
    let inodes = listening_inodes(port)?;
    for entry in std::fs::read_dir("/proc").map_err(|e| format!("listing /proc: {e}"))? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|link| {
                link.to_str()
                    .and_then(|l| l.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok())
                    .is_some_and(|inode: u64| inodes.contains(&inode))
            })
        });
        if holds {
            return Ok(pid);
        }
    }
    Err(format!(
        "no process this one may see holds the socket listening on port {port}"
    ))
}

/// The port of a URI naming one server on this machine.
fn loopback_port(uri: &str) -> Result<u16, String> {
    let hosts = uri
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?']).next().unwrap_or(""))
        .map(|h| h.rsplit_once('@').map_or(h, |(_, h)| h))
        .unwrap_or("");
    let (host, port) = match hosts.rsplit_once(':') {
        Some((h, p)) if !h.contains(',') && !p.contains(',') => (h, p.parse::<u16>().ok()),
        _ if !hosts.contains(',') && !hosts.is_empty() => (hosts, Some(27017)),
        _ => ("", None),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let local = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match port {
        Some(port) if local => Ok(port),
        _ => Err(format!(
            "{}: sides need a server on this machine, at one loopback address",
            super::redact_uri(uri)
        )),
    }
}

/// The inodes of the sockets listening on `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let listens = f.len() > 9
                && f[3] == "0A"
                && f[1]
                    .rsplit_once(':')
                    .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                    == Some(port);
            if let (true, Ok(inode)) = (listens, f.get(9).map_or(Ok(0), |i| i.parse::<u64>())) {
                out.push(inode);
            }
        }
    }
    if out.is_empty() {
        Err(format!("nothing listens on port {port} of this machine"))
    } else {
        Ok(out)
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
            format!("nothing listens on port {port} of this machine")
        );
        for other in ["mongodb://db.example:27017/", "mongodb://a:1,b:2/"] {
            assert!(
                process_of_uri(other)
                    .unwrap_err()
                    .contains("sides need a server on this machine")
            );
        }
        assert_eq!(loopback_port("mongodb://localhost/"), Ok(27017));
        assert_eq!(loopback_port("mongodb://[::1]:9/"), Ok(9));
    }
}
