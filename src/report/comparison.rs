//! A comparison as text: one fixed-width table per group with the notes under it, and the
//! headline last.

use super::layout::fixed_width;
use crate::verdict::simultaneous::SimultaneousDiagnostics;
use crate::verdict::stats::Delta;
use crate::verdict::{Comparison, ComparisonRow, MetricVerdict, headline, method_lines};

const HEADERS: [&str; 17] = [
    "TARGET",
    "REPS",
    "OPS/S",
    "±95% CI",
    "CV",
    "ERRORS",
    "Δ OPS/S",
    "Δ CI",
    "LEVEL",
    "P (HOLM)",
    "MDE",
    "CAUTIOUS MDE",
    "PAIRED CV",
    "P99 µs",
    "Δ P99",
    "CPU µs/OP",
    "VERDICT",
];
const RIGHT: [bool; 17] = [
    false, true, true, true, true, true, true, false, true, true, true, true, true, true, true,
    true, false,
];

/// A p-value as the reports show it: three decimals, `<0.001` below that.
pub(super) fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// An interval of a change as every report writes it: `[+5.3%, +14.9%]`.
pub(super) fn interval(v: &MetricVerdict) -> Option<String> {
    v.interval_percent
        .map(|(lo, hi)| format!("[{lo:+.1}%, {hi:+.1}%]"))
}

/// An interval's confidence: `95%`, `97.5%`.
pub(super) fn level(v: &MetricVerdict) -> Option<String> {
    v.interval_confidence.map(|c| {
        let text = format!("{:.2}", c * 100.0);
        format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
    })
}

/// A declared metric's finding in one line: `CPU per operation −10.0% [−18.3%, −1.0%] (95%),
/// p (Holm) 0.040, MDE 8.1% (cautious 14.0%): cheaper`.
pub(super) fn metric_line(v: &MetricVerdict) -> String {
    let mut out = v.metric.label().to_owned();
    if let Some(d) = v.delta {
        out.push_str(&format!(" {:+.1}%", d.percent));
    }
    if let (Some(i), Some(l)) = (interval(v), level(v)) {
        out.push_str(&format!(" {i} ({l})"));
    }
    if let Some(p) = v.adjusted_p_value {
        out.push_str(&format!(", p (Holm) {}", p_value(p)));
    }
    if let Some(m) = v.mde_percent {
        out.push_str(&format!(", MDE {m:.1}%"));
        if let Some(u) = v.mde_upper_percent {
            out.push_str(&format!(" (cautious {u:.1}%)"));
        }
    }
    out.push_str(&format!(": {}", v.verdict.text()));
    if let Some(reason) = &v.reason {
        out.push_str(&format!(" ({reason})"));
    }
    out
}

/// A fraction (a CV) as a percentage with two decimals.
fn fraction(f: Option<f64>) -> String {
    f.map_or("-".into(), |f| format!("{:.2}%", f * 100.0))
}

fn percent(d: Option<Delta>) -> String {
    d.map_or("-".into(), |d| format!("{:+.1}%", d.percent))
}

fn cells(r: &ComparisonRow) -> Vec<String> {
    let first = r.verdicts.first();
    let of = |f: fn(&MetricVerdict) -> Option<String>| first.and_then(f).unwrap_or("-".into());
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
        // The first declared metric's change, beside its interval and test.
        percent(first.and_then(|v| v.delta).or(r.throughput_delta)),
        of(interval),
        of(level),
        of(|v| v.adjusted_p_value.map(p_value)),
        of(|v| v.mde_percent.map(|m| format!("{m:.1}%"))),
        of(|v| v.mde_upper_percent.map(|m| format!("{m:.1}%"))),
        fraction(r.throughput_delta.and_then(|d| d.ratio_cv)),
        r.p99_us.map_or("-".into(), |s| format!("{:.1}", s.mean)),
        percent(r.p99_delta),
        r.cpu_us_per_op
            .map_or("-".into(), |s| format!("{:.1}", s.mean)),
        r.verdict.text().to_string(),
    ]
}

