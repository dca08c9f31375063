//! Pure readers of the Linux files a server's CPU time is found through, where the server does
//! not report it: `/proc/net/tcp` and `/proc/net/tcp6` (which socket listens on a port, by
//! inode), `/proc/PID/stat` (a process's name, CPU ticks and start time), `/proc/PID/cgroup`
//! (its control group) and the control group's CPU usage (cgroup v2 `cpu.stat`, v1
//! `cpuacct.usage` and `cpuacct.stat`). The runner reads the files; this only parses them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why one of the files could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}: {what}")]
pub struct ProcParseError {
    /// Which kind of file (`/proc/net/tcp`, `/proc/PID/stat`, `cpu.stat` …).
    pub file: &'static str,
    /// What was wrong, quoting the text.
    pub what: String,
}

fn parse_error(file: &'static str, what: String) -> ProcParseError {
    ProcParseError { file, what }
}

/// A TCP socket in the LISTEN state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    /// The address it listens on (`0.0.0.0` or `::` for every address).
    pub address: IpAddr,
    /// Its port.
    pub port: u16,
    /// The socket's inode, as `/proc/PID/fd/N` links name it (`socket:[INODE]`).
    pub inode: u64,
}

/// The state `/proc/net/tcp` writes for a listening socket (`TCP_LISTEN`).
const LISTEN: &str = "0A";

/// The listening sockets of a `/proc/net/tcp` or `/proc/net/tcp6` table; other states are
/// left out.
///
/// # Errors
/// A line of a listening socket whose address, port or inode does not parse.
pub fn listeners(table: &str) -> Result<Vec<Listener>, ProcParseError> {
    const FILE: &str = "/proc/net/tcp";
    let mut out = Vec::new();
    for line in table.lines().skip(1) {
        // sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 10 || fields[3] != LISTEN {
            continue;
        }
        let bad = || parse_error(FILE, format!("line {line:?} is not a socket entry"));
        let (address, port) = fields[1].split_once(':').ok_or_else(bad)?;
        out.push(Listener {
            address: hex_address(address).ok_or_else(bad)?,
            port: u16::from_str_radix(port, 16).map_err(|_| bad())?,
            inode: fields[9].parse().map_err(|_| bad())?,
        });
    }
    Ok(out)
}

/// An address as the kernel prints it: the bytes of each 32-bit word in the machine's own
/// order, in hexadecimal (8 digits for IPv4, 32 for IPv6).
fn hex_address(hex: &str) -> Option<IpAddr> {
    let words: Option<Vec<[u8; 4]>> = (0..hex.len() / 8)
        .map(|i| {
            let word = u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok()?;
            Some(word.to_ne_bytes())
        })
        .collect();
    let bytes: Vec<u8> = words?.concat();
    match (hex.len(), bytes.len()) {
        (8, 4) => Some(IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?))),
        (32, 16) => Some(IpAddr::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(bytes).ok()?,
        ))),
        _ => None,
    }
}

/// The socket inode a `/proc/PID/fd/N` link names (`socket:[12345]`), if it is a socket.
pub fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// What `/proc/PID/stat` says of a process's CPU time (all its threads, the exited ones
/// included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Field 1: the process id.
    pub pid: u32,
    /// Field 2: the executable's name, at most 15 bytes (`comm`).
    pub name: String,
    /// Field 14: user-mode time, clock ticks.
    pub utime_ticks: u64,
    /// Field 15: kernel-mode time, clock ticks.
    pub stime_ticks: u64,
    /// Field 22: when the process started, clock ticks after boot: with the pid, which
    /// process this is (a restarted server has another start time).
    pub start_ticks: u64,
}

/// Reads `/proc/PID/stat`. The name is between the first `(` and the last `)`, since it may
/// hold spaces and parentheses itself.
///
/// # Errors
/// A text without the fields named in [`ProcStat`].
pub fn proc_stat(text: &str) -> Result<ProcStat, ProcParseError> {
    const FILE: &str = "/proc/PID/stat";
    let bad = |what: &str| parse_error(FILE, format!("{what} in {:?}", text.trim()));
    let open = text.find('(').ok_or_else(|| bad("no `(`"))?;
    let close = text.rfind(')').ok_or_else(|| bad("no `)`"))?;
    if close < open {
        return Err(bad("`)` before `(`"));
    }
    let pid = text[..open].trim().parse().map_err(|_| bad("no pid"))?;
    // Fields from 3 (state) on.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Result<u64, ProcParseError> {
        rest.get(n - 3)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| bad(&format!("no field {n}")))
    };
    Ok(ProcStat {
        pid,
        name: text[open + 1..close].to_owned(),
        utime_ticks: field(14)?,
        stime_ticks: field(15)?,
        start_ticks: field(22)?,
    })
}

