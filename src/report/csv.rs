//! CSV: a header and one row per cell × operation label (`OVERALL` first), for spreadsheets.
//!
//! Latencies in µs, rates in operations per second, numbers in their shortest round-trip
//! form, unknown values empty. A text field a spreadsheet would run as a formula (one starting
//! with `=`, `+`, `-`, `@`, a tab or a carriage return: a server's error message, a name) is
//! written with a leading `'` ([`neutralise`]); numbers stay numbers. An incomplete cell keeps its rows, with `status` =
//! `incomplete` and the reason; a cell with no measurements at all has one row with empty
//! figures.

use crate::measure::ErrorKind;
use crate::result::{CellResult, CellStatus, ClientPath, OperationResult};

/// Column names, in order.
pub const CSV_COLUMNS: [&str; 37] = [
    "benchmark",
    "runId",
    "workload",
    "target",
    "platform",
    "size",
    "repetition",
    "status",
    "incompleteReason",
    "invalidReasons",
    "operation",
    "completed",
    "succeeded",
    "opsPerSec",
    "errorRate",
    "meanUs",
    "p50Us",
    "p95Us",
    "p99Us",
    "p999Us",
    "maxUs",
    "notFound",
    "duplicateKey",
    "timeout",
    "network",
    "otherErrors",
    "latencyMode",
    "serverCpuUsPerOp",
    "regime",
    "clientCpuUtilization",
    "clientSaturated",
    "clientPath",
    "fingerprint",
    "sweepStep",
    "targetOpsPerSec",
    "stepWorkers",
    "saturated",
];

/// The label of a load sweep's step rows (`workload.sweep`), one per step after the cell's own
/// rows (which are the knee step's): its rate or workers, what it achieved, its latency and why
/// it was saturated.
pub const SWEEP_STEP: &str = "SWEEP-STEP";

/// The label of the row that sums all top-level operations.
pub const OVERALL: &str = "OVERALL";

/// The CSV text of `results`, `\n` line ends.
pub fn render_csv(results: &[CellResult]) -> String {
    let mut out = String::new();
    push_row(&mut out, CSV_COLUMNS.iter().map(|c| c.to_string()));
    for result in results {
        let measured = result.measured.as_ref();
        let rows: Vec<(&str, Option<&OperationResult>)> = match measured {
            None => vec![("", None)],
            Some(m) => std::iter::once((OVERALL, Some(&m.overall)))
                .chain(m.operations.iter().map(|(k, v)| (k.as_str(), Some(v))))
                .collect(),
        };
        for (label, op) in rows {
            push_row(&mut out, row(result, label, op));
        }
        for (i, step) in result.sweep.iter().flat_map(|s| s.steps.iter().enumerate()) {
            let mut fields = row(result, SWEEP_STEP, None);
            let mut set = |column: &str, value: String| {
                let at = CSV_COLUMNS.iter().position(|c| *c == column);
                fields[at.expect("a CSV column")] = value;
            };
            set("opsPerSec", step.ops_per_sec.to_string());
            set("errorRate", step.error_rate.to_string());
            let us = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
            set("p50Us", us(step.p50_us));
            set("p99Us", us(step.p99_us));
            set("p999Us", us(step.p999_us));
            set("sweepStep", (i + 1).to_string());
            set("targetOpsPerSec", us(step.target_ops_per_sec));
            set("stepWorkers", step.workers.to_string());
            set("saturated", step.saturated.clone().unwrap_or_default());
            push_row(&mut out, fields);
        }
    }
    out
}

