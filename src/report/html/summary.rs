//! The block the page opens with: the question the run asked, what each target is, the
//! verdicts in words with their intervals, what the MDE means, and the warnings that bear on
//! each verdict (cells the noise canaries or the validity gates flagged).

use crate::report::comparison::{interval, level, targets_described};
use crate::report::summary::{target_facts, warnings};
use crate::result::CellResult;
use crate::verdict::{
    CompareError, Comparison, ComparisonGroup, ComparisonRow, MetricVerdict, Verdict, headline,
};

use super::markup::{escape, section};

/// Each target and what it is: what its servers said (the comparison's), or, without a
/// comparison, what its results record.
fn targets(
    results: &[CellResult],
    comparison: &Result<Comparison, CompareError>,
) -> Vec<(String, String)> {
    match comparison {
        Ok(c) => targets_described(c),
        Err(_) => target_facts(results)
            .into_iter()
            .map(|t| (t.target, t.facts.join("; ")))
            .collect(),
    }
}

/// `a, b and c`.
fn words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn distinct<'r>(values: impl Iterator<Item = &'r str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_owned());
        }
    }
    out
}

/// The question, in one sentence: which targets, against which baseline, under which
/// workload, at which sizes and platforms, judged on which figures.
fn question(results: &[CellResult], comparison: &Result<Comparison, CompareError>) -> String {
    let targets = distinct(results.iter().map(|r| r.cell.target.as_str()));
    let workloads = distinct(results.iter().map(|r| r.cell.workload.as_str()));
    let platforms = distinct(results.iter().map(|r| r.cell.platform.as_str()));
    let sizes: Vec<String> = match comparison {
        Ok(c) => distinct(c.groups.iter().map(|g| g.size.as_str())),
        Err(_) => distinct(results.iter().map(|r| r.cell.size.as_str())),
    };
    let scope = format!(
        "under {} at size{} {} on {}",
        words(&workloads),
        if sizes.len() == 1 { "" } else { "s" },
        words(&sizes),
        words(&platforms)
    );
    match comparison {
        Ok(c) => {
            let others: Vec<String> = distinct(
                c.groups
                    .iter()
                    .flat_map(|g| &g.rows)
                    .map(|r| r.target.as_str()),
            )
            .into_iter()
            .filter(|t| *t != c.baseline)
            .collect();
            let metrics: Vec<String> = c.metrics.iter().map(|m| m.label().to_owned()).collect();
            format!(
                "{} {} differ from the baseline {} in {}, {scope}?",
                if others.len() == 1 { "Does" } else { "Do" },
                words(&others),
                c.baseline,
                words(&metrics)
            )
        }
        Err(_) => format!("How do {} perform {scope}?", words(&targets)),
    }
}

/// Cells of `target` in `group` the validity gates left out, as words; `None` when none were.
fn left_out(results: &[CellResult], g: &ComparisonGroup, target: &str) -> Option<String> {
    let cells: Vec<&CellResult> = results
        .iter()
        .filter(|r| {
            let c = &r.cell;
            (
                c.workload.as_str(),
                c.platform.as_str(),
                c.size.as_str(),
                c.target.as_str(),
            ) == (
                g.workload.as_str(),
                g.platform.as_str(),
                g.size.as_str(),
                target,
            )
        })
        .collect();
    let n = cells.iter().filter(|r| !r.is_valid()).count();
    (n > 0).then(|| {
        format!(
            "{n} of {} {target} cells left out as invalid or incomplete",
            cells.len()
        )
    })
}

/// What bears on a row's verdict: what the target differs in from the baseline besides its
/// version and its cells a noise canary flagged (the comparison's warnings), the baseline's
/// flagged cells, and the cells of either the validity gates left out.
fn row_warnings(
    results: &[CellResult],
    c: &Comparison,
    g: &ComparisonGroup,
    row: &ComparisonRow,
) -> Vec<String> {
    let mut out: Vec<String> = row
        .warnings(&c.baseline)
        .into_iter()
        .map(|w| format!("{}: {w}", row.target))
        .collect();
    if let Some(base) = g.rows.iter().find(|r| r.target == c.baseline)
        && base.canary_flagged > 0
    {
        out.push(format!(
            "{}: {} of its {} valid cells flagged by a noise canary (kept in the figures)",
            c.baseline, base.canary_flagged, base.repetitions
        ));
    }
    out.extend(left_out(results, g, &row.target));
    out.extend(left_out(results, g, &c.baseline));
    out
}

