//! Building blocks for runner tests: a cell id, phase settings, and YCSB plans.
use std::time::Duration;

use mongobench::api::RunLength;
use mongobench::plan::{RunSettings, WorkloadPlan};
use mongobench::result::CellId;
use mongobench::runner::dataset::{Seeded, prepare};
use mongobench::runner::server::ConnectedTarget;
use mongobench::workload::ycsb::RawProperties;

/// The operation timeout of test runs: the default a user gets.
pub const LIMIT: Duration = mongobench::api::DEFAULT_OPERATION_TIMEOUT;

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
        operation_timeout: LIMIT,
        sweep: None,
        warmup_load: None,
        warmup_settle: None,
    }
}

pub fn ycsb(workload: &str) -> WorkloadPlan {
    WorkloadPlan::Ycsb {
        raw: RawProperties::preset(workload).expect("a YCSB preset"),
        seed: 7,
    }
}

/// Seeds `target` fresh to `documents` documents (records) of `plan`, as a run's first size.
pub async fn seeded(
    target: &ConnectedTarget,
    plan: &WorkloadPlan,
    documents: u64,
    workers: u32,
) -> Seeded {
    prepare(target, plan, workers, documents, None, false, LIMIT)
        .await
        .unwrap_or_else(|e| panic!("seeding {documents} documents: {e}"))
}

/// Runs `bench` on `targets` and returns its results (progress is not shown).
pub async fn run_benchmark(
    bench: &mongobench::runner::benchmark::Benchmark,
    targets: &[mongobench::runner::benchmark::Connected],
) -> Vec<mongobench::result::CellResult> {
    struct Quiet;
    impl mongobench::runner::benchmark::Events for Quiet {
        fn seeding(&mut self, _: &str, _: &str, _: u64) {}
        fn seeded(&mut self, _: &str, _: &str, _: &Seeded) {}
        fn started(
            &mut self,
            _: &mongobench::plan::PlannedCell,
            _: &mongobench::runner::cell::CellProgress,
        ) {
        }
        async fn finished(
            &mut self,
            _: &mongobench::plan::PlannedCell,
            _: &mongobench::result::CellResult,
        ) -> Result<(), mongobench::runner::sink::SinkError> {
            Ok(())
        }
    }
    mongobench::runner::benchmark::run(bench, targets, &mut Quiet)
        .await
        .expect("the run goes to its end")
}

/// A benchmark of `plan` on the local platform: `sizes` documents each, `repetitions`
/// interleaved repetitions.
pub fn benchmark(
    name: &str,
    plan: WorkloadPlan,
    settings: RunSettings,
    sizes: &[u64],
    repetitions: u32,
) -> mongobench::runner::benchmark::Benchmark {
    mongobench::runner::benchmark::Benchmark {
        name: name.to_owned(),
        run_id: "test".to_owned(),
        platform: "local".to_owned(),
        plan,
        settings,
        reuse_dataset: false,
        sizes: sizes
            .iter()
            .map(|&n| (n.to_string(), mongobench::api::DatasetSize::Documents(n)))
            .collect(),
        repetitions,
        precision: None,
        metrics: vec![mongobench::api::VerdictMetric::Throughput],
        canary_policy: mongobench::api::CanaryPolicy::Flag,
        server_canaries: std::collections::BTreeMap::new(),
        // The first target.
        baseline: String::new(),
        completed: Default::default(),
        schedule: Default::default(),
        sides: Vec::new(),
    }
}

/// Connects to each `(name, uri)`.
pub async fn connect_all(
    targets: &[(&str, &str)],
    workers: u32,
) -> Vec<mongobench::runner::benchmark::Connected> {
    let mut out = Vec::new();
    for (name, uri) in targets {
        let target =
            mongobench::runner::server::connect(name, uri, workers, Duration::from_secs(10))
                .await
                .unwrap_or_else(|e| panic!("connecting to {name} at {uri}: {e}"));
        out.push(mongobench::runner::benchmark::Connected {
            target,
            uri: (*uri).to_owned(),
        });
    }
    out
}

/// Per operation label of a result's measured phase: the operations completed.
pub fn completed_per_label(r: &mongobench::result::CellResult) -> Vec<(String, u64)> {
    let m = r.measured.as_ref().expect("a measured phase");
    m.operations
        .iter()
        .map(|(label, op)| (label.clone(), op.completed))
        .collect()
}

/// Panics with the cell, its status and its reasons unless `r` is a valid result.
pub fn assert_valid(r: &mongobench::result::CellResult) {
    assert!(
        r.is_valid(),
        "{}: {:?} {:?}",
        r.cell,
        r.status,
        r.invalid_reasons
    );
}

/// The result documents (`*.json` but `comparison.json`) of a run's output directory, in cell
/// order.
pub fn read_results(dir: &std::path::Path) -> Vec<mongobench::result::CellResult> {
    let mut out: Vec<mongobench::result::CellResult> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .filter(|path| path.file_name().is_some_and(|n| n != "comparison.json"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            mongobench::result::CellResult::from_json(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect();
    out.sort_by_key(|r| r.cell.to_string());
    out
}
