//! The plot sections: throughput with intervals, latency percentile curves, per-second series
//! and server CPU per member, each figure followed by the numbers it draws.

use crate::measure::latency::value_at_percentile;
use crate::measure::server::{CPU_SOURCES_FLOOR_US, CPU_SOURCES_TOLERANCE, CpuSource};
use crate::report::ReportError;
use crate::report::groups::{Group, TargetCells};
use crate::report::plots::{self, Bar, Curve, Plot, Stack};
use crate::report::settle;
use crate::result::CellResult;

use super::markup::{escape, note, section, table};

/// Targets in the order they first appear anywhere, so a target keeps its colour.
pub(super) fn palette<'r>(groups: &[Group<'r>]) -> Vec<&'r str> {
    let mut targets: Vec<&str> = Vec::new();
    for t in groups.iter().flat_map(|g| &g.targets) {
        if !targets.contains(&t.target) {
            targets.push(t.target);
        }
    }
    targets
}

pub(super) fn color_of(palette: &[&str], target: &str) -> usize {
    palette.iter().position(|t| *t == target).unwrap_or(0)
}

pub(super) fn figure(kind: &str, title: &str, plot: &Plot) -> String {
    format!(
        "<figure class=\"plot\" data-plot=\"{kind}\">\n<figcaption>{}</figcaption>\n{}</figure>\n",
        escape(title),
        plot.svg
    )
}

