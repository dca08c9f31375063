//! The page leads with the answer: the summary first, figures after it, per-cell detail
//! folded and said once; checked on the parsed page.

use scraper::{ElementRef, Html, Selector};

use super::render_html;
use crate::measure::canary::{CanaryDeviation, CanaryRecord};
use crate::report::groups::compare_in_order;
use crate::report::study::study;
use crate::result::{CellResult, VerdictDesign};
use crate::verdict::CompareOptions;

fn options() -> CompareOptions {
    CompareOptions {
        baseline: "psmdb-8.0".into(),
        ..CompareOptions::default()
    }
}

fn page(results: &[CellResult]) -> Html {
    Html::parse_document(&render_html(results, &options()).unwrap())
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn text(e: &ElementRef<'_>) -> String {
    e.text().collect()
}

#[test]
fn the_summary_comes_first_and_names_the_targets_the_verdicts_and_the_mde() {
    let results = study();
    let doc = page(&results);
    let sections: Vec<&str> = select(&doc, "body > section")
        .iter()
        .filter_map(|s| s.value().attr("id"))
        .collect();
    assert_eq!(sections[..3], ["summary", "verdicts", "throughput"]);
    let question = text(&select(&doc, "section#summary p.question")[0]);
    assert_eq!(
        question,
        "Do ferretdb and mongo-9.0 differ from the baseline psmdb-8.0 in ops/s, under \
         flights/v1 at sizes 1M and 4M on n2?"
    );
    let targets: Vec<String> = select(&doc, "section#summary ul.targets li")
        .iter()
        .map(text)
        .collect();
    assert_eq!(targets.len(), 3, "{targets:?}");
    // What each target's servers said they are, the baseline first.
    let described = crate::report::comparison::targets_described(
        &compare_in_order(&results, &options()).unwrap(),
    );
    assert_eq!(described[0].0, "psmdb-8.0");
    assert_eq!(targets[0], format!("psmdb-8.0: {}", described[0].1));
    assert!(targets[0].contains("8.0.4"), "{targets:?}");
    // Every compared row once, the verdict in words with its interval and MDE.
    let c = compare_in_order(&results, &options()).unwrap();
    let row = &c.groups[0].rows[1];
    let v = &row.verdicts[0];
    let (lo, hi) = v.interval_percent.unwrap();
    let expected = format!(
        "At size 1M on n2: {} is {} than psmdb-8.0 in ops/s: {:+.1}%, {} interval [{lo:+.1}%, \
         {hi:+.1}%]; MDE {:.1}%.",
        row.target,
        v.verdict.text(),
        v.delta.unwrap().percent,
        crate::report::comparison::level(v).unwrap(),
        v.mde_percent.unwrap()
    );
    assert_eq!(
        (row.target.as_str(), v.verdict.text()),
        ("ferretdb", "slower")
    );
    let verdicts: Vec<String> = select(&doc, "section#summary ul.verdicts li")
        .iter()
        .map(text)
        .collect();
    assert_eq!(verdicts.len(), 3, "two rows at 1M, one at 4M: {verdicts:?}");
    assert!(
        verdicts[0].starts_with(&expected),
        "{verdicts:?}\n{expected}"
    );
    let mde = text(&select(&doc, "section#summary p.mde")[0]);
    assert!(
        mde.starts_with("MDE (minimum detectable effect): "),
        "{mde}"
    );
    // The headline is the summary's, and only there.
    assert_eq!(select(&doc, "#headline").len(), 1);
    assert_eq!(select(&doc, "section#summary p.headline").len(), 1);
}

#[test]
fn cells_the_canaries_or_the_gates_flagged_are_counted_beside_the_verdict_they_feed() {
    let mut results = study();
    for r in results
        .iter_mut()
        .filter(|r| r.cell.target == "mongo-9.0" && r.cell.size == "4M")
    {
        r.canary = Some(CanaryRecord {
            figures: crate::measure::canary::CanaryFigures {
                cpu_us: 100.0,
                memory_gbps: 10.0,
                loopback_rtt_us: None,
            },
            deviation: Some(CanaryDeviation {
                figure: "CPU".into(),
                percent: 40.0,
            }),
        });
    }
    let doc = page(&results);
    let verdicts: Vec<String> = select(&doc, "section#summary ul.verdicts li")
        .iter()
        .map(text)
        .collect();
    let at_4m = verdicts
        .iter()
        .find(|v| v.starts_with("At size 4M"))
        .unwrap();
    assert!(
        at_4m.ends_with(
            "⚠ mongo-9.0: 2 of its 2 valid cells flagged by a noise canary (kept in the \
             figures)."
        ),
        "{at_4m}"
    );
    // At 1M ferretdb has an incomplete repetition of four, mongo-9.0 an invalid one of four.
    let at_1m: Vec<&String> = verdicts
        .iter()
        .filter(|v| v.starts_with("At size 1M"))
        .collect();
    assert!(
        at_1m[0].ends_with("1 of 4 ferretdb cells left out as invalid or incomplete."),
        "{at_1m:?}"
    );
    assert!(
        at_1m[1].ends_with("⚠ 1 of 4 mongo-9.0 cells left out as invalid or incomplete."),
        "{at_1m:?}"
    );
    let warnings: Vec<String> = select(&doc, "section#summary ul.warnings li")
        .iter()
        .map(text)
        .collect();
    assert_eq!(
        warnings[..2],
        [
            "2 of 15 cells were left out of every statistic as invalid or incomplete.",
            "2 of 15 cells were flagged by the noise canaries: the machine was slower or faster \
             than usual while they ran; they are kept unless the run's canaryPolicy voided them."
        ]
    );
    // Without a flag there is no mark beside the verdict.
    let quiet = page(&study());
    let li = select(&quiet, "section#summary ul.verdicts li");
    assert!(
        !text(&li[2]).contains('⚠'),
        "the 4M row has nothing flagged: {}",
        text(&li[2])
    );
}

#[test]
fn per_cell_detail_is_folded_and_a_target_without_plan_trees_is_said_once() {
    let doc = page(&study());
    for id in ["regime", "identity", "explain", "hardware"] {
        assert!(
            !select(&doc, &format!("section#{id} details table")).is_empty(),
            "{id} folded"
        );
    }
    // ferretdb has no plan tree for any shape: one line, no column, no row saying it.
    let explain = text(&select(&doc, "section#explain")[0]);
    assert_eq!(
        explain.matches("no plan tree reported").count(),
        1,
        "{explain}"
    );
    let line = explain
        .find("ferretdb: no plan tree reported for any query shape")
        .unwrap();
    assert!(
        line < explain.find("The winning plan").unwrap(),
        "{explain}"
    );
    let headers: Vec<String> = select(&doc, "section#explain table tr:first-child th")
        .iter()
        .map(text)
        .collect();
    assert!(!headers.contains(&"ferretdb".to_owned()), "{headers:?}");
}

#[test]
fn parameters_are_listed_once_when_equal_and_only_those_that_differ_otherwise() {
    // The study's two sizes differ in `documents` alone.
    let doc = page(&study());
    let tables = select(&doc, "section#identity table");
    let rows = |t: &ElementRef<'_>| -> Vec<String> {
        t.select(&Selector::parse("tr").unwrap())
            .map(|r| text(&r))
            .collect()
    };
    let differ = rows(&tables[0]);
    assert_eq!(differ.len(), 2, "a header and `documents`: {differ:?}");
    assert!(
        differ[1].starts_with("documents10000004000000"),
        "{differ:?}"
    );
    let shared = rows(&tables[1]);
    assert_eq!(
        shared[1..],
        [
            "run.measured10 s",
            "run.warmup5 s",
            "seed1",
            "workers16",
            "workloadflights/v1"
        ]
    );
    // One size: one identity, its parameters once.
    let one: Vec<CellResult> = study()
        .into_iter()
        .filter(|r| r.cell.size == "4M")
        .collect();
    let doc = page(&one);
    let tables = select(&doc, "section#identity table");
    assert_eq!(rows(&tables[0]).len(), 1 + 6, "every parameter once");
    assert!(text(&select(&doc, "section#identity p")[1]).starts_with("One identity, "));
}

