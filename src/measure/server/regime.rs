//! Server CPU per operation and the bottleneck regime a cell ran in.
//!
//! The regime is decided from two figures per replica-set member over the measured phase:
//! - CPU utilisation: (Δuser + Δsystem CPU) ÷ (elapsed × usable cores), the CPU from the
//!   server's `serverStatus` or, where it does not report it, from the operating system;
//! - cache misses per operation: Δ"pages read into cache" ÷ operations.
//!
//! Rules, first match wins, each taken over the busiest member:
//! 1. utilisation ≥ [`CPU_BOUND_UTILIZATION`] → [`Regime::CpuBound`]: the cores were the limit;
//! 2. misses ≥ [`IO_BOUND_PAGES_READ_PER_OP`] → [`Regime::IoBound`]: a material share of
//!    operations waited for a page from disk while the cores had room;
//! 3. otherwise → [`Regime::CacheResident`]: the working set was served from the cache and the
//!    cores had room (the limit is concurrency, the network or the client).
//!
//! Without cache counters (FerretDB) the regime is unknown unless rule 1 applies.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::host_info::HostInfoFigures;
use super::server_status::ServerStatusDelta;

/// Server CPU utilisation at or above which a cell is CPU-bound. Below 1.0 because a member is
/// already saturated when its busiest threads queue, well before every core reads 100 %.
pub const CPU_BOUND_UTILIZATION: f64 = 0.8;

/// Cache misses (pages read into the cache) per operation at or above which a cell is
/// I/O-bound: one operation in a hundred waiting for a disk read already dominates tail latency.
pub const IO_BOUND_PAGES_READ_PER_OP: f64 = 0.01;

/// What limited a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Regime {
    /// Served from the WiredTiger cache with CPU to spare.
    CacheResident,
    /// A member's cores were saturated.
    CpuBound,
    /// Operations waited for pages read from disk.
    IoBound,
}

impl Regime {
    /// The text reports show (`cache-resident`, `CPU-bound`, `I/O-bound`).
    pub fn label(self) -> &'static str {
        match self {
            Regime::CacheResident => "cache-resident",
            Regime::CpuBound => "CPU-bound",
            Regime::IoBound => "I/O-bound",
        }
    }
}

/// One member's load over the measured phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct MemberLoad {
    /// CPU utilisation of the member's usable cores, 0 to 1.
    pub cpu_utilization: Option<f64>,
    /// Pages read into the cache per operation of the cell.
    pub pages_read_per_op: Option<f64>,
}

impl MemberLoad {
    /// Load of a member from its serverStatus delta, its CPU time over the phase (`cpu_us`,
    /// from whichever source gave it) and hostInfo. The elapsed time is the server's own
    /// (uptime delta) when known, else `wall`.
    pub fn of(
        delta: &ServerStatusDelta,
        cpu_us: Option<u64>,
        host: Option<&HostInfoFigures>,
        wall: Duration,
        operations: u64,
    ) -> MemberLoad {
        let elapsed_s = delta
            .elapsed_ms
            .map_or(wall.as_secs_f64(), |ms| ms as f64 / 1000.0);
        let cores = host.and_then(HostInfoFigures::usable_cores);
        let cpu_utilization = match (cpu_us, cores) {
            (Some(cpu), Some(cores)) if cores > 0 && elapsed_s > 0.0 => {
                Some(cpu as f64 / 1e6 / (elapsed_s * f64::from(cores)))
            }
            _ => None,
        };
        let pages_read_per_op = delta
            .cache_counters
            .pages_read_into_cache
            .filter(|_| operations > 0)
            .map(|pages| pages as f64 / operations as f64);
        MemberLoad {
            cpu_utilization,
            pages_read_per_op,
        }
    }
}

/// The regime of a cell from the loads of its members (see the module documentation);
/// `None` when the figures cannot tell.
pub fn classify(members: &[MemberLoad]) -> Option<Regime> {
    let busiest = |f: fn(&MemberLoad) -> Option<f64>| members.iter().filter_map(f).reduce(f64::max);
    let cpu = busiest(|m| m.cpu_utilization);
    let misses = busiest(|m| m.pages_read_per_op);
    if cpu.is_some_and(|u| u >= CPU_BOUND_UTILIZATION) {
        return Some(Regime::CpuBound);
    }
    misses.map(|m| {
        if m >= IO_BOUND_PAGES_READ_PER_OP {
            Regime::IoBound
        } else {
            Regime::CacheResident
        }
    })
}

