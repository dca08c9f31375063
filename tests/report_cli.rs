//! `mongobench report` renders what a run left: result files of a local run, or the result
//! ConfigMaps of a MongoBenchmark on the real API server, with the spec's baseline.
mod operator_common;
mod support;

use std::process::Command;

use mongobench::contract::JobPlan;
use mongobench::operator::testing::result;
use operator_common as common;

fn report(args: &[&str], kubeconfig: Option<&std::path::Path>) -> (i32, String, String) {
    mongobench("report", args, kubeconfig)
}

/// Runs `mongobench SUBCOMMAND ARGS…`: exit code, standard output and standard error.
fn mongobench(
    subcommand: &str,
    args: &[&str],
    kubeconfig: Option<&std::path::Path>,
) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mongobench"));
    cmd.arg(subcommand).args(args);
    if let Some(k) = kubeconfig {
        cmd.env("KUBECONFIG", k);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Two targets, two repetitions each; `fast` does 30 % more finds per second than `slow`.
fn results(benchmark: &str) -> Vec<mongobench::result::CellResult> {
    let mut out = Vec::new();
    for (target, finds) in [("slow", 1000), ("fast", 1300)] {
        for rep in 1..=2 {
            out.push(result(
                benchmark,
                target,
                "local",
                "1k",
                rep,
                10,
                &[("find", finds + rep as u64, 150)],
                Some(40),
            ));
        }
    }
    out
}

#[test]
fn results_of_a_local_run_render_as_table_csv_json_and_ycsb_text() {
    let dir = std::env::temp_dir().join(format!("mongobench-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, r) in results("local").iter().enumerate() {
        std::fs::write(dir.join(format!("{i}.json")), r.to_json().unwrap()).unwrap();
    }
    let d = dir.to_str().unwrap();
    let (code, table, err) = report(&["--dir", d], None);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("slow") && table.contains("fast"), "{table}");
    assert!(
        table.contains("baseline fast"),
        "a local run compares with its first target (sorted: fast): {table}"
    );
    let (_, csv, _) = report(&["--dir", d, "-o", "csv"], None);
    assert_eq!(
        csv.lines().next().unwrap(),
        mongobench::report::CSV_COLUMNS.join(",")
    );
    let (_, ycsb, _) = report(&["--dir", d, "-o", "ycsb"], None);
    assert_eq!(
        ycsb.matches("[OVERALL], RunTime(ms), ").count(),
        4,
        "{ycsb}"
    );
    let (_, json, _) = report(&["--dir", d, "-o", "cells-json"], None);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        4
    );
    std::fs::remove_dir_all(&dir).unwrap();

    let (code, _, err) = report(&["--dir", "/nonexistent/results"], None);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        "mongobench report: /nonexistent/results: no such directory: expected the --out \
         directory of `mongobench run` (one <cell>.json per cell)\n"
    );
}

#[test]
fn results_of_a_local_run_render_as_html_markdown_and_history_csv() {
    let dir = std::env::temp_dir().join(format!("mongobench-report-pages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, mut r) in results("local").into_iter().enumerate() {
        r.started_at = Some(format!("2026-05-04T10:0{i}:00Z"));
        std::fs::write(dir.join(format!("{i}.json")), r.to_json().unwrap()).unwrap();
    }
    let d = dir.to_str().unwrap();

    let (code, html, err) = report(&["--dir", d, "-o", "html"], None);
    assert_eq!(code, 0, "{err}");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    // Two repetitions a side are too few for a verdict, and the headline says so.
    assert!(
        html.contains("<p class=\"headline\" id=\"headline\">inconclusive: 2 repetitions</p>"),
        "{html}"
    );
    assert_eq!(
        html.matches("<figure class=\"plot\" data-plot=\"throughput\">")
            .count(),
        1
    );

    let (code, markdown, err) = report(&["--dir", d, "-o", "markdown"], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        markdown.starts_with("## Benchmark local (run run)\n"),
        "{markdown}"
    );
    assert!(markdown.contains("| slow | 1k | local |"), "{markdown}");
    assert!(markdown.contains("### How measured"), "{markdown}");

    let (code, history, err) = report(&["--dir", d, "-o", "history-csv"], None);
    assert_eq!(code, 0, "{err}");
    let mut lines = history.lines();
    assert_eq!(
        lines.next().unwrap(),
        mongobench::report::HISTORY_COLUMNS.join(",")
    );
    let ops: Vec<&str> = lines.filter(|l| l.contains(",opsPerSec,")).collect();
    assert_eq!(ops.len(), 2, "{history}");
    assert!(
        ops.iter()
            .all(|l| l.starts_with("2026-05-04T10:00:00Z,local,run,")),
        "every row of the run has its start time: {ops:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn results_in_the_cluster_render_with_the_specs_baseline() {
    let env = common::setup("report").await;
    let bench = common::apply(&env, &common::fast_slow_study("study", 2)).await;
    let plan = JobPlan {
        plan_version: mongobench::contract::PLAN_VERSION,
        benchmark: "study".into(),
        namespace: Some(env.namespace.clone()),
        uid: bench.metadata.uid.clone(),
        run_id: "run".into(),
        platform: "local".into(),
        targets: Vec::new(),
        completed_cells: Vec::new(),
        board: None,
        run: mongobench::contract::RunDefinition::of(&bench.spec).unwrap(),
    };
    for r in results("study") {
        let id = mongobench::plan::cell_id(
            &r.cell.target,
            &r.cell.platform,
            &r.cell.size,
            r.cell.repetition,
        );
        common::write_result(&env, &plan, &id, &r).await;
    }
    let (code, table, err) = report(&["study", "-n", &env.namespace], Some(&env.kubeconfig));
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("baseline slow"), "{table}");
    let fast_row = table
        .lines()
        .find(|l| l.trim_start().starts_with("fast") && l.contains('%'))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        fast_row.contains("+30."),
        "fast is ~30 % faster than the baseline: {fast_row}"
    );

    let (code, _, err) = report(&["missing", "-n", &env.namespace], Some(&env.kubeconfig));
    assert_ne!(code, 0);
    assert!(err.contains("missing"), "{err}");
}

/// `mongobench plan` reads the same directory as `report` and estimates the slots a goal
/// needs; a goal out of range is refused naming the flag.
#[test]
fn plan_estimates_the_slots_a_goal_needs_from_a_local_run() {
    let dir = std::env::temp_dir().join(format!("mongobench-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, mut r) in results("local").into_iter().enumerate() {
        r.slot = Some(mongobench::result::Slot {
            number: r.cell.repetition,
            position: u32::from(r.cell.target == "fast"),
        });
        std::fs::write(dir.join(format!("{i}.json")), r.to_json().unwrap()).unwrap();
    }
    let d = dir.to_str().unwrap();
    let run = |args: &[&str]| mongobench("plan", args, None);
    let (code, text, err) = run(&["--dir", d, "--mde", "1", "--baseline", "slow"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("flights/v1, platform local, size 1k: baseline slow, goal MDE 1%\n"),
        "{text}"
    );
    // Two slots pair: fast is 1301/1001 and 1302/1002 of slow, log ratios 0.016 % apart, below
    // the 0.1 % resolution: the fewest slots a verdict needs reach 1 %.
    let row = text.lines().nth(2).unwrap();
    assert!(
        row.starts_with("fast") && row.contains(" 2 ") && row.contains(" 3 "),
        "{text}"
    );
    let (code, _, err) = run(&["--dir", d, "--mde", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--mde 0: expected a percentage from 0.1 to 100"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
