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
    let mut series = PhaseSeries::default();
    series.push(read_stat(), None);
    let mut next = Instant::now() + PERIOD;
    while !stop.load(Ordering::Relaxed) {
        if Instant::now() < next {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        next += PERIOD;
        let cpu = light_probe_us();
        series.push(read_stat(), cpu);
    }
    series.finish(read_stat())
}

/// `/proc/stat`'s (steal, total) jiffies of all CPUs.
pub type Jiffies = (u64, u64);

/// A phase's readings, one a second, as they come: what the client's sampler and the runner's
/// sampler of the server canaries both make a [`PhaseCanary`] of.
#[derive(Debug, Default)]
pub struct PhaseSeries {
    first: Option<Jiffies>,
    previous: Option<Jiffies>,
    last: Option<Jiffies>,
    worst: Option<f64>,
    cpu: Vec<f64>,
}

impl PhaseSeries {
    /// One reading: the jiffies (the first one read is where the phase's steal starts) and the
    /// light probe timed with them, when there is one. A second's steal share is between
    /// consecutive readings; a missing reading leaves out the seconds on both sides of it.
    pub fn push(&mut self, stat: Option<Jiffies>, cpu_us: Option<f64>) {
        if let Some(share) = self.previous.zip(stat).and_then(|(a, b)| steal_share(a, b)) {
            self.worst = Some(self.worst.map_or(share, |w| w.max(share)));
        }
        if stat.is_some() {
            self.first = self.first.or(stat);
            self.last = stat;
        }
        self.previous = stat;
        self.cpu.extend(cpu_us);
    }

    /// What the phase showed; `end` is a last reading of the jiffies (a part of a second, kept
    /// out of the worst second), if there is one.
    pub fn finish(mut self, end: Option<Jiffies>) -> PhaseCanary {
        self.cpu.sort_by(f64::total_cmp);
        let last = end.or(self.last);
        PhaseCanary {
            seconds: self.cpu.len() as u32,
            steal_percent: self
                .first
                .zip(last)
                .and_then(|(a, b)| steal_share(a, b))
                .map(|s| s * 100.0),
            steal_percent_max: self.worst.map(|s| s * 100.0),
            cpu_us: (!self.cpu.is_empty()).then(|| self.cpu[self.cpu.len() / 2]),
            deviation: None,
        }
    }
}

/// One reading of a machine for a phase canary (a server canary's answer to `light`): its
/// jiffies and the light probe's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LightReading {
    /// `steal` of `/proc/stat`'s `cpu` line, jiffies; absent where it cannot be read.
    pub steal_jiffies: Option<u64>,
    /// The sum of that line's first eight fields, jiffies.
    pub total_jiffies: Option<u64>,
    /// The light probe's thread CPU time, µs.
    pub cpu_us: Option<f64>,
}

impl LightReading {
    /// Reads this machine now: the light probe (its work done `times` over: 1 but in a test
    /// of a slowed node), then the jiffies, as the client's sampler does.
    pub fn take(times: u64) -> LightReading {
        let cpu_us = light_probe_rounds_us(LIGHT_ROUNDS * times.max(1));
        let stat = read_stat();
        LightReading {
            steal_jiffies: stat.map(|s| s.0),
            total_jiffies: stat.map(|s| s.1),
            cpu_us,
        }
    }

    /// The jiffies, when both were read.
    pub fn jiffies(&self) -> Option<Jiffies> {
        self.steal_jiffies.zip(self.total_jiffies)
    }
}

impl PhaseCanary {
    /// Judges the phase against `threshold` (a fraction): steal over the phase past it, or the
    /// light probe's median further than it from the median of `earlier` (the medians of this
    /// machine's earlier phases in the run). Records the deviation and returns it.
    pub fn judge(&mut self, earlier: &[f64], threshold: f64) -> Option<CanaryDeviation> {
        let steal = self
            .steal_percent
            .filter(|s| s / 100.0 > threshold)
            .map(|s| (STEAL_TIME, s));
        let cpu = self
            .cpu_us
            .zip(super::canary::median(earlier))
            .map(|(cpu, m)| cpu / m - 1.0)
            .filter(|f| f.abs() > threshold)
            .map(|f| (CPU_DURING_PHASE, f * 100.0));
        let (figure, percent) = steal.or(cpu)?;
        self.deviation = Some(CanaryDeviation {
            figure: figure.to_owned(),
            percent,
        });
        self.deviation.clone()
    }
}

/// The figure of a phase whose steal over it passed the threshold.
pub const STEAL_TIME: &str = "steal time";
/// The figure of a phase whose light probe deviated from its machine's earlier phases.
pub const CPU_DURING_PHASE: &str = "CPU during the measured phase";

