//! The verdicts as CSV: one row per compared target × declared metric of the comparison
//! document, for spreadsheets and scripts that do not read JSON. Unknown values are empty.

use super::comparison_json::ComparisonDocument;
use super::csv::push_row;

/// Column names, in order.
pub const VERDICT_COLUMNS: [&str; 19] = [
    "workload",
    "platform",
    "size",
    "target",
    "baseline",
    "metric",
    "verdict",
    "estimatePercent",
    "intervalLowPercent",
    "intervalHighPercent",
    "intervalConfidence",
    "adjustedPValue",
    "mdePercent",
    "cautiousMdePercent",
    "pairs",
    "reason",
    "targetServer",
    "baselineServer",
    "warnings",
];

/// The CSV text of `doc`'s verdicts, header first, `\n` line ends.
pub fn render_verdicts_csv(doc: &ComparisonDocument) -> String {
    let mut out = String::new();
    push_row(&mut out, VERDICT_COLUMNS.iter().map(|c| c.to_string()));
    let text = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for g in &doc.groups {
        let baseline = g.rows.iter().find(|r| r.target == doc.baseline);
        let baseline_server = baseline.map(|b| b.server.describe()).unwrap_or_default();
        for r in &g.rows {
            for m in &r.verdicts {
                let verdict = serde_json::to_value(m.verdict)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                push_row(
                    &mut out,
                    [
                        g.workload.clone(),
                        g.platform.clone(),
                        g.size.clone(),
                        r.target.clone(),
                        r.baseline.clone(),
                        m.metric.name().to_owned(),
                        verdict,
                        text(m.estimate_percent),
                        text(m.interval.map(|i| i.low_percent)),
                        text(m.interval.map(|i| i.high_percent)),
                        text(m.interval.map(|i| i.confidence)),
                        text(m.adjusted_p_value),
                        text(m.mde_percent),
                        text(m.cautious_mde_percent),
                        m.pairs.map(|p| p.to_string()).unwrap_or_default(),
                        m.reason.clone().unwrap_or_default(),
                        r.server.describe(),
                        baseline_server.clone(),
                        r.warnings.join("; "),
                    ],
                );
            }
        }
    }
    out
}
