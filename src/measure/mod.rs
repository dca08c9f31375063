//! Measurement: what one cell's run is reduced to. No network or file I/O (the runner feeds
//! it times and server replies; it reads only the clock and this process's CPU time), and it
//! uses only `workload::rng` (the canary's probe). `result` builds on it; comparing
//! repetitions is `verdict`'s business.
//!
//! - [`Recorder`]: per worker, one HdrHistogram per operation label (µs, 3 significant digits,
//!   auto-resizing), failures counted by [`ErrorKind`], completions per wall-clock second.
//!   Workers record without locks; the runner merges their recorders after the phase, which
//!   loses nothing because histograms add bucket by bucket. [`OpTimer`] times one operation and
//!   must end in `success()`, `failure(kind)` or `discard()`.
//! - [`latency`]: percentile, mean, min and max by the same rules as YCSB 0.17.0.
//! - [`client_cpu`]: the load generator's own CPU use and the `clientSaturated` flag.
//! - [`canary`]: the noise canary, a fixed probe of the client machine (and of each provisioned
//!   member's node, through its sidecar) taken before each cell.
//! - [`settle`]: whether a warm-up's throughput had levelled off by its end.
//! - [`server`]: pure readers of `serverStatus` and `hostInfo` replies, server CPU per
//!   operation and the cache regime.
//!
//! # How latency is measured: one worked example
//!
//! An open-loop run at 1000 ops/s over 10 workers gives each worker a schedule: operation *i*
//! of a worker is due at `start + i × 10 ms` ([`Timing::intended`]). Suppose the server stalls
//! for 1 s at t = 2 s.
//!
//! - The operation due at 2.000 s is sent at 2.000 s and answered at 3.000 s: its service time
//!   (`done − sent`) is 1 s, and so is its latency from the intended start.
//! - The worker's next operation was due at 2.010 s but could only be sent at 3.000 s; the
//!   server answers in 0.2 ms. Its service time is 0.2 ms, but a user who arrived at 2.010 s
//!   waited 990.2 ms. Under [`LatencyMode::Intended`] the main histogram records 990.2 ms
//!   (`done − intended`), and the `uncorrected` histogram records the 0.2 ms.
//! - The same holds for the ~98 operations due between 2.020 s and 2.990 s: each waited from
//!   its due time until the backlog cleared just after 3.000 s. About 100 of the worker's 1000
//!   samples in a 10-second run waited between 10 ms and 1 s, so the p99 is about 0.9 s.
//!
//! A closed loop ([`LatencyMode::ServiceTime`], YCSB's default) sends the next operation only
//! after the previous reply, so the stall appears as one 1-second sample per worker, and a
//! p99 over thousands of samples can hide it entirely. That is why results say which mode
//! produced their numbers, and why open-loop results keep both histograms.
#![deny(missing_docs)]

pub mod canary;
pub mod client_cpu;
mod error_kind;
pub mod latency;
pub mod phase_canary;
mod recorder;
pub mod server;
pub mod settle;

pub use client_cpu::{ClientCpuMeter, ClientCpuUsage, SATURATION_THRESHOLD};
pub use error_kind::{ErrorCounts, ErrorKind};
pub use latency::LatencySummary;
pub use recorder::{LabelRecord, Latencies, LatencyMode, MergeError, OpTimer, Recorder, Timing};