/// What a server node's canary saw during a measured phase, asked by the runner once a second
/// for a light reading (`light`) of its node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerPhaseCanary {
    /// The canary asked (`host:port`).
    pub address: String,
    /// What it saw, as the client's phase canary; judged against this node's earlier phases.
    #[serde(flatten)]
    pub during: PhaseCanary,
    /// Why some seconds have no reading (the first reason); absent when every one answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// (steal, total) jiffies of all CPUs, from the first line of `/proc/stat`.
fn read_stat() -> Option<Jiffies> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// (steal, total) from `/proc/stat`'s text: `cpu  user nice system idle iowait irq softirq
/// steal …`.
pub(crate) fn parse_stat(text: &str) -> Option<Jiffies> {
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
pub(crate) fn steal_share(before: Jiffies, after: Jiffies) -> Option<f64> {
    let total = after.1.checked_sub(before.1).filter(|&t| t > 0)?;
    Some(after.0.saturating_sub(before.0) as f64 / total as f64)
}

/// The light probe's thread CPU time, µs; `None` where the clock cannot be read.
pub fn light_probe_us() -> Option<f64> {
    light_probe_rounds_us(LIGHT_ROUNDS)
}

fn light_probe_rounds_us(rounds: u64) -> Option<f64> {
    let start = thread_cpu()?;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..rounds {
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
    fn a_series_keeps_the_whole_phases_steal_its_worst_second_and_the_probes_median() {
        let mut series = PhaseSeries::default();
        series.push(Some((40, 1000)), None);
        series.push(Some((43, 1100)), Some(420.0));
        series.push(Some((44, 1200)), Some(400.0));
        series.push(Some((52, 1300)), Some(410.0));
        series.push(Some((52, 1400)), Some(900.0));
        // The end: a part of a second, counted in the phase but not as its worst second.
        let seen = series.finish(Some((62, 1410)));
        assert_eq!(
            seen,
            PhaseCanary {
                seconds: 4,
                // 22 of 410 jiffies.
                steal_percent: Some(22.0 / 410.0 * 100.0),
                steal_percent_max: Some(8.0),
                cpu_us: Some(420.0),
                deviation: None,
            }
        );
        assert_eq!(PhaseSeries::default().finish(None).seconds, 0);
    }

    fn phase(steal_percent: f64, cpu_us: f64) -> PhaseCanary {
        PhaseCanary {
            seconds: 10,
            steal_percent: Some(steal_percent),
            steal_percent_max: Some(steal_percent),
            cpu_us: Some(cpu_us),
            deviation: None,
        }
    }

    #[test]
    fn a_phase_is_judged_by_its_steal_then_by_its_probe_against_earlier_phases() {
        let earlier = [400.0, 410.0, 390.0, 405.0];
        // Median 402.5 µs: 412 is 2.4 % slower, within 3 %; 422.625 is 5 % slower.
        let mut within = phase(2.9, 412.0);
        assert_eq!(within.judge(&earlier, 0.03), None);
        assert_eq!(within.deviation, None);
        let mut slower = phase(1.0, 422.625);
        let found = Some(CanaryDeviation {
            figure: CPU_DURING_PHASE.to_owned(),
            percent: 5.000000000000004,
        });
        assert_eq!(slower.judge(&earlier, 0.03), found);
        assert_eq!(slower.deviation, found);
        // Faster counts too.
        let faster = phase(0.0, 362.25).judge(&earlier, 0.03).unwrap();
        assert_eq!(faster.percent, -9.999999999999998);
        // Steal past the threshold names steal whatever the probe; the first phase of a
        // machine has no earlier phase to be judged against.
        let stolen = phase(3.5, 900.0).judge(&earlier, 0.03).unwrap();
        assert_eq!((stolen.figure.as_str(), stolen.percent), (STEAL_TIME, 3.5));
        assert_eq!(phase(1.0, 900.0).judge(&[], 0.03), None);
        assert_eq!(phase(26.0, 400.0).judge(&[], 0.25).unwrap().percent, 26.0);
    }

    #[test]
    fn a_light_reading_travels_as_one_json_line() {
        let reading = LightReading::take(1);
        assert!(reading.jiffies().is_some(), "{reading:?}");
        assert!(reading.cpu_us.is_some_and(|c| c > 0.0), "{reading:?}");
        let line = serde_json::to_string(&reading).unwrap();
        assert!(line.starts_with("{\"stealJiffies\":"), "{line}");
        assert_eq!(
            serde_json::from_str::<LightReading>(&line).unwrap(),
            reading
        );
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
