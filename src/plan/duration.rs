//! How long a benchmark takes, estimated from its spec before anything runs. A runner works
//! through the targets of one platform one after another: per target, its servers' initiation;
//! per size, its seeding; per cell, its warm-up (every round of a warm-up until settled), its
//! measured phase (a load sweep's every step) and an overhead for restoring, settling and
//! explaining. Two sets of [`Rates`]: the runner Job's deadline takes generous ones on purpose
//! ([`DEADLINE_RATES`]: a hung runner ends, a slow one does not), the estimate `mongobench
//! validate` prints and the ETA in status take typical ones ([`EXPECTED_RATES`]).

use std::collections::BTreeSet;

use crate::api::{MongoBenchmarkSpec, MongosPool, Parallelism, RunLength, Target};

use super::{PlanError, PlannedCell, documents, run_settings, workload_plan};

/// The rates and allowances an estimate assumes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Initiating one replica set (of a target, or of a sharded target's every set).
    pub initiate_seconds: f64,
    /// Documents per second seeding reaches.
    pub seed_documents_per_second: f64,
    /// Operations per second an operation-bounded phase reaches.
    pub operations_per_second: f64,
    /// Per step of a load sweep: settling before it and restoring after it.
    pub step_overhead_seconds: f64,
    /// Per cell: restoring the data, settling, server figures and explain.
    pub cell_overhead_seconds: f64,
    /// Rounds of a warm-up until settled counted, at most (none: every round it allows).
    pub warmup_rounds: Option<u32>,
}

/// The deadline's: floors a runner stays above (the runner waits up to 300 s for a replica
/// set to initiate).
pub const DEADLINE_RATES: Rates = Rates {
    initiate_seconds: 300.0,
    seed_documents_per_second: 200.0,
    operations_per_second: 20.0,
    step_overhead_seconds: 120.0,
    cell_overhead_seconds: 300.0,
    warmup_rounds: None,
};

/// Typical figures: a replica set up in under a minute, a few thousand documents a second
/// seeded, a cell's restore and server figures in half a minute, a warm-up until settled
/// levelling off in its second round.
pub const EXPECTED_RATES: Rates = Rates {
    initiate_seconds: 45.0,
    seed_documents_per_second: 5_000.0,
    operations_per_second: 1_000.0,
    step_overhead_seconds: 15.0,
    cell_overhead_seconds: 30.0,
    warmup_rounds: Some(2),
};

/// Seconds each of `cells` takes (one runner's cells, in the order it runs them): the cell's
/// own phases, plus its target's initiation on the first cell of a target and its size's
/// seeding on the first cell of a size.
///
/// # Errors
/// When the spec's workload or run settings do not plan.
pub fn cell_seconds(
    spec: &MongoBenchmarkSpec,
    cells: &[PlannedCell],
    rates: &Rates,
) -> Result<Vec<f64>, PlanError> {
    let plan = workload_plan(spec)?;
    let per_cell = phases_seconds(spec, rates)?;
    let (mut started, mut seeded) = (BTreeSet::new(), BTreeSet::new());
    Ok(cells
        .iter()
        .map(|cell| {
            let mut seconds = per_cell;
            if started.insert((&cell.target, &cell.platform)) {
                seconds +=
                    rates.initiate_seconds * f64::from(replica_sets(spec.target(&cell.target)));
            }
            if seeded.insert((&cell.target, &cell.platform, &cell.size)) {
                seconds += documents(&plan, cell.dataset) as f64 / rates.seed_documents_per_second;
            }
            seconds
        })
        .collect())
}

/// Seconds one cell's own phases take: its warm-up (every round of a warm-up until settled
/// that `rates` counts), its measured phase (a load sweep's every step) and the cell overhead.
///
/// # Errors
/// When the spec's run settings do not plan.
pub fn phases_seconds(spec: &MongoBenchmarkSpec, rates: &Rates) -> Result<f64, PlanError> {
    let settings = run_settings(spec)?;
    let phase = |l: RunLength| match l {
        RunLength::Duration(d) => d.as_secs_f64(),
        RunLength::Operations(n) => n as f64 / rates.operations_per_second,
    };
    let measured = match &settings.sweep {
        Some(sweep) => {
            f64::from(sweep.max_steps()) * (sweep.step.as_secs_f64() + rates.step_overhead_seconds)
        }
        None => phase(settings.measured),
    };
    let rounds = settings.warmup_settle.map_or(1, |s| {
        rates
            .warmup_rounds
            .map_or(s.max_rounds, |r| r.min(s.max_rounds))
    });
    Ok(f64::from(rounds) * phase(settings.warmup) + measured + rates.cell_overhead_seconds)
}

/// The replica sets a target's runner initiates one after another: a provisioned sharded
/// target's config set and every shard's set, else one.
fn replica_sets(target: Option<&Target>) -> u32 {
    match target {
        Some(t) if t.is_sharded() && t.is_provisioned() => {
            1 + t.shards.clone().unwrap_or_default().count()
        }
        _ => 1,
    }
}

