//! Comparisons of cells measured at the same time (`parallelism: Simultaneous`; docs/results.md,
//! "Simultaneous slots"): each slot's estimate is the ratio of the targets' throughput over the
//! seconds their measured windows share; where the targets traded sides, a two-period crossover
//! model estimates the side's effect and removes it; and diagnostics say whether the slot's
//! disturbance was in fact shared (the correlation of the per-second series), whether the ratio
//! drifted within the window, and how much time the machines had stolen.

use serde::{Deserialize, Serialize};

use super::stats::{Delta, StatsError, crossover};
use crate::result::CellResult;

/// Below this median correlation of the targets' per-second series, a slot's disturbance was
/// not shared between them, and simultaneity cancelled little of it.
pub const LOW_CORRELATION: f64 = 0.3;

/// Below this many slots on traded sides, the crossover model keeps so few degrees of freedom
/// (slots − 2) that a target disturbed in just the slots it spent on one side is fitted exactly
/// as a target effect plus a side effect, with a narrow interval (docs/results.md, "How many
/// slots with traded sides").
pub const FEW_CROSSOVER_SLOTS: usize = 6;

/// What a simultaneous comparison of two targets says beside its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SimultaneousDiagnostics {
    /// Slots in which both targets were measured at the same time.
    pub slots: usize,
    /// Median over the slots of the Pearson correlation of the two per-second throughput
    /// series over their common seconds: near 1, what disturbed one disturbed the other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<f64>,
    /// Mean over the slots of how much the per-second ratio candidate ÷ baseline moved from
    /// the first to the last second of the window (its least-squares trend), in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_trend_percent: Option<f64>,
    /// Where the targets traded sides: how much faster the first side (CPU set) made the
    /// target on it than the second did, in percent, as the crossover model estimates it (and
    /// removes it from the throughput difference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effect_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Its 95 % interval.
    pub side_effect_ci95_percent: Option<(f64, f64)>,
    /// What the reader should know: no crossover (and why), a low correlation, too few slots
    /// on traded sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One slot's cells of the two targets, measured at the same time.
struct SlotPair<'r> {
    baseline: &'r CellResult,
    candidate: &'r CellResult,
}

impl SlotPair<'_> {
    /// The seconds both measured windows hold in full.
    fn common(&self) -> Option<(&[u64], &[u64])> {
        let b = &self.baseline.measured.as_ref()?.overall.per_second;
        let c = &self.candidate.measured.as_ref()?.overall.per_second;
        let seconds = full_seconds(self.baseline)
            .min(full_seconds(self.candidate))
            .min(b.len())
            .min(c.len());
        (seconds > 0).then(|| (&b[..seconds], &c[..seconds]))
    }

    /// (baseline, candidate) ops/s over the common seconds.
    fn rates(&self) -> Option<(f64, f64)> {
        let (b, c) = self.common()?;
        let n = b.len() as f64;
        let rate = |s: &[u64]| s.iter().sum::<u64>() as f64 / n;
        Some((rate(b), rate(c))).filter(|&(b, c)| b > 0.0 && c > 0.0)
    }

    /// Whether the candidate ran on the first side, where the targets traded sides.
    fn candidate_first(&self) -> Option<bool> {
        let side = |c: &CellResult| c.simultaneous.as_ref()?.side;
        Some(side(self.candidate)? < side(self.baseline)?)
    }
}

/// Whole seconds of a cell's measured window.
fn full_seconds(c: &CellResult) -> usize {
    c.measured
        .as_ref()
        .map_or(0, |m| m.duration().as_secs() as usize)
}

