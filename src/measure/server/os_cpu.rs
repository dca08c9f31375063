//! A server's CPU time as the operating system counts it, for servers that do not report their
//! own (`serverStatus.extra_info`): a reading of the server process (its `/proc/PID/stat`
//! ticks, or the usage of a control group that holds it alone), the change over a phase, and
//! the check of the two sources against each other where the server reports its own too.
//!
//! Only the process's own CPU time is counted, never wall time: time other tenants of the
//! machine take from it is not the server's work.

use serde::{Deserialize, Serialize};

use super::proc_files::{CgroupUsage, ProcStat};

/// Where a member's CPU time came from.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum CpuSource {
    /// The server's own `serverStatus.extra_info` user and system time.
    ServerStatus,
    /// The server process's `/proc/PID/stat` user and system ticks.
    Procfs,
    /// The usage of a control group that holds the server's process and nothing else.
    Cgroup,
}

impl CpuSource {
    /// The name results and reports use.
    pub fn label(self) -> &'static str {
        match self {
            CpuSource::ServerStatus => "serverStatus",
            CpuSource::Procfs => "procfs",
            CpuSource::Cgroup => "cgroup",
        }
    }
}

/// How the server's process was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FoundBy {
    /// It holds the socket listening on the member's port.
    ListeningPort,
    /// Its name is a MongoDB server's (`mongod`, `mongos`), the only one in sight.
    ProcessName,
}

/// One reading of a server process's CPU time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OsCpuSample {
    /// `procfs` or `cgroup`.
    pub source: CpuSource,
    /// The process id (in the reader's PID namespace).
    pub pid: u32,
    /// The process's name (`comm`).
    pub process: String,
    /// How it was found.
    pub found_by: FoundBy,
    /// When it started (clock ticks after boot): with the pid, which process this is.
    pub start_ticks: u64,
    /// User CPU time so far, µs.
    pub user_us: u64,
    /// System CPU time so far, µs.
    pub system_us: u64,
    /// For `cgroup`: the control group read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

impl OsCpuSample {
    /// A `procfs` reading from the process's `stat`, whose ticks are `ticks_per_second`.
    pub fn from_stat(stat: &ProcStat, found_by: FoundBy, ticks_per_second: u64) -> OsCpuSample {
        let us = |ticks: u64| ticks.saturating_mul(1_000_000) / ticks_per_second.max(1);
        OsCpuSample {
            source: CpuSource::Procfs,
            pid: stat.pid,
            process: stat.name.clone(),
            found_by,
            start_ticks: stat.start_ticks,
            user_us: us(stat.utime_ticks),
            system_us: us(stat.stime_ticks),
            cgroup: None,
        }
    }

    /// A `cgroup` reading of `usage`, the group `path` that holds only the process of `stat`.
    pub fn from_cgroup(
        stat: &ProcStat,
        found_by: FoundBy,
        usage: CgroupUsage,
        path: &str,
    ) -> OsCpuSample {
        OsCpuSample {
            source: CpuSource::Cgroup,
            pid: stat.pid,
            process: stat.name.clone(),
            found_by,
            start_ticks: stat.start_ticks,
            user_us: usage.user_us,
            system_us: usage.usage_us - usage.user_us.min(usage.usage_us),
            cgroup: Some(path.to_owned()),
        }
    }
}

/// What the canary beside a member answers to a `cpu` request: a reading, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CpuAnswer {
    /// The server process's CPU time now.
    Sample(OsCpuSample),
    /// Why it could not be read.
    Error(String),
}

/// Why two readings do not make a change over a phase.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OsCpuDeltaError {
    /// The process listening at the end is not the one of the start: the server restarted.
    #[error(
        "the server process changed during the phase (pid {before_pid} started at tick \
         {before_start}, then pid {after_pid} started at tick {after_start}): it restarted, so \
         its CPU time does not cover the phase"
    )]
    ProcessChanged {
        /// Pid at the start.
        before_pid: u32,
        /// Its start time.
        before_start: u64,
        /// Pid at the end.
        after_pid: u32,
        /// Its start time.
        after_start: u64,
    },
    /// The two readings are of different sources.
    #[error("the readings are of {before} and then {after}: not one counter")]
    SourceChanged {
        /// The first reading's source.
        before: &'static str,
        /// The second's.
        after: &'static str,
    },
    /// A counter shrank.
    #[error("the server process's CPU time went from {before} µs to {after} µs")]
    WentBackwards {
        /// User + system at the start.
        before: u64,
        /// At the end.
        after: u64,
    },
}

