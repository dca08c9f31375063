//! The headline, the comparison with the baseline per group, and the cost per million
//! operations.

use super::markup::{escape, note, or_dash, section, table};
use crate::report::comparison::{interval, level, metric_line, p_value};
use crate::verdict::{CompareError, Comparison, method_lines};

const HEADERS: [&str; 14] = [
    "target",
    "valid reps",
    "ops/s",
    "±95% CI",
    "errors",
    "Δ ops/s",
    "Δ interval",
    "level",
    "p (Holm)",
    "MDE",
    "cautious MDE",
    "p99 µs",
    "CPU µs/op",
    "verdict",
];
const NUMERIC: [&str; 11] = [
    "valid reps",
    "ops/s",
    "±95% CI",
    "errors",
    "Δ ops/s",
    "level",
    "p (Holm)",
    "MDE",
    "cautious MDE",
    "p99 µs",
    "CPU µs/op",
];

/// The verdict tables (the headline is the summary's), or why there is no comparison.
pub(super) fn verdict_tables(comparison: &Result<Comparison, CompareError>) -> String {
    let c = match comparison {
        Ok(c) => c,
        Err(e) => {
            return section(
                "verdicts",
                "Verdicts",
                &note(&format!("No comparison: {e}")),
            );
        }
    };
    let mut out = String::new();
    let metrics: Vec<&str> = c.metrics.iter().map(|m| m.name()).collect();
    for g in &c.groups {
        out.push_str(&format!(
            "<h3>{}, platform {}, size {}: baseline {}, verdicts on {}</h3>\n",
            escape(&g.workload),
            escape(&g.platform),
            escape(&g.size),
            escape(&c.baseline),
            escape(&metrics.join(", "))
        ));
        let rows: Vec<Vec<String>> = g
            .rows
            .iter()
            .map(|r| {
                let first = r.verdicts.first();
                vec![
                    r.target.clone(),
                    r.repetitions.to_string(),
                    or_dash(r.ops_per_sec.map(|s| format!("{:.1}", s.mean))),
                    or_dash(
                        r.ops_per_sec
                            .and_then(|s| s.ci95_half_width)
                            .map(|h| format!("{h:.1}")),
                    ),
                    or_dash(r.error_rate.map(|e| format!("{:.2}%", e * 100.0))),
                    or_dash(r.throughput_delta.map(|d| format!("{:+.1}%", d.percent))),
                    or_dash(first.and_then(interval)),
                    or_dash(first.and_then(level)),
                    or_dash(first.and_then(|v| v.adjusted_p_value).map(p_value)),
                    or_dash(
                        first
                            .and_then(|v| v.mde_percent)
                            .map(|m| format!("{m:.1}%")),
                    ),
                    or_dash(
                        first
                            .and_then(|v| v.mde_upper_percent)
                            .map(|m| format!("{m:.1}%")),
                    ),
                    or_dash(r.p99_us.map(|s| format!("{:.1}", s.mean))),
                    or_dash(r.cpu_us_per_op.map(|s| format!("{:.1}", s.mean))),
                    r.verdict.text().to_string(),
                ]
            })
            .collect();
        out.push_str(&table(&HEADERS, &NUMERIC, &rows));
        let mut notes = Vec::new();
        for r in &g.rows {
            for warning in r.warnings(&c.baseline) {
                notes.push(format!("{}: {warning}", r.target));
            }
            if let Some(reason) = &r.reason {
                notes.push(format!("{}: {reason}", r.target));
            }
            for v in r.verdicts.iter().skip(1) {
                notes.push(format!("{}: {}", r.target, metric_line(v)));
            }
            for why in &r.excluded {
                notes.push(format!("{} left out, {why}", r.target));
            }
        }
        for n in notes {
            out.push_str(&note(&n));
        }
    }
    if c.family > 0 {
        out.push_str(&note(&method_lines(c).join(" ")));
    }
    section("verdicts", "Verdicts", &out)
}

/// Cost per million operations of each row whose platform has a price.
pub(super) fn cost(comparison: &Result<Comparison, CompareError>) -> String {
    let rows: Vec<Vec<String>> = comparison
        .iter()
        .flat_map(|c| &c.groups)
        .flat_map(|g| {
            g.rows.iter().filter_map(|r| {
                Some(vec![
                    r.target.clone(),
                    g.platform.clone(),
                    g.size.clone(),
                    format!("{:.4}", r.cost_per_million_ops?),
                ])
            })
        })
        .collect();
    let content = if rows.is_empty() {
        note("No platform has a price (spec.platforms[].pricePerNodeHour), so no cost is shown.")
    } else {
        note(
            "Server cost per million successful operations: price per node hour × nodes ÷ \
             (mean ops/s × 3600) × 10⁶.",
        ) + &table(
            &["target", "platform", "size", "cost per million ops"],
            &["cost per million ops"],
            &rows,
        )
    };
    section("cost", "Cost", &content)
}
