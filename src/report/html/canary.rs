//! The noise canaries' section: the client's probes and each server node's, in the order the
//! cells ran, as percentages of their medians, with the bound the run judged them against,
//! and the cells whose canary deviated.

use crate::measure::canary::{self, CanaryFigures};
use crate::report::ReportError;
use crate::report::plots::{self, Curve};
use crate::result::CellResult;

use super::figures::figure;
use super::markup::{fold, note, section, table};

/// One figure of a probe, as a time (a bandwidth is inverted), so higher is always slower.
type Figure = fn(&CanaryFigures) -> Option<f64>;

const FIGURES: [(&str, Figure); 3] = [
    ("CPU time", |f| Some(f.cpu_us)),
    ("memory copy time", |f| Some(1.0 / f.memory_gbps)),
    ("loopback round trip", |f| f.loopback_rtt_us),
];

/// The deviation (percent) the runner judged these cells' canaries against: the threshold
/// [`canary::threshold`] sets for the run's precision goal, which each cell's design records.
/// Results older than the design record, or whose designs disagree, say nothing sure: `None`
/// then, and no bound is drawn.
pub(super) fn judged_threshold(cells: &[&CellResult]) -> Option<f64> {
    let mut goals = cells
        .iter()
        .map(|c| c.design.as_ref().map(|d| d.precision_goal_percent));
    let first = goals.next()??;
    goals
        .all(|g| g == Some(first))
        .then(|| canary::threshold(first) * 100.0)
}

fn explanation(threshold: Option<f64>) -> String {
    let bound = match threshold {
        Some(t) => format!(
            "more than {t:.0}% from the median of the same machine's earlier probes in the run \
             (the threshold the run's precision goal set, or 25% without one; grey lines: the \
             same bound around this median)"
        ),
        None => "past the run's threshold from the median of the same machine's earlier probes \
             in the run: these results do not record the threshold (they predate its record, \
             or their runs had different precision goals), so no bound is drawn"
            .to_owned(),
    };
    note(&format!(
        "A fixed probe before every cell: CPU work, a memory copy past the caches and loopback \
         round trips, on the client and on each server node that has a canary beside its \
         member. Each line is the time one took, as a percentage of its median over these \
         cells (100 % is a usual cell; higher is a slower machine). A cell deviates when a \
         figure is {bound}."
    ))
}

/// The section, empty when no cell has a canary.
pub(super) fn canary(results: &[CellResult]) -> Result<String, ReportError> {
    let mut cells: Vec<&CellResult> = results
        .iter()
        .filter(|r| r.canary.is_some() || !r.server_canaries.is_empty())
        .collect();
    if cells.is_empty() {
        return Ok(String::new());
    }
    // The order they ran: by start time where known (stable, so ties keep the result order).
    cells.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let threshold = judged_threshold(&cells);
    let mut out = explanation(threshold);
    out.push_str(&client_plot(&cells, threshold)?);
    out.push_str(&server_plot(&cells, threshold)?);
    out.push_str(&flagged_table(&cells));
    out.push_str(&unreachable(&cells));
    Ok(section("canary", "Noise canaries", &out))
}

/// The client's three figures, one line each; empty without a client probe.
fn client_plot(cells: &[&CellResult], threshold: Option<f64>) -> Result<String, ReportError> {
    let client: Vec<Option<&CanaryFigures>> = cells
        .iter()
        .map(|c| c.canary.as_ref().map(|k| &k.figures))
        .collect();
    if client.iter().all(Option::is_none) {
        return Ok(String::new());
    }
    let curves: Vec<Curve> = FIGURES
        .iter()
        .enumerate()
        .filter_map(|(color, (label, f))| curve(label, color, &client, *f))
        .collect();
    let title = "Noise canary drift: client";
    let plot = plots::canary_drift(title, &curves, threshold)?;
    Ok(figure("canary", title, &plot))
}

/// One line per server node: of its three figures, the one furthest from its median; empty
/// without a server canary.
fn server_plot(cells: &[&CellResult], threshold: Option<f64>) -> Result<String, ReportError> {
    let mut addresses: Vec<&str> = Vec::new();
    for s in cells.iter().flat_map(|c| &c.server_canaries) {
        if !addresses.contains(&s.address.as_str()) {
            addresses.push(&s.address);
        }
    }
    if addresses.is_empty() {
        return Ok(String::new());
    }
    let curves: Vec<Curve> = addresses
        .iter()
        .enumerate()
        .map(|(color, address)| {
            let probes: Vec<Option<&CanaryFigures>> = cells
                .iter()
                .map(|c| {
                    let s = c.server_canaries.iter().find(|s| s.address == *address)?;
                    s.figures.as_ref()
                })
                .collect();
            furthest(address, color, &probes)
        })
        .collect();
    let title = "Noise canary drift: server nodes";
    let plot = plots::canary_drift(title, &curves, threshold)?;
    Ok(figure("canary-servers", title, &plot))
}