/// Mean successful ops/s of each target's valid repetitions with 95 % interval whiskers.
pub(super) fn throughput(groups: &[Group<'_>]) -> Result<String, ReportError> {
    let palette = palette(groups);
    let mut out = note(
        "Mean successful operations per second over the valid repetitions; whiskers span the \
         Student-t 95% interval of the mean (none with a single repetition).",
    );
    for g in groups {
        let title = g.title();
        let summaries: Vec<(&TargetCells<'_>, _)> = g
            .targets
            .iter()
            .filter_map(|t| Some((t, t.throughput()?)))
            .collect();
        if summaries.is_empty() {
            out.push_str(&note(&format!("{title}: no valid repetition.")));
            continue;
        }
        let bars: Vec<Bar> = summaries
            .iter()
            .map(|(t, s)| Bar {
                label: t.target.to_owned(),
                mean: s.mean,
                interval: s.ci95(),
                color: color_of(&palette, t.target),
            })
            .collect();
        let plot = plots::throughput(&title, "successful operations per second", &bars)?;
        out.push_str(&figure("throughput", &title, &plot));
        let rows: Vec<Vec<String>> = summaries
            .iter()
            .map(|(t, s)| {
                let (lo, hi) = s.ci95().map_or(("-".into(), "-".into()), |(lo, hi)| {
                    (format!("{lo:.1}"), format!("{hi:.1}"))
                });
                vec![
                    t.target.to_owned(),
                    s.n.to_string(),
                    format!("{:.1}", s.mean),
                    lo,
                    hi,
                ]
            })
            .collect();
        out.push_str(&table(
            &["target", "valid reps", "mean ops/s", "95% low", "95% high"],
            &["valid reps", "mean ops/s", "95% low", "95% high"],
            &rows,
        ));
    }
    Ok(section("throughput", "Throughput", &out))
}

/// The highest percentile `samples` support: p(1 − 1/n), beyond which a percentile is the
/// largest sample whatever the true tail.
pub(super) fn supported_percentile(samples: u64) -> f64 {
    100.0 * (1.0 - 1.0 / samples.max(1) as f64)
}

/// Latency percentile curves from p50, per operation type, one line per target labelled with
/// its sample count, each cut at the highest percentile its samples support, from the
/// histograms of the valid repetitions added up.
pub(super) fn latency(groups: &[Group<'_>]) -> Result<String, ReportError> {
    let palette = palette(groups);
    let grid = plots::percentile_grid();
    let mut out = note(
        "Latency of successful operations at each percentile, from the full histograms of the \
         valid repetitions added together; the latency axis is logarithmic. Each curve stops at \
         the highest percentile its samples (n) support, p(1 − 1/n): beyond it a percentile is \
         only the largest sample.",
    );
    for g in groups {
        let mut labels: Vec<&str> = g.targets.iter().flat_map(|t| t.labels()).collect();
        labels.sort_unstable();
        labels.dedup();
        let kinds = std::iter::once(None).chain(labels.into_iter().map(Some));
        for label in kinds {
            let curves: Vec<Curve> = g
                .targets
                .iter()
                .filter_map(|t| {
                    let h = t.merged_latency(label)?;
                    let end = supported_percentile(h.len()).min(grid[grid.len() - 1]);
                    let points: Vec<(f64, f64)> = grid
                        .iter()
                        .copied()
                        .filter(|&p| p < end - 1e-9)
                        .chain(std::iter::once(end))
                        .map(|p| (p, value_at_percentile(&h, p) as f64))
                        .collect();
                    (points.len() > 1).then(|| Curve {
                        label: format!("{} (n = {})", t.target, plots::count(h.len())),
                        points,
                        color: color_of(&palette, t.target),
                    })
                })
                .collect();
            if curves.is_empty() {
                continue;
            }
            let title = format!("{}: {}", g.title(), label.unwrap_or("all operations"));
            let plot = plots::latency_percentiles(&title, &curves)?;
            out.push_str(&figure("latency", &title, &plot));
        }
    }
    Ok(section("latency", "Latency percentiles", &out))
}

/// The per-second completions of every cell with a measured phase, one plot per target and
/// group, one line per repetition.
pub(super) fn per_second(groups: &[Group<'_>]) -> Result<String, ReportError> {
    let mut out = note(
        "Operations completed in each whole second of the measured phase (the last, partial \
         second is left out), after the seconds of the warm-up, shaded, at negative times. The \
         data was restored and the replica set settled between the two, so the axis skips that \
         gap.",
    );
    for g in groups {
        for t in &g.targets {
            let curves: Vec<Curve> = t
                .cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let m = c.measured.as_ref()?;
                    let whole = usize::try_from(m.duration_us / 1_000_000).unwrap_or(usize::MAX);
                    let warmup = c.warmup_per_second.len() as f64;
                    let points: Vec<(f64, f64)> = c
                        .warmup_per_second
                        .iter()
                        .enumerate()
                        .map(|(s, &n)| (s as f64 + 0.5 - warmup, n as f64))
                        .chain(
                            m.overall
                                .per_second
                                .iter()
                                .take(whole)
                                .enumerate()
                                .map(|(s, &n)| (s as f64 + 0.5, n as f64)),
                        )
                        .collect();
                    (!points.is_empty()).then(|| Curve {
                        label: repetition_label(c),
                        points,
                        color: i,
                    })
                })
                .collect();
            if curves.is_empty() {
                continue;
            }
            let title = format!("{}: {}", g.title(), t.target);
            let plot = plots::per_second(&title, &curves)?;
            out.push_str(&figure("per-second", &title, &plot));
            out.push_str(&unsettled_warmups(&t.cells));
        }
    }
    Ok(section("series", "Per-second throughput", &out))
}

/// A note naming the repetitions whose warm-up had not levelled off (`report::settle`), empty
/// when every one had or was too short to judge.
fn unsettled_warmups(cells: &[&CellResult]) -> String {
    let drifts: Vec<String> = cells
        .iter()
        .filter_map(|c| {
            let d = settle::unsettled(c)?;
            Some(format!("repetition {} {d:+.1} %", c.cell.repetition))
        })
        .collect();
    if drifts.is_empty() {
        return String::new();
    }
    format!(
        "<p class=\"note unsettled\">{}</p>\n",
        escape(&format!(
            "Warm-up not settled (its last third of seconds against its middle third, beyond \
             ±{} % or after every round of workload.warmupUntilSettled): {}. The drift \
             carries on into the measured phase; a longer workload.warmup, or \
             workload.warmupUntilSettled, keeps it out.",
            settle::SETTLE_TOLERANCE_PERCENT,
            drifts.join(", ")
        ))
    )
}

pub(super) fn repetition_label(c: &CellResult) -> String {
    match c.exclusion() {
        None => format!("repetition {}", c.cell.repetition),
        Some(_) if c.is_complete() => format!("repetition {} (invalid)", c.cell.repetition),
        Some(_) => format!("repetition {} (incomplete)", c.cell.repetition),
    }
}

/// One cell's server CPU µs per operation by member.
struct MemberCpu {
    /// (member, µs per operation, where it came from), the primary first when the result
    /// names it.
    members: Vec<(String, f64, String)>,
    /// Whether the result names its primary.
    primary_named: bool,
}

/// The members' CPU of a cell; `None` when a member lacks CPU figures.
fn members(c: &CellResult) -> Option<MemberCpu> {
    let stats = c.server_stats.as_ref()?;
    let ops = c.measured.as_ref()?.overall.completed;
    if ops == 0 || stats.members.is_empty() {
        return None;
    }
    let mut members: Vec<(String, f64, String)> = stats
        .members
        .iter()
        .map(|m| {
            let source = match (m.cpu_source?, &m.os_cpu) {
                (CpuSource::ServerStatus, _) | (_, None) => m.cpu_source?.label().to_owned(),
                (source, Some(os)) => format!("{} ({})", source.label(), os.read_by),
            };
            Some((m.member.clone(), m.cpu_us()? as f64 / ops as f64, source))
        })
        .collect::<Option<_>>()?;
    let primary = stats.primary.as_deref();
    let position = members
        .iter()
        .position(|(m, _, _)| Some(m.as_str()) == primary);
    if let Some(p) = position {
        let first = members.remove(p);
        members.insert(0, first);
    }
    Some(MemberCpu {
        members,
        primary_named: position.is_some(),
    })
}

/// The cells whose two CPU sources disagreed, as a note; empty when none did.
fn disagreements(groups: &[Group<'_>]) -> String {
    let mut lines = Vec::new();
    for t in groups.iter().flat_map(|g| &g.targets) {
        for c in &t.cells {
            for d in c.server_stats.iter().flat_map(|s| &s.cpu_disagreements) {
                lines.push(format!(
                    "{}: {}: serverStatus {} µs, {} {} µs ({:+.1}%)",
                    c.cell,
                    d.member,
                    d.server_status_us,
                    d.os_source.label(),
                    d.os_us,
                    d.percent
                ));
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    note(&format!(
        "The server's own CPU time and the operating system's disagree past {:.0}% (and {} ms) \
         in: {}. One of them counts another process or only part of this one.",
        CPU_SOURCES_TOLERANCE * 100.0,
        CPU_SOURCES_FLOOR_US / 1000,
        lines.join("; ")
    ))
}

/// Server CPU µs per operation of each member, primary and secondaries, as the mean over the
/// valid repetitions.
pub(super) fn cpu(groups: &[Group<'_>]) -> Result<String, ReportError> {
    let mut out = note(
        "Server CPU time (user + system) of each replica-set member per operation, mean over \
         the valid repetitions; a bar's height is the cell's total CPU µs per operation. The \
         source is the server's own serverStatus where it reports it, else the operating \
         system's count of the server process (procfs, or its own cgroup), read on this \
         machine or by the canary beside the member.",
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut drawn = 0;
    for g in groups {
        let mut stacks: Vec<Stack> = Vec::new();
        let mut named_primary = true;
        for t in &g.targets {
            let per_cell: Option<Vec<MemberCpu>> = t.valid().map(members).collect();
            let per_cell = per_cell.filter(|cells| {
                !cells.is_empty()
                    && cells
                        .iter()
                        .all(|c| c.members.len() == cells[0].members.len())
            });
            let Some(per_cell) = per_cell else {
                rows.push(vec![
                    g.title(),
                    t.target.to_owned(),
                    "-".into(),
                    "-".into(),
                    "not reported".into(),
                    "-".into(),
                ]);
                continue;
            };
            let knows_primary = per_cell.iter().all(|c| c.primary_named);
            named_primary &= knows_primary;
            let n = per_cell.len() as f64;
            let means: Vec<f64> = (0..per_cell[0].members.len())
                .map(|i| per_cell.iter().map(|c| c.members[i].1).sum::<f64>() / n)
                .collect();
            for (i, (member, _, source)) in per_cell[0].members.iter().enumerate() {
                let role = match (knows_primary, i) {
                    (true, 0) => "primary",
                    (true, _) => "secondary",
                    (false, _) => "member",
                };
                rows.push(vec![
                    g.title(),
                    t.target.to_owned(),
                    role.into(),
                    member.clone(),
                    format!("{:.1}", means[i]),
                    source.clone(),
                ]);
            }
            stacks.push(Stack {
                label: t.target.to_owned(),
                parts: means,
            });
        }
        if stacks.is_empty() {
            continue;
        }
        let legend = if named_primary {
            ["primary", "secondaries"]
        } else {
            ["first member", "other members"]
        };
        let title = g.title();
        let plot = plots::cpu_per_member(&title, legend, &stacks)?;
        out.push_str(&figure("cpu", &title, &plot));
        drawn += 1;
    }
    if drawn == 0 {
        let none = note(
            "No cell reports the server's CPU time (neither serverStatus nor a canary beside \
             its members), so there is no CPU per operation to show.",
        );
        return Ok(section("cpu", "Server CPU per operation", &none));
    }
    out.push_str(&table(
        &["group", "target", "role", "member", "CPU µs/op", "source"],
        &["CPU µs/op"],
        &rows,
    ));
    out.push_str(&disagreements(groups));
    Ok(section("cpu", "Server CPU per operation", &out))
}