fn row(result: &CellResult, label: &str, op: Option<&OperationResult>) -> Vec<String> {
    let c = &result.cell;
    let (status, reason) = match &result.status {
        CellStatus::Complete => ("complete", ""),
        CellStatus::Incomplete { reason } => ("incomplete", reason.as_str()),
    };
    let latency = op.and_then(|o| o.latency_us);
    let lat = |f: fn(&crate::measure::LatencySummary) -> String| {
        latency.as_ref().map(f).unwrap_or_default()
    };
    let errors = |kind: ErrorKind| {
        op.map(|o| o.errors.get(kind).to_string())
            .unwrap_or_default()
    };
    let stats = result.server_stats.as_ref();
    let mode = result.measured.as_ref().map(|m| {
        serde_json::to_value(m.latency_mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    });
    vec![
        c.benchmark.clone(),
        c.run_id.clone(),
        c.workload.clone(),
        c.target.clone(),
        c.platform.clone(),
        c.size.clone(),
        c.repetition.to_string(),
        status.to_string(),
        reason.to_string(),
        result.invalid_reasons.join("; "),
        label.to_string(),
        op.map(|o| o.completed.to_string()).unwrap_or_default(),
        op.map(|o| o.succeeded.to_string()).unwrap_or_default(),
        op.map(|o| o.ops_per_sec.to_string()).unwrap_or_default(),
        op.map(|o| o.error_rate.to_string()).unwrap_or_default(),
        lat(|l| l.mean.to_string()),
        lat(|l| l.p50.to_string()),
        lat(|l| l.p95.to_string()),
        lat(|l| l.p99.to_string()),
        lat(|l| l.p999.to_string()),
        lat(|l| l.max.to_string()),
        errors(ErrorKind::NotFound),
        errors(ErrorKind::DuplicateKey),
        errors(ErrorKind::Timeout),
        errors(ErrorKind::Network),
        errors(ErrorKind::Other),
        mode.unwrap_or_default(),
        stats
            .and_then(|s| s.cpu_us_per_op)
            .map(|v| v.to_string())
            .unwrap_or_default(),
        stats
            .and_then(|s| s.regime)
            .map(|r| r.label().to_string())
            .unwrap_or_default(),
        result
            .client_cpu
            .map(|u| u.utilization.to_string())
            .unwrap_or_default(),
        result
            .client_cpu
            .map(|u| u.client_saturated.to_string())
            .unwrap_or_default(),
        match &result.client_path {
            Some(ClientPath::OwnConnections) => "ownConnections".to_owned(),
            Some(ClientPath::Driver { reason }) => format!("driver: {reason}"),
            None => String::new(),
        },
        result.fingerprint.clone(),
        // On the cell's own rows: the knee's step, the rate of its measured phase and, for a
        // sweep, the knee's workers.
        result
            .sweep
            .as_ref()
            .and_then(|s| s.knee)
            .map(|k| (k + 1).to_string())
            .unwrap_or_default(),
        result
            .measured
            .as_ref()
            .and_then(|m| m.target_ops_per_sec)
            .map(|r| r.to_string())
            .unwrap_or_default(),
        result
            .sweep
            .as_ref()
            .and_then(|s| s.knee_step())
            .map(|k| k.workers.to_string())
            .unwrap_or_default(),
        String::new(),
    ]
}

pub(super) fn push_row(out: &mut String, fields: impl IntoIterator<Item = String>) {
    let mut first = true;
    for field in fields {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&escape(&field));
    }
    out.push('\n');
}

/// RFC 4180 quoting: fields holding a comma, quote or line break are quoted, quotes doubled;
/// formulas neutralised first.
fn escape(field: &str) -> String {
    let field = neutralise(field);
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.into_owned()
    }
}

/// What a spreadsheet takes a cell starting with as a formula (OWASP, "CSV Injection").
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `field` as a spreadsheet shows it as text: a formula's start gets a leading `'`, as does a
/// field that is `'`s before one, so that [`unneutralise`] gives back exactly what was written.
/// A number (`-3`, `+1.5e3`) is left as it is.
pub fn neutralise(field: &str) -> std::borrow::Cow<'_, str> {
    let quoted = field.trim_start_matches('\'');
    let formula =
        quoted.starts_with(FORMULA_START) && (quoted.len() < field.len() || !is_number(field));
    if formula {
        format!("'{field}").into()
    } else {
        field.into()
    }
}

/// The field [`neutralise`] wrote as `cell`.
pub fn unneutralise(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.trim_start_matches('\'').starts_with(FORMULA_START) => rest,
        _ => cell,
    }
}