/// The comparison as text: one titled table per group (its verdict columns of the first
/// declared metric), notes (the other declared metrics, left-out cells, reasons, cost) under
/// it, a blank line between groups, then how the verdicts were reached and the headline.
pub fn render_comparison(comparison: &Comparison) -> String {
    let mut out = String::new();
    let metrics: Vec<&str> = comparison.metrics.iter().map(|m| m.name()).collect();
    for (i, group) in comparison.groups.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "{}, platform {}, size {}: baseline {}, verdicts on {}\n",
            group.workload,
            group.platform,
            group.size,
            comparison.baseline,
            metrics.join(", ")
        ));
        let rows: Vec<Vec<String>> = group.rows.iter().map(cells).collect();
        let delta = format!(
            "Δ {}",
            comparison
                .metrics
                .first()
                .map_or("ops/s", |m| m.label())
                .to_uppercase()
        );
        let mut headers = HEADERS;
        headers[6] = &delta;
        out.push_str(&fixed_width(&headers, &RIGHT, &rows));
        for r in &group.rows {
            out.push_str(&format!("  {}: {}\n", r.target, r.server.describe()));
            for warning in r.warnings(&comparison.baseline) {
                out.push_str(&format!("  !! {}: {warning}\n", r.target));
            }
            if let Some(reason) = &r.reason {
                out.push_str(&format!("  {}: {}\n", r.target, reason));
            }
            for v in r.verdicts.iter().skip(1) {
                out.push_str(&format!("  {}: {}\n", r.target, metric_line(v)));
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
    if comparison.family > 0 {
        out.push('\n');
        for line in method_lines(comparison) {
            out.push_str(&format!("{line}\n"));
        }
    }
    if let Some(line) = headline(comparison) {
        out.push_str(&format!("\n{line}\n"));
    }
    out
}

/// Each target with what its servers said they are, once per distinct description (a target
/// on two platforms may be two), in the order they first appear.
pub fn targets_described(c: &Comparison) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in c.groups.iter().flat_map(|g| &g.rows) {
        let entry = (r.target.clone(), r.server.describe());
        if !out.contains(&entry) {
            out.push(entry);
        }
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
flights/v1, platform n2, size 1M: baseline psmdb-8.0, verdicts on throughput
TARGET     REPS   OPS/S  ±95% CI     CV  ERRORS  Δ OPS/S  Δ CI             LEVEL  P (HOLM)   MDE  CAUTIOUS MDE  PAIRED CV  P99 µs   Δ P99  CPU µs/OP  VERDICT
psmdb-8.0     3  1000.0     49.7  2.00%   0.00%        -  -                    -         -     -             -          -   200.0       -       50.0  baseline
mongo-9.0     3  1100.0     49.7  1.82%   0.00%   +10.0%  [+5.3%, +14.9%]    95%     0.004  6.1%          9.5%          -   180.0  -10.0%       45.0  faster
  psmdb-8.0: Percona Server for MongoDB 8.0.12-4, replica set, 4 CPUs, x86-64
  psmdb-8.0: 0.4167 per million operations
  mongo-9.0: MongoDB 9.0.1, replica set, 4 CPUs, x86-64
  mongo-9.0: 0.3788 per million operations

Verdict metrics (declared before the run): throughput; the other figures are descriptive.
Test: Welch's t-test of independent groups with Fieller's interval.
Holm–Bonferroni over the 1 test of the comparison, significant below 5%; a verdict needs 3 valid repetitions on each side (paired: 3 slots holding both).
Intervals: Holm-adjusted, each at the level Holm's step-down judged its test at (95% for a single test), so an interval excludes 0 exactly when its verdict is a difference.
MDE: the difference these repetitions would find with 80% power at level 5% ÷ 1, from the spread measured; the cautious MDE takes the spread at its upper 80% confidence bound.

mongo-9.0 (MongoDB 9.0.1) +10.0% [+5.3%, +14.9%] ops/s vs psmdb-8.0 (Percona Server for MongoDB 8.0.12-4) at 1M, 3 reps, MDE 6.1%
";
        assert_eq!(render_comparison(&c), expected);
    }

    #[test]
    fn the_change_column_is_the_first_declared_metric_s() {
        let options = crate::verdict::CompareOptions {
            metrics: vec![
                crate::api::VerdictMetric::CpuPerOperation,
                crate::api::VerdictMetric::Throughput,
            ],
            ..options()
        };
        let text = render_comparison(&compare(&study(), &options).unwrap());
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("  Δ CPU PER OPERATION  Δ CI "),
            "{}",
            lines[1]
        );
        // 45 µs against 50 µs per operation, beside its interval.
        assert!(
            lines[3].contains("  -10.0%  [-18.3%, -1.0%]"),
            "{}",
            lines[3]
        );
    }
}
