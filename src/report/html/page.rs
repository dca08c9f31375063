//! The page itself: its head (style sheet, Content-Security-Policy) and the order of its
//! sections: the summary that answers the question, the figures, then the facts behind
//! them, per-cell detail folded.

use super::markup::escape;
use super::{canary, explain, facts, figures, summary, sweep, timeline, verdicts};
use crate::report::ReportError;
use crate::report::groups::{compare_in_order, groups};
use crate::result::CellResult;
use crate::verdict::CompareOptions;

const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#222}
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1rem}
.headline{font-size:1.15rem;font-weight:600;background:#f3f6fa;padding:.6rem .8rem;border-left:4px solid #0072b2}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f6f6f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1rem 0}figcaption{font-weight:600;margin-bottom:.3rem}
svg{max-width:100%;height:auto}figure.plot svg{width:100%}
.question{font-size:1.05rem}ul.verdicts li{margin:.3rem 0}.flag{color:#8a4b00;font-weight:600}
details{margin:.5rem 0}summary{cursor:pointer;color:#0072b2}
.plan-differs{color:#fff;background:#c0392b;padding:0 .4rem;border-radius:.2rem;font-weight:600}
.excluded{color:#8a4b00}.note{color:#555;font-size:.85rem}
code{font-size:.85em;word-break:break-all}
";

/// The HTML page of `results` compared as `options` say.
///
/// # Errors
/// [`ReportError::Plot`] when a plot cannot be drawn.
pub fn render_html(
    results: &[CellResult],
    options: &CompareOptions,
) -> Result<String, ReportError> {
    let groups = groups(results);
    let comparison = compare_in_order(results, options);
    let mut runs: Vec<String> = Vec::new();
    for r in results {
        let run = format!("{} run {}", r.cell.benchmark, r.cell.run_id);
        if !runs.contains(&run) {
            runs.push(run);
        }
    }
    let title = format!("mongobench report: {}", runs.join(", "));
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    // The answer first, then the figures, then the facts behind them.
    body.push_str(&summary::summary(results, &comparison));
    body.push_str(&verdicts::verdict_tables(&comparison));
    body.push_str(&figures::throughput(&groups)?);
    body.push_str(&sweep::sweeps(&groups)?);
    body.push_str(&timeline::latency_over_time(&groups)?);
    body.push_str(&figures::latency(&groups)?);
    body.push_str(&figures::per_second(&groups)?);
    body.push_str(&figures::cpu(&groups)?);
    body.push_str(&canary::canary(results)?);
    body.push_str(&verdicts::cost(&comparison));
    body.push_str(&facts::regimes(results));
    body.push_str(&facts::shards(results));
    body.push_str(&explain::plans_section(&groups));
    body.push_str(&facts::excluded(results));
    body.push_str(&facts::identity(results));
    body.push_str(&facts::hardware(results));
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(&title)
    ))
}
