//! The page is checked the way a reader's tools see it: parsed by an HTML5 parser, each plot
//! parsed as SVG and rasterised. Text is not rasterised (no fonts are loaded), so "not blank"
//! is measured on the drawn lines and bars.

use std::collections::BTreeMap;

use resvg::{tiny_skia, usvg};
use scraper::{ElementRef, Html, Selector};

use super::render_html;
use crate::report::plots::{HEIGHT, WHISKER, WIDTH};
use crate::report::study::study;
use crate::result::CellResult;
use crate::verdict::CompareOptions;

fn options(price: Option<f64>) -> CompareOptions {
    CompareOptions {
        baseline: "psmdb-8.0".into(),
        price_per_node_hour: price.map(|p| ("n2".to_string(), p)).into_iter().collect(),
        metrics: Vec::new(),
    }
}

fn page(results: &[CellResult]) -> Html {
    Html::parse_document(&render_html(results, &options(None)).unwrap())
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn text(e: &ElementRef<'_>) -> String {
    e.text().collect()
}

/// The plots of one kind, in page order.
fn plots<'a>(doc: &'a Html, kind: &str) -> Vec<ElementRef<'a>> {
    select(doc, &format!("figure.plot[data-plot=\"{kind}\"] svg"))
}

fn tree(svg: &ElementRef<'_>) -> usvg::Tree {
    usvg::Tree::from_str(&svg.html(), &usvg::Options::default())
        .unwrap_or_else(|e| panic!("a plot is not SVG: {e}"))
}

/// Paths in every group of the tree whose paint, as `paint` picks it (stroke or fill), is
/// `color`.
fn painted(
    group: &usvg::Group,
    color: (u8, u8, u8),
    paint: fn(&usvg::Path) -> Option<&usvg::Paint>,
) -> usize {
    group
        .children()
        .iter()
        .map(|node| match node {
            usvg::Node::Group(g) => painted(g, color, paint),
            usvg::Node::Path(p) => usize::from(paint(p).is_some_and(
                |p| matches!(p, usvg::Paint::Color(c) if (c.red, c.green, c.blue) == color),
            )),
            _ => 0,
        })
        .sum()
}

fn stroked(group: &usvg::Group, color: (u8, u8, u8)) -> usize {
    painted(group, color, |p| p.stroke().map(|s| s.paint()))
}

fn filled(group: &usvg::Group, color: (u8, u8, u8)) -> usize {
    painted(group, color, |p| p.fill().map(|f| f.paint()))
}

