//! A fixed-width text table of results for people: one row per cell × operation label.
//!
//! Results that are not valid server results are marked in a NOTE column and listed again
//! under the table, so that nobody quotes them by accident: `INCOMPLETE` (the run stopped
//! early), `CLIENT-SATURATED` (the load generator, not the server, was the limit) and
//! `INVALID` (another validity gate failed: an election, errors over the budget, …).

use super::layout::fixed_width;
use crate::result::{CellResult, CellStatus, OperationResult};

/// Column headers, in order.
const HEADERS: [&str; 15] = [
    "TARGET",
    "PLATFORM",
    "SIZE",
    "REP",
    "OPERATION",
    "OPS/S",
    "P50 µs",
    "P95 µs",
    "P99 µs",
    "P99.9 µs",
    "MAX µs",
    "ERRORS",
    "CPU µs/OP",
    "REGIME",
    "NOTE",
];

/// Columns holding numbers, aligned right.
const NUMERIC: [bool; 15] = [
    false, false, false, true, false, true, true, true, true, true, true, true, true, false, false,
];

/// The table text of `results` in the order given, `\n` line ends.
pub fn render_table(results: &[CellResult]) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for result in results {
        let note = note(result);
        let cell = &result.cell;
        let ident = [
            cell.target.clone(),
            cell.platform.clone(),
            cell.size.clone(),
            cell.repetition.to_string(),
        ];
        let cpu = result
            .server_stats
            .as_ref()
            .and_then(|s| s.cpu_us_per_op)
            .map_or("-".to_string(), |v| format!("{v:.1}"));
        let regime = result
            .server_stats
            .as_ref()
            .and_then(|s| s.regime)
            .map_or("-", |r| r.label())
            .to_string();
        let Some(measured) = &result.measured else {
            let mut row = ident.to_vec();
            row.push("-".into());
            row.extend(std::iter::repeat_n("-".to_string(), 7));
            row.extend([cpu, regime, note.to_string()]);
            rows.push(row);
            continue;
        };
        let ops = std::iter::once(("all", &measured.overall))
            .chain(measured.operations.iter().map(|(k, v)| (k.as_str(), v)));
        for (label, op) in ops {
            let mut row = ident.to_vec();
            row.push(label.to_string());
            row.extend(figures(op));
            row.extend([cpu.clone(), regime.clone(), note.to_string()]);
            rows.push(row);
        }
    }
    let mut out = fixed_width(&HEADERS, &NUMERIC, &rows);
    let invalid: Vec<String> = results
        .iter()
        .filter_map(|r| match &r.status {
            CellStatus::Incomplete { reason } => Some(format!(
                "!! INCOMPLETE, not a valid result: {}: {reason}",
                r.cell
            )),
            CellStatus::Complete if r.client_cpu.is_some_and(|c| c.client_saturated) => {
                Some(format!(
                    "!! CLIENT-SATURATED, measures the client, not the server: {}",
                    r.cell
                ))
            }
            CellStatus::Complete if !r.invalid_reasons.is_empty() => Some(format!(
                "!! INVALID, left out of comparisons: {}: {}",
                r.cell,
                r.invalid_reasons.join("; ")
            )),
            CellStatus::Complete => None,
        })
        .collect();
    let disagreements = results.iter().flat_map(|r| {
        let cell = &r.cell;
        r.server_stats.iter().flat_map(move |s| {
            s.cpu_disagreements.iter().map(move |d| {
                format!(
                    "!! CPU SOURCES DISAGREE: {cell}: {}: serverStatus {} µs, {} {} µs ({:+.1}%)",
                    d.member,
                    d.server_status_us,
                    d.os_source.label(),
                    d.os_us,
                    d.percent
                )
            })
        })
    });
    for line in invalid.into_iter().chain(disagreements) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn note(result: &CellResult) -> &'static str {
    match result.status {
        CellStatus::Incomplete { .. } => "INCOMPLETE",
        CellStatus::Complete if result.client_cpu.is_some_and(|c| c.client_saturated) => {
            "CLIENT-SATURATED"
        }
        CellStatus::Complete if !result.invalid_reasons.is_empty() => "INVALID",
        CellStatus::Complete => "",
    }
}