/// One verdict in words: `wiredtiger is faster than postgres in ops/s: +12.0%, 95% interval
/// [+8.1%, +15.9%]; MDE 4.0%`.
fn verdict_words(baseline: &str, row: &ComparisonRow, v: &MetricVerdict) -> String {
    let estimate = v
        .delta
        .map(|d| format!(": {:+.1}%", d.percent))
        .unwrap_or_default();
    let range = match (interval(v), level(v)) {
        (Some(i), Some(l)) => format!(", {l} interval {i}"),
        _ => String::new(),
    };
    let mde = v
        .mde_percent
        .map(|m| format!("; MDE {m:.1}%"))
        .unwrap_or_default();
    let (target, metric) = (&row.target, v.metric.label());
    match v.verdict {
        d if d.is_difference() => format!(
            "{target} is {} than {baseline} in {metric}{estimate}{range}{mde}",
            comparative(d)
        ),
        Verdict::NoSignificantDifference => format!(
            "no significant difference between {target} and {baseline} in {metric}\
             {estimate}{range}{mde}"
        ),
        other => {
            let why = v
                .reason
                .as_ref()
                .or(row.reason.as_ref())
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            format!("{target} vs {baseline} in {metric}: {}{why}", other.text())
        }
    }
}

/// `faster`, `lower in latency` …: a difference's verdict as a comparative.
fn comparative(v: Verdict) -> &'static str {
    match v {
        Verdict::LowerLatency => "lower in latency",
        Verdict::HigherLatency => "higher in latency",
        other => other.text(),
    }
}

/// The verdicts of every compared row, one list item each, with the flags beside the
/// verdicts they feed.
fn verdicts(results: &[CellResult], c: &Comparison) -> String {
    let several = c.groups.len() > 1;
    let mut out = String::from("<ul class=\"verdicts\">\n");
    for g in &c.groups {
        for row in g.rows.iter().filter(|r| r.verdict != Verdict::Baseline) {
            let place = if several {
                format!("At size {} on {}: ", g.size, g.platform)
            } else {
                String::new()
            };
            let lines: Vec<String> = if row.verdicts.is_empty() {
                let why = row
                    .reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                vec![format!(
                    "{} vs {}: {}{why}",
                    row.target,
                    c.baseline,
                    row.verdict.text()
                )]
            } else {
                row.verdicts
                    .iter()
                    .map(|v| verdict_words(&c.baseline, row, v))
                    .collect()
            };
            let warning = row_warnings(results, c, g, row);
            let warning = if warning.is_empty() {
                String::new()
            } else {
                format!(
                    " <span class=\"flag\">⚠ {}</span>",
                    escape(&format!("{}.", warning.join("; ")))
                )
            };
            out.push_str(&format!(
                "<li>{}{warning}</li>\n",
                escape(&format!("{place}{}.", lines.join("; ")))
            ));
        }
    }
    out.push_str("</ul>\n");
    out
}

/// The MDE in one sentence.
const MDE: &str = "MDE (minimum detectable effect): the smallest true difference a run like this \
    one, with the spread it measured, would call significant four times out of five; a \
    \"no significant difference\" does not mean the difference is smaller than it.";

/// The summary section.
pub(super) fn summary(
    results: &[CellResult],
    comparison: &Result<Comparison, CompareError>,
) -> String {
    let mut out = format!(
        "<p class=\"question\">{}</p>\n",
        escape(&question(results, comparison))
    );
    if let Ok(Some(line)) = comparison.as_ref().map(headline) {
        out.push_str(&format!(
            "<p class=\"headline\" id=\"headline\">{}</p>\n",
            escape(&line)
        ));
    }
    out.push_str("<ul class=\"targets\">\n");
    for (target, facts) in targets(results, comparison) {
        out.push_str(&format!(
            "<li><strong>{}</strong>: {}</li>\n",
            escape(&target),
            escape(&facts)
        ));
    }
    out.push_str("</ul>\n");
    match comparison {
        Ok(c) => {
            out.push_str(&verdicts(results, c));
            out.push_str(&format!("<p class=\"note mde\">{}</p>\n", escape(MDE)));
        }
        Err(e) => out.push_str(&format!(
            "<p class=\"verdicts\">{}</p>\n",
            escape(&format!("No comparison: {e}"))
        )),
    }
    let warnings = warnings(results);
    if !warnings.is_empty() {
        out.push_str("<ul class=\"warnings\">\n");
        for w in warnings {
            out.push_str(&format!("<li>{}</li>\n", escape(&w)));
        }
        out.push_str("</ul>\n");
    }
    section("summary", "Summary", &out)
}