/// Pixels of a plot, rasterised at its size, that are neither transparent nor white.
fn drawn_pixels(tree: &usvg::Tree) -> usize {
    let mut pixmap = tiny_skia::Pixmap::new(WIDTH, HEIGHT).unwrap();
    resvg::render(tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .pixels()
        .iter()
        .filter(|p| p.alpha() > 0 && (p.red(), p.green(), p.blue()) != (255, 255, 255))
        .count()
}

fn whisker_paths(svg: &ElementRef<'_>) -> usize {
    stroked(tree(svg).root(), (WHISKER.0, WHISKER.1, WHISKER.2))
}

#[test]
fn the_page_parses_as_html_with_every_section_and_fetches_nothing() {
    let html = render_html(&study(), &options(None)).unwrap();
    let doc = Html::parse_document(&html);
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    for id in [
        "verdicts",
        "throughput",
        "latency",
        "series",
        "cpu",
        "cost",
        "regime",
        "explain",
        "excluded",
        "identity",
        "hardware",
    ] {
        assert_eq!(
            select(&doc, &format!("section#{id} > h2")).len(),
            1,
            "section {id}"
        );
    }
    let headline = select(&doc, "p.headline#headline");
    assert_eq!(headline.len(), 1);
    assert!(
        text(&headline[0]).contains("vs psmdb-8.0 (8.0.4) at 1M"),
        "{}",
        text(&headline[0])
    );
    assert!(select(&doc, "script, link, img, iframe, object, embed").is_empty());
    assert!(select(&doc, "[src], [href]").is_empty());
    let csp = select(&doc, "meta[http-equiv=\"Content-Security-Policy\"]");
    assert_eq!(
        csp[0].value().attr("content"),
        Some("default-src 'none'; style-src 'unsafe-inline'")
    );
}

#[test]
fn every_plot_renders_to_a_non_blank_png_of_its_size() {
    let doc = page(&study());
    // Two groups (1M, 4M); latency for all operations, find and insert in each; per-second
    // for each target of each group; CPU for each group.
    let expected = [
        ("throughput", 2),
        ("latency", 6),
        ("per-second", 5),
        ("cpu", 2),
    ];
    for (kind, count) in expected {
        let svgs = plots(&doc, kind);
        assert_eq!(svgs.len(), count, "{kind} plots");
        for svg in svgs {
            let tree = tree(&svg);
            assert_eq!(
                (tree.size().width(), tree.size().height()),
                (WIDTH as f32, HEIGHT as f32),
                "{kind}"
            );
            let drawn = drawn_pixels(&tree);
            // Axes alone are a few hundred pixels; bars and curves add thousands.
            assert!(drawn > 3_000, "{kind} plot has only {drawn} drawn pixels");
        }
    }
}

#[test]
fn whiskers_show_the_interval_of_each_target_with_two_valid_repetitions() {
    let doc = page(&study());
    // 1M: three targets with 3 valid repetitions each; a whisker is a line, two caps and a
    // circle at the mean.
    assert_eq!(whisker_paths(&plots(&doc, "throughput")[0]), 3 * 4);
    // Leave psmdb-8.0 one valid repetition at 1M: it keeps its bar and loses its whisker.
    let mut results = study();
    for r in &mut results {
        if r.cell.target == "psmdb-8.0" && r.cell.size == "1M" && r.cell.repetition > 1 {
            r.invalid_reasons = vec!["member restarted".into()];
        }
    }
    let doc = page(&results);
    assert_eq!(whisker_paths(&plots(&doc, "throughput")[0]), 2 * 4);
    let first_table = select(&doc, "section#throughput table")[0];
    let psmdb: Vec<String> = first_table
        .select(&Selector::parse("tr").unwrap())
        .map(|tr| tr.child_elements().map(|td| text(&td)).collect::<Vec<_>>())
        .find(|cells| cells[0] == "psmdb-8.0")
        .unwrap();
    let only = results
        .iter()
        .find(|r| r.cell.target == "psmdb-8.0" && r.cell.size == "1M" && r.is_valid())
        .unwrap();
    let mean = format!("{:.1}", only.measured.as_ref().unwrap().overall.ops_per_sec);
    assert_eq!(
        psmdb[1..],
        ["1", mean.as_str(), "-", "-"],
        "one valid repetition, no interval"
    );
}

#[test]
fn the_warm_up_is_shaded_before_the_measured_seconds_when_results_have_it() {
    use crate::report::plots::WARMUP_SHADE;
    let shade = (WARMUP_SHADE.0, WARMUP_SHADE.1, WARMUP_SHADE.2);
    let doc = page(&study());
    let plain = plots(&doc, "per-second");
    assert!(!plain.is_empty());
    assert!(plain.iter().all(|svg| filled(tree(svg).root(), shade) == 0));
    // Give the first target's cells three seconds of warm-up: its plots shade them.
    let mut results = study();
    let first = results[0].cell.target.clone();
    for r in results.iter_mut().filter(|r| r.cell.target == first) {
        r.warmup_per_second = vec![100, 400, 500];
    }
    let doc = page(&results);
    let shaded = plots(&doc, "per-second")
        .iter()
        .filter(|svg| filled(tree(svg).root(), shade) == 1)
        .count();
    let of_first = results
        .iter()
        .filter(|r| r.cell.target == first && r.measured.is_some())
        .map(|r| &r.cell.size)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_eq!(shaded, of_first);
}

#[test]
fn a_warm_up_still_climbing_is_named_with_its_drift_and_a_settled_one_is_not() {
    let doc = page(&study());
    assert!(select(&doc, "section#series p.unsettled").is_empty());
    // The first target's repetition 1 still climbs by 20 % (middle third 100, last 120); its
    // other repetitions level off.
    let mut results = study();
    let first = results[0].cell.target.clone();
    for r in results.iter_mut().filter(|r| r.cell.target == first) {
        r.warmup_per_second = if r.cell.repetition == 1 {
            vec![10, 50, 100, 100, 120, 120, 60]
        } else {
            vec![10, 50, 100, 100, 101, 101, 60]
        };
    }
    let doc = page(&results);
    let notes: Vec<String> = select(&doc, "section#series p.unsettled")
        .iter()
        .map(text)
        .collect();
    let sizes = results
        .iter()
        .filter(|r| r.cell.target == first && r.cell.repetition == 1 && r.measured.is_some())
        .map(|r| &r.cell.size)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_eq!(notes.len(), sizes, "{notes:?}");
    for n in &notes {
        assert_eq!(
            n,
            "Warm-up not settled (its last third of seconds against its middle third, beyond \
             ±5 % or after every round of workload.warmupUntilSettled): repetition 1 +20.0 %. \
             The drift carries on into the measured phase; a longer workload.warmup, or \
             workload.warmupUntilSettled, keeps it out."
        );
    }
}

#[test]
fn plans_that_differ_are_flagged_and_equal_plans_are_not() {
    let doc = page(&study());
    let flags = select(&doc, "section#explain .plan-differs");
    assert_eq!(flags.len(), 1, "only find at 1M differs");
    let row = flags[0]
        .ancestors()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "tr")
        .unwrap();
    let row = text(&row);
    assert!(
        row.starts_with("find") && row.contains("COLLSCAN") && row.contains("IXSCAN"),
        "{row}"
    );

    let mut same = study();
    let plan = same[0].explain["find"].clone();
    for r in same.iter_mut().filter(|r| r.cell.target == "mongo-9.0") {
        r.explain.insert("find".into(), plan.clone());
    }
    assert!(select(&page(&same), "section#explain .plan-differs").is_empty());
}

