//! A comparison as text: one fixed-width table per group with the notes under it, and the
//! headline last.

use super::layout::fixed_width;
use crate::verdict::simultaneous::SimultaneousDiagnostics;
use crate::verdict::stats::Delta;
use crate::verdict::{Comparison, headline};

const HEADERS: [&str; 15] = [
    "TARGET",
    "REPS",
    "OPS/S",
    "±95% CI",
    "CV",
    "ERRORS",
    "Δ OPS/S",
    "Δ OPS/S 95% CI",
    "P (HOLM)",
    "MDE",
    "PAIRED CV",
    "P99 µs",
    "Δ P99",
    "CPU µs/OP",
    "VERDICT",
];
const RIGHT: [bool; 15] = [
    false, true, true, true, true, true, true, false, true, true, true, true, true, true, false,
];

/// A p-value as the reports show it: three decimals, `<0.001` below that.
pub(super) fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// A fraction (a CV) as a percentage with two decimals.
fn fraction(f: Option<f64>) -> String {
    f.map_or("-".into(), |f| format!("{:.2}%", f * 100.0))
}

fn percent(d: Option<Delta>) -> String {
    d.map_or("-".into(), |d| format!("{:+.1}%", d.percent))
}

/// The comparison as text: one titled table per group, notes (left-out cells, reasons, cost)
/// under it, a blank line between groups, and the headline last.
pub fn render_comparison(comparison: &Comparison) -> String {
    let mut out = String::new();
    for (i, group) in comparison.groups.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "{}, platform {}, size {}: baseline {}\n",
            group.workload, group.platform, group.size, comparison.baseline
        ));
        let rows: Vec<Vec<String>> = group
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.target.clone(),
                    r.repetitions.to_string(),
                    r.ops_per_sec
                        .map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    r.ops_per_sec
                        .and_then(|s| s.ci95_half_width)
                        .map_or("-".into(), |h| format!("{h:.1}")),
                    fraction(r.ops_per_sec.and_then(|s| s.cv)),
                    r.error_rate
                        .map_or("-".into(), |e| format!("{:.2}%", e * 100.0)),
                    percent(r.throughput_delta),
                    r.throughput_delta
                        .and_then(|d| d.ci95_percent)
                        .map_or("-".into(), |(lo, hi)| format!("[{lo:+.1}%, {hi:+.1}%]")),
                    r.adjusted_p_value.map_or("-".into(), p_value),
                    r.throughput_delta
                        .and_then(|d| d.mde_percent)
                        .map_or("-".into(), |m| format!("{m:.1}%")),
                    fraction(r.throughput_delta.and_then(|d| d.ratio_cv)),
                    r.p99_us.map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    percent(r.p99_delta),
                    r.cpu_us_per_op
                        .map_or("-".into(), |s| format!("{:.1}", s.mean)),
                    r.verdict.text().to_string(),
                ]
            })
            .collect();
        out.push_str(&fixed_width(&HEADERS, &RIGHT, &rows));
        for r in &group.rows {
            if let Some(reason) = &r.reason {
                out.push_str(&format!("  {}: {}\n", r.target, reason));
            }
            match (&r.simultaneous, r.throughput_delta.and_then(|d| d.pairs)) {
                (Some(s), _) => out.push_str(&simultaneous_lines(&r.target, s)),
                (None, Some(n)) => out.push_str(&format!(
                    "  {}: paired with the baseline by slot over {n} slots\n",
                    r.target
                )),
                (None, None) => {}
            }
            for why in &r.excluded {
                out.push_str(&format!("  {} left out, {why}\n", r.target));
            }
            if let Some(cost) = r.cost_per_million_ops {
                out.push_str(&format!(
                    "  {}: {cost:.4} per million operations\n",
                    r.target
                ));
            }
        }
    }
    if let Some(line) = headline(comparison) {
        out.push_str(&format!("\n{line}\n"));
    }
    out
}

/// What a simultaneous comparison says beside its figures: how it was measured, how far the
/// targets' disturbances were shared, the side's effect it removed, and its notes.
pub fn simultaneous_lines(target: &str, s: &SimultaneousDiagnostics) -> String {
    let mut parts = vec![format!(
        "measured at the same time as the baseline in {} slots, each over their common seconds",
        s.slots
    )];
    if let Some(r) = s.correlation {
        parts.push(format!("per-second series correlation r {r:.2}"));
    }
    if let Some(t) = s.ratio_trend_percent {
        parts.push(format!("ratio moved {t:+.1}% across the window"));
    }
    if let Some(side) = s.side_effect_percent {
        let interval = s
            .side_effect_ci95_percent
            .map(|(lo, hi)| format!(" [{lo:+.1}%, {hi:+.1}%]"))
            .unwrap_or_default();
        parts.push(format!(
            "the first side's effect {side:+.1}%{interval}, removed by the crossover"
        ));
    }
    let mut out = format!("  {target}: {}\n", parts.join("; "));
    for note in &s.notes {
        out.push_str(&format!("  {target}: {note}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::compare;
    use crate::verdict::testing::{options, study};

    #[test]
    fn comparison_text_is_exact() {
        let c = compare(&study(), &options()).unwrap();
        // ±95 % CI of the means: t₀.₉₇₅(2) · 20 / √3 = 49.68… for both targets.
        let expected = "\
flights/v1, platform n2, size 1M: baseline psmdb-8.0
TARGET     REPS   OPS/S  ±95% CI     CV  ERRORS  Δ OPS/S  Δ OPS/S 95% CI   P (HOLM)   MDE  PAIRED CV  P99 µs   Δ P99  CPU µs/OP  VERDICT
psmdb-8.0     3  1000.0     49.7  2.00%   0.00%        -  -                       -     -          -   200.0       -       50.0  baseline
mongo-9.0     3  1100.0     49.7  1.82%   0.00%   +10.0%  [+5.3%, +14.9%]     0.004  6.1%          -   180.0  -10.0%       45.0  faster
  psmdb-8.0: 0.4167 per million operations
  mongo-9.0: 0.3788 per million operations

mongo-9.0 +10.0% ±4.9% ops/s vs psmdb-8.0 at 1M, 3 reps, MDE 6.1%
";
        assert_eq!(render_comparison(&c), expected);
    }
}