fn figures(op: &OperationResult) -> Vec<String> {
    let l = op.latency_us;
    let lat = |f: fn(&crate::measure::LatencySummary) -> u64| {
        l.as_ref().map_or("-".to_string(), |s| f(s).to_string())
    };
    vec![
        format!("{:.1}", op.ops_per_sec),
        lat(|s| s.p50),
        lat(|s| s.p95),
        lat(|s| s.p99),
        lat(|s| s.p999),
        lat(|s| s.max),
        op.errors.total().to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::{ClientCpuUsage, ErrorKind};
    use crate::result::testing::{cell, result_from};

    #[test]
    fn table_text_is_exact_and_marks_invalid_results() {
        let ok = result_from(
            cell("psmdb-8.0", "n2", "1M", 1),
            Duration::from_secs(2),
            &[
                ("find", 100, Ok(())),
                ("find", 300, Ok(())),
                ("insert", 2_500, Err(ErrorKind::DuplicateKey)),
            ],
            Some(300),
        );
        let mut saturated = result_from(
            cell("mongo-9.0", "c4a", "1M", 1),
            Duration::from_secs(1),
            &[("find", 90, Ok(()))],
            None,
        );
        saturated.client_cpu = Some(ClientCpuUsage {
            user_us: 950_000,
            system_us: 0,
            wall_us: 1_000_000,
            cores: 1,
            utilization: 0.95,
            client_saturated: true,
        });
        let mut incomplete = result_from(
            cell("mongo-9.0", "n2", "4M", 2),
            Duration::from_secs(1),
            &[],
            None,
        );
        incomplete.measured = None;
        incomplete.server_stats = None;
        incomplete.status = CellStatus::Incomplete {
            reason: "server closed the connection in phase measured".into(),
        };
        let mut elected = result_from(
            cell("mongo-9.0", "n2", "1M", 3),
            Duration::from_secs(1),
            &[("find", 80, Ok(()))],
            None,
        );
        elected.invalid_reasons = vec!["election: term 2 → 3".into()];
        let expected = "\
TARGET     PLATFORM  SIZE  REP  OPERATION  OPS/S  P50 µs  P95 µs  P99 µs  P99.9 µs  MAX µs  ERRORS  CPU µs/OP  REGIME          NOTE
psmdb-8.0  n2        1M      1  all          1.0     100     300     300       300     300       1      100.0  cache-resident
psmdb-8.0  n2        1M      1  find         1.0     100     300     300       300     300       0      100.0  cache-resident
psmdb-8.0  n2        1M      1  insert       0.0       -       -       -         -       -       1      100.0  cache-resident
mongo-9.0  c4a       1M      1  all          1.0      90      90      90        90      90       0          -  -               CLIENT-SATURATED
mongo-9.0  c4a       1M      1  find         1.0      90      90      90        90      90       0          -  -               CLIENT-SATURATED
mongo-9.0  n2        4M      2  -              -       -       -       -         -       -       -          -  -               INCOMPLETE
mongo-9.0  n2        1M      3  all          1.0      80      80      80        80      80       0          -  -               INVALID
mongo-9.0  n2        1M      3  find         1.0      80      80      80        80      80       0          -  -               INVALID
!! CLIENT-SATURATED, measures the client, not the server: study/r1 flights/v1 target=mongo-9.0 platform=c4a size=1M repetition=1
!! INCOMPLETE, not a valid result: study/r1 flights/v1 target=mongo-9.0 platform=n2 size=4M repetition=2: server closed the connection in phase measured
!! INVALID, left out of comparisons: study/r1 flights/v1 target=mongo-9.0 platform=n2 size=1M repetition=3: election: term 2 → 3
";
        assert_eq!(
            render_table(&[ok, saturated, incomplete, elected]),
            expected
        );
    }

    #[test]
    fn cpu_sources_that_disagree_are_listed_under_the_table() {
        use crate::measure::server::{CpuDisagreement, CpuSource};
        let mut r = result_from(
            cell("psmdb-8.0", "n2", "1M", 1),
            Duration::from_secs(1),
            &[("find", 100, Ok(()))],
            Some(300),
        );
        r.server_stats.as_mut().unwrap().cpu_disagreements = vec![CpuDisagreement {
            member: "m1:27017".into(),
            server_status_us: 5_000_000,
            os_us: 6_000_000,
            os_source: CpuSource::Procfs,
            percent: 20.0,
        }];
        let text = render_table(&[r]);
        assert_eq!(
            text.lines().last(),
            Some(
                "!! CPU SOURCES DISAGREE: study/r1 flights/v1 target=psmdb-8.0 platform=n2 \
                 size=1M repetition=1: m1:27017: serverStatus 5000000 µs, procfs 6000000 µs \
                 (+20.0%)"
            )
        );
    }
}
