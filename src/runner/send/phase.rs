//! Running one phase (warm-up or measured) with N workers, each with one operation in flight.
//!
//! Closed loop: a worker sends its next operation as soon as the previous one returns (plus
//! think time). Open loop (`target_ops_per_sec`): worker w of W sends its i-th operation at
//! `start + (i + w/W) × tick`, tick = W / rate, so the workers' operations are spread evenly
//! over each tick instead of all firing at once; its latency is measured from that intended
//! start, so a server stall shows as the backlog it causes (no coordinated omission). A late
//! worker fires back to back to catch up. Workers sleep on the runtime's timer until their
//! operation is due (up to 1 ms late, its resolution, which the intended-start latency
//! includes) rather than spinning, which would cost client CPU. No operation is sent once the
//! window has ended.
//!
//! Workers record into a few shared recorders (two per usable core), not one each: a recorder
//! holds a latency histogram per label (tens of KB each), so one per worker made the runner's
//! memory grow with the workers (BENCHMARKS.md). A worker holds its shard's lock only to record.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mongodb::bson::doc;

use crate::measure::{ErrorKind, LatencyMode, Recorder, Timing};
use crate::result::{ClientPath, TargetCounts};
use crate::runner::outcome::{Failure, Reply, refuses_command};
use crate::runner::server::ConnectedTarget;
use crate::runner::wire::{self, WirePath};
use crate::workload::flights;

use super::execute::{ExecOptions, Sender};
use super::source::{Source, Step, judge};

/// When a phase ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this wall time (operations in flight finish).
    After(Duration),
    /// When every worker's source is exhausted (operation-bounded).
    Exhausted,
}

/// How a phase runs.
#[derive(Debug, Clone)]
pub struct PhaseConfig {
    pub stop: Stop,
    /// Open loop at this total rate; `None` is a closed loop.
    pub target_ops_per_sec: Option<f64>,
    pub exec: ExecOptions,
    /// The global index of the first source's worker and the workers of all client processes
    /// together (0: just these sources): pacing spreads every process's workers as one.
    pub first_worker: u32,
    pub total_workers: u32,
    /// When to start (client processes start together); `None`: now.
    pub start_at: Option<Instant>,
}

/// What a phase produced.
pub struct PhaseOutcome {
    /// All workers' measurements merged.
    pub recorder: Recorder,
    /// The sources, in worker order (their fingerprints cover what was sent).
    pub sources: Vec<Source>,
    /// Wall time from start to the last worker's end.
    pub wall: Duration,
    /// Flights targeting, per label.
    pub targeting: BTreeMap<String, TargetCounts>,
    /// Set when the phase stopped because the server could not be reached: the first
    /// network failure seen.
    pub fatal: Option<String>,
    /// How the workers sent.
    pub path: ClientPath,
}

/// Live counters a progress display reads while a phase runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub completed: AtomicU64,
}

struct WorkerOutcome {
    source: Source,
    targeting: BTreeMap<String, TargetCounts>,
    fatal: Option<String>,
}

