//! Unit tests of the YCSB worker, by theme; the helpers below build properties and workers.

use super::*;
use crate::workload::ycsb::properties::RawProperties;

fn props(preset: Option<&str>, extra: &[(&str, &str)]) -> Properties {
    let mut raw = match preset {
        Some(p) => RawProperties::preset(p).expect("preset"),
        None => RawProperties::new(),
    };
    for (k, v) in extra {
        raw.set(*k, *v);
    }
    Properties::from_raw(&raw).expect("valid properties")
}

fn worker(
    p: &Properties,
    seed: u64,
    w: u32,
    n: u32,
    phase: YcsbPhase,
    s: &Arc<SharedState>,
) -> Worker {
    Worker::new(p, seed, w, n, phase, s).expect("valid worker")
}

fn drain(w: &mut Worker) -> Vec<YcsbOp> {
    std::iter::from_fn(|| w.next()).collect()
}

mod batches;
mod commands;
mod keys;
mod stream;
