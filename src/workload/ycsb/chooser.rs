//! Key choice for run-phase operations (specs/ycsb.md §4.1): the view of which keys exist
//! (shared acknowledged counter, or a worker's own insert lane) and the configured request
//! distribution with YCSB's rejection of keys not yet acknowledged.

use std::sync::Arc;

use super::distributions::{
    ExactZipfian, Exponential, Hotspot, ScrambledZipfian, Sequential, SkewedLatest, Uniform, zeta,
};
use super::error::WorkerError;
use super::properties::{Properties, RequestDistribution, ZipfianMode};
use super::rng::{self, Rng};
use super::shared::SharedState;

/// Where run-phase inserts go and which keys may be read.
#[derive(Debug)]
pub(crate) enum KeyView {
    /// YCSB: one counter and one acknowledged frontier shared by every worker of the process.
    Shared(Arc<SharedState>),
    /// `mongobench.txninsert.partition=true`: this worker's own insert lane and its own view of
    /// the readable keys (pre-existing keys plus its own inserts), as a virtual index space
    /// `[0, start + inserted)` where index `start + j` is this lane's `j`-th key.
    Lane {
        shared: Arc<SharedState>,
        start: u64,
        lanes: u64,
        lane: u64,
        inserted: u64,
    },
}

impl KeyView {
    /// One past the highest readable (virtual) key number.
    pub(crate) fn frontier(&self) -> u64 {
        match self {
            KeyView::Shared(s) => s.last_acked().map_or(0, |k| k + 1),
            KeyView::Lane {
                start, inserted, ..
            } => start + inserted,
        }
    }

    /// The real key number of virtual key `v`.
    pub(crate) fn key_of(&self, v: u64) -> u64 {
        match self {
            KeyView::Shared(_) => v,
            KeyView::Lane {
                start, lanes, lane, ..
            } => {
                if v < *start {
                    v
                } else {
                    start + (v - start) * lanes + lane
                }
            }
        }
    }

    pub(crate) fn next_insert_key(&self) -> u64 {
        match self {
            KeyView::Shared(s) => s.next_insert_key(),
            KeyView::Lane {
                shared,
                start,
                lanes,
                lane,
                inserted,
            } => {
                let k = start + inserted * lanes + lane;
                shared.note_insert_key(k);
                k
            }
        }
    }

    pub(crate) fn acknowledge(&mut self, k: u64) {
        match self {
            KeyView::Shared(s) => s.acknowledge(k),
            KeyView::Lane { inserted, .. } => *inserted += 1,
        }
    }
}