/// Runs `sources` (one per worker) against `target` until `config.stop`, each worker with
/// its own [`Sender`].
pub async fn run_phase(
    target: &ConnectedTarget,
    sources: Vec<Source>,
    think: Vec<Option<flights::ThinkTime>>,
    config: &PhaseConfig,
    progress: Arc<Progress>,
) -> PhaseOutcome {
    let workers = if config.total_workers == 0 {
        sources.len().max(1) as u32
    } else {
        config.total_workers
    };
    let mode = if config.target_ops_per_sec.is_some() {
        LatencyMode::Intended
    } else {
        LatencyMode::ServiceTime
    };
    let tick = config
        .target_ops_per_sec
        .map(|rate| Duration::from_secs_f64(f64::from(workers) / rate));
    let stop_flag = Arc::new(AtomicBool::new(false));
    let wire = wire::for_phase(&target.wire, &target.client).await;
    if let Some(at) = config.start_at {
        tokio::time::sleep_until(at.into()).await;
    }
    let start = Instant::now();
    let deadline = match config.stop {
        Stop::After(d) => Some(start + d),
        Stop::Exhausted => None,
    };

    let shards: Vec<Arc<Mutex<Recorder>>> = (0..recorder_shards(sources.len()))
        .map(|_| Arc::new(Mutex::new(Recorder::new(start, mode))))
        .collect();
    let mut handles = Vec::new();
    for (w, (source, think)) in sources.into_iter().zip(think).enumerate() {
        let ctx = WorkerContext {
            recorder: shards[w % shards.len()].clone(),
            sender: Sender::new(target.client.clone(), &wire, config.exec.clone()),
            start,
            deadline,
            tick,
            offset: (f64::from(config.first_worker) + w as f64) / f64::from(workers),
            stop: stop_flag.clone(),
            progress: progress.clone(),
        };
        handles.push(tokio::spawn(ctx.run(source, think)));
    }
    let mut out_sources = Vec::new();
    let mut targeting: BTreeMap<String, TargetCounts> = BTreeMap::new();
    let mut fatal = None;
    for h in handles {
        let w = h.await.expect("benchmark worker does not panic");
        out_sources.push(w.source);
        for (label, c) in w.targeting {
            let t = targeting.entry(label).or_default();
            t.aimed_hits += c.aimed_hits;
            t.planned_misses += c.planned_misses;
            t.found += c.found;
        }
        if fatal.is_none() {
            fatal = w.fatal;
        }
    }
    let wall = start.elapsed();
    if fatal.is_some() && matches!(target.wire, WirePath::Direct(_)) {
        // The workers' own connections saw the server go away; the driver's pooled ones, idle
        // meanwhile, learn it only when one fails. One ping lets the driver clear them now,
        // rather than fail the next step's first command (a restarted server).
        let admin = target.client.database("admin");
        let _ =
            tokio::time::timeout(Duration::from_secs(5), admin.run_command(doc! {"ping": 1})).await;
    }
    let recorders: Vec<Recorder> = shards
        .into_iter()
        .map(|s| {
            Arc::into_inner(s)
                .expect("every worker has ended")
                .into_inner()
                .expect("a worker never panics while recording")
        })
        .collect();
    let recorder = Recorder::merge_all(recorders.iter())
        .expect("workers' histograms share one layout")
        .unwrap_or_else(|| Recorder::new(start, mode));
    PhaseOutcome {
        recorder,
        sources: out_sources,
        wall,
        targeting,
        fatal,
        path: ClientPath::from(&wire),
    }
}

/// How many recorders `workers` share: two per usable core, at most one per worker.
fn recorder_shards(workers: usize) -> usize {
    let cores = crate::measure::client_cpu::available_cores() as usize;
    workers.min(2 * cores).max(1)
}

struct WorkerContext {
    recorder: Arc<Mutex<Recorder>>,
    sender: Sender,
    start: Instant,
    deadline: Option<Instant>,
    tick: Option<Duration>,
    /// This worker's share of a tick before its operations are due: w / W.
    offset: f64,
    stop: Arc<AtomicBool>,
    progress: Arc<Progress>,
}

impl WorkerContext {
    async fn run(
        mut self,
        mut source: Source,
        mut think: Option<flights::ThinkTime>,
    ) -> WorkerOutcome {
        let mut targeting: BTreeMap<String, TargetCounts> = BTreeMap::new();
        let mut fatal = None;
        let mut i: u32 = 0;
        loop {
            if self.stop.load(Ordering::Relaxed)
                || self.deadline.is_some_and(|d| Instant::now() >= d)
            {
                break;
            }
            if let Some(pause) = think
                .as_mut()
                .map(|t| t.next_pause())
                .filter(|p| !p.is_zero())
            {
                tokio::time::sleep(pause).await;
            }
            let intended = match self.tick {
                Some(tick) => {
                    let due = self.start + tick.mul_f64(f64::from(i) + self.offset);
                    if self.deadline.is_some_and(|d| due >= d) {
                        break;
                    }
                    if due > Instant::now() {
                        tokio::time::sleep_until(due.into()).await;
                    }
                    Some(due)
                }
                None => None,
            };
            i = i.saturating_add(1);
            let Some(step) = source.next_step() else {
                break;
            };
            if let Err(failure) = self.send(&step, intended, &mut targeting).await {
                // The server went away: the phase cannot produce a valid result.
                fatal = Some(failure);
                self.stop.store(true, Ordering::Relaxed);
                break;
            }
            source.complete();
            self.progress.completed.fetch_add(1, Ordering::Relaxed);
        }
        WorkerOutcome {
            source,
            targeting,
            fatal,
        }
    }

