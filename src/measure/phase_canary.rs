//! The noise canary during the measured phase (docs/results.md, "Noise canaries"): once a
//! second, the share of every CPU's time the hypervisor stole from this machine (`steal` of
//! `/proc/stat`) and a light CPU probe timed in its own thread's CPU time, so that a host that
//! slowed down while the cell was measured shows it, not only one that was slow before. The
//! probe's thread CPU time leaves out the time it waited for a core (the workers' own load);
//! what it still sees is a slower core: a lower clock, a busy sibling hyperthread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::canary::CanaryDeviation;

/// Rounds of the light probe's integer chain: a sixteenth of the full probe's, well under a
/// millisecond a second.
const LIGHT_ROUNDS: u64 = 1 << 17;
/// Seconds between samples.
const PERIOD: Duration = Duration::from_secs(1);

/// What the canary saw during a measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhaseCanary {
    /// Seconds sampled.
    pub seconds: u32,
    /// Share of all CPUs' time stolen by the hypervisor over the phase, percent; absent where
    /// `/proc/stat` cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// The most stolen in one second, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent_max: Option<f64>,
    /// Median of the light CPU probe's thread CPU time, µs; absent without a sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<f64>,
    /// `steal time` past the threshold, or `CPU during the measured phase` past it from the
    /// run's earlier phases on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deviation: Option<CanaryDeviation>,
}

/// The sampler of one measured phase: started before it, finished after it; dropped (a phase
/// that failed), it stops.
pub struct PhaseSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<PhaseCanary>>,
}

impl Drop for PhaseSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl PhaseSampler {
    /// Starts sampling on a thread of its own.
    pub fn start() -> PhaseSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || sample(&flag));
        PhaseSampler {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops sampling; what it saw.
    pub fn finish(mut self) -> PhaseCanary {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.handle.take().and_then(|h| h.join().ok());
        seen.unwrap_or(PhaseCanary {
            seconds: 0,
            steal_percent: None,
            steal_percent_max: None,
            cpu_us: None,
            deviation: None,
        })
    }
}

fn sample(stop: &AtomicBool) -> PhaseCanary {
    let first = read_stat();
    let mut previous = first;
    let mut cpu = Vec::new();
    let mut worst: Option<f64> = None;
    let mut next = Instant::now() + PERIOD;
    while !stop.load(Ordering::Relaxed) {
        if Instant::now() < next {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        next += PERIOD;
        cpu.extend(light_probe_us());
        let now = read_stat();
        if let Some(share) = previous.zip(now).and_then(|(a, b)| steal_share(a, b)) {
            worst = Some(worst.map_or(share, |w: f64| w.max(share)));
        }
        previous = now;
    }
    cpu.sort_by(f64::total_cmp);
    PhaseCanary {
        seconds: cpu.len() as u32,
        steal_percent: first
            .zip(read_stat())
            .and_then(|(a, b)| steal_share(a, b))
            .map(|s| s * 100.0),
        steal_percent_max: worst.map(|s| s * 100.0),
        cpu_us: (!cpu.is_empty()).then(|| cpu[cpu.len() / 2]),
        deviation: None,
    }
}

/// (steal, total) jiffies of all CPUs, from the first line of `/proc/stat`.
fn read_stat() -> Option<(u64, u64)> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// (steal, total) from `/proc/stat`'s text: `cpu  user nice system idle iowait irq softirq
/// steal …`.
pub(crate) fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // Guest time is already counted in user and nice.
    let total = fields.iter().take(8).sum();
    Some((*fields.get(7)?, total))
}

/// The share of time stolen between two readings; `None` when no time passed.
pub(crate) fn steal_share(before: (u64, u64), after: (u64, u64)) -> Option<f64> {
    let total = after.1.checked_sub(before.1).filter(|&t| t > 0)?;
    Some(after.0.saturating_sub(before.0) as f64 / total as f64)
}

/// The light probe's thread CPU time, µs; `None` where the clock cannot be read.
pub fn light_probe_us() -> Option<f64> {
    let start = thread_cpu()?;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..LIGHT_ROUNDS {
        x = crate::workload::rng::mix64(x ^ i);
    }
    std::hint::black_box(x);
    Some((thread_cpu()? - start).as_secs_f64() * 1e6)
}

fn thread_cpu() -> Option<Duration> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_is_read_from_the_cpu_line_of_proc_stat() {
        let before = "cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 50 0 25 400 5 0 0 20 0 0\n";
        let after = "cpu  200 0 100 1600 20 0 0 80 0 0\n";
        let (a, b) = (parse_stat(before).unwrap(), parse_stat(after).unwrap());
        assert_eq!((a, b), ((40, 1000), (80, 2000)));
        assert_eq!(steal_share(a, b), Some(0.04));
        assert_eq!(steal_share(a, a), None);
        assert_eq!(parse_stat("intr 1 2 3\n"), None);
    }

    #[test]
    fn a_phase_is_sampled_every_second() {
        let sampler = PhaseSampler::start();
        std::thread::sleep(Duration::from_millis(2100));
        let seen = sampler.finish();
        assert_eq!(seen.seconds, 2, "{seen:?}");
        assert!(seen.cpu_us.is_some_and(|c| c > 0.0), "{seen:?}");
        // This machine runs Linux: /proc/stat is there.
        assert!(
            seen.steal_percent
                .is_some_and(|s| (0.0..=100.0).contains(&s)),
            "{seen:?}"
        );
    }
}
