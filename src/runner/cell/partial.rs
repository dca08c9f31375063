//! One client process's share of a cell's measured phase, and the cell's figures merged from
//! every process's share: histograms added without loss, counts and per-second series summed,
//! client CPU summed with each process's own kept, and the traffic fingerprint combined from
//! the workers' shares in global worker order — so a run split over processes has the
//! fingerprint of the same workers in one process. Each process's client path is kept; the
//! cell's is the one they all took.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::measure::ClientCpuUsage;
use crate::result::{ClientPath, ClientPod, MeasuredPhase, TargetCounts};
use crate::runner::send::{WorkerShare, check_shares, fingerprint_of};

/// What one process measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Partial {
    /// The process's index.
    pub index: u32,
    /// The global index of its first worker; its workers follow in order.
    pub first_worker: u32,
    /// Milliseconds it started after the common start time.
    pub start_skew_ms: f64,
    pub measured: MeasuredPhase,
    pub cpu: ClientCpuUsage,
    /// Per worker, in order: what it sent.
    pub shares: Vec<WorkerShare>,
    pub targeting: BTreeMap<String, TargetCounts>,
    /// Why its phase stopped early (the server could not be reached).
    pub fatal: Option<String>,
    /// How its workers sent their commands.
    pub path: ClientPath,
}

/// The cell's figures from every process.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub measured: MeasuredPhase,
    pub cpu: ClientCpuUsage,
    pub pods: Vec<ClientPod>,
    pub fingerprint: String,
    pub worker_operations: Vec<u64>,
    pub targeting: BTreeMap<String, TargetCounts>,
    /// Why a process's phase stopped early (the server could not be reached): the figures are
    /// kept, and the cell is not complete.
    pub fatal: Option<String>,
    /// The path every process's workers took; `None` when they differ (each one's is in
    /// `pods`).
    pub path: Option<ClientPath>,
}

