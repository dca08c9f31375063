//! CSV: a header and one row per cell × operation label (`OVERALL` first), for spreadsheets.
//!
//! Latencies in µs, rates in operations per second, numbers in their shortest round-trip
//! form, unknown values empty. An incomplete cell keeps its rows, with `status` =
//! `incomplete` and the reason; a cell with no measurements at all has one row with empty
//! figures.

use crate::measure::ErrorKind;
use crate::result::{CellResult, CellStatus, ClientPath, OperationResult};

/// Column names, in order.
pub const CSV_COLUMNS: [&str; 33] = [
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
];

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

/// RFC 4180 quoting: fields holding a comma, quote or line break are quoted, quotes doubled.
fn escape(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
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
benchmark,runId,workload,target,platform,size,repetition,status,incompleteReason,invalidReasons,operation,completed,succeeded,opsPerSec,errorRate,meanUs,p50Us,p95Us,p99Us,p999Us,maxUs,notFound,duplicateKey,timeout,network,otherErrors,latencyMode,serverCpuUsPerOp,regime,clientCpuUtilization,clientSaturated,clientPath,fingerprint
study,r1,flights/v1,psmdb-8.0,n2,1M,2,complete,,,OVERALL,4,3,1.5,0.25,150,100,300,300,300,300,1,0,0,0,0,serviceTime,100,cache-resident,0.25,false,driver: TLS,fp-4
study,r1,flights/v1,psmdb-8.0,n2,1M,2,complete,,,find,3,2,1,0.3333333333333333,200,100,300,300,300,300,1,0,0,0,0,serviceTime,100,cache-resident,0.25,false,driver: TLS,fp-4
study,r1,flights/v1,psmdb-8.0,n2,1M,2,complete,,,insert,1,1,0.5,0,50,50,50,50,50,50,0,0,0,0,0,serviceTime,100,cache-resident,0.25,false,driver: TLS,fp-4
study,r1,flights/v1,mongo-9.0,n2,1M,1,incomplete,\"target mongo-9.0, phase seed: connection refused, \"\"retry\"\"\",,,,,,,,,,,,,,,,,,,,,,,,fp-0
";
        assert_eq!(render_csv(&[r, incomplete]), expected);
    }

    #[test]
    fn escaping_follows_rfc_4180() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape("a,b"), "\"a,b\"");
        assert_eq!(escape("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(escape("two\nlines"), "\"two\nlines\"");
    }
}
