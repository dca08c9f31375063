use super::*;
use crate::verdict::compare;
use crate::verdict::testing::{options, res, study};

#[test]
fn committed_comparison_schema_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/comparison.schema.json");
    let generated =
        serde_json::to_string_pretty(&ComparisonDocument::json_schema()).unwrap() + "\n";
    if std::env::var_os("MONGOBENCH_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/comparison.schema.json differs from the document types: regenerate it with \
         `MONGOBENCH_BLESS=1 cargo test --lib committed_comparison_schema_is_current` and \
         review the diff (a removed or renamed field needs a new version)"
    );
}

#[test]
fn the_document_carries_the_comparisons_verdicts_as_they_were_reached() {
    let c = compare(&study(), &options()).unwrap();
    let doc = ComparisonDocument::of(&c);
    assert_eq!(doc.kind, "mongobench.io/comparison");
    assert_eq!(doc.version, 1);
    assert_eq!(doc.baseline, "psmdb-8.0");
    assert_eq!(doc.metrics, [VerdictMetric::Throughput]);
    assert_eq!(doc.family, 1);
    assert_eq!(
        doc.headline.as_deref(),
        Some(
            "mongo-9.0 (MongoDB 9.0.1) +10.0% [+5.3%, +14.9%] ops/s vs psmdb-8.0 (Percona Server \
             for MongoDB 8.0.12-4) at 1M, 3 reps, MDE 6.1%"
        )
    );
    assert_eq!(doc.method, method_lines(&c));
    assert_eq!(doc.warnings, Vec::<String>::new());
    let g = &doc.groups[0];
    assert_eq!(
        (g.workload.as_str(), g.platform.as_str(), g.size.as_str()),
        ("flights/v1", "n2", "1M")
    );
    let base = &g.rows[0];
    assert_eq!(
        (base.target.as_str(), base.verdict, base.verdicts.len()),
        ("psmdb-8.0", Verdict::Baseline, 0)
    );
    let row = &g.rows[1];
    assert_eq!(row.target, "mongo-9.0");
    assert_eq!(row.baseline, "psmdb-8.0");
    assert_eq!(row.repetitions, 3);
    assert_eq!(row.verdict, Verdict::Faster);
    assert_eq!(row.ops_per_sec, Some(1100.0));
    assert_eq!(row.p99_us, Some(180.0));
    assert_eq!(row.cpu_us_per_op, Some(45.0));
    assert_eq!(
        row.verdicts,
        [MetricDocument {
            metric: VerdictMetric::Throughput,
            verdict: Verdict::Faster,
            // 1100 ÷ 1000 − 1 of the means, Welch's test of independent repetitions.
            estimate_percent: Some(10.0),
            // As the comparison's text shows them: [+5.3%, +14.9%], p 0.004, MDE 6.1%
            // (cautious 9.5%).
            interval: Some(IntervalDocument {
                low_percent: 5.343376273896827,
                high_percent: 14.882976700523365,
                confidence: 0.95,
            }),
            adjusted_p_value: Some(0.0036022326091040835),
            mde_percent: Some(6.070504591228129),
            cautious_mde_percent: Some(9.455268753814206),
            method: Some("Welch's t-test of independent groups with Fieller's interval".to_owned()),
            pairs: None,
            reason: None,
        }]
    );
}

#[test]
fn an_untested_row_gives_each_declared_metric_its_reason() {
    // Two repetitions a side: too few for a test.
    let results: Vec<_> = study()
        .into_iter()
        .filter(|r| r.cell.repetition < 3)
        .collect();
    let doc = ComparisonDocument::of(&compare(&results, &options()).unwrap());
    let row = &doc.groups[0].rows[1];
    assert_eq!(row.verdict, Verdict::Inconclusive);
    let reason = "2 valid repetitions of mongo-9.0 and 2 of psmdb-8.0; a verdict needs 3 \
                  valid repetitions on each side";
    assert_eq!(row.reason.as_deref(), Some(reason));
    assert_eq!(row.verdicts.len(), 1);
    let m = &row.verdicts[0];
    assert_eq!(m.verdict, Verdict::Inconclusive);
    assert_eq!(m.reason.as_deref(), Some(reason));
    assert_eq!(m.interval, None);
    assert_eq!(m.mde_percent, None);
    // (1100 + 1120) ÷ (1000 + 1020) − 1, the point estimate without a test.
    assert_eq!(
        format!("{:.4}", m.estimate_percent.unwrap()),
        format!("{:.4}", (2220.0 / 2020.0 - 1.0) * 100.0)
    );
}

