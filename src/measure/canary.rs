//! Noise canaries: a fixed, short probe of the client machine (CPU, memory bandwidth, a
//! loopback round trip) taken before every cell, so that a cell measured while the machine was
//! slower than usual (another tenant, a throttled CPU, a busy network stack) shows it, and a
//! comparison can leave it out (docs/results.md, "Noise canaries"). The probe is the same work
//! every time; only how long it takes varies.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Rounds of the CPU probe's integer chain (a few milliseconds on a current core).
const CPU_ROUNDS: u64 = 1 << 21;
/// Bytes the memory probe copies per pass, and its passes: past every CPU cache.
const MEMORY_BYTES: usize = 16 << 20;
const MEMORY_PASSES: usize = 4;
/// Round trips of the loopback probe.
const ROUND_TRIPS: usize = 200;
/// A probe and, when it deviated past the threshold from the run's earlier probes, which
/// figure and by how much: what a result keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryRecord {
    /// The probe taken just before the cell's measured phase.
    #[serde(flatten)]
    pub figures: CanaryFigures,
    /// The figure furthest past the run's threshold ([`threshold`]) from the median of the
    /// run's earlier probes, its reference probes first; absent when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deviation: Option<CanaryDeviation>,
}

/// One figure's deviation from the run's median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryDeviation {
    /// `CPU`, `memory bandwidth` or `loopback round trip`.
    pub figure: String,
    /// How much slower (positive) or faster than the median, in percent.
    pub percent: f64,
}

/// Without a precision goal, a probe's figure deviating from the run's median by more than this
/// (a fraction) flags the cell: ten times what a quiet machine shows between probes.
pub const DEVIATION_THRESHOLD: f64 = 0.025 * 10.0;
/// What a quiet machine shows between probes (a fraction): no threshold is set below it, or
/// every cell would be flagged for the probe's own noise.
pub const NOISE_FLOOR: f64 = 0.025;
/// Probes a run needs before its median can flag one: the reference probes the runner takes
/// at its start.
pub const MIN_PROBES: usize = 3;

/// The deviation that flags a cell in a run with a precision goal of `goal_percent`: a machine
/// that slowed by the goal can by itself make a difference the size of the goal, so the goal
/// (a fraction), but not below [`NOISE_FLOOR`]; without a goal, [`DEVIATION_THRESHOLD`].
pub fn threshold(goal_percent: Option<f64>) -> f64 {
    goal_percent.map_or(DEVIATION_THRESHOLD, |g| (g / 100.0).max(NOISE_FLOOR))
}

/// The port of a server node's canary (`mongobench canary --serve`), the sidecar of every
/// provisioned replica-set member: beside mongod's 27017, clear of the ports a sharded
/// cluster's parts conventionally use.
pub const SERVER_CANARY_PORT: u16 = 27117;

/// What a runner asks the canary beside a server member, as one line: `probe` (its node's
/// probe, the default of a connection that sends nothing), `light` (its node's jiffies and a
/// light probe, once a second during a measured phase) or `cpu PORT` (the CPU time of the
/// server process listening on PORT beside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanaryRequest {
    /// A probe of the node.
    Probe,
    /// A [`LightReading`](super::phase_canary::LightReading) of the node.
    Light,
    /// The CPU time of the server listening on `port`.
    Cpu {
        /// The server's port.
        port: u16,
    },
}

impl std::fmt::Display for CanaryRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CanaryRequest::Probe => f.write_str("probe"),
            CanaryRequest::Light => f.write_str("light"),
            CanaryRequest::Cpu { port } => write!(f, "cpu {port}"),
        }
    }
}

impl std::str::FromStr for CanaryRequest {
    type Err = String;

    /// Reads a request line; an empty one is a probe.
    fn from_str(line: &str) -> Result<CanaryRequest, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] | ["probe"] => Ok(CanaryRequest::Probe),
            ["light"] => Ok(CanaryRequest::Light),
            ["cpu", port] => port
                .parse()
                .map(|port| CanaryRequest::Cpu { port })
                .map_err(|_| format!("request {line:?}: {port:?} is not a port")),
            _ => Err(format!(
                "request {line:?} is not `probe`, `light` or `cpu PORT`"
            )),
        }
    }
}

