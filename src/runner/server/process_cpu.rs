//! A server process's CPU time read from this machine's `/proc`, for servers that do not
//! report their own: the process is the one holding the socket that listens on the server's
//! port (`/proc/net/tcp{,6}` give the socket's inode, `/proc/PID/fd` the process that holds
//! it) or, where that process cannot be seen, the only one named as a MongoDB server. Its CPU
//! time is its own `/proc/PID/stat` user and system ticks, or the usage of its control group
//! when that group holds it alone (exact to the microsecond). The runner reads it for a member
//! on its own machine; the canary beside a provisioned member (`mongobench canary --serve`)
//! reads it for the runner in the member's pod.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use crate::measure::server::proc_files::{
    self, CgroupPath, ProcParseError, ProcStat, cgroup_procs, cgroups, cpu_stat_v2, cpuacct_v1,
    listeners, socket_inode,
};
use crate::measure::server::{FoundBy, OsCpuSample};

/// The names of MongoDB's server processes, as `/proc/PID/stat` spells them.
pub const SERVER_NAMES: [&str; 2] = ["mongod", "mongos"];

/// Which process to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessQuery {
    /// The server's port.
    pub port: u16,
    /// The addresses it may listen on besides every address (`0.0.0.0`, `::`).
    pub addresses: Vec<IpAddr>,
    /// Names to look for when the port's owner cannot be seen; empty for none.
    pub names: Vec<String>,
}

/// Why a server process's CPU time could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProcessCpuError {
    /// Nothing listens on the port at those addresses.
    #[error(
        "no socket listens on port {port} at {addresses} or every address (/proc/net/tcp, tcp6)"
    )]
    NotListening {
        /// The port.
        port: u16,
        /// The addresses tried.
        addresses: String,
    },
    /// A socket listens there, but no process this one may inspect holds it.
    #[error(
        "the socket listening on port {port} (inode {inode}) belongs to no process whose \
         /proc/PID/fd this process may read: another user's, or another PID namespace's \
         (a pod needs shareProcessNamespace)"
    )]
    OwnerHidden {
        /// The port.
        port: u16,
        /// The socket's inode.
        inode: u64,
    },
    /// No process has one of the names.
    #[error("no process named {names}")]
    NoneNamed {
        /// The names looked for.
        names: String,
    },
    /// Several have.
    #[error("{count} processes are named {names} (pids {pids}): which is the server is unclear")]
    SeveralNamed {
        /// The names looked for.
        names: String,
        /// How many.
        count: usize,
        /// Their pids.
        pids: String,
    },
    /// Found neither way.
    #[error("{by_port}; by name: {by_name}")]
    Neither {
        /// Why the port did not tell.
        by_port: Box<ProcessCpuError>,
        /// Why the names did not.
        by_name: Box<ProcessCpuError>,
    },
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file did not parse.
    #[error(transparent)]
    Parse(#[from] ProcParseError),
}