/// A server process's CPU over a phase as the operating system counts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OsCpuDelta {
    /// `procfs` or `cgroup`.
    pub source: CpuSource,
    /// Who read it: `runner` (this machine's files) or `canary HOST:PORT` (the sidecar beside
    /// the member).
    pub read_by: String,
    /// The process's name.
    pub process: String,
    /// Its pid, in the reader's PID namespace.
    pub pid: u32,
    /// How it was found.
    pub found_by: FoundBy,
    /// User CPU time during the phase, µs.
    pub user_us: u64,
    /// System CPU time during the phase, µs.
    pub system_us: u64,
}

impl OsCpuDelta {
    /// The change from `before` to `after`, read by `read_by`.
    ///
    /// # Errors
    /// [`OsCpuDeltaError`] when the readings are of another process, another source, or a
    /// counter shrank.
    pub fn between(
        before: &OsCpuSample,
        after: &OsCpuSample,
        read_by: &str,
    ) -> Result<OsCpuDelta, OsCpuDeltaError> {
        if (before.pid, before.start_ticks) != (after.pid, after.start_ticks) {
            return Err(OsCpuDeltaError::ProcessChanged {
                before_pid: before.pid,
                before_start: before.start_ticks,
                after_pid: after.pid,
                after_start: after.start_ticks,
            });
        }
        if before.source != after.source {
            return Err(OsCpuDeltaError::SourceChanged {
                before: before.source.label(),
                after: after.source.label(),
            });
        }
        let total = |s: &OsCpuSample| s.user_us + s.system_us;
        if total(after) < total(before) {
            return Err(OsCpuDeltaError::WentBackwards {
                before: total(before),
                after: total(after),
            });
        }
        // User and system each move only forwards in the kernel; a cgroup's split of an exact
        // total may shift a microsecond between them, which the total absorbs.
        let user_us = after.user_us.saturating_sub(before.user_us);
        Ok(OsCpuDelta {
            source: after.source,
            read_by: read_by.to_owned(),
            process: after.process.clone(),
            pid: after.pid,
            found_by: after.found_by,
            user_us,
            system_us: (total(after) - total(before)).saturating_sub(user_us),
        })
    }

    /// User + system during the phase, µs.
    pub fn cpu_us(&self) -> u64 {
        self.user_us + self.system_us
    }
}

/// Two sources of one member's CPU differ by more than this fraction of the server's own
/// figure before they are said to disagree: both count the same process's getrusage time, and
/// the readings are taken a few milliseconds apart around an idle moment.
pub const CPU_SOURCES_TOLERANCE: f64 = 0.05;
/// Differences up to this many µs are never a disagreement: `/proc/PID/stat` counts in clock
/// ticks of 10 ms, and each of its two readings may be a tick short.
pub const CPU_SOURCES_FLOOR_US: u64 = 20_000;

/// One member whose CPU sources disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CpuDisagreement {
    /// Member address.
    pub member: String,
    /// CPU µs during the phase by `serverStatus.extra_info`.
    pub server_status_us: u64,
    /// CPU µs during the phase by the operating system.
    pub os_us: u64,
    /// Which operating-system source.
    pub os_source: CpuSource,
    /// (os − serverStatus) ÷ serverStatus, percent.
    pub percent: f64,
}

