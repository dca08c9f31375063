//! Building blocks for runner tests: a cell id, phase settings, and YCSB plans.
use std::time::Duration;

use mongobench::api::RunLength;
use mongobench::result::CellId;
use mongobench::runner::cell::{RunSettings, WorkloadPlan};
use mongobench::workload::ycsb::RawProperties;

pub fn cell(name: &str, workload: &str) -> CellId {
    CellId {
        benchmark: name.into(),
        run_id: "test".into(),
        workload: workload.into(),
        target: "ferretdb".into(),
        platform: "local".into(),
        size: "test".into(),
        repetition: 1,
    }
}

pub fn settings(workers: u32, measured: RunLength) -> RunSettings {
    RunSettings {
        workers,
        measured,
        warmup: RunLength::Duration(Duration::ZERO),
        target_ops_per_sec: None,
        write_concern: None,
        read_preference: None,
    }
}

pub fn ycsb(workload: &str) -> WorkloadPlan {
    WorkloadPlan::Ycsb {
        raw: RawProperties::preset(workload).expect("a YCSB preset"),
        seed: 7,
    }
}