/// Valid cells of the two targets measured in the same simultaneous slot, in slot order.
fn slot_pairs<'r>(baseline: &[&'r CellResult], candidate: &[&'r CellResult]) -> Vec<SlotPair<'r>> {
    let key = |c: &CellResult| {
        let slot = c.slot?;
        c.simultaneous.as_ref()?;
        let id = &c.cell;
        Some((
            id.run_id.clone(),
            id.workload.clone(),
            id.platform.clone(),
            id.size.clone(),
            slot.number,
        ))
    };
    let mut out: Vec<_> = candidate
        .iter()
        .filter(|c| c.is_valid())
        .filter_map(|&c| {
            let k = key(c)?;
            let b = baseline
                .iter()
                .find(|b| b.is_valid() && key(b).as_ref() == Some(&k))?;
            Some((
                k,
                SlotPair {
                    baseline: b,
                    candidate: c,
                },
            ))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, p)| p).collect()
}

/// The (baseline, candidate) ops/s over each simultaneous slot's common seconds, in slot
/// order: what the throughput verdict compares, and so what a precision goal's stopping rule
/// must judge; `None` when fewer than two slots were simultaneous.
pub fn window_rates(
    baseline: &[&CellResult],
    candidate: &[&CellResult],
) -> Option<Vec<(f64, f64)>> {
    let rates: Vec<(f64, f64)> = slot_pairs(baseline, candidate)
        .iter()
        .filter_map(SlotPair::rates)
        .collect();
    (rates.len() >= 2).then_some(rates)
}

/// The throughput comparison of cells measured at the same time, with its diagnostics; `None`
/// when fewer than two slots were simultaneous (the caller compares as for cells in turn).
/// Under a precision goal, its `pilot` slots give the spread (Stein's two-stage test).
pub fn compare_throughput(
    baseline: &[&CellResult],
    candidate: &[&CellResult],
    pilot: Option<usize>,
) -> Option<(Result<Delta, StatsError>, SimultaneousDiagnostics)> {
    let pairs = slot_pairs(baseline, candidate);
    let rated: Vec<(&SlotPair<'_>, (f64, f64))> =
        pairs.iter().filter_map(|p| Some((p, p.rates()?))).collect();
    if rated.len() < 2 {
        return None;
    }
    let rates: Vec<(f64, f64)> = rated.iter().map(|(_, r)| *r).collect();
    let sides: Option<Vec<bool>> = rated.iter().map(|(p, _)| p.candidate_first()).collect();
    let mut diagnostics = SimultaneousDiagnostics {
        slots: rated.len(),
        correlation: median(
            rated
                .iter()
                .filter_map(|(p, _)| correlation(p.common()?))
                .collect(),
        ),
        ratio_trend_percent: mean(
            &rated
                .iter()
                .filter_map(|(p, _)| ratio_trend(p.common()?))
                .collect::<Vec<_>>(),
        ),
        side_effect_percent: None,
        side_effect_ci95_percent: None,
        notes: Vec::new(),
    };
    if diagnostics.correlation.is_some_and(|r| r < LOW_CORRELATION) {
        diagnostics.notes.push(format!(
            "the per-second series correlate little (median r {:.2}): what disturbed one target \
             did not disturb the other, and measuring them at the same time cancelled little",
            diagnostics.correlation.unwrap_or_default()
        ));
    }
    let delta = match sides.filter(|s| s.contains(&true) && s.contains(&false)) {
        Some(sides) => crossover(&rates, &sides, pilot).map(|(delta, side)| {
            if rates.len() < FEW_CROSSOVER_SLOTS {
                diagnostics.notes.push(format!(
                    "{} slots on traded sides leave the crossover model {} degrees of freedom: a \
                     target disturbed in just the slots it spent on one side passes for a side \
                     effect, with a narrow interval; plan {FEW_CROSSOVER_SLOTS} to 8 slots",
                    rates.len(),
                    rates.len().saturating_sub(2)
                ));
            }
            diagnostics.side_effect_percent = Some(side.percent);
            diagnostics.side_effect_ci95_percent = side.ci95_percent;
            delta
        }),
        None => {
            diagnostics.notes.push(
                "the targets kept their places (different nodes, or no --cpu-sets): no \
                 crossover, so a difference of places is not told apart from one of targets"
                    .to_owned(),
            );
            Delta::paired(&rates, pilot)
        }
    };
    Some((delta, diagnostics))
}

/// Pearson's correlation of two equally long series; `None` for fewer than three points or a
/// constant series.
fn correlation((a, b): (&[u64], &[u64])) -> Option<f64> {
    let n = a.len();
    if n < 3 {
        return None;
    }
    let (ma, mb) = (
        a.iter().sum::<u64>() as f64 / n as f64,
        b.iter().sum::<u64>() as f64 / n as f64,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (x as f64 - ma, y as f64 - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// How far the least-squares line of ln(candidate ÷ baseline) over the window's seconds moves
/// from its first second to its last, as a percentage; seconds where either did nothing are
/// left out.
fn ratio_trend((a, b): (&[u64], &[u64])) -> Option<f64> {
    let points: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .enumerate()
        .filter(|(_, (x, y))| **x > 0 && **y > 0)
        .map(|(t, (&x, &y))| (t as f64, (y as f64 / x as f64).ln()))
        .collect();
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let mt = points.iter().map(|p| p.0).sum::<f64>() / n;
    let md = points.iter().map(|p| p.1).sum::<f64>() / n;
    let stt: f64 = points.iter().map(|p| (p.0 - mt) * (p.0 - mt)).sum();
    let std: f64 = points.iter().map(|p| (p.0 - mt) * (p.1 - md)).sum();
    let span = points.last().map_or(0.0, |p| p.0) - points[0].0;
    Some(((std / stt * span).exp() - 1.0) * 100.0)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests;