#[test]
fn sizes_read_by_value_in_every_report() {
    let mut results = study();
    for r in &mut results {
        // Sizes whose text order is the wrong one, with nothing seeded to order them by.
        r.cell.size = if r.cell.size == "1M" { "1k" } else { "10k" }.into();
        r.dataset.seeded_documents = 0;
    }
    results.sort_by(|a, b| a.cell.size.cmp(&b.cell.size));
    assert_eq!(results[0].cell.size, "10k", "the files' order");
    let doc = page(&results);
    let captions: Vec<String> = select(&doc, "section#throughput figcaption")
        .iter()
        .map(text)
        .collect();
    assert_eq!(
        captions,
        [
            "flights/v1, platform n2, size 1k",
            "flights/v1, platform n2, size 10k"
        ]
    );
    let markdown = crate::report::render_markdown(&results, &options());
    assert!(markdown.find("| 1k |").unwrap() < markdown.find("| 10k |").unwrap());
    let text = crate::report::render_text(&results, &options());
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("TARGET ") && l.contains(" PLATFORM "))
        .unwrap();
    assert!(lines[header + 1].contains(" 1k "), "{text}");
    assert!(
        text.find("size 1k").unwrap() < text.find("size 10k").unwrap(),
        "{text}"
    );
    // The comparison comes before the table of cells.
    assert!(
        text.find("size 10k").unwrap() < text.find(lines[header]).unwrap(),
        "{text}"
    );
}

