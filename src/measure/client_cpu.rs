//! The load generator's own CPU use during a phase, and the flag that says a run measured the
//! client rather than the server.
//!
//! A result whose client used at least [`SATURATION_THRESHOLD`] of its core budget
//! (CPU time ÷ (wall time × cores available to the process)) is flagged `clientSaturated`:
//! past that point the generator, not the server, limits throughput and inflates latency, so
//! the run is never reported as a server result.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Client CPU utilisation (of wall time × available cores) at or above which a run is flagged
/// as client-saturated. 0.9 leaves room for scheduling noise on a fully used budget.
pub const SATURATION_THRESHOLD: f64 = 0.9;

/// Why the process CPU time could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read this process's CPU time with getrusage(RUSAGE_SELF): {0}")]
pub struct ClientCpuError(#[source] std::io::Error);

/// CPU time the whole process has used so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time in user mode.
    pub user: Duration,
    /// Time in the kernel on behalf of the process.
    pub system: Duration,
}

impl CpuTimes {
    /// CPU time of this process (all threads), from `getrusage(RUSAGE_SELF)`.
    ///
    /// # Errors
    /// [`ClientCpuError`] if the system call fails (it does not on Linux for `RUSAGE_SELF`).
    pub fn of_this_process() -> Result<CpuTimes, ClientCpuError> {
        // SAFETY: `rusage` is plain data for which all-zero bytes are a valid value, and
        // getrusage only writes into the struct we pass, which outlives the call.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid `who` constant and a valid, exclusive pointer to `usage`.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        if rc != 0 {
            return Err(ClientCpuError(std::io::Error::last_os_error()));
        }
        Ok(CpuTimes {
            user: timeval(usage.ru_utime),
            system: timeval(usage.ru_stime),
        })
    }
}

fn timeval(t: libc::timeval) -> Duration {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u64::try_from(t.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros)
}

/// Number of cores this process may use: `std::thread::available_parallelism`, which honours
/// CPU affinity and cgroup quotas (a Kubernetes CPU limit); 1 if it cannot tell.
pub fn available_cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
        .unwrap_or(1)
}

/// The client's CPU use over one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientCpuUsage {
    /// User CPU time during the phase (µs).
    pub user_us: u64,
    /// System CPU time during the phase (µs).
    pub system_us: u64,
    /// Wall time of the phase (µs).
    pub wall_us: u64,
    /// Cores available to the process.
    pub cores: u32,
    /// (user + system) ÷ (wall × cores), from 0 to 1 (a little above 1 is measurement noise).
    pub utilization: f64,
    /// `utilization ≥` [`SATURATION_THRESHOLD`]: the client, not the server, was the limit.
    pub client_saturated: bool,
}

impl ClientCpuUsage {
    /// Usage between two samples taken `wall` apart on a process with `cores` cores.
    pub fn between(before: CpuTimes, after: CpuTimes, wall: Duration, cores: u32) -> Self {
        let user = after.user.saturating_sub(before.user);
        let system = after.system.saturating_sub(before.system);
        let budget = wall.as_secs_f64() * f64::from(cores.max(1));
        let utilization = if budget > 0.0 {
            (user + system).as_secs_f64() / budget
        } else {
            0.0
        };
        ClientCpuUsage {
            user_us: whole_micros(user),
            system_us: whole_micros(system),
            wall_us: whole_micros(wall),
            cores: cores.max(1),
            utilization,
            client_saturated: utilization >= SATURATION_THRESHOLD,
        }
    }
}

fn whole_micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Samples the process CPU time at the start of a phase; [`ClientCpuMeter::finish`] gives the
/// usage over the phase.
#[derive(Debug, Clone, Copy)]
pub struct ClientCpuMeter {
    started: Instant,
    before: CpuTimes,
    cores: u32,
}

impl ClientCpuMeter {
    /// Takes the first sample now.
    ///
    /// # Errors
    /// [`ClientCpuError`] if the CPU time cannot be read.
    pub fn start() -> Result<ClientCpuMeter, ClientCpuError> {
        Ok(ClientCpuMeter {
            started: Instant::now(),
            before: CpuTimes::of_this_process()?,
            cores: available_cores(),
        })
    }

    /// Takes the second sample now and returns the usage in between.
    ///
    /// # Errors
    /// [`ClientCpuError`] if the CPU time cannot be read.
    pub fn finish(&self) -> Result<ClientCpuUsage, ClientCpuError> {
        let after = CpuTimes::of_this_process()?;
        Ok(ClientCpuUsage::between(
            self.before,
            after,
            self.started.elapsed(),
            self.cores,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(user_ms: u64, system_ms: u64) -> CpuTimes {
        CpuTimes {
            user: Duration::from_millis(user_ms),
            system: Duration::from_millis(system_ms),
        }
    }

    #[test]
    fn utilization_is_cpu_time_over_the_core_budget() {
        // 10 s on 4 cores = 40 core-seconds; 12 s user + 6 s system = 18 s → 0.45.
        let u = ClientCpuUsage::between(
            times(1_000, 500),
            times(13_000, 6_500),
            Duration::from_secs(10),
            4,
        );
        assert_eq!(u.user_us, 12_000_000);
        assert_eq!(u.system_us, 6_000_000);
        assert_eq!(u.wall_us, 10_000_000);
        assert_eq!(u.utilization, 0.45);
        assert!(!u.client_saturated);
    }

    #[test]
    fn saturation_starts_at_the_threshold() {
        // 2 cores × 10 s = 20 s budget: 18 s is exactly 0.9, 17.9 s is below.
        let at = ClientCpuUsage::between(times(0, 0), times(18_000, 0), Duration::from_secs(10), 2);
        assert_eq!(at.utilization, 0.9);
        assert!(at.client_saturated);
        let below =
            ClientCpuUsage::between(times(0, 0), times(17_000, 900), Duration::from_secs(10), 2);
        assert!(!below.client_saturated);
    }

    #[test]
    fn zero_wall_time_is_not_saturation() {
        let u = ClientCpuUsage::between(times(0, 0), times(5, 0), Duration::ZERO, 2);
        assert_eq!(u.utilization, 0.0);
        assert!(!u.client_saturated);
    }

    #[test]
    fn burning_cpu_shows_up_in_the_process_times() {
        let before = CpuTimes::of_this_process().unwrap();
        let total = |t: CpuTimes| t.user + t.system;
        // Spin until 10 ms of CPU time are accounted, bounded by 10 s of wall time so that a
        // broken getrusage fails the test instead of hanging it.
        let give_up = Instant::now() + Duration::from_secs(10);
        let mut x = 0u64;
        let mut after = before;
        while total(after) < total(before) + Duration::from_millis(10) && Instant::now() < give_up {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            after = CpuTimes::of_this_process().unwrap();
        }
        assert!(total(after) >= total(before) + Duration::from_millis(10));
        assert!(available_cores() >= 1);
    }
}
