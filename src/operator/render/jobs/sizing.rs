//! How big and how long a runner may be: the CPU and memory its pod requests, and the
//! deadline of its Job, both estimated from the spec.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::api::{MongoBenchmark, MongoBenchmarkSpec, Platform, RunLength, Target};
use crate::operator::Error;
use crate::operator::error::SpecError;
use crate::plan::WorkloadPlan;

/// Client CPU microseconds per operation a runner needs at most (BENCHMARKS.md measures about
/// 250 for flights, 65 for YCSB reads and updates and 330 for YCSB scans), with a margin.
pub const FLIGHTS_CPU_US_PER_OP: f64 = 333.0;
pub const YCSB_CPU_US_PER_OP: f64 = 100.0;
pub const YCSB_SCAN_CPU_US_PER_OP: f64 = 400.0;
/// Operations per second a closed-loop worker is assumed to complete: 2 ms per round trip, a
/// replica set answering from its cache.
pub const WORKER_OPS_PER_SECOND: f64 = 500.0;
/// Most cores a runner pod requests by the rule (a larger client takes more pods).
pub const MAX_RUNNER_CORES: f64 = 16.0;
/// Memory a runner pod requests unless the spec says: seeding holds a batch pipeline, not the
/// dataset.
pub const RUNNER_MEMORY: &str = "512Mi";

/// The runner pod's resources: `spec.client.resources`, completed where it names no CPU or no
/// memory by the rule: a CPU request of the cores the pod's share of the load needs at the
/// workload's client cost — `ceil(rate × CPU per operation)`, between 1 and
/// [`MAX_RUNNER_CORES`], where the rate is the pod's share of `targetOpsPerSecond`, or its
/// workers × [`WORKER_OPS_PER_SECOND`] in a closed loop — and [`RUNNER_MEMORY`]. No limit is
/// added: the client may use a node's idle cores, and `clientSaturated` compares its CPU
/// with the cores its cgroup allows.
pub fn runner_resources(spec: &MongoBenchmarkSpec) -> ResourceRequirements {
    let given = spec
        .client
        .as_ref()
        .and_then(|c| c.resources.as_ref())
        .map(|r| r.to_resource_requirements())
        .unwrap_or_default();
    let names = |m: &Option<BTreeMap<String, Quantity>>, key: &str| {
        m.as_ref().is_some_and(|m| m.contains_key(key))
    };
    let mut requests = given.requests.clone().unwrap_or_default();
    if !names(&given.requests, "cpu") && !names(&given.limits, "cpu") {
        let pods = f64::from(spec.client_pods());
        let workers = (f64::from(spec.workload.most_workers()) / pods).ceil();
        // A ladder's top rate; a search's knee is not known before it runs.
        let ladder_top = spec
            .workload
            .sweep
            .as_ref()
            .and_then(|s| s.rates.iter().max().copied());
        let rate = match spec.workload.target_ops_per_second().or(ladder_top) {
            Some(total) => total as f64 / pods,
            None => workers * WORKER_OPS_PER_SECOND,
        };
        let cores = (rate * client_cpu_us_per_op(spec) / 1e6)
            .ceil()
            .clamp(1.0, MAX_RUNNER_CORES);
        requests.insert("cpu".to_owned(), Quantity(format!("{cores}")));
    }
    if !names(&given.requests, "memory") && !names(&given.limits, "memory") {
        requests.insert("memory".to_owned(), Quantity(RUNNER_MEMORY.to_owned()));
    }
    ResourceRequirements {
        requests: Some(requests),
        ..given
    }
}

/// The client CPU one operation of the spec's workload needs (YCSB: by its share of scans).
fn client_cpu_us_per_op(spec: &MongoBenchmarkSpec) -> f64 {
    match crate::plan::workload_plan(spec) {
        Ok(WorkloadPlan::Ycsb { raw, .. }) => {
            let mut probe = raw;
            probe.set("recordcount", "1000");
            let scans = crate::workload::ycsb::Properties::from_raw(&probe)
                .map_or(0.0, |p| p.proportions.normalised()[3]);
            (1.0 - scans) * YCSB_CPU_US_PER_OP + scans * YCSB_SCAN_CPU_US_PER_OP
        }
        _ => FLIGHTS_CPU_US_PER_OP,
    }
}