#[test]
fn text_from_results_is_escaped_everywhere() {
    let hostile = "<img src=x onerror=alert(1)>&\"'";
    let mut results = study();
    for r in results.iter_mut().filter(|r| r.cell.target == "ferretdb") {
        r.cell.target = hostile.into();
        if r.cell.repetition == 1 {
            r.invalid_reasons.push(format!("reason {hostile}"));
        }
    }
    let html = render_html(&results, &options(None)).unwrap();
    let doc = Html::parse_document(&html);
    assert!(doc.errors.is_empty(), "{:?}", doc.errors);
    assert!(select(&doc, "img, [onerror]").is_empty());
    let excluded = text(&select(&doc, "section#excluded table")[0]);
    assert!(
        excluded.contains(&format!("reason {hostile}")),
        "{excluded}"
    );
    // Plot labels (SVG text) keep the name as text too.
    let labels: String = select(&doc, "figure.plot svg text")
        .iter()
        .map(text)
        .collect();
    assert!(labels.contains(hostile), "{labels}");
}

#[test]
fn facts_sections_show_what_the_results_say() {
    let html = render_html(&study(), &options(Some(0.5))).unwrap();
    let doc = Html::parse_document(&html);
    let section = |id: &str| text(&select(&doc, &format!("section#{id}"))[0]);
    let excluded = section("excluded");
    assert!(
        excluded.contains("invalid: election: term 3 → 4"),
        "{excluded}"
    );
    assert!(excluded.contains("incomplete: target ferretdb: measured phase: connection reset"));
    let hardware = section("hardware");
    for fact in [
        "europe-west4-b",
        "n2-standard-4",
        "mongo:9.0.1",
        "sha256:0000",
        "0.1.0",
    ] {
        assert!(hardware.contains(fact), "{fact} in {hardware}");
    }
    let identity = section("identity");
    assert!(
        identity.contains("2026-05-04T09:30:00Z") && identity.contains("fp-"),
        "{identity}"
    );
    // 3 nodes × $0.5 per hour at each target's mean rate: a cost per row with a price.
    let costs = select(&doc, "section#cost td.num");
    assert_eq!(costs.len(), 5, "{}", section("cost"));
    let cost_free = page(&study());
    assert!(text(&select(&cost_free, "section#cost")[0]).contains("No platform has a price"));
    // The primary and secondaries of psmdb-8.0 at 1M, and no CPU figures from FerretDB.
    let cpu: BTreeMap<String, String> = select(&doc, "section#cpu table tr")
        .iter()
        .skip(1)
        .map(|tr| {
            let cells: Vec<String> = tr.child_elements().map(|td| text(&td)).collect();
            (
                format!("{} {} {}", cells[0], cells[1], cells[2]),
                cells[4].clone(),
            )
        })
        .collect();
    let primary: f64 = cpu["flights/v1, platform n2, size 1M psmdb-8.0 primary"]
        .parse()
        .unwrap();
    assert!((primary - 50.0).abs() < 0.5, "{primary}");
    assert!(cpu.contains_key("flights/v1, platform n2, size 1M psmdb-8.0 secondary"));
    assert_eq!(
        cpu["flights/v1, platform n2, size 1M ferretdb -"],
        "not reported"
    );
    // Each member's row names where its CPU came from.
    let sources: Vec<String> = select(&doc, "section#cpu table tr td:nth-child(6)")
        .iter()
        .map(text)
        .collect();
    assert!(sources.iter().any(|s| s == "serverStatus"), "{sources:?}");
    let regimes: BTreeMap<String, String> = select(&doc, "section#regime tr")
        .iter()
        .skip(1)
        .map(|tr| {
            let cells: Vec<String> = tr.child_elements().map(|td| text(&td)).collect();
            (cells[..4].join(" "), format!("{} {}", cells[4], cells[5]))
        })
        .collect();
    assert_eq!(regimes["psmdb-8.0 n2 1M 1"], "cache-resident valid");
    assert_eq!(regimes["mongo-9.0 n2 4M 2"], "I/O-bound valid");
    assert_eq!(regimes["mongo-9.0 n2 1M 2"], "cache-resident invalid");
    assert_eq!(regimes["ferretdb n2 1M 1"], "- valid");
    assert_eq!(regimes["ferretdb n2 1M 4"], "- incomplete");
}