/// The nodes a target's servers take: its members (a sharded target's shards, config
/// servers and routers on the target's pool); none for an external target.
pub fn server_nodes(spec: &MongoBenchmarkSpec, target: &Target) -> u32 {
    if !target.is_provisioned() {
        return 0;
    }
    if !target.is_sharded() {
        return spec.replica_set().members();
    }
    let shards = target.shards.clone().unwrap_or_default();
    let config = target.config_servers.clone().unwrap_or_default();
    let mongos = target.mongos.clone().unwrap_or_default();
    let routers = match mongos.pool() {
        MongosPool::Target => mongos.replicas(),
        MongosPool::Client => 0,
    };
    shards.count() * shards.members() + config.members() + routers
}

/// What a whole benchmark is expected to take.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkEstimate {
    /// Cells planned (every target × platform × size × repetition).
    pub cells: usize,
    /// From the first runner's start to the last runner's end: platforms side by side under
    /// `parallelism: PerPlatform` and `Simultaneous` (whose targets also run at the same
    /// time), one after another under `Sequential`.
    pub wall_seconds: f64,
    /// Server node-hours: each target's nodes while its cells run.
    pub server_node_hours: f64,
    /// Client pod-hours: the runner's pods while they run.
    pub client_pod_hours: f64,
    /// The server node-hours at the platforms' `pricePerNodeHour`, when every platform with
    /// provisioned servers names one.
    pub cost: Option<f64>,
}

impl BenchmarkEstimate {
    /// One sentence: `24 cells in about 21m34s (2 platforms side by side), 1.1 server
    /// node-hours, 0.7 client pod-hours, cost 0.40 at the platforms' pricePerNodeHour` (no
    /// server node-hours when every target is external).
    pub fn summary(&self, spec: &MongoBenchmarkSpec) -> String {
        let platforms = spec.platforms.len();
        let mut how = match (platforms, spec.parallelism()) {
            (1, _) => "1 platform".to_owned(),
            (n, Parallelism::Sequential) => format!("{n} platforms one after another"),
            (n, _) => format!("{n} platforms side by side"),
        };
        if spec.parallelism() == Parallelism::Simultaneous {
            how.push_str(", targets at the same time");
        }
        let cost = self
            .cost
            .map(|c| format!(", cost {c:.2} at the platforms' pricePerNodeHour"))
            .unwrap_or_default();
        // External targets take no nodes of the benchmark's.
        let servers = if self.server_node_hours > 0.0 {
            format!("{:.1} server node-hours, ", self.server_node_hours)
        } else {
            String::new()
        };
        format!(
            "{} cells in about {} ({how}), {servers}{:.1} client pod-hours{cost}",
            self.cells,
            duration_text(self.wall_seconds),
            self.client_pod_hours,
        )
    }
}

/// The estimate of `spec` at `rates`.
///
/// # Errors
/// When the spec's sizes, workload or run settings do not plan.
pub fn estimate(spec: &MongoBenchmarkSpec, rates: &Rates) -> Result<BenchmarkEstimate, PlanError> {
    let mut per_platform = Vec::new();
    let (mut cells, mut node_hours, mut pod_hours) = (0, 0.0, 0.0);
    let mut cost = Some(0.0);
    for platform in &spec.platforms {
        // Simultaneous targets take the longest one's time, the others the sum of theirs.
        let mut platform_seconds: f64 = 0.0;
        for target in &spec.targets {
            let planned = super::cells_of(spec, &target.name, &platform.name)?;
            let seconds: f64 = cell_seconds(spec, &planned, rates)?.iter().sum();
            cells += planned.len();
            platform_seconds = match spec.parallelism() {
                Parallelism::Simultaneous => platform_seconds.max(seconds),
                _ => platform_seconds + seconds,
            };
            let nodes = f64::from(server_nodes(spec, target)) * seconds / 3600.0;
            node_hours += nodes;
            pod_hours += f64::from(spec.client_pods()) * seconds / 3600.0;
            cost = match (cost, platform.price_per_node_hour) {
                (Some(c), Some(price)) => Some(c + nodes * price),
                (c, None) if nodes == 0.0 => c,
                _ => None,
            };
        }
        per_platform.push(platform_seconds);
    }
    let wall_seconds = match spec.parallelism() {
        Parallelism::Sequential => per_platform.iter().sum(),
        Parallelism::PerPlatform | Parallelism::Simultaneous => {
            per_platform.iter().copied().fold(0.0, f64::max)
        }
    };
    Ok(BenchmarkEstimate {
        cells,
        wall_seconds,
        server_node_hours: node_hours,
        client_pod_hours: pod_hours,
        cost: cost.filter(|_| {
            spec.platforms
                .iter()
                .any(|p| p.price_per_node_hour.is_some())
        }),
    })
}

/// `1h02m`, `4m10s` or `12s`.
pub fn duration_text(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests;