/// A process's control group, as `/proc/PID/cgroup` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupPath {
    /// The unified (v2) hierarchy's path (line `0::PATH`).
    V2(String),
    /// The path in the v1 hierarchy that holds the `cpuacct` controller.
    V1Cpuacct(String),
}

/// The control groups `/proc/PID/cgroup` lists that hold CPU usage: the unified hierarchy's
/// first, then v1's `cpuacct`, whichever are there.
pub fn cgroups(text: &str) -> Vec<CgroupPath> {
    let mut v2 = Vec::new();
    let mut v1 = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            v2.push(CgroupPath::V2(path.to_owned()));
        } else if controllers.split(',').any(|c| c == "cpuacct") {
            v1.push(CgroupPath::V1Cpuacct(path.to_owned()));
        }
    }
    v2.into_iter().chain(v1).collect()
}

/// CPU time a control group's processes used, µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupUsage {
    /// User and system together.
    pub usage_us: u64,
    /// User time.
    pub user_us: u64,
    /// System time.
    pub system_us: u64,
}

/// Reads cgroup v2 `cpu.stat` (`usage_usec`, `user_usec`, `system_usec`, µs).
///
/// # Errors
/// One of the three lines missing or not a number.
pub fn cpu_stat_v2(text: &str) -> Result<CgroupUsage, ProcParseError> {
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
            .ok_or_else(|| parse_error("cpu.stat", format!("no {key} in {:?}", text.trim())))
    };
    Ok(CgroupUsage {
        usage_us: value("usage_usec")?,
        user_us: value("user_usec")?,
        system_us: value("system_usec")?,
    })
}

/// Reads cgroup v1 `cpuacct.usage` (ns, exact) and `cpuacct.stat` (`user` and `system`, clock
/// ticks) into µs; the exact total is split in the ticks' proportion.
///
/// # Errors
/// Either file not as the kernel writes it.
pub fn cpuacct_v1(usage: &str, stat: &str) -> Result<CgroupUsage, ProcParseError> {
    let usage_ns: u64 = usage.trim().parse().map_err(|_| {
        parse_error(
            "cpuacct.usage",
            format!("{:?} is not nanoseconds", usage.trim()),
        )
    })?;
    let ticks = |key: &str| -> Result<u64, ProcParseError> {
        stat.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
            .ok_or_else(|| parse_error("cpuacct.stat", format!("no {key} in {:?}", stat.trim())))
    };
    let (user, system) = (ticks("user")?, ticks("system")?);
    let usage_us = usage_ns / 1000;
    let user_us = if user + system == 0 {
        0
    } else {
        (u128::from(usage_us) * u128::from(user) / u128::from(user + system)) as u64
    };
    Ok(CgroupUsage {
        usage_us,
        user_us,
        system_us: usage_us - user_us,
    })
}