/// `results` made load sweeps: four steps each, the third the knee, the fourth saturated.
fn swept(mut results: Vec<CellResult>) -> Vec<CellResult> {
    use crate::result::{SweepRecord, SweepStep};
    for r in &mut results {
        let knee = r.measured.as_ref().map_or(0.0, |m| m.overall.ops_per_sec);
        let step = |share: f64, p99: u64, saturated: bool| SweepStep {
            target_ops_per_sec: Some((knee * share) as u64),
            workers: 16,
            ops_per_sec: knee * share.min(1.0),
            error_rate: 0.0,
            p50_us: Some(p99 / 4),
            p99_us: Some(p99),
            p999_us: Some(p99 * 2),
            goal_us: Some(p99),
            saturated: saturated.then(|| "p99 31.0ms broke p99 ≤ 10ms".to_owned()),
        };
        r.sweep = Some(SweepRecord {
            goal: Some("p99 ≤ 10ms".into()),
            bound_us: Some(10_000),
            steps: vec![
                step(0.25, 2_000, false),
                step(0.5, 3_000, false),
                step(1.0, 8_000, false),
                step(1.5, 31_000, true),
            ],
            knee: Some(2),
            bounded: true,
        });
    }
    results
}

#[test]
fn load_sweeps_get_a_curve_with_the_goal_line_per_group_and_every_step_in_numbers() {
    assert!(select(&page(&study()), "section#sweep").is_empty());
    let results = swept(study());
    let doc = page(&results);
    assert_eq!(select(&doc, "section#sweep > h2").len(), 1);
    let svgs = plots(&doc, "sweep");
    assert_eq!(svgs.len(), 2, "one plot per group (1M, 4M)");
    let goal = crate::report::plots::GOAL;
    for svg in &svgs {
        let tree = tree(svg);
        let drawn = drawn_pixels(&tree);
        assert!(
            drawn > 3_000,
            "the sweep plot has only {drawn} drawn pixels"
        );
        // plotters draws a dashed line as one path per dash.
        assert!(
            stroked(tree.root(), (goal.0, goal.1, goal.2)) > 5,
            "the goal line"
        );
    }
    // A knee row per cell and a row per step, in both groups' tables.
    let rows = select(&doc, "section#sweep table tr");
    let cells = results.len();
    assert_eq!(
        rows.len(),
        2 * 2 + cells + 4 * cells,
        "headers, knees, steps"
    );
    let knees: Vec<String> = rows
        .iter()
        .filter(|r| text(r).ends_with("valid") || text(r).ends_with("invalid"))
        .map(text)
        .collect();
    assert_eq!(knees.len(), cells);
    let saturated = rows
        .iter()
        .filter(|r| text(r).contains("p99 31.0ms broke p99 ≤ 10ms"))
        .count();
    assert_eq!(saturated, cells, "the fourth step of every sweep");
}