/// The probe of one server member's node, taken through the canary beside the member (its
/// pod's sidecar) just before the cell, as the client's is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerCanary {
    /// Where the canary answered (`host:port`; the host is the member's).
    pub address: String,
    /// What it measured; absent when it could not be reached (`error` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<CanaryFigures>,
    /// As the client's: the figure furthest past the run's threshold from the median of this
    /// node's earlier probes in the run, its reference probes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deviation: Option<CanaryDeviation>,
    /// Why there are no figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What one probe measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryFigures {
    /// Microseconds of the fixed CPU work (median of three runs).
    pub cpu_us: f64,
    /// Memory copy bandwidth, GB/s (10⁹ bytes), over a buffer past the caches.
    pub memory_gbps: f64,
    /// Median round trip of 64 bytes over a loopback TCP connection, µs; `None` when the
    /// loopback could not be used.
    pub loopback_rtt_us: Option<f64>,
}

/// The figure of `deviation` past `threshold` (a fraction), as a result keeps it; `None`
/// when `earlier` is too short or every figure is within the threshold.
pub fn deviation_beyond(
    probe: &CanaryFigures,
    earlier: &[CanaryFigures],
    threshold: f64,
) -> Option<CanaryDeviation> {
    deviation(probe, earlier)
        .and_then(|d| d.beyond(threshold))
        .map(|(figure, f)| CanaryDeviation {
            figure: figure.to_owned(),
            percent: f * 100.0,
        })
}

/// Runs the probe (about 50 ms; blocking: call it off the async workers).
pub fn probe() -> CanaryFigures {
    let mut cpu: Vec<f64> = (0..3).map(|_| cpu_work().as_secs_f64() * 1e6).collect();
    cpu.sort_by(f64::total_cmp);
    CanaryFigures {
        cpu_us: cpu[1],
        memory_gbps: memory_bandwidth(),
        loopback_rtt_us: loopback_rtt().map(|d| d.as_secs_f64() * 1e6),
    }
}

fn cpu_work() -> Duration {
    let start = Instant::now();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..CPU_ROUNDS {
        x = crate::workload::rng::mix64(x ^ i);
    }
    std::hint::black_box(x);
    start.elapsed()
}

fn memory_bandwidth() -> f64 {
    // Both buffers written before the clock starts: a zeroed allocation's pages would fault in
    // during the first copy, which times the kernel (a fresh process's first probe was ten
    // times slower), not the memory.
    let from = vec![1u8; MEMORY_BYTES];
    let mut to = vec![2u8; MEMORY_BYTES];
    let start = Instant::now();
    for _ in 0..MEMORY_PASSES {
        to.copy_from_slice(std::hint::black_box(&from));
        std::hint::black_box(&mut to);
    }
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    (MEMORY_BYTES * MEMORY_PASSES) as f64 / seconds / 1e9
}

fn loopback_rtt() -> Option<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let address = listener.local_addr().ok()?;
    let echo = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().ok()?;
        stream.set_nodelay(true).ok()?;
        let mut buffer = [0u8; 64];
        for _ in 0..ROUND_TRIPS {
            stream.read_exact(&mut buffer).ok()?;
            stream.write_all(&buffer).ok()?;
        }
        Some(())
    });
    let mut stream = TcpStream::connect(address).ok()?;
    stream.set_nodelay(true).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let mut buffer = [7u8; 64];
    let mut trips = Vec::with_capacity(ROUND_TRIPS);
    for _ in 0..ROUND_TRIPS {
        let start = Instant::now();
        stream.write_all(&buffer).ok()?;
        stream.read_exact(&mut buffer).ok()?;
        trips.push(start.elapsed());
    }
    echo.join().ok()??;
    trips.sort_unstable();
    Some(trips[trips.len() / 2])
}

/// How far `probe` is from the median of `earlier` probes, per figure, as fractions of the
/// median (positive: the machine was slower). `None` with fewer than [`MIN_PROBES`] probes.
pub fn deviation(probe: &CanaryFigures, earlier: &[CanaryFigures]) -> Option<Deviation> {
    if earlier.len() < MIN_PROBES {
        return None;
    }
    let median = |f: &dyn Fn(&CanaryFigures) -> Option<f64>| {
        median(&earlier.iter().filter_map(f).collect::<Vec<f64>>())
    };
    let cpu = median(&|c| Some(c.cpu_us))?;
    let memory = median(&|c| Some(c.memory_gbps))?;
    let rtt = median(&|c| c.loopback_rtt_us);
    Some(Deviation {
        // Time: more is slower; bandwidth: less is slower.
        cpu: probe.cpu_us / cpu - 1.0,
        memory: memory / probe.memory_gbps - 1.0,
        loopback: rtt.zip(probe.loopback_rtt_us).map(|(m, p)| p / m - 1.0),
    })
}