/// Server CPU µs per operation: Σ over members of their CPU time (µs) ÷ operations. `None`
/// when any member lacks CPU figures (a partial sum would understate it), when there are no
/// members or no operations.
pub fn cpu_us_per_op(members: &[Option<u64>], operations: u64) -> Option<f64> {
    if members.is_empty() || operations == 0 {
        return None;
    }
    let total: Option<u64> = members.iter().copied().sum();
    total.map(|us| us as f64 / operations as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::server_status::{CacheCounters, ProcessCounters};
    use crate::measure::server::{HostInfoFigures, ServerStatusFigures, fixture};

    fn load(cpu: Option<f64>, misses: Option<f64>) -> MemberLoad {
        MemberLoad {
            cpu_utilization: cpu,
            pages_read_per_op: misses,
        }
    }

    #[test]
    fn thresholds_decide_the_regime() {
        assert_eq!(
            classify(&[load(Some(0.8), Some(0.5))]),
            Some(Regime::CpuBound)
        );
        assert_eq!(
            classify(&[load(Some(0.79), Some(0.01))]),
            Some(Regime::IoBound)
        );
        assert_eq!(
            classify(&[load(Some(0.79), Some(0.0099))]),
            Some(Regime::CacheResident)
        );
        assert_eq!(
            classify(&[load(None, Some(0.0))]),
            Some(Regime::CacheResident)
        );
        assert_eq!(classify(&[load(Some(0.95), None)]), Some(Regime::CpuBound));
        assert_eq!(classify(&[load(Some(0.3), None)]), None);
        assert_eq!(classify(&[]), None);
    }

    #[test]
    fn the_busiest_member_decides() {
        // A primary at 85 % CPU and two idle secondaries: CPU-bound.
        let members = [
            load(Some(0.85), Some(0.001)),
            load(Some(0.1), Some(0.0)),
            load(Some(0.1), Some(0.0)),
        ];
        assert_eq!(classify(&members), Some(Regime::CpuBound));
        // One member reading a page every 20 operations: I/O-bound.
        let members = [load(Some(0.4), Some(0.001)), load(Some(0.2), Some(0.05))];
        assert_eq!(classify(&members), Some(Regime::IoBound));
    }

    fn delta(user_us: u64, system_us: u64, elapsed_ms: u64, pages: u64) -> ServerStatusDelta {
        ServerStatusDelta {
            elapsed_ms: Some(elapsed_ms),
            process_counters: ProcessCounters {
                user_time_us: Some(user_us),
                system_time_us: Some(system_us),
                ..ProcessCounters::default()
            },
            cache_counters: CacheCounters {
                pages_read_into_cache: Some(pages),
                ..CacheCounters::default()
            },
            ..ServerStatusDelta::default()
        }
    }

    #[test]
    fn member_load_uses_server_elapsed_time_and_usable_cores() {
        // 30 s of CPU over 10 s on 4 usable cores = 0.75; 500 pages for 100k ops = 0.005.
        let host = HostInfoFigures {
            num_cores: Some(8),
            num_cores_available: Some(4),
            ..HostInfoFigures::default()
        };
        let d = delta(20_000_000, 10_000_000, 10_000, 500);
        let m = MemberLoad::of(
            &d,
            d.cpu_us(),
            Some(&host),
            Duration::from_secs(99),
            100_000,
        );
        assert_eq!(m.cpu_utilization, Some(0.75));
        assert_eq!(m.pages_read_per_op, Some(0.005));
        let unknown = MemberLoad::of(&d, Some(2), None, Duration::from_secs(1), 0);
        assert_eq!(unknown, MemberLoad::default());
        // CPU from the operating system where serverStatus has none: the same utilisation.
        let mut no_extra_info = d;
        no_extra_info.process_counters = ProcessCounters::default();
        let os = MemberLoad::of(
            &no_extra_info,
            Some(30_000_000),
            Some(&host),
            Duration::from_secs(99),
            100_000,
        );
        assert_eq!(os, m);
    }

    #[test]
    fn cpu_per_operation_sums_members() {
        // Primary 60 s of CPU, two secondaries 12 s each, over 1.2 M operations:
        // 84e6 µs / 1.2e6 = 70 µs per operation.
        let members = [
            delta(45_000_000, 15_000_000, 60_000, 0),
            delta(10_000_000, 2_000_000, 60_000, 0),
            delta(9_000_000, 3_000_000, 60_000, 0),
        ]
        .map(|d| d.cpu_us());
        assert_eq!(cpu_us_per_op(&members, 1_200_000), Some(70.0));
        assert_eq!(cpu_us_per_op(&members, 0), None);
        assert_eq!(cpu_us_per_op(&[], 10), None);
        let mut partial = members;
        partial[2] = None;
        assert_eq!(cpu_us_per_op(&partial, 1_200_000), None);
    }

    #[test]
    fn the_recorded_mongod_phase_is_cache_resident() {
        let before =
            ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-before.json"))
                .unwrap();
        let after =
            ServerStatusFigures::from_document(&fixture("mongod-8.0-serverStatus-after.json"))
                .unwrap();
        let host = HostInfoFigures::from_document(&fixture("mongod-8.0-hostInfo.json")).unwrap();
        let d = ServerStatusDelta::between(&before, &after).unwrap();
        // 60 s CPU over 60.3 s on 4 usable cores = 0.2487…; 1200 pages / 1M ops = 0.0012.
        let m = MemberLoad::of(
            &d,
            d.cpu_us(),
            Some(&host),
            Duration::from_secs(60),
            1_000_000,
        );
        assert_eq!(m.cpu_utilization, Some(60.0 / (60.3 * 4.0)));
        assert_eq!(m.pages_read_per_op, Some(0.0012));
        assert_eq!(classify(&[m]), Some(Regime::CacheResident));
        assert_eq!(cpu_us_per_op(&[d.cpu_us()], 1_000_000), Some(60.0));
    }

    #[test]
    fn ferretdb_gives_no_regime_and_no_cpu_per_op() {
        let s = ServerStatusFigures::from_document(&fixture("ferretdb-1.24-serverStatus.json"))
            .unwrap();
        let host = HostInfoFigures::from_document(&fixture("ferretdb-1.24-hostInfo.json")).unwrap();
        let d = ServerStatusDelta::between(&s, &s).unwrap();
        let m = MemberLoad::of(&d, d.cpu_us(), Some(&host), Duration::from_secs(10), 1000);
        assert_eq!(m, MemberLoad::default());
        assert_eq!(classify(&[m]), None);
        assert_eq!(cpu_us_per_op(&[d.cpu_us()], 1000), None);
    }
}