/// The configured request distribution, drawing virtual key numbers.
#[derive(Debug, Clone)]
pub(crate) enum KeyChooser {
    Uniform(Uniform),
    Sequential(Sequential),
    Zipfian(ScrambledZipfian),
    Exact(ExactZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Exponential(Exponential),
}

impl KeyChooser {
    /// YCSB's `nextKeynum`: a key below `frontier` (≥ 1), by rejection for range distributions.
    pub(crate) fn next_keynum(&mut self, rng: &mut Rng, frontier: u64) -> u64 {
        let last = frontier - 1;
        loop {
            let k = match self {
                KeyChooser::Exponential(e) => return e.key(rng, last),
                KeyChooser::Latest(l) => return l.sample(rng, last),
                KeyChooser::Uniform(u) => u.sample(rng),
                KeyChooser::Sequential(s) => s.next_key(),
                KeyChooser::Zipfian(z) => z.sample(rng),
                KeyChooser::Exact(z) => z.sample(rng),
                KeyChooser::Hotspot(h) => h.sample(rng),
            };
            if k <= last {
                return k;
            }
        }
    }
}

/// The request distribution of `props` for a worker, checked to reach a readable key.
pub(crate) fn build_chooser(
    props: &Properties,
    seed: u64,
    worker_index: u32,
    workers: u32,
    shared: &SharedState,
    frontier: u64,
) -> Result<KeyChooser, WorkerError> {
    let lo = props.insert_start;
    let count = props.insert_count;
    let last = frontier.checked_sub(1);
    let nothing = |first: u64| WorkerError::NothingToRead { first, last };
    let in_range = |first: u64| last.is_some_and(|l| first <= l);
    let chooser = match props.request_distribution {
        // latest and exponential count back from the last acknowledged key, ignoring insertstart.
        RequestDistribution::Latest | RequestDistribution::Exponential { .. } if last.is_none() => {
            return Err(nothing(0));
        }
        RequestDistribution::Exponential { percentile, frac } => {
            return Ok(KeyChooser::Exponential(Exponential::new(
                percentile,
                props.record_count,
                frac,
            )));
        }
        RequestDistribution::Latest => {
            // Built over YCSB's initial lastAcked (insert start − 1); ζ is computed once per process.
            let items = shared.insert_start().saturating_sub(1);
            let z = shared.latest_zeta(items, || {
                zeta(items, super::distributions::ZIPFIAN_CONSTANT)
            });
            return Ok(KeyChooser::Latest(SkewedLatest::new(items, Some(z))));
        }
        _ if count == 0 => return Err(WorkerError::EmptyKeyRange),
        RequestDistribution::Uniform => {
            KeyChooser::Uniform(Uniform::new(lo, lo + count - 1).expect("count >= 1"))
        }
        RequestDistribution::Sequential => KeyChooser::Sequential(Sequential::new(
            lo,
            count,
            u64::from(worker_index),
            u64::from(workers),
        )),
        RequestDistribution::Hotspot {
            data_fraction,
            opn_fraction,
        } => {
            let h = Hotspot::new(lo, lo + count - 1, data_fraction, opn_fraction)
                .ok_or(WorkerError::EmptyKeyRange)?;
            // The set that is always drawn from must start at a readable key.
            let first = if opn_fraction > 0.0 {
                lo
            } else {
                lo + h.hot_len()
            };
            if !in_range(first) {
                return Err(nothing(first));
            }
            KeyChooser::Hotspot(h)
        }
        RequestDistribution::Zipfian => {
            let max = lo + count + props.expected_new_keys();
            match props.zipfian_mode {
                ZipfianMode::Ycsb => KeyChooser::Zipfian(ScrambledZipfian::new(lo, max)),
                ZipfianMode::Exact { theta } => KeyChooser::Exact(ExactZipfian::new(
                    lo,
                    max,
                    theta,
                    rng::key(seed, rng::TAG_PERMUTATION, 0),
                )),
            }
        }
    };
    if !in_range(lo) {
        return Err(nothing(lo));
    }
    Ok(chooser)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::ycsb::keys::key_name;
    use crate::workload::ycsb::properties::RawProperties;
    use std::collections::HashMap;

    fn props(preset: &str) -> Properties {
        Properties::from_raw(&RawProperties::preset(preset).expect("preset")).expect("valid")
    }

    /// Key shares of a workload's chooser over `draws` key choices with nothing inserted yet.
    fn key_shares(preset: &str, draws: u32) -> HashMap<u64, u32> {
        let p = props(preset);
        let s = SharedState::new(1000);
        let mut chooser = build_chooser(&p, 0, 0, 1, &s, 1000).expect("chooser");
        let mut rng = Rng::new(12);
        let mut counts = HashMap::new();
        for _ in 0..draws {
            *counts
                .entry(chooser.next_keynum(&mut rng, 1000))
                .or_insert(0u32) += 1;
        }
        counts
    }

    fn assert_share(counts: &HashMap<u64, u32>, key: u64, p: f64, draws: u32) {
        let got = f64::from(*counts.get(&key).unwrap_or(&0)) / f64::from(draws);
        let sigma = (p * (1.0 - p) / f64::from(draws)).sqrt();
        assert!((got - p).abs() < 5.0 * sigma, "key {key}: {got} vs {p}");
    }

    // Expected shares computed analytically from Gray's formula in an independent Python script
    // (exact for ranks below 300,000, the rest spread evenly), renormalised after the rejection
    // of keys not yet inserted; they match the §4.5 table (3.86 %, 1.99 %, 1.60 %; E 4.24 %, …).
    #[test]
    fn hottest_key_of_workload_a_is_144() {
        let draws = 1_000_000;
        let counts = key_shares("a", draws);
        let hottest = counts.iter().max_by_key(|(_, c)| **c).map(|(k, _)| *k);
        assert_eq!(hottest, Some(144));
        assert_eq!(key_name(144, true, 1), "user1573987489603120213");
        assert!(!counts.contains_key(&1000), "key 1000 was never inserted");
        assert_share(&counts, 144, 0.038_609_163_508_342_52, draws);
        assert_share(&counts, 610, 0.019_954_758_521_916_773, draws);
        assert_share(&counts, 213, 0.016_034_443_115_578_518, draws);
    }

    #[test]
    fn a_time_bound_run_keeps_the_headroom_of_the_workload_file() {
        // operationcount=0 alone would drop the headroom and move E's hot keys to A's (144,
        // 610, 213); the headroom property keeps them at 903, 403, 802.
        let hottest = |extra: &[(&str, &str)]| {
            let mut raw = RawProperties::preset("e").expect("preset");
            for (k, v) in extra {
                raw.set(*k, *v);
            }
            let p = Properties::from_raw(&raw).expect("valid");
            let s = SharedState::new(1000);
            let mut chooser = build_chooser(&p, 0, 0, 1, &s, 1000).expect("chooser");
            let mut rng = Rng::new(12);
            let mut counts: HashMap<u64, u32> = HashMap::new();
            for _ in 0..200_000 {
                *counts
                    .entry(chooser.next_keynum(&mut rng, 1000))
                    .or_default() += 1;
            }
            let mut top: Vec<(u64, u32)> = counts.into_iter().collect();
            top.sort_by_key(|(k, c)| (std::cmp::Reverse(*c), *k));
            top.iter().take(3).map(|(k, _)| *k).collect::<Vec<_>>()
        };
        let unbounded = [("operationcount", "0"), ("maxexecutiontime", "600")];
        assert_eq!(hottest(&unbounded), [144, 610, 213]);
        let kept = [
            ("operationcount", "0"),
            ("maxexecutiontime", "600"),
            ("mongobench.headroom.operationcount", "1000"),
        ];
        assert_eq!(hottest(&kept), [903, 403, 802]);
        assert_eq!(hottest(&[]), [903, 403, 802]);
    }

    #[test]
    fn workload_e_redraws_the_insert_headroom() {
        let draws = 1_000_000;
        let counts = key_shares("e", draws);
        assert!(counts.keys().all(|k| *k < 1000));
        assert_share(&counts, 903, 0.042_381_915_143_991_47, draws);
        assert_share(&counts, 403, 0.021_892_850_710_380_277, draws);
        assert_share(&counts, 802, 0.017_782_543_548_219_96, draws);
    }
}