#[test]
fn left_out_cells_are_warnings_of_their_row_and_of_the_document() {
    let mut results = study();
    let mut broken = res("mongo-9.0", 4, 1000, 180, Some(45));
    broken.invalid_reasons = vec!["the canary flagged the node".into()];
    results.push(broken);
    let doc = ComparisonDocument::of(&compare(&results, &options()).unwrap());
    let row = &doc.groups[0].rows[1];
    assert_eq!(row.warnings.len(), 1);
    assert!(
        row.warnings[0].starts_with("repetition 4: ")
            && row.warnings[0].contains("the canary flagged the node"),
        "{:?}",
        row.warnings
    );
    assert_eq!(
        doc.warnings,
        [format!("n2/1M/mongo-9.0: {}", row.warnings[0])]
    );
}

#[test]
fn the_json_reads_back_with_camel_case_fields() {
    let c = compare(&study(), &options()).unwrap();
    let text = render_comparison_json(&c);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["kind"], "mongobench.io/comparison");
    let m = &value["groups"][0]["rows"][1]["verdicts"][0];
    assert_eq!(m["metric"], "throughput");
    assert_eq!(m["verdict"], "faster");
    assert_eq!(m["interval"]["confidence"], 0.95);
    assert!(m["cautiousMdePercent"].is_f64(), "{m}");
    let back: ComparisonDocument = serde_json::from_str(&text).unwrap();
    assert_eq!(back, ComparisonDocument::of(&c));
}

#[test]
fn a_row_measured_at_the_same_time_carries_its_simultaneous_diagnostics() {
    use crate::result::Simultaneous;
    use crate::result::testing::slotted_result;
    use crate::verdict::CompareOptions;
    // Four slots on traded sides; side 0 makes its target 10 % faster, b is 2 % faster.
    let mut results = Vec::new();
    for (k, b_side) in [0u32, 1, 1, 0].into_iter().enumerate() {
        let slot = k as u32 + 1;
        for (target, side, factor, series) in [
            ("a", 1 - b_side, 1.0, [1000.0, 1100.0, 1000.0]),
            ("b", b_side, 1.02, [1100.0, 1000.0, 1100.0]),
        ] {
            let speed = if side == 0 { 1.10 } else { 1.0 } * factor;
            let mut r = slotted_result(target, slot, 1000.0);
            let m = r.measured.as_mut().unwrap();
            m.duration_us = 3_000_000;
            m.overall.per_second = series.map(|v: f64| (v * speed).round() as u64).to_vec();
            r.simultaneous = Some(Simultaneous {
                window_start_unix_ms: 1_700_000_000_000 + u64::from(slot) * 60_000,
                side: Some(side),
                side_cpus: Some(side.to_string()),
            });
            results.push(r);
        }
    }
    let options = CompareOptions {
        baseline: "a".into(),
        ..CompareOptions::default()
    };
    let doc = ComparisonDocument::of(&compare(&results, &options).unwrap());
    assert_eq!(
        doc.groups[0].rows[0].simultaneous, None,
        "the baseline's row"
    );
    let s = doc.groups[0].rows[1].simultaneous.as_ref().unwrap();
    assert_eq!(s.slots, 4);
    assert!(
        (s.side_effect_percent.unwrap() - 10.0).abs() < 0.05,
        "{s:?}"
    );
    let value = serde_json::to_value(&doc).unwrap();
    let json = &value["groups"][0]["rows"][1]["simultaneous"];
    assert_eq!(json["slots"], 4);
    assert!(json["sideEffectPercent"].is_f64(), "{json}");
    assert!(json["sideEffectCi95Percent"].is_array(), "{json}");
}