fn read(path: &Path) -> Result<String, ProcessCpuError> {
    std::fs::read_to_string(path).map_err(|source| ProcessCpuError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Clock ticks per second of `/proc/PID/stat` (`USER_HZ`).
fn ticks_per_second() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// The addresses a host name means when it names this machine (`localhost`, or a loopback
/// address, brackets and all); `None` for another machine's.
pub fn loopback_addresses(host: &str) -> Option<Vec<IpAddr>> {
    if host.eq_ignore_ascii_case("localhost") {
        return Some(vec![
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ]);
    }
    let ip: IpAddr = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()?;
    ip.is_loopback().then(|| vec![ip])
}

/// The process of this machine holding the socket that listens on `query`'s port at one of its
/// addresses or at every address.
///
/// # Errors
/// Nothing listens there, or the process holding it cannot be seen.
pub fn listening_process(query: &ProcessQuery) -> Result<u32, ProcessCpuError> {
    owner_of_port(Path::new("/proc"), query)
}

/// Finds the server process of `query` and reads its CPU time now.
///
/// # Errors
/// [`ProcessCpuError`] saying why the process was not found or its files not read.
pub fn sample(query: &ProcessQuery) -> Result<OsCpuSample, ProcessCpuError> {
    let proc = Path::new("/proc");
    let (pid, found_by) = match owner_of_port(proc, query) {
        Ok(pid) => (pid, FoundBy::ListeningPort),
        Err(by_port) if query.names.is_empty() => return Err(by_port),
        Err(by_port) => match named(proc, &query.names) {
            Ok(pid) => (pid, FoundBy::ProcessName),
            Err(by_name) => {
                return Err(ProcessCpuError::Neither {
                    by_port: Box::new(by_port),
                    by_name: Box::new(by_name),
                });
            }
        },
    };
    sample_pid(proc, Path::new("/sys/fs/cgroup"), pid, found_by)
}

/// The CPU time of process `pid`: its control group's usage when the group holds it alone,
/// else its own ticks.
fn sample_pid(
    proc: &Path,
    cgroup_root: &Path,
    pid: u32,
    found_by: FoundBy,
) -> Result<OsCpuSample, ProcessCpuError> {
    let stat = proc_files::proc_stat(&read(&proc.join(pid.to_string()).join("stat"))?)?;
    let groups = read(&proc.join(pid.to_string()).join("cgroup"))
        .map(|text| cgroups(&text))
        .unwrap_or_default();
    for group in &groups {
        if let Some(sample) = own_cgroup(cgroup_root, group, &stat, found_by) {
            return Ok(sample);
        }
    }
    Ok(OsCpuSample::from_stat(&stat, found_by, ticks_per_second()))
}

/// The usage of `group` when it holds process `stat` and nothing else (no other process, no
/// child group whose processes its usage would count); `None` otherwise or unreadable.
fn own_cgroup(
    root: &Path,
    group: &CgroupPath,
    stat: &ProcStat,
    found_by: FoundBy,
) -> Option<OsCpuSample> {
    let (mounts, path): (&[&str], &str) = match group {
        CgroupPath::V2(path) => (&["", "unified"], path),
        CgroupPath::V1Cpuacct(path) => (&["cpuacct", "cpu,cpuacct"], path),
    };
    // A path outside this reader's cgroup namespace starts with `/..`: not reachable.
    if path.contains("..") || path == "/" {
        return None;
    }
    let dir = mounts
        .iter()
        .map(|m| root.join(m).join(path.trim_start_matches('/')))
        .find(|d| d.join("cgroup.procs").is_file())?;
    let text = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    if cgroup_procs(&text("cgroup.procs")?) != [stat.pid] {
        return None;
    }
    let children = std::fs::read_dir(&dir).ok()?;
    if children.flatten().any(|e| e.path().is_dir()) {
        return None;
    }
    let usage = match group {
        CgroupPath::V2(_) => cpu_stat_v2(&text("cpu.stat")?).ok()?,
        CgroupPath::V1Cpuacct(_) => {
            cpuacct_v1(&text("cpuacct.usage")?, &text("cpuacct.stat")?).ok()?
        }
    };
    Some(OsCpuSample::from_cgroup(stat, found_by, usage, path))
}

/// The process holding the socket that listens on `query`'s port at one of its addresses (an
/// exact address before every address).
fn owner_of_port(proc: &Path, query: &ProcessQuery) -> Result<u32, ProcessCpuError> {
    let mut sockets = Vec::new();
    for table in ["net/tcp", "net/tcp6"] {
        // A machine without IPv6 has no tcp6 table.
        if let Ok(text) = std::fs::read_to_string(proc.join(table)) {
            sockets.extend(listeners(&text)?);
        }
    }
    let wanted: Vec<IpAddr> = query.addresses.iter().map(IpAddr::to_canonical).collect();
    let mut matching: Vec<(bool, u64)> = sockets
        .iter()
        .filter(|l| l.port == query.port)
        .filter_map(|l| {
            let address = l.address.to_canonical();
            let exact = wanted.contains(&address);
            (exact || address.is_unspecified()).then_some((!exact, l.inode))
        })
        .collect();
    matching.sort_unstable();
    let Some(&(_, inode)) = matching.first() else {
        let addresses: Vec<String> = query.addresses.iter().map(ToString::to_string).collect();
        return Err(ProcessCpuError::NotListening {
            port: query.port,
            addresses: addresses.join(", "),
        });
    };
    for pid in pids(proc)? {
        let Ok(fds) = std::fs::read_dir(proc.join(pid.to_string()).join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            if socket_inode(&link.to_string_lossy()) == Some(inode) {
                return Ok(pid);
            }
        }
    }
    Err(ProcessCpuError::OwnerHidden {
        port: query.port,
        inode,
    })
}

/// The one process whose name is one of `names`.
fn named(proc: &Path, names: &[String]) -> Result<u32, ProcessCpuError> {
    let mut found = Vec::new();
    for pid in pids(proc)? {
        let Ok(text) = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")) else {
            continue;
        };
        if let Ok(stat) = proc_files::proc_stat(&text)
            && names.contains(&stat.name)
        {
            found.push(pid);
        }
    }
    let names = names.join(" or ");
    match found.as_slice() {
        [pid] => Ok(*pid),
        [] => Err(ProcessCpuError::NoneNamed { names }),
        many => Err(ProcessCpuError::SeveralNamed {
            names,
            count: many.len(),
            pids: many
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Every process id `proc` lists.
fn pids(proc: &Path) -> Result<Vec<u32>, ProcessCpuError> {
    let entries = std::fs::read_dir(proc).map_err(|source| ProcessCpuError::Read {
        path: proc.to_owned(),
        source,
    })?;
    Ok(entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, TcpListener};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::measure::server::CpuSource;

    fn query(port: u16, addresses: &[IpAddr]) -> ProcessQuery {
        ProcessQuery {
            port,
            addresses: addresses.to_vec(),
            names: Vec::new(),
        }
    }

    /// This test process, listening on a loopback port, is found by the port and its CPU time
    /// is its own.
    #[test]
    fn the_process_listening_on_a_port_is_found_and_its_cpu_time_read() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let before = sample(&query(port, &[loopback])).unwrap();
        assert_eq!(before.pid, std::process::id());
        assert_eq!(before.found_by, FoundBy::ListeningPort);
        // The test machine's processes share the root control group: procfs.
        assert_eq!(before.source, CpuSource::Procfs);
        // 100 ms of work is at least 9 ticks more, whatever other threads did.
        let start = Instant::now();
        let mut x = 0u64;
        let cpu = |s: &OsCpuSample| s.user_us + s.system_us;
        let mut after = before.clone();
        while cpu(&after) < cpu(&before) + 100_000 && start.elapsed() < Duration::from_secs(20) {
            for _ in 0..1_000_000 {
                x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
            }
            after = sample(&query(port, &[loopback])).unwrap();
        }
        assert!(
            cpu(&after) >= cpu(&before) + 100_000,
            "{before:?} {after:?}"
        );
        assert_eq!(
            (after.pid, after.start_ticks),
            (before.pid, before.start_ticks)
        );
    }

    #[test]
    fn a_port_nobody_listens_on_is_named() {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let e = sample(&query(port, &[loopback])).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "no socket listens on port {port} at 127.0.0.1 or every address \
                 (/proc/net/tcp, tcp6)"
            )
        );
        // Another loopback address's listener on the same port is not ours.
        let listener = TcpListener::bind((Ipv4Addr::new(127, 0, 0, 2), 0)).unwrap();
        let other = listener.local_addr().unwrap().port();
        assert!(sample(&query(other, &[loopback])).is_err());
        let with_names = ProcessQuery {
            names: vec!["no-such-server-name".into()],
            ..query(port, &[loopback])
        };
        let e = sample(&with_names).unwrap_err().to_string();
        assert!(
            e.ends_with("; by name: no process named no-such-server-name"),
            "{e}"
        );
    }

    #[test]
    fn a_process_is_found_by_its_name_when_it_is_the_only_one() {
        // This test binary's own name, as /proc/self/stat spells it.
        let own =
            proc_files::proc_stat(&std::fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
        let pid = named(Path::new("/proc"), std::slice::from_ref(&own.name));
        // Another test binary of the same name may run beside this one.
        match pid {
            Ok(pid) => assert_eq!(pid, std::process::id()),
            Err(e) => assert!(matches!(e, ProcessCpuError::SeveralNamed { .. }), "{e}"),
        }
    }

    #[test]
    fn a_control_group_is_used_only_when_it_holds_the_process_alone() {
        let root = std::env::temp_dir().join(format!("mongobench-cgroup-{}", std::process::id()));
        let group = root.join("unified/system.slice/mongod.service");
        std::fs::create_dir_all(&group).unwrap();
        // Files as cgroup v2 writes them (cpu.stat recorded on the test machine).
        std::fs::write(group.join("cgroup.procs"), "485\n").unwrap();
        std::fs::write(
            group.join("cpu.stat"),
            "usage_usec 4216946620\nuser_usec 3616370874\nsystem_usec 600575745\nnice_usec 0\n",
        )
        .unwrap();
        let stat = ProcStat {
            pid: 485,
            name: "mongod".into(),
            utime_ticks: 1,
            stime_ticks: 1,
            start_ticks: 9,
        };
        let v2 = CgroupPath::V2("/system.slice/mongod.service".into());
        let s = own_cgroup(&root, &v2, &stat, FoundBy::ListeningPort).unwrap();
        assert_eq!(s.source, CpuSource::Cgroup);
        assert_eq!((s.user_us, s.system_us), (3_616_370_874, 600_575_746));
        assert_eq!(s.cgroup.as_deref(), Some("/system.slice/mongod.service"));
        // Another process in the group, or a child group: its own ticks instead.
        std::fs::write(group.join("cgroup.procs"), "485\n486\n").unwrap();
        assert_eq!(own_cgroup(&root, &v2, &stat, FoundBy::ListeningPort), None);
        std::fs::write(group.join("cgroup.procs"), "485\n").unwrap();
        std::fs::create_dir(group.join("child")).unwrap();
        assert_eq!(own_cgroup(&root, &v2, &stat, FoundBy::ListeningPort), None);
        // The root group and a group outside the namespace are never the process's own.
        let outside = CgroupPath::V2("/../cri-containerd-1.scope".into());
        assert_eq!(
            own_cgroup(&root, &outside, &stat, FoundBy::ListeningPort),
            None
        );
        let top = CgroupPath::V2("/".into());
        assert_eq!(own_cgroup(&root, &top, &stat, FoundBy::ListeningPort), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