#[test]
fn sharded_cells_get_a_section_of_their_distribution() {
    assert!(select(&page(&study()), "section#shards").is_empty());
    let mut results = study();
    results[1].sharding = Some(crate::result::testing::sharding_record(&[]));
    let doc = page(&results);
    let notes: Vec<String> = select(&doc, "section#shards p").iter().map(text).collect();
    assert_eq!(
        notes[0],
        format!(
            "{}: sharded: 2 shards × 3 members, 3 config servers, 2 mongos",
            results[1].cell.target
        )
    );
    let rows = select(&doc, "section#shards tr");
    assert_eq!(rows.len(), 2, "a header and the one sharded cell");
    let cells: Vec<String> = select(&doc, "section#shards tr td")
        .iter()
        .map(text)
        .collect();
    let c = &results[1].cell;
    assert_eq!(
        cells,
        [
            c.target.clone(),
            c.platform.clone(),
            c.size.clone(),
            c.repetition.to_string(),
            "s-0 612,400 / 4, s-1 387,600 / 3".to_owned(),
            "22.5%".to_owned(),
            "1".to_owned(),
            "-".to_owned(),
        ]
    );
}

#[test]
fn cpu_sources_that_disagree_are_noted_in_the_cpu_section() {
    use crate::measure::server::{CpuDisagreement, CpuSource};
    let mut results = study();
    let cell = results
        .iter_mut()
        .find(|r| r.is_valid() && r.cell.target == "psmdb-8.0")
        .unwrap();
    cell.server_stats.as_mut().unwrap().cpu_disagreements = vec![CpuDisagreement {
        member: "m1:27017".into(),
        server_status_us: 5_000_000,
        os_us: 6_000_000,
        os_source: CpuSource::Procfs,
        percent: 20.0,
    }];
    let name = cell.cell.to_string();
    let doc = page(&results);
    let section = text(&select(&doc, "section#cpu")[0]);
    assert!(
        section.contains(&format!(
            "disagree past 5% (and 20 ms) in: {name}: m1:27017: serverStatus 5000000 µs, \
             procfs 6000000 µs (+20.0%)"
        )),
        "{section}"
    );
    let quiet = text(&select(&page(&study()), "section#cpu")[0]);
    assert!(!quiet.contains("disagree"), "{quiet}");
}