    fn recorder(&self) -> std::sync::MutexGuard<'_, Recorder> {
        self.recorder
            .lock()
            .expect("a worker never panics while recording")
    }

    /// Sends one step and records it; a network failure is returned as fatal.
    async fn send(
        &mut self,
        step: &Step,
        intended: Option<Instant>,
        targeting: &mut BTreeMap<String, TargetCounts>,
    ) -> Result<(), String> {
        let label = step.operation.label;
        let sent = Instant::now();
        if step.buffered {
            self.recorder().record(
                label,
                Timing {
                    intended,
                    sent,
                    done: sent,
                },
                Ok(()),
            );
            return Ok(());
        }
        // A fatal failure is counted under its kind like any error, then stops the phase.
        let mut fatal = None;
        let (outcome, reply) = if step.calls.len() > 1 {
            // YCSB read-modify-write: each call is also recorded under its own name.
            let mut outcome = Ok(());
            let mut total = Reply::default();
            for (command, call) in step.operation.commands.iter().zip(&step.calls) {
                let one = crate::workload::Operation {
                    label: call.label(),
                    database: step.operation.database,
                    commands: vec![command.clone()],
                };
                let call_sent = Instant::now();
                let r = self.sender.execute(&one).await;
                let done = Instant::now();
                let judged = classify(&r, Some(*call)).unwrap_or_else(|(kind, why)| {
                    fatal = Some(why);
                    Err(kind)
                });
                let timing = Timing {
                    intended,
                    sent: call_sent,
                    done,
                };
                self.recorder().record_nested(call.label(), timing, judged);
                if let Ok(r) = r {
                    total.documents += r.documents;
                    total.n += r.n;
                }
                if judged.is_err() {
                    outcome = judged;
                    break;
                }
            }
            (outcome, total)
        } else {
            let r = self.sender.execute(&step.operation).await;
            let judged = classify(&r, step.calls.first().copied()).unwrap_or_else(|(kind, why)| {
                fatal = Some(why);
                Err(kind)
            });
            if let (Some(name), Err(failure)) = (&step.template, &r)
                && failure.code().is_some_and(refuses_command)
            {
                fatal = Some(format!(
                    "operation {name:?}: the server refused the command: {failure}"
                ));
            }
            (judged, r.unwrap_or_default())
        };
        let done = Instant::now();
        self.recorder().record(
            label,
            Timing {
                intended,
                sent,
                done,
            },
            outcome,
        );
        if let Some(target) = step.target {
            let t = match targeting.get_mut(label) {
                Some(t) => t,
                None => targeting.entry(label.to_owned()).or_default(),
            };
            match target {
                flights::Target::Hit { .. } => t.aimed_hits += 1,
                flights::Target::PlannedMiss => t.planned_misses += 1,
                flights::Target::None => {}
            }
            if outcome.is_ok()
                && (reply.documents > 0 || reply.n > 0)
                && target != flights::Target::None
            {
                t.found += 1;
            }
        }
        fatal.map_or(Ok(()), Err)
    }
}

/// The recorded outcome of a reply; a failure that ends the phase is returned as `Err`
/// with its kind and message: the server went away, or did not answer within the operation
/// timeout (waiting on would hang the benchmark).
fn classify(
    reply: &Result<Reply, Failure>,
    call: Option<crate::workload::ycsb::Call>,
) -> Result<Result<(), ErrorKind>, (ErrorKind, String)> {
    match reply {
        Ok(r) => Ok(judge(call, r)),
        Err(f) => match f.kind() {
            kind @ ErrorKind::Network => Err((kind, f.to_string())),
            kind @ ErrorKind::Timeout if matches!(f, Failure::TimedOut(_)) => {
                Err((kind, f.to_string()))
            }
            kind => Ok(Err(kind)),
        },
    }
}