/// The disagreement of `server_status_us` and `os` for `member`, when they differ past
/// [`CPU_SOURCES_TOLERANCE`] and [`CPU_SOURCES_FLOOR_US`].
pub fn disagreement(
    member: &str,
    server_status_us: u64,
    os: &OsCpuDelta,
) -> Option<CpuDisagreement> {
    let os_us = os.cpu_us();
    let difference = server_status_us.abs_diff(os_us);
    let allowed =
        (server_status_us as f64 * CPU_SOURCES_TOLERANCE).max(CPU_SOURCES_FLOOR_US as f64);
    (difference as f64 > allowed).then(|| CpuDisagreement {
        member: member.to_owned(),
        server_status_us,
        os_us,
        os_source: os.source,
        percent: if server_status_us == 0 {
            f64::INFINITY
        } else {
            (os_us as f64 - server_status_us as f64) / server_status_us as f64 * 100.0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::proc_files::proc_stat;

    fn stat(utime: u64, stime: u64) -> ProcStat {
        ProcStat {
            pid: 485,
            name: "secantusd-rs".into(),
            utime_ticks: utime,
            stime_ticks: stime,
            start_ticks: 255_855,
        }
    }

    #[test]
    fn a_procfs_reading_turns_ticks_into_microseconds() {
        let text = "485 (secantusd-rs) S 1 481 15766 0 -1 4194304 3173 0 4 0 139 37 0 0 20 0 15 0 255855 2248019968 12152\n";
        let s = OsCpuSample::from_stat(&proc_stat(text).unwrap(), FoundBy::ListeningPort, 100);
        assert_eq!(
            s,
            OsCpuSample {
                source: CpuSource::Procfs,
                pid: 485,
                process: "secantusd-rs".into(),
                found_by: FoundBy::ListeningPort,
                start_ticks: 255_855,
                user_us: 1_390_000,
                system_us: 370_000,
                cgroup: None,
            }
        );
        let json = serde_json::to_value(CpuAnswer::Sample(s.clone())).unwrap();
        assert_eq!(json["sample"]["source"], "procfs");
        assert_eq!(json["sample"]["foundBy"], "listeningPort");
        assert_eq!(
            serde_json::from_value::<CpuAnswer>(json).unwrap(),
            CpuAnswer::Sample(s)
        );
        let e = serde_json::to_string(&CpuAnswer::Error("no process".into())).unwrap();
        assert_eq!(e, r#"{"error":"no process"}"#);
    }

    #[test]
    fn the_change_over_a_phase_is_of_one_process() {
        let before = OsCpuSample::from_stat(&stat(139, 37), FoundBy::ListeningPort, 100);
        let after = OsCpuSample::from_stat(&stat(1_139, 537), FoundBy::ListeningPort, 100);
        let d = OsCpuDelta::between(&before, &after, "runner").unwrap();
        assert_eq!(
            (d.user_us, d.system_us, d.cpu_us()),
            (10_000_000, 5_000_000, 15_000_000)
        );
        assert_eq!((d.read_by.as_str(), d.pid), ("runner", 485));
        let mut restarted = after.clone();
        restarted.pid = 900;
        assert_eq!(
            OsCpuDelta::between(&before, &restarted, "runner").unwrap_err(),
            OsCpuDeltaError::ProcessChanged {
                before_pid: 485,
                before_start: 255_855,
                after_pid: 900,
                after_start: 255_855,
            }
        );
        assert!(matches!(
            OsCpuDelta::between(&after, &before, "runner"),
            Err(OsCpuDeltaError::WentBackwards {
                before: 16_760_000,
                after: 1_760_000
            })
        ));
        let usage = CgroupUsage {
            usage_us: 2_000_000,
            user_us: 1_500_000,
            system_us: 500_000,
        };
        let cg = OsCpuSample::from_cgroup(&stat(1, 1), FoundBy::ListeningPort, usage, "/a");
        assert!(matches!(
            OsCpuDelta::between(&before, &cg, "runner"),
            Err(OsCpuDeltaError::SourceChanged {
                before: "procfs",
                after: "cgroup"
            })
        ));
    }

    #[test]
    fn sources_disagree_past_five_percent_and_two_ticks() {
        let os = |us: u64| OsCpuDelta {
            source: CpuSource::Procfs,
            read_by: "runner".into(),
            process: "mongod".into(),
            pid: 1,
            found_by: FoundBy::ListeningPort,
            user_us: us,
            system_us: 0,
        };
        // 60 s by serverStatus: 5 % is 3 s.
        assert_eq!(disagreement("m", 60_000_000, &os(63_000_000)), None);
        let d = disagreement("m", 60_000_000, &os(63_000_001)).unwrap();
        assert_eq!((d.server_status_us, d.os_us), (60_000_000, 63_000_001));
        assert!((d.percent - 5.000_001_666).abs() < 1e-6, "{d:?}");
        let d = disagreement("m", 60_000_000, &os(50_000_000)).unwrap();
        assert!((d.percent + 16.666_666).abs() < 1e-4, "{d:?}");
        // 100 ms: within two ticks (20 ms), whatever the percentage.
        assert_eq!(disagreement("m", 100_000, &os(120_000)), None);
        assert!(disagreement("m", 100_000, &os(120_001)).is_some());
    }
}