/// Seconds the runner of `targets` on `platform` may run in all, retries included (the Job's
/// `activeDeadlineSeconds`), so that a hung runner ends and its cells fail instead of the
/// benchmark waiting for ever: twice an estimate that is generous on purpose, over every cell
/// it may run (up to `precision.maxRepetitions`); under `parallelism: Simultaneous` a slot's
/// cells count once, since they run at the same time. Per target,
/// [`INITIATE_SECONDS`] and seeding each size at [`SEED_FLOOR`] documents per second; per
/// cell, its warm-up (every round of a warm-up until settled) and measured phase (an operation-bounded phase at [`OPS_FLOOR`]
/// operations per second; a load sweep's every possible step, each with
/// [`STEP_OVERHEAD_SECONDS`]) and [`CELL_OVERHEAD_SECONDS`] for restoring, settling and
/// explaining.
pub fn active_deadline_seconds(
    bench: &MongoBenchmark,
    targets: &[&Target],
    platform: &Platform,
) -> Result<u64, Error> {
    let spec = &bench.spec;
    let plan = crate::plan::workload_plan(spec).map_err(SpecError::from)?;
    let settings = crate::plan::run_settings(spec).map_err(SpecError::from)?;
    let phase = |l: RunLength| match l {
        RunLength::Duration(d) => d.as_secs_f64(),
        RunLength::Operations(n) => n as f64 / OPS_FLOOR,
    };
    let measured = match &settings.sweep {
        Some(sweep) => {
            f64::from(sweep.max_steps()) * (sweep.step.as_secs_f64() + STEP_OVERHEAD_SECONDS)
        }
        None => phase(settings.measured),
    };
    // Every round a warm-up until settled may run, each with its restore.
    let rounds = settings.warmup_settle.map_or(1, |s| s.max_rounds);
    let per_cell = f64::from(rounds) * phase(settings.warmup) + measured + CELL_OVERHEAD_SECONDS;
    let mut total = 0.0;
    // Simultaneous cells of a slot take one cell's time together.
    let together = spec.parallelism() == crate::api::Parallelism::Simultaneous;
    for (i, target) in targets.iter().enumerate() {
        // A sharded cluster: its config set and every shard's set are initiated and each
        // shard added, one after another, every step bounded as a replica set's is.
        let sets = if target.is_sharded() && target.is_provisioned() {
            1 + target.shards.clone().unwrap_or_default().count()
        } else {
            1
        };
        total += INITIATE_SECONDS * f64::from(sets);
        let cells = crate::plan::possible_cells_of(spec, &target.name, &platform.name)
            .map_err(SpecError::from)?;
        let mut seeded = std::collections::BTreeSet::new();
        for cell in &cells {
            if seeded.insert(cell.size.clone()) {
                total += crate::plan::documents(&plan, cell.dataset) as f64 / SEED_FLOOR;
            }
            if i == 0 || !together {
                total += per_cell;
            }
        }
    }
    Ok((2.0 * total).ceil() as u64)
}

/// Allowance for initiating a provisioned replica set (the runner waits up to 300 s).
pub const INITIATE_SECONDS: f64 = 300.0;
/// Documents per second seeding is assumed to reach at least.
pub const SEED_FLOOR: f64 = 200.0;
/// Operations per second an operation-bounded phase is assumed to reach at least.
pub const OPS_FLOOR: f64 = 20.0;
/// Allowance per step of a load sweep for settling before it and restoring after it.
pub const STEP_OVERHEAD_SECONDS: f64 = 120.0;
/// Allowance per cell for restoring the data, settling, server figures and explain.
pub const CELL_OVERHEAD_SECONDS: f64 = 300.0;