/// The cells whose canary deviated, on which machine, and whether the cell was kept.
fn flagged_table(cells: &[&CellResult]) -> String {
    let mut flagged: Vec<Vec<String>> = Vec::new();
    for c in cells {
        let kept = if c.is_valid() { "kept" } else { "left out" };
        let client = c
            .canary
            .as_ref()
            .and_then(|k| Some(("client", k.deviation.as_ref()?)));
        let during = c
            .phase_canary
            .as_ref()
            .and_then(|p| Some(("client, during the cell", p.deviation.as_ref()?)));
        let servers = c
            .server_canaries
            .iter()
            .filter_map(|s| Some((s.address.as_str(), s.deviation.as_ref()?)));
        for (machine, d) in client.into_iter().chain(during).chain(servers) {
            flagged.push(vec![
                c.cell.to_string(),
                machine.to_owned(),
                d.figure.clone(),
                format!("{:+.0}%", d.percent),
                kept.to_owned(),
            ]);
        }
    }
    if flagged.is_empty() {
        return note("No cell's canary deviated.");
    }
    let cells = flagged
        .iter()
        .map(|row| &row[0])
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    fold(
        &format!("{cells} cells whose canary deviated"),
        &table(
            &["cell", "probe of", "figure", "from the median", "cell"],
            &["from the median"],
            &flagged,
        ),
    )
}

/// The server canaries that did not answer, as a note; empty when every one did.
fn unreachable(cells: &[&CellResult]) -> String {
    let silent: Vec<String> = cells
        .iter()
        .flat_map(|c| {
            c.server_canaries.iter().filter_map(move |s| {
                Some(format!("{}: {} ({})", c.cell, s.address, s.error.as_ref()?))
            })
        })
        .collect();
    if silent.is_empty() {
        return String::new();
    }
    note(&format!(
        "Server node canaries that did not answer: {}.",
        silent.join("; ")
    ))
}

/// The median of figure `f` over `probes`; `None` when no probe has it.
fn median(probes: &[Option<&CanaryFigures>], f: Figure) -> Option<f64> {
    let mut values: Vec<f64> = probes.iter().filter_map(|p| f((*p)?)).collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().filter(|m| *m > 0.0)
}

/// `probes` (one per cell, in run order) of figure `f` as percentages of their median;
/// `None` when no probe has the figure.
fn curve(label: &str, color: usize, probes: &[Option<&CanaryFigures>], f: Figure) -> Option<Curve> {
    let median = median(probes, f)?;
    let points = probes
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i as f64 + 1.0, f((*p)?)? / median * 100.0)))
        .collect();
    Some(Curve {
        label: label.to_owned(),
        points,
        color,
    })
}

/// One node's line: per cell with a probe, whichever of its figures (as a percentage of that
/// figure's median) is furthest from 100 %.
fn furthest(label: &str, color: usize, probes: &[Option<&CanaryFigures>]) -> Curve {
    let medians: Vec<Option<f64>> = FIGURES.iter().map(|(_, f)| median(probes, *f)).collect();
    let points = probes
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let p = (*p)?;
            let y = FIGURES
                .iter()
                .zip(&medians)
                .filter_map(|((_, f), m)| Some(f(p)? / (*m)? * 100.0))
                .max_by(|a, b| (a - 100.0).abs().total_cmp(&(b - 100.0).abs()))?;
            Some((i as f64 + 1.0, y))
        })
        .collect();
    Curve {
        label: label.to_owned(),
        points,
        color,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::canary::{CanaryDeviation, CanaryRecord, ServerCanary};
    use crate::result::testing::slotted_result;

    fn probe(cpu_us: f64, memory_gbps: f64) -> CanaryFigures {
        CanaryFigures {
            cpu_us,
            memory_gbps,
            loopback_rtt_us: Some(20.0),
        }
    }

    #[test]
    fn server_nodes_get_a_line_each_and_their_deviations_and_silences_are_listed() {
        let mut cells = Vec::new();
        for (slot, (cpu, memory)) in [(100.0, 10.0), (110.0, 10.0), (100.0, 5.0)]
            .into_iter()
            .enumerate()
        {
            let mut r = slotted_result("psmdb-8.0", slot as u32 + 1, 1000.0);
            r.canary = Some(CanaryRecord {
                figures: probe(50.0, 10.0),
                deviation: None,
            });
            r.server_canaries = vec![
                ServerCanary {
                    address: "m0:27117".into(),
                    figures: Some(probe(cpu, memory)),
                    deviation: (slot == 2).then(|| CanaryDeviation {
                        figure: "memory bandwidth".into(),
                        percent: 100.0,
                    }),
                    error: None,
                },
                ServerCanary {
                    address: "m1:27117".into(),
                    figures: None,
                    deviation: None,
                    error: (slot == 0).then(|| "connecting: refused".to_owned()),
                },
            ];
            cells.push(r);
        }
        // m0: CPU 100, 110, 100 → 100 %, 110 %, 100 %; memory time 0.1, 0.1, 0.2 → 100 %,
        // 100 %, 200 %: per cell the figure furthest from 100 %.
        let probes: Vec<_> = cells
            .iter()
            .map(|c| c.server_canaries[0].figures.as_ref())
            .collect();
        let line = furthest("m0", 0, &probes);
        let ys: Vec<f64> = line
            .points
            .iter()
            .map(|p| (p.1 * 1e9).round() / 1e9)
            .collect();
        assert_eq!(ys, [100.0, 110.0, 200.0]);

        let html = canary(&cells).unwrap();
        assert!(html.contains("data-plot=\"canary\""), "the client's plot");
        assert!(
            html.contains("data-plot=\"canary-servers\""),
            "the server nodes' plot"
        );
        assert!(
            html.contains("<td>m0:27117</td><td>memory bandwidth</td>"),
            "{html}"
        );
        assert!(html.contains("did not answer: "), "{html}");
        assert!(html.contains("m1:27117 (connecting: refused)"), "{html}");
        assert_eq!(canary(&[slotted_result("x", 1, 1.0)]).unwrap(), "");
    }
}