/// Merges the partials of processes `0..count` running `workers` workers of `workload`.
///
/// # Errors
/// A message naming what is wrong: a process missing or twice, workers that do not tile
/// `[0, workers)`, phases that cannot be merged, or fingerprint shares of different versions.
pub fn merge(
    workload: &str,
    workers: u32,
    count: u32,
    mut parts: Vec<Partial>,
) -> Result<Merged, String> {
    parts.sort_by_key(|p| p.index);
    let indices: Vec<u32> = parts.iter().map(|p| p.index).collect();
    if indices != (0..count).collect::<Vec<_>>() {
        return Err(format!(
            "expected the measured phases of client processes 0 to {} and got those of {indices:?}",
            count.saturating_sub(1)
        ));
    }
    let mut next = 0;
    for p in &parts {
        if p.first_worker != next {
            return Err(format!(
                "client process {} ran workers from {}, expected from {next}",
                p.index, p.first_worker
            ));
        }
        next += p.shares.len() as u32;
    }
    if next != workers {
        return Err(format!(
            "the client processes ran {next} workers together, expected {workers}"
        ));
    }
    let fatal = parts.iter().find_map(|p| {
        let why = p.fatal.as_deref()?;
        Some(if count > 1 {
            format!("client process {} of {count}: {why}", p.index)
        } else {
            why.to_owned()
        })
    });
    let phases: Vec<MeasuredPhase> = parts.iter().map(|p| p.measured.clone()).collect();
    let measured = MeasuredPhase::merge(&phases).map_err(|e| e.to_string())?;
    let cpus: Vec<ClientCpuUsage> = parts.iter().map(|p| p.cpu).collect();
    let cpu = ClientCpuUsage::merge(&cpus).expect("at least one process");
    let mut targeting: BTreeMap<String, TargetCounts> = BTreeMap::new();
    for p in &parts {
        for (label, c) in &p.targeting {
            let t = targeting.entry(label.clone()).or_default();
            t.aimed_hits += c.aimed_hits;
            t.planned_misses += c.planned_misses;
            t.found += c.found;
        }
    }
    let shares: Vec<WorkerShare> = parts.iter().flat_map(|p| p.shares.clone()).collect();
    check_shares(workload, &shares)?;
    let path = parts
        .iter()
        .all(|p| p.path == parts[0].path)
        .then(|| parts[0].path.clone());
    Ok(Merged {
        measured,
        cpu,
        pods: parts
            .iter()
            .map(|p| ClientPod {
                index: p.index,
                first_worker: p.first_worker,
                workers: p.shares.len() as u32,
                start_skew_ms: p.start_skew_ms,
                cpu: p.cpu,
                client_path: Some(p.path.clone()),
            })
            .collect(),
        fingerprint: fingerprint_of(workload, &shares),
        worker_operations: shares.iter().map(|s| s.operations).collect(),
        targeting,
        fatal,
        path,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::measure::{LatencyMode, Recorder, Timing};
    use crate::result::LoopMode;
    use crate::runner::crew::ClientSlice;
    use crate::runner::send::{Source, fingerprint};
    use crate::workload::flights::{self, DatasetInfo, Params};
    use crate::workload::ycsb::{self, Properties, RawProperties, SharedState};

    /// `n` operations of every worker in `range`, drawn to the end.
    fn flights_sources(range: std::ops::Range<u32>, workers: u32, n: u64) -> Vec<Source> {
        let params = Params {
            workers,
            ..Params::default()
        };
        let dataset = DatasetInfo::fresh(params.dataset_seed, 1_000);
        range
            .map(|w| {
                let worker =
                    flights::Worker::new(&params, &dataset, w, flights::RunPhase::Measured)
                        .unwrap();
                let mut s = Source::flights(worker, Some(n + u64::from(w)), Default::default());
                while s.next_step().is_some() {}
                s
            })
            .collect()
    }

    fn ycsb_sources(range: std::ops::Range<u32>, workers: u32) -> Vec<Source> {
        let mut raw = RawProperties::preset("workloada").unwrap();
        raw.set("recordcount", "500");
        raw.set("operationcount", "90");
        let props = Properties::from_raw(&raw).unwrap();
        let shared = SharedState::new(500);
        range
            .map(|w| {
                let worker =
                    ycsb::Worker::new(&props, 7, w, workers, ycsb::YcsbPhase::Run, &shared)
                        .unwrap();
                let mut s = Source::ycsb(worker, Default::default());
                while s.next_step().is_some() {}
                s
            })
            .collect()
    }

    fn partial(index: u32, first_worker: u32, sources: Vec<Source>) -> Partial {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0, LatencyMode::ServiceTime);
        for s in &sources {
            for _ in 0..s.generated() {
                let done = t0 + Duration::from_millis(10);
                let sent = done - Duration::from_micros(100 + u64::from(index));
                r.record(
                    "find",
                    Timing {
                        intended: None,
                        sent,
                        done,
                    },
                    Ok(()),
                );
            }
        }
        Partial {
            index,
            first_worker,
            start_skew_ms: f64::from(index),
            measured: MeasuredPhase::from_recorder(
                &r,
                Duration::from_secs(1),
                LoopMode::Closed,
                None,
            ),
            cpu: ClientCpuUsage {
                user_us: 1000,
                system_us: 0,
                wall_us: 1_000_000,
                cores: 1,
                utilization: 0.001,
                client_saturated: false,
            },
            shares: sources.into_iter().map(Source::share).collect(),
            targeting: BTreeMap::new(),
            fatal: None,
            path: ClientPath::OwnConnections,
        }
    }

    fn split(
        workers: u32,
        count: u32,
        make: impl Fn(std::ops::Range<u32>) -> Vec<Source>,
    ) -> Vec<Partial> {
        ClientSlice::new(0, count)
            .unwrap()
            .all()
            .map(|s| {
                let range = s.workers(workers);
                partial(s.index, range.start, make(range))
            })
            .collect()
    }

    #[test]
    fn a_split_run_has_the_fingerprint_and_counts_of_one_process() {
        let one = fingerprint(flights::VERSION, flights_sources(0..7, 7, 20));
        let merged = merge(
            flights::VERSION,
            7,
            3,
            split(7, 3, |r| flights_sources(r, 7, 20)),
        )
        .unwrap();
        assert_eq!(merged.fingerprint, one);
        assert_eq!(merged.worker_operations, [20, 21, 22, 23, 24, 25, 26]);
        assert_eq!(merged.measured.overall.completed, 161);
        assert_eq!(
            merged.pods.iter().map(|p| p.workers).collect::<Vec<_>>(),
            [2, 2, 3]
        );
        assert_eq!(merged.cpu.cores, 3);

        let workload = "ycsb/workloada";
        let one = fingerprint(workload, ycsb_sources(0..4, 4));
        let merged = merge(workload, 4, 2, split(4, 2, |r| ycsb_sources(r, 4))).unwrap();
        assert_eq!(merged.fingerprint, one);
        assert_eq!(merged.worker_operations, [23, 23, 22, 22]);
    }

    #[test]
    fn a_missing_process_a_gap_in_the_workers_or_a_stopped_process_is_named() {
        let mut parts = split(6, 3, |r| flights_sources(r, 6, 3));
        parts.remove(1);
        assert_eq!(
            merge(flights::VERSION, 6, 3, parts).unwrap_err(),
            "expected the measured phases of client processes 0 to 2 and got those of [0, 2]"
        );
        let mut parts = split(6, 2, |r| flights_sources(r, 6, 3));
        parts[1].first_worker = 4;
        assert_eq!(
            merge(flights::VERSION, 6, 2, parts).unwrap_err(),
            "client process 1 ran workers from 4, expected from 3"
        );
        let mut parts = split(6, 2, |r| flights_sources(r, 6, 3));
        parts[1].fatal = Some("server unreachable".into());
        assert_eq!(
            merge(flights::VERSION, 6, 2, parts)
                .unwrap()
                .fatal
                .as_deref(),
            Some("client process 1 of 2: server unreachable")
        );
    }

    #[test]
    fn shares_travel_as_hex_and_must_share_a_version() {
        let mut parts = split(6, 2, |r| flights_sources(r, 6, 3));
        // A flights v2 share: a 16-byte XXH3-128 digest, 32 hex characters in JSON.
        let json = serde_json::to_value(&parts[0].shares[0]).unwrap();
        assert_eq!(json["digest"].as_str().unwrap().len(), 32);
        let back: WorkerShare = serde_json::from_value(json).unwrap();
        assert_eq!(back, parts[0].shares[0]);
        // A v1 digest among v2 ones cannot be combined.
        parts[1].shares[0].digest = vec![0; 32];
        assert_eq!(
            merge(flights::VERSION, 6, 2, parts).unwrap_err(),
            "worker 3's fingerprint share has a 32-byte digest, which does not fit the other \
             workers' flights/v1 shares"
        );
    }

    #[test]
    fn the_cell_records_the_path_every_process_took_and_each_pod_its_own() {
        let own = ClientPath::OwnConnections;
        let refused = ClientPath::Driver {
            reason: "an own connection failed: connection refused".into(),
        };
        let pod_paths = |m: &Merged| -> Vec<Option<ClientPath>> {
            m.pods.iter().map(|p| p.client_path.clone()).collect()
        };
        // A follower hands its path over with its figures.
        let parts = split(4, 2, |r| flights_sources(r, 4, 3));
        let handed = serde_json::to_value(&parts[1]).unwrap();
        assert_eq!(handed["path"], serde_json::json!({"via": "ownConnections"}));
        assert_eq!(serde_json::from_value::<Partial>(handed).unwrap(), parts[1]);

        let agree = merge(flights::VERSION, 4, 2, parts.clone()).unwrap();
        assert_eq!(agree.path, Some(own.clone()));
        assert_eq!(pod_paths(&agree), [Some(own.clone()), Some(own.clone())]);

        let mut differ = parts;
        differ[1].path = refused.clone();
        let differ = merge(flights::VERSION, 4, 2, differ).unwrap();
        assert_eq!(differ.path, None);
        assert_eq!(pod_paths(&differ), [Some(own), Some(refused.clone())]);

        let mut alone = split(4, 1, |r| flights_sources(r, 4, 3));
        alone[0].path = refused.clone();
        let alone = merge(flights::VERSION, 4, 1, alone).unwrap();
        assert_eq!(alone.path, Some(refused));
    }
}
