//! The history export: one CSV row per (benchmark, run, workload, target, platform, size,
//! metric), in the long form performance-history tools pivot into their series
//! (docs/results.md, "History export").
//!
//! Every row of a run carries the same time, the run's start (the earliest `startedAt` of its
//! results), so a change-point tool sees one point per run. Figures come from the valid
//! repetitions only; a target without a valid repetition in a group has no rows.

use k8s_openapi::jiff::Timestamp;

use super::ReportError;
use super::csv::push_row;
use super::groups::{TargetCells, groups, operation};
use crate::measure::LatencySummary;
use crate::result::CellResult;

/// Column names, in order.
pub const HISTORY_COLUMNS: [&str; 15] = [
    "time",
    "benchmark",
    "runId",
    "workload",
    "target",
    "platform",
    "size",
    "metric",
    "value",
    "repetitions",
    "identityHash",
    "serverVersion",
    "image",
    "imageDigest",
    "mongobenchVersion",
];

/// The history rows of `results`, header first, `\n` line ends.
///
/// # Errors
/// [`ReportError::History`] when a `startedAt` is not an RFC 3339 time, or when no result of
/// a run has one (the run cannot be placed in time).
pub fn render_history_csv(results: &[CellResult]) -> Result<String, ReportError> {
    let mut out = String::new();
    push_row(&mut out, HISTORY_COLUMNS.iter().map(|c| c.to_string()));
    for group in groups(results) {
        let time = run_start(results, group.benchmark, group.run_id)?;
        for target in &group.targets {
            let repetitions = target.valid().count();
            if repetitions == 0 {
                continue;
            }
            let facts = Facts::of(target);
            for (metric, value) in metrics(target) {
                push_row(
                    &mut out,
                    [
                        time.to_string(),
                        group.benchmark.to_owned(),
                        group.run_id.to_owned(),
                        group.workload.to_owned(),
                        target.target.to_owned(),
                        group.platform.to_owned(),
                        group.size.to_owned(),
                        metric,
                        value.to_string(),
                        repetitions.to_string(),
                    ]
                    .into_iter()
                    .chain(facts.columns()),
                );
            }
        }
    }
    Ok(out)
}

/// The earliest `startedAt` among the results of one run.
fn run_start(
    results: &[CellResult],
    benchmark: &str,
    run_id: &str,
) -> Result<Timestamp, ReportError> {
    let mut earliest: Option<Timestamp> = None;
    for r in results
        .iter()
        .filter(|r| r.cell.benchmark == benchmark && r.cell.run_id == run_id)
    {
        let Some(text) = &r.started_at else { continue };
        let t: Timestamp = text.parse().map_err(|e| {
            ReportError::History(format!(
                "result of cell {}: startedAt {text:?} is not an RFC 3339 time: {e}",
                r.cell
            ))
        })?;
        earliest = Some(earliest.map_or(t, |e| e.min(t)));
    }
    earliest.ok_or_else(|| {
        ReportError::History(format!(
            "no result of run {benchmark}/{run_id} has startedAt, so the run has no time; \
             results written before mongobench recorded it cannot be placed in a history"
        ))
    })
}

/// The metrics of one target in one group, in a fixed order: overall figures, then per
/// operation label.
fn metrics(t: &TargetCells<'_>) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut push = |name: &str, value: Option<f64>| {
        if let Some(v) = value {
            out.push((name.to_owned(), v));
        }
    };
    push("opsPerSec", t.throughput().map(|s| s.mean));
    push(
        "errorRate",
        t.summary(|c| c.measured.as_ref().map(|m| m.overall.error_rate))
            .map(|s| s.mean),
    );
    let overall = t.merged_latency(None).as_ref().and_then(LatencySummary::of);
    push("p50Us", overall.map(|l| l.p50 as f64));
    push("p95Us", overall.map(|l| l.p95 as f64));
    push("p99Us", overall.map(|l| l.p99 as f64));
    push("p999Us", overall.map(|l| l.p999 as f64));
    push(
        "cpuUsPerOp",
        t.summary(|c| c.server_stats.as_ref().and_then(|s| s.cpu_us_per_op))
            .map(|s| s.mean),
    );
    for label in t.labels() {
        // A repetition without the label ran none of it: 0 operations per second.
        let ops = t.summary(|c| Some(operation(c, Some(label)).map_or(0.0, |o| o.ops_per_sec)));
        push(&format!("{label}.opsPerSec"), ops.map(|s| s.mean));
        let latency = t
            .merged_latency(Some(label))
            .as_ref()
            .and_then(LatencySummary::of);
        push(&format!("{label}.p99Us"), latency.map(|l| l.p99 as f64));
    }
    out
}

/// What ran, from the valid repetitions: each column lists the distinct values, `;`-separated,
/// empty when unknown.
struct Facts {
    identity: String,
    version: String,
    image: String,
    digest: String,
    mongobench: String,
}

impl Facts {
    fn of(t: &TargetCells<'_>) -> Facts {
        let distinct = |f: &dyn Fn(&CellResult) -> Option<&str>| {
            let mut seen: Vec<&str> = Vec::new();
            for v in t.valid().filter_map(f) {
                if !v.is_empty() && !seen.contains(&v) {
                    seen.push(v);
                }
            }
            seen.join(";")
        };
        Facts {
            identity: distinct(&|c| Some(c.identity.hash.as_str())),
            version: distinct(&|c| c.server.version.as_deref()),
            image: distinct(&|c| c.server.image.as_deref()),
            digest: distinct(&|c| c.server.image_digest.as_deref()),
            mongobench: distinct(&|c| c.mongobench_version.as_deref()),
        }
    }

    fn columns(&self) -> [String; 5] {
        [
            self.identity.clone(),
            self.version.clone(),
            self.image.clone(),
            self.digest.clone(),
            self.mongobench.clone(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::study::{golden, study};

    #[test]
    fn history_of_the_study_matches_its_golden_file() {
        golden("history.csv", &render_history_csv(&study()).unwrap());
    }

    #[test]
    fn every_row_of_a_run_has_the_runs_start_time() {
        let text = render_history_csv(&study()).unwrap();
        let times: std::collections::BTreeSet<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap())
            .collect();
        // The study's cells started from 09:30:00 on; the earliest is the run's time.
        assert_eq!(
            times.into_iter().collect::<Vec<_>>(),
            ["2026-05-04T09:30:00Z"]
        );
    }

    #[test]
    fn names_and_images_that_read_as_formulas_are_neutralised() {
        let mut results = study();
        for r in &mut results {
            r.cell.target = format!("={}", r.cell.target);
            r.server.image = Some("@evil".into());
        }
        let text = render_history_csv(&results).unwrap();
        let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert!(row[4].starts_with("'="), "{row:?}");
        assert_eq!(row[12], "'@evil", "{row:?}");
        // Figures are numbers still.
        assert!(row[8].parse::<f64>().is_ok(), "{row:?}");
    }

    #[test]
    fn a_run_without_start_times_and_a_malformed_time_are_refused_by_name() {
        let mut results = study();
        for r in &mut results {
            r.started_at = None;
        }
        let e = render_history_csv(&results).unwrap_err().to_string();
        assert!(e.contains("no result of run study/r1 has startedAt"), "{e}");
        results[0].started_at = Some("yesterday".into());
        let e = render_history_csv(&results).unwrap_err().to_string();
        assert!(
            e.contains("startedAt \"yesterday\" is not an RFC 3339 time"),
            "{e}"
        );
        assert!(e.contains(&results[0].cell.to_string()), "{e}");
    }
}