/// A decimal number as this CSV writes them, optionally signed, with an optional exponent.
fn is_number(text: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['+', '-']).unwrap_or(e))),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    (digits(whole) || digits(fraction))
        && (whole.is_empty() || digits(whole))
        && (fraction.is_empty() || digits(fraction))
        && exponent.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::measure::ClientCpuUsage;
    use crate::result::testing::{cell, result_from};

    #[test]
    fn rows_per_cell_and_label_with_exact_text() {
        // 4 operations over 2 s: find 100, 300 µs; insert 50 µs; one find not found (70 µs).
        let mut r = result_from(
            cell("psmdb-8.0", "n2", "1M", 2),
            Duration::from_secs(2),
            &[
                ("find", 100, Ok(())),
                ("insert", 50, Ok(())),
                ("find", 300, Ok(())),
                ("find", 70, Err(ErrorKind::NotFound)),
            ],
            Some(400),
        );
        r.client_cpu = Some(ClientCpuUsage {
            user_us: 1,
            system_us: 1,
            wall_us: 2,
            cores: 1,
            utilization: 0.25,
            client_saturated: false,
        });
        r.client_path = Some(ClientPath::Driver {
            reason: "TLS".into(),
        });
        let mut incomplete = result_from(
            cell("mongo-9.0", "n2", "1M", 1),
            Duration::from_secs(1),
            &[],
            None,
        );
        incomplete.measured = None;
        incomplete.server_stats = None;
        incomplete.client_path = None;
        incomplete.status = CellStatus::Incomplete {
            reason: "target mongo-9.0, phase seed: connection refused, \"retry\"".into(),
        };
        // Overall: 4 completed, 3 succeeded in 2 s: 1.5 ops/s, error rate 0.25; successes 50,
        // 100, 300 µs: mean 150,
        // C(50) = trunc(1.5 + 0.5) = 2 → 100; C(95) = trunc(2.85 + 0.5) = 3 → 300.
        // Server CPU 400 µs / 4 operations = 100 µs per operation.
        let expected = "\
benchmark,runId,workload,target,platform,size,repetition,status,incompleteReason,invalidReasons,operation,completed,succeeded,opsPerSec,errorRate,meanUs,p50Us,p95Us,p99Us,p999Us,maxUs,notFound,duplicateKey,timeout,network,otherErrors,latencyMode,serverCpuUsPerOp,regime,clientCpuUtilization,clientSaturated,clientPath,fingerprint,sweepStep,targetOpsPerSec,stepWorkers,saturated
study,r1,flights/v1,psmdb-8.0,n2,1M,2,complete,,,OVERALL,4,3,1.5,0.25,150,100,300,300,300,300,1,0,0,0,0,serviceTime,100,cache-resident,0.25,false,driver: TLS,fp-4,,,,
study,r1,flights/v1,psmdb-8.0,n2,1M,2,complete,,,find,3,2,1,0.3333333333333333,200,100,300,300,300,300,1,0,0,0,0,serviceTime,100,cache-resident,0.25,false,driver: TLS,fp-4,,,,
study,r1,flights/v1,psmdb-8.0,n2,1M,2,complete,,,insert,1,1,0.5,0,50,50,50,50,50,50,0,0,0,0,0,serviceTime,100,cache-resident,0.25,false,driver: TLS,fp-4,,,,
study,r1,flights/v1,mongo-9.0,n2,1M,1,incomplete,\"target mongo-9.0, phase seed: connection refused, \"\"retry\"\"\",,,,,,,,,,,,,,,,,,,,,,,,fp-0,,,,
";
        assert_eq!(render_csv(&[r, incomplete]), expected);
    }

    #[test]
    fn formulas_are_neutralised_numbers_kept_and_both_read_back() {
        for (field, written) in [
            (
                "=HYPERLINK(\"http://x\")",
                "\"'=HYPERLINK(\"\"http://x\"\")\"",
            ),
            ("+cmd", "'+cmd"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\r=x", "\"'\r=x\""),
            ("'=x", "''=x"),
            ("'x", "'x"),
            ("-inf", "'-inf"),
            ("-", "'-"),
            ("-3", "-3"),
            ("+1.5e3", "+1.5e3"),
            ("-.5", "-.5"),
            ("0.25", "0.25"),
            ("plain", "plain"),
        ] {
            assert_eq!(escape(field), written, "{field:?}");
            assert_eq!(unneutralise(&neutralise(field)), field, "{field:?}");
        }
        let mut r = result_from(
            cell("=2+5", "n2", "1M", 1),
            Duration::from_secs(1),
            &[],
            None,
        );
        r.status = CellStatus::Incomplete {
            reason: "@cmd|' /C calc'!A0".into(),
        };
        let text = render_csv(&[r]);
        let row = text.lines().nth(1).unwrap();
        assert!(
            row.starts_with("study,r1,flights/v1,'=2+5,n2,1M,1,incomplete,'@cmd|' /C calc'!A0,"),
            "{row}"
        );
    }

    #[test]
    fn escaping_follows_rfc_4180() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape("a,b"), "\"a,b\"");
        assert_eq!(escape("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(escape("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn a_sweep_cell_names_its_knee_step_and_has_a_row_per_step() {
        use crate::result::{SweepRecord, SweepStep};
        let mut r = result_from(
            cell("a", "p", "1k", 1),
            Duration::from_secs(1),
            &[("find", 100, Ok(()))],
            None,
        );
        r.measured.as_mut().unwrap().target_ops_per_sec = Some(1000.0);
        let step = |rate: u64, ops: f64, saturated: Option<&str>| SweepStep {
            target_ops_per_sec: Some(rate),
            workers: 16,
            ops_per_sec: ops,
            error_rate: 0.0,
            p50_us: Some(900),
            p99_us: Some(9000),
            p999_us: None,
            goal_us: Some(9000),
            saturated: saturated.map(str::to_owned),
        };
        r.sweep = Some(SweepRecord {
            goal: Some("p99 ≤ 10ms".into()),
            bound_us: Some(10_000),
            steps: vec![
                step(1000, 999.5, None),
                step(
                    1500,
                    1200.0,
                    Some("achieved 1200 of 1500 ops/s (below 90%)"),
                ),
            ],
            knee: Some(0),
            bounded: true,
        });
        let text = render_csv(&[r]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[1].contains(",OVERALL,") && lines[1].ends_with(",fp-1,1,1000,16,"));
        assert_eq!(
            lines[3],
            "study,r1,flights/v1,a,p,1k,1,complete,,,SWEEP-STEP,,,999.5,0,,900,,9000,,,,,,,,serviceTime,,,,,ownConnections,fp-1,1,1000,16,"
        );
        assert_eq!(
            lines[4],
            "study,r1,flights/v1,a,p,1k,1,complete,,,SWEEP-STEP,,,1200,0,,900,,9000,,,,,,,,serviceTime,,,,,ownConnections,fp-1,2,1500,16,achieved 1200 of 1500 ops/s (below 90%)"
        );
    }
}