/// The process ids a cgroup's `cgroup.procs` lists.
pub fn cgroup_procs(text: &str) -> Vec<u32> {
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded on the test machine (Linux 6.18, x86_64, cgroup v1 with the unified hierarchy
    // beside it): a private SecantusDB listening on 127.0.0.1:37020, an established
    // connection, PostgreSQL's socket of uid 999, and two IPv6 listeners (`::` and `::1`).
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     
   0: 0100007F:909C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 400824 1 00000000749badaa 100 0 0 10 0                    
   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1250 1 00000000bbe1d2dc 100 0 0 10 0                      
   5: 0100007F:6358 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 71789 1 00000000907ad7d5 100 0 0 10 0                     
  12: 0100007F:909C 0100007F:C3A2 01 00000000:00000000 00:00000000 00000000     0        0 400911 1 0000000012345678 20 4 30 10 -1                   
";
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:DCE5 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 407111 1 00000000a6cd9344 100 0 0 10 0
   1: 00000000000000000000000001000000:ABC5 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 407112 1 000000002fdf0a47 100 0 0 10 0
";

    #[test]
    fn listening_sockets_are_read_with_address_port_and_inode() {
        let v4 = listeners(TCP).unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            v4,
            [
                Listener {
                    address: ip("127.0.0.1"),
                    port: 37020,
                    inode: 400824
                },
                Listener {
                    address: ip("0.0.0.0"),
                    port: 2024,
                    inode: 1250
                },
                Listener {
                    address: ip("127.0.0.1"),
                    port: 25432,
                    inode: 71789
                },
            ],
            "the established connection (state 01) is left out"
        );
        let v6 = listeners(TCP6).unwrap();
        assert_eq!(
            v6,
            [
                Listener {
                    address: ip("::"),
                    port: 56549,
                    inode: 407111
                },
                Listener {
                    address: ip("::1"),
                    port: 43973,
                    inode: 407112
                },
            ]
        );
        let bad = "header\n   0: 0100007F:ZZZZ 00000000:0000 0A 0:0 0:0 0 0 0 1 1\n";
        let e = listeners(bad).unwrap_err();
        assert_eq!(e.file, "/proc/net/tcp");
        assert!(e.what.contains("ZZZZ"), "{e}");
    }

    #[test]
    fn a_socket_link_names_its_inode() {
        assert_eq!(socket_inode("socket:[400824]"), Some(400824));
        assert_eq!(socket_inode("/dev/null"), None);
        assert_eq!(socket_inode("pipe:[12]"), None);
    }

    #[test]
    fn proc_stat_gives_name_ticks_and_start() {
        // The private SecantusDB's /proc/485/stat, recorded.
        let text = "485 (secantusd-rs) S 1 481 15766 0 -1 4194304 3173 0 4 0 139 37 0 0 20 0 15 0 255855 2248019968 12152 18446744073709551615 94583003090112 94583015856624 140723077710000 0 0 0 0 4100 17475 0 0 0 17 1 0 0 0 0 0 94583017549152 94583017563288 94583602491392 140723077716461 140723077716611 140723077716611 140723077717959 0\n";
        assert_eq!(
            proc_stat(text).unwrap(),
            ProcStat {
                pid: 485,
                name: "secantusd-rs".into(),
                utime_ticks: 139,
                stime_ticks: 37,
                start_ticks: 255855,
            }
        );
        // A name with a space and a parenthesis of its own.
        let odd = "7 (a) b) R 1 7 7 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 0 0";
        let s = proc_stat(odd).unwrap();
        assert_eq!(
            (s.name.as_str(), s.utime_ticks, s.stime_ticks),
            ("a) b", 5, 6)
        );
        assert_eq!(s.start_ticks, 99);
        let e = proc_stat("7 (short) R 1 2").unwrap_err();
        assert!(e.what.starts_with("no field 14"), "{e}");
    }

    #[test]
    fn cgroup_membership_lists_the_unified_group_then_cpuacct() {
        // /proc/485/cgroup on the test machine: v1 controllers and the unified hierarchy.
        let text = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n\
                    4:memory:/process_api/566854a11c21aae79b5b20f9f24ec280\n3:cpuset:/\n\
                    2:cpuacct:/\n1:cpu:/\n0::/\n";
        assert_eq!(
            cgroups(text),
            [
                CgroupPath::V2("/".into()),
                CgroupPath::V1Cpuacct("/".into())
            ]
        );
        // A v1 machine that mounts cpu and cpuacct together.
        assert_eq!(
            cgroups("3:cpu,cpuacct:/system.slice/mongod.service\n"),
            [CgroupPath::V1Cpuacct("/system.slice/mongod.service".into())]
        );
        assert_eq!(cgroups(""), []);
    }

    #[test]
    fn cgroup_usage_files_are_read_in_microseconds() {
        // The unified hierarchy's root cpu.stat on the test machine.
        let v2 = "usage_usec 4216946620\nuser_usec 3616370874\nsystem_usec 600575745\n\
                  nice_usec 0\n";
        assert_eq!(
            cpu_stat_v2(v2).unwrap(),
            CgroupUsage {
                usage_us: 4_216_946_620,
                user_us: 3_616_370_874,
                system_us: 600_575_745,
            }
        );
        let e = cpu_stat_v2("usage_usec 5\n").unwrap_err();
        assert!(e.what.starts_with("no user_usec"), "{e}");
        // v1 cpuacct of the same root, read a moment later: 4230712114936 ns; 362817 user and
        // 60253 system ticks → 4230712114 µs split 362817 : 60253.
        let v1 = cpuacct_v1("4230712114936\n", "user 362817\nsystem 60253\n").unwrap();
        assert_eq!(v1.usage_us, 4_230_712_114);
        assert_eq!(v1.user_us, 3_628_180_388);
        assert_eq!(v1.system_us, 602_531_726);
        assert!(cpuacct_v1("x", "user 1\nsystem 1\n").is_err());
    }

    #[test]
    fn cgroup_procs_lists_process_ids() {
        assert_eq!(cgroup_procs("1\n2\n3\n"), [1, 2, 3]);
        assert_eq!(cgroup_procs(""), Vec::<u32>::new());
    }
}
