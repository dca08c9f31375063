//! What every report says before its figures: what each target is, as its results say
//! (server version, topology, platform, the machines; without a comparison, whose own
//! description of its servers comes first), which cells the noise canaries flagged, and the
//! warnings about the run as a whole.

use super::settle;
use crate::result::CellResult;

/// One target and the facts the results give about it, in the order they are shown.
pub(super) struct TargetFacts {
    /// The target's name.
    pub target: String,
    /// What the results say it is, in the order shown.
    pub facts: Vec<String>,
}

/// What each target is, as its results say: server version, topology, platform, and the
/// machines its members ran on. The one place the summary learns about targets.
pub(super) fn target_facts(results: &[CellResult]) -> Vec<TargetFacts> {
    let mut out: Vec<TargetFacts> = Vec::new();
    for r in results {
        let facts = cell_facts(r);
        match out.iter_mut().find(|t| t.target == r.cell.target) {
            Some(t) => {
                for f in facts {
                    if !t.facts.contains(&f) {
                        t.facts.push(f);
                    }
                }
            }
            None => out.push(TargetFacts {
                target: r.cell.target.clone(),
                facts,
            }),
        }
    }
    out
}

/// The facts of one cell: `version 7.0.2`, `topology replicaSet`, `platform n2`, and per
/// distinct machine its type, architecture, cores, memory and CPU model.
fn cell_facts(r: &CellResult) -> Vec<String> {
    let s = &r.server;
    let mut facts: Vec<String> = [
        s.version.as_ref().map(|v| format!("version {v}")),
        s.topology.as_ref().map(|t| format!("topology {t}")),
        Some(format!("platform {}", r.cell.platform)),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Identical machines once, counted: `3 × n2-standard-4, x86_64, 4 cores`.
    let mut machines: Vec<(String, usize)> = Vec::new();
    for n in &r.nodes {
        let h = &n.host;
        let parts: Vec<String> = [
            n.instance_type.clone(),
            h.cpu_arch.clone().or_else(|| n.architecture.clone()),
            h.num_cores.map(|c| format!("{c} cores")),
            h.mem_size_mb
                .map(|m| format!("{} GiB", (m as f64 / 1024.0).round())),
            h.cpu_model.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            continue;
        }
        let machine = parts.join(", ");
        match machines.iter_mut().find(|(m, _)| *m == machine) {
            Some((_, count)) => *count += 1,
            None => machines.push((machine, 1)),
        }
    }
    facts.extend(machines.into_iter().map(|(m, count)| match count {
        1 => m,
        n => format!("{n} × {m}"),
    }));
    facts
}

/// Whether a noise canary of the cell (the client's before or during it, or a server
/// node's) deviated past the run's threshold.
pub(super) fn flagged_by_canary(r: &CellResult) -> bool {
    r.canary.as_ref().is_some_and(|c| c.deviation.is_some())
        || r.phase_canary
            .as_ref()
            .is_some_and(|c| c.deviation.is_some())
        || r.server_canaries.iter().any(|s| s.deviation.is_some())
}

/// Warnings about the run as a whole: cells left out, canaries that flagged cells, warm-ups
/// that had not settled.
pub(super) fn warnings(results: &[CellResult]) -> Vec<String> {
    let mut out = Vec::new();
    let n = results.len();
    let left_out = results.iter().filter(|r| !r.is_valid()).count();
    if left_out > 0 {
        out.push(format!(
            "{left_out} of {n} cells were left out of every statistic as invalid or incomplete."
        ));
    }
    let canaried = results.iter().filter(|r| flagged_by_canary(r)).count();
    if canaried > 0 {
        out.push(format!(
            "{canaried} of {n} cells were flagged by the noise canaries: the machine was \
             slower or faster than usual while they ran; they are kept unless the run's \
             canaryPolicy voided them."
        ));
    }
    let unsettled = results
        .iter()
        .filter(|r| settle::unsettled(r).is_some())
        .count();
    if unsettled > 0 {
        out.push(format!(
            "{unsettled} of {n} cells had a warm-up that had not levelled off: its drift \
             carried on into the measured phase."
        ));
    }
    out
}