/// The median of `values`; `None` for none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// A probe's distance from the run's median, per figure (fractions; positive is slower).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deviation {
    /// Of the CPU work's time.
    pub cpu: f64,
    /// Of the memory bandwidth (inverted: a lower bandwidth is positive).
    pub memory: f64,
    /// Of the loopback round trip; `None` when a probe lacked it.
    pub loopback: Option<f64>,
}

impl Deviation {
    /// The figure past `threshold` (a fraction) in either direction, the largest, as
    /// `(name, fraction)`; `None` when every figure is within it.
    pub fn beyond(&self, threshold: f64) -> Option<(&'static str, f64)> {
        [
            ("CPU", Some(self.cpu)),
            ("memory bandwidth", Some(self.memory)),
            ("loopback round trip", self.loopback),
        ]
        .into_iter()
        .filter_map(|(name, f)| Some((name, f?)))
        .filter(|(_, f)| f.abs() > threshold)
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(cpu_us: f64, memory_gbps: f64, rtt: Option<f64>) -> CanaryFigures {
        CanaryFigures {
            cpu_us,
            memory_gbps,
            loopback_rtt_us: rtt,
        }
    }

    #[test]
    fn a_probe_measures_every_figure() {
        let p = probe();
        assert!(p.cpu_us > 0.0 && p.cpu_us.is_finite(), "{p:?}");
        assert!(p.memory_gbps > 0.0 && p.memory_gbps.is_finite(), "{p:?}");
        assert!(p.loopback_rtt_us.is_some_and(|r| r > 0.0), "{p:?}");
    }

    #[test]
    fn requests_are_written_and_read_as_one_line() {
        let requests = [
            CanaryRequest::Probe,
            CanaryRequest::Light,
            CanaryRequest::Cpu { port: 27017 },
        ];
        for request in requests {
            assert_eq!(request.to_string().parse(), Ok(request));
        }
        assert_eq!(CanaryRequest::Cpu { port: 27017 }.to_string(), "cpu 27017");
        assert_eq!("".parse(), Ok(CanaryRequest::Probe));
        assert_eq!(
            "cpu x".parse::<CanaryRequest>(),
            Err("request \"cpu x\": \"x\" is not a port".to_owned())
        );
        assert_eq!(
            "stop".parse::<CanaryRequest>(),
            Err("request \"stop\" is not `probe`, `light` or `cpu PORT`".to_owned())
        );
    }

    #[test]
    fn deviations_are_against_the_median_and_flag_past_the_threshold() {
        let earlier = [
            figures(1000.0, 10.0, Some(20.0)),
            figures(1100.0, 8.0, Some(30.0)),
            figures(900.0, 12.0, None),
            figures(1050.0, 9.0, Some(25.0)),
        ];
        // Medians: CPU 1025 µs, memory 9.5 GB/s, loopback 25 µs (of the three known).
        let d = deviation(&figures(1230.0, 9.5, Some(25.0)), &earlier).unwrap();
        assert!((d.cpu - 0.2).abs() < 1e-12, "{d:?}");
        assert_eq!((d.memory, d.loopback), (0.0, Some(0.0)));
        assert_eq!(d.beyond(DEVIATION_THRESHOLD), None);
        // A run with a 3 % goal flags the 20 % slower CPU.
        assert_eq!(d.beyond(threshold(Some(3.0))).map(|(n, _)| n), Some("CPU"));
        assert_eq!(
            (threshold(Some(3.0)), threshold(Some(1.0)), threshold(None)),
            (0.03, NOISE_FLOOR, 0.25)
        );
        let slow = deviation(&figures(1025.0, 7.6, Some(40.0)), &earlier).unwrap();
        let (name, f) = slow.beyond(DEVIATION_THRESHOLD).unwrap();
        assert_eq!(name, "loopback round trip");
        assert!((f - 0.6).abs() < 1e-12);
        assert!((slow.memory - 0.25).abs() < 1e-12, "{slow:?}");
        // A faster machine deviates too.
        let fast = deviation(&figures(500.0, 9.5, None), &earlier).unwrap();
        assert_eq!(
            fast.beyond(DEVIATION_THRESHOLD).map(|(n, _)| n),
            Some("CPU")
        );
        assert_eq!(fast.loopback, None);
        assert_eq!(deviation(&figures(1.0, 1.0, None), &earlier[..2]), None);
    }
}