#[test]
fn percentile_curves_stop_where_their_samples_do_and_name_their_count() {
    assert!((super::figures::supported_percentile(1_650) - 99.939_393_9).abs() < 1e-6);
    assert_eq!(super::figures::supported_percentile(10), 90.0);
    let results = study();
    let doc = page(&results);
    let legend: String = select(&doc, "figure[data-plot=\"latency\"] svg text")
        .iter()
        .map(text)
        .collect();
    // psmdb-8.0 at 1M: three valid repetitions of the study's phases, every operation.
    let samples: u64 = results
        .iter()
        .filter(|r| r.cell.target == "psmdb-8.0" && r.cell.size == "1M" && r.is_valid())
        .map(|r| r.measured.as_ref().unwrap().overall.succeeded)
        .sum();
    let label = format!("psmdb-8.0 (n = {})", crate::report::plots::count(samples));
    assert!(legend.contains(&label), "{label} in {legend}");
    // ~7,000 samples support p99.98 at most: the axis is not drawn to p99.99.
    assert!(samples < 10_000);
    let first: String = select(&doc, "figure[data-plot=\"latency\"] svg")[0]
        .text()
        .collect();
    assert!(!first.contains("p99.99"), "{first}");
}

#[test]
fn latency_over_time_is_drawn_per_target_from_workers_over_completions() {
    let mut r = study().remove(0);
    r.identity.parameters.insert("workers".into(), "4".into());
    let m = r.measured.as_mut().unwrap();
    m.overall.per_second = vec![100, 200, 0, 50, 7];
    m.duration_us = 4_500_000;
    // 4 workers ÷ completions: 40 ms, 20 ms, nothing in second 3, 80 ms; the partial fifth
    // second is left out.
    assert_eq!(
        super::timeline::latency_by_second(&r).unwrap(),
        [(0.5, 40_000.0), (1.5, 20_000.0), (3.5, 80_000.0)]
    );
    r.measured.as_mut().unwrap().loop_mode = crate::result::LoopMode::Open;
    assert_eq!(super::timeline::latency_by_second(&r), None);
    // Without the workers a cell ran, the section says why in one line.
    let mut results = study();
    for r in &mut results {
        r.identity.parameters.remove("workers");
    }
    let doc = page(&results);
    assert!(select(&doc, "figure[data-plot=\"latency-time\"]").is_empty());
    assert_eq!(select(&doc, "section#latency-time p").len(), 1);
    let doc = page(&study());
    // Like the per-second plots: one per target with a measured cell, per group.
    assert_eq!(
        select(&doc, "figure[data-plot=\"latency-time\"]").len(),
        select(&doc, "figure[data-plot=\"per-second\"]").len()
    );
}

#[test]
fn the_canary_plot_draws_the_threshold_the_run_was_judged_against() {
    let probe = |cpu_us: f64| CanaryRecord {
        figures: crate::measure::canary::CanaryFigures {
            cpu_us,
            memory_gbps: 10.0,
            loopback_rtt_us: Some(20.0),
        },
        deviation: None,
    };
    let mut results = study();
    for (i, r) in results.iter_mut().enumerate() {
        r.canary = Some(probe(100.0 + i as f64));
        r.design = Some(VerdictDesign {
            metrics: Vec::new(),
            pilot_slots: None,
            precision_goal_percent: None,
        });
    }
    let plot = |results: &[CellResult]| -> (String, String) {
        let doc = page(results);
        let svg: String = select(&doc, "figure[data-plot=\"canary\"] svg text")
            .iter()
            .map(text)
            .collect();
        (svg, text(&select(&doc, "section#canary p")[0]))
    };
    // No precision goal: judged at 25 %, drawn at 75 % and 125 %.
    let (labels, note) = plot(&results);
    assert!(
        labels.contains("+25%") && labels.contains("−25%"),
        "{labels}"
    );
    assert!(note.contains("more than 25% from the median"), "{note}");
    // A precision goal of 8 %: the canaries were judged at 8 %.
    for r in &mut results {
        let design = r.design.as_mut().unwrap();
        (design.pilot_slots, design.precision_goal_percent) = (Some(3), Some(8.0));
    }
    let (labels, note) = plot(&results);
    assert!(
        labels.contains("+8%") && !labels.contains("25%"),
        "{labels}"
    );
    assert!(note.contains("more than 8% from the median"), "{note}");
    // Results that predate the record say nothing sure: no bound.
    for r in &mut results {
        r.design = None;
    }
    let (labels, note) = plot(&results);
    assert!(!labels.contains("+8%"), "{labels}");
    assert!(note.contains("do not record the threshold"), "{note}");
}
