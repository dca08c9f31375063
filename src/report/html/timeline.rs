//! Latency over the measured phase, per target: each second's mean latency, from the
//! per-second completions every result carries. In a closed loop each worker has exactly one
//! operation outstanding, so by Little's law a second's mean latency is the workers divided
//! by the operations completed in it; an open loop's completions say nothing of latency.

use crate::report::ReportError;
use crate::report::groups::Group;
use crate::report::plots::{self, Curve};
use crate::result::{CellResult, LoopMode};

use super::figures::{figure, repetition_label};
use super::markup::{note, section};

/// Each whole second's mean latency of a closed-loop cell, µs, at the second's middle;
/// `None` for an open or throttled loop, a load sweep (its workers change by step) or a cell without the
/// workers it ran.
pub(super) fn latency_by_second(c: &CellResult) -> Option<Vec<(f64, f64)>> {
    let m = c.measured.as_ref()?;
    if m.loop_mode != LoopMode::Closed || m.target_ops_per_sec.is_some() || c.sweep.is_some() {
        return None;
    }
    let workers: f64 = c.identity.parameters.get("workers")?.parse().ok()?;
    let whole = usize::try_from(m.duration_us / 1_000_000).unwrap_or(usize::MAX);
    let points: Vec<(f64, f64)> = m
        .overall
        .per_second
        .iter()
        .take(whole)
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(s, &n)| (s as f64 + 0.5, workers * 1e6 / n as f64))
        .collect();
    (!points.is_empty()).then_some(points)
}

/// The section: one plot per target and group, one line per repetition; one line saying why
/// when no cell ran a closed loop.
pub(super) fn latency_over_time(groups: &[Group<'_>]) -> Result<String, ReportError> {
    let mut out = note(
        "Mean latency in each whole second of the measured phase, from the operations completed \
         in it: with a closed loop each worker has one operation outstanding, so the mean \
         latency is the workers divided by the completions (Little's law). It includes the \
         client's own time per operation; the percentile curves below come from the \
         histograms.",
    );
    let mut drawn = 0;
    for g in groups {
        for t in &g.targets {
            let curves: Vec<Curve> = t
                .cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    Some(Curve {
                        label: repetition_label(c),
                        points: latency_by_second(c)?,
                        color: i,
                    })
                })
                .collect();
            if curves.is_empty() {
                continue;
            }
            let title = format!("{}: {}", g.title(), t.target);
            let plot = plots::latency_over_time(&title, &curves)?;
            out.push_str(&figure("latency-time", &title, &plot));
            drawn += 1;
        }
    }
    if drawn == 0 {
        return Ok(section(
            "latency-time",
            "Latency over time",
            &note(
                "No cell ran a closed loop of fixed workers, so no second's latency can be told from its completions.",
            ),
        ));
    }
    Ok(section("latency-time", "Latency over time", &out))
}
